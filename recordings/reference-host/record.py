#!/usr/bin/env python3
"""Reproduce the recordings of the reference host (curupira 0.4.0 from PyPI), or replay
the very same cases against another host binary.

Usage: python3 record.py [options] OUTDIR [GROUP ...]
  GROUP: help validate commands repositories prompts plugins cron cron-timing reload (default: all)
Env: REF_VENV (default /tmp/ref-venv) must hold curupira==0.4.0 (unless --host is given);
  RECORD_SLOW=1 adds the 60 s task_timeout_minutes case; KEEP_WORKDIR=1 keeps the scratch folder.
Options (none of them changes what is recorded for the reference when left out):
  --host EXE        run the cases against EXE instead of <REF_VENV>/bin/curupira.  <venv> is
                    then REF_VENV if it has bin/python, else a scratch folder whose bin/python
                    is the python3 running this script (it runs rec_ext.py)
  --alias EXE       the `curu` alias (default with --host: EXE through a symlink named `curu`
                    in a scratch bin folder; without --host: <REF_VENV>/bin/curu)
  --only SUBSTRING  record only the cases whose name contains SUBSTRING (repeatable)
  --cases FILE      record only the cases named in FILE: one exact name a line, or JSON (a list
                    of names, compare.py --json output, or a recording's {"cases": [...]})
  --list            print the names of the (selected) cases of the groups and exit; runs no host
  --timeout-cap S   lower every case's timeout to at most S seconds (for slow or hanging hosts)
  -v, --verbose     one stderr line per case (exit code, seconds, name)

Everything runs offline in a fresh scratch folder (<workdir>), with HOME set to
<workdir>/home (<home>), a bare Git repository <workdir>/remotes/acme/widgets.git,
stand-ins for `uvx`/`npx` and for every agent CLI first on PATH, and a tiny
recording extension (<workdir>/rec_ext.py).  Only the reference host's behaviour
is recorded (outputs, exit codes, files, requests); none of its source.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

VENV = os.environ.get("REF_VENV", "/tmp/ref-venv")
HOST = os.path.join(VENV, "bin", "curupira")
ALIAS = os.path.join(VENV, "bin", "curu")
REPLAY = None        # None: the reference host; else a dict describing the host replayed (--host)
SCRATCH_HOST = None  # scratch folder of --host (the "venv" and the alias symlink), removed at exit
TIMEOUT_CAP = None   # --timeout-cap
VERBOSE = False

# Case selection (--only / --cases).  SELECT is None when every case runs.  Otherwise the groups
# run twice: a planning pass in a throw-away workdir, where run() starts no host and only notes
# every case (PLAN), then the real pass, where run() starts the host only for the cases in NEEDED:
# the selected ones plus, for a case that keeps the previous case's state (keep_home/keep_ws),
# the cases before it that it depends on.
SELECT = None        # (substrings, exact names)
PLANNING = False
PLAN = []            # [(case, depends_on_previous)] of the current group, in run() order
NEEDED = None        # indexes into PLAN that the real pass runs
CALL_INDEX = 0       # run() calls so far in the current group

W = None  # workdir
HOME = None
BIN = None
EXT_LOG = None
AGENT_LOG = None
SETUP_LOG = None

EXT_PY = r'''
import json, os, sys
LOG = __LOG__
def log(obj):
    with open(LOG, "a") as f:
        f.write(json.dumps(obj) + "\n")
def read_frame():
    hdr = sys.stdin.buffer.read(8)
    if len(hdr) < 8:
        return None
    n = int(hdr.decode(), 16)
    body = b""
    while len(body) < n:
        chunk = sys.stdin.buffer.read(n - len(body))
        if not chunk:
            return None
        body += chunk
    return json.loads(body)
def write_frame(obj):
    data = json.dumps(obj).encode()
    sys.stdout.buffer.write(("%08x" % len(data)).encode() + data)
    sys.stdout.buffer.flush()
MEM = {}
def items_path(params):
    conf = params.get("automation") or params.get("configuration") or {}
    return conf.get("path") or os.environ.get("REC_ITEMS")
def poll(params):
    p = items_path(params)
    if not p or not os.path.exists(p):
        return {"values": None}
    items = json.load(open(p))
    if os.environ.get("REC_MODE", "replay") == "persist":
        # progress kept in a file: every item is handed out once, across processes
        cur = p + ".cursor"
        i = int(open(cur).read()) if os.path.exists(cur) else 0
        if i >= len(items):
            return {"values": None}
        with open(cur, "w") as f:
            f.write(str(i + 1))
    else:
        # progress kept in memory: every new process starts again from the first item
        i = MEM.get(p, 0)
        if i >= len(items):
            return {"values": None}
        MEM[p] = i + 1
    return {"values": [{"key": k, "value": v} for k, v in items[i].items()]}
while True:
    req = read_frame()
    if req is None:
        break
    m = req.get("method")
    params = req.get("params")
    log({"pid": os.getpid(), "method": m, "params": params})
    if "id" not in req:
        continue
    if m == "initialize":
        res = {"protocol_version": 2, "server_info": {"name": "rec", "version": "0.1.0"}}
    elif m == "describe":
        res = {"triggers": [{"trigger_type": "items", "prompt_fields": ["title", "n"]}], "agents": []}
    elif m == "trigger/schema":
        res = {"schema": {"type": "object"}, "prompt_fields": ["title", "n"]}
    elif m == "trigger/validate":
        res = {"ok": True, "configuration": (params or {}).get("configuration")}
    elif m == "trigger/poll":
        res = poll(params or {})
    else:
        res = {}
    write_frame({"jsonrpc": "2.0", "id": req["id"], "result": res})
    if m == "shutdown":
        break
'''

UVX_SH = r'''#!/bin/sh
# offline uvx/npx stand-in: drop leading options and --from PKG, exec the rest
while [ $# -gt 0 ]; do
  case "$1" in
    --from) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ -x "__VENVBIN__/$1" ]; then p="$1"; shift; exec "__VENVBIN__/$p" "$@"; fi
exec "$@"
'''

AGENT_PY = r'''#!/usr/bin/env python3
import json, os, subprocess, sys, time
LOG = __LOG__
EXITF = __EXITF__
stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
try:
    br = subprocess.run(["git", "-C", os.getcwd(), "rev-parse", "--abbrev-ref", "HEAD"],
                        capture_output=True, text=True).stdout.strip()
    top = subprocess.run(["git", "-C", os.getcwd(), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "-C", os.getcwd(), "log", "-1", "--format=%s"],
                          capture_output=True, text=True).stdout.strip()
except Exception:
    br = top = head = ""
BASE_ENV = {"HOME", "PATH", "LANG", "GIT_CONFIG_NOSYSTEM", "TERM", "PWD", "SHLVL", "_", "OLDPWD", "LC_CTYPE"}
entry = {"program": os.path.basename(sys.argv[0]), "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:],
         "cwd": os.getcwd(), "branch": br, "toplevel": top, "head_subject": head, "stdin": stdin,
         "env_added": {k: v for k, v in sorted(os.environ.items()) if k not in BASE_ENV},
         "time": time.time()}
with open(LOG, "a") as f:
    f.write(json.dumps(entry) + "\n")
if sys.argv[1:] == ["--version"]:
    print("1.2.3")
    sys.exit(0)
if os.path.exists(EXITF + ".sleep"):
    time.sleep(float(open(EXITF + ".sleep").read()))
print(json.dumps({"type": "system", "subtype": "init", "session_id": "s"}))
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done", "session_id": "s"}))
sys.stdout.flush()
code = int(open(EXITF).read()) if os.path.exists(EXITF) else 0
if os.environ.get("REC_AGENT_COMMIT"):
    open("AGENT_FILE", "w").write("x\n")
    subprocess.run(["git", "add", "AGENT_FILE"])
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@e", "commit", "-q", "-m", "agent commit"])
    open("DIRTY", "w").write("y\n")
if "FAIL" in " ".join(sys.argv[1:]):
    code = 3
sys.exit(code)
'''

AGENTS = ["claude", "codex", "gemini", "agent", "cursor-agent", "copilot", "kilo", "opencode", "pi", "qwen"]


def setup_workdir():
    global W, HOME, BIN, EXT_LOG, AGENT_LOG, SETUP_LOG
    W = os.path.realpath(tempfile.mkdtemp(prefix="curu-ref-"))
    HOME = os.path.join(W, "home")
    BIN = os.path.join(W, "bin")
    EXT_LOG = os.path.join(W, "ext.log")
    AGENT_LOG = os.path.join(W, "agent.log")
    SETUP_LOG = os.path.join(W, "setup.log")
    os.makedirs(HOME)
    os.makedirs(BIN)
    with open(os.path.join(W, "rec_ext.py"), "w") as f:
        f.write(EXT_PY.replace("__LOG__", repr(EXT_LOG)))
    for name in ("uvx", "npx"):
        p = os.path.join(BIN, name)
        with open(p, "w") as f:
            f.write(UVX_SH.replace("__VENVBIN__", os.path.join(VENV, "bin")))
        os.chmod(p, 0o755)
    for name in AGENTS:
        p = os.path.join(BIN, name)
        with open(p, "w") as f:
            f.write(AGENT_PY.replace("__LOG__", repr(AGENT_LOG))
                    .replace("__EXITF__", repr(os.path.join(W, "agent_exit"))))
        os.chmod(p, 0o755)
    make_remote()


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=genv()).stdout


def genv():
    e = dict(os.environ)
    e.update({"HOME": HOME, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
              "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_NOSYSTEM": "1"})
    return e


def make_remote():
    bare = os.path.join(W, "remotes", "acme", "widgets.git")
    if os.path.exists(bare):
        shutil.rmtree(bare)
    os.makedirs(bare)
    git("init", "-q", "--bare", "-b", "main", bare)
    src = os.path.join(W, "remotes", "src")
    if os.path.exists(src):
        shutil.rmtree(src)
    git("init", "-q", "-b", "main", src)
    with open(os.path.join(src, "README"), "w") as f:
        f.write("hello\n")
    os.makedirs(os.path.join(src, "scripts"))
    sp = os.path.join(src, "scripts", "setup.sh")
    with open(sp, "w") as f:
        f.write("#!/bin/sh\n"
                "printf '{\"cwd\": \"%s\", \"args\": \"%s\", \"env\": \"%s\"}\\n' \"$PWD\" \"$*\" "
                "\"$(env | grep -i '^curupira' | tr '\\n' ' ')\" >> " + SETUP_LOG + "\n"
                "echo setup-stdout; echo setup-stderr >&2\n"
                "touch setup-was-here\n")
    os.chmod(sp, 0o755)
    fp = os.path.join(src, "scripts", "fail.sh")
    with open(fp, "w") as f:
        f.write("#!/bin/sh\necho failing-setup-out; echo failing-setup-err >&2\nexit 4\n")
    os.chmod(fp, 0o755)
    git("add", "-A", cwd=src)
    git("commit", "-q", "-m", "first commit", cwd=src)
    git("remote", "add", "origin", bare, cwd=src)
    git("push", "-q", "origin", "main", cwd=src)
    # a second branch "dev" on the remote
    git("push", "-q", "origin", "main:dev", cwd=src)
    return bare


def push_new_commit(msg):
    src = os.path.join(W, "remotes", "src")
    with open(os.path.join(src, "NEW"), "a") as f:
        f.write(msg + "\n")
    git("add", "-A", cwd=src)
    git("commit", "-q", "-m", msg, cwd=src)
    git("push", "-q", "origin", "main", cwd=src)


def sanitize(s):
    if s is None:
        return s
    if isinstance(s, str):
        s = s.replace(HOME, "<home>").replace(W, "<workdir>").replace(VENV, "<venv>")
        return s
    if isinstance(s, list):
        return [sanitize(x) for x in s]
    if isinstance(s, dict):
        return {sanitize(k): sanitize(v) for k, v in s.items()}
    return s


def tree(root, maxdepth=5):
    out = []
    if not os.path.exists(root):
        return None
    for dp, dns, fns in os.walk(root):
        rel = os.path.relpath(dp, root)
        depth = 0 if rel == "." else rel.count(os.sep) + 1
        if ".git" in dns:
            dns.remove(".git")
            out.append((rel + "/.git/").lstrip("./") if rel != "." else ".git/")
        if os.path.isfile(os.path.join(dp, ".git")):
            out.append(os.path.join(rel, ".git (file: worktree)"))
        if depth >= maxdepth:
            dns[:] = []
        for d in sorted(dns):
            out.append(os.path.normpath(os.path.join(rel, d)) + "/")
        for fn in sorted(fns):
            if fn == ".git":
                continue
            out.append(os.path.normpath(os.path.join(rel, fn)))
    return sorted(out)


def reset_state(keep_home=False, keep_ws=False):
    for p in (EXT_LOG, AGENT_LOG, SETUP_LOG):
        if os.path.exists(p):
            os.remove(p)
    for fn in os.listdir(W):
        if fn.endswith(".cursor"):
            os.remove(os.path.join(W, fn))
    if not keep_home:
        shutil.rmtree(HOME, ignore_errors=True)
        os.makedirs(HOME)
    if not keep_ws:
        shutil.rmtree(os.path.join(W, "ws"), ignore_errors=True)
        shutil.rmtree(os.path.join(W, "checkouts"), ignore_errors=True)
    ef = os.path.join(W, "agent_exit")
    for p in (ef, ef + ".sleep"):
        if os.path.exists(p):
            os.remove(p)


def read_jsonl(p):
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]


def write_items(name, items):
    p = os.path.join(W, name)
    with open(p, "w") as f:
        json.dump(items, f)
    cur = p + ".cursor"
    if os.path.exists(cur):
        os.remove(cur)
    return p


def fill(config):
    return (config.replace("<workdir>", W).replace("<venv>", VENV).replace("<home>", HOME))


BASE_REPO = '[repositories.demo]\nremote = "file://<workdir>/remotes/acme/widgets.git"\n'
BASE_AGENTS = '[agents.defaults]\nprofile = "stub"\n\n[agents.profiles.stub]\nprovider = "claude"\n'
BASE_PLUGIN = '[plugins.rec]\ntype = "uvx"\nargs = ["<venv>/bin/python", "<workdir>/rec_ext.py"]\n'
BASE_SETTINGS = '[settings]\nworkspace_dir = "<workdir>/ws"\n'


def automation(name="e1", prompt="Item ${n}: ${title}", extra="", items="items.json",
               trigger="rec/items", repository="demo"):
    lines = ["[automations.%s]" % name]
    if trigger is not None:
        lines.append('trigger_type = "%s"' % trigger)
    if repository is not None:
        lines.append('repository = "%s"' % repository)
    if items is not None:
        lines.append('path = "<workdir>/%s"' % items)
    if prompt is not None:
        lines.append("prompt = " + json.dumps(prompt))
    if extra:
        lines.append(extra.rstrip("\n"))
    return "\n".join(lines) + "\n"


def config(settings=BASE_SETTINGS, repo=BASE_REPO, agents=BASE_AGENTS, plugin=BASE_PLUGIN,
           autos=None, tail=""):
    if autos is None:
        autos = automation()
    parts = [p for p in (settings, repo, agents, plugin, autos, tail) if p]
    return "\n".join(parts)


def git_state():
    """Worktrees and branches of every checkout under ws/ and checkouts/."""
    res = {}
    for base in (os.path.join(W, "ws"), os.path.join(W, "checkouts"),
                 os.path.join(HOME, ".curupira", "workspaces")):
        if not os.path.isdir(base):
            continue
        for dp, dns, fns in os.walk(base):
            if ".git" in dns and os.path.isdir(os.path.join(dp, ".git")):
                try:
                    wt = subprocess.run(["git", "-C", dp, "worktree", "list", "--porcelain"],
                                        capture_output=True, text=True, env=genv()).stdout
                    br = subprocess.run(["git", "-C", dp, "branch", "-a", "--format=%(refname)"],
                                        capture_output=True, text=True, env=genv()).stdout
                    head = subprocess.run(["git", "-C", dp, "rev-parse", "--abbrev-ref", "HEAD"],
                                          capture_output=True, text=True, env=genv()).stdout
                    log = subprocess.run(["git", "-C", dp, "log", "--all", "--format=%s"],
                                         capture_output=True, text=True, env=genv()).stdout
                    rem = subprocess.run(["git", "-C", dp, "remote", "-v"],
                                         capture_output=True, text=True, env=genv()).stdout
                except Exception as e:  # noqa
                    wt = br = head = log = rem = str(e)
                res[dp] = {"worktrees": [l for l in wt.splitlines() if l.startswith("worktree ")],
                           "branches": br.split(), "head": head.strip(),
                           "commits_all_refs": log.split("\n")[:-1], "remotes": rem.splitlines()}
                dns[:] = []
    return res


def run(case, conf, args, *, exe=None, cwd=None, timeout=60, stdin=None, env_extra=None,
        keep_home=False, keep_ws=False, items=None, agent_exit=None, interrupt=None,
        config_name="settings.toml", write_config=True, record_ext=True, trees=True,
        during=None, note=None, agent_sleep=None, depends_on_previous=None):
    """Run one case and return its record.

    interrupt: (seconds, signal) to send after a delay (for --watch).
    during: callable(proc) run while the process runs (after start).
    depends_on_previous: whether the case needs the state the previous case left (only used
    to choose what runs with --only/--cases); default: keep_home or keep_ws.
    """
    global CALL_INDEX
    if depends_on_previous is None:
        depends_on_previous = keep_home or keep_ws
    index = CALL_INDEX
    CALL_INDEX += 1
    if PLANNING:
        PLAN.append((case, depends_on_previous))
        return {"case": case, "agent_calls": [], "_skipped": True}
    if NEEDED is not None:
        if index >= len(PLAN) or PLAN[index][0] != case:
            sys.exit("record.py: the cases did not come in the planned order (%r at %d); "
                     "a group must run the same cases every time" % (case, index))
        if index not in NEEDED:
            return {"case": case, "agent_calls": [], "_skipped": True}
    if TIMEOUT_CAP is not None:
        timeout = min(timeout, TIMEOUT_CAP)
    reset_state(keep_home=keep_home, keep_ws=keep_ws)
    if items is not None:
        for name, its in items.items():
            write_items(name, its)
    if agent_exit is not None:
        with open(os.path.join(W, "agent_exit"), "w") as f:
            f.write(str(agent_exit))
    if agent_sleep is not None:
        with open(os.path.join(W, "agent_exit.sleep"), "w") as f:
            f.write(str(agent_sleep))
    cwd = cwd or os.path.join(W, "cwd")
    os.makedirs(cwd, exist_ok=True)
    cpath = os.path.join(cwd, config_name) if not os.path.isabs(config_name) else config_name
    if conf is not None and write_config:
        os.makedirs(os.path.dirname(cpath), exist_ok=True)
        with open(cpath, "w") as f:
            f.write(fill(conf))
    env = {"HOME": HOME, "PATH": BIN + ":" + os.path.dirname(shutil.which("git")) + ":/usr/bin:/bin",
           "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1", "TERM": "dumb"}
    if env_extra:
        env.update({k: fill(v) for k, v in env_extra.items()})
    argv = [exe or HOST] + [fill(a) for a in args]
    t0 = time.time()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    extra = {}
    if during is not None:
        try:
            extra = during(p) or {}
        except Exception as e:  # a host that misbehaves must not stop the whole group
            extra = {"harness_error": "%s: %s" % (type(e).__name__, e)}
    if interrupt is not None:
        delay, sig = interrupt
        time.sleep(delay)
        p.send_signal(sig)
    try:
        out, err = p.communicate(input=stdin, timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        # the whole session: the host's agents or extensions would otherwise keep the pipes open
        kill_session(p.pid)
        out, err = p.communicate()
        rc = "timeout(killed after %ss)" % timeout
    elapsed = round(time.time() - t0, 1)
    rec = {"case": case}
    if note:
        rec["note"] = note
    if conf is not None:
        rec["config"] = sanitize(fill(conf)).split("\n")
        if rec["config"] and rec["config"][-1] == "":
            rec["config"].pop()
    shown = [("curu" if exe == ALIAS else "curupira")] + [sanitize(fill(a)) for a in args]
    rec["command"] = " ".join(shown)
    rec["cwd"] = sanitize(cwd)
    rec["exit_code"] = rc
    rec["elapsed_s"] = elapsed
    rec["stdout"] = sanitize(out).split("\n")
    if rec["stdout"] and rec["stdout"][-1] == "":
        rec["stdout"].pop()
    rec["stderr"] = sanitize(err).split("\n")
    if rec["stderr"] and rec["stderr"][-1] == "":
        rec["stderr"].pop()
    rec.update(sanitize(extra))
    if record_ext:
        reqs = read_jsonl(EXT_LOG)
        pids = []
        for r in reqs:
            if r["pid"] not in pids:
                pids.append(r["pid"])
        rec["ext_requests"] = [dict(process=pids.index(r.pop("pid")) + 1, **sanitize(r)) for r in reqs
                               if r["method"] in ("trigger/validate", "trigger/poll", "trigger/onStarted",
                                                  "trigger/onFinished", "trigger/schema")]
        rec["ext_processes"] = len(pids)
        rec["ext_methods"] = [r["method"] for r in read_jsonl(EXT_LOG)]
    calls = read_jsonl(AGENT_LOG)
    for c in calls:
        c["t_start_s"] = round(c.pop("time") - t0, 1)
        c["cwd_kind"] = classify_cwd(c["cwd"])
    rec["agent_calls"] = sanitize(calls)
    setup = read_jsonl(SETUP_LOG) if os.path.exists(SETUP_LOG) else []
    if setup:
        rec["setup_script_runs"] = sanitize(setup)
    if trees:
        rec["home_tree"] = tree(HOME)
        for name in ("ws", "checkouts"):
            t = tree(os.path.join(W, name))
            if t is not None:
                rec[name + "_tree"] = t
        gs = git_state()
        if gs:
            rec["git_after"] = sanitize(gs)
    reap_session(p.pid, case)
    if VERBOSE:
        print("  %-5s %5.1fs  %s" % (rc, elapsed, case), file=sys.stderr)
    return rec


def kill_session(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def session_members(pgid):
    """Live (not zombie) processes of process group pgid, from /proc."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            pids.append(int(d))
    return pids


