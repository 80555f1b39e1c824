#!/usr/bin/env python3
"""The cost of `run --listen` under a client (issue 30, "Performance"): one `curupira`
binary on `run --once` over N local-queue items (agent `true`, max_concurrent 4), run
alternately without and with `--listen 127.0.0.1:PORT` while a client asks
`GET /api/v1/state` ten times a second; fresh project per run; prints the medians and
the ratio with/without.

    ITEMS=1000 RUNS=9 python3 host-cli/benches/listen_ab.py target/release/curupira

Not a cargo bench (cargo runs only `.rs` files here): it times whole processes with a
poller beside them."""
import http.client, os, shutil, socket, statistics, subprocess, sys, tempfile, threading, time

binary = os.path.abspath(sys.argv[1])
items = int(os.environ.get("ITEMS", "1000"))
runs = int(os.environ.get("RUNS", "9"))

def project():
    d = tempfile.mkdtemp(prefix="listen-ab-")
    with open(os.path.join(d, "tasks.jsonl"), "w") as f:
        for n in range(1, items + 1):
            f.write('{"n": "%d"}\n' % n)
    with open(os.path.join(d, "curupira.toml"), "w") as f:
        f.write('[settings]\nrepository = "example.com/acme/widgets"\n\n'
                '[settings.agent]\ncommand = ["true"]\nmax_concurrent = 4\n\n'
                '[extensions.local]\nbuiltin = "local-queue"\n\n'
                '[automations.q]\ntrigger = "jsonl"\nprompt = "Do ${n}."\n'
                'arguments = { path = "tasks.jsonl", done_path = "done.jsonl" }\n'
                'polling = { batch_size = %d }\n' % items)
    return d

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

def poll(port, stop, answered):
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/api/v1/state")
            if c.getresponse().status == 200:
                answered.append(1)
            c.close()
        except OSError:
            pass
        stop.wait(0.1)

def once(listen):
    d = project()
    args = [binary, "run", "--once", "--format", "json"]
    stop, answered = threading.Event(), []
    poller = None
    if listen:
        port = free_port()
        args += ["--listen", "127.0.0.1:%d" % port]
        poller = threading.Thread(target=poll, args=(port, stop, answered))
        poller.start()
    start = time.perf_counter()
    r = subprocess.run(args, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    stop.set()
    if poller:
        poller.join()
    done = sum(1 for _ in open(os.path.join(d, "done.jsonl")))
    shutil.rmtree(d)
    if r.returncode != 0 or done != items:
        sys.exit("a run failed: %s" % r.stderr.decode()[-500:])
    return elapsed * 1000, len(answered)

off, on, answers = [], [], []
for _ in range(runs):
    off.append(once(False)[0])
    t, n = once(True)
    on.append(t)
    answers.append(n)
m_off, m_on = statistics.median(off), statistics.median(on)
print("  without --listen: median %.1f ms  (%s)" % (m_off, ", ".join("%.0f" % t for t in off)))
print("  with --listen and a client at 10/s: median %.1f ms  (%s; answers per run %s)"
      % (m_on, ", ".join("%.0f" % t for t in on), answers))
print("  with / without: %.3f" % (m_on / m_off))
