//! The typed `package.json` of a Spirit extension: serde types only, no checking logic.
//!
//! A [`PackageJson`] is built only from a document the validator accepted, so its
//! closed sets are enums and its required members are plain fields. Members this
//! format does not define are kept in `other` maps (the validator warns about those
//! inside `spiritExtension`; top-level ones are ordinary npm fields such as `scripts`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Members of an object that this format does not define, kept as written.
pub type Other = BTreeMap<String, Value>;

/// The members each object of the format defines, in the documentation's order (the
/// validator warns about the others; the model keeps them in `other`).
pub(crate) mod keys {
    pub const PACKAGE: [&str; 9] = [
        "name",
        "version",
        "description",
        "author",
        "homepage",
        "main",
        "repository",
        "keywords",
        "spiritExtension",
    ];
    pub const PERSON: [&str; 1] = ["name"];
    pub const REPOSITORY: [&str; 2] = ["type", "url"];
    pub const SPIRIT: [&str; 9] = [
        "schemaVersion",
        "displayName",
        "icon",
        "supportedHosts",
        "activationEvents",
        "requestedCapabilities",
        "contributes",
        "settingsSchema",
        "secretSlots",
    ];
    pub const CONTRIBUTES: [&str; 3] = ["tools", "desktop", "cli"];
    pub const TOOL: [&str; 6] = [
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "approvalMode",
        "executionMode",
    ];
    pub const DESKTOP: [&str; 2] = ["css", "settingsPage"];
    pub const STYLESHEET: [&str; 2] = ["path", "media"];
    pub const SETTINGS_PAGE: [&str; 1] = ["title"];
    pub const CLI: [&str; 1] = ["hooks"];
    pub const HOOKS_REF: [&str; 1] = ["path"];
    pub const SETTING: [&str; 8] = [
        "key",
        "type",
        "title",
        "description",
        "placeholder",
        "required",
        "defaultValue",
        "options",
    ];
    pub const OPTION: [&str; 3] = ["value", "label", "description"];
    pub const SECRET: [&str; 4] = ["key", "title", "description", "required"];
    pub const HOOKS_FILE: [&str; 1] = ["hooks"];
    pub const HOOK: [&str; 5] = ["slot", "variant", "tokens", "prefix", "suffix"];
    pub const TOKENS: [&str; 3] = ["foreground", "border", "accent"];
}

/// The members of `value` (an object) outside `known`, cloned.
fn others(value: Option<&Value>, known: &[&str]) -> Other {
    match value {
        Some(Value::Object(map)) => map
            .iter()
            .filter(|(key, _)| !known.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
        _ => Other::new(),
    }
}

/// Each tool's `inputSchema` and `outputSchema`, taken out of the document (a `null`
/// left in their place).
fn take_schemas(value: &mut Value) -> Vec<(Value, Option<Value>)> {
    let tools = value
        .pointer_mut("/spiritExtension/contributes/tools")
        .and_then(Value::as_array_mut);
    let Some(tools) = tools else {
        return Vec::new();
    };
    tools
        .iter_mut()
        .map(|tool| {
            let input = tool
                .get_mut("inputSchema")
                .map(Value::take)
                .unwrap_or_default();
            let output = tool.get_mut("outputSchema").map(Value::take);
            (input, output)
        })
        .collect()
}

/// The elements of `value` (an array), or none.
fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The only `spiritExtension.schemaVersion` there is.
pub const SCHEMA_VERSION: u64 = 1;

/// A Spirit extension's `package.json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(title = "package.json (Spirit extension)")
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageJson {
    /// The npm package name, which is also the extension id; at most 178 characters,
    /// the longest id the Spirit app can install.
    #[cfg_attr(
        feature = "schema",
        schemars(pattern(crate::json_schema::PACKAGE_NAME), length(min = 1, max = 178))
    )]
    pub name: String,
    /// The version: SemVer, as npm and the registry need (the Spirit app takes any
    /// non-empty string).
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
    pub version: String,
    /// One line about the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The author: a string (`"Ann <ann@example.com>"`) or `{ "name": … }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Person>,
    /// The project's home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Relative path of the module whose `activate` Spirit calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main: Option<String>,
    /// Where the source lives: a string or `{ "type", "url" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    /// Search keywords.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keywords: Option<Vec<String>>,
    /// What makes the package a Spirit extension.
    pub spirit_extension: SpiritExtension,
    /// Every other member (`scripts`, `dependencies`, …), kept as written.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// `author`: a string or an object with a `name`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Person {
    /// `"Ann <ann@example.com> (https://ann.example)"`.
    Text(String),
    /// `{ "name": "Ann", "email"?: …, "url"?: … }`.
    Object {
        /// The person's name.
        name: String,
        /// The rest (`email`, `url`), kept as written.
        #[serde(flatten, skip_deserializing)]
        other: Other,
    },
}

