#!/usr/bin/env node
// A Curupira trigger extension in plain Node.js: no dependencies, no SDK, the whole
// protocol (version 2, docs/PROTOCOL.md) written out by hand. It exists to prove that
// the protocol can be implemented outside Rust from the documentation alone.
//
// The trigger `counter` produces `count` items, one per `trigger/poll`, each with the
// pairs `number` ("1", "2", ...) and `title` ("<label> 1 of <count>"), then `null`.
//
// stdout carries protocol frames and nothing else; every log line goes to stderr.

'use strict';

const fs = require('node:fs');
const path = require('node:path');

const PROTOCOL_MAJOR = 2;
// The protocol's default frame limit (16 MiB); a larger announced body is refused
// before any of it is read.
const MAX_BODY = 16 * 1024 * 1024;
const HEADER_LEN = 8;
const MANIFEST_PATH = path.join(__dirname, 'curupira-extension.toml');
const TRIGGER_TYPE = 'counter';

// JSON-RPC 2.0 and protocol error codes (docs/PROTOCOL.md, section 3.3).
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const PROTOCOL_FAILURE = -32001;
const VALIDATION_FAILURE = -32003;

function log(message) {
  process.stderr.write(`${message}\n`);
}

// ---------------------------------------------------------------------------
// The manifest: printed for `--curupira-print-manifest`, and the source of the name
// and version this extension reports in `initialize`.

function readManifest() {
  return fs.readFileSync(MANIFEST_PATH);
}

// The first `name = "…"` / `version = "…"` lines are the top-level keys: the
// `[launch]` table of a `command` launch has neither.
function manifestString(text, key) {
  const match = new RegExp(`^${key}\\s*=\\s*"([^"\\\\]*)"`, 'm').exec(text);
  return match ? match[1] : undefined;
}

// ---------------------------------------------------------------------------
// Framing (docs/PROTOCOL.md, section 2): 8 hex digits giving the body length, then
// the body. Every header byte is checked by hand: `parseInt` would accept `+`, `-`,
// spaces and `0x`.

class FramingError extends Error {}

function isHexDigit(byte) {
  return (
    (byte >= 0x30 && byte <= 0x39) || // 0-9
    (byte >= 0x41 && byte <= 0x46) || // A-F
    (byte >= 0x61 && byte <= 0x66) // a-f
  );
}

function describeByte(byte) {
  const hex = `0x${byte.toString(16).padStart(2, '0')}`;
  return byte >= 0x21 && byte <= 0x7e ? `${hex} ('${String.fromCharCode(byte)}')` : hex;
}

// A decoder fed with chunks as they arrive. It keeps the chunks in a list instead of
// concatenating on every read, and never reserves memory for an announced length.
class FrameDecoder {
  constructor(maxBody) {
    this.maxBody = maxBody;
    this.chunks = [];
    this.buffered = 0;
    this.consumed = 0; // stream offset of the first buffered byte
    this.bodyLength = null; // set once a header has been read
    this.failed = null;
  }

  // Returns the complete bodies contained in what has arrived so far.
  push(chunk) {
    if (this.failed) {
      throw new FramingError(`the stream already failed: ${this.failed}`);
    }
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const bodies = [];
    try {
      for (;;) {
        if (this.bodyLength === null) {
          if (this.buffered < HEADER_LEN) break;
          const header = this.take(HEADER_LEN);
          for (let i = 0; i < HEADER_LEN; i += 1) {
            if (!isHexDigit(header[i])) {
              throw new FramingError(
                `bad header byte ${describeByte(header[i])} at offset ` +
                  `${this.consumed - HEADER_LEN + i}: a header is 8 hexadecimal digits`,
              );
            }
          }
          const length = Number.parseInt(header.toString('latin1'), 16);
          if (length > this.maxBody) {
            throw new FramingError(
              `a frame announces ${length} bytes, more than the maximum of ${this.maxBody}`,
            );
          }
          this.bodyLength = length;
        }
        if (this.buffered < this.bodyLength) break;
        bodies.push(this.take(this.bodyLength));
        this.bodyLength = null;
      }
    } catch (error) {
      this.failed = error.message;
      throw error;
    }
    return bodies;
  }

