//! The server: [`bind`] refuses what is not loopback unless asked, [`Server::start`]
//! serves on a thread and a Tokio runtime of its own, bounded by [`Limits`].

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use tokio::sync::{Semaphore, oneshot};

use crate::{Api, ApiError, MAX_TASKS, Metrics, TasksQuery};

/// How much one client may ask of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body (the retry's is `{}`); a larger one is refused (413)
    /// from its `Content-Length`, or once that many bytes came.
    pub max_body_bytes: usize,
    /// The most bytes of a request line and headers (at least 8,192).
    pub max_header_bytes: usize,
    /// The longest a client may take to send its headers.
    pub header_timeout: Duration,
    /// The longest one connection lives, its request and answer included (one
    /// request per connection: no keep-alive).
    pub request_timeout: Duration,
    /// The most connections served at once; one more is closed at once.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 16 * 1024,
            max_header_bytes: 16 * 1024,
            header_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            max_connections: 64,
        }
    }
}

/// Why [`bind`] did not give a listener.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The address is not a loopback one, and remote listening was not allowed.
    #[error(
        "refusing to listen on {addr}: it is not a loopback address (127.0.0.1, ::1); the \
         server has no authentication, so another address needs `--listen-remote` \
         (`[settings.http] allow_remote = true`)"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Io {
        /// The address asked for.
        addr: SocketAddr,
        /// The system's error.
        source: io::Error,
    },
}

/// Listens on `addr` (port 0: one the system picks), refusing an address that is not
/// loopback unless `allow_remote`.
pub fn bind(addr: SocketAddr, allow_remote: bool) -> Result<TcpListener, BindError> {
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(BindError::NotLoopback { addr });
    }
    TcpListener::bind(addr).map_err(|source| BindError::Io { addr, source })
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    local_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// What every request handler shares.
struct Context {
    api: Arc<dyn Api>,
    metrics: Arc<Metrics>,
    limits: Limits,
    /// The `Host` values a request may carry; empty: any (a remote listener on an
    /// unspecified address).
    hosts: Vec<String>,
}

