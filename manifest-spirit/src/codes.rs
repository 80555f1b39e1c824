//! The stable diagnostic codes of this crate. The repository's
//! [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md) lists the same
//! table for users; a test keeps the two in step.

pub use curupira_diagnostics::Code;

curupira_diagnostics::codes! {
    /// The file is not UTF-8.
    ENCODING = "spirit/encoding", Error,
        "The file is not valid UTF-8; the position is the first invalid byte.";
    /// The file is not JSON.
    SYNTAX = "spirit/syntax", Error,
        "The file is not valid JSON (RFC 8259: no comments, no trailing commas); the position is where reading stopped. No other rule is checked.";
    /// A member appears twice in one object.
    DUPLICATE_KEY = "spirit/duplicate-key", Error,
        "A member appears more than once in one object; reported at each repetition. JSON parsers disagree on which wins (the rules are checked on the last, as JavaScript reads it).";
    /// A required member is missing.
    MISSING_KEY = "spirit/missing-key", Error,
        "A required member is missing; the pointer is where it would be, the position that of the enclosing object.";
    /// A value has the wrong JSON type.
    INVALID_TYPE = "spirit/invalid-type", Error,
        "A value has the wrong JSON type (a string where an object is expected, a number in `keywords`, ...).";
    /// A member this format does not define.
    UNKNOWN_KEY = "spirit/unknown-key", Warning,
        "A member inside `spiritExtension` (or `cli-hooks.json`) that the format does not define; kept but unused. Suggests the closest known member when one is close.";
    /// A member that has no effect where it is.
    UNUSED_KEY = "spirit/unused-key", Warning,
        "A known member that has no effect where it is: `options` on a setting whose `type` is not `select`.";
    /// A value outside a closed set.
    UNKNOWN_VALUE = "spirit/unknown-value", Error,
        "A value outside its closed set: a host, activation event, capability, `approvalMode`, `executionMode`, setting `type`, hook `slot`, `variant` or token role. Suggests the closest one.";
    /// A value that must be unique is repeated.
    DUPLICATE_VALUE = "spirit/duplicate-value", Error,
        "A value that must be unique appears again: a host in `supportedHosts`, a tool `name`, a setting `key`, a secret `key`, a select option `value`. Reported at each repetition.";
    /// A declaration is repeated to no effect.
    REPEATED_VALUE = "spirit/repeated-value", Warning,
        "An activation event or capability is listed more than once; the repetition has no effect.";
    /// A string or array that must not be empty is.
    EMPTY_VALUE = "spirit/empty-value", Error,
        "A string or array that must have content is empty: `displayName`, `supportedHosts`, a tool `description`, a setting or secret `title`, a select's `options`, an option `label`.";
    /// `name` is not a valid extension id.
    INVALID_NAME = "spirit/invalid-name", Error,
        "`name` breaks `^(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$` or is longer than 214 characters (npm's limit); the position is the first offending character.";
    /// `version` is not SemVer.
    INVALID_VERSION = "spirit/invalid-version", Error,
        "`version` is not a SemVer 2.0.0 version; npm spellings (`v1.2.3`, spaces) get the fix in the message.";
    /// `schemaVersion` is not 1.
    UNSUPPORTED_SCHEMA_VERSION = "spirit/unsupported-schema-version", Error,
        "`spiritExtension.schemaVersion` is not the integer `1`, the only schema version.";
    /// A tool name or setting key breaks the identifier pattern.
    INVALID_IDENTIFIER = "spirit/invalid-identifier", Error,
        "A tool `name` or setting `key` breaks `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`; the position is the first offending character.";
    /// `main` is needed but missing.
    MAIN_REQUIRED = "spirit/main-required", Error,
        "`main` is missing although the extension lists `activationEvents`, requests `tool-execution` or requests `system-prompt`: Spirit would have no module to `activate`.";
    /// A capability and its contribution do not match.
    CAPABILITY_MISMATCH = "spirit/capability-mismatch", Error,
        "A capability and what it goes with disagree: `contributes.tools` without both `tool-definitions` and `tool-execution` (or one of them without the other), `desktop-ui` without `contributes.desktop` or the reverse, `cli-ui` and `contributes.cli` likewise, `secretSlots` without `secret-storage`.";
    /// A capability requested for nothing.
    UNUSED_CAPABILITY = "spirit/unused-capability", Warning,
        "A capability requested with nothing to use it: `secret-storage` without `secretSlots`, or `tool-definitions` and `tool-execution` without `contributes.tools`.";
    /// A tool schema is not a valid JSON Schema.
    INVALID_SCHEMA = "spirit/invalid-schema", Error,
        "A tool's `inputSchema` or `outputSchema` is not a valid JSON Schema (checked against the meta-schema its `$schema` names, 2020-12 by default); the pointer is inside the schema.";
    /// An input schema that is not of type object.
    INPUT_SCHEMA_NOT_OBJECT = "spirit/input-schema-not-object", Warning,
        "A tool's `inputSchema` does not say `\"type\": \"object\"`; model tool-calling APIs expect the arguments to be an object.";
    /// `contributes.cli.hooks` is an inline array.
    INLINE_HOOKS = "spirit/inline-hooks", Error,
        "`contributes.cli.hooks` is an array; it must be `{ \"path\": \"cli-hooks.json\" }`, the hooks going in that file.";
    /// A `defaultValue` that does not fit its setting.
    INVALID_DEFAULT = "spirit/invalid-default", Error,
        "A setting's `defaultValue` does not match its `type` (or, for `select`, is not one of the options' values).";
    /// A package path that would leave the package.
    INVALID_PATH = "spirit/invalid-path", Error,
        "`main`, `icon`, a CSS `path` or the hooks `path` is not a relative path inside the package: absolute (`/x`, `C:\\x`, `\\\\host\\x`), with a backslash, empty, or with a `..` that leaves the root.";
    /// A package path names no file.
    MISSING_FILE = "spirit/missing-file", Error,
        "A path the manifest names does not exist in the package folder or archive (a symlink whose target is missing included).";
    /// A package path names something that is not a regular file.
    NOT_A_FILE = "spirit/not-a-file", Error,
        "A path the manifest names is a folder, a device or another non-regular file.";
    /// A package path goes through a symlink to outside the package.
    PATH_ESCAPES = "spirit/path-escapes", Error,
        "A path the manifest names resolves through a symlink to outside the package folder (or, in an archive, is a link at all).";
    /// The host being installed for is not supported.
    UNSUPPORTED_HOST = "spirit/unsupported-host", Error,
        "`supportedHosts` does not include the host the package is checked or installed for (`--host`).";
    /// Registry-strict: a member that must be written out.
    REGISTRY_REQUIRED = "spirit/registry-required", Error,
        "Registry-strict mode (`--registry`): `spiritExtension.schemaVersion`, `displayName`, `supportedHosts` or `requestedCapabilities` is not written out explicitly.";
    /// An archive whose layout is not a package.
    ARCHIVE_LAYOUT = "spirit/archive-layout", Error,
        "The archive is not a package: a ZIP with no `package.json` or several, a `.tgz` without `package/package.json` (entries beside `package/` are ignored, as the Spirit app ignores them).";
    /// An archive entry that could write outside the package.
    ARCHIVE_ENTRY = "spirit/archive-entry", Error,
        "An archive entry is refused before anything is written: an absolute or drive-letter name, a `..` segment, a backslash in a `.tgz` (in a ZIP it is a folder separator), an empty or `.` segment in a ZIP file of the package (as the Spirit app refuses it), a link, device or FIFO in a `.tgz` (a ZIP link entry is a file holding its text), or a name given twice.";
    /// An archive over the limits.
    ARCHIVE_LIMIT = "spirit/archive-limit", Error,
        "The archive has more than 10,000 entries or unpacks to more than 256 MiB (the bytes actually decompressed are counted; declared sizes are not trusted).";
    /// An archive that cannot be read.
    ARCHIVE_CORRUPT = "spirit/archive-corrupt", Error,
        "The file is not a readable ZIP or gzip-compressed tar archive.";
    /// A tool's arguments break its `inputSchema`.
    INVALID_ARGUMENTS = "spirit/invalid-arguments", Error,
        "`spirit run-tool`: the arguments break the tool's `inputSchema`; the pointer is inside the arguments, and the tool is not run.";
    /// A tool's result breaks its `outputSchema`.
    INVALID_RESULT = "spirit/invalid-result", Error,
        "`spirit run-tool`: the tool's result (a value other than a string or `undefined`) breaks its `outputSchema`; the pointer is inside the result.";
}
