//! npm metadata: where the registry build gets each package's document (the JSON the
//! npm registry serves at `GET /<name>`).
//!
//! - [`FolderSource`]: a folder of saved documents, `<dir>/<package_file_name>`,
//!   offline (tests, CI, reproducible builds).
//! - `RegistrySource` (feature `http`): an npm registry URL, fetched with a blocking
//!   client, a bounded number of requests at once and a progress bar on a terminal.
//!
//! Both read at most [`MAX_DOCUMENT_BYTES`], parse the body as a [`PackageDocument`]
//! and refuse a document whose `name` is not the package asked for.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

use crate::model::PackageDocument;

/// The largest package document read, from a file or a response body: 64 MiB.
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// What a package name keeps as is in [`package_file_name`]: ASCII letters and digits,
/// `-`, `.`, `_`, `~` (RFC 3986 unreserved) and `@`.
const KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'@');

/// Why a package document could not be had. Each message is one sentence naming the
/// package, where it was looked for (folder path or URL) and what went wrong; it is
/// complete on its own (the cause is in the message, not in a `source()` chain), so it
/// can be shown or turned into a diagnostic as is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// No document for the package: the file does not exist, or the registry answered
    /// 404.
    #[error("npm package `{package}` was not found at `{place}`")]
    NotFound {
        /// The package asked for.
        package: String,
        /// The file looked for, or the URL requested.
        place: String,
    },
    /// Two files of a folder source spell the package's name (`%40acme%2Fx.json` and
    /// `@acme%2fx.json`): which one is meant cannot be told.
    #[error("npm package `{package}` has two documents in the folder, `{}` and `{}`; keep one", first.display(), second.display())]
    Ambiguous {
        /// The package asked for.
        package: String,
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// The document's file exists but could not be read.
    #[error("could not read `{}` for npm package `{package}`: {error}", path.display())]
    Io {
        /// The package asked for.
        package: String,
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
    /// What was read is not the package's document: not JSON, truncated, too large,
    /// not shaped like a package document, or a document for another package.
    #[error("the document for npm package `{package}` at `{place}` is not usable: {reason}")]
    BadBody {
        /// The package asked for.
        package: String,
        /// The file read, or the URL requested.
        place: String,
        /// What is wrong, one line (for JSON, serde_json's message with line and
        /// column).
        reason: String,
    },
    /// The registry answered with a status other than 2xx or 404.
    #[error(
        "fetching npm package `{package}` from `{url}` failed: the registry answered HTTP {status}"
    )]
    Http {
        /// The package asked for.
        package: String,
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The request, body included, took longer than the source's timeout.
    #[error("fetching npm package `{package}` from `{url}` timed out after {seconds} s")]
    Timeout {
        /// The package asked for.
        package: String,
        /// The URL requested.
        url: String,
        /// The timeout, in seconds.
        seconds: f64,
    },
    /// The request failed before an answer: DNS, connection, TLS, protocol.
    #[error("fetching npm package `{package}` from `{url}` failed: {reason}")]
    Transport {
        /// The package asked for.
        package: String,
        /// The URL requested.
        url: String,
        /// What the HTTP client said.
        reason: String,
    },
    /// The registry URL given cannot be used.
    #[error("`{url}` is not a usable npm registry URL: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl MetadataError {
    /// The package the error is about (`None` for [`MetadataError::InvalidUrl`]).
    pub fn package(&self) -> Option<&str> {
        match self {
            MetadataError::NotFound { package, .. }
            | MetadataError::Ambiguous { package, .. }
            | MetadataError::Io { package, .. }
            | MetadataError::BadBody { package, .. }
            | MetadataError::Http { package, .. }
            | MetadataError::Timeout { package, .. }
            | MetadataError::Transport { package, .. } => Some(package),
            MetadataError::InvalidUrl { .. } => None,
        }
    }
}

/// Where npm package documents come from.
pub trait MetadataSource: Sync {
    /// Where documents come from, for messages: the folder path or the registry URL.
    fn describe(&self) -> String;

    /// One package's document.
    fn fetch(&self, package: &str) -> Result<PackageDocument, MetadataError>;

    /// Several packages' documents, in the order asked (a source may fetch them in
    /// parallel). Default: one by one.
    fn fetch_all(&self, packages: &[String]) -> Vec<Result<PackageDocument, MetadataError>> {
        packages.iter().map(|p| self.fetch(p)).collect()
    }
}

/// The file name of a package's saved document: `<encoded name>.json`, where the name
/// is encoded the way the npm client writes it in a registry URL path (`escapedName`):
/// `@acme/lookup` → `@acme%2flookup.json`, `lookup` → `lookup.json`.
///
/// Exactly: ASCII letters and digits, `-`, `.`, `_`, `~` and `@` are kept; every other
/// byte of the UTF-8 name is written `%xx` with two lowercase hexadecimal digits (so
/// `/` is `%2f`, a space `%20`). A valid npm name only ever needs the `/` escaped. The
/// registry source requests `<url>/<the same encoding>`, which the npm registry
/// accepts.
pub fn package_file_name(package: &str) -> String {
    let mut name = encode_package(package);
    name.push_str(".json");
    name
}

