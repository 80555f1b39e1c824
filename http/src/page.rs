//! `GET /`: one self-contained HTML page (no build step, no external script, style or
//! font), served from the binary. It reads the API with `fetch` every two seconds: the
//! host, what runs now with its elapsed time, the retry queue, a chart of the tasks
//! finished per hour by outcome (inline SVG), and the recent tasks, each opening its
//! attempts, their logs and a retry button.

/// The page.
pub const HTML: &str = include_str!("page.html");