  // Called at end of stream: a clean end only at a frame boundary.
  finish() {
    if (this.failed) return;
    if (this.bodyLength !== null) {
      throw new FramingError(
        `the stream ended inside a frame body: expected ${this.bodyLength} bytes, ` +
          `received ${this.buffered}`,
      );
    }
    if (this.buffered > 0) {
      throw new FramingError(
        `the stream ended inside a frame header: expected ${HEADER_LEN} bytes, ` +
          `received ${this.buffered}`,
      );
    }
  }

  take(count) {
    const out = Buffer.allocUnsafe(count);
    let filled = 0;
    while (filled < count) {
      const head = this.chunks[0];
      const wanted = count - filled;
      if (head.length <= wanted) {
        head.copy(out, filled);
        filled += head.length;
        this.chunks.shift();
      } else {
        head.copy(out, filled, 0, wanted);
        filled += wanted;
        this.chunks[0] = head.subarray(wanted);
      }
    }
    this.buffered -= count;
    this.consumed += count;
    return out;
  }
}

function encodeFrame(message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > MAX_BODY) {
    throw new Error(`a reply of ${body.length} bytes exceeds the maximum of ${MAX_BODY}`);
  }
  const header = Buffer.from(body.length.toString(16).padStart(HEADER_LEN, '0'), 'latin1');
  return Buffer.concat([header, body]);
}

// ---------------------------------------------------------------------------
// JSON-RPC 2.0 (docs/PROTOCOL.md, section 3).

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

function send(message, then) {
  process.stdout.write(encodeFrame(message), then);
}

function reply(id, result) {
  send({ jsonrpc: '2.0', id, result });
}

function replyError(id, code, message, data) {
  const error = { code, message };
  if (data !== undefined) error.data = data;
  send({ jsonrpc: '2.0', id, error });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// JSON.parse cannot tell `1` from `1.0` or `1e0`; it can tell integers from fractions.
function isValidId(id) {
  return id === null || typeof id === 'string' || Number.isInteger(id);
}

function has(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

// Classifies one body (section 3.2) and answers it. Returns nothing.
function handleBody(body) {
  let message;
  try {
    message = JSON.parse(utf8.decode(body));
  } catch (error) {
    const what = error instanceof TypeError ? 'is not valid UTF-8' : 'is not valid JSON';
    replyError(null, PARSE_ERROR, `the message ${what}`);
    return;
  }
  if (Array.isArray(message)) {
    replyError(
      null,
      INVALID_REQUEST,
      message.length === 0
        ? 'an empty batch'
        : 'this extension does not accept batches',
    );
    return;
  }
  if (!isObject(message)) {
    replyError(null, INVALID_REQUEST, 'a message must be an object');
    return;
  }
  const readableId = has(message, 'id') && isValidId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') {
    replyError(readableId, INVALID_REQUEST, '`jsonrpc` must be "2.0"');
    return;
  }
  if (!has(message, 'method')) {
    if (has(message, 'result') || has(message, 'error')) {
      log('ignoring a response: the host sends only requests');
    } else {
      replyError(
        readableId,
        INVALID_REQUEST,
        'neither `method` nor `result`/`error`',
      );
    }
    return;
  }
  if (typeof message.method !== 'string') {
    replyError(readableId, INVALID_REQUEST, '`method` must be a string');
    return;
  }
  // `"params": null` is absent params: the reference host sends it with `describe`
  // and `shutdown`.
  if (has(message, 'params') && message.params !== null && typeof message.params !== 'object') {
    replyError(
      readableId,
      INVALID_REQUEST,
      '`params` must be an object or an array',
    );
    return;
  }
  if (!has(message, 'id')) {
    log(`ignoring the notification \`${message.method}\``);
    return;
  }
  if (!isValidId(message.id)) {
    replyError(
      null,
      INVALID_REQUEST,
      '`id` must be an integer, a string or null',
    );
    return;
  }
  handleRequest(message.id, message.method, message.params);
}

// ---------------------------------------------------------------------------
// The methods (section 4).

let initialized = false;
let shuttingDown = false;
// How many items each distinct argument set has produced so far.
const produced = new Map();

const SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    count: {
      type: 'integer',
      minimum: 0,
      maximum: 1000,
      default: 3,
      description: 'How many items the counter produces, one per poll.',
    },
    label: {
      type: 'string',
      minLength: 1,
      default: 'task',
      description: 'The word each item title starts with.',
    },
  },
  additionalProperties: false,
};

