#!/usr/bin/env python3
"""GitHub's GraphQL API on loopback, for the official `curupira-plugins`.

Usage: github_stand_in.py ISSUES.json OUT_DIR

An HTTPS proxy (what `HTTPS_PROXY` names) on 127.0.0.1. A CONNECT to
`api.github.com:443` is answered here: TLS with a certificate of a throw-away CA
(made with `trustme`), then `POST /graphql` served from ISSUES.json, a list of
`{"number", "title", "body"}`, paged as GitHub pages a search (`first`, `after`). Every
other CONNECT (PyPI, for `uvx`) is tunnelled to the real host unchanged.

It writes into OUT_DIR:
  port          the proxy's port, once it listens
  ca-bundle.pem the machine's CA bundle followed by the test CA: what SSL_CERT_FILE
                names, so that both GitHub's stand-in and PyPI are trusted
  requests.jsonl one line per GraphQL request: {"authorization", "query", "first",
                "after", "returned"}

Needs Python 3 and `trustme` (installed with the ecosystem).
"""

import json
import os
import socket
import ssl
import sys
import threading

import trustme

GITHUB = "api.github.com"


def system_bundle():
    """The CA bundle this machine's clients trust, or "" when none is found."""
    candidates = [os.environ.get("SSL_CERT_FILE"), ssl.get_default_verify_paths().cafile,
                  ssl.get_default_verify_paths().openssl_cafile,
                  "/etc/ssl/certs/ca-certificates.crt"]
    for path in candidates:
        if path and os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
    return ""


def read_head(stream):
    """The request line and the headers (lower-cased names) of one HTTP request."""
    line = stream.readline(65536)
    if not line:
        return None, {}
    headers = {}
    while True:
        header = stream.readline(65536)
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return line.decode("latin-1").strip(), headers


def node(issue):
    n = issue["number"]
    return {
        "id": "I_%d" % n,
        "number": n,
        "title": issue["title"],
        "body": issue.get("body", ""),
        "url": "https://github.com/acme/api/issues/%d" % n,
        "state": "OPEN",
        "author": {"login": "alice"},
        "labels": {"nodes": [{"name": "agent-ready"}]},
        "assignees": {"nodes": []},
        "milestone": None,
        "createdAt": "2026-12-01T10:00:00Z",
        "stateReason": None,
    }


class StandIn:
    def __init__(self, issues, out_dir, context):
        self.issues = issues
        self.out_dir = out_dir
        self.context = context
        self.lock = threading.Lock()

    def log(self, entry):
        with self.lock:
            with open(os.path.join(self.out_dir, "requests.jsonl"), "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def serve_github(self, conn):
        tls = self.context.wrap_socket(conn, server_side=True)
        stream = tls.makefile("rb")
        while True:
            line, headers = read_head(stream)
            if line is None:
                break
            body = stream.read(int(headers.get("content-length", "0")))
            request = json.loads(body or b"{}")
            variables = request.get("variables", {})
            first = int(variables.get("first") or 100)
            start = int(variables.get("after") or 0)
            page = self.issues[start:start + first]
            end = start + len(page)
            answer = {"data": {"search": {
                "pageInfo": {"hasNextPage": end < len(self.issues), "endCursor": str(end)},
                "nodes": [node(issue) for issue in page],
            }}}
            self.log({"authorization": headers.get("authorization", ""),
                      "query": variables.get("query"), "first": first,
                      "after": variables.get("after"), "returned": len(page)})
            data = json.dumps(answer).encode()
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n" % len(data) + data)
            if headers.get("connection", "").lower() == "close":
                break
        tls.close()

    def tunnel(self, conn, host, port):
        upstream = socket.create_connection((host, port), timeout=60)
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

        def pipe(src, dst):
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        other = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
        other.start()
        pipe(conn, upstream)
        other.join()
        upstream.close()

    def handle(self, conn):
        try:
            stream = conn.makefile("rb")
            line, _ = read_head(stream)
            parts = (line or "").split()
            if len(parts) < 2 or parts[0] != "CONNECT":
                conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            host, _, port = parts[1].rpartition(":")
            if host == GITHUB:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                self.serve_github(conn)
            else:
                self.tunnel(conn, host, int(port))
        except (OSError, ValueError, ssl.SSLError) as error:
            sys.stderr.write("stand-in: %s\n" % error)
        finally:
            conn.close()


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        issues = json.load(f)
    out_dir = sys.argv[2]
    ca = trustme.CA()
    cert = ca.issue_cert(GITHUB)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    with open(os.path.join(out_dir, "ca-bundle.pem"), "w", encoding="utf-8") as f:
        f.write(system_bundle() + "\n" + ca.cert_pem.bytes().decode())
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    stand_in = StandIn(issues, out_dir, context)
    port_path = os.path.join(out_dir, "port")
    with open(port_path + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(listener.getsockname()[1]))
    os.replace(port_path + ".tmp", port_path)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=stand_in.handle, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
