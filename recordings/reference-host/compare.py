#!/usr/bin/env python3
"""Compare a replay of the reference host's cases (record.py --host EXE) with a recording.

Usage: python3 compare.py RECORDED.json REPLAYED.json [options]
  --fields F,...      compare only these fields (default: all).  A name selects itself and
                      its sub-fields: `agent_calls` = agent_calls.count, agent_calls.argv, ...
  --ignore F,...      leave these fields out (same matching)
  --json              print only {case: [differing fields]} (an empty object when nothing
                      differs), for tests to assert on
  --only SUBSTRING    compare only the cases whose name contains SUBSTRING (repeatable)
  --subset            compare only the cases present in REPLAYED (implied when the replay was
                      made with --only/--cases: its provenance has a "selection")
  --timing-tolerance S  compare elapsed_s and t_start_s too, equal within S seconds
  --max-lines N       lines shown per differing field (default 30; 0: no limit)
Exit: 0 when no case differs in the chosen fields, 1 when one does, 2 on bad usage or input.

Fields are compared in this order: exit_code, stdout, stderr, agent_calls (count, then per call
program, argv, cwd_kind, branch, stdin, cwd, toplevel, head_subject, env_added), agent_prompts,
ext_validate_configuration, ext_first_poll, ext_requests, ext_processes, ext_methods,
setup_script_runs, the trees (home_tree, ws_tree, checkouts_tree, cwd_tree_after), git_after
(per checkout: worktrees, branches, head, commits_all_refs, remotes), any other verdict
(second_run.exit_code, lock_file_after, ...), and last the case's inputs (command, cwd, config,
prompt, item_values, note, ...): a difference there means the replay did not run the same case.

Normalisations (NORMALISATIONS below; applied to both files before comparing):
  timings     every `elapsed_s` and `t_start_s`, at any depth, is dropped (--timing-tolerance
              compares them within a tolerance instead)
  uuids       every 8-4-4-4-12 hex UUID in any string becomes `<uuid>` (copilot's fresh
              `--session-id=<uuid>`)
  provenance  not compared (its host, version and date differ by design); shown in the header
  plugin_start_race
              the two texts the reference prints, at random, when a plugin cannot start
              (`transport write: I/O error: Broken pipe (os error 32)` and `transport read
              (initialize): unexpected EOF while reading frame header [-32000]`, 4 and 8 of 12
              runs) both become `Plugin error: <plugin gone before initialize>`
  selection   recorded cases absent from a replay made with --only/--cases are not compared
--no-normalise NAME,... turns timings, uuids or plugin_start_race off.
Scratch paths need nothing here: record.py already writes them as <workdir>, <home>, <venv>.
"""
import argparse
import difflib
import json
import re
import sys

NORMALISATIONS = {
    "timings": "keys elapsed_s and t_start_s dropped at any depth (or compared within "
               "--timing-tolerance)",
    "uuids": "8-4-4-4-12 hex UUIDs in strings replaced by <uuid>",
    "plugin_start_race": "the reference's two racy texts for a plugin that cannot start become "
                         "`Plugin error: <plugin gone before initialize>`",
    "provenance": "not compared",
    "selection": "cases missing from a replay made with --only/--cases (or with --subset) are "
                 "not compared",
}
TIMING_KEYS = ("elapsed_s", "t_start_s")
# (name, pattern, replacement): texts that legitimately differ from one run to the next
SUBSTITUTIONS = [
    ("uuids", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
     "<uuid>"),
    ("plugin_start_race",
     re.compile(r"Plugin error: (transport write: I/O error: Broken pipe \(os error 32\)"
                r"|transport read \(initialize\): unexpected EOF while reading frame header \[-32000\])"),
     "Plugin error: <plugin gone before initialize>"),
]

ORDER = ["exit_code", "stdout", "stderr", "agent_calls", "agent_prompts",
         "ext_validate_configuration", "ext_first_poll", "ext_requests", "ext_processes",
         "ext_methods", "setup_script_runs", "home_tree", "ws_tree", "checkouts_tree",
         "cwd_tree_after", "git_after"]
INPUTS = ["command", "cwd", "config", "prompt", "item_values", "note", "during",
          "files_present_before"]
AGENT_SUB = ["program", "argv", "cwd_kind", "branch", "stdin", "cwd", "toplevel", "head_subject",
             "env_added", "t_start_s"]
GIT_SUB = ["worktrees", "branches", "head", "commits_all_refs", "remotes"]
MISSING = "(missing from replay)"
EXTRA = "(not in recording)"


class Opts:
    tolerance = None
    max_lines = 30
    substitutions = SUBSTITUTIONS


def normalise(v, keep_timings=False):
    if isinstance(v, str):
        for _, pat, repl in Opts.substitutions:
            v = pat.sub(repl, v)
        return v
    if isinstance(v, list):
        return [normalise(x, keep_timings) for x in v]
    if isinstance(v, dict):
        return {normalise(k): normalise(x, keep_timings) for k, x in v.items()
                if keep_timings or k not in TIMING_KEYS}
    return v


