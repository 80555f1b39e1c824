//! The stable diagnostic codes of this crate. The repository's
//! [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md) lists the same
//! table for users; a test keeps the two in step.

pub use curupira_diagnostics::Code;

curupira_diagnostics::codes! {
    /// The file is not valid TOML.
    SYNTAX = "manifest/syntax", Error,
        "The file is not valid TOML (one diagnostic per syntax error the parser finds); no other rule is checked.";
    /// The file is not UTF-8.
    ENCODING = "manifest/encoding", Error,
        "The file is not valid UTF-8; the position is the first invalid byte.";
    /// A required key or table is missing.
    MISSING_KEY = "manifest/missing-key", Error,
        "A required key or table is missing; the pointer is where it would be, the position that of the enclosing table.";
    /// A value has the wrong TOML type.
    INVALID_TYPE = "manifest/invalid-type", Error,
        "A value has the wrong TOML type (a string where a table is expected, an integer in `args`, ...).";
    /// A key this format does not define.
    UNKNOWN_KEY = "manifest/unknown-key", Warning,
        "A key this format does not define; ignored. Suggests the closest known key when one is close.";
    /// A known key that has no effect where it is.
    UNUSED_KEY = "manifest/unused-key", Warning,
        "A `[launch]` key that belongs to the other launch type (`command` with `type = \"npx\"`, `package` with `type = \"command\"`); ignored.";
    /// `manifest_version` is not 1.
    UNSUPPORTED_MANIFEST_VERSION = "manifest/unsupported-manifest-version", Error,
        "`manifest_version` is not `1`, the only manifest format this crate reads.";
    /// `name` breaks the name pattern or length.
    INVALID_NAME = "manifest/invalid-name", Error,
        "`name` is empty, longer than 214 characters, or breaks `^[a-z0-9][a-z0-9._-]*$`; the position is the first offending character.";
    /// A version is not SemVer 2.0.0.
    INVALID_VERSION = "manifest/invalid-version", Error,
        "`version` or `launch.version` is not a SemVer 2.0.0 version; npm spellings (`v1.2.3`, spaces) get the fix in the message.";
    /// `protocol_version` is not a version at all.
    INVALID_PROTOCOL_VERSION = "manifest/invalid-protocol-version", Error,
        "`protocol_version` is neither an integer nor a string `\"MAJOR\"` / `\"MAJOR.MINOR\"`.";
    /// `protocol_version` has another major version than 2.
    UNSUPPORTED_PROTOCOL_VERSION = "manifest/unsupported-protocol-version", Error,
        "`protocol_version` has a major version other than 2, the protocol this host speaks.";
    /// `runtime` is not a known runtime.
    UNKNOWN_RUNTIME = "manifest/unknown-runtime", Warning,
        "`runtime` is not one of `node`, `python`, `deno`, `bun`, `native`.";
    /// `kind` is not `trigger`.
    INVALID_KIND = "manifest/invalid-kind", Error,
        "`kind` is not `\"trigger\"`, the only kind of extension.";
    /// `trigger_types` is empty.
    EMPTY_TRIGGER_TYPES = "manifest/empty-trigger-types", Error,
        "`trigger_types` is an empty array; an extension offers at least one trigger.";
    /// A trigger type breaks the trigger type pattern.
    INVALID_TRIGGER_TYPE = "manifest/invalid-trigger-type", Error,
        "A trigger type breaks `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`; the position is the first offending character.";
    /// A trigger type is listed twice.
    DUPLICATE_TRIGGER_TYPE = "manifest/duplicate-trigger-type", Error,
        "A trigger type is listed more than once; reported at each repetition.";
    /// `launch.type` is neither `npx` nor `command`.
    INVALID_LAUNCH_TYPE = "manifest/invalid-launch-type", Error,
        "`launch.type` is neither `\"npx\"` nor `\"command\"`.";
    /// `launch.package` is not an npm package name.
    INVALID_PACKAGE_NAME = "manifest/invalid-package-name", Error,
        "`launch.package` is not an npm package name (empty, leading `.` `_` `-`, spaces, not URL-safe, reserved); one diagnostic per broken rule.";
    /// `launch.package` can exist on npm but cannot be published anymore.
    LEGACY_PACKAGE_NAME = "manifest/legacy-package-name", Warning,
        "`launch.package` breaks a rule npm added later (uppercase, over 214 characters, a Node.js core module name, one of ~'!()*): old packages may have such names, new ones may not.";
    /// `launch.command` is empty.
    EMPTY_COMMAND = "manifest/empty-command", Error,
        "`launch.command` is empty or only whitespace.";
    /// `launch.version` differs from `version`.
    VERSION_MISMATCH = "manifest/version-mismatch", Warning,
        "`launch.version` differs from `version`: the host would list one version and run another.";
}
