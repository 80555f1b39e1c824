// The loader of `curupira spirit run-tool` / `spirit system-prompt`: runs one call of a
// Spirit extension the way Spirit does (the `activate` contract of the Spirit docs),
// and asks the host process for everything the rules govern.
//
// The channel is this process's fd 0, a socket the host holds the other end of, with
// one JSON object per line each way. The host sends the job first; then the loader
// sends requests (`settings.*`, `secrets.*`, `host.showMessageBox`), each answered by
// a response with the same id, `log` notices, and finally one `done`. The host
// applies every settings and secrets rule: nothing here decides what is allowed.
// fd 1 is the host's stderr, so nothing the extension prints reaches the result.

import net from "node:net";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";

const channel = new net.Socket({ fd: 0, readable: true, writable: true });
channel.setEncoding("utf8");

// The channel is fd 0: the extension must not read it as its standard input.
const noInput = Readable.from([]);
Object.defineProperty(process, "stdin", {
  configurable: true,
  enumerable: true,
  get: () => noInput,
});

let receiveJob;
const jobReceived = new Promise((resolve) => {
  receiveJob = resolve;
});
const pending = new Map();
let nextId = 1;
let buffered = "";

channel.on("data", (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line.length > 0) receive(JSON.parse(line));
  }
});
// The host went away: nothing is left to report to.
channel.on("end", () => process.exit(70));
channel.on("error", () => process.exit(70));

function receive(message) {
  if (message.type === "job") {
    receiveJob(message);
    return;
  }
  if (message.type === "response") {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (typeof message.error === "string") waiter.reject(new Error(message.error));
    else waiter.resolve(message.result);
  }
}

function send(message) {
  channel.write(JSON.stringify(message) + "\n");
}

function request(method, params) {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    let line;
    try {
      line = JSON.stringify({ type: "request", id, method, params });
    } catch (error) {
      reject(new Error(`${method}: its arguments cannot be sent as JSON: ${messageOf(error)}`));
      return;
    }
    pending.set(id, { resolve, reject });
    channel.write(line + "\n");
  });
}

function messageOf(error) {
  try {
    if (error instanceof Error) return error.message;
    return String(error);
  } catch {
    return "a value that cannot be shown";
  }
}

let finished = false;

function finish(report) {
  if (finished) return;
  finished = true;
  channel.end(JSON.stringify({ type: "done", ...report }) + "\n", () => process.exit(0));
}

process.on("uncaughtException", (error) => {
  finish({ failure: { stage: "uncaught", message: messageOf(error) } });
});
process.on("unhandledRejection", (reason) => {
  finish({ failure: { stage: "uncaught", message: messageOf(reason) } });
});

const API_FIELDS = ["tools", "invokeTool", "systemPrompt", "getSystemPrompt", "onEvent", "dispose"];

// The module-level fields, from named exports, else from an `export default { … }`.
function moduleApi(namespace) {
  const fallback =
    namespace.default !== null && typeof namespace.default === "object" ? namespace.default : {};
  const api = {};
  for (const field of API_FIELDS) {
    const owner = field in namespace ? namespace : fallback;
    const value = owner[field];
    api[field] = typeof value === "function" ? value.bind(owner) : value;
  }
  return api;
}

// `export function activate`, `export default function activate`, `export default { activate }`.
function findActivate(namespace) {
  if (typeof namespace.activate === "function") return namespace.activate;
  const fallback = namespace.default;
  if (typeof fallback === "function") return fallback;
  if (fallback !== null && typeof fallback === "object" && typeof fallback.activate === "function") {
    return fallback.activate.bind(fallback);
  }
  return undefined;
}