/// `package` percent-encoded as described in [`package_file_name`].
fn encode_package(package: &str) -> String {
    let mut out = String::with_capacity(package.len() + 4);
    for piece in percent_encoding::utf8_percent_encode(package, KEPT) {
        if piece.starts_with('%') {
            // Escapes come one byte at a time: `%XX`, uppercase from the crate.
            out.push_str(&piece.to_ascii_lowercase());
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// Parses `bytes` as `package`'s document read from `place`.
fn parse_document(
    package: &str,
    place: &str,
    bytes: &[u8],
) -> Result<PackageDocument, MetadataError> {
    let bad = |reason: String| MetadataError::BadBody {
        package: package.to_owned(),
        place: place.to_owned(),
        reason,
    };
    // serde accepts a struct written as an array of its fields; a document never is.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(bad(
            "it is a JSON array; a package document is an object".to_owned()
        ));
    }
    let document: PackageDocument =
        serde_json::from_slice(bytes).map_err(|e| bad(one_line(&e.to_string())))?;
    if document.name.is_empty() {
        return Err(bad(format!("it has no `name`; expected `{package}`")));
    }
    if document.name != package {
        return Err(bad(format!(
            "it is the document of `{}`, not `{package}`",
            document.name
        )));
    }
    Ok(document)
}

/// `text` on one line: line breaks and runs of whitespace become one space.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The reason for a body over [`MAX_DOCUMENT_BYTES`].
fn too_large() -> String {
    format!(
        "it is larger than {} MiB, the most read",
        MAX_DOCUMENT_BYTES / (1024 * 1024)
    )
}

/// A folder of saved npm package documents: `<dir>/<package_file_name(package)>`,
/// each the JSON the npm registry serves for the package. Offline.
///
/// A document is found under any spelling of its percent-encoded name, as people and
/// tools save them: `@acme%2falpha.json` (the npm client's), `%40acme%2Falpha.json`
/// (JavaScript's `encodeURIComponent`), `%2F` or `%2f`, `@` encoded or not. Two files
/// that spell the same name are [`MetadataError::Ambiguous`].
#[derive(Debug, Clone)]
pub struct FolderSource {
    dir: PathBuf,
}

impl FolderSource {
    /// The documents in `dir`. Nothing is read until a fetch.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `package`'s document is written, and looked for first.
    pub fn path_of(&self, package: &str) -> PathBuf {
        self.dir.join(package_file_name(package))
    }

    /// The files of the folder whose name decodes to `package`'s document: the one of
    /// [`path_of`](Self::path_of) first when it exists, then the others in name order.
    fn spellings_of(&self, package: &str) -> io::Result<Vec<PathBuf>> {
        let canonical = self.path_of(package);
        let mut found = Vec::new();
        if canonical.is_file() {
            found.push(canonical.clone());
        }
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            // The canonical path's own error (not found, …) says it better.
            Err(_) => return Ok(found),
        };
        let mut others: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| *path != canonical && names_package(path, package))
            .collect();
        others.sort();
        found.extend(others);
        Ok(found)
    }
}

/// Whether the file at `path` is named `<percent-encoded package>.json`.
fn names_package(path: &Path, package: &str) -> bool {
    let Some(stem) = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_suffix(".json"))
    else {
        return false;
    };
    percent_encoding::percent_decode_str(stem)
        .decode_utf8()
        .is_ok_and(|decoded| decoded == package)
}

impl MetadataSource for FolderSource {
    fn describe(&self) -> String {
        self.dir.display().to_string()
    }

    fn fetch(&self, package: &str) -> Result<PackageDocument, MetadataError> {
        let spellings = self
            .spellings_of(package)
            .map_err(|error| MetadataError::Io {
                package: package.to_owned(),
                path: self.dir.clone(),
                error,
            })?;
        if let [first, second, ..] = spellings.as_slice() {
            return Err(MetadataError::Ambiguous {
                package: package.to_owned(),
                first: first.clone(),
                second: second.clone(),
            });
        }
        let path = spellings
            .into_iter()
            .next()
            .unwrap_or_else(|| self.path_of(package));
        let place = path.display().to_string();
        let io_error = |error: io::Error| MetadataError::Io {
            package: package.to_owned(),
            path: path.clone(),
            error,
        };
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(MetadataError::NotFound {
                    package: package.to_owned(),
                    place,
                });
            }
            Err(e) => return Err(io_error(e)),
        };
        let mut bytes = Vec::new();
        file.take(MAX_DOCUMENT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error)?;
        if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
            return Err(MetadataError::BadBody {
                package: package.to_owned(),
                place,
                reason: too_large(),
            });
        }
        parse_document(package, &place, &bytes)
    }
}