// The keys each item carries: `number` (from 1 to `count`, as a string) and `title`
// ("<label> <number> of <count>").
const PROMPT_FIELDS = ['number', 'title'];

// The keys a host adds to an automation's table; they are not the trigger's parameters.
const CORE_KEYS = ['trigger_type', 'repository', 'prompt', 'profile', 'checkout'];

function objectParams(params) {
  if (params === undefined || params === null) return {};
  if (!isObject(params)) {
    throw new RpcError(INVALID_PARAMS, '`params` must be an object');
  }
  return params;
}

// A trigger type is its local name or `alias/local`: the last `/` segment counts.
function checkTriggerType(params) {
  if (typeof params.trigger_type !== 'string') {
    throw new RpcError(INVALID_PARAMS, '`trigger_type` must be a string');
  }
  const local = params.trigger_type.split('/').pop();
  if (local !== TRIGGER_TYPE) {
    throw new RpcError(
      VALIDATION_FAILURE,
      `unsupported trigger_type \`${params.trigger_type}\`; this extension offers \`${TRIGGER_TYPE}\``,
    );
  }
}

// The trigger's parameters in an automation's table: every key but the core keys.
function parametersOf(table) {
  if (table === undefined || table === null) return {};
  if (!isObject(table)) return table;
  return Object.fromEntries(Object.entries(table).filter(([key]) => !CORE_KEYS.includes(key)));
}

function pointer(key) {
  return `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

// Checks the arguments against SCHEMA by hand and returns them with defaults applied,
// plus the problems found as `{path, message}` (section 4, `trigger/validate`).
function checkArguments(args) {
  if (args === undefined) args = {};
  if (!isObject(args)) {
    return { errors: [{ path: '', message: 'the arguments must be an object' }] };
  }
  const errors = [];
  for (const key of Object.keys(args)) {
    if (!has(SCHEMA.properties, key)) {
      errors.push({
        path: pointer(key),
        message: `unknown argument \`${key}\` (expected one of: count, label)`,
      });
    }
  }
  const count = has(args, 'count') ? args.count : SCHEMA.properties.count.default;
  if (!Number.isInteger(count) || count < 0 || count > 1000) {
    errors.push({
      path: '/count',
      message: `\`count\` must be an integer from 0 to 1000, got ${JSON.stringify(count)}`,
    });
  }
  const label = has(args, 'label') ? args.label : SCHEMA.properties.label.default;
  if (typeof label !== 'string' || label.length === 0) {
    errors.push({
      path: '/label',
      message: `\`label\` must be a non-empty string, got ${JSON.stringify(label)}`,
    });
  }
  return { errors, count, label };
}

// One sentence listing every problem (`/count: …; /label: …`).
function listProblems(errors) {
  return errors.map(({ path, message }) => `${path || '(root)'}: ${message}`).join('; ');
}

// A version is an integer (`2`) or a string (`"2"`, `"2.1"`); only the major counts.
function majorOf(version) {
  if (Number.isInteger(version) && version >= 0) return version;
  if (typeof version === 'string' && /^[0-9]+(\.[0-9]+)*$/.test(version)) {
    return Number.parseInt(version.split('.')[0], 10);
  }
  return null;
}

