//! `RegistrySource` against a real HTTP server started by each test on 127.0.0.1 (a
//! hand-written HTTP/1.1 responder over `std::net`, never the internet): the saved
//! documents of `tests/npm/` served under their URL-encoded names, and each way a
//! registry can fail — 404, 500, a response slower than the timeout, a body cut short,
//! a body that is not JSON — each error naming the package and the URL.

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use spirit_registry::{MetadataError, MetadataSource, PackageDocument, RegistrySource};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/npm")
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    accept: Option<String>,
}

/// A test registry on 127.0.0.1: one thread per connection, each answer closes its
/// connection.
struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    max_active: Arc<AtomicUsize>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let active = Arc::new(AtomicUsize::new(0));
        let max_active = Arc::new(AtomicUsize::new(0));
        {
            let (seen, max_active) = (seen.clone(), max_active.clone());
            thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    let (seen, active, max_active) =
                        (seen.clone(), active.clone(), max_active.clone());
                    thread::spawn(move || {
                        let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                        max_active.fetch_max(now, Ordering::SeqCst);
                        // The request stops counting just before its answer is
                        // written: once the client has the answer it may start the next
                        // request, which must not meet this one still counted.
                        serve(stream, &seen, || {
                            active.fetch_sub(1, Ordering::SeqCst);
                        });
                    });
                }
            });
        }
        Server {
            base,
            seen,
            max_active,
        }
    }

    fn source(&self) -> RegistrySource {
        RegistrySource::new(&self.base).unwrap().progress(false)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads one request and answers it by its path (a `/mirror` prefix is ignored):
/// - `/missing-package`, and any name without a document: 404 as npm words it;
/// - `/broken-package`: 500;
/// - `/slow-package`: a document, after 2 s;
/// - `/truncated-package`: `Content-Length: 5000`, 120 bytes of JSON, then closed;
/// - `/html-package`: 200 with an HTML page;
/// - `/pkg-<n>`: a small generated document, after 50 ms;
/// - otherwise `tests/npm/<path>.json`, the saved documents.
fn serve(stream: TcpStream, seen: &Mutex<Vec<Seen>>, answering: impl FnOnce()) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        answering();
        return;
    }
    let mut accept = None;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => {
                answering();
                return;
            }
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("accept")
                {
                    accept = Some(value.trim().to_owned());
                }
            }
        }
    }
    let full_path = request_line
        .split(' ')
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    seen.lock().unwrap().push(Seen {
        path: full_path.clone(),
        accept,
    });
    let path = full_path.strip_prefix("/mirror").unwrap_or(&full_path);
    let (status, content_type, body, length) = match path {
        "/broken-package" => (
            "500 Internal Server Error",
            "text/plain",
            "oops".to_owned(),
            None,
        ),
        "/slow-package" => {
            thread::sleep(Duration::from_secs(2));
            (
                "200 OK",
                "application/json",
                r#"{"name":"slow-package"}"#.to_owned(),
                None,
            )
        }
        // `Content-Length: 5000`, then 120 bytes and the connection closes, 4880 short.
        "/truncated-package" => (
            "200 OK",
            "application/json",
            fixture("spirit-weather.json")[..120].to_owned(),
            Some(5000),
        ),
        "/html-package" => (
            "200 OK",
            "text/html",
            "<!doctype html><title>Registry</title><p>Welcome!</p>".to_owned(),
            None,
        ),
        _ => {
            let name = &path[1..];
            if let Some(n) = name.strip_prefix("pkg-")
                && n.parse::<u32>().is_ok()
            {
                thread::sleep(Duration::from_millis(50));
                let body = format!(
                    r#"{{"name":"{name}","dist-tags":{{"latest":"1.0.{n}"}},"versions":{{"1.0.{n}":{{"name":"{name}","version":"1.0.{n}"}}}}}}"#
                );
                ("200 OK", "application/json", body, None)
            } else if let Ok(text) =
                std::fs::read_to_string(fixtures().join(format!("{name}.json")))
            {
                ("200 OK", "application/json", text, None)
            } else {
                (
                    "404 Not Found",
                    "application/json",
                    r#"{"error":"Not found"}"#.to_owned(),
                    None,
                )
            }
        }
    };
    answering();
    respond(&stream, status, content_type, &body, length);
}

