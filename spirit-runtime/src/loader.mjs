// The loader of `curupira spirit run-tool` / `spirit system-prompt`: runs one call of a
// Spirit extension the way the Spirit app's extension host does, and asks the host
// process for everything the rules govern.
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
    else if (Array.isArray(message.entries)) waiter.resolve(Object.fromEntries(message.entries));
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

// The members of the API object Spirit knows.
const KNOWN = ["tools", "invokeTool", "systemPrompt", "getSystemPrompt", "onEvent", "dispose"];

function isRecord(value) {
  return typeof value === "object" && value !== null;
}

// The API Spirit takes from `value` (what `activate` returned, or the module): a new
// object of the known members that have the right type (`tools` only its function
// entries, `systemPrompt` only a non-blank string), or `undefined` when none has.
function resolveApi(value) {
  if (!isRecord(value)) return undefined;
  const api = {};
  if (isRecord(value.tools)) {
    const entries = Object.entries(value.tools).filter(([, handler]) => typeof handler === "function");
    if (entries.length > 0) api.tools = Object.fromEntries(entries);
  }
  if (typeof value.invokeTool === "function") api.invokeTool = value.invokeTool;
  if (typeof value.systemPrompt === "string" && value.systemPrompt.trim()) api.systemPrompt = value.systemPrompt;
  for (const name of ["getSystemPrompt", "onEvent", "dispose"]) {
    if (typeof value[name] === "function") api[name] = value[name];
  }
  return Object.keys(api).length > 0 ? api : undefined;
}

// What of `value` Spirit does not use although it looks meant for it.
function ignoredMembers(value, where) {
  const notes = [];
  if (!isRecord(value)) return notes;
  if ("tools" in value && isRecord(value.tools)) {
    for (const [name, handler] of Object.entries(value.tools)) {
      if (typeof handler !== "function") {
        notes.push(`\`${where}.tools.${name}\` is ${describe(handler)}, not a function: Spirit ignores it`);
      }
    }
  } else if ("tools" in value && value.tools !== undefined) {
    notes.push(`\`${where}.tools\` is ${describe(value.tools)}, not an object of functions: Spirit ignores it`);
  }
  if ("systemPrompt" in value && value.systemPrompt !== undefined) {
    if (typeof value.systemPrompt !== "string") {
      notes.push(`\`${where}.systemPrompt\` is ${describe(value.systemPrompt)}, not a string: Spirit ignores it`);
    } else if (!value.systemPrompt.trim()) {
      notes.push(`\`${where}.systemPrompt\` is blank: Spirit ignores it`);
    }
  }
  for (const name of ["invokeTool", "getSystemPrompt", "onEvent", "dispose"]) {
    if (name in value && value[name] !== undefined && typeof value[name] !== "function") {
      notes.push(`\`${where}.${name}\` is ${describe(value[name])}, not a function: Spirit ignores it`);
    }
  }
  return notes;
}

// `export function activate`, `export default function activate`, `export default { activate }`.
function findActivate(namespace) {
  if (typeof namespace.activate === "function") return namespace.activate;
  const fallback = namespace.default;
  if (typeof fallback === "function") return fallback;
  if (isRecord(fallback) && typeof fallback.activate === "function") return fallback.activate;
  return undefined;
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function makeLog() {
  return (message) => {
    let text;
    try {
      text = String(message);
    } catch {
      text = "(a value that cannot be shown)";
    }
    send({ type: "log", message: text });
  };
}

function makeSettings() {
  return {
    get: (key) => request("settings.get", { key }),
    getAll: () => request("settings.getAll", {}),
    set: (key, value) => request("settings.set", { key, value }),
    setAll: (values) => request("settings.setAll", { values }),
  };
}

function makeSecrets() {
  return {
    get: (key) => request("secrets.get", { key }),
    has: (key) => request("secrets.has", { key }),
    set: (key, value) => request("secrets.set", { key, value }),
    delete: (key) => request("secrets.delete", { key }),
  };
}

function makeHost(job) {
  return job.host === "desktop"
    ? { showMessageBox: (options) => request("host.showMessageBox", { options }) }
    : {};
}

class Stage extends Error {
  constructor(stage, message) {
    super(message);
    this.stage = stage;
  }
}

// Loads `main` and activates it (with `event` as `ctx.activationEvent` when given);
// the API Spirit would keep, or `undefined`.
async function activateExtension(job, host, event, notes) {
  let namespace;
  try {
    namespace = await import(pathToFileURL(job.mainPath).href);
  } catch (error) {
    let message = messageOf(error);
    // Node does not say where a module's syntax error is; `node --check` does.
    if (error instanceof SyntaxError) message += ` (\`node --check ${job.extension.main}\` shows where)`;
    throw new Stage("load", message);
  }
  const activate = findActivate(namespace);
  if (activate === undefined) {
    throw new Stage(
      "activate",
      `Extension ${job.extension.name} does not export activate; export activate(context) or a default export of that function.`,
    );
  }
  const ctx = {
    extension: { ...job.extension },
    host,
    log: makeLog(),
    settings: makeSettings(),
    secrets: makeSecrets(),
  };
  if (event !== undefined) ctx.activationEvent = event;
  let returned;
  try {
    returned = await activate(ctx);
  } catch (error) {
    throw new Stage("activate", messageOf(error));
  }
  const fromActivate = resolveApi(returned);
  if (fromActivate !== undefined) {
    notes.push(...ignoredMembers(returned, "the object `activate` returned"));
    return fromActivate;
  }
  if (returned !== undefined && returned !== null) {
    notes.push(...ignoredMembers(returned, "the object `activate` returned"));
    notes.push(
      `\`activate\` returned ${describe(returned)} with no usable member (${KNOWN.map((n) => `\`${n}\``).join(", ")}): Spirit uses the module's own exports instead`,
    );
  }
  const fromModule = resolveApi(namespace);
  notes.push(...ignoredMembers(namespace, "the module export"));
  if (isRecord(namespace.default)) {
    const unused = KNOWN.filter((name) => name in namespace.default && !(name in namespace));
    if (unused.length > 0) {
      notes.push(
        `the members ${unused.map((n) => `\`${n}\``).join(", ")} of the default export object are never used by Spirit: return them from \`activate\`, or export them by name`,
      );
    }
  }
  return fromModule;
}

