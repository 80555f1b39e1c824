#!/usr/bin/env python3
"""Records what the reference Curupira host (curupira 0.4.0 from PyPI) runs for each
coding-agent provider and profile option: argv, stdin, working directory and the
environment variables it adds, fresh and resumed, and the errors it gives.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install curupira==0.4.0
    python3 agents/recordings/record.py /tmp/ref/bin/curupira > agents/recordings/reference-0.4.0.json

A stand-in for every CLI goes first on PATH: it appends one JSON line (argv, cwd,
stdin, environment) to a log, prints the stream its case gives, and hangs when the
case asks for it (the resume cases: the host is killed with SIGKILL while the agent
runs, the stand-in too, and the host is run again). Every run uses the built-in
`cron` trigger with a start date in the past, so one occurrence is due at once, and a
local bare repository, so nothing needs the network. The host runs with `env -i`
(PATH, HOME, LANG only) so the recorded environment is what the host adds.
"""
import json, os, re, shutil, signal, subprocess, sys, tempfile, textwrap, time

REF = os.path.abspath(sys.argv[1])
ROOT = tempfile.mkdtemp(prefix="curupira-record-")
CLIS = {"claude": "claude", "codex": "codex", "cursor": "agent", "gemini": "gemini",
        "copilot": "copilot", "kilo": "kilo", "opencode": "opencode", "pi": "pi", "qwen": "qwen"}
SESSION = "0b7e4d2a-6c1f-4e7b-9a55-3f2d8c9e1a44"
PROMPT = "Do the thing for ${automation}"
# The first line each stand-in prints when a case wants a session announced: the
# announcement each CLI documents (see ../streams/README.md for the sources).
ANNOUNCE = {
    "claude": {"type": "system", "subtype": "init", "session_id": SESSION},
    "qwen": {"type": "system", "subtype": "init", "session_id": SESSION},
    "cursor": {"type": "system", "subtype": "init", "session_id": SESSION},
    "gemini": {"type": "init", "timestamp": "2026-12-02T00:00:00Z", "session_id": SESSION, "model": "m"},
    "codex": {"type": "thread.started", "thread_id": SESSION},
    "copilot": {"type": "session.start", "sessionId": SESSION},
    "kilo": {"type": "step_start", "timestamp": 1, "sessionID": "ses_" + SESSION[:8], "part": {}},
    "opencode": {"type": "step_start", "timestamp": 1, "sessionID": "ses_" + SESSION[:8], "part": {}},
    "pi": {"type": "session", "version": 3, "id": SESSION, "timestamp": "2026-12-02T00:00:00Z", "cwd": "/x"},
}


def setup():
    os.makedirs(f"{ROOT}/bin")
    bare = f"{ROOT}/remotes/acme/widgets.git"
    git = dict(os.environ, GIT_AUTHOR_NAME="r", GIT_AUTHOR_EMAIL="r@r", GIT_COMMITTER_NAME="r",
               GIT_COMMITTER_EMAIL="r@r")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", bare], check=True)
    src = f"{ROOT}/src"
    os.makedirs(src)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=src, check=True)
    open(f"{src}/README", "w").write("x\n")
    subprocess.run(["git", "add", "."], cwd=src, check=True, env=git)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=src, check=True, env=git)
    subprocess.run(["git", "push", "-q", bare, "main"], cwd=src, check=True, env=git)
    for program in CLIS.values():
        path = f"{ROOT}/bin/{program}"
        open(path, "w").write(textwrap.dedent(f"""\
            #!/usr/bin/env python3
            import json, os, sys, time
            root = {ROOT!r}
            stdin = '' if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
            env = {{k: v for k, v in os.environ.items() if k not in ('PATH', 'HOME', 'PWD', 'OLDPWD', 'SHLVL', '_', 'LANG')}}
            with open(root + '/calls.jsonl', 'a') as f:
                f.write(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd(), 'stdin': stdin, 'env': env}}) + '\\n')
            if sys.argv[1:] == ['--version']:
                if os.path.exists(root + '/version'):
                    sys.stdout.write(open(root + '/version').read())
                sys.exit(0)
            if os.path.exists(root + '/stream'):
                sys.stdout.write(open(root + '/stream').read()); sys.stdout.flush()
            if os.path.exists(root + '/hang'):
                time.sleep(3600)
            """))
        os.chmod(path, 0o755)


