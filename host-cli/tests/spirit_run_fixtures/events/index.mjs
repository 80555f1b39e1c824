// Lists only `onUserMessage` in `activationEvents`: a tool call activates it anyway,
// with no `activationEvent`, and calls neither `onEvent` nor `dispose` (which write a
// marker file when they run).
import { appendFileSync } from "node:fs";

const marker = (what) => {
  if (process.env.SPIRIT_TEST_MARKER) appendFileSync(process.env.SPIRIT_TEST_MARKER, `${what}\n`);
};

let activation;
const events = [];

export function activate(ctx) {
  activation = { keys: Object.keys(ctx).sort(), event: ctx.activationEvent ?? null, extension: ctx.extension };
  const api = {
    marker: "the api object",
    onEvent(event) {
      events.push(event.type);
      marker(`onEvent ${event.type}`);
    },
    dispose() {
      marker("dispose");
    },
    tools: {
      state: function (handlerCtx) {
        return {
          activation,
          events,
          toolKeys: Object.keys(handlerCtx).sort(),
          thisInTool: this === undefined ? "undefined" : typeof this,
        };
      },
    },
  };
  if (process.env.SPIRIT_TEST_INVOKE) {
    api.invokeTool = function ({ toolName }) {
      return `invokeTool for ${toolName}, this ${this === undefined ? "undefined" : typeof this}`;
    };
  }
  return api;
}