impl Server {
    /// Serves `listener` with `api` and `metrics` until [`stop`](Self::stop), on a
    /// thread of its own. The error is a thread or runtime that cannot start.
    pub fn start(
        listener: TcpListener,
        api: Arc<dyn Api>,
        metrics: Arc<Metrics>,
        limits: Limits,
    ) -> io::Result<Server> {
        let local_addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(4)
            .thread_name("curupira-http-api")
            .build()?;
        let context = Arc::new(Context {
            api,
            metrics,
            limits,
            hosts: allowed_hosts(local_addr),
        });
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("curupira-http".to_owned())
            .spawn(move || {
                runtime.block_on(accept(listener, context, stopped));
                // Requests still answering are dropped with the runtime.
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok(Server {
            local_addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on (with the port the system picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops listening and waits (at most about a second) for the thread.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The `Host` values that name `addr`: `ip:port` and, on loopback, `localhost:port`;
/// none (any) for an unspecified address (`0.0.0.0`), whose names are not known.
fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    if addr.ip().is_unspecified() {
        return Vec::new();
    }
    let port = addr.port();
    let mut hosts = vec![addr.to_string()];
    if addr.ip().is_loopback() {
        hosts.push(format!("localhost:{port}"));
    }
    hosts
}

async fn accept(listener: TcpListener, context: Arc<Context>, mut stopped: oneshot::Receiver<()>) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(err) => {
            tracing::error!("the HTTP server cannot serve its socket: {err}");
            return;
        }
    };
    let permits = Arc::new(Semaphore::new(context.limits.max_connections));
    loop {
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            // A connection that failed before it was accepted: the next one.
            continue;
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            // Over the limit: closed at once, no answer.
            continue;
        };
        let context = Arc::clone(&context);
        tokio::spawn(async move {
            let limits = context.limits;
            let service = service_fn(move |request| {
                let context = Arc::clone(&context);
                async move { Ok::<_, Infallible>(answer(request, &context).await) }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(limits.max_header_bytes.max(8192))
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(limits.request_timeout, connection).await;
            drop(permit);
        });
    }
}

type Answer = Response<Full<Bytes>>;

async fn answer(request: Request<Incoming>, context: &Context) -> Answer {
    match route(request, context).await {
        Ok(answer) => answer,
        Err(error) => json_answer(
            StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &error.body(),
        ),
    }
}

async fn route(request: Request<Incoming>, context: &Context) -> Result<Answer, ApiError> {
    check_host(&request, context)?;
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or_default().to_owned();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let method = request.method().clone();
    let get = method == Method::GET || method == Method::HEAD;
    let wrong_method = |allowed: &'static str| {
        Err(ApiError::new(
            405,
            "method-not-allowed",
            format!("`{path}` answers {allowed} only, not {method}"),
        ))
    };
    match segments.as_slice() {
        [""] if get => Ok(text_answer(
            StatusCode::OK,
            "text/html; charset=utf-8",
            crate::page::HTML.to_owned(),
        )),
        ["metrics"] if get => Ok(text_answer(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            context.metrics.render(),
        )),
        ["api", "v1", "openapi.json"] if get => {
            Ok(json_answer(StatusCode::OK, &crate::openapi::document()))
        }
        ["api", "v1", "state"] if get => {
            let api = Arc::clone(&context.api);
            json_ok(blocking(move || api.state()).await?)
        }
        ["api", "v1", "tasks"] if get => {
            let query = tasks_query(&query)?;
            let api = Arc::clone(&context.api);
            json_ok(blocking(move || api.tasks(&query)).await?)
        }
        ["api", "v1", "outcomes"] if get => {
            let hours = match parameter(&query, "hours") {
                None => 24,
                Some(text) => whole(&text, "hours", 1, 24 * 31)?,
            };
            let api = Arc::clone(&context.api);
            json_ok(blocking(move || api.outcomes(hours)).await?)
        }
        ["api", "v1", "tasks", id] if get => {
            let id = (*id).to_owned();
            let api = Arc::clone(&context.api);
            json_ok(blocking(move || api.task(&id)).await?)
        }
        ["api", "v1", "tasks", id, "log"] if get => {
            let attempt = parameter(&query, "attempt")
                .map(|text| whole(&text, "attempt", 1, u32::MAX))
                .transpose()?;
            let id = (*id).to_owned();
            let api = Arc::clone(&context.api);
            let log = blocking(move || api.log(&id, attempt)).await?;
            Ok(text_answer(
                StatusCode::OK,
                "text/plain; charset=utf-8",
                log,
            ))
        }
        ["api", "v1", "tasks", id, "retry"] if method == Method::POST => {
            let id = (*id).to_owned();
            check_post(&request)?;
            read_body(request, context.limits.max_body_bytes).await?;
            let api = Arc::clone(&context.api);
            json_ok(blocking(move || api.retry(&id)).await?)
        }
        ["api", "v1", "tasks", _, "retry"] => wrong_method("POST"),
        [""]
        | ["metrics"]
        | ["api", "v1", "openapi.json" | "state" | "tasks" | "outcomes"]
        | ["api", "v1", "tasks", _]
        | ["api", "v1", "tasks", _, "log"] => wrong_method("GET"),
        _ => Err(ApiError::not_found(format!(
            "nothing is served at `{path}`"
        ))),
    }
}

/// Runs a call of the host's on a blocking thread.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(call)
        .await
        .unwrap_or_else(|_| Err(ApiError::internal("the host's answer failed")))
}

/// The `Host` header names this server (see the crate's documentation).
fn check_host(request: &Request<Incoming>, context: &Context) -> Result<(), ApiError> {
    if context.hosts.is_empty() {
        return Ok(());
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    match host {
        Some(host) if context.hosts.iter().any(|allowed| allowed == host) => Ok(()),
        Some(host) => Err(ApiError::new(
            403,
            "wrong-host",
            format!(
                "the `Host` header `{host}` does not name this server ({}); requests that \
                 reach it under another name are refused (DNS rebinding)",
                context.hosts.join(" or ")
            ),
        )),
        None => Err(ApiError::new(
            403,
            "wrong-host",
            "a request without a `Host` header is refused",
        )),
    }
}

/// A mutation: `application/json`, and an `Origin`, when sent, of this host.
fn check_post(request: &Request<Incoming>) -> Result<(), ApiError> {
    let headers = request.headers();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case("application/json") {
        return Err(ApiError::new(
            415,
            "unsupported-media-type",
            format!(
                "a POST must be `Content-Type: application/json`, not `{content_type}` (a \
                 form of another site cannot send that)"
            ),
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        if origin != format!("http://{host}") {
            return Err(ApiError::new(
                403,
                "cross-origin",
                format!(
                    "a POST from the origin `{origin}` is refused: only this server's own \
                     page (`http://{host}`) may send one"
                ),
            ));
        }
    }
    Ok(())
}

/// Reads a request's body, at most `max` bytes; an empty one or a JSON object.
async fn read_body(request: Request<Incoming>, max: usize) -> Result<Value, ApiError> {
    let too_large = || {
        ApiError::new(
            413,
            "too-large",
            format!("the request body is larger than {max} bytes"),
        )
    };
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.parse::<u64>().ok());
    if announced.is_some_and(|length| length > max as u64) {
        return Err(too_large());
    }
    let body = Limited::new(request.into_body(), max)
        .collect()
        .await
        .map_err(|_| too_large())?
        .to_bytes();
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ApiError::bad_request(
            "the request body must be a JSON object",
        )),
        Err(err) => Err(ApiError::bad_request(format!(
            "the request body is not JSON: {err}"
        ))),
    }
}

/// `GET /api/v1/tasks`'s query parameters.
fn tasks_query(query: &str) -> Result<TasksQuery, ApiError> {
    for (key, _) in form_urlencoded::parse(query.as_bytes()) {
        if !["status", "automation", "limit"].contains(&key.as_ref()) {
            return Err(ApiError::bad_request(format!(
                "unknown query parameter `{key}` (expected `status`, `automation`, `limit`)"
            )));
        }
    }
    let status = parameter(query, "status").filter(|s| !s.is_empty());
    if let Some(status) = &status
        && !["running", "succeeded", "failed", "interrupted"].contains(&status.as_str())
    {
        return Err(ApiError::bad_request(format!(
            "`status` must be running, succeeded, failed or interrupted, not `{status}`"
        )));
    }
    Ok(TasksQuery {
        status,
        automation: parameter(query, "automation").filter(|s| !s.is_empty()),
        limit: match parameter(query, "limit") {
            None => 50,
            Some(text) => whole(&text, "limit", 1, MAX_TASKS)?,
        },
    })
}

/// The last value of query parameter `name`.
fn parameter(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .filter(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
        .last()
}

/// `text` as a whole number from `min` to `max`.
fn whole(text: &str, name: &str, min: u32, max: u32) -> Result<u32, ApiError> {
    text.parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "`{name}` must be a whole number from {min} to {max}, not `{text}`"
            ))
        })
}

