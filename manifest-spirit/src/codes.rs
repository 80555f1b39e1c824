//! The stable diagnostic codes of this crate. The repository's
//! [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md) lists the same
//! table for users; a test keeps the two in step.
//!
//! Every code has one level, named at the start of its meaning:
//! - **refused** — an error: the Spirit app will not install such a package;
//! - **breaks at run time** — an error: the app installs it, but it cannot work as
//!   declared (tools the model never sees, a `main` it cannot load, a declaration it
//!   drops, an icon or style sheet that is not there);
//! - **advice** — a warning: the app installs and runs it as it is, but the format's
//!   page or good practice says otherwise;
//! - **registry** — an error of registry-strict mode only (`--registry`): what the
//!   registry builder and the marketplace reader need;
//! - **archive** and **run time** — errors of `check_archive` / `spirit install` and of
//!   `spirit run-tool`, not of a package's declaration.

pub use curupira_diagnostics::Code;

curupira_diagnostics::codes! {
    /// The file is not UTF-8.
    ENCODING = "spirit/encoding", Warning,
        "Advice: the app installs and runs it. The file is not valid UTF-8; the app reads each invalid byte as U+FFFD. The position is the first invalid byte.";
    /// The file starts with a byte-order mark.
    BYTE_ORDER_MARK = "spirit/byte-order-mark", Error,
        "Refused: the app will not install it. `package.json` or the CLI hooks file starts with a UTF-8 byte-order mark, which the app's JSON reader does not accept; save the file without it.";
    /// The file is not JSON.
    SYNTAX = "spirit/syntax", Error,
        "Refused: the app will not install it. The file is not valid JSON (RFC 8259: no comments, no trailing commas); the position is where reading stopped. No other rule is checked.";
    /// A member appears twice in one object.
    DUPLICATE_KEY = "spirit/duplicate-key", Warning,
        "Advice: the app installs and runs it. A member appears more than once in one object; reported at each repetition. The app reads the last one (so the rules are checked on the last); other JSON readers may not.";
    /// A required member is missing.
    MISSING_KEY = "spirit/missing-key", Error,
        "Refused: the app will not install it. A required member is missing (or `null`); the pointer is where it would be, the position that of the enclosing object.";
    /// A value has the wrong JSON type.
    INVALID_TYPE = "spirit/invalid-type", Error,
        "Refused: the app will not install it. A value the app reads has the wrong JSON type (a number for `description`, `main` or `icon`, a string where an object is expected, a non-string in `supportedHosts`, ...).";
    /// A wrong-typed optional member the app ignores.
    IGNORED_VALUE = "spirit/ignored-value", Warning,
        "Advice: the app installs and runs it. A member of the wrong type that the app ignores as if it were absent (a non-array `activationEvents` or `requestedCapabilities`, a number for a setting's `description`, hook `prefix` or css `media`, an empty wrong-typed container, `keywords` or `repository` npm would not publish, ...).";
    /// A declaration the app drops because of its type.
    IGNORED_DECLARATION = "spirit/ignored-declaration", Error,
        "Breaks at run time: the app installs it, but it cannot work as declared. `contributes`, `contributes.tools`, `contributes.desktop.css`, `settingsSchema` or `secretSlots` is not an array (or object) but has content: the app ignores it, so what it declares does not exist at run time.";
    /// `null` for an optional member.
    NULL_VALUE = "spirit/null-value", Warning,
        "Advice: the app installs and runs it. An optional member is `null`, which the app reads as absent; leave it out.";
    /// A value with surrounding whitespace.
    UNTRIMMED_VALUE = "spirit/untrimmed-value", Warning,
        "Advice: the app installs and runs it. A string the app trims before using it (`name`, `version`, `displayName`, a path, a tool name, a key, an enum value) has leading or trailing whitespace.";
    /// A member this format does not define.
    UNKNOWN_KEY = "spirit/unknown-key", Warning,
        "Advice: the app installs and runs it. A member inside `spiritExtension` (or `cli-hooks.json`) that the format does not define; kept but unused. Suggests the closest known member when one is close.";
    /// `options` on a setting that is not a select.
    UNUSED_KEY = "spirit/unused-key", Error,
        "Refused: the app will not install it. A setting whose `type` is not `select` declares `options`.";
    /// A value outside a closed set.
    UNKNOWN_VALUE = "spirit/unknown-value", Error,
        "Refused: the app will not install it. A value outside its closed set (compared after trimming, case-sensitive): a host, activation event, capability, `approvalMode`, `executionMode`, setting `type`, hook `slot`, `variant` or token role. Suggests the closest one.";
    /// A value that should be unique is repeated.
    DUPLICATE_VALUE = "spirit/duplicate-value", Warning,
        "Advice: the app installs and runs it. A value that should be unique appears again: a tool `name`, a setting `key`, a secret `key`, a select option `value`. The app accepts it, but which one a lookup finds is not said. Reported at each repetition.";
    /// A declaration is repeated to no effect.
    REPEATED_VALUE = "spirit/repeated-value", Warning,
        "Advice: the app installs and runs it. A host, activation event or capability is listed more than once; the app drops the repetition.";
    /// A string or array that must not be empty is.
    EMPTY_VALUE = "spirit/empty-value", Error,
        "Refused: the app will not install it. A string or array that must have content is empty or only whitespace: `name`, `version`, `displayName`, `supportedHosts`, a tool `name` or `description`, a setting or secret `key` or `title`, an option `value` or `label`, a css or hooks `path`.";
    /// A select setting without options.
    NO_OPTIONS = "spirit/no-options", Warning,
        "Advice: the app installs and runs it. A `select` setting has no `options` or an empty list: the app accepts it, but the user has nothing to choose.";
    /// `name` is not a valid extension id.
    INVALID_NAME = "spirit/invalid-name", Error,
        "Refused: the app will not install it. `name` (trimmed) breaks `^(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$`, or is longer than 178 characters: the app's staging folder `pkg-<base64url(id)>.stage-XXXXXX` would pass the 255-byte file-name limit. The position is the first offending character.";
    /// `version` is not SemVer.
    INVALID_VERSION = "spirit/invalid-version", Warning,
        "Advice: the app installs and runs it. `version` is not a SemVer 2.0.0 version; the app takes any non-empty string, npm publishes only SemVer (an error in registry-strict mode, `spirit/registry-required`). npm spellings (`v1.2.3`) get the fix in the message.";
    /// `schemaVersion` is not 1.
    UNSUPPORTED_SCHEMA_VERSION = "spirit/unsupported-schema-version", Error,
        "Refused: the app will not install it. `spiritExtension.schemaVersion` is a number other than 1 (`1.0` and `1e0` are 1), the only schema version.";
    /// A tool name or key breaks the identifier pattern.
    INVALID_IDENTIFIER = "spirit/invalid-identifier", Error,
        "Refused: the app will not install it. A tool `name`, setting `key` or secret `key` (trimmed) breaks `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`; the position is the first offending character.";
    /// `main` is needed but missing.
    MAIN_REQUIRED = "spirit/main-required", Error,
        "Breaks at run time: the app installs it, but it cannot work as declared. `main` is missing, `null` or empty although the extension lists `activationEvents`, requests `tool-execution` or requests `system-prompt`: every tool call fails and no system prompt is contributed.";
    /// A UI capability and its contribution do not match.
    CAPABILITY_MISMATCH = "spirit/capability-mismatch", Error,
        "Refused: the app will not install it. `desktop-ui` without a non-empty `contributes.desktop` (`{}` or only `settingsPage: false` is empty) or the reverse; `cli-ui` without `contributes.cli.hooks` naming a file with at least one hook, or the reverse.";
    /// Tools the model never sees.
    TOOLS_NOT_EXPOSED = "spirit/tools-not-exposed", Error,
        "Breaks at run time: the app installs it, but it cannot work as declared. `contributes.tools` lists tools but `requestedCapabilities` lacks `tool-definitions` or `tool-execution`: the app offers the model no tool of the package (and a direct call fails without `tool-execution`).";
    /// A capability requested for nothing.
    UNUSED_CAPABILITY = "spirit/unused-capability", Warning,
        "Advice: the app installs and runs it. A capability requested with nothing to use it: `tool-definitions` or `tool-execution` without `contributes.tools` (or one without the other), `secret-storage` without `secretSlots`.";
    /// A declaration whose capability is not requested.
    UNDECLARED_CAPABILITY = "spirit/undeclared-capability", Warning,
        "Advice: the app installs and runs it. `secretSlots` without `secret-storage` in `requestedCapabilities`: the app lets the secrets work anyway, but the page asks for the capability.";
    /// A tool schema is not a valid JSON Schema.
    INVALID_SCHEMA = "spirit/invalid-schema", Warning,
        "Advice: the app installs and runs it. A tool's `inputSchema` or `outputSchema` is not a valid JSON Schema (checked against the meta-schema its `$schema` names, 2020-12 by default; an array is none): the app passes it to the model provider as it is, which may refuse the tool. The pointer is inside the schema.";
    /// An input schema that is not of type object.
    INPUT_SCHEMA_NOT_OBJECT = "spirit/input-schema-not-object", Warning,
        "Advice: the app installs and runs it. A tool's `inputSchema` does not say `\"type\": \"object\"`; model tool-calling APIs expect the arguments to be an object.";
    /// `contributes.cli.hooks` is an inline array.
    INLINE_HOOKS = "spirit/inline-hooks", Error,
        "Refused: the app will not install it. `contributes.cli.hooks` is an array; it must be `{ \"path\": \"cli-hooks.json\" }`, the hooks going in that file.";
    /// A `defaultValue` of the wrong type.
    INVALID_DEFAULT = "spirit/invalid-default", Error,
        "Refused: the app will not install it. A setting's `defaultValue` does not match its `type` (a string for `string` and `select`, a boolean, a finite number).";
    /// A select's default that is not one of its options.
    DEFAULT_NOT_AN_OPTION = "spirit/default-not-an-option", Warning,
        "Advice: the app installs and runs it. A `select` setting's `defaultValue` is not one of its options' values; the app does not check it.";
    /// A package path the app refuses.
    INVALID_PATH = "spirit/invalid-path", Error,
        "Refused: the app will not install it. `main`, `icon`, a css `path` or the hooks `path` is not a plain relative path: absolute (`/x`, `C:/x`, `\\\\host\\x`), with an empty, `.` or `..` segment (even one that stays inside: `dist/../dist/x.js`, `dist//x.js`), or a `main` with a backslash (on Linux it names no file).";
    /// A backslash in an icon, css or hooks path.
    BACKSLASH_PATH = "spirit/backslash-path", Warning,
        "Advice: the app installs and runs it. `icon`, a css `path` or the hooks `path` has a backslash, which the app reads as `/`; write `/`.";
    /// A package path names no file.
    MISSING_FILE = "spirit/missing-file", Error,
        "Refused: the app will not install it. `main` or the hooks `path` names nothing in the package folder or archive (a dangling symlink included), or there is no `package.json`.";
    /// An icon or style sheet that is not in the package.
    MISSING_ASSET = "spirit/missing-asset", Warning,
        "Advice: the app installs and runs it. `icon` or a css `path` names no regular file in the package: the app does not check it at install, so no icon is shown or the style sheet is never applied (in registry-strict mode a missing icon is also `spirit/registry-required`).";
    /// `main` is not a regular file.
    MAIN_NOT_A_FILE = "spirit/main-not-a-file", Error,
        "Breaks at run time: the app installs it, but it cannot work as declared. `main` names a folder or another non-regular file: the app installs it, but loading it fails whenever the extension is activated.";
    /// A package file that is not a regular file.
    NOT_A_FILE = "spirit/not-a-file", Error,
        "Refused: the app will not install it. `package.json` or the CLI hooks file is a folder, a device or another non-regular file.";
    /// A package path goes through a symlink to outside the package.
    PATH_ESCAPES = "spirit/path-escapes", Warning,
        "Advice: the app installs and runs it. A path the manifest names (or `package.json` itself) resolves through a symlink to outside the package folder (or, in an archive, is a link): the app follows it, and the installed copy keeps the link, which points elsewhere on another machine.";
    /// The host being installed for is not supported.
    UNSUPPORTED_HOST = "spirit/unsupported-host", Error,
        "Refused: the app will not install it. `supportedHosts` does not include the host the package is checked or installed for (`--host`).";
    /// Registry-strict: what the registry needs.
    REGISTRY_REQUIRED = "spirit/registry-required", Error,
        "Registry: registry-strict mode (`--registry`) only. `spiritExtension.schemaVersion`, `displayName`, `supportedHosts` or `requestedCapabilities` is not written out explicitly, `version` is not SemVer (npm publishes nothing else), or `description` is missing or empty (the marketplace reader rejects a catalog item without one).";
    /// An archive whose layout is not a package.
    ARCHIVE_LAYOUT = "spirit/archive-layout", Error,
        "Archive (`check_archive`, `spirit install`): The archive is not a package: a ZIP with no `package.json` or several, a `.tgz` without `package/package.json` (entries beside `package/` are ignored, as the Spirit app ignores them).";
    /// An archive entry that could write outside the package, or a link the app refuses.
    ARCHIVE_ENTRY = "spirit/archive-entry", Error,
        "Archive (`check_archive`, `spirit install`): An archive entry is refused before anything is written: an absolute or drive-letter name, a `..` segment, a backslash in a `.tgz` (in a ZIP it is a folder separator), an empty or `.` segment in a ZIP file of the package (as the Spirit app refuses it), a device or FIFO in a `.tgz`, a name given twice, or a `.tgz` link the app refuses (an empty or absolute target, a symbolic link leading out of the archive, a hard link with `..` or not to an earlier file) or that we refuse so that no link leads out of the install folder (a symbolic link of the package leading out of `package/` or through another link) and nothing is written through one (an entry inside a symbolic link). A relative symbolic link inside the package is unpacked as that link; a ZIP link entry is a file holding its text.";
    /// An archive over the limits.
    ARCHIVE_LIMIT = "spirit/archive-limit", Error,
        "Archive (`check_archive`, `spirit install`): The archive has more than 10,000 entries or unpacks to more than 256 MiB (the bytes actually decompressed are counted; declared sizes are not trusted).";
    /// An archive that cannot be read.
    ARCHIVE_CORRUPT = "spirit/archive-corrupt", Error,
        "Archive (`check_archive`, `spirit install`): The file is not a readable ZIP or gzip-compressed tar archive.";
    /// A tool's arguments break its `inputSchema`.
    INVALID_ARGUMENTS = "spirit/invalid-arguments", Warning,
        "Run time: `spirit run-tool`: the arguments break the tool's `inputSchema`; the pointer is inside the arguments. Spirit does not check them, so the tool runs anyway.";
    /// A tool's result breaks its `outputSchema`.
    INVALID_RESULT = "spirit/invalid-result", Warning,
        "Run time: `spirit run-tool`: the tool's result (a value other than a string or `undefined`) breaks its `outputSchema`; the pointer is inside the result. Spirit does not check it and passes the text on.";
    /// Something the extension exports or returns that Spirit does not use.
    IGNORED_EXPORT = "spirit/ignored-export", Warning,
        "Run time: `spirit run-tool` / `system-prompt`: a member Spirit ignores: one of the wrong type (`tools` entries that are not functions, a blank or non-string `systemPrompt`), the members of an `export default { … }` object, an `activate` result with no known member (the module's exports serve instead), a `systemPrompt` hidden by a `getSystemPrompt` that gave nothing.";
    /// `ctx.settings.get` of a key `settingsSchema` does not declare.
    UNDECLARED_SETTING = "spirit/undeclared-setting", Warning,
        "Run time: `spirit run-tool` / `system-prompt`: the extension read a setting `settingsSchema` does not declare; Spirit gives `undefined` rather than an error.";
    /// The stored settings would not read as the author expects.
    STORED_SETTINGS = "spirit/stored-settings", Warning,
        "Run time: `spirit run-tool` / `system-prompt`: a stored setting value breaks its setting (every `ctx.settings` read then fails, as in Spirit), or a `required` setting has no value and no `defaultValue` (it reads as `undefined`; Spirit does not stop the call).";
    /// What the host does with secrets.
    SECRET_STORAGE = "spirit/secret-storage", Warning,
        "Run time: `spirit run-tool` / `system-prompt`: the CLI host has no secret storage (`--secrets` is not read, `get` gives `undefined`, `set` fails), or the desktop keyring trimmed the spaces around a secret's value.";
    /// The system prompt gives no contribution.
    SYSTEM_PROMPT_DROPPED = "spirit/system-prompt-dropped", Warning,
        "Run time: `spirit system-prompt`: Spirit adds nothing to the system prompt because the package does not request `system-prompt`, or collecting it failed (Spirit logs the error and goes on).";
    /// `--event` names an event the package does not list.
    EVENT_NOT_DELIVERED = "spirit/event-not-delivered", Warning,
        "Run time: `spirit run-tool` / `system-prompt --event`: the package's `activationEvents` does not list the event, so Spirit's event dispatch skips it; the call is made without it.";
}