function ownFunction(object, name) {
  if (object === null || (typeof object !== "object" && typeof object !== "function")) return undefined;
  const value = object[name];
  if (typeof value !== "function" || value === Object.prototype[name]) return undefined;
  return value;
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

async function run(job) {
  const extension = Object.freeze({ ...job.extension });
  const log = (message) => {
    let text;
    try {
      text = String(message);
    } catch {
      text = "(a value that cannot be shown)";
    }
    send({ type: "log", message: text });
  };
  const settings = Object.freeze({
    get: (key) => request("settings.get", { key }),
    getAll: () => request("settings.getAll", {}),
    set: (key, value) => request("settings.set", { key, value }),
    setAll: (values) => request("settings.setAll", { values }),
  });
  const secrets = Object.freeze({
    get: (key) => request("secrets.get", { key }),
    has: (key) => request("secrets.has", { key }),
    set: (key, value) => request("secrets.set", { key, value }),
    delete: (key) => request("secrets.delete", { key }),
  });
  const host =
    job.host === "desktop"
      ? Object.freeze({ showMessageBox: (options) => request("host.showMessageBox", { options }) })
      : Object.freeze({});
  const activationEvent = Object.freeze({ type: job.event });
  const ctx = { extension, host, log, settings, secrets, activationEvent };

  let stage = "load";
  let api;
  try {
    const namespace = await import(pathToFileURL(job.mainPath).href);
    stage = "activate";
    const activate = findActivate(namespace);
    if (activate === undefined) {
      throw new Error(
        `\`${job.main}\` exports no \`activate\`: expected \`export function activate\`, \`export default function activate\` or \`export default { activate }\``,
      );
    }
    const returned = await activate(ctx);
    if (returned === undefined || returned === null) {
      api = moduleApi(namespace);
    } else if (typeof returned === "object" || typeof returned === "function") {
      api = returned;
    } else {
      throw new Error(`\`activate\` returned ${describe(returned)}: expected an object or nothing`);
    }
    stage = "onEvent";
    const onEvent = ownFunction(api, "onEvent");
    if (onEvent) await onEvent.call(api, activationEvent);
  } catch (error) {
    let message = messageOf(error);
    // Node does not say where a module's syntax error is; `node --check` does.
    if (stage === "load" && error instanceof SyntaxError) {
      message += ` (\`node --check ${job.main}\` shows where)`;
    }
    return { failure: { stage, message } };
  }

  const report = {};
  try {
    report.outcome = job.call.kind === "tool" ? await callTool(api, job.call, ctx) : await systemPrompt(api);
  } catch (error) {
    report.failure = { stage: job.call.kind === "tool" ? "tool" : "systemPrompt", message: messageOf(error) };
  }
  try {
    const dispose = ownFunction(api, "dispose");
    if (dispose) await dispose.call(api);
  } catch (error) {
    report.disposeError = messageOf(error);
  }
  return report;
}

async function callTool(api, call, ctx) {
  const handlerCtx = {
    extension: ctx.extension,
    host: ctx.host,
    toolName: call.toolName,
    arguments: call.arguments,
    log: ctx.log,
    settings: ctx.settings,
    secrets: ctx.secrets,
  };
  if ("toolCallId" in call) handlerCtx.toolCallId = call.toolCallId;
  if ("questionsResult" in call) handlerCtx.questionsResult = call.questionsResult;

  let value;
  const invokeTool = ownFunction(api, "invokeTool");
  const tool = ownFunction(api.tools, call.toolName);
  if (invokeTool) {
    value = await invokeTool.call(api, handlerCtx);
  } else if (tool) {
    value = await tool.call(api.tools, handlerCtx);
  } else {
    throw new Error(
      `the extension has no \`invokeTool\` and no \`tools[${JSON.stringify(call.toolName)}]\` function`,
    );
  }
  if (value === undefined) return { kind: "undefined" };
  if (typeof value === "string") return { kind: "string", text: value };
  let text;
  try {
    text = JSON.stringify(value, null, 2);
  } catch (error) {
    throw new Error(`the result cannot be converted with JSON.stringify: ${messageOf(error)}`);
  }
  // A function or a symbol: JSON.stringify gives `undefined`, printed as nothing.
  if (text === undefined) return { kind: "undefined", unserializable: describe(value) };
  return { kind: "json", text };
}

async function systemPrompt(api) {
  const getSystemPrompt = ownFunction(api, "getSystemPrompt");
  let value;
  let source;
  if (getSystemPrompt) {
    value = await getSystemPrompt.call(api);
    source = "getSystemPrompt";
  } else {
    value = api.systemPrompt;
    source = "systemPrompt";
  }
  if (value === undefined || value === null) return { kind: "none", source };
  if (typeof value !== "string") {
    throw new Error(`\`${source}\` gave ${describe(value)}: expected a string`);
  }
  return { kind: "string", text: value, source };
}

jobReceived.then(run).then(finish, (error) => {
  finish({ failure: { stage: "harness", message: messageOf(error) } });
});