fn json_ok(value: Value) -> Result<Answer, ApiError> {
    Ok(json_answer(StatusCode::OK, &value))
}

fn json_answer(status: StatusCode, value: &Value) -> Answer {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    text.push('\n');
    text_answer(status, "application/json", text)
}

fn text_answer(status: StatusCode, content_type: &'static str, text: String) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from(text)));
    *answer.status_mut() = status;
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_loopback_address_needs_remote_listening() {
        let err = bind("0.0.0.0:0".parse().unwrap(), false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("refusing to listen on 0.0.0.0:0"),
            "{err}"
        );
        assert!(bind("127.0.0.1:0".parse().unwrap(), false).is_ok());
    }

    #[test]
    fn hosts_name_the_address() {
        assert_eq!(
            allowed_hosts("127.0.0.1:8080".parse().unwrap()),
            ["127.0.0.1:8080", "localhost:8080"]
        );
        assert!(allowed_hosts("0.0.0.0:8080".parse().unwrap()).is_empty());
    }

    #[test]
    fn the_tasks_query_is_checked() {
        assert_eq!(
            tasks_query("status=failed&automation=fix%20it&limit=7").unwrap(),
            TasksQuery {
                status: Some("failed".to_owned()),
                automation: Some("fix it".to_owned()),
                limit: 7
            }
        );
        assert_eq!(tasks_query("").unwrap().limit, 50);
        assert!(
            tasks_query("limit=0")
                .unwrap_err()
                .message
                .contains("from 1 to 1000")
        );
        assert!(tasks_query("status=odd").is_err());
        assert!(
            tasks_query("colour=red")
                .unwrap_err()
                .message
                .contains("`colour`")
        );
    }
}
