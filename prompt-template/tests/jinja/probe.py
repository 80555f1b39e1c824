#!/usr/bin/env python3
"""Record the reference host's verdicts on the prompts of probes.json.

Usage: python3 probe.py OUT.json   (REF_VENV as for record.py: a venv with curupira==0.4.0)

Uses the scratch folder, stand-ins and recording extension of
recordings/reference-host/record.py (imported, not changed), with the same automation
as its "prompts" group: trigger rec/items with prompt_fields ["title", "n"], one item.
Each probe is a prompt, an item (default {"title": "hello world", "n": "1"}) and a
command: `validate`, `run --dry-run` (which validates first) or `run`.
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "recordings", "reference-host"))
import record as R  # noqa: E402

BASE = {"title": "hello world", "n": "1"}
LACKS_N = {"title": "t"}


def keyed(key, value="V"):
    return {key: value, "title": "t", "n": "1"}


# (case, prompt, item or None, command)
PROBES = [
    # `${name}` at validate: a name left alone is refused when it is near a declared one
    ("typo ${titel}", "[${titel}]", None, "dry-run"),
    ("typo ${title } (trailing space)", "[${title }]", None, "dry-run"),
    ("far name ${ missing }", "[${ missing }]", None, "dry-run"),
    ("typo ${titles}", "[${titles}]", None, "dry-run"),
    ("typo ${tit}", "[${tit}]", None, "dry-run"),
    ("typo ${x} (near n)", "[${x}]", None, "dry-run"),
    ("empty ${}", "[${}]", None, "dry-run"),
    ("blank ${ }", "[${ }]", None, "dry-run"),
    ("blank ${  }", "[${  }]", None, "dry-run"),
    ("tab ${\\t}", "[${\t}]", None, "dry-run"),
    ("not a name: quote", '[${tit"}]', None, "dry-run"),
    ("not a name: backslash", "[${titl\\}]", None, "dry-run"),
    ("not a name: line break", "[${tit\n}]", None, "validate"),
    ("name with {", "[${tit{}]", None, "validate"),
    ("name with $", "[${tit$}]", None, "validate"),
    ("name with '", "[${tit'}]", None, "validate"),
    ("name with U+0001 (debug-quoted)", "[${tit\u0001}]", None, "validate"),
    ("name with U+00A0 (debug-quoted)", "[${tit\u00a0}]", None, "validate"),
    ("name with \\r", "[${tit\r}]", None, "validate"),
    ("typo and jinja name together", "{{ zz }} ${titel}", None, "dry-run"),
    ("the same name as ${} and {{}}", "${now} {{ now }}", None, "dry-run"),
    ("syntax error before unknown fields", "${titel} {{ oops", None, "dry-run"),
    ("unknown ${} inside a tag", "{{ oops ${titel}", None, "dry-run"),
    # how a known name is written into the Jinja text
    ("key with quote is never rewritten", '[${a"b}] {% raw %}${a"b}{% endraw %}', keyed('a"b'), "dry-run"),
    ("key with backslash is never rewritten", "[${a\\b}] {% raw %}${a\\b}{% endraw %}", keyed("a\\b"), "dry-run"),
    ("key with apostrophe", "[${a'b}] {% raw %}${a'b}{% endraw %}", keyed("a'b"), "dry-run"),
    ("key with line break is never rewritten", "[${a\nb}] {% raw %}${a\nb}{% endraw %}", keyed("a\nb"), "dry-run"),
    ("key with space", "[${a b}] {% raw %}${a b}{% endraw %}", keyed("a b"), "dry-run"),
    ("key with tab", "[${a\tb}] {% raw %}${a\tb}{% endraw %}", keyed("a\tb"), "dry-run"),
    ("key with CR", "[${a\rb}] {% raw %}${a\rb}{% endraw %}", keyed("a\rb"), "dry-run"),
    ("key with U+0001: bad escape", "[${a\u0001b}]", keyed("a\u0001b"), "dry-run"),
    ("key with U+0001 in raw", "{% raw %}${a\u0001b}{% endraw %}", keyed("a\u0001b"), "dry-run"),
    ("key with NUL", "[${a\u0000b}]", keyed("a\u0000b"), "dry-run"),
    ("key with U+00A0: bad escape", "[${a\u00a0b}] {% raw %}${a\u00a0b}{% endraw %}", keyed("a\u00a0b"), "dry-run"),
    ("key with {", "[${a{b}] {% raw %}${a{b}{% endraw %}", keyed("a{b"), "dry-run"),
    ("key with $", "[${a$b}] {% raw %}${a$b}{% endraw %}", keyed("a$b"), "dry-run"),
    ("key with %", "[${a%b}] {% raw %}${a%b}{% endraw %}", keyed("a%b"), "dry-run"),
    ("key with #", "[${a#b}] {% raw %}${a#b}{% endraw %}", keyed("a#b"), "dry-run"),
    ("scan resumes after ${ of a non-name", "[${a\"${title}] [${a\n${title}] [${a\\${title}]", None, "dry-run"),
    ("scan resumes after ${ of an unknown name", "[${a${title}]", None, "dry-run"),
    ("substitution breaks the syntax at render", '{{ "${extra}" }}', {"title": "t", "n": "1", "extra": "X"}, "dry-run"),
    ("substitution breaks the syntax at render, line 2", 'line1\n{{ "${extra}" }}', {"title": "t", "n": "1", "extra": "X"}, "dry-run"),
    ("item key _fields: ${_fields}", "[${_fields}]", {"_fields": "F", "title": "t", "n": "1"}, "dry-run"),
    ("item key _fields: {{ _fields }}", "[{{ _fields }}]", {"_fields": "F", "title": "t", "n": "1"}, "dry-run"),
    ("item key _fields: available fields", "{{ self }}", {"_fields": "F", "title": "t", "n": "1"}, "dry-run"),
    ("value is {{ _fields }}", "[${title}] [${title}]", {"title": "{{ _fields }}", "n": "1"}, "dry-run"),
    # suggestions: Levenshtein at most 2, case-sensitive
    ("suggestions: sorted, each once", "{{ zz }}{{ aa }}{{ zz }}", None, "dry-run"),
    ("suggestions: now, zz, env", "{{ now }}{{ zz }}{{ env }}", None, "dry-run"),
    ("suggestions: one and two edits, not three", "{{ titles }}{{ titlexx }}{{ titlexxx }}", None, "dry-run"),
    ("suggestions: no prefix rule", "{{ repo }}{{ automat }}{{ x }}{{ ab }}{{ nn }}", None, "dry-run"),
    ("suggestions: no transpositions, case-sensitive", "{{ repostiroy }}{{ auotmaiton }}{{ TITLE }}{{ Title }}", None, "dry-run"),
    ("x is defined for an undeclared x", "{% if x is defined %}y{% endif %}", None, "validate"),
    # the quoted line of an error
    ("line trimmed", "   {{ title | }}   ", None, "dry-run"),
    ("error at the end, trailing newline", "{% if n %}x\n", None, "dry-run"),
    ("error at the end, two lines", "{% if n %}\nx", None, "dry-run"),
    ("undefined on line 2", "{{ title }}\n{{ self }}", None, "dry-run"),
    ("undefined on line 3, blanks around", "{{ title }}\n\n  {{ self }}  \n", None, "dry-run"),
    ("unknown filter on line 2 inside if", "{% if true %}\n{{ title | nosuchfilter }}\n{% endif %}", None, "dry-run"),
    ("unknown filter on line 2", "{{ title }}\n{{ title | nosuchfilter }}", None, "dry-run"),
    ("unknown filter, line shown as written", "${title} {{ title | nosuchfilter }}", None, "dry-run"),
    ("syntax: empty if", "{{ title }}\n{% if %}", None, "dry-run"),
    ("syntax: dangling ~", "{{ title }}\n{{ 'a' ~ }}\nmore", None, "dry-run"),
    ("syntax: for without in", "ab\n  {% for %}", None, "dry-run"),
    ("syntax: unclosed comment, line past the end", "a\n{# never closed\nb\n", None, "dry-run"),
    ("syntax: unclosed string", "a\n{{ 'never closed\nb\n", None, "dry-run"),
    ("syntax: unclosed raw", "a\n{% raw %}\nb\n", None, "dry-run"),
    ("syntax: endif closes a for", "{% if n %}\n{% for x in title %}\n{{ x }}\n{% endif %}", None, "dry-run"),
    ("syntax: stray endfor", "{{ title }}{% endfor %}", None, "dry-run"),
    ("syntax: end of input on a blank line", "{{ 'a' ~\n   ", None, "dry-run"),
    ("syntax: variable block over blank lines", "{{\n\n}}", None, "dry-run"),
    ("syntax: unicode in the quoted line", "ação ☃ {{ ", None, "dry-run"),
    ("syntax: unicode identifier", "{{ ação }}", None, "dry-run"),
    ("bad escape at validate", '{{ "\\u{1}" }}', None, "validate"),
    # rendering
    ("_fields['nope']", "{{ _fields['nope'] }}", None, "dry-run"),
    ("_fields.nope", "{{ _fields.title }}|{{ _fields.nope }}", None, "dry-run"),
    ("_fields['n'] for an item without n", "{{ _fields['n'] }}", LACKS_N, "dry-run"),
    ("available fields list item keys", "{{ self }}", {"title": "t", "n": "1", "extra": "X", "a.b": "d"}, "dry-run"),
    ("globals are unknown fields", "{{ range(3) | list }}", None, "dry-run"),
    ("python-like reprs", "{{ [1, 'a', none, true] }} {{ {'k': 1} }} {{ n | int }}", None, "dry-run"),
    ("_fields reaches undeclared keys", "{{ _fields.extra }}|{{ _fields['a.b'] }}", {"title": "t", "n": "1", "extra": "X", "a.b": "D"}, "dry-run"),
    ("loop variable after the loop", "{{ title }}{% for x in [1] %}{{ loop.index }}{{ x }}{% endfor %}{{ x }}", None, "dry-run"),
    ("macro", "{% macro m() %}{{ title }}{% endmacro %}{{ m() }}", None, "dry-run"),
    ("include", "{% include 'x' %}", None, "dry-run"),
    ("extends at validate", "{% extends 'x' %}", None, "validate"),
    ("extends", "{% extends 'x' %}", None, "dry-run"),
    ("import at validate", "{% import 'x' as y %}", None, "validate"),
    ("block and self", "x\n{% block b %}{% endblock %}{{ self.b() }}", None, "dry-run"),
    ("too many arguments", "{{ title | upper(1) }}", None, "dry-run"),
    ("division by zero", "{{ 1 / 0 }}", None, "dry-run"),
    ("missing attribute", "{{ title.nope }}", None, "dry-run"),
    ("string plus number", "{{ n + 1 }}", None, "dry-run"),
    ("default without argument", "{{ title | default }}{{ n | default('x') }}", LACKS_N, "dry-run"),
    ("strict: is defined", "[{{ n is defined }}]", LACKS_N, "dry-run"),
    ("strict: is undefined", "[{{ n is undefined }}]", LACKS_N, "dry-run"),
    ("strict: if", "[{% if n %}y{% endif %}]", LACKS_N, "dry-run"),
    ("strict: or", "[{{ n or 'z' }}]", LACKS_N, "dry-run"),
    ("strict: for", "[{% for c in n %}{% endfor %}]", LACKS_N, "dry-run"),
    ("strict: filter", "[{{ n | upper }}]", LACKS_N, "dry-run"),
    ("strict: concatenation", "{{ n ~ 'x' }}", LACKS_N, "dry-run"),
    ("set block; truncate is unknown", "{% set x %}a{% endset %}{{ x }}{{ title|truncate(3) }}", None, "dry-run"),
    ("center is unknown", "{{ title|indent(2) }}|{{ title|center(15) }}", None, "dry-run"),
    ("unpacking, sort, tests, float", "{% for a, b in [[1, 2]] %}{{ a }}{{ b }}{% endfor %}{{ [3,1,2]|sort }}{{ 'x' is string }}{{ n|float }}", None, "dry-run"),
    ("break is not a statement", "{% for x in [1,2,3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}", None, "dry-run"),
    ("loop.previtem on the first round", "{% for x in [1,2,3] %}{{ loop.previtem }}{% endfor %}", None, "dry-run"),
    ("loop.nextitem", "{% for x in [1,2] %}{% if loop.first %}{{ loop.nextitem }}{% endif %}{% endfor %}", None, "dry-run"),
    ("no python string methods", "{{ title.upper() }}", None, "dry-run"),
    ("format filter", "{{ title|format(1) }}{{ '%s-%d'|format('a', 2) }}", None, "dry-run"),
    ("numbers, none and booleans", "{{ 1.0 }} {{ 1.5 }} {{ 10 // 3 }} {{ 2 ** 10 }} {{ 'a' * 3 }} {{ 1e3 }} {{ none }} {{ true }}", None, "dry-run"),
    ("filter and with blocks", "{% filter upper %}{{ title }}{% endfilter %}{% with a = n %}{{ a }}{% endwith %}", None, "dry-run"),
    # whitespace, as the agent receives it
    ("lstrip_blocks on, trim_blocks off", "{% if true %}\nx{% endif %}\n  {% if true %}y{% endif %}", None, "run"),
    ("{%+ keeps the indentation", "a {# c #}\n  {%+ if true %}z{% endif %}", None, "run"),
    ("two trailing newlines", "line\n\n", None, "run"),
    ("CRLF kept", "line\r\n", None, "run"),
    ("trailing newline after a variable", "{{ title }}\n", None, "run"),
    ("{%- at the start", "  {%- if true %}a{% endif %}", None, "run"),
]

COMMANDS = {"validate": ["validate"], "dry-run": ["run", "--dry-run"], "run": ["run"]}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    R.setup_workdir()
    cases = []
    try:
        for case, prompt, item, command in PROBES:
            item = item or BASE
            conf = R.config(autos=R.automation(prompt=prompt))
            args = COMMANDS[command] + ["--config", "settings.toml"]
            r = R.run("%s [%s]" % (case, command), conf, args, items={"items.json": [item]},
                      trees=False, record_ext=False)
            rec = {k: r[k] for k in ("case", "command", "exit_code", "stdout", "stderr")}
            rec["prompt"] = prompt
            rec["item_values"] = item
            if command == "run":
                rec["agent_prompts"] = [c["argv"][-1] for c in r["agent_calls"]]
            cases.append(rec)
    finally:
        shutil.rmtree(R.W, ignore_errors=True)
    prov = {"recorded": R.time.strftime("%Y-%m-%d"), "host": "curupira 0.4.0 (PyPI wheel, Rust binary)",
            "by": "prompt-template/tests/jinja/probe.py"}
    with open(sys.argv[1], "w") as f:
        json.dump({"provenance": prov, "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
