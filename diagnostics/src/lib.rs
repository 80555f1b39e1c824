//! Diagnostics shared by the Curupira and Spirit validators: the manifest
//! (`curupira-extension.toml`), Spirit `package.json` files and registry `entry.json`
//! files all report problems the same way.
//!
//! A [`Diagnostic`] has a severity, a stable code (`manifest/unknown-key`), the file,
//! an RFC 6901 [`JsonPointer`] to the offending value, line and column when the source
//! is a text file, and a one-sentence message. A [`Report`] gathers them, counts them
//! and renders them for people (rustc's layout: `--> file:line:col`, the line, a caret)
//! or as SPEC section 7's JSON object.
//!
//! Validators never compute positions themselves. A format fills a [`SourceMap`]
//! (pointer → byte spans) once — TOML with `toml::parse` (feature `toml`) — and a
//! [`Collector`] turns each pointer into a span, a line and a column. A member that is
//! missing is reported at the pointer it would have, located at its enclosing table.
//!
//! Adding a source format means filling a [`SourceMap`]: for every member, its pointer
//! with the byte span of its key and of its value (for every array element, the value
//! span alone), plus the root. A JSON file is filled the same way as TOML — a scan of
//! the text that records those spans (`serde_json` keeps none), after which a
//! validator can check the `serde_json::Value` by pointers alone.
//!
//! That scan is `json::parse` (feature `json`), used for `package.json`,
//! `cli-hooks.json` and `entry.json`: a strict RFC 8259 reader, about as fast as
//! `serde_json::from_str`, that returns the same `serde_json::Value` plus a compact
//! record of every span, turned into a [`SourceMap`] by `JsonDocument::source_map` only
//! when a validator has something to report. A syntax error is one diagnostic with its
//! line and column; a member repeated within one object keeps its last value, as
//! `JSON.parse` does, and each repetition is reported at its key.
//!
//! It also holds the value rules the three validators share: SemVer versions with hints
//! for npm-style spellings ([`version`]), npm package names ([`npm`]) and did-you-mean
//! suggestions ([`did_you_mean`]).
//!
//! ```
//! use curupira_diagnostics::{Collector, JsonPointer, Report, SourceMap};
//!
//! let text = "[launch]\ntype = \"npx\"\n";
//! let mut map = SourceMap::new();
//! let launch = JsonPointer::root().key("launch");
//! map.insert(launch.clone(), Some(1..7), 0..8);
//! map.insert(launch.key("type"), Some(9..13), 16..21);
//!
//! let mut collector = Collector::new("ext.toml", text, map);
//! collector.error("demo/missing-key", &launch.key("package"), "`[launch]` needs `package`");
//!
//! let mut report = Report::new();
//! report.add_source("ext.toml", text);
//! report.extend(collector.finish());
//! assert_eq!(report.errors(), 1);
//! assert_eq!(
//!     report.render_human(false),
//!     "error[demo/missing-key]: `[launch]` needs `package`\n \
//!      --> ext.toml:1:1\n  |\n1 | [launch]\n  | ^^^^^^^^\n  = path: /launch/package\n\n\
//!      error: 1 error in ext.toml\n"
//! );
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod closed_set;
mod code;
mod diagnostic;
pub mod js;
#[cfg(feature = "json")]
pub mod json;
mod lines;
pub mod names;
pub mod npm;
mod pointer;
mod render;
mod report;
mod source_map;
mod suggest;
#[cfg(feature = "toml")]
pub mod toml;
pub mod version;

pub use code::{Code, doc_table_rows};
pub use diagnostic::{Diagnostic, Position, Severity};
pub use lines::LineIndex;
pub use pointer::{JsonPointer, PointerError};
pub use render::color_enabled;
pub use report::{Report, decode_utf8};
pub use source_map::{Anchor, Collector, SourceMap, Spans};
pub use suggest::{all_of, did_you_mean, one_of};

/// The `semver` crate, whose `Version` [`version::parse_version`] returns:
/// re-exported so a user names it with the very version this crate uses, without a
/// dependency of their own.
pub use semver;

/// The `serde_json` crate (feature `json`), whose `Value` [`json::parse`] returns:
/// re-exported for the same reason.
#[cfg(feature = "json")]
pub use serde_json;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
