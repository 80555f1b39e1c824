//! What a [`Client`](crate::Client) is given once, when it is created: how long each
//! call may take and how large what crosses the wire may be.

use std::time::Duration;

use curupira_framing::DEFAULT_MAX_BODY;

/// How long the client waits. Each covers a whole exchange: writing the request and
/// reading every byte of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// For the `initialize` reply (10 s by default: an `npx` extension may start
    /// slowly).
    pub initialize: Duration,
    /// For the reply to any other request but `shutdown` (30 s by default).
    pub request: Duration,
    /// For the `shutdown` reply, and then again for the process to exit once its
    /// stdin is closed (5 s by default).
    pub shutdown: Duration,
}

impl Timeouts {
    /// The same timeout for everything: every reply and the grace period after
    /// `shutdown`.
    pub const fn uniform(timeout: Duration) -> Self {
        Timeouts {
            initialize: timeout,
            request: timeout,
            shutdown: timeout,
        }
    }

    /// The timeout for a method: `initialize`, `shutdown`, or `request` for any other.
    pub fn for_method(&self, method: &str) -> Duration {
        match method {
            "initialize" => self.initialize,
            "shutdown" => self.shutdown,
            _ => self.request,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            initialize: Duration::from_secs(10),
            request: Duration::from_secs(30),
            shutdown: Duration::from_secs(5),
        }
    }
}

/// How large what comes from the extension may be, checked before memory is spent on
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest frame body sent or accepted, in bytes (16 MiB by default). A reply
    /// announcing more is a transport failure before any of its body is kept.
    pub max_frame_bytes: usize,
    /// The longest stderr line passed on whole, in bytes (4 KiB by default); the rest
    /// of a longer line is counted, not kept.
    pub stderr_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: DEFAULT_MAX_BODY,
            stderr_line_bytes: 4096,
        }
    }
}

/// Everything a client is configured with, given once when it is created.
///
/// ```
/// use std::time::Duration;
/// use curupira_client::{Limits, Options, Timeouts};
///
/// let options = Options {
///     timeouts: Timeouts::uniform(Duration::from_secs(2)),
///     limits: Limits { max_frame_bytes: 1 << 20, ..Limits::default() },
/// };
/// assert_eq!(options.timeouts.for_method("trigger/poll"), Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// How long each call may take.
    pub timeouts: Timeouts,
    /// How large frames and stderr lines may be.
    pub limits: Limits,
}