/// `repository`: a string (`"github:acme/x"`, a URL) or `{ "type", "url" }`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Repository {
    /// A URL or an npm shorthand.
    Text(String),
    /// `{ "type": "git", "url": "…", "directory"?: "…" }`.
    Object {
        /// The version control system, usually `git`.
        #[serde(rename = "type")]
        kind: String,
        /// Where to clone from.
        url: String,
        /// The rest (`directory`), kept as written.
        #[serde(flatten, skip_deserializing)]
        other: Other,
    },
}

/// The `spiritExtension` object.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpiritExtension {
    /// Always 1 (the default when it is left out).
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1)))]
    #[serde(default = "default_schema_version")]
    pub schema_version: u64,
    /// The name people see.
    pub display_name: String,
    /// Relative path of the icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The hosts the extension runs in; non-empty, no repeats.
    pub supported_hosts: Vec<Host>,
    /// When Spirit calls `activate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activation_events: Vec<ActivationEvent>,
    /// What the extension asks the host for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested_capabilities: Vec<Capability>,
    /// Tools, desktop and CLI contributions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contributes: Option<Contributes>,
    /// The settings the user can set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_schema: Vec<SettingDef>,
    /// The secrets the extension may store and read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_slots: Vec<SecretSlot>,
    /// Members this format does not define (each one was warned about).
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

fn default_schema_version() -> u64 {
    SCHEMA_VERSION
}

curupira_diagnostics::closed_set! {
    /// A Spirit host an extension is installed for.
    Host {
        /// The terminal app.
        Cli = "cli",
        /// The desktop app.
        Desktop = "desktop",
    }
}

curupira_diagnostics::closed_set! {
    /// When Spirit calls an extension's `activate`.
    ActivationEvent {
        /// The host warms up.
        OnStartup = "onStartup",
        /// Right after an install from a ZIP or the marketplace.
        OnExtensionInstalled = "onExtensionInstalled",
        /// A session becomes active.
        OnSessionOpened = "onSessionOpened",
        /// A session is reset.
        OnSessionReset = "onSessionReset",
        /// The user sends a message.
        OnUserMessage = "onUserMessage",
        /// A tool is about to run.
        OnToolCall = "onToolCall",
        /// A tool result is available.
        OnToolResult = "onToolResult",
        /// An approval decision is made.
        OnApprovalResolved = "onApprovalResolved",
    }
}

curupira_diagnostics::closed_set! {
    /// What an extension asks its host for.
    Capability {
        /// Expose `contributes.tools` to the model (with `tool-execution`).
        ToolDefinitions = "tool-definitions",
        /// Run those tools (with `tool-definitions`).
        ToolExecution = "tool-execution",
        /// Contribute a system prompt fragment (needs `main`).
        SystemPrompt = "system-prompt",
        /// Desktop styling (paired with `contributes.desktop`).
        DesktopUi = "desktop-ui",
        /// CLI styling (paired with `contributes.cli`).
        CliUi = "cli-ui",
        /// Declaration only: approval follows each tool's `approvalMode`.
        ApprovalFlow = "approval-flow",
        /// Declaration only: questions follow `approvalMode: need-questions`.
        QuestionsFlow = "questions-flow",
        /// Declaration only: settings come from `settingsSchema`.
        Settings = "settings",
        /// Secret storage, used with `secretSlots`.
        SecretStorage = "secret-storage",
        /// Declaration only.
        StructuredResults = "structured-results",
    }
}