const methods = {
  initialize(params) {
    const major = majorOf(params.protocol_version);
    if (major === null) {
      throw new RpcError(
        INVALID_PARAMS,
        '`protocol_version` must be an integer or a string like "2"',
      );
    }
    if (major !== PROTOCOL_MAJOR) {
      throw new RpcError(
        PROTOCOL_FAILURE,
        `the host speaks protocol version ` +
          `${JSON.stringify(params.protocol_version)}, this extension speaks ${PROTOCOL_MAJOR}`,
      );
    }
    const client = isObject(params.client_info) ? params.client_info : {};
    log(`initialized by ${client.name ?? 'an unnamed host'} ${client.version ?? ''}`.trimEnd());
    initialized = true;
    const manifest = readManifest().toString('utf8');
    return {
      protocol_version: PROTOCOL_MAJOR,
      server_info: {
        name: manifestString(manifest, 'name'),
        version: manifestString(manifest, 'version'),
      },
    };
  },

  describe() {
    return {
      triggers: [{ trigger_type: TRIGGER_TYPE, prompt_fields: PROMPT_FIELDS }],
      agents: [],
    };
  },

  'trigger/schema'(params) {
    checkTriggerType(params);
    return { schema: SCHEMA, prompt_fields: PROMPT_FIELDS };
  },

  // The verdict is a result: `{ok: true, configuration}` (the table with the
  // defaults filled in, which every later poll receives) or `{ok: false, error}`.
  'trigger/validate'(params) {
    try {
      checkTriggerType(params);
    } catch (error) {
      return { ok: false, error: error.message };
    }
    const table = isObject(params.configuration) ? params.configuration : {};
    const { errors, count, label } = checkArguments(parametersOf(table));
    if (errors.length > 0) {
      return { ok: false, error: `trigger \`${TRIGGER_TYPE}\`: ${listProblems(errors)}` };
    }
    return { ok: true, configuration: { ...table, count, label } };
  },

  'trigger/poll'(params) {
    checkTriggerType(params);
    const { errors, count, label } = checkArguments(parametersOf(params.automation));
    if (errors.length > 0) {
      throw new RpcError(INVALID_PARAMS, `trigger \`${TRIGGER_TYPE}\`: ${listProblems(errors)}`);
    }
    const key = JSON.stringify([count, label]);
    const done = produced.get(key) ?? 0;
    if (done >= count) return { values: null };
    const number = done + 1;
    produced.set(key, number);
    return {
      values: [
        { key: 'number', value: String(number) },
        { key: 'title', value: `${label} ${number} of ${count}` },
      ],
    };
  },

  'trigger/onStarted'(params) {
    checkTriggerType(params);
    log(`started: ${describeValues(params.values)}`);
    return {};
  },

  'trigger/onFinished'(params) {
    checkTriggerType(params);
    log(`finished: ${describeValues(params.values)}`);
    return {};
  },
};

function describeValues(values) {
  if (!Array.isArray(values)) {
    throw new RpcError(INVALID_PARAMS, '`values` must be an array');
  }
  return values.map((pair) => `${pair?.key}=${JSON.stringify(pair?.value)}`).join(' ');
}

function handleRequest(id, method, params) {
  if (method === 'shutdown') {
    shuttingDown = true;
    send({ jsonrpc: '2.0', id, result: {} }, () => process.exit(0));
    return;
  }
  if (!has(methods, method)) {
    replyError(id, METHOD_NOT_FOUND, `this extension has no method \`${method}\``);
    return;
  }
  if (!initialized && method !== 'initialize') {
    replyError(
      id,
      PROTOCOL_FAILURE,
      `\`${method}\` was called before \`initialize\``,
    );
    return;
  }
  try {
    reply(id, methods[method](objectParams(params)));
  } catch (error) {
    if (error instanceof RpcError) {
      replyError(id, error.code, error.message, error.data);
    } else {
      log(`internal error in ${method}: ${error.stack ?? error}`);
      replyError(id, INTERNAL_ERROR, `${method} failed: ${error.message ?? error}`);
    }
  }
}

// ---------------------------------------------------------------------------
// The process: `--curupira-print-manifest`, or serve stdin until it ends.

function main(argv) {
  if (argv.length === 1 && argv[0] === '--curupira-print-manifest') {
    process.stdout.write(readManifest(), () => process.exit(0));
    return;
  }
  if (argv.length > 0) {
    log(`unexpected arguments ${JSON.stringify(argv)}; the only argument is --curupira-print-manifest`);
    process.exit(2);
  }

  // A host that went away closes our stdout: stop quietly instead of crashing.
  process.stdout.on('error', (error) => {
    log(`stdout closed (${error.code ?? error.message}); exiting`);
    process.exit(1);
  });

  const decoder = new FrameDecoder(MAX_BODY);
  process.stdin.on('data', (chunk) => {
    if (shuttingDown) return;
    let bodies;
    try {
      bodies = decoder.push(chunk);
    } catch (error) {
      // A byte stream cannot be resynchronised after a framing error (section 2.4).
      log(`framing error: ${error.message}; exiting`);
      process.exit(1);
    }
    for (const body of bodies) {
      if (shuttingDown) return;
      handleBody(body);
    }
  });
  process.stdin.on('end', () => {
    if (shuttingDown) return;
    try {
      decoder.finish();
    } catch (error) {
      log(`framing error: ${error.message}; exiting`);
      process.exit(1);
    }
    // Let pending writes drain; nothing else keeps the event loop alive.
    log('stdin closed; exiting');
    process.exitCode = 0;
  });
}

main(process.argv.slice(2));