/// Writes one answer and closes; `length` overrides the `Content-Length` header (to
/// announce more than is sent).
fn respond(
    mut out: &TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
    length: Option<usize>,
) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        length.unwrap_or(body.len())
    );
    let _ = out.write_all(response.as_bytes());
    let _ = out.flush();
}

fn fixture(file: &str) -> String {
    std::fs::read_to_string(fixtures().join(file)).unwrap()
}

fn saved(file: &str) -> PackageDocument {
    serde_json::from_str(&fixture(file)).unwrap()
}

#[test]
fn saved_documents_are_fetched_as_served() {
    let server = Server::start();
    let source = server.source();

    let scoped = source.fetch("@example/spirit-extension").unwrap();
    assert_eq!(scoped, saved("@example%2fspirit-extension.json"));
    assert_eq!(scoped.dist_tags["next"], "0.2.0-beta.1");
    let unscoped = source.fetch("spirit-weather").unwrap();
    assert_eq!(unscoped, saved("spirit-weather.json"));

    let seen = server.seen();
    assert_eq!(
        seen.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
        ["/@example%2fspirit-extension", "/spirit-weather"]
    );
    for request in &seen {
        assert_eq!(request.accept.as_deref(), Some("application/json"));
    }
}

#[test]
fn a_base_url_with_a_path_and_a_trailing_slash_is_used_as_a_prefix() {
    let server = Server::start();
    let source = RegistrySource::new(&format!("{}/mirror/", server.base))
        .unwrap()
        .progress(false);

    assert_eq!(source.describe(), format!("{}/mirror", server.base));
    assert_eq!(
        source.url_of("@example/spirit-extension"),
        format!("{}/mirror/@example%2fspirit-extension", server.base)
    );
    let document = source.fetch("@example/spirit-extension").unwrap();
    assert_eq!(document.name, "@example/spirit-extension");
    assert_eq!(server.seen()[0].path, "/mirror/@example%2fspirit-extension");
}

#[test]
fn a_404_is_not_found_naming_the_package_and_the_url() {
    let server = Server::start();
    let error = server.source().fetch("missing-package").unwrap_err();

    let url = server.url("/missing-package");
    assert!(
        matches!(&error, MetadataError::NotFound { package, place }
            if package == "missing-package" && *place == url),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("npm package `missing-package` was not found at `{url}`")
    );
}

#[test]
fn a_500_is_an_http_error_with_its_status() {
    let server = Server::start();
    let error = server.source().fetch("broken-package").unwrap_err();

    let url = server.url("/broken-package");
    assert!(
        matches!(&error, MetadataError::Http { package, url: u, status: 500 }
            if package == "broken-package" && *u == url),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "fetching npm package `broken-package` from `{url}` failed: the registry answered HTTP 500"
        )
    );
}

#[test]
fn a_response_slower_than_the_timeout_is_a_timeout() {
    let server = Server::start();
    let source = server.source().timeout(Duration::from_millis(300));
    let started = Instant::now();
    let error = source.fetch("slow-package").unwrap_err();
    let elapsed = started.elapsed();

    assert!(
        elapsed < Duration::from_millis(1500),
        "gave up after {elapsed:?}"
    );
    let url = server.url("/slow-package");
    assert!(
        matches!(&error, MetadataError::Timeout { package, url: u, seconds }
            if package == "slow-package" && *u == url && *seconds == 0.3),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("fetching npm package `slow-package` from `{url}` timed out after 0.3 s")
    );
}

#[test]
fn a_body_shorter_than_its_content_length_is_a_bad_body() {
    let server = Server::start();
    let error = server.source().fetch("truncated-package").unwrap_err();

    let url = server.url("/truncated-package");
    assert!(
        matches!(&error, MetadataError::BadBody { package, place, reason }
            if package == "truncated-package" && *place == url && reason.contains("truncated")),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the document for npm package `truncated-package` at `{url}` is not usable: the connection closed before the whole body arrived (truncated)"
        )
    );
}

