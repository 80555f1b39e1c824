//! The stable diagnostic codes of this crate. The repository's
//! [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md) lists the same
//! table for users; a test keeps the two in step.

pub use curupira_diagnostics::Code;

curupira_diagnostics::codes! {
    /// The file is not UTF-8.
    ENCODING = "registry/encoding", Error,
        "`entry.json` is not valid UTF-8; the position is the first invalid byte.";
    /// The file is not JSON.
    SYNTAX = "registry/syntax", Error,
        "`entry.json` is not valid JSON (RFC 8259); the position is where reading stopped. No other rule of that entry is checked.";
    /// A member appears twice in one object.
    DUPLICATE_KEY = "registry/duplicate-key", Error,
        "A member appears more than once in one object of `entry.json`; reported at each repetition.";
    /// A required member is missing.
    MISSING_KEY = "registry/missing-key", Error,
        "A required member of `entry.json` is missing; the pointer is where it would be.";
    /// A value has the wrong JSON type.
    INVALID_TYPE = "registry/invalid-type", Error,
        "A value of `entry.json` has the wrong JSON type (`featured` as a string, ...).";
    /// A member the format does not define.
    UNKNOWN_KEY = "registry/unknown-key", Warning,
        "A member `entry.json` does not define; ignored. Suggests the closest known member.";
    /// `schemaVersion` is not 1.
    UNSUPPORTED_SCHEMA_VERSION = "registry/unsupported-schema-version", Error,
        "`schemaVersion` is not the integer `1`.";
    /// `extensionId` breaks its pattern.
    INVALID_EXTENSION_ID = "registry/invalid-extension-id", Error,
        "`extensionId` is not two or more `.`-separated segments of `[a-z0-9]+(?:-[a-z0-9]+)*`; the position is the first offending character.";
    /// `packageName` is not an npm package name.
    INVALID_PACKAGE_NAME = "registry/invalid-package-name", Error,
        "`packageName` is not an npm package name that can be published.";
    /// A value outside a closed set.
    UNKNOWN_VALUE = "registry/unknown-value", Error,
        "`status`, `defaultReviewStatus`, a version's `channel` or `reviewStatus` is outside its closed set. Suggests the closest value.";
    /// A version is not SemVer.
    INVALID_VERSION = "registry/invalid-version", Error,
        "`defaultVersion` or a `versions[].version` is not a SemVer 2.0.0 version.";
    /// A version is listed twice.
    DUPLICATE_VERSION = "registry/duplicate-version", Error,
        "A version appears twice in `versions` (compared as SemVer); reported at the repetition.";
    /// `defaultVersion` is not listed.
    DEFAULT_VERSION_NOT_LISTED = "registry/default-version-not-listed", Error,
        "`defaultVersion` is not one of `versions[].version`.";
    /// A string or array that must have content is empty.
    EMPTY_VALUE = "registry/empty-value", Error,
        "`versions` is empty, or a changelog's `summary` or `body` is empty.";
    /// The folder is not named after the entry.
    FOLDER_MISMATCH = "registry/folder-mismatch", Error,
        "The extension folder's name differs from the `extensionId` of its `entry.json`.";
    /// A file that has no place in an extension folder.
    STRAY_FILE = "registry/stray-file", Error,
        "An extension folder holds something other than `entry.json`, `README.md` and the derived `detail.json`: a source tree, `dist/`, `package.json`, a ZIP, a tarball or another file. The registry is an index, not a package store.";
    /// An extension folder without `entry.json`.
    MISSING_ENTRY = "registry/missing-entry", Error,
        "An extension folder has no `entry.json`.";
    /// Two entries list the same package or id.
    DUPLICATE_ENTRY = "registry/duplicate-entry", Error,
        "Two entries share a `packageName` or an `extensionId`; reported on both files, each naming the other.";
    /// `README.md` is missing or empty.
    MISSING_README = "registry/missing-readme", Error,
        "An extension folder has no `README.md`, or it is empty (only whitespace).";
    /// `README.md` names neither the package nor the default version.
    README_UNRELATED = "registry/readme-unrelated", Warning,
        "`README.md` names neither the package (`packageName`) nor the default version.";
    /// The default version has been revoked.
    REVOKED_DEFAULT = "registry/revoked-default", Warning,
        "The entry's default version has the review status `revoked`: the marketplace would offer a revoked version by default.";
    /// npm metadata for a package could not be had.
    METADATA = "registry/metadata", Error,
        "The npm package document of `packageName` could not be read or fetched (missing, a 404, a timeout, a bad body); the message names the package and the source.";
    /// A listed version is not on npm.
    UNPUBLISHED_VERSION = "registry/unpublished-version", Error,
        "A version listed in `versions` is not published on npm (absent from the package document's `versions`).";
    /// The published manifest names another package.
    PACKAGE_NAME_MISMATCH = "registry/package-name-mismatch", Error,
        "The published `package.json` of a listed version has a `name` other than the entry's `packageName`.";
    /// A derived file is absent.
    MISSING_DERIVED = "registry/missing-derived", Warning,
        "`registry/catalog.json` or an extension's `detail.json` does not exist yet; run `curupira registry build`.";
    /// A derived file disagrees with the entries.
    STALE_DERIVED = "registry/stale-derived", Error,
        "`catalog.json` or a `detail.json` disagrees with the entries (ids, package names, statuses, versions), or — with npm metadata — is not byte for byte what the build writes. Derived files are never edited by hand.";
    /// A published manifest without a description.
    MISSING_DESCRIPTION = "registry/missing-description", Error,
        "The published `package.json` of a listed version has no non-empty `description`: the marketplace reader refuses a catalog item or detail version without one (the whole catalog becomes unreadable). Reported unless registry-strict validation already reported `/description`.";
    /// npm's `dist` of a listed version cannot be installed from.
    UNUSABLE_DIST = "registry/unusable-dist", Error,
        "The npm document's `dist` of a listed version has no https `tarball`, or neither a well-formed `integrity` (SRI sha256, sha384 or sha512) nor `shasum` (40 hexadecimal digits), or a malformed one: the app could not install that version from the marketplace.";
    /// A document the marketplace reader reads is not JSON.
    READER_JSON = "registry/reader-json", Error,
        "`catalog.json` or a `detail.json` is not UTF-8 JSON: the app's marketplace reader cannot read it at all.";
    /// `schemaVersion` is not the number 1.
    READER_SCHEMA_VERSION = "registry/reader-schema-version", Error,
        "The `schemaVersion` of `catalog.json` or a `detail.json` is not the number 1: the marketplace reader reads no other.";
    /// A value the reader needs as an object, array or boolean is something else.
    READER_TYPE = "registry/reader-type", Error,
        "Where the marketplace reader needs an object (the document, an item, a version), an array (`items`, `versions`, `supportedHosts`, `keywords`, `requestedCapabilities`) or a boolean (`featured`), the value is something else.";
    /// A string the reader requires is missing or blank.
    READER_EMPTY = "registry/reader-empty", Error,
        "A string the marketplace reader requires (`extensionId`, `displayName`, `description`, a changelog's `summary`, ...) is missing, not a string, or blank once trimmed; or `supportedHosts` or `versions` is empty. One such catalog item makes the whole catalog unreadable.";
    /// A value outside the reader's closed set.
    READER_VALUE = "registry/reader-value", Error,
        "`defaultChannel` or a version's `channel` is not `stable`, `preview` or `experimental`; `defaultReviewStatus` or `reviewStatus` is not `unverified`, `verified` or `revoked`; a host is not `cli` or `desktop`.";
    /// A path or URL the reader would refuse.
    READER_URL = "registry/reader-url", Error,
        "`detailPath`, `readmePath` or `tarballUrl` is an `http` URL, another scheme, or not a URL: the reader fetches only https, with paths relative to the folder that holds `catalog.json`.";
    /// A path that names no file of the registry.
    READER_MISSING_FILE = "registry/reader-missing-file", Error,
        "`detailPath` or `readmePath` names a file the registry does not have: the reader would get a 404.";
    /// A detail that names another extension.
    READER_ID_MISMATCH = "registry/reader-id-mismatch", Error,
        "A `detail.json` has an `extensionId` other than the catalog item (or extension folder) it belongs to: the reader refuses it.";
    /// A document larger than the reader reads.
    READER_TOO_LARGE = "registry/reader-too-large", Error,
        "`catalog.json` or a `detail.json` is larger than 512 KiB, or a `README.md` larger than 2 MiB: the marketplace reader refuses a response that large.";
    /// A version the app could not install.
    READER_NOT_INSTALLABLE = "registry/reader-not-installable", Error,
        "The app could not install a version: `defaultVersion` is not one of `versions`, or a version lacks an https `tarballUrl`, or lacks `integrity`/`shasum`, or has one that can never match (not SRI sha256/384/512, not 40 hexadecimal digits).";
}