def reap_session(pgid, case, grace=2.0):
    """After a case: end what is left of the host's session (it was started with
    start_new_session, so its process group is the host's pid), so that nothing of this case
    writes into the next one.  Only after the record is complete, so it changes no record."""
    t0 = time.time()
    while session_members(pgid):
        if time.time() - t0 >= grace:
            print("record.py: case %r left processes behind (%s); killed them"
                  % (case, " ".join(map(str, session_members(pgid)))), file=sys.stderr)
            kill_session(pgid)
            return
        time.sleep(0.1)


def classify_cwd(cwd):
    if ".worktrees" in cwd:
        return "worktree"
    if cwd.startswith(os.path.join(W, "ws")) or cwd.startswith(os.path.join(W, "checkouts")) \
            or cwd.startswith(os.path.join(HOME, ".curupira", "workspaces")):
        return "checkout (base/shared)"
    return "other"


# ---------------------------------------------------------------- groups

def group_help():
    recs = []
    for exe, nm in ((HOST, "curupira"), (ALIAS, "curu")):
        for args in (["--help"], ["-h"], ["--version"], ["-V"], [], ["help"],
                     ["validate", "--help"], ["run", "--help"], ["tui", "--help"],
                     ["plugins", "--help"], ["plugins", "list", "--help"], ["plugins", "info", "--help"],
                     ["plugins", "install", "--help"], ["plugins", "uninstall", "--help"],
                     ["bogus"], ["run", "--bogus"], ["validate", "--version"]):
            if nm == "curu" and args not in (["--help"], ["--version"], ["run", "--help"], []):
                continue
            r = run("%s %s" % (nm, " ".join(args) or "(no args)"), None, args, exe=exe,
                    record_ext=False, trees=False, timeout=20)
            r.pop("agent_calls", None)
            recs.append(r)
    return recs