#[cfg(feature = "http")]
pub use http::RegistrySource;

#[cfg(feature = "http")]
mod http {
    use std::io::{self, IsTerminal};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

    use super::{
        MAX_DOCUMENT_BYTES, MetadataError, MetadataSource, encode_package, one_line,
        parse_document, too_large,
    };
    use crate::model::PackageDocument;

    /// The default whole-request timeout.
    const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default number of requests at once.
    const DEFAULT_PARALLEL: usize = 8;

    /// An npm registry (`https://registry.npmjs.org` or a mirror): `GET
    /// <url>/<encoded name>` with `Accept: application/json` (the full document, with
    /// `time`), the name encoded as in [`package_file_name`](super::package_file_name).
    ///
    /// Defaults: a 30 s timeout for each whole request (connection, answer and body),
    /// 8 requests at once in [`fetch_all`](MetadataSource::fetch_all), a progress bar
    /// on stderr only when stderr is a terminal. Proxies come from the usual
    /// environment variables (`HTTPS_PROXY`, `NO_PROXY`, ...).
    #[derive(Debug, Clone)]
    pub struct RegistrySource {
        base: String,
        timeout: Duration,
        parallel: usize,
        progress: Option<bool>,
        agent: ureq::Agent,
    }

    impl RegistrySource {
        /// The registry at `url`: `http` or `https`, a host, no query, fragment or
        /// credentials; a trailing `/` is optional (a path prefix is kept, for mirrors
        /// such as `https://host/api/npm/npm-remote/`).
        pub fn new(url: &str) -> Result<Self, MetadataError> {
            let base = validate_url(url)?;
            Ok(Self {
                base,
                timeout: DEFAULT_TIMEOUT,
                parallel: DEFAULT_PARALLEL,
                progress: None,
                agent: agent(DEFAULT_TIMEOUT),
            })
        }

        /// The longest a whole request may take, body included (default 30 s).
        pub fn timeout(mut self, timeout: Duration) -> Self {
            self.timeout = timeout;
            self.agent = agent(timeout);
            self
        }

        /// How many requests [`fetch_all`](MetadataSource::fetch_all) runs at once
        /// (default 8; 0 counts as 1).
        pub fn parallel(mut self, parallel: usize) -> Self {
            self.parallel = parallel.max(1);
            self
        }

        /// Whether [`fetch_all`](MetadataSource::fetch_all) shows a progress bar on
        /// stderr (default: only when stderr is a terminal).
        pub fn progress(mut self, progress: bool) -> Self {
            self.progress = Some(progress);
            self
        }

        /// The URL requested for `package`.
        pub fn url_of(&self, package: &str) -> String {
            format!("{}/{}", self.base, encode_package(package))
        }

        fn progress_bar(&self, len: usize) -> ProgressBar {
            let shown = self.progress.unwrap_or_else(|| io::stderr().is_terminal());
            if !shown {
                return ProgressBar::hidden();
            }
            let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
            match ProgressStyle::with_template(
                "fetching npm metadata [{bar:30}] {pos}/{len} {wide_msg}",
            ) {
                Ok(style) => bar.with_style(style.progress_chars("=> ")),
                Err(_) => bar,
            }
        }
    }

    /// The client: one whole-request timeout, statuses as answers (not errors).
    fn agent(timeout: Duration) -> ureq::Agent {
        ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(concat!("spirit-registry/", env!("CARGO_PKG_VERSION")))
            .build()
            .into()
    }

    /// `url` without its trailing `/`, when it is an http(s) URL without query,
    /// fragment or credentials.
    fn validate_url(url: &str) -> Result<String, MetadataError> {
        let invalid = |reason: &str| MetadataError::InvalidUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        if url.contains('#') {
            return Err(invalid("it has a fragment (`#...`)"));
        }
        let uri: ureq::http::Uri = url
            .parse()
            .map_err(|e: ureq::http::uri::InvalidUri| invalid(&one_line(&e.to_string())))?;
        match uri.scheme_str() {
            Some("http") | Some("https") => {}
            Some(other) => {
                return Err(invalid(&format!(
                    "its scheme is `{other}`; expected `http` or `https`"
                )));
            }
            None => {
                return Err(invalid(
                    "it has no scheme; expected `http://` or `https://`",
                ));
            }
        }
        let Some(authority) = uri.authority() else {
            return Err(invalid("it has no host"));
        };
        if authority.as_str().contains('@') {
            return Err(invalid(
                "it has credentials; give them to npm, not in the URL",
            ));
        }
        if authority.host().is_empty() {
            return Err(invalid("it has no host"));
        }
        if uri.query().is_some() {
            return Err(invalid("it has a query (`?...`)"));
        }
        Ok(url.trim_end_matches('/').to_owned())
    }

