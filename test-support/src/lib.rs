//! What the workspace's test suites share, so that no test file carries its own copy:
//! the fake extensions the host's tests launch ([`fakes`]), the one rule for a missing
//! tool ([`fakes::tool_or_skip`]), copying fixtures ([`fs`]), the conformance vectors'
//! folder ([`conformance`]), the one-line form of a diagnostic the corpus tests compare
//! ([`diagnostics`]) and a child run bounded in time ([`process`]).
//!
//! Not published: it is a dev-dependency only, by path, so packaging a crate drops it.
//! Everything here may panic: it serves tests, where a panic is a failure with a
//! message.
//!
//! ```
//! use curupira_test_support::fs::{copy_dir, files_with_extension};
//!
//! let from = std::env::temp_dir().join(format!("support-doctest-{}", std::process::id()));
//! std::fs::create_dir_all(from.join("inner")).unwrap();
//! std::fs::write(from.join("b.json"), "{}").unwrap();
//! std::fs::write(from.join("a.json"), "{}").unwrap();
//! std::fs::write(from.join("inner/c.txt"), "c").unwrap();
//! let to = from.with_extension("copy");
//! copy_dir(&from, &to);
//! assert_eq!(std::fs::read_to_string(to.join("inner/c.txt")).unwrap(), "c");
//! let names: Vec<_> = files_with_extension(&to, "json")
//!     .into_iter()
//!     .map(|path| path.file_name().unwrap().to_owned())
//!     .collect();
//! assert_eq!(names, ["a.json", "b.json"]);
//! # std::fs::remove_dir_all(&from).unwrap();
//! # std::fs::remove_dir_all(&to).unwrap();
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod conformance;
pub mod diagnostics;
pub mod fakes;
pub mod fs;
pub mod process;