def show(v):
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def clip(lines):
    if Opts.max_lines and len(lines) > Opts.max_lines:
        return lines[:Opts.max_lines] + ["… (%d more lines)" % (len(lines) - Opts.max_lines)]
    return lines


def line_diff(a, b):
    out = list(difflib.unified_diff(a, b, lineterm="", n=1))[2:]  # no ---/+++ header
    return clip(out)


def as_lines(v):
    """A value as lines for a line diff: lists of strings as they are, other lists one JSON
    value a line, dicts one `key: value` a line, None as no line."""
    if v is None:
        return []
    if isinstance(v, list):
        return [x if isinstance(x, str) else show(x) for x in v]
    if isinstance(v, dict):
        return ["%s: %s" % (k, show(x)) for k, x in sorted(v.items())]
    return [show(v)]


def same_scalar(key, a, b):
    if Opts.tolerance is not None and key in TIMING_KEYS and isinstance(a, (int, float)) \
            and isinstance(b, (int, float)):
        return abs(a - b) <= Opts.tolerance + 1e-9
    return a == b


def diff_value(field, label, key, a, b):
    """Differences of one value: [(field, label, detail lines)]."""
    if a == b:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += diff_value(field + "." + k, label + "." + k, k, a.get(k), b.get(k))
        return out
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return [(field, label, line_diff(as_lines(a), as_lines(b)))]
    if same_scalar(key, a, b):
        return []
    return [(field, label, ["recorded %s, replayed %s" % (show(a), show(b))])]


def diff_agent_calls(a, b):
    a, b = a or [], b or []
    out = []
    if len(a) != len(b):
        lines = ["recorded %d call(s), replayed %d" % (len(a), len(b))]
        for side, calls in (("-", a), ("+", b)):
            for i, c in enumerate(calls):
                if i >= min(len(a), len(b)):
                    lines.append("%s [%d] %s" % (side, i, show(c.get("argv"))))
        out.append(("agent_calls.count", "agent_calls", clip(lines)))
    for i in range(min(len(a), len(b))):
        ca, cb = a[i], b[i]
        subs = AGENT_SUB + sorted((set(ca) | set(cb)) - set(AGENT_SUB))
        for k in subs:
            va, vb = ca.get(k), cb.get(k)
            if va == vb:
                continue
            f, lab = "agent_calls." + k, "agent_calls[%d].%s" % (i, k)
            if k == "env_added":
                out.append((f, lab, line_diff(as_lines(va), as_lines(vb))))
            elif k == "t_start_s":
                if not same_scalar(k, va, vb):
                    out.append((f, lab, ["recorded %s, replayed %s" % (show(va), show(vb))]))
            else:  # argv, stdin, ...: one line each, easier to read than a line diff of argv
                out.append((f, lab, ["- " + show(va), "+ " + show(vb)]))
    return out


def diff_git_after(a, b):
    a, b = a or {}, b or {}
    out = []
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    if only_a or only_b:
        out.append(("git_after.checkouts", "git_after",
                    ["- checkout " + k for k in only_a] + ["+ checkout " + k for k in only_b]))
    for k in sorted(set(a) & set(b)):
        ga, gb = a[k], b[k]
        for s in GIT_SUB + sorted((set(ga) | set(gb)) - set(GIT_SUB)):
            out += diff_value("git_after." + s, "git_after[%s].%s" % (k, s), s, ga.get(s), gb.get(s))
    return out


def field_order(keys):
    known = [k for k in ORDER if k in keys]
    inputs = [k for k in INPUTS if k in keys]
    rest = sorted(k for k in keys if k not in ORDER and k not in INPUTS and k != "case")
    return known + rest + inputs


def diff_case(ra, rb):
    out = []
    for k in field_order(set(ra) | set(rb)):
        a, b = ra.get(k), rb.get(k)
        if k == "agent_calls":
            out += diff_agent_calls(a, b)
        elif k == "git_after":
            out += diff_git_after(a, b)
        elif k in ("stdout", "stderr", "config") or k.endswith("_tree") or k == "cwd_tree_after":
            if a != b:
                out.append((k, k, line_diff(as_lines(a), as_lines(b))))
        else:
            out += diff_value(k, k, k, a, b)
    return out


def matches(field, names):
    return any(field == n or field.startswith(n + ".") for n in names)


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print("compare.py: %s: %s" % (path, e), file=sys.stderr)
        sys.exit(2)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        print("compare.py: %s: not a recording ({\"provenance\", \"cases\"})" % path, file=sys.stderr)
        sys.exit(2)
    return data


def describe(prov):
    prov = prov or {}
    s = prov.get("host_version_output") or "?"
    rep = prov.get("replay")
    if rep:
        s += ", replay against " + str(rep.get("host", "?"))
    if prov.get("selection"):
        s += ", selection " + show(prov["selection"])
    if prov.get("timeout_cap_s"):
        s += ", timeout cap %ss" % prov["timeout_cap_s"]
    return s