/// The level of a code, as the first words of its meaning name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// An error: the Spirit app will not install such a package.
    Refused,
    /// An error: the app installs it, but it cannot work as declared.
    BreaksAtRunTime,
    /// A warning: the app installs and runs it.
    Advice,
    /// An error of registry-strict mode only.
    Registry,
    /// An error of an archive (`check_archive`, `spirit install`).
    Archive,
    /// A finding of `spirit run-tool` or `spirit system-prompt`, not of a declaration:
    /// an error when the call cannot be made or fails, a warning where the app runs on.
    RunTime,
}

/// The level of `code`, `None` for a code this crate does not have.
///
/// ```
/// use spirit_manifest::codes::{self, Level};
///
/// assert_eq!(codes::level(codes::BYTE_ORDER_MARK), Some(Level::Refused));
/// assert_eq!(codes::level(codes::MAIN_REQUIRED), Some(Level::BreaksAtRunTime));
/// assert_eq!(codes::level(codes::INVALID_VERSION), Some(Level::Advice));
/// assert_eq!(codes::level("spirit/nope"), None);
/// ```
pub fn level(code: &str) -> Option<Level> {
    let meaning = ALL.iter().find(|c| c.code == code)?.meaning;
    [
        ("Refused:", Level::Refused),
        ("Breaks at run time:", Level::BreaksAtRunTime),
        ("Advice:", Level::Advice),
        ("Registry:", Level::Registry),
        ("Archive ", Level::Archive),
        ("Run time:", Level::RunTime),
    ]
    .into_iter()
    .find(|(prefix, _)| meaning.starts_with(prefix))
    .map(|(_, level)| level)
}
