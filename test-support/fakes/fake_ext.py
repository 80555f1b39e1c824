#!/usr/bin/env python3
"""A fake Curupira trigger extension for the hostile-extension suite (tests/hostile.rs).

Without `--mode` (or with `--mode healthy`) it is a correct, minimal extension: the
trigger `fake` returns one item, `[{"key": "n", "value": "1"}]`, on the first poll and
`null` afterwards. Each other mode switches on exactly one misbehaviour, on the method
named in MODES, and is otherwise just as correct.

    fake_ext.py --mode NAME [--pid-file PATH] [--log PATH]

--pid-file  this process's id is appended to it at start, so a test can check that
            the host left no process behind.
--log       every method received is appended to it, one per line, before answering.
--manifest  the manifest `--curupira-print-manifest` prints.

Standard library only; stdout carries frames and nothing else unless a mode says so.
"""

import argparse
import json
import os
import signal
import sys
import time

TRIGGER = "fake"
ITEM = [{"key": "n", "value": "1"}]
MAX_BODY = 16 * 1024 * 1024
HEX = b"0123456789abcdefABCDEF"

# mode -> the method it misbehaves on ("start" = before any request is read).
MODES = {
    "healthy": None,
    "garbage-stdout": "start",  # a banner on stdout before any frame
    "bad-hex-header": "describe",  # a `g` among the 8 header digits
    "plus-header": "trigger/schema",  # a `+` as the first header byte
    "huge-frame": "trigger/validate",  # `ffffffff`: an announced 4 GiB body
    "truncated": "trigger/poll",  # half a frame, then exit
    "invalid-utf8": "trigger/poll",  # a correct frame whose body is not UTF-8
    "jsonrpc-1.0": "initialize",  # "jsonrpc": "1.0" in the reply
    "wrong-id": "trigger/poll",  # a reply carrying another id
    "initialize-error": "initialize",  # an error reply (-32603) to initialize
    "version-3": "initialize",  # answers protocol version 3
    "values-missing": "trigger/poll",  # a poll result without `values`
    "number-value": "trigger/poll",  # "value": 42
    "repository-key": "trigger/poll",  # a pair with the reserved key `repository`
    "duplicate-key": "trigger/poll",  # the key `title` twice in one item
    "hang-poll": "trigger/poll",  # never answers the poll
    "crash-mid-round": "after-first-poll",  # dies on the request after the first poll
    "stderr-flood": "start",  # 4 MiB on stderr before the first reply
    "ignore-shutdown": "shutdown",  # never answers shutdown, ignores EOF and SIGTERM
    "slow-drip": "trigger/poll",  # the reply one byte per millisecond
}

STDERR_FLOOD_BYTES = 4 * 1024 * 1024  # 64 pipe buffers: a host that does not drain stderr deadlocks
DRIP_BODY_BYTES = 100_000  # at one byte per millisecond: 100 s, far beyond any timeout


def log(message):
    sys.stderr.write(f"fake[{MODE}]: {message}\n")
    sys.stderr.flush()


def write_raw(data):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def frame(body):
    return b"%08x" % len(body) + body


def send(message):
    write_raw(frame(json.dumps(message).encode("utf-8")))


def reply(rid, result):
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def reply_error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def read_exact(count):
    """Reads `count` bytes; None on a clean EOF before the first byte."""
    data = b""
    while len(data) < count:
        chunk = sys.stdin.buffer.read1(count - len(data))
        if not chunk:
            if data:
                log(f"stdin ended inside a frame: expected {count} bytes, got {len(data)}")
                sys.exit(1)
            return None
        data += chunk
    return data


def read_message():
    header = read_exact(8)
    if header is None:
        return None
    for offset, byte in enumerate(header):
        if byte not in HEX:
            log(f"bad header byte {byte:#04x} at offset {offset}")
            sys.exit(1)
    length = int(header, 16)
    if length > MAX_BODY:
        log(f"frame of {length} bytes exceeds {MAX_BODY}")
        sys.exit(1)
    body = read_exact(length) if length else b""
    if body is None:
        log("stdin ended inside a frame body")
        sys.exit(1)
    return json.loads(body.decode("utf-8"))


def sleep_forever():
    while True:
        time.sleep(3600)


def healthy(method, rid, params, state):
    """The correct answer to every method; returns False after shutdown."""
    if method == "initialize":
        reply(
            rid,
            {"protocol_version": 2, "server_info": {"name": "hostile", "version": "0.1.0"}},
        )
    elif method == "describe":
        reply(rid, {"triggers": [{"trigger_type": TRIGGER, "prompt_fields": ["n"]}], "agents": []})
    elif method == "trigger/schema":
        reply(
            rid,
            {"schema": {"type": "object", "properties": {}}, "prompt_fields": ["n"]},
        )
    elif method == "trigger/validate":
        reply(rid, {"ok": True, "configuration": (params or {}).get("configuration", {})})
    elif method == "trigger/poll":
        state["polls"] += 1
        reply(rid, {"values": ITEM if state["polls"] == 1 else None})
    elif method in ("trigger/onStarted", "trigger/onFinished"):
        reply(rid, {})
    elif method == "shutdown":
        reply(rid, {})
        return False
    else:
        reply_error(rid, -32601, f"this extension has no method `{method}`")
    return True