curupira_diagnostics::closed_set! {
    /// Whether a tool call needs the user first.
    ApprovalMode {
        /// Runs without asking.
        Allowed = "allowed",
        /// The user approves each call.
        NeedApproval = "need-approval",
        /// The user answers questions first (`questionsResult`).
        NeedQuestions = "need-questions",
    }
}

curupira_diagnostics::closed_set! {
    /// Whether the model waits for a tool.
    ExecutionMode {
        /// The model waits for the result.
        Foreground = "foreground",
        /// The tool runs on while the conversation goes on.
        Background = "background",
    }
}

curupira_diagnostics::closed_set! {
    /// The type of a setting.
    SettingType {
        /// Free text.
        String = "string",
        /// On or off.
        Boolean = "boolean",
        /// A number.
        Number = "number",
        /// One of `options[].value`.
        Select = "select",
    }
}

curupira_diagnostics::closed_set! {
    /// A slot of the CLI's terminal UI that a hook styles.
    Slot {
        /// A message the user sent.
        MessageUser = "message.user",
        /// A message of the assistant.
        MessageAssistant = "message.assistant",
        /// A tool message.
        MessageTool = "message.tool",
        /// The assistant's thinking.
        AssistantThinking = "assistant.thinking",
        /// The input box frame.
        InputFrame = "input.frame",
        /// The form under the input.
        BottomForm = "bottom_form",
        /// One section of that form.
        BottomFormSection = "bottom_form.section",
        /// The slash-command suggestions.
        SlashSuggestions = "slash_suggestions",
        /// The approval panel.
        ApprovalPanel = "approval.panel",
        /// The questions panel.
        QuestionsPanel = "questions.panel",
    }
}

curupira_diagnostics::closed_set! {
    /// How a CLI hook styles its slot.
    Variant {
        /// As the theme has it.
        Default = "default",
        /// Emphasised.
        Accented = "accented",
        /// Subdued.
        Muted = "muted",
        /// A warning.
        Warning = "warning",
        /// A success.
        Success = "success",
        /// A danger.
        Danger = "danger",
    }
}

curupira_diagnostics::closed_set! {
    /// A theme colour role for a CLI hook's tokens.
    TokenRole {
        /// The default colour.
        Default = "default",
        /// The primary colour.
        Primary = "primary",
        /// The secondary colour.
        Secondary = "secondary",
        /// Subdued.
        Muted = "muted",
        /// The accent colour.
        Accent = "accent",
        /// Success.
        Success = "success",
        /// Warning.
        Warning = "warning",
        /// Danger.
        Danger = "danger",
    }
}

/// `spiritExtension.contributes`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Contributes {
    /// Tools the model can call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// Desktop styling and settings page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desktop: Option<DesktopContribution>,
    /// CLI hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<CliContribution>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// One entry of `contributes.tools`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name in the manifest (`lookup_item`); the model sees
    /// [`invocation_name`](crate::invocation_name) instead.
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::IDENTIFIER)))]
    pub name: String,
    /// What the model is told the tool does.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub input_schema: Value,
    /// The JSON Schema of the result, when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Whether a call needs the user first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_mode: Option<ApprovalMode>,
    /// Whether the model waits for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_mode: Option<ExecutionMode>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// `contributes.desktop`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesktopContribution {
    /// Style sheets the desktop app loads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub css: Vec<Stylesheet>,
    /// A settings page: `true`, `{}` or `{ "title" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_page: Option<SettingsPage>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// One `contributes.desktop.css[]` entry.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stylesheet {
    /// Relative path of the CSS file.
    pub path: String,
    /// A CSS media query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// `contributes.desktop.settingsPage`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SettingsPage {
    /// `true`.
    Enabled(bool),
    /// `{}` or `{ "title": … }`.
    Titled {
        /// The page's title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Members this format does not define.
        #[serde(flatten, skip_deserializing)]
        other: Other,
    },
}