def main(argv=None):
    ap = argparse.ArgumentParser(prog="compare.py", usage="python3 compare.py RECORDED.json REPLAYED.json [options]",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recorded", help=argparse.SUPPRESS)
    ap.add_argument("replayed", help=argparse.SUPPRESS)
    ap.add_argument("--fields", default="", help=argparse.SUPPRESS)
    ap.add_argument("--ignore", default="", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--only", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--subset", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--timing-tolerance", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--max-lines", type=int, default=30, help=argparse.SUPPRESS)
    ap.add_argument("--no-normalise", default="", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    off = {n.strip() for n in a.no_normalise.split(",") if n.strip()}
    bad = off - {"timings"} - {n for n, _, _ in SUBSTITUTIONS}
    if bad:
        ap.error("--no-normalise: unknown %s (timings, %s)" % (", ".join(sorted(bad)),
                                                             ", ".join(n for n, _, _ in SUBSTITUTIONS)))
    Opts.substitutions = [t for t in SUBSTITUTIONS if t[0] not in off]
    if "timings" in off and a.timing_tolerance is None:
        a.timing_tolerance = 0.0
    Opts.tolerance = a.timing_tolerance
    Opts.max_lines = a.max_lines
    fields = [f.strip() for f in a.fields.split(",") if f.strip()]
    ignore = [f.strip() for f in a.ignore.split(",") if f.strip()]

    A, B = load(a.recorded), load(a.replayed)
    keep_t = a.timing_tolerance is not None
    ca = [normalise(c, keep_t) for c in A["cases"]]
    cb = [normalise(c, keep_t) for c in B["cases"]]
    da, db = {c["case"]: c for c in ca}, {c["case"]: c for c in cb}
    subset = a.subset or bool((B.get("provenance") or {}).get("selection"))
    known = set()
    for c in ca + cb:
        for k, v in c.items():
            known.add(k)
            if isinstance(v, dict):
                known.update(k + "." + s for s in v)
        for call in c.get("agent_calls") or []:
            known.update("agent_calls." + s for s in call)
    known.update(["agent_calls.count", "git_after.checkouts"] + ["git_after." + s for s in GIT_SUB])
    for f in fields + ignore:
        if not any(k == f or k.startswith(f + ".") for k in known):
            print("compare.py: warning: no field %r in either file" % f, file=sys.stderr)

    names = [c["case"] for c in ca] + [c["case"] for c in cb if c["case"] not in da]
    if a.only:
        names = [n for n in names if any(s in n for s in a.only)]
    result, details = {}, {}
    compared = not_replayed = 0
    for n in names:
        ra, rb = da.get(n), db.get(n)
        if rb is None:
            if subset:
                not_replayed += 1
                continue
            result[n] = [MISSING]
            continue
        if ra is None:
            result[n] = [EXTRA]
            continue
        compared += 1
        diffs = [d for d in diff_case(ra, rb)
                 if (not fields or matches(d[0], fields)) and not matches(d[0], ignore)]
        if diffs:
            seen = []
            for d in diffs:
                if d[0] not in seen:
                    seen.append(d[0])
            result[n] = seen
            details[n] = diffs

    if a.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 1 if result else 0

    p = print
    p("recorded: %s  (%s)" % (a.recorded, describe(A.get("provenance"))))
    p("replayed: %s  (%s)" % (a.replayed, describe(B.get("provenance"))))
    p("fields:   %s%s" % (",".join(fields) or "all", (";  ignored: " + ",".join(ignore)) if ignore else ""))
    p("normalised: %s" % ", ".join(n for n in NORMALISATIONS
                                   if n not in off and not (keep_t and n == "timings"))
      + ("; timings compared within %ss" % a.timing_tolerance if keep_t else ""))
    missing = [n for n, f in result.items() if f in ([MISSING], [EXTRA])]
    p("== %d of %d compared case(s) differ%s%s" % (
        len(result) - len(missing), compared,
        ", %d case(s) missing or extra" % len(missing) if missing else "",
        ", %d recorded case(s) not replayed (selection)" % not_replayed if not_replayed else ""))
    for n, flds in result.items():
        p("")
        p("### " + n)
        if flds in ([MISSING], [EXTRA]):
            p("  " + flds[0])
            continue
        for field, label, lines in details[n]:
            if len(lines) == 1 and not lines[0].startswith(("-", "+", "@@")):
                p("  %s: %s" % (label, lines[0]))
            else:
                p("  %s:" % label)
                for l in lines:
                    p("    " + l)
    if result:
        p("")
        p("== differing fields: %s" % ", ".join(
            "%s (%d)" % (f, sum(f in v for v in result.values()))
            for f in sorted({f for v in result.values() for f in v})))
    return 1 if result else 0


if __name__ == "__main__":
    sys.exit(main())