def poll_reply(rid, values_result):
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": values_result})
    return frame(body.encode("utf-8"))


def misbehave(method, rid):
    """Does this mode's misbehaviour for a request it applies to."""
    if MODE == "bad-hex-header":
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"triggers": []}}).encode()
        write_raw(b"%07xg" % (len(body) >> 4) + body)
    elif MODE == "plus-header":
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode()
        write_raw(b"+%07x" % len(body) + body)
    elif MODE == "huge-frame":
        write_raw(b"ffffffff" + b"{" * 4096)
    elif MODE == "truncated":
        whole = poll_reply(rid, {"values": ITEM})
        write_raw(whole[: len(whole) // 2])
        log("exiting in the middle of a frame")
        sys.exit(0)
    elif MODE == "invalid-utf8":
        body = b'{"jsonrpc":"2.0","id":%d,"result":{"values":[{"key":"n","value":"\xff\xfe"}]}}' % rid
        write_raw(frame(body))
    elif MODE == "jsonrpc-1.0":
        send({"jsonrpc": "1.0", "id": rid, "result": {"protocol_version": 2}})
    elif MODE == "wrong-id":
        reply(rid + 1000, {"values": ITEM})
    elif MODE == "initialize-error":
        reply_error(rid, -32603, "the fake extension refuses to start")
    elif MODE == "version-3":
        reply(
            rid,
            {"protocol_version": 3, "server_info": {"name": "hostile", "version": "0.1.0"}},
        )
    elif MODE == "values-missing":
        reply(rid, {"items": ITEM})
    elif MODE == "number-value":
        reply(rid, {"values": [{"key": "issue_number", "value": 42}]})
    elif MODE == "repository-key":
        reply(rid, {"values": [{"key": "repository", "value": "example.com/evil/repo"}]})
    elif MODE == "duplicate-key":
        reply(rid, {"values": [{"key": "title", "value": "a"}, {"key": "title", "value": "b"}]})
    elif MODE == "hang-poll":
        log("hanging on trigger/poll")
        sleep_forever()
    elif MODE == "crash-mid-round":
        log(f"crashing on {method}")
        os._exit(70)
    elif MODE == "ignore-shutdown":
        log("ignoring shutdown, end of stdin and SIGTERM")
        sleep_forever()
    elif MODE == "slow-drip":
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"values": None}}).encode()
        data = frame(body.ljust(DRIP_BODY_BYTES, b" "))
        log(f"dripping a {len(data)}-byte frame, one byte per millisecond")
        for index in range(len(data)):
            write_raw(data[index : index + 1])
            time.sleep(0.001)
    else:
        raise AssertionError(f"mode {MODE} has no misbehaviour on {method}")


def serve(method_log):
    state = {"polls": 0, "polled": False}
    if MODE == "garbage-stdout":
        write_raw(b"Hello from a chatty extension! Starting up...\n")
    if MODE == "stderr-flood":
        line = b"x" * 1023 + b"\n"
        for _ in range(STDERR_FLOOD_BYTES // len(line)):
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
    if MODE == "ignore-shutdown":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    target = MODES[MODE]
    while True:
        message = read_message()
        if message is None:
            if MODE == "ignore-shutdown":
                log("stdin ended; staying alive anyway")
                sleep_forever()
            return
        method, rid = message.get("method"), message.get("id")
        if method_log:
            with open(method_log, "a", encoding="utf-8") as out:
                out.write(f"{method}\n")
        if method == target or (target == "after-first-poll" and state["polled"]):
            misbehave(method, rid)
            continue
        if method == "trigger/poll":
            state["polled"] = True
        if not healthy(method, rid, message.get("params"), state):
            return


def main():
    global MODE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="healthy", choices=sorted(MODES))
    parser.add_argument("--pid-file")
    parser.add_argument("--log")
    parser.add_argument("--manifest", help="the file --curupira-print-manifest prints")
    parser.add_argument("--curupira-print-manifest", action="store_true")
    args = parser.parse_args()
    MODE = args.mode
    if args.curupira_print_manifest:
        if not args.manifest:
            parser.error("--curupira-print-manifest needs --manifest PATH")
        with open(args.manifest, "rb") as source:
            write_raw(source.read())
        return
    if args.pid_file:
        with open(args.pid_file, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
    try:
        serve(args.log)
    except BrokenPipeError:
        # The host closed our stdout (it gave up on us): nothing left to say.
        os._exit(0)


MODE = "healthy"

if __name__ == "__main__":
    main()