/// `contributes.cli`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CliContribution {
    /// Where the hooks file is: `{ "path": "cli-hooks.json" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<HooksRef>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// `contributes.cli.hooks`: the path of the hooks file, never the hooks themselves.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HooksRef {
    /// Relative path of the file holding `{ "hooks": [...] }`.
    pub path: String,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// The hooks file that `contributes.cli.hooks.path` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HooksFile {
    /// The hooks, in order.
    pub hooks: Vec<CliHook>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// One CLI hook: how one slot of the terminal UI is styled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliHook {
    /// The slot styled.
    pub slot: Slot,
    /// The variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    /// Colour roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// Text before the slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Text after the slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suffix: Option<String>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// A CLI hook's colour roles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Tokens {
    /// Text colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground: Option<TokenRole>,
    /// Border colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub border: Option<TokenRole>,
    /// Accent colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accent: Option<TokenRole>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// One `settingsSchema[]` entry.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingDef {
    /// The key (`ctx.settings.get(key)`).
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::IDENTIFIER)))]
    pub key: String,
    /// The value's type.
    #[serde(rename = "type")]
    pub kind: SettingType,
    /// The label in the settings UI.
    pub title: String,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Shown in an empty field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Whether the setting must have a value (so `null` cannot clear it).
    #[serde(default)]
    pub required: bool,
    /// The value when none was set; matches `type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_value: Option<Value>,
    /// The choices of a `select`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SelectOption>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// One choice of a `select` setting.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectOption {
    /// The value stored.
    pub value: String,
    /// What the user sees.
    pub label: String,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

/// One `secretSlots[]` entry.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecretSlot {
    /// The key (`ctx.secrets.get(key)`).
    pub key: String,
    /// The label in the UI.
    pub title: String,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the extension needs it set.
    #[serde(default)]
    pub required: bool,
    /// Members this format does not define.
    #[serde(flatten, skip_deserializing)]
    pub other: Other,
}

impl PackageJson {
    /// Reads a document the validator accepted. serde's `flatten` would buffer every
    /// subtree (tool schemas included) to find the unknown members, so the known
    /// members are read by serde and the `other` maps are filled here from the
    /// document, which costs nothing when there are none.
    ///
    /// The tool schemas, the bulk of a package, are moved into the model rather than
    /// rebuilt by serde node by node.
    pub(crate) fn from_checked(mut value: Value) -> Result<Self, serde_json::Error> {
        let found = Others::of_package(&value);
        let schemas = take_schemas(&mut value);
        let mut package: PackageJson = serde_json::from_value(value)?;
        found.attach(&mut package);
        if let Some(contributes) = &mut package.spirit_extension.contributes {
            for (tool, (input, output)) in contributes.tools.iter_mut().zip(schemas) {
                tool.input_schema = input;
                if output.is_some() {
                    tool.output_schema = output;
                }
            }
        }
        Ok(package)
    }

    /// The tools of `contributes.tools` (none when nothing is contributed).
    pub fn tools(&self) -> &[Tool] {
        self.spirit_extension
            .contributes
            .as_ref()
            .map_or(&[], |c| c.tools.as_slice())
    }
}

impl HooksFile {
    /// Reads a hooks file the validator accepted (see [`PackageJson::from_checked`]).
    pub(crate) fn from_checked(value: Value) -> Result<Self, serde_json::Error> {
        let other = others(Some(&value), &keys::HOOKS_FILE);
        let hooks: Vec<(Other, Other)> = items(value.get("hooks"))
            .iter()
            .map(|hook| {
                (
                    others(Some(hook), &keys::HOOK),
                    others(hook.get("tokens"), &keys::TOKENS),
                )
            })
            .collect();
        let mut file: HooksFile = serde_json::from_value(value)?;
        file.other = other;
        for (hook, (other, tokens)) in file.hooks.iter_mut().zip(hooks) {
            hook.other = other;
            if let Some(t) = &mut hook.tokens {
                t.other = tokens;
            }
        }
        Ok(file)
    }
}