#[test]
fn a_body_that_is_not_json_is_a_bad_body() {
    let server = Server::start();
    let error = server.source().fetch("html-package").unwrap_err();

    let url = server.url("/html-package");
    assert!(
        matches!(&error, MetadataError::BadBody { package, place, .. }
            if package == "html-package" && *place == url),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the document for npm package `html-package` at `{url}` is not usable: expected value at line 1 column 1"
        )
    );
}

#[test]
fn a_refused_connection_is_a_transport_error() {
    // A port that was just free: nothing listens there any more.
    let base = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let source = RegistrySource::new(&base)
        .unwrap()
        .progress(false)
        .timeout(Duration::from_secs(5));
    let error = source.fetch("spirit-weather").unwrap_err();

    let url = format!("{base}/spirit-weather");
    assert!(
        matches!(&error, MetadataError::Transport { package, url: u, .. }
            if package == "spirit-weather" && *u == url),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "fetching npm package `spirit-weather` from `{url}` failed: the connection was refused"
        )
    );
}

#[test]
fn fetch_all_keeps_the_order_asked_with_at_most_parallel_requests_at_once() {
    let server = Server::start();
    let source = server.source().parallel(3);
    let mut asked: Vec<String> = (0..10).map(|n| format!("pkg-{n}")).collect();
    asked.insert(4, "missing-package".to_owned());
    asked.push("spirit-weather".to_owned());

    let results = source.fetch_all(&asked);

    assert_eq!(results.len(), asked.len());
    for (package, result) in asked.iter().zip(&results) {
        match result {
            Ok(document) => assert_eq!(&document.name, package),
            Err(MetadataError::NotFound { package: p, .. }) => {
                assert_eq!(p, "missing-package");
                assert_eq!(package, "missing-package");
            }
            Err(other) => panic!("{package}: {other}"),
        }
    }
    assert_eq!(results[3].as_ref().unwrap().dist_tags["latest"], "1.0.3");
    assert_eq!(server.seen().len(), asked.len());
    let max = server.max_active.load(Ordering::SeqCst);
    assert!(max <= 3, "{max} requests at once");
    assert!(max >= 2, "the requests were not made in parallel");
}

#[test]
fn fetch_all_with_one_at_a_time_and_a_progress_bar() {
    let server = Server::start();
    let source = server.source().parallel(0).progress(true);
    let asked: Vec<String> = (0..3).map(|n| format!("pkg-{n}")).collect();

    let results = source.fetch_all(&asked);

    let names: Vec<_> = results.into_iter().map(|r| r.unwrap().name).collect();
    assert_eq!(names, asked);
    assert_eq!(server.max_active.load(Ordering::SeqCst), 1);
    assert!(source.fetch_all(&[]).is_empty());
}

#[test]
fn registry_urls_are_checked() {
    let cases = [
        (
            "ftp://registry.example",
            "its scheme is `ftp`; expected `http` or `https`",
        ),
        (
            "registry.npmjs.org",
            "it has no scheme; expected `http://` or `https://`",
        ),
        (
            "https://registry.example/?write=1",
            "it has a query (`?...`)",
        ),
        (
            "https://registry.example/#top",
            "it has a fragment (`#...`)",
        ),
        (
            "https://user:secret@registry.example/",
            "it has credentials; give them to npm, not in the URL",
        ),
    ];
    for (url, reason) in cases {
        let error = RegistrySource::new(url).unwrap_err();
        assert!(
            matches!(&error, MetadataError::InvalidUrl { url: u, reason: r } if u == url && r == reason),
            "{url}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("`{url}` is not a usable npm registry URL: {reason}")
        );
        assert_eq!(error.package(), None);
    }
    for url in ["", "http://", "not a url"] {
        assert!(
            matches!(
                RegistrySource::new(url),
                Err(MetadataError::InvalidUrl { .. })
            ),
            "{url:?}"
        );
    }
    for url in [
        "https://registry.npmjs.org",
        "https://registry.npmjs.org/",
        "http://127.0.0.1:4873",
        "https://artifacts.example/api/npm/npm-remote/",
    ] {
        let source = RegistrySource::new(url).unwrap();
        assert_eq!(source.describe(), url.trim_end_matches('/'));
    }
    assert_eq!(
        RegistrySource::new("https://registry.npmjs.org/")
            .unwrap()
            .url_of("@acme/lookup"),
        "https://registry.npmjs.org/@acme%2flookup"
    );
}