def _summ(r, keep_trees=False):
    """Compact a validate record: only the validate/poll params the extension received."""
    reqs = r.pop("ext_requests", [])
    r["ext_validate_configuration"] = [(q["params"] or {}).get("configuration") for q in reqs
                                       if q["method"] == "trigger/validate"][:1]
    polls = [q["params"] for q in reqs if q["method"] == "trigger/poll"]
    if polls:
        r["ext_first_poll"] = polls[0]
    r.pop("ext_methods", None)
    if not keep_trees and "[run" not in r["case"]:
        for k in ("home_tree", "ws_tree", "checkouts_tree", "git_after"):
            r.pop(k, None)
    if not r.get("agent_calls"):
        r.pop("agent_calls", None)
    return r


ONE_ITEM = {"items.json": [{"title": "a", "n": "1"}]}


def V(case, conf, also_run=False, args=None, note=None, **kw):
    """validate; with also_run, a `run --size 1` of the same config after it."""
    out = []
    r = run(case, conf, args or ["validate", "--config", "settings.toml"], items=ONE_ITEM,
            note=note, **kw)
    out.append(_summ(r))
    if also_run:
        r2 = run(case + " [run --size 1]", conf, ["run", "--size", "1", "--config", "settings.toml"],
                 items=ONE_ITEM, timeout=60, **kw)
        r2.pop("config", None)
        out.append(_summ(r2))
    return out


def S(body):
    return '[settings]\nworkspace_dir = "<workdir>/ws"\n' + body + "\n"


def P(body):
    return S("") + "\n[settings.polling]\n" + body + "\n"


def group_validate():
    recs = []
    add = recs.extend
    add(V("baseline", config(), also_run=True))
    # ---- [settings]
    for v in ("0", "1", "4", "-1", '"2"', "1.5"):
        add(V("settings.max_active_tasks = %s" % v, config(settings=S("max_active_tasks = %s" % v)),
              also_run=v in ("0",)))
    for v in ("0", "10", "-1", '"x"'):
        add(V("settings.max_pending_tasks = %s" % v, config(settings=S("max_pending_tasks = %s" % v)),
              also_run=v == "0"))
    add(V("settings.workspace_dir relative", config(settings='[settings]\nworkspace_dir = "rel-ws"\n'),
          also_run=True))
    add(V("settings.workspace_dir ~", config(settings='[settings]\nworkspace_dir = "~/tilde-ws"\n'),
          also_run=True))
    add(V("settings.workspace_dir absent (default)", config(settings=""), also_run=True))
    add(V("settings.workspace_dir = 5", config(settings='[settings]\nworkspace_dir = 5\n')))
    add(V("settings.state_db_path relative", config(settings=S('state_db_path = "state/db.sqlite3"')),
          also_run=True))
    add(V("settings.state_db_path absolute", config(settings=S('state_db_path = "<workdir>/abs-state.sqlite3"')),
          also_run=True))
    add(V("settings.state_db_path ~", config(settings=S('state_db_path = "~/s.sqlite3"'))))
    add(V("settings.state_db_path dir missing parent", config(settings=S('state_db_path = "<workdir>/no/such/dir/s.db"')),
          also_run=True))
    for v in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "WARN", "TRACE", "debug", "Info", "LOUD", "10"):
        lit = v if v == "10" else '"%s"' % v
        add(V("settings.log_level = %s" % lit, config(settings=S("log_level = %s" % lit))))
    for v in ("0", "1", "5", "-1", '"x"', "1.5"):
        add(V("settings.task_timeout_minutes = %s" % v, config(settings=S("task_timeout_minutes = %s" % v))))
    for v in ('"http://localhost:4318/v1/traces"', '"not a url"', '""', '"ftp://x"', "5"):
        add(V("settings.otlp_endpoint = %s" % v, config(settings=S("otlp_endpoint = %s" % v))))
    add(V("settings unknown key", config(settings=S("frobnicate = true"))))
    # ---- [settings.polling]
    for key, vals in (("poll_interval_seconds", ("0", "1", "-1", '"x"', "1.5")),
                      ("batch_size", ("0", "1", "1000", "1001", "-1", '"10"')),
                      ("cron_poll_interval_seconds", ("0", "1", "-1", '"x"'))):
        for v in vals:
            add(V("settings.polling.%s = %s" % (key, v), config(settings=P("%s = %s" % (key, v))),
                  also_run=(key == "batch_size" and v in ("1", "1000"))))
    add(V("settings.polling unknown key", config(settings=P("frobnicate = 1"))))
    # ---- [repositories.<alias>]
    rp = os.path.join("<workdir>", "checkouts", "existing")
    add(V("repositories: remote only", config(), also_run=False))
    add(V("repositories: path only (missing dir)", config(repo='[repositories.demo]\npath = "<workdir>/checkouts/nope"\n'),
          also_run=True))
    add(V("repositories: neither remote nor path", config(repo="[repositories.demo]\n"), also_run=True))
    add(V("repositories: remote + path (missing dir)",
          config(repo=BASE_REPO + 'path = "<workdir>/checkouts/clone-here"\n'), also_run=True))
    add(V("repositories: path relative", config(repo=BASE_REPO + 'path = "rel-checkout"\n'), also_run=True))
    add(V("repositories: remote https github", config(repo='[repositories.demo]\nremote = "https://github.com/acme/api.git"\n')))
    add(V("repositories: remote scp-like", config(repo='[repositories.demo]\nremote = "git@github.com:acme/api.git"\n')))
    add(V("repositories: remote not a url", config(repo='[repositories.demo]\nremote = "not a url"\n')))
    add(V("repositories: remote empty", config(repo='[repositories.demo]\nremote = ""\n')))
    add(V("repositories: setup_script relative", config(repo=BASE_REPO + 'setup_script = "scripts/setup.sh"\n')))
    add(V("repositories: setup_script missing file", config(repo=BASE_REPO + 'setup_script = "scripts/none.sh"\n'),
          also_run=True))
    add(V("repositories: setup_script absolute", config(repo=BASE_REPO + 'setup_script = "/bin/true"\n')))
    add(V("repositories: setup_script with ..", config(repo=BASE_REPO + 'setup_script = "../x.sh"\n')))
    add(V("repositories: setup_script empty", config(repo=BASE_REPO + 'setup_script = ""\n')))
    add(V("repositories: setup_script with args", config(repo=BASE_REPO + 'setup_script = "scripts/setup.sh --fast"\n')))
    add(V("repositories: unknown key", config(repo=BASE_REPO + 'branch = "dev"\n')))
    add(V("repositories: two aliases same path",
          config(repo=BASE_REPO + 'path = "<workdir>/checkouts/same"\n\n[repositories.other]\n'
                 'remote = "file://<workdir>/remotes/acme/widgets.git"\npath = "<workdir>/checkouts/same"\n')))
    add(V("repositories: none at all", config(repo="")))
    add(V("repositories: unused alias with nothing", config(repo=BASE_REPO + "\n[repositories.unused]\n")))
    # ---- [agents.defaults]
    add(V("agents.defaults: profile missing", config(agents='[agents.defaults]\n\n[agents.profiles.stub]\nprovider = "claude"\n'),
          also_run=True))
    add(V("agents.defaults: profile unknown", config(agents='[agents.defaults]\nprofile = "nope"\n\n[agents.profiles.stub]\nprovider = "claude"\n')))
    add(V("agents absent entirely", config(agents=""), also_run=True))
    for tz in ("UTC", "America/Sao_Paulo", "Mars/Base", "utc", "+03:00"):
        add(V("agents.defaults.timezone = %s" % tz,
              config(agents='[agents.defaults]\nprofile = "stub"\ntimezone = "%s"\n\n[agents.profiles.stub]\nprovider = "claude"\n' % tz)))
    add(V("agents.defaults unknown key", config(agents='[agents.defaults]\nprofile = "stub"\nfoo = 1\n\n[agents.profiles.stub]\nprovider = "claude"\n')))
    add(V("agents unknown sub-table", config(agents=BASE_AGENTS + "\n[agents.other]\nx = 1\n")))
    # ---- [agents.profiles.<name>]
    for prov in ("claude", "codex", "cursor", "kilo", "gemini", "copilot", "opencode", "pi", "qwen",
                 "Claude", "bogus"):
        add(V("profile provider = %s" % prov,
              config(agents='[agents.defaults]\nprofile = "p"\n\n[agents.profiles.p]\nprovider = "%s"\n' % prov),
              also_run=True))
    add(V("profile without provider", config(agents='[agents.defaults]\nprofile = "p"\n\n[agents.profiles.p]\nmodel = "m"\n')))
    for key, val in (("model", '"opus"'), ("effort", '"high"'), ("effort", '"bogus"'), ("agent", '"reviewer"'),
                     ("args", '["--foo"]'), ("extra_args", '["--foo"]'), ("command", '"my-claude"'),
                     ("env", '{ FOO = "bar" }'), ("permission_mode", '"acceptEdits"'),
                     ("permissions", '"bypass"'), ("dangerously_skip_permissions", "true"),
                     ("timeout_minutes", "3"), ("frobnicate", "1")):
        add(V("profile %s = %s" % (key, val),
              config(agents='[agents.defaults]\nprofile = "p"\n\n[agents.profiles.p]\nprovider = "claude"\n%s = %s\n' % (key, val)),
              also_run=True))
    for prov in ("codex", "gemini", "opencode"):
        add(V("profile provider = %s with model+effort" % prov,
              config(agents='[agents.defaults]\nprofile = "p"\n\n[agents.profiles.p]\nprovider = "%s"\nmodel = "m1"\neffort = "high"\n' % prov),
              also_run=True))
    # ---- [plugins.<alias>]
    add(V("plugins: extra key env", config(plugin=BASE_PLUGIN + 'env = { A = "b" }\n')))
    add(V("plugins: extra key frobnicate", config(plugin=BASE_PLUGIN + "frobnicate = 1\n")))
    add(V("plugins: args not array", config(plugin='[plugins.rec]\ntype = "uvx"\nargs = "x"\n')))
    add(V("plugins: type missing", config(plugin='[plugins.rec]\nargs = ["<venv>/bin/python", "<workdir>/rec_ext.py"]\n')))
    add(V("plugins: unused plugin that cannot start",
          config(plugin=BASE_PLUGIN + '\n[plugins.broken]\ntype = "uvx"\nargs = ["/no/such/program"]\n')))
    # ---- [automations.<name>]
    add(V("automation trigger_type bare local", config(autos=automation(trigger="items"))))
    add(V("automation trigger_type missing", config(autos=automation(trigger=None))))
    add(V("automation trigger_type unknown local in alias", config(autos=automation(trigger="rec/nope"))))
    add(V("automation trigger_type cron", config(autos=automation(trigger="cron", items=None, extra='schedule = "*/5 * * * *"'))))
    add(V("automation trigger_type cron without schedule", config(autos=automation(trigger="cron", items=None))))
    add(V("automation trigger_type cron bad schedule", config(autos=automation(trigger="cron", items=None, extra='schedule = "every minute"'))))
    add(V("automation repository unknown alias", config(autos=automation(repository="nope"))))
    add(V("automation profile unknown", config(autos=automation(extra='profile = "nope"'))))
    add(V("automation profile known (second profile)",
          config(agents=BASE_AGENTS + '\n[agents.profiles.other]\nprovider = "codex"\n',
                 autos=automation(extra='profile = "other"')), also_run=True))
    add(V("automation checkout = main", config(autos=automation(extra='checkout = "main"')), also_run=True))
    add(V("automation checkout = worktree", config(autos=automation(extra='checkout = "worktree"')), also_run=True))
    add(V("automation checkout = dev", config(autos=automation(extra='checkout = "dev"')), also_run=True))
    add(V("automation prompt missing", config(autos=automation(prompt=None))))
    add(V("automation prompt empty", config(autos=automation(prompt="")), also_run=True))
    add(V("automation prompt whitespace", config(autos=automation(prompt="   "))))
    add(V("automation prompt_file instead of prompt", config(autos=automation(prompt=None, extra='prompt_file = "p.md"'))))
    add(V("automation prompt + prompt_file", config(autos=automation(extra='prompt_file = "p.md"')), also_run=True))
    add(V("automation extra keys (string, int, table, array)",
          config(autos=automation(extra='colour = "red"\nlimit = 3\nlabels = ["x", "y"]\nfilter = { a = 1 }')),
          also_run=True))
    add(V("automation timezone key", config(autos=automation(extra='timezone = "Mars/Base"'))))
    add(V("automation name with dots/odd chars", config(autos=automation(name='"my auto.v2"')), also_run=True))
    add(V("automations: none", config(autos="")))
    add(V("automations: two, same name different case",
          config(autos=automation(name="e1") + "\n" + automation(name="E1"))))
    # ---- other tables
    add(V("[assistant] table", config(tail='\n[assistant]\nprovider = "claude"\nmodel = "x"\nfrobnicate = 1\n')))
    add(V("[assistant] scalar", config(tail='\nassistant = "x"\n')))
    add(V("[environment] table", config(tail='\n[environment]\nFOO = "bar"\nN = 1\n'), also_run=True))
    add(V("[environment] scalar", config(tail='\nenvironment = 5\n')))
    add(V("unknown top-level table", config(tail="\n[frobnicate]\nx = 1\n")))
    add(V("unknown top-level key", 'frobnicate = 1\n\n' + config()))
    add(V("TOML syntax error (unterminated string)", config().replace('prompt = "Item', 'prompt = "Item\n#', 1)))
    add(V("TOML syntax error (missing =)", config() + "\n[automations.e2]\nrepository \"demo\"\n"))
    add(V("TOML duplicate key", config(autos=automation(extra='repository = "demo"'))))
    add(V("TOML duplicate table", config() + "\n" + automation()))
    add(V("empty file", ""))
    add(V("only [settings]", S("")))
    add(V("missing --config file", None, args=["validate", "--config", "nope.toml"]))
    add(V("--config is a directory", None, args=["validate", "--config", "."]))
    return recs