    impl MetadataSource for RegistrySource {
        fn describe(&self) -> String {
            self.base.clone()
        }

        fn fetch(&self, package: &str) -> Result<PackageDocument, MetadataError> {
            let url = self.url_of(package);
            let seconds = self.timeout.as_secs_f64();
            let failed = |error: ureq::Error| client_error(package, &url, seconds, error);
            let mut response = self
                .agent
                .get(&url)
                .header("Accept", "application/json")
                .call()
                .map_err(failed)?;
            let status = response.status().as_u16();
            if status == 404 {
                return Err(MetadataError::NotFound {
                    package: package.to_owned(),
                    place: url,
                });
            }
            if !(200..300).contains(&status) {
                return Err(MetadataError::Http {
                    package: package.to_owned(),
                    url,
                    status,
                });
            }
            let bytes = response
                .body_mut()
                .with_config()
                .limit(MAX_DOCUMENT_BYTES)
                .read_to_vec()
                .map_err(|error| body_error(package, &url, seconds, error))?;
            parse_document(package, &url, &bytes)
        }

        fn fetch_all(&self, packages: &[String]) -> Vec<Result<PackageDocument, MetadataError>> {
            let bar = self.progress_bar(packages.len());
            let next = AtomicUsize::new(0);
            let workers = self.parallel.min(packages.len());
            let mut results: Vec<Option<Result<PackageDocument, MetadataError>>> =
                std::iter::repeat_with(|| None)
                    .take(packages.len())
                    .collect();
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut done = Vec::new();
                            loop {
                                let index = next.fetch_add(1, Ordering::Relaxed);
                                let Some(package) = packages.get(index) else {
                                    break;
                                };
                                done.push((index, self.fetch(package)));
                                bar.set_message(package.clone());
                                bar.inc(1);
                            }
                            done
                        })
                    })
                    .collect();
                for handle in handles {
                    match handle.join() {
                        Ok(done) => {
                            for (index, result) in done {
                                if let Some(slot) = results.get_mut(index) {
                                    *slot = Some(result);
                                }
                            }
                        }
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                }
            });
            bar.finish_and_clear();
            // Every index below `packages.len()` was taken by exactly one worker and
            // every worker finished (a panic is passed on above): no slot is empty.
            results
                .into_iter()
                .zip(packages)
                .map(|(result, package)| {
                    result.unwrap_or_else(|| {
                        Err(MetadataError::Transport {
                            package: package.clone(),
                            url: self.url_of(package),
                            reason: "the request was never made".to_owned(),
                        })
                    })
                })
                .collect()
        }
    }

    /// A failed request (before the body).
    fn client_error(package: &str, url: &str, seconds: f64, error: ureq::Error) -> MetadataError {
        if is_timeout(&error) {
            return MetadataError::Timeout {
                package: package.to_owned(),
                url: url.to_owned(),
                seconds,
            };
        }
        MetadataError::Transport {
            package: package.to_owned(),
            url: url.to_owned(),
            reason: transport_reason(&error),
        }
    }

    /// A failed body read: a timeout, too large, cut short, or a transport error.
    fn body_error(package: &str, url: &str, seconds: f64, error: ureq::Error) -> MetadataError {
        let bad = |reason: String| MetadataError::BadBody {
            package: package.to_owned(),
            place: url.to_owned(),
            reason,
        };
        match &error {
            ureq::Error::BodyExceedsLimit(_) => bad(too_large()),
            ureq::Error::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                bad("the connection closed before the whole body arrived (truncated)".to_owned())
            }
            ureq::Error::Protocol(e) => bad(format!(
                "the body is malformed HTTP ({})",
                one_line(&e.to_string())
            )),
            _ => client_error(package, url, seconds, error),
        }
    }

    fn is_timeout(error: &ureq::Error) -> bool {
        match error {
            ureq::Error::Timeout(_) => true,
            ureq::Error::Io(e) => {
                matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                )
            }
            _ => false,
        }
    }

    /// What went wrong, in words, without the client's `io: ` style prefixes.
    fn transport_reason(error: &ureq::Error) -> String {
        let reason = match error {
            ureq::Error::Io(e) => match e.kind() {
                io::ErrorKind::ConnectionRefused => "the connection was refused".to_owned(),
                io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
                    "the connection was reset".to_owned()
                }
                io::ErrorKind::UnexpectedEof => {
                    "the connection closed before an answer arrived".to_owned()
                }
                _ => e.to_string(),
            },
            ureq::Error::HostNotFound => "the host was not found".to_owned(),
            ureq::Error::TooManyRedirects => "too many redirects".to_owned(),
            other => other.to_string(),
        };
        one_line(&reason)
    }
}