async function run(job) {
  const notes = [];
  const host = makeHost(job);
  const event = job.event ? { type: job.event } : undefined;
  let api;
  try {
    api = await activateExtension(job, host, event, notes);
    // The app's event dispatch: the activated extension's `onEvent` gets the event.
    if (event !== undefined && api?.onEvent) {
      try {
        await api.onEvent(event);
      } catch (error) {
        throw new Stage("onEvent", messageOf(error));
      }
    }
  } catch (error) {
    const stage = error instanceof Stage ? error.stage : "activate";
    return { failure: { stage, message: messageOf(error) }, notes };
  }

  const report = { notes };
  try {
    report.outcome = job.call.kind === "tool" ? await callTool(api, job, host) : await systemPrompt(api, notes);
  } catch (error) {
    report.failure = { stage: job.call.kind === "tool" ? "tool" : "systemPrompt", message: messageOf(error) };
  }
  return report;
}

async function callTool(api, job, host) {
  const call = job.call;
  if (api === undefined) {
    throw new Error(`The extension did not return a callable instance: ${job.extension.name}`);
  }
  const toolCtx = {
    extension: { ...job.extension },
    host,
    toolName: call.toolName,
    arguments: call.arguments,
    log: makeLog(),
    settings: makeSettings(),
    secrets: makeSecrets(),
  };
  if (call.toolCallId) toolCtx.toolCallId = call.toolCallId;
  if (call.questionsResult !== undefined) toolCtx.questionsResult = call.questionsResult;

  // Called as plain functions: `this` is undefined inside, as in Spirit.
  let value;
  const invokeTool = api.invokeTool;
  const handler = api.tools?.[call.toolName];
  if (typeof invokeTool === "function") {
    value = await invokeTool(toolCtx);
  } else if (typeof handler === "function") {
    value = await handler(toolCtx);
  } else {
    throw new Error(`The extension does not export a tool handler: ${call.toolName}`);
  }
  if (typeof value === "string") return { kind: "string", text: value, returned: "a string" };
  if (value === undefined) return { kind: "string", text: "", returned: "undefined" };
  // A BigInt (or a throwing toJSON) makes JSON.stringify throw: the call fails.
  const text = JSON.stringify(value, null, 2);
  // A function or a symbol: JSON.stringify gives `undefined`, no text at all.
  if (text === undefined) return { kind: "undefined", returned: describe(value) };
  return { kind: "json", text, returned: describe(value) };
}

async function systemPrompt(api, notes) {
  if (api === undefined) return { kind: "none" };
  if (typeof api.getSystemPrompt === "function") {
    // A method call on the API object Spirit keeps.
    const value = await api.getSystemPrompt();
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw new Error(`\`getSystemPrompt\` gave ${describe(value)}: expected a string`);
    }
    const text = value?.trim();
    if (!text && api.systemPrompt) {
      notes.push(
        "`getSystemPrompt` gave no prompt, so Spirit does not use `systemPrompt`, although it is set: `getSystemPrompt` always wins",
      );
    }
    return text ? { kind: "string", text, source: "getSystemPrompt" } : { kind: "none", source: "getSystemPrompt" };
  }
  const text = api.systemPrompt?.trim();
  return text ? { kind: "string", text, source: "systemPrompt" } : { kind: "none" };
}

jobReceived.then(run).then(finish, (error) => {
  finish({ failure: { stage: "harness", message: messageOf(error) } });
});