def host_env(extra=None):
    env = {"HOME": HOME, "PATH": BIN + ":" + os.path.dirname(shutil.which("git")) + ":/usr/bin:/bin",
           "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1", "TERM": "dumb"}
    if extra:
        env.update(extra)
    return env


def raw(args, cwd=None, exe=None, timeout=30):
    """Run the host without resetting anything (used while another run is active)."""
    cwd = cwd or os.path.join(W, "cwd")
    if TIMEOUT_CAP is not None:
        timeout = min(timeout, TIMEOUT_CAP)
    t0 = time.time()
    p = subprocess.Popen([exe or HOST] + [fill(a) for a in args], cwd=cwd, env=host_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        kill_session(p.pid)
        out, err = p.communicate()
        rc = "timeout(killed after %ss)" % timeout
    return sanitize({"command": "curupira " + " ".join(args), "exit_code": rc,
                     "elapsed_s": round(time.time() - t0, 1),
                     "stdout": out.splitlines(), "stderr": err.splitlines()})


def wait_for(pred, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.1)
    return False


def compact(r, keep=("ext_requests",)):
    if "ext_requests" not in keep:
        r.pop("ext_requests", None)
    r.pop("ext_methods", None) if "ext_methods" not in keep else None
    return r


THREE = [{"title": "a", "n": "1"}, {"title": "b", "n": "2"}, {"title": "c", "n": "3"}]


def group_commands():
    recs = []
    C = ["--config", "settings.toml"]
    cfg = config()
    recs.append(compact(run("run drain, 3 items", cfg, ["run"] + C, items={"items.json": THREE}),
                        keep=("ext_methods",)))
    recs.append(compact(run("run drain, no items", cfg, ["run"] + C, items={"items.json": []}),
                        keep=("ext_methods",)))
    recs.append(compact(run("run, agent exits 3", cfg, ["run"] + C, items={"items.json": THREE[:1]},
                            agent_exit=3), keep=("ext_requests", "ext_methods")))
    recs.append(compact(run("run, 2nd of 3 items fails (prompt contains FAIL)", cfg, ["run"] + C,
                            items={"items.json": [THREE[0], {"title": "FAIL", "n": "2"}, THREE[2]]})))
    for n in ("1", "2", "0", "-1", "x"):
        recs.append(compact(run("run --size %s, 3 items" % n, cfg, ["run", "--size", n] + C,
                                items={"items.json": THREE})))
    recs.append(compact(run("run --size 2 --watch", cfg, ["run", "--size", "2", "--watch"] + C,
                            items={"items.json": THREE}, timeout=10, interrupt=(4, signal.SIGINT))))
    recs.append(compact(run("run --size 2 --dry-run", cfg, ["run", "--size", "2", "--dry-run"] + C,
                            items={"items.json": THREE})))
    recs.append(compact(run("run --watch --dry-run", cfg, ["run", "--watch", "--dry-run"] + C,
                            items={"items.json": THREE}, timeout=10, interrupt=(4, signal.SIGINT))))
    recs.append(compact(run("run --dry-run, 3 items", cfg, ["run", "--dry-run"] + C, items={"items.json": THREE}),
                        keep=("ext_requests", "ext_methods")))
    recs.append(compact(run("run --dry-run, no items", cfg, ["run", "--dry-run"] + C, items={"items.json": []})))
    recs.append(compact(run("run --dry-run, task prompt multi-line", config(autos=automation(prompt="L1 ${title}\nL2\n")),
                            ["run", "--dry-run"] + C, items={"items.json": THREE})))
    wcfg = config(settings=S("") + "\n[settings.polling]\npoll_interval_seconds = 1\n")
    for sig, nm in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
        recs.append(compact(run("run --watch then %s after 4 s (poll_interval_seconds = 1)" % nm, wcfg,
                                ["run", "--watch"] + C, items={"items.json": THREE[:2]}, timeout=15,
                                interrupt=(4, sig)), keep=("ext_methods",)))
    recs.append(compact(run("run --watch, SIGINT while the agent runs (agent sleeps 5 s)", wcfg,
                            ["run", "--watch"] + C, items={"items.json": THREE[:1]}, timeout=20,
                            agent_sleep=5, interrupt=(2.5, signal.SIGINT))))
    recs.append(compact(run("run (drain), SIGINT while the agent runs (agent sleeps 5 s)", cfg,
                            ["run"] + C, items={"items.json": THREE[:2]}, timeout=20,
                            agent_sleep=5, interrupt=(2.5, signal.SIGINT))))
    # watch: default poll interval, appended item
    def append_later(p):
        time.sleep(3)
        with open(os.path.join(W, "items.json"), "w") as f:
            json.dump(THREE, f)
        return {"during": "3 s after start, items.json grew from 1 to 3 items"}
    recs.append(compact(run("run --watch, items appended after 3 s, SIGINT after 8 s (poll_interval_seconds = 1)",
                            wcfg, ["run", "--watch"] + C, items={"items.json": THREE[:1]}, timeout=20,
                            during=append_later, interrupt=(5, signal.SIGINT))))
    # log level
    for args in (["--log-level", "DEBUG", "run"] + C, ["run", "--log-level", "DEBUG"] + C,
                 ["run", "--log-level", "debug"] + C, ["run", "--log-level", "WARN"] + C,
                 ["run", "--log-level", "CRITICAL"] + C):
        recs.append(compact(run("log level: " + " ".join(args), cfg, args, items={"items.json": THREE[:1]})))
    recs.append(compact(run("settings.log_level = DEBUG, run", config(settings=S('log_level = "DEBUG"')),
                            ["run"] + C, items={"items.json": THREE[:1]})))
    # default config discovery
    def disc(case, files, args=("validate",), cwd_name="cwd-disc"):
        cwd = os.path.join(W, cwd_name)
        shutil.rmtree(cwd, ignore_errors=True)
        os.makedirs(cwd)
        reset_state()
        for rel, text in files.items():
            p = os.path.join(HOME, rel[2:]) if rel.startswith("~/") else os.path.join(cwd, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(fill(text))
        r = run(case, None, list(args), cwd=cwd, keep_home=True, items={"items.json": THREE[:1]},
                depends_on_previous=False)
        r["files_present_before"] = list(files)
        return compact(r)
    bad = "this is not toml ="
    recs.append(disc("no --config, nothing anywhere", {}))
    recs.append(disc("no --config, nothing anywhere, run", {}, args=("run",)))
    recs.append(disc("no --config, only ./curupira.toml (valid)", {"curupira.toml": cfg}))
    recs.append(disc("no --config, only ./settings.toml (valid)", {"settings.toml": cfg}))
    recs.append(disc("no --config, only ./.curupira/settings.toml (valid)", {".curupira/settings.toml": cfg}))
    recs.append(disc("no --config, only ~/.curupira/settings.toml (valid)", {"~/.curupira/settings.toml": cfg}))
    recs.append(disc("no --config, ~/.curupira/settings.toml invalid and ./curupira.toml valid",
                     {"~/.curupira/settings.toml": bad, "curupira.toml": cfg}))
    recs.append(disc("no --config, ~/.curupira/curupira.toml (valid)", {"~/.curupira/curupira.toml": cfg}))
    recs.append(disc("CURUPIRA_CONFIG env? (not a documented flag; only ~ file invalid)",
                     {"~/.curupira/settings.toml": bad}, args=("validate",)))
    # relative paths resolve against the config's folder
    sub = config(settings='[settings]\nworkspace_dir = "rel-ws"\nstate_db_path = "rel-state/s.sqlite3"\n',
                 autos=automation(items="items.json"))
    recs.append(compact(run("config in a sub-folder with relative workspace_dir/state_db_path, run from elsewhere",
                            sub, ["run", "--config", "sub/settings.toml"], config_name="sub/settings.toml",
                            items={"items.json": THREE[:1]})))
    r = recs[-1]
    r["cwd_tree_after"] = tree(os.path.join(W, "cwd"))
    # curu alias
    recs.append(compact(run("curu validate", cfg, ["validate"] + C, exe=ALIAS, items={"items.json": THREE[:1]})))
    recs.append(compact(run("curu run", cfg, ["run"] + C, exe=ALIAS, items={"items.json": THREE[:1]})))
    # dispatch lock: a second command while a run is active
    def second(p):
        ok = wait_for(lambda: os.path.exists(AGENT_LOG))
        res = {"agent_started_before_second_commands": ok}
        lock = os.path.join(HOME, ".curupira", "dispatch.lock")
        res["lock_file_while_running"] = {"exists": os.path.exists(lock),
                                          "content": open(lock).read() if os.path.exists(lock) else None}
        res["second_run"] = raw(["run"] + C)
        res["second_run_watch"] = raw(["run", "--watch"] + C, timeout=10)
        res["second_validate"] = raw(["validate"] + C)
        res["second_dry_run"] = raw(["run", "--dry-run"] + C)
        return res
    r = compact(run("second commands while a run is active (agent sleeps 5 s)", cfg, ["run"] + C,
                    items={"items.json": THREE[:1]}, agent_sleep=5, during=second, timeout=30))
    lock = os.path.join(HOME, ".curupira", "dispatch.lock")
    r["lock_file_after"] = {"exists": os.path.exists(lock), "content": open(lock).read() if os.path.exists(lock) else None}
    recs.append(r)
    # stale lock: a lock file left behind
    reset_state()
    os.makedirs(os.path.join(HOME, ".curupira"), exist_ok=True)
    with open(lock, "w") as f:
        f.write("12345\n")
    recs.append(compact(run("pre-existing dispatch.lock file (no process holds it)", cfg, ["run"] + C,
                            keep_home=True, items={"items.json": THREE[:1]}, depends_on_previous=False)))
    # concurrency
    recs.append(compact(run("max_active_tasks = 2, 3 items, agent sleeps 2 s",
                            config(settings=S("max_active_tasks = 2")), ["run"] + C,
                            items={"items.json": THREE}, agent_sleep=2, timeout=60)))
    recs.append(compact(run("max_active_tasks = 1 (default), 3 items, agent sleeps 1 s", cfg, ["run"] + C,
                            items={"items.json": THREE}, agent_sleep=1, timeout=60)))
    recs.append(compact(run("two automations, same item contents (separate files), max_active_tasks = 1",
                            config(autos=automation("e1") + "\n" + automation("e2", items="items2.json")), ["run"] + C,
                            items={"items.json": THREE[:2], "items2.json": THREE[:2]}), keep=("ext_methods",)))
    six = [{"title": c, "n": str(i)} for i, c in enumerate("abcdef", 1)]
    for s in ("", "max_active_tasks = 2", "max_pending_tasks = 5", "max_active_tasks = 2\nmax_pending_tasks = 1"):
        recs.append(compact(run("extension persisting its cursor across processes (REC_MODE=persist), 6 items, [settings] %r" % s,
                                config(settings=S(s)), ["run"] + C, items={"items.json": six},
                                env_extra={"REC_MODE": "persist"},
                                note="the extension hands every item out once, across processes; "
                                     "items polled but not taken in a cycle are never seen again"),
                            keep=("ext_methods",)))
    recs.append(compact(run("duplicate items in one feed", cfg, ["run"] + C,
                            items={"items.json": [THREE[0], THREE[0], THREE[1]]})))
    if os.environ.get("RECORD_SLOW"):
        recs.append(compact(run("task_timeout_minutes = 1, agent sleeps 75 s",
                                config(settings=S("task_timeout_minutes = 1")), ["run"] + C,
                                items={"items.json": THREE[:1]}, agent_sleep=75, timeout=150)))
    return recs


def group_repositories():
    recs = []
    C = ["--config", "settings.toml"]
    one = {"items.json": [{"title": "a", "n": "1"}]}
    two = {"items.json": [{"title": "a", "n": "1"}, {"title": "b", "n": "2"}]}
    cfg = config(autos=automation(prompt="Item ${n}: ${title} repo=${repository} auto=${automation}"))
    recs.append(run("remote clone into workspace_dir/<alias>, 2 tasks", cfg, ["run"] + C, items=two))
    recs.append(run("workspace_dir absent: default ~/.curupira/workspaces", config(settings="", autos=automation()),
                    ["run"] + C, items=one))
    # remote + path that does not exist
    recs.append(run("remote + path (missing): cloned into path",
                    config(repo=BASE_REPO + 'path = "<workdir>/checkouts/clone-here"\n'), ["run"] + C, items=one))
    # path exists as a git checkout with a local commit; remote set
    def prep_existing(with_git=True, dirty=False):
        d = os.path.join(W, "checkouts", "existing")
        shutil.rmtree(os.path.join(W, "checkouts"), ignore_errors=True)
        if with_git:
            git("clone", "-q", os.path.join(W, "remotes", "acme", "widgets.git"), d)
            with open(os.path.join(d, "LOCAL"), "w") as f:
                f.write("x\n")
            git("add", "-A", cwd=d)
            git("commit", "-q", "-m", "local-only commit", cwd=d)
            if dirty:
                with open(os.path.join(d, "UNCOMMITTED"), "w") as f:
                    f.write("y\n")
        else:
            os.makedirs(d)
            with open(os.path.join(d, "plain-file"), "w") as f:
                f.write("z\n")
    ex_repo = BASE_REPO + 'path = "<workdir>/checkouts/existing"\nsetup_script = "scripts/setup.sh"\n'
    prep_existing()
    recs.append(run("path exists (git clone with a local commit): used as is, setup not run",
                    config(repo=ex_repo), ["run"] + C, items=one, keep_ws=True,
                    note="<workdir>/checkouts/existing was cloned by the recorder and got a local commit 'local-only commit'"))
    prep_existing()
    recs.append(run("path exists + checkout = main",
                    config(repo=ex_repo, autos=automation(extra='checkout = "main"')), ["run"] + C, items=one,
                    keep_ws=True, note="<workdir>/checkouts/existing prepared as above"))
    prep_existing(with_git=False)
    recs.append(run("path exists but is not a git repository",
                    config(repo=ex_repo), ["run"] + C, items=one, keep_ws=True))
    # setup_script
    scfg = config(repo=BASE_REPO + 'setup_script = "scripts/setup.sh"\n')
    recs.append(run("setup_script on fresh clone, 2 tasks", scfg, ["run"] + C, items=two))
    recs.append(run("setup_script: second run on the existing clone", scfg, ["run"] + C, items=one, keep_ws=True))
    recs.append(run("setup_script fails (exit 4) on fresh clone", config(repo=BASE_REPO + 'setup_script = "scripts/fail.sh"\n'),
                    ["run"] + C, items=two))
    recs.append(run("setup_script fails, run again (clone removed?)", config(repo=BASE_REPO + 'setup_script = "scripts/fail.sh"\n'),
                    ["run"] + C, items=one, keep_ws=True))
    recs.append(run("setup_script with checkout = main", config(repo=BASE_REPO + 'setup_script = "scripts/setup.sh"\n',
                                                            autos=automation(extra='checkout = "main"')),
                    ["run"] + C, items=one))
    recs.append(run("setup_script with arguments in the string", config(repo=BASE_REPO + 'setup_script = "scripts/setup.sh --fast"\n'),
                    ["run"] + C, items=one))
    recs.append(run("dry-run with setup_script: nothing cloned", scfg, ["run", "--dry-run"] + C, items=one))
    # fetch before tasks
    recs.append(run("fetch: run 1 (before a new commit is pushed)", cfg, ["run"] + C, items=one))
    push_new_commit("second commit")
    recs.append(run("fetch: run 2 after 'second commit' was pushed to the bare remote", cfg, ["run"] + C, items=one,
                    keep_ws=True))
    mcfg = config(autos=automation(extra='checkout = "main"'))
    make_remote()
    recs.append(run("checkout = main: run 1", mcfg, ["run"] + C, items=two))
    push_new_commit("second commit")
    recs.append(run("checkout = main: run 2 after 'second commit' was pushed", mcfg, ["run"] + C, items=one,
                    keep_ws=True))
    make_remote()
    recs.append(run("checkout = dev", config(autos=automation(extra='checkout = "dev"')), ["run"] + C, items=one))
    recs.append(run("failed task: worktree/branch kept?", cfg, ["run"] + C, items=one, agent_exit=3))
    recs.append(run("agent leaves a commit and a dirty file in its worktree",
                    cfg.replace("prompt = ", "prompt = ") , ["run"] + C, items=one,
                    env_extra={"REC_AGENT_COMMIT": "1"}))
    recs.append(run("two automations, trigger type with slash, worktree layout",
                    config(autos=automation("alpha") + "\n" + automation("beta", items="items2.json")), ["run"] + C,
                    items={"items.json": [{"title": "a", "n": "1"}], "items2.json": [{"title": "a", "n": "1"}]}))
    # ${repository} for different remotes (dry-run: no clone)
    for rem in ("https://github.com/acme/api.git", "https://github.com/acme/api", "git@github.com:acme/api.git",
                "ssh://git@example.com:2222/group/sub/proj.git", "file:///srv/git/widgets.git", "not a url",
                "https://gitlab.com/g/sub/proj.git/"):
        r = run("${repository} with remote = %s (dry-run)" % rem,
                config(repo='[repositories.demo]\nremote = "%s"\n' % rem,
                       autos=automation(prompt="repo=${repository} auto=${automation} jinja={{ repository }}")),
                ["run", "--dry-run"] + C, items=one, trees=False)
        r.pop("ext_requests", None)
        r.pop("ext_methods", None)
        recs.append(r)
    for r in recs:
        r.pop("ext_methods", None)
        reqs = r.pop("ext_requests", None) or []
        ap = [q["params"] for q in reqs if q["method"] == "trigger/poll"][:1]
        if ap:
            r["ext_first_poll"] = ap[0]
    return recs


def group_prompts():
    recs = []
    C = ["--config", "settings.toml"]
    base_item = {"title": "hello world", "n": "1"}

    def P(case, prompt, item=None, mode="dry-run", extra=""):
        its = {"items.json": [item or base_item]}
        cfg = config(autos=automation(prompt=prompt, extra=extra))
        out = []
        modes = ["validate", "dry-run", "run"] if mode == "all" else [mode]
        for m in modes:
            args = {"validate": ["validate"], "dry-run": ["run", "--dry-run"], "run": ["run"]}[m] + C
            r = run("%s [%s]" % (case, m), cfg, args, items=its, trees=False)
            r["prompt"] = prompt
            r["item_values"] = item or base_item
            for k in ("ext_requests", "ext_methods", "ext_processes", "home_tree"):
                r.pop(k, None)
            if m != modes[0]:
                r.pop("config", None)
            if m == "run":
                r["agent_prompts"] = [c["argv"][-1] for c in r.pop("agent_calls")]
            else:
                r.pop("agent_calls", None)
            out.append(r)
        return out

    add = recs.extend
    add(P("plain ${key}", "Item ${n}: ${title}", mode="all"))
    add(P("jinja filter upper", "{{ title | upper }}", mode="all"))
    add(P("jinja if/else (n == '1')", '{% if n == "1" %}one{% else %}other{% endif %}'))
    add(P("jinja if/else (n == '2')", '{% if n == "1" %}one{% else %}other{% endif %}', item={"title": "t", "n": "2"}))
    add(P("jinja if n == 1 (int compare)", "{% if n == 1 %}int-equal{% else %}not-int-equal{% endif %}"))
    add(P("jinja undefined variable", "[{{ undefined_var }}]", mode="all"))
    add(P("jinja undefined attribute", "[{{ undefined_var.attr }}]", mode="all"))
    add(P("jinja undefined in if", "[{% if undefined_var %}yes{% else %}no{% endif %}]"))
    add(P("jinja default filter", "[{{ undefined_var | default('dflt') }}]"))
    add(P("jinja syntax error: unclosed {{", "Title: {{ title ", mode="all"))
    add(P("jinja syntax error: unclosed {% if %}", "{% if n %}x", mode="all"))
    add(P("jinja syntax error on line 3", "line1\nline2\n{{ title | }}", mode="all"))
    add(P("jinja unknown filter", "{{ title | nosuchfilter }}", mode="all"))
    add(P("jinja expression {{ 7*7 }} in the prompt", "{{ 7*7 }}"))
    add(P("order: {{ \"${title}\" }}", '{{ "${title}" }}', mode="all"))
    add(P("order: jinja builds ${title} by concatenation", '{{ "${" ~ "title}" }}', mode="all"))
    add(P("order: jinja raw block around ${title}", "{% raw %}${title} {{ title }}{% endraw %}"))
    add(P("order: ${n} inside a jinja if test", '{% if "${n}" == "1" %}subst-first{% else %}jinja-first{% endif %}'))
    add(P("value is jinja: ${title} with title = {{ 7*7 }}", "T=${title}", item={"title": "{{ 7*7 }}", "n": "1"},
          mode="all"))
    add(P("value is jinja: {{ title }} with title = {{ 7*7 }}", "T={{ title }}", item={"title": "{{ 7*7 }}", "n": "1"}))
    add(P("value is a jinja statement: ${title} with {% if true %}yes{% endif %}", "T=${title}",
          item={"title": "{% if true %}yes{% endif %}", "n": "1"}))
    add(P("value is broken jinja: ${title} with '{{ oops'", "T=${title}", item={"title": "{{ oops", "n": "1"},
          mode="all"))
    add(P("value contains ${n}: ${title} with title = 'see ${n}'", "T=${title}", item={"title": "see ${n}", "n": "1"}))
    add(P("value contains ${n}: {{ title }} with title = 'see ${n}'", "T={{ title }}", item={"title": "see ${n}", "n": "1"}))
    add(P("${missing}", "[${missing}] [${title}]", mode="all"))
    add(P("${ title } with spaces", "[${ title }]"))
    add(P("$title without braces", "[$title]"))
    add(P("$${title} (escape?)", "[$${title}]"))
    add(P("\\${title} (backslash)", "[\\${title}]"))
    add(P("${title:-dflt} (shell default syntax)", "[${title:-dflt}]"))
    add(P("${repository} ${automation} and {{ repository }} {{ automation }}",
          "${repository} ${automation} | {{ repository }} {{ automation }}", mode="all"))
    for var in ("now", "values", "item", "task", "trigger_type", "env", "profile", "prompt", "settings",
                "task_id", "id", "loop", "range", "namespace", "lipsum", "dict", "self"):
        add(P("jinja sees {{ %s }}?" % var, "[{{ %s }}]" % var))
    add(P("jinja for loop over a literal", "{% for x in [1, 2, 3] %}{{ x }},{% endfor %}"))
    add(P("jinja for loop over a string value", "{% for c in title %}{{ c }}.{% endfor %}"))
    add(P("jinja set", "{% set y = title ~ '!' %}{{ y }}"))
    add(P("jinja whitespace control", "a\n{%- if true -%}\n b \n{%- endif -%}\nc"))
    add(P("jinja comment", "x{# a comment #}y"))
    add(P("jinja autoescape? value with <b>&", "{{ title }} | ${title}", item={"title": "<b>&\"'", "n": "1"}))
    add(P("jinja n|int + 1", "{{ n | int + 1 }}"))
    add(P("jinja trailing newline kept?", "line\n", mode="run"))
    add(P("jinja filters: title, length, replace, trim, lower",
          "{{ title | title }}|{{ title | length }}|{{ title | replace('o', '0') }}|{{ '  x ' | trim }}|{{ 'AB' | lower }}"))
    add(P("key with dash: ${issue-number} and {{ issue-number }}", "[${issue-number}] [{{ issue-number }}]",
          item={"issue-number": "42", "title": "t", "n": "1"}))
    add(P("key with dot: ${a.b}", "[${a.b}]", item={"a.b": "dotted", "title": "t", "n": "1"}))
    add(P("unicode value", "${title} {{ title }}", item={"title": "ação ☃", "n": "1"}, mode="run"))
    add(P("value with newline", "[${title}]", item={"title": "l1\nl2", "n": "1"}, mode="run"))
    add(P("empty prompt", "", mode="run"))
    add(P("prompt with leading dash", "--not-a-flag ${title}", mode="run"))
    add(P("item lacks declared field n: {{ n }}", "[{{ n }}]", item={"title": "t"}, mode="all"))
    add(P("item lacks declared field n: ${n}", "[${n}]", item={"title": "t"}, mode="all"))
    add(P("item lacks n: {{ n | default('none') }}", "[{{ n | default('none') }}]", item={"title": "t"}))
    add(P("item has undeclared key extra: ${extra}", "[${extra}]", item={"title": "t", "n": "1", "extra": "X"}, mode="all"))
    add(P("item has undeclared key extra: {{ extra }}", "[{{ extra }}]", item={"title": "t", "n": "1", "extra": "X"}))
    add(P("internal name: {{ _fields['title'] }}", "[{{ _fields['title'] }}]"))
    add(P("internal name: {{ _fields }}", "[{{ _fields }}]"))
    with open(os.path.join(W, "p.md"), "w") as f:
        f.write("FROM PROMPT FILE ${title}\n")
    add(P("prompt_file beside prompt", "inline ${title}", extra='prompt_file = "<workdir>/p.md"', mode="all"))
    return recs


def group_plugins():
    """`plugins list | info | install | uninstall`: what each prints, exits with and writes
    under <home>/.curupira/extensions/ (the files' text, as `installed`), in order: most
    cases keep the home the case before left."""
    recs = []
    ext_dir = os.path.join(HOME, ".curupira", "extensions")

    def installed():
        out = {}
        if os.path.isdir(ext_dir):
            for dp, _, fns in os.walk(ext_dir):
                for fn in sorted(fns):
                    path = os.path.join(dp, fn)
                    with open(path, errors="replace") as f:
                        out[os.path.relpath(path, HOME)] = f.read().split("\n")
        return sanitize(out)

    def P(case, args, keep=True, stdin=None, conf=None, prepare=None):
        if prepare is not None and not PLANNING:
            prepare()
        r = run(case, conf, ["plugins"] + args, keep_home=keep, stdin=stdin, record_ext=False,
                trees=False, timeout=120, write_config=conf is not None)
        if not r.get("_skipped"):
            r.pop("agent_calls", None)
            r["installed"] = installed()
        recs.append(r)

    # An npm package's stand-in: `npx --yes demo-ext@1.0.0 --curupira-print-manifest` runs the
    # program `demo-ext@1.0.0` from <workdir>/bin (the npx stand-in drops the options).
    npm_manifest = ('manifest_version = 1\nname = "demo-ext"\nversion = "1.0.0"\nprotocol_version = 2\n'
                    'runtime = "node"\nkind = "trigger"\ntrigger_types = ["demo"]\n\n[launch]\n'
                    'type = "npx"\npackage = "demo-ext"\nexecutable = "demo-ext"\n\n[package]\n'
                    'source = "npm"\nname = "demo-ext"\nversion = "1.0.0"\n')
    folder_manifest = ('manifest_version = 1\nname = "local-ext"\nversion = "0.2.0"\nprotocol_version = 2\n'
                       'runtime = "python"\nkind = "trigger"\ntrigger_types = ["items", "other"]\n'
                       'description = "A folder extension"\n\n[launch]\ntype = "executable"\n'
                       'program = "python3"\nargs = ["ext.py"]\n')

    def make_stand_ins():
        p = os.path.join(BIN, "demo-ext@1.0.0")
        with open(p, "w") as f:
            f.write("#!/bin/sh\ncat <<'EOF'\n" + npm_manifest + "EOF\n")
        os.chmod(p, 0o755)
        for name, text in (("local-ext", folder_manifest),
                           ("bad-ext", 'manifest_version = 1\nname = "bad-ext"\nversion = "x"\n')):
            d = os.path.join(W, "folders", name)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "curupira-extension.toml"), "w") as f:
                f.write(text)
        os.makedirs(os.path.join(W, "folders", "empty"), exist_ok=True)

    P("list, nothing installed, no config", ["list"], keep=False, prepare=make_stand_ins)
    P("install pip:curupira-plugins==0.1.0 --yes", ["install", "pip:curupira-plugins==0.1.0", "--yes"])
    P("list after installing curupira-plugins", ["list"])
    P("info curupira-plugins", ["info", "curupira-plugins"])
    P("info of a name not installed", ["info", "nope"])
    P("install the same again --yes", ["install", "pip:curupira-plugins==0.1.0", "--yes"])
    P("uninstall curupira-plugins", ["uninstall", "curupira-plugins"])
    P("uninstall again", ["uninstall", "curupira-plugins"])
    P("install without --yes, end of input", ["install", "pip:curupira-plugins==0.1.0"], stdin="")
    P("install without --yes, answer n", ["install", "pip:curupira-plugins==0.1.0"], stdin="n\n")
    P("install without --yes, answer yes", ["install", "pip:curupira-plugins==0.1.0"], stdin="yes\n")
    P("uninstall after yes", ["uninstall", "curupira-plugins"])
    P("install without --yes, answer Y", ["install", "pip:curupira-plugins==0.1.0"], stdin="Y\n")
    P("uninstall after Y", ["uninstall", "curupira-plugins"])
    P("install without --yes, answer y", ["install", "pip:curupira-plugins==0.1.0"], stdin="y\n")
    P("install pip without a version --yes", ["install", "pip:curupira-plugins", "--yes"])
    P("install pip of a package that is not there", ["install", "pip:no-such-package-xyz==1.0", "--yes"])
    P("install npm:demo-ext@1.0.0 --yes", ["install", "npm:demo-ext@1.0.0", "--yes"])
    P("install path: absolute --yes", ["install", "path:<workdir>/folders/local-ext", "--yes"])
    P("install path: relative --yes", ["install", "path:../folders/local-ext", "--yes"])
    P("install path: an invalid manifest", ["install", "path:<workdir>/folders/bad-ext", "--yes"])
    P("install path: a folder without a manifest", ["install", "path:<workdir>/folders/empty", "--yes"])
    P("install path: a folder that does not exist", ["install", "path:<workdir>/folders/nope", "--yes"])
    P("install an unknown source kind", ["install", "git:https://example.invalid/x", "--yes"])
    P("install without a source kind", ["install", "curupira-plugins", "--yes"])
    P("list with three installed", ["list"])
    P("list with three installed and a config with a plugin", ["list", "--config", "settings.toml"],
      conf=config())
    P("info local-ext", ["info", "local-ext"])
    P("uninstall demo-ext", ["uninstall", "demo-ext"])
    P("uninstall local-ext", ["uninstall", "local-ext"])
    return recs