def config(provider, profile, prompt):
    return textwrap.dedent(f"""\
        [settings]
        workspace_dir = "{ROOT}/ws"
        state_db_path = "{ROOT}/state.sqlite3"
        [repositories.demo]
        remote = "file://{ROOT}/remotes/acme/widgets.git"
        [agents.defaults]
        profile = "p"
        [agents.profiles.p]
        provider = "{provider}"
        """) + profile + textwrap.dedent(f"""
        [automations.c1]
        trigger_type = "cron"
        repository = "demo"
        schedule = "* * * * *"
        start_date = "2026-01-01"
        prompt = {json.dumps(prompt)}
        """)


ENV = {"PATH": f"{ROOT}/bin:/usr/bin:/bin", "HOME": f"{ROOT}/home", "LANG": "C.UTF-8"}


def reset():
    for name in ["ws", "home", "state.sqlite3", "calls.jsonl", "hang", "stream", "version"]:
        path = f"{ROOT}/{name}"
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    os.makedirs(f"{ROOT}/home")


def calls():
    if not os.path.exists(f"{ROOT}/calls.jsonl"):
        return []
    return [json.loads(line) for line in open(f"{ROOT}/calls.jsonl")]


def norm(text):
    text = re.sub(re.escape(f"{ROOT}/ws/demo.worktrees/c1/") + r"cron-[0-9a-f]{64}", "<worktree>", text)
    text = text.replace(ROOT, "<root>")
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                  lambda m: "<session>" if m.group(0) == SESSION else "<uuid>", text)


def call_record(call):
    return {"argv": [norm(a) for a in call["argv"]], "cwd": norm(call["cwd"]), "stdin": call["stdin"],
            "env": {k: norm(v) for k, v in call["env"].items()}}


def host(args, timeout=120):
    return subprocess.run([REF, "--config", f"{ROOT}/s.toml", *args], env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def fresh(provider, profile, prompt=PROMPT, version=None):
    reset()
    open(f"{ROOT}/s.toml", "w").write(config(provider, profile, prompt))
    if version is not None:
        open(f"{ROOT}/version", "w").write(version)
    done = host(["run"])
    return outcome(done, calls())


def outcome(done, made):
    agent = [call_record(c) for c in made if c["argv"] != ["--version"]]
    record = {"exit": done.returncode, "asked_version": any(c["argv"] == ["--version"] for c in made)}
    if agent:
        record["call"] = agent[0]
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.startswith("fail\t")]
        record["error"] = norm(lines[0].split("\t", 2)[2]) if lines else norm(done.stderr.strip())
    warnings = [norm(l) for l in done.stderr.splitlines() if "WARN" in l]
    if warnings:
        record["warnings"] = warnings
    return record