/// The unknown members of every object of a package, gathered before serde reads it.
struct Others {
    package: Other,
    author: Other,
    repository: Other,
    spirit: Other,
    contributes: Other,
    tools: Vec<Other>,
    desktop: Other,
    css: Vec<Other>,
    settings_page: Other,
    cli: Other,
    hooks: Other,
    settings: Vec<(Other, Vec<Other>)>,
    secrets: Vec<Other>,
}

impl Others {
    fn of_package(value: &Value) -> Self {
        let spirit = value.get("spiritExtension");
        let contributes = spirit.and_then(|s| s.get("contributes"));
        let desktop = contributes.and_then(|c| c.get("desktop"));
        let cli = contributes.and_then(|c| c.get("cli"));
        let each = |list: Option<&Value>, known: &[&str]| -> Vec<Other> {
            items(list)
                .iter()
                .map(|item| others(Some(item), known))
                .collect()
        };
        Self {
            package: others(Some(value), &keys::PACKAGE),
            author: others(value.get("author"), &keys::PERSON),
            repository: others(value.get("repository"), &keys::REPOSITORY),
            spirit: others(spirit, &keys::SPIRIT),
            contributes: others(contributes, &keys::CONTRIBUTES),
            tools: each(contributes.and_then(|c| c.get("tools")), &keys::TOOL),
            desktop: others(desktop, &keys::DESKTOP),
            css: each(desktop.and_then(|d| d.get("css")), &keys::STYLESHEET),
            settings_page: others(
                desktop.and_then(|d| d.get("settingsPage")),
                &keys::SETTINGS_PAGE,
            ),
            cli: others(cli, &keys::CLI),
            hooks: others(cli.and_then(|c| c.get("hooks")), &keys::HOOKS_REF),
            settings: items(spirit.and_then(|s| s.get("settingsSchema")))
                .iter()
                .map(|setting| {
                    (
                        others(Some(setting), &keys::SETTING),
                        each(setting.get("options"), &keys::OPTION),
                    )
                })
                .collect(),
            secrets: each(spirit.and_then(|s| s.get("secretSlots")), &keys::SECRET),
        }
    }

    fn attach(self, package: &mut PackageJson) {
        package.other = self.package;
        if let Some(Person::Object { other, .. }) = &mut package.author {
            *other = self.author;
        }
        if let Some(Repository::Object { other, .. }) = &mut package.repository {
            *other = self.repository;
        }
        let spirit = &mut package.spirit_extension;
        spirit.other = self.spirit;
        for (setting, (other, options)) in spirit.settings_schema.iter_mut().zip(self.settings) {
            setting.other = other;
            for (option, other) in setting.options.iter_mut().zip(options) {
                option.other = other;
            }
        }
        for (slot, other) in spirit.secret_slots.iter_mut().zip(self.secrets) {
            slot.other = other;
        }
        let Some(contributes) = &mut spirit.contributes else {
            return;
        };
        contributes.other = self.contributes;
        for (tool, other) in contributes.tools.iter_mut().zip(self.tools) {
            tool.other = other;
        }
        if let Some(desktop) = &mut contributes.desktop {
            desktop.other = self.desktop;
            for (css, other) in desktop.css.iter_mut().zip(self.css) {
                css.other = other;
            }
            if let Some(SettingsPage::Titled { other, .. }) = &mut desktop.settings_page {
                *other = self.settings_page;
            }
        }
        if let Some(cli) = &mut contributes.cli {
            cli.other = self.cli;
            if let Some(hooks) = &mut cli.hooks {
                hooks.other = self.hooks;
            }
        }
    }
}

#[cfg(feature = "schema")]
crate::json_schema::closed_set_schemas!(
    Host,
    ActivationEvent,
    Capability,
    ApprovalMode,
    ExecutionMode,
    SettingType,
    Slot,
    Variant,
    TokenRole,
);