def cron_state():
    """The reference's cron table (<home>/.curupira/state.sqlite3 `cron_schedules`), one dict a
    row; a replayed host has none (an empty list)."""
    import sqlite3
    path = os.path.join(HOME, ".curupira", "state.sqlite3")
    if not os.path.exists(path):
        return []
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        con.row_factory = sqlite3.Row
        rows = [dict(r) for r in con.execute("SELECT * FROM cron_schedules ORDER BY automation_id")]
        con.close()
    except sqlite3.Error:
        return []
    return rows


def until_second(second):
    """Sleeps until the wall clock's second-of-minute is `second` (not while planning)."""
    if PLANNING:
        return
    now = time.time()
    wait = (second - now % 60) % 60
    time.sleep(wait)


def group_cron(timing=False):
    """The built-in `cron` trigger: validation, which tick a run dispatches (the latest one due
    in its window, coalesced), time zones, DST, state across runs, the dry run, a kill -9.
    With `timing` (the group `cron-timing`), instead: the window without `start_date` and when
    `--watch` dispatches a tick, which wait for the wall clock (about 7 minutes).

    A tick's id is its due time in Unix seconds.  Where a case's window ends now, the ids of
    the minute the case ran in are written `<minute>` (the minute boundary at or before the
    host's start, or the one after it, when the run crossed it) so that a re-recording is
    the same."""
    recs = []
    C = ["--config", "settings.toml"]

    def auto(name="c1", prompt="Tick", extra=""):
        lines = ["[automations.%s]" % name, 'trigger_type = "cron"', 'repository = "demo"',
                 "prompt = " + json.dumps(prompt)]
        if extra:
            lines.append(extra.rstrip("\n"))
        return "\n".join(lines) + "\n"

    def conf(*autos, settings=BASE_SETTINGS, agents=BASE_AGENTS):
        return config(settings=settings, agents=agents, plugin="", autos="\n".join(autos))

    def relative(r, t0):
        """Now-dependent ids as `<minute>` / `<minute+1>`."""
        base = int(t0 // 60 * 60)
        names = {str(base): "<minute>", str(base + 60): "<minute+1>", str(base + 120): "<minute+2>"}

        def fix(text):
            for ts, name in names.items():
                text = text.replace(":cron:" + ts, ":cron:" + name)
            return text
        r["stdout"] = [fix(l) for l in r.get("stdout", [])]
        r["stderr"] = [fix(l) for l in r.get("stderr", [])]
        for c in r.get("agent_calls", []):
            c.pop("branch", None)
        for row in r.get("cron_state", []):
            for k in list(row):
                if k != "automation_id" and row[k] is not None:
                    row[k] = "<time>"
        return r

    def R(case, cf, args=None, now=False, keep=False, **kw):
        t0 = time.time()
        r = run(case, cf, args or ["run"] + C, keep_home=keep, record_ext=False, trees=False, **kw)
        if r.get("_skipped"):
            recs.append(r)
            return r
        r["cron_state"] = cron_state()
        for c in r.get("agent_calls", []):
            for k in ("env_added", "head_subject", "cwd"):
                c.pop(k, None)
        if now:
            relative(r, t0)
        if not r.get("agent_calls"):
            r.pop("agent_calls", None)
        recs.append(r)
        return r

    def V(case, cf):
        return R(case, cf, ["validate"] + C)

    if timing:
        # -- the window without start_date: which command first sees an automation
        until_second(5)
        R("first sight: validate sees v1", conf(auto("v1", extra='schedule = "* * * * *"')), ["validate"] + C, now=True)
        R("first sight: a dry run sees d1", conf(auto("d1", extra='schedule = "* * * * *"')), ["run", "--dry-run"] + C, now=True, keep=True)
        R("first sight: run sees r1", conf(auto("r1", extra='schedule = "* * * * *"')), now=True, keep=True)
        R("first sight: run sees r1 again in the same minute", conf(auto("r1", extra='schedule = "* * * * *"')), now=True, keep=True)
        until_second(3)
        R("first sight: the next minute, v1 d1 r1", conf(*(auto(n, extra='schedule = "* * * * *"') for n in ("v1", "d1", "r1"))), now=True, keep=True)
        R("first sight: once more", conf(*(auto(n, extra='schedule = "* * * * *"') for n in ("v1", "d1", "r1"))), now=True, keep=True)

        # -- --watch: when a due tick is dispatched, and a cron automation beside itself
        every5 = BASE_SETTINGS + "max_active_tasks = 3\n\n[settings.polling]\ncron_poll_interval_seconds = 5\n"
        until_second(50)
        R("watch: a tick after the host started, cron polls every 5 s", conf(auto(extra='schedule = "* * * * *"'), settings=every5),
          ["run", "--watch"] + C, now=True, interrupt=(20, signal.SIGINT), timeout=40,
          note="started at second 50 of a minute and interrupted 20 s later; an agent call's "
               "t_start_s minus 10 is how long after the minute boundary the tick was dispatched")
        for cron_every, every in ((5, 300), (300, 7)):
            until_second(50)
            R("watch: cron polls every %d s, other polls every %d s, 80 s" % (cron_every, every),
              conf(auto(extra='schedule = "* * * * *"'), settings=BASE_SETTINGS + "max_active_tasks = 3\n\n"
                   "[settings.polling]\ncron_poll_interval_seconds = %d\npoll_interval_seconds = %d\n"
                   % (cron_every, every)),
              ["run", "--watch"] + C, now=True, interrupt=(80, signal.SIGINT), timeout=100,
              note="started at second 50 of a minute, interrupted 80 s later: the minute "
                   "boundaries are at t = 10 s and t = 70 s")
        until_second(30)
        R("watch: the agent runs past the next tick", conf(auto(extra='schedule = "* * * * *"\nstart_date = "2026-12-01"'), settings=every5),
          ["run", "--watch"] + C, now=True, agent_sleep=45, interrupt=(75, signal.SIGINT), timeout=120,
          note="started at second 30; the first tick's agent sleeps 45 s, past the next minute "
               "boundary (t = 30 s); interrupted at 75 s")
        return recs

    # -- validate
    V("validate: no schedule", conf(auto()))
    V("validate: a minute of 61", conf(auto(extra='schedule = "61 * * * *"')))
    V("validate: six fields", conf(auto(extra='schedule = "0 * * * * *"')))
    V("validate: four fields", conf(auto(extra='schedule = "* * * *"')))
    V("validate: @daily", conf(auto(extra='schedule = "@daily"')))
    V("validate: day of week 0", conf(auto(extra='schedule = "0 9 * * 0"')))
    V("validate: day of week 8", conf(auto(extra='schedule = "0 9 * * 8"')))
    V("validate: an hour of 24", conf(auto(extra='schedule = "0 24 * * *"')))
    V("validate: day of month 0", conf(auto(extra='schedule = "0 9 0 * *"')))
    V("validate: month 13", conf(auto(extra='schedule = "0 9 1 13 *"')))
    V("validate: a word", conf(auto(extra='schedule = "every day"')))
    V("validate: empty schedule", conf(auto(extra='schedule = ""')))
    V("validate: schedule is a number", conf(auto(extra="schedule = 5")))
    V("validate: MON-FRI and */15", conf(auto(extra='schedule = "*/15 9-17 * JAN-DEC MON-FRI"')))
    V("validate: L and ? and #", conf(auto(extra='schedule = "0 9 ? * 6#3"')))
    V("validate: an unknown time zone", conf(auto(extra='schedule = "* * * * *"\ntimezone = "Mars/Olympus"')))
    V("validate: a lowercase utc", conf(auto(extra='schedule = "* * * * *"\ntimezone = "utc"')))
    V("validate: an empty time zone", conf(auto(extra='schedule = "* * * * *"\ntimezone = ""')))
    V("validate: Etc/GMT+3", conf(auto(extra='schedule = "* * * * *"\ntimezone = "Etc/GMT+3"')))
    V("validate: an unknown [agents.defaults] timezone",
      conf(auto(extra='schedule = "* * * * *"'), agents=BASE_AGENTS.replace(
          'profile = "stub"', 'profile = "stub"\ntimezone = "Mars/Olympus"')))
    V("validate: an unknown [agents.defaults] timezone and the automation's own",
      conf(auto(extra='schedule = "* * * * *"\ntimezone = "UTC"'), agents=BASE_AGENTS.replace(
          'profile = "stub"', 'profile = "stub"\ntimezone = "Mars/Olympus"')))
    V("validate: start_date yesterday", conf(auto(extra='schedule = "* * * * *"\nstart_date = "yesterday"')))
    V("validate: start_date without a zone", conf(auto(extra='schedule = "* * * * *"\nstart_date = "2026-12-01T00:00:00"')))
    V("validate: start_date a TOML date-time", conf(auto(extra='schedule = "* * * * *"\nstart_date = 2026-12-01T00:00:00Z')))
    V("validate: start_date a number", conf(auto(extra='schedule = "* * * * *"\nstart_date = 5')))
    V("validate: end_date 2026-02-30", conf(auto(extra='schedule = "* * * * *"\nend_date = "2026-02-30"')))
    V("validate: end_date before start_date", conf(auto(extra='schedule = "* * * * *"\nstart_date = "2026-12-03"\nend_date = "2026-12-01"')))
    V("validate: an unknown prompt field", conf(auto(prompt="{{ due }}", extra='schedule = "* * * * *"')))
    V("validate: no repository", conf(auto(extra='schedule = "* * * * *"').replace('repository = "demo"\n', "")))

    # -- run, over windows that ended (the ids do not depend on when it is recorded)
    W = 'start_date = "2026-12-01"\nend_date = "2026-12-03"'
    R("run: 0 9 * * *, 2026-12-01 to 2026-12-03", conf(auto(extra='schedule = "0 9 * * *"\n' + W)))
    R("run again: nothing", conf(auto(extra='schedule = "0 9 * * *"\n' + W)), keep=True)
    R("run: the window ends later", conf(auto(extra='schedule = "0 9 * * *"\nstart_date = "2026-12-01"\nend_date = "2026-12-05"')), keep=True)
    R("run: the window ends earlier again", conf(auto(extra='schedule = "0 9 * * *"\n' + W)), keep=True)
    NOV = 'start_date = "2026-11-01"\nend_date = "2026-11-30"'
    R("run: day of week 1", conf(auto(extra='schedule = "0 9 * * 1"\n' + NOV)))
    R("run: day of week 7", conf(auto(extra='schedule = "0 9 * * 7"\n' + NOV)))
    R("run: day of week MON", conf(auto(extra='schedule = "0 9 * * MON"\n' + NOV)))
    R("run: day of week SUN", conf(auto(extra='schedule = "0 9 * * SUN"\n' + NOV)))
    R("run: timezone Asia/Tokyo", conf(auto(extra='schedule = "0 9 * * *"\ntimezone = "Asia/Tokyo"\n' + W)))
    R("run: [agents.defaults] timezone Asia/Tokyo",
      conf(auto(extra='schedule = "0 9 * * *"\n' + W), agents=BASE_AGENTS.replace(
          'profile = "stub"', 'profile = "stub"\ntimezone = "Asia/Tokyo"')))
    R("run: the automation's timezone over [agents.defaults]",
      conf(auto(extra='schedule = "0 9 * * *"\ntimezone = "UTC"\n' + W), agents=BASE_AGENTS.replace(
          'profile = "stub"', 'profile = "stub"\ntimezone = "Asia/Tokyo"')))
    R("run: hourly in Asia/Tokyo, end_date a date", conf(auto(extra='schedule = "0 * * * *"\ntimezone = "Asia/Tokyo"\n' + W)))
    R("run: end_date is inclusive", conf(auto(extra='schedule = "0 9 * * *"\nstart_date = "2026-12-01"\nend_date = "2026-12-03T09:00:00Z"')))
    R("run: start_date is inclusive", conf(auto(extra='schedule = "0 9 * * *"\nstart_date = "2026-12-02T09:00:00Z"\nend_date = "2026-12-02T09:00:00Z"')))
    R("run: start_date with an offset", conf(auto(extra='schedule = "0 9 * * *"\nstart_date = "2026-12-01T00:00:00+09:00"\nend_date = "2026-12-02T08:59:59+00:00"')))
    R("run: start_date after end_date", conf(auto(extra='schedule = "0 9 * * *"\nstart_date = "2026-12-03"\nend_date = "2026-12-01"')))
    R("run: start_date a TOML date-time", conf(auto(extra='schedule = "0 9 * * *"\nstart_date = 2026-12-01T00:00:00Z\nend_date = "2026-12-03"')))
    NY = 'timezone = "America/New_York"\n'
    R("run: DST fall-back, 01:30 New York, to 06:00Z", conf(auto(extra='schedule = "30 1 * * *"\n' + NY + 'start_date = "2026-11-01T00:00:00Z"\nend_date = "2026-11-01T06:00:00Z"')))
    R("run: DST fall-back, 01:30 New York, to 07:00Z", conf(auto(extra='schedule = "30 1 * * *"\n' + NY + 'start_date = "2026-11-01T00:00:00Z"\nend_date = "2026-11-01T07:00:00Z"')))
    R("run: DST fall-back, 01:30 New York, 06:00Z to 07:00Z", conf(auto(extra='schedule = "30 1 * * *"\n' + NY + 'start_date = "2026-11-01T06:00:00Z"\nend_date = "2026-11-01T07:00:00Z"')))
    R("run: DST spring-forward, 02:30 New York", conf(auto(extra='schedule = "30 2 * * *"\n' + NY + 'start_date = "2026-03-08T00:00:00Z"\nend_date = "2026-03-08T23:00:00Z"')))
    R("run: DST spring-forward, every 15 min 02:00-03:59 New York", conf(auto(extra='schedule = "*/15 2-3 * * *"\n' + NY + 'start_date = "2026-03-08T06:00:00Z"\nend_date = "2026-03-08T07:10:00Z"')))
    R("run: the window ended, no start_date", conf(auto(extra='schedule = "* * * * *"\nend_date = "2026-12-03"')))
    R("run: the window starts in 2099", conf(auto(extra='schedule = "* * * * *"\nstart_date = "2099-01-01"')))
    R("run: the prompt's fields", conf(auto(prompt="{{ _fields }} ${automation} ${repository} ${scheduled_for} ${n}", extra='schedule = "0 9 * * *"\n' + W)))
    R("run: two cron automations, one schedule", conf(auto("c1", extra='schedule = "0 9 * * *"\n' + W), auto("c2", extra='schedule = "0 9 * * *"\n' + W)))
    R("run --dry-run", conf(auto(extra='schedule = "0 9 * * *"\n' + W)), ["run", "--dry-run"] + C)
    R("run after the dry run", conf(auto(extra='schedule = "0 9 * * *"\n' + W)), keep=True)
    R("run: the agent fails", conf(auto(prompt="FAIL", extra='schedule = "0 9 * * *"\n' + W)))
    R("run again after the failure", conf(auto(prompt="FAIL", extra='schedule = "0 9 * * *"\n' + W)), keep=True)
    R("run --size 1, two automations", conf(auto("c1", extra='schedule = "0 9 * * *"\n' + W), auto("c2", extra='schedule = "0 9 * * *"\n' + W)), ["run", "--size", "1"] + C)

    # -- kill -9 of the host while a tick's agent runs, then a run
    def kill_host(p):
        wait_for(lambda: os.path.exists(AGENT_LOG) and read_jsonl(AGENT_LOG), timeout=20)
        time.sleep(1)
        os.kill(p.pid, signal.SIGKILL)
        time.sleep(0.5)
        kill_session(p.pid)
        return {}
    R("kill -9 while the agent runs", conf(auto(extra='schedule = "0 9 * * *"\n' + W)), during=kill_host, agent_sleep=30)
    R("run after the kill -9", conf(auto(extra='schedule = "0 9 * * *"\n' + W)), keep=True)
    return recs


def group_cron_timing():
    return group_cron(timing=True)


def group_reload():
    """run --watch while its settings.toml changes: a prompt edited, an automation added, the
    file broken. Does the running host take any of it up?"""
    recs = []
    C = ["--config", "settings.toml"]
    base = S("") + "\n[settings.polling]\npoll_interval_seconds = 1\n"
    cpath = os.path.join(W, "cwd", "settings.toml")

    def rewrite(text):
        with open(cpath, "w") as f:
            f.write(fill(text))

    def later(first, then_items=None, what=""):
        def during(p):
            time.sleep(3)
            rewrite(first)
            if then_items is not None:
                time.sleep(3)
                with open(os.path.join(W, "items.json"), "w") as f:
                    json.dump(then_items, f)
            return {"during": what}
        return during

    edited = config(settings=base, autos=automation(prompt="Edited ${n}: ${title}"))
    recs.append(compact(run("run --watch, prompt edited after 3 s, a 2nd item after 6 s, SIGINT after 12 s",
                            config(settings=base), ["run", "--watch"] + C, items={"items.json": THREE[:1]},
                            timeout=25, interrupt=(6, signal.SIGINT),
                            during=later(edited, THREE[:2], "3 s after start the prompt became "
                                         "'Edited ${n}: ${title}'; 3 s later items.json grew to 2 items"))))
    added = config(settings=base, autos=automation() + "\n" + automation(name="e2", prompt="Added ${n}",
                                                                        items="items2.json"))
    recs.append(compact(run("run --watch, automation e2 added after 3 s, SIGINT after 12 s",
                            config(settings=base), ["run", "--watch"] + C,
                            items={"items.json": THREE[:1], "items2.json": [{"title": "x", "n": "9"}]},
                            timeout=25, interrupt=(9, signal.SIGINT),
                            during=later(added, None, "3 s after start automation e2 (items2.json, "
                                         "one item) was added"))))
    broken = config(settings=base) + "\n[automations.e1\n"
    recs.append(compact(run("run --watch, file broken after 3 s, a 2nd item after 6 s, SIGINT after 12 s",
                            config(settings=base), ["run", "--watch"] + C, items={"items.json": THREE[:1]},
                            timeout=25, interrupt=(6, signal.SIGINT),
                            during=later(broken, THREE[:2], "3 s after start the file got an unclosed "
                                         "table header; 3 s later items.json grew to 2 items"))))
    return recs


# GROUPS-HERE


GROUPS = ["help", "validate", "commands", "repositories", "prompts", "plugins", "cron", "cron-timing",
          "reload"]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="record.py", usage="python3 record.py [options] OUTDIR [GROUP ...]",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 add_help=True)
    ap.add_argument("positional", nargs="*", metavar="OUTDIR [GROUP ...]", help=argparse.SUPPRESS)
    ap.add_argument("--host", metavar="EXE", help=argparse.SUPPRESS)
    ap.add_argument("--alias", metavar="EXE", help=argparse.SUPPRESS)
    ap.add_argument("--only", metavar="SUBSTRING", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--cases", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--list", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--timeout-cap", metavar="SECONDS", type=float, help=argparse.SUPPRESS)
    ap.add_argument("-v", "--verbose", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_intermixed_args(argv)
    pos = list(a.positional)
    if a.list:
        a.outdir = None
    elif not pos:
        print(__doc__)
        sys.exit(2)
    else:
        a.outdir = os.path.abspath(pos.pop(0))
    a.groups = pos or list(GROUPS)
    bad = [g for g in a.groups if g not in GROUPS]
    if bad:
        ap.error("unknown group(s) %s; the groups are %s" % (", ".join(bad), " ".join(GROUPS)))
    if a.timeout_cap is not None and a.timeout_cap <= 0:
        ap.error("--timeout-cap must be positive")
    return a


def read_case_names(path):
    """--cases FILE: one exact name a line, or JSON: a list of names, an object whose keys are
    names (compare.py --json), or a recording ({"cases": [{"case": ...}, ...]})."""
    with open(path) as f:
        text = f.read()
    try:
        data = json.loads(text)
    except ValueError:
        return {l.rstrip("\n") for l in text.splitlines() if l.strip()}
    if isinstance(data, dict) and isinstance(data.get("cases"), list):
        return {c["case"] if isinstance(c, dict) else c for c in data["cases"]}
    if isinstance(data, dict):
        return set(data)
    if isinstance(data, list):
        return {c["case"] if isinstance(c, dict) else c for c in data}
    sys.exit("record.py: --cases %s: expected names, a JSON list or a JSON object" % path)


def is_selected(case):
    subs, names = SELECT
    return case in names or any(sub in case for sub in subs)


def configure_host(host, alias):
    """--host/--alias: the host (and alias) to run instead of the reference's venv binaries."""
    global VENV, HOST, ALIAS, REPLAY, SCRATCH_HOST
    if host is None and alias is None:
        return
    REPLAY = {}
    SCRATCH_HOST = os.path.realpath(tempfile.mkdtemp(prefix="curu-host-"))
    sbin = os.path.join(SCRATCH_HOST, "bin")
    os.makedirs(sbin)
    if host is not None:
        exe = os.path.abspath(shutil.which(host) or host)
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            sys.exit("record.py: --host %s: not an executable file" % host)
        REPLAY["host"] = exe
        if os.path.basename(exe) == "curupira":
            HOST = exe
        else:  # the help texts show the program's name: invoke it as `curupira`
            HOST = os.path.join(sbin, "curupira")
            os.symlink(exe, HOST)
            REPLAY["host_invoked_as"] = "a symlink named curupira to it"
        py = os.path.join(VENV, "bin", "python")
        ok = os.access(py, os.X_OK) and subprocess.run([py, "-c", "pass"], capture_output=True).returncode == 0
        if ok:
            REPLAY["venv"] = "REF_VENV %s (only its bin/python is used)" % VENV
        else:  # no reference venv needed: a scratch "venv" whose bin/python is this python3
            VENV = os.path.join(SCRATCH_HOST, "venv")
            os.makedirs(os.path.join(VENV, "bin"))
            me = sys.executable or shutil.which("python3")
            os.symlink(me, os.path.join(VENV, "bin", "python"))
            REPLAY["venv"] = "scratch folder; bin/python -> %s" % me
    else:
        exe = HOST
    if alias is not None:
        a = os.path.abspath(shutil.which(alias) or alias)
        if not (os.path.isfile(a) and os.access(a, os.X_OK)):
            sys.exit("record.py: --alias %s: not an executable file" % alias)
        ALIAS = a
        REPLAY["alias"] = a
    else:
        ALIAS = os.path.join(sbin, "curu")
        os.symlink(exe, ALIAS)
        REPLAY["alias"] = "a symlink named curu to %s" % exe


def plan_groups(groups, fns):
    """Planning pass (selection only): the groups run in a throw-away workdir with run() starting
    no host; returns {group: (cases, selected indexes, needed indexes)}."""
    global PLANNING, PLAN, CALL_INDEX, W
    PLANNING = True
    setup_workdir()
    plans = {}
    try:
        for g in groups:
            PLAN, CALL_INDEX = [], 0
            fns[g]()
            sel = {i for i, (case, _) in enumerate(PLAN) if SELECT is None or is_selected(case)}
            need = set()
            for i in sel:
                need.add(i)
                while PLAN[i][1] and i > 0:  # keeps the previous case's state: run that one too
                    i -= 1
                    need.add(i)
            plans[g] = (list(PLAN), sel, need)
    finally:
        PLANNING = False
        shutil.rmtree(W, ignore_errors=True)
    return plans


def main():
    global SELECT, PLAN, NEEDED, CALL_INDEX, TIMEOUT_CAP, VERBOSE
    a = parse_args(sys.argv[1:])
    TIMEOUT_CAP = a.timeout_cap
    VERBOSE = a.verbose
    if a.only or a.cases:
        SELECT = (list(a.only), read_case_names(a.cases) if a.cases else set())
    groups = a.groups
    fns = {"help": group_help, "validate": group_validate, "commands": group_commands,
           "repositories": group_repositories, "prompts": group_prompts, "plugins": group_plugins,
           "cron": group_cron, "cron-timing": group_cron_timing, "reload": group_reload}
    plans = None
    if SELECT is not None or a.list:
        plans = plan_groups(groups, fns)
        if SELECT is not None:
            names = {c for g in groups for i, (c, _) in enumerate(plans[g][0]) if i in plans[g][1]}
            unmatched = sorted(SELECT[1] - names)
            if unmatched:
                print("record.py: --cases names not found in the groups %s: %s"
                      % (" ".join(groups), "; ".join(map(repr, unmatched))), file=sys.stderr)
        if a.list:
            for g in groups:
                cases, sel, need = plans[g]
                for i, (c, _) in enumerate(cases):
                    if i in sel:
                        print("%s\t%s" % (g, c))
            return
        groups = [g for g in groups if plans[g][1]]
        n_sel = sum(len(plans[g][1]) for g in groups)
        n_need = sum(len(plans[g][2]) for g in groups)
        print("== selection: %d case(s) in %s (+%d run only for the state they leave)"
              % (n_sel, " ".join(groups) or "no group", n_need - n_sel), file=sys.stderr)
        if not n_sel:
            sys.exit(1)
    configure_host(a.host, a.alias)
    outdir = a.outdir
    os.makedirs(outdir, exist_ok=True)
    setup_workdir()
    prov = {"recorded": time.strftime("%Y-%m-%d"), "host": "curupira 0.4.0 (PyPI wheel, Rust binary)",
            "host_version_output": subprocess.run([HOST, "--version"], capture_output=True, text=True).stdout.strip(),
            "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
            "placeholders": {"<workdir>": "scratch folder", "<home>": "HOME (= <workdir>/home)",
                             "<venv>": "venv with curupira 0.4.0"}}
    if REPLAY is not None:
        prov["host"] = "replay of the reference host's cases against another host"
        prov["placeholders"]["<venv>"] = "a folder whose bin/python runs rec_ext.py"
        prov["replay"] = dict(REPLAY)
    if a.timeout_cap is not None:
        prov["timeout_cap_s"] = a.timeout_cap
    if SELECT is not None:
        prov["selection"] = {"only": list(a.only), "cases_file": a.cases}
    try:
        for g in groups:
            print("== group", g, file=sys.stderr)
            t0 = time.time()
            if plans is not None and SELECT is not None:
                PLAN, NEEDED = plans[g][0], plans[g][2]
                wanted = {c for i, (c, _) in enumerate(PLAN) if i in plans[g][1]}
            CALL_INDEX = 0
            recs = fns[g]()
            if SELECT is not None:
                recs = [r for r in recs if not r.get("_skipped") and r.get("case") in wanted]
            with open(os.path.join(outdir, g + ".json"), "w") as f:
                json.dump({"provenance": prov, "cases": recs}, f, indent=1, ensure_ascii=False)
                f.write("\n")
            print("== group %s: %d case(s) in %.1f s" % (g, len(recs), time.time() - t0), file=sys.stderr)
    except BaseException:
        print("workdir kept:", W, file=sys.stderr)
        raise
    if not os.environ.get("KEEP_WORKDIR"):
        shutil.rmtree(W, ignore_errors=True)
        if SCRATCH_HOST:
            shutil.rmtree(SCRATCH_HOST, ignore_errors=True)
    else:
        print("workdir kept:", W, file=sys.stderr)
        if SCRATCH_HOST:
            print("host scratch folder kept:", SCRATCH_HOST, file=sys.stderr)


if __name__ == "__main__":
    main()
