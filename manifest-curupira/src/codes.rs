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
        "A `[launch]` key that belongs to another launch type (`program` with `type = \"npx\"`, `package` with `type = \"executable\"`, `bin` with `type = \"uvx\"`, ...); ignored.";
    /// `manifest_version` is not 1.
    UNSUPPORTED_MANIFEST_VERSION = "manifest/unsupported-manifest-version", Error,
        "`manifest_version` is not `1`, the only manifest format this crate reads.";
    /// `name` breaks the name pattern or length.
    INVALID_NAME = "manifest/invalid-name", Error,
        "`name` is empty, longer than 214 characters, or breaks `^[a-z0-9][a-z0-9._-]*$`; the position is the first offending character.";
    /// A version is not SemVer 2.0.0.
    INVALID_VERSION = "manifest/invalid-version", Error,
        "`version`, `launch.version` or `package.version` is not a SemVer 2.0.0 version; npm spellings (`v1.2.3`, spaces) get the fix in the message.";
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
        "`kind` is not `\"trigger\"`, the only kind of extension (`\"agent\"` has its own code, `manifest/agent-extension`).";
    /// The manifest declares a coding agent, which the reference host refuses.
    AGENT_EXTENSION = "manifest/agent-extension", Error,
        "`kind = \"agent\"` or a non-empty `agent_providers`: the reference host refuses both (\"coding-agent extensions are no longer supported; agents are built into the Rust core\").";
    /// `trigger_types` is empty.
    EMPTY_TRIGGER_TYPES = "manifest/empty-trigger-types", Error,
        "`trigger_types` is an empty array; an extension offers at least one trigger.";
    /// A trigger type breaks the trigger type pattern.
    INVALID_TRIGGER_TYPE = "manifest/invalid-trigger-type", Error,
        "A trigger type breaks `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`; the position is the first offending character.";
    /// A trigger type is listed twice.
    DUPLICATE_TRIGGER_TYPE = "manifest/duplicate-trigger-type", Error,
        "A trigger type is listed more than once; reported at each repetition.";
    /// `launch.type` is not one of the three launch types.
    INVALID_LAUNCH_TYPE = "manifest/invalid-launch-type", Error,
        "`launch.type` is none of `\"uvx\"`, `\"npx\"`, `\"executable\"` (`\"command\"` has its own code, `manifest/command-launch`).";
    /// `launch.type = "command"`, which the reference host refuses.
    COMMAND_LAUNCH = "manifest/command-launch", Error,
        "`launch.type = \"command\"`, refused by the reference host (``unknown variant `command` ``); the message gives the fix: `type = \"executable\"` with `program = ...`.";
    /// `launch.package` is not an npm package name.
    INVALID_PACKAGE_NAME = "manifest/invalid-package-name", Error,
        "`launch.package` of an npx launch is not an npm package name (empty, leading `.` `_` `-`, spaces, not URL-safe, reserved); one diagnostic per broken rule.";
    /// `launch.package` can exist on npm but cannot be published anymore.
    LEGACY_PACKAGE_NAME = "manifest/legacy-package-name", Warning,
        "`launch.package` of an npx launch breaks a rule npm added later (uppercase, over 214 characters, a Node.js core module name, one of ~'!()*): old packages may have such names, new ones may not.";
    /// What a launch starts, or a uvx launch's package, is empty.
    EMPTY_VALUE = "manifest/empty-value", Error,
        "`launch.program`, `launch.executable`, `launch.bin` or a uvx launch's `launch.package` is empty or only whitespace: there would be nothing to run.";
    /// An npx launch has no `version`.
    UNPINNED_VERSION = "manifest/unpinned-version", Warning,
        "An npx launch has no `version`: npx fetches the latest version of the package each time the host starts the extension.";
    /// `launch.version` or `package.version` differs from `version`.
    VERSION_MISMATCH = "manifest/version-mismatch", Warning,
        "`launch.version` or `package.version` differs from `version`: the host would list one version and run, or record, another.";
    /// `package.source` is neither `pip` nor `npm`.
    UNKNOWN_PACKAGE_SOURCE = "manifest/unknown-package-source", Warning,
        "`package.source` is neither `pip` nor `npm`, the registries the reference host installs from; kept as written (the reference host accepts any string).";
    /// `package.name` is empty.
    EMPTY_PACKAGE_NAME = "manifest/empty-package-name", Warning,
        "`package.name` is empty or only whitespace; kept as written (the reference host accepts it).";
}
