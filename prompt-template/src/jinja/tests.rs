use super::*;

const DECLARED: [&str; 4] = ["automation", "repository", "title", "n"];
const HOST: [(&str, &str); 2] = [("automation", "e1"), ("repository", "acme/widgets")];

fn compile(source: &str) -> Result<JinjaPrompt, JinjaError> {
    JinjaPrompt::compile(source, DECLARED)
}

fn render(source: &str, item: &[(&str, &str)]) -> Result<String, JinjaError> {
    compile(source)?.render(item.iter().copied().chain(HOST))
}

fn hello(source: &str) -> String {
    render(source, &[("title", "hello world"), ("n", "1")]).unwrap()
}

#[test]
fn filters() {
    assert_eq!(hello("{{ title | upper }}"), "HELLO WORLD");
    assert_eq!(
        hello(
            "{{ title | title }}|{{ title | length }}|{{ title | replace('o', '0') }}|{{ '  x ' | trim }}"
        ),
        "Hello World|11|hell0 w0rld|x"
    );
    assert_eq!(hello("{{ n | int + 1 }}"), "2");
    assert_eq!(hello("{% filter upper %}{{ n }}a{% endfilter %}"), "1A");
}

#[test]
fn conditionals_compare_strings() {
    let prompt = "{% if n == \"1\" %}one{% elif n == 1 %}int{% else %}other{% endif %}";
    assert_eq!(hello(prompt), "one");
    assert_eq!(
        render(prompt, &[("title", "t"), ("n", "2")]).unwrap(),
        "other"
    );
    assert_eq!(
        hello("{% if n == 1 %}int{% else %}not-int{% endif %}"),
        "not-int"
    );
}

#[test]
fn loops_sets_macros_and_whitespace() {
    assert_eq!(
        hello("{% for c in n ~ title[:2] %}{{ c }}.{% endfor %}"),
        "1.h.e."
    );
    assert_eq!(hello("{% set y = title ~ '!' %}{{ y }}"), "hello world!");
    assert_eq!(
        hello("{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m(n) }}"),
        "<1>"
    );
    assert_eq!(hello("a\n{%- if true -%}\n b \n{%- endif -%}\nc"), "abc");
    // Blocks are left-stripped; the line break after a tag is kept, and so is the last.
    assert_eq!(
        hello("{% if true %}\nx{% endif %}\n  {% if true %}y{% endif %}\n"),
        "\nx\ny\n"
    );
}

#[test]
fn values_are_never_run_as_templates() {
    let item = [("title", "{{ 7*7 }} ${n} {% if %}"), ("n", "1")];
    assert_eq!(
        render("${title}|{{ title }}", &item).unwrap(),
        "{{ 7*7 }} ${n} {% if %}|{{ 7*7 }} ${n} {% if %}"
    );
    assert_eq!(
        render("${title}", &[("title", "{{ oops"), ("n", "1")]).unwrap(),
        "{{ oops"
    );
    // No auto-escaping either.
    assert_eq!(
        render("{{ title }}", &[("title", "<b>&\"'")]).unwrap(),
        "<b>&\"'"
    );
}

