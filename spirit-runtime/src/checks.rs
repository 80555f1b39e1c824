//! What is checked before and after Node runs: the tool asked for, the event to
//! deliver first, the arguments against `inputSchema`, the result against
//! `outputSchema`. Spirit checks neither schema, so their problems are warnings that
//! never change the outcome. The schema rules are `spirit_manifest::runtime`'s; this
//! module points their problems into the text the user (or Node) wrote.

use serde_json::Value;
use spirit_manifest::codes::{DUPLICATE_KEY, INVALID_ARGUMENTS, INVALID_RESULT, SYNTAX};
use spirit_manifest::curupira_diagnostics::json::parse;
use spirit_manifest::curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Report};
use spirit_manifest::runtime::{InstanceProblem, check_instance};
use spirit_manifest::{ActivationEvent, PackageJson, Tool};

/// The tool `name` of `package`, or one sentence saying which tools there are.
pub fn find_tool<'p>(package: &'p PackageJson, name: &str) -> Result<&'p Tool, String> {
    let tools = package.tools();
    if let Some(tool) = tools.iter().find(|tool| tool.name == name) {
        return Ok(tool);
    }
    let names = tools.iter().map(|tool| tool.name.as_str());
    let hint = match spirit_manifest::curupira_diagnostics::did_you_mean(name, names.clone()) {
        Some(suggestion) => format!("did you mean `{suggestion}`?"),
        None if tools.is_empty() => "it contributes no tool".to_owned(),
        None => format!(
            "expected one of {}",
            names
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(format!(
        "`{}` has no tool `{}`: {hint}",
        package.name,
        name.escape_debug()
    ))
}

/// The event `--event` (`given`) names, for a run that delivers it first as Spirit's
/// event dispatch does. A tool call or a system prompt by itself carries no event
/// (`given` `None`: `Ok(Ok(None))`). Spirit's dispatch skips a package whose
/// `activationEvents` does not list the event: then `Ok(Err(warning))`, and the call
/// is made without it. `Err` is a name that is no activation event at all.
pub fn event_to_deliver(
    package: &PackageJson,
    given: Option<&str>,
) -> Result<Result<Option<ActivationEvent>, String>, String> {
    let Some(text) = given else {
        return Ok(Ok(None));
    };
    let event = ActivationEvent::from_name(text).ok_or_else(|| {
        let hint = match spirit_manifest::curupira_diagnostics::did_you_mean(
            text,
            ActivationEvent::names(),
        ) {
            Some(suggestion) => format!("did you mean `{suggestion}`?"),
            None => format!(
                "expected {}",
                spirit_manifest::curupira_diagnostics::one_of(
                    ActivationEvent::names().map(|n| format!("`{n}`"))
                )
            ),
        };
        format!(
            "`{}` is not an activation event: {hint}",
            text.escape_debug()
        )
    })?;
    let listed = &package.spirit_extension.activation_events;
    if listed.contains(&event) {
        return Ok(Ok(Some(event)));
    }
    let lists = if listed.is_empty() {
        "lists no `activationEvents`".to_owned()
    } else {
        format!(
            "lists only {}",
            listed
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Ok(Err(format!(
        "Spirit's event dispatch would not deliver `{event}` to `{}`: its `activationEvents` {lists}; the call is made without the event",
        package.name
    )))
}

/// Reads the arguments `text` (named `file` in diagnostics) and checks them against the
/// tool's `inputSchema`. `Err` is the one syntax error; otherwise the value and a
/// report of every problem (repeated members, and `spirit/invalid-arguments`
/// warnings at the pointer inside the arguments).
#[allow(clippy::result_large_err)]
pub fn check_arguments(tool: &Tool, text: &str, file: &str) -> Result<(Value, Report), Diagnostic> {
    let document = parse(text, file, SYNTAX, DUPLICATE_KEY)?;
    let map = document.source_map();
    let mut report = Report::new();
    report.add_source(file, text);
    report.extend(document.duplicates.iter().cloned());
    if let Err(problems) = check_instance(&tool.input_schema, &document.value) {
        report.extend(problems.into_iter().map(|problem| {
            located(
                INVALID_ARGUMENTS,
                file,
                problem,
                &format!("arguments of `{}` break", tool.name),
            )
            .locate(&map, text, Anchor::Value)
        }));
    }
    Ok((document.value, report))
}

/// Checks a tool's result — `text`, the `JSON.stringify(value, null, 2)` Node made,
/// and `value`, the same parsed — against its `outputSchema` (none: no problem).
pub fn check_result(tool: &Tool, text: &str, value: &Value, file: &str) -> Report {
    let mut report = Report::new();
    let Some(schema) = &tool.output_schema else {
        return report;
    };
    report.add_source(file, text);
    if let Err(problems) = check_instance(schema, value) {
        // Node's own text is strict JSON; without its spans the pointers still stand.
        let map = parse(text, file, SYNTAX, DUPLICATE_KEY)
            .map(|document| document.source_map())
            .unwrap_or_default();
        report.extend(problems.into_iter().map(|problem| {
            located(
                INVALID_RESULT,
                file,
                problem,
                &format!("result of `{}` breaks", tool.name),
            )
            .locate(&map, text, Anchor::Value)
        }));
    }
    report
}

fn located(code: &'static str, file: &str, problem: InstanceProblem, what: &str) -> Diagnostic {
    let path = JsonPointer::parse(&problem.pointer).unwrap_or_else(|_| JsonPointer::root());
    let schema = if code == INVALID_ARGUMENTS {
        "inputSchema"
    } else {
        "outputSchema"
    };
    let message = format!("the {what} its `{schema}`: {}", problem.message);
    Diagnostic::warning(code, file, path, message)
}