def resumed(provider, profile):
    reset()
    open(f"{ROOT}/s.toml", "w").write(config(provider, profile, PROMPT))
    open(f"{ROOT}/stream", "w").write(json.dumps(ANNOUNCE[provider]) + "\n")
    open(f"{ROOT}/hang", "w").write("")
    first = subprocess.Popen([REF, "--config", f"{ROOT}/s.toml", "run"], env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline and not [c for c in calls() if c["argv"] != ["--version"]]:
        time.sleep(0.05)
    time.sleep(1.0)  # the host reads the announcement and stores the session
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    subprocess.run(["pkill", "-9", "-f", f"{ROOT}/bin/"])
    os.remove(f"{ROOT}/hang")
    os.remove(f"{ROOT}/stream")
    before = len(calls())
    done = host(["run"])
    return {"announced": ANNOUNCE[provider], "first": outcome(subprocess.CompletedProcess([], 0, "", ""), calls()[:before])["call"],
            **outcome(done, calls()[before:])}


# (provider, profile TOML); each is recorded fresh, and resumed where `True`.
CASES = [
    ("claude", "", True),
    ("claude", 'model = "m1"', False),
    ("claude", 'agent = "a1"', False),
    ("claude", 'effort = "high"', False),
    ("claude", 'permission_mode = "acceptEdits"', False),
    ("claude", 'permission_prompts = "pp"', False),
    ("claude", 'effort = "high"\nmodel = "m1"', False),
    ("claude", 'model = "m1"\nagent = "a1"\neffort = "high"\npermission_mode = "acceptEdits"\npermission_prompts = "pp"', True),
    ("claude", "model = true", False),
    ("claude", 'model = ""', False),
    ("claude", 'sandbox = "x"\nforce = true', False),
    ("codex", "", True),
    ("codex", 'model = "m1"', False),
    ("codex", 'agent = "a1"', False),
    ("codex", 'effort = "high"', False),
    ("codex", 'sandbox = "workspace-write"', False),
    ("codex", "auto_review = true", False),
    ("codex", "auto_review = false", False),
    ("codex", 'auto_review = "yes"', False),
    ("codex", 'model = "m1"\nagent = "a1"\neffort = "high"\nsandbox = "workspace-write"\nauto_review = true', True),
    ("cursor", "", True),
    ("cursor", 'model = "m1"', False),
    ("cursor", 'agent = "a1"', False),
    ("cursor", "force = true", False),
    ("cursor", "trust = true", False),
    ("cursor", "force = false\ntrust = false", False),
    ("cursor", 'effort = "high"', False),
    ("cursor", 'model = "m1"\nagent = "a1"\nforce = true\ntrust = true', True),
    ("gemini", "", True),
    ("gemini", 'model = "m1"', False),
    ("gemini", 'approval_mode = "yolo"', False),
    ("gemini", "skip_trust = true", False),
    ("gemini", "skip_trust = false", False),
    ("gemini", 'agent = "a1"', False),
    ("gemini", 'effort = "high"', False),
    ("gemini", 'model = "m1"\napproval_mode = "yolo"\nskip_trust = true', True),
    ("copilot", "", True),
    ("copilot", 'model = "m1"', False),
    ("copilot", 'agent = "a1"', False),
    ("copilot", 'effort = "high"', False),
    ("copilot", 'allow_tools = ["t1", "t2"]', False),
    ("copilot", 'deny_tools = ["d1"]', False),
    ("copilot", "allow_all_tools = true", False),
    ("copilot", "allow_all_tools = false", False),
    ("copilot", "allow_tools = []", False),
    ("copilot", 'allow_tools = ["a,b"]', False),
    ("copilot", 'allow_tools = "t1"', False),
    ("copilot", 'model = "m1"\nagent = "a1"\neffort = "high"\nallow_tools = ["t1", "t2"]\ndeny_tools = ["d1"]\nallow_all_tools = true', True),
    ("kilo", "", True),
    ("kilo", 'model = "prov/m1"', False),
    ("kilo", 'model = "m1"', False),
    ("kilo", 'agent = "a1"', False),
    ("kilo", 'effort = "high"', False),
    ("kilo", "auto_approve = true", False),
    ("kilo", "auto_approve = false", False),
    ("kilo", 'model = "prov/m1#fast"\neffort = "high"', False),
    ("kilo", 'model = "prov/m1"\nagent = "a1"\neffort = "high"\nauto_approve = true', True),
    ("opencode", 'api = "v2"', True),
    ("opencode", 'api = "v1"', True),
    ("opencode", 'api = "v2"\nmodel = "prov/m1"', False),
    ("opencode", 'api = "v2"\nagent = "a1"', False),
    ("opencode", 'api = "v2"\nmodel = "prov/m1"\neffort = "high"', False),
    ("opencode", 'api = "v2"\neffort = "high"', False),
    ("opencode", 'api = "v2"\nmodel = "prov/m1#fast"', False),
    ("opencode", 'api = "v2"\nmodel = "prov/m1#fast"\neffort = "high"', False),
    ("opencode", 'api = "v2"\nauto_approve = true', False),
    ("opencode", 'api = "v1"\nmodel = "m1"', False),
    ("opencode", 'api = "v1"\neffort = "high"', False),
    ("opencode", 'api = "v1"\nauto_approve = true', False),
    ("opencode", 'api = "v3"', False),
    ("opencode", 'api = "v2"\nmodel = "prov/m1"\nagent = "a1"\neffort = "high"\nauto_approve = true', True),
    ("opencode", 'api = "v1"\nmodel = "prov/m1"\nagent = "a1"\neffort = "high"\nauto_approve = true', True),
    ("pi", "", True),
    ("pi", 'model = "m1"', False),
    ("pi", 'model_provider = "prov"\nmodel = "m1"', False),
    ("pi", 'model_provider = "prov"', False),
    ("pi", 'effort = "high"', False),
    ("pi", 'tools = ["t1", "t2"]', False),
    ("pi", "tools = []", False),
    ("pi", 'exclude_tools = ["x1"]', False),
    ("pi", "approve = true", False),
    ("pi", "approve = false", False),
    ("pi", 'agent = "a1"', False),
    ("pi", 'model_provider = "prov"\nmodel = "m1"\neffort = "high"\ntools = ["t1", "t2"]\nexclude_tools = ["x1"]\napprove = true', True),
    ("qwen", "", True),
    ("qwen", 'model = "m1"', False),
    ("qwen", 'approval_mode = "yolo"', False),
    ("qwen", "max_session_turns = 12", False),
    ("qwen", "max_session_turns = 0", False),
    ("qwen", "max_session_turns = -1", False),
    ("qwen", 'max_session_turns = "12"', False),
    ("qwen", 'agent = "a1"', False),
    ("qwen", 'effort = "high"', False),
    ("qwen", 'model = "m1"\napproval_mode = "yolo"\nmax_session_turns = 12', True),
]
# `api = "auto"` (the default): the major version read from `opencode --version`.
VERSIONS = ["1.4.0\n", "opencode 1.0.0-beta\n", "2.0.1\n", "3.1.0\n", "v2.0.0\n", "0.9.1\n", "1.2\n", "garbage\n", ""]


def main():
    setup()
    out = {"reference": "curupira 0.4.0 (PyPI)", "recorded": time.strftime("%Y-%m-%d"),
           "prompt": PROMPT, "rendered_prompt": PROMPT.replace("${automation}", "c1"),
           "session": SESSION, "cases": [], "opencode_versions": [], "long_prompt": []}
    for provider, profile, also_resumed in CASES:
        case = {"provider": provider, "profile": profile, "fresh": fresh(provider, profile)}
        if also_resumed:
            case["resumed"] = resumed(provider, profile)
        out["cases"].append(case)
        print(f"{provider}: {profile!r}", file=sys.stderr)
    for version in VERSIONS:
        out["opencode_versions"].append({"output": version, **fresh("opencode", "", version=version)})
    for provider, size in [("claude", 131071), ("claude", 131072), ("gemini", 131063), ("gemini", 131072)]:
        # `size` bytes of prompt; the limit is on one argument (MAX_ARG_STRLEN, 131072
        # bytes with its NUL), so gemini's `--prompt=` counts 9 more.
        record = fresh(provider, "", prompt="x" * size)
        record.pop("call", None)
        out["long_prompt"].append({"provider": provider, "prompt_bytes": size, **record})
    shutil.rmtree(ROOT, ignore_errors=True)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