#[test]
fn dollar_placeholders_rewrite_to_field_lookups() {
    assert_eq!(hello("Item ${n}: ${title}"), "Item 1: hello world");
    assert_eq!(
        hello("{% raw %}${title}{% endraw %}"),
        r#"{{ _fields["title"] }}"#
    );
    assert_eq!(
        hello("[${missing}] [$title] [$${title}] [${title:-x}]"),
        "[${missing}] [$title] [$hello world] [${title:-x}]"
    );
    assert_eq!(hello(r#"{{ "${" ~ "title}" }}"#), "${title}");
    assert_eq!(
        hello("{{ _fields }}"),
        "{'automation': 'e1', 'n': '1', 'repository': 'acme/widgets', 'title': 'hello world'}"
    );
}

#[test]
fn render_knows_the_item_keys_compile_knows_the_declared_names() {
    // `extra` is not declared: left alone at compile, substituted at render.
    let item = [
        ("title", "t"),
        ("n", "1"),
        ("extra", "X"),
        ("a.b", "dotted"),
    ];
    assert_eq!(
        render("[${extra}] [${a.b}] [${missing}]", &item).unwrap(),
        "[X] [dotted] [${missing}]"
    );
    // `n` is declared but this item lacks it: left as written.
    assert_eq!(render("[${n}]", &[("title", "t")]).unwrap(), "[${n}]");
    // A substitution can break the syntax at render only.
    let error = render(r#"{{ "${extra}" }}"#, &item).unwrap_err();
    assert_eq!(error.kind(), &JinjaErrorKind::Syntax);
    assert!(
        error
            .to_string()
            .contains(r#"(line 1: "{{ \"${extra}\" }}")"#),
        "{error}"
    );
}

#[test]
fn a_broken_template_reports_line_and_column() {
    let error = compile("line1\nline2\n  {{ title | }}").unwrap_err();
    assert_eq!(error.kind(), &JinjaErrorKind::Syntax);
    assert_eq!(
        error.to_string(),
        "prompt template error: unexpected end of variable block, expected identifier. \
         Jinja blocks look like {% if x %}...{% endif %} and {% for a in b %}...{% endfor %} \
         (line 3: \"{{ title | }}\")"
    );
    let location = error.location().unwrap();
    assert_eq!((location.line, location.column), (3, 14));
    assert_eq!(&"line1\nline2\n  {{ title | }}"[location.offset..], "}}");

    // Columns are counted in the prompt as written, before the pre-pass.
    let error = compile("${title} {{ oops ${title}").unwrap_err();
    let location = error.location().unwrap();
    assert_eq!((location.line, location.column), (1, 18));

    let error = compile("a\n{# never closed\nb\n").unwrap_err();
    assert!(error.to_string().ends_with(" (line 4)"), "{error}");
}

#[test]
fn unknown_fields_come_sorted_with_suggestions_and_locations() {
    let error =
        compile("{{ zz }}\n{{ now }} ${titel} ${missing} {{ range(3) }} {{ now }}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "prompt uses unknown field(s) \"now\" (did you mean \"n\"?), \"range\", \
         \"titel\" (did you mean \"title\"?), \"zz\" (did you mean \"n\"?). \
         Available fields: automation, n, repository, title"
    );
    let JinjaErrorKind::UnknownFields { fields } = error.kind() else {
        panic!("{error:?}");
    };
    let summary: Vec<_> = fields
        .iter()
        .map(|f| {
            let at = f.location.unwrap();
            (f.name.as_str(), f.suggestion.as_deref(), at.line, at.column)
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("now", Some("n"), 2, 4),
            ("range", None, 2, 34),
            ("titel", Some("title"), 2, 11),
            ("zz", Some("n"), 1, 4),
        ]
    );
    assert_eq!(error.location().map(|at| at.line), Some(1));
}

#[test]
fn what_compile_allows() {
    for source in [
        "{{ _fields['title'] }}",
        "{{ self }}",
        "{% for x in [1] %}{{ loop.index }}{{ x }}{% endfor %}",
        "{{ title | nosuchfilter }}",
        "[${}] [${tit\"}] [${ missing }] [${issue-number}]",
    ] {
        assert!(compile(source).is_ok(), "{source}");
    }
    let error = compile("[${ title }]").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(r#"prompt uses unknown field(s) " title " (did you mean "title"?)."#),
        "{error}"
    );
    let error = compile("{{ issue-number }}").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(r#"prompt uses unknown field(s) "issue", "number"."#),
        "{error}"
    );
}

#[test]
fn render_errors() {
    let error = render("x\n  [{{ n }}]", &[("title", "t")]).unwrap_err();
    assert_eq!(error.kind(), &JinjaErrorKind::Undefined);
    assert_eq!(
        error.to_string(),
        "prompt template error: a field used by the prompt has no value for this task (use \
         {{ name | default(\"\") }} for optional fields; if the braces are literal text, wrap \
         it in {% raw %}...{% endraw %}) (line 2: \"[{{ n }}]\"). Available fields: \
         automation, repository, title"
    );
    assert_eq!(error.location().map(|at| at.line), Some(2));
    assert_eq!(
        render(
            "[{{ n | default('none') }}|{{ n is defined }}]",
            &[("title", "t")]
        )
        .unwrap(),
        "[none|False]"
    );

    let error = render("{{ title | nosuchfilter }}", &[("title", "t")]).unwrap_err();
    assert_eq!(error.kind(), &JinjaErrorKind::UnknownFilter);
    assert_eq!(
        error.to_string(),
        "prompt template error: filter nosuchfilter is unknown (line 1: \"{{ title | nosuchfilter }}\")"
    );

    let error = render("{{ title | upper(1) }}", &[("title", "t")]).unwrap_err();
    assert_eq!(error.kind(), &JinjaErrorKind::Other);
    assert!(
        error
            .to_string()
            .starts_with("prompt template error: too many arguments (in <string>:1)")
    );
}

#[test]
fn the_first_value_of_a_key_wins() {
    let prompt = JinjaPrompt::compile("${title}", ["title"]).unwrap();
    assert_eq!(
        prompt.render([("title", "a"), ("title", "b")]).unwrap(),
        "a"
    );
    assert_eq!(prompt.source(), "${title}");
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    /// Prompts over an alphabet where delimiters, quotes and names collide often.
    fn prompt() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "{{", "}}", "{%", "%}", "{#", "#}", "${", "}", "{", "$", "\"", "'", "\\", "\n",
                " ", "n", "title", "x", "|", "upper", "if", "endif", "raw", "endraw", "é", ".",
                "-", "~", "(", ")",
            ]),
            0..24,
        )
        .prop_map(|parts| parts.concat())
    }

    fn check_location(source: &str, location: Option<Location>) {
        if let Some(location) = location {
            assert!(
                location.offset <= source.len(),
                "{location:?} in {source:?}"
            );
            assert!(
                source.is_char_boundary(location.offset),
                "{location:?} in {source:?}"
            );
            assert!(location.line >= 1 && location.column >= 1, "{location:?}");
        }
    }

    proptest! {
        #[test]
        fn compile_and_render_report_errors_inside_the_prompt(source in prompt()) {
            match compile(&source) {
                Err(error) => {
                    check_location(&source, error.location());
                    if let JinjaErrorKind::UnknownFields { fields } = error.kind() {
                        for field in fields {
                            check_location(&source, field.location);
                        }
                    }
                }
                Ok(prompt) => {
                    let item = [("title", "t ${n} {{ x }}"), ("n", "1"), ("é", "e")];
                    if let Err(error) = prompt.render(item.into_iter().chain(HOST)) {
                        check_location(&source, error.location());
                    }
                }
            }
        }

        #[test]
        fn nothing_known_means_nothing_rewritten(source in prompt()) {
            let rewritten = rewrite::rewrite(&source, |_| false);
            prop_assert_eq!(&rewritten.text, &source);
        }
    }
}
