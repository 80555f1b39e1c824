#!/usr/bin/env python3
"""A/B of two `curupira` binaries on `run --once`: N items of the built-in local-queue,
agent `true`, max_concurrent 4, batch_size N, ledger on or off. Fresh project per run,
binaries alternated; prints medians and the ratio after/before.

    ITEMS=1000 RUNS=9 LEDGER=on python3 host-cli/benches/ab_binaries.py BEFORE AFTER

where BEFORE and AFTER are release builds (`cargo build --release -p curupira-host` in
two checkouts). Not a cargo bench (cargo runs only `.rs` files here): it compares two
builds, which one criterion run cannot."""
import os, shutil, statistics, subprocess, sys, tempfile, time

before, after = sys.argv[1], sys.argv[2]
items = int(os.environ.get("ITEMS", "1000"))
runs = int(os.environ.get("RUNS", "9"))
ledger = os.environ.get("LEDGER", "on") == "on"

def project():
    d = tempfile.mkdtemp(prefix="ab-")
    with open(os.path.join(d, "tasks.jsonl"), "w") as f:
        for n in range(1, items + 1):
            f.write('{"n": "%d"}\n' % n)
    cfg = ('[settings]\nrepository = "example.com/acme/widgets"\n\n'
           '[settings.agent]\ncommand = ["true"]\nmax_concurrent = 4\n\n'
           + ('' if ledger else '[settings.ledger]\nenabled = false\n\n') +
           '[extensions.local]\nbuiltin = "local-queue"\n\n'
           '[automations.q]\ntrigger = "jsonl"\nprompt = "Do ${n}."\n'
           'arguments = { path = "tasks.jsonl", done_path = "done.jsonl" }\n'
           'polling = { batch_size = %d }\n' % items)
    with open(os.path.join(d, "curupira.toml"), "w") as f:
        f.write(cfg)
    return d

def once(binary):
    d = project()
    start = time.perf_counter()
    r = subprocess.run([binary, "run", "--once", "--format", "json"], cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    done = sum(1 for _ in open(os.path.join(d, "done.jsonl")))
    shutil.rmtree(d)
    assert r.returncode == 0 and done == items, (r.returncode, done, r.stderr[-500:])
    return elapsed

times = {before: [], after: []}
once(before); once(after)  # warm the page cache
for i in range(runs):
    for b in ((before, after) if i % 2 == 0 else (after, before)):
        times[b].append(once(b))
mb, ma = statistics.median(times[before]), statistics.median(times[after])
print(f"items={items} ledger={'on' if ledger else 'off'} runs={runs} each")
print(f"  before: median {mb*1000:.1f} ms  ({', '.join(f'{t*1000:.0f}' for t in times[before])})")
print(f"  after:  median {ma*1000:.1f} ms  ({', '.join(f'{t*1000:.0f}' for t in times[after])})")
print(f"  after / before: {ma/mb:.3f}")
