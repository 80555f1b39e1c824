//! RFC 8785 canonical JSON and the SHA-256 task identity of Curupira work items.
//!
//! A trigger extension hands the host work items as ordered lists of string
//! [`Pair`]s. The host must dispatch each item once, so it needs an identity that is
//! the same for the same list and different for any other list: the [`TaskId`], the
//! SHA-256 of the list's canonical JSON (SPEC section 6), written as 64 lowercase
//! hexadecimal digits.
//!
//! ```
//! use curupira_task_identity::{canonical_pairs, canonicalize_json, Pair, TaskId};
//!
//! let pairs = [Pair::new("issue", "42"), Pair::new("title", "Crash on \"save\"")];
//! assert_eq!(
//!     canonical_pairs(&pairs),
//!     br#"[{"key":"issue","value":"42"},{"key":"title","value":"Crash on \"save\""}]"#,
//! );
//!
//! // Borrowed pairs give the same identity; another order is another task.
//! let id = TaskId::of_pairs(&pairs);
//! assert_eq!(id, TaskId::of_pairs([("issue", "42"), ("title", "Crash on \"save\"")]));
//! assert_ne!(id, TaskId::of_pairs([("title", "Crash on \"save\""), ("issue", "42")]));
//! assert_eq!(id.to_string().parse::<TaskId>().unwrap(), id);
//!
//! // General JCS: members sorted by UTF-16 code units, numbers as ECMAScript writes them.
//! assert_eq!(
//!     canonicalize_json(r#"{"b": 4.50, "a": [1E30, 2e-3, -0]}"#).unwrap(),
//!     br#"{"a":[1e+30,0.002,0],"b":4.5}"#,
//! );
//! ```
//!
//! # What the canonical form is
//!
//! [`canonicalize`] implements RFC 8785 (JCS) for any `serde_json::Value`:
//!
//! - Object members are sorted by the UTF-16 code units of their names (not by code
//!   point or bytes: `"\u{1F600}"` sorts before `"\u{FB01}"`). Arrays keep their order.
//!   No whitespace.
//! - Strings escape `"` and `\` as `\"` and `\\`; U+0008, U+0009, U+000A, U+000C,
//!   U+000D as `\b \t \n \f \r`; every other control below U+0020 as `\u00xx` with
//!   lowercase hex. Everything else, including `/`, U+007F, U+2028/U+2029 and
//!   characters outside the BMP, is written as raw UTF-8. No Unicode normalization.
//! - Numbers are written as ECMAScript's `Number.prototype.toString` writes the
//!   number's `f64` value (via the `ryu-js` crate): `4.50` → `4.5`, `1e30` → `1e+30`,
//!   `-0` → `0`.
//!
//! # Decisions where the RFC leaves the choice to the implementation
//!
//! - **Integers are IEEE-754 doubles**, as in ECMAScript. serde_json keeps integers
//!   that fit in `u64`/`i64` exactly, but the canonical form converts them to `f64`
//!   first (round to nearest, ties to even): `9007199254740993` → `9007199254740992`,
//!   `18446744073709551615` → `18446744073709552000`. Integers beyond `u64`/`i64`
//!   are read by serde_json as `f64` directly. Canonicalizing is therefore not
//!   injective on integers above 2^53; pair lists are unaffected (they hold strings).
//! - **Number reading is correctly rounded**: this crate turns on serde_json's
//!   `float_roundtrip` feature, without which serde_json may read some decimal
//!   literals one unit in the last place off, which would change their canonical form.
//! - **NaN and ±Infinity** cannot occur: serde_json `Value`s do not hold them. (If
//!   another crate in the build turns on serde_json's `arbitrary_precision`, a number
//!   out of `f64` range has no `f64` value; it is written `null`, as `JSON.stringify`
//!   writes `Infinity`.)
//! - **Duplicate member names** in JSON text ([`canonicalize_json`]): serde_json keeps
//!   the last occurrence. RFC 8785 requires I-JSON input, which has none; they are
//!   not refused. [`parse_pairs`] does refuse a repeated `key` or `value` member.
//! - **Nesting depth**: serde_json refuses JSON text nested deeper than 128 levels.
//!   A `Value` built in code is written recursively, one stack frame per level.
//!
//! # Pair lists
//!
//! The canonical form of a pair list is the canonical form of the array of
//! `{"key": k, "value": v}` objects, in the order given; since `"key"` sorts before
//! `"value"`, every element is `{"key":…,"value":…}`. [`canonical_pairs`] and
//! [`TaskId::of_pairs`] write that form directly from the strings (no `Value` is
//! built) and accept anything that implements [`AsPair`]: [`Pair`], `(&str, &str)`,
//! `(String, String)` and references to them. The encoding is injective: every string
//! is delimited by unescaped quotes and escaping is reversible, so two different lists
//! never share canonical bytes.
//!
//! Hashing is nearly free of canonicalization cost: the escaper finds the bytes to
//! escape 64 bytes at a time (SIMD compares, then word arithmetic inside a block) and
//! hands each run of plain text over in one piece; small pieces are gathered in an
//! 8 KiB buffer before they reach SHA-256, large runs go to it directly. On large
//! values `TaskId::of_pairs` runs at over 90% of raw SHA-256 throughput
//! (`benches/identity.rs`).
//!
//! [`parse_pairs`] reads a pair list from JSON text strictly (an array of objects with
//! exactly the string members `key` and `value`) and says what is wrong, where.

mod jcs;
mod pairs;
mod sink;
mod task_id;

pub use jcs::{
    JsonError, canonicalize, canonicalize_json, canonicalize_to_string, write_canonical,
};
pub use pairs::{
    AsPair, Pair, PairsError, PairsErrorKind, canonical_pairs, parse_pairs, write_canonical_pairs,
};
pub use task_id::{ParseTaskIdError, TaskId};

/// The `serde_json` crate, whose `Value` [`canonicalize`] and [`write_canonical`]
/// take: re-exported so a user builds one (`curupira_task_identity::serde_json::json!`)
/// with the very version this crate uses, without a dependency of their own.
pub use serde_json;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
