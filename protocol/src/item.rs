//! The rules every polled item obeys, whoever writes or reads it.

use std::collections::HashSet;
use std::fmt;

use curupira_task_identity::AsPair;
use serde_json::Value;

/// The variables the host provides to every prompt itself. An item may not carry
/// them as keys: `${repository}` and `${automation}` always mean the host's values.
pub const RESERVED_KEYS: [&str; 2] = ["repository", "automation"];

/// Whether `key` is one of the [`RESERVED_KEYS`].
pub fn is_reserved(key: &str) -> bool {
    RESERVED_KEYS.contains(&key)
}

/// An item that breaks an item rule: which pair, and which rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pair {index} {problem}")]
pub struct ItemError {
    /// The pair's position in the item, from 0.
    pub index: usize,
    /// The rule it breaks.
    pub problem: ItemProblem,
}

/// The item rule a pair breaks. Its `Display` completes a sentence whose subject is
/// the pair (`pair 1 repeats the key "a"; …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemProblem {
    /// The key is `""`.
    EmptyKey,
    /// The key is one of the [`RESERVED_KEYS`].
    ReservedKey(String),
    /// An earlier pair of the same item has this key.
    RepeatedKey(String),
}

impl ItemProblem {
    /// The offending key (`""` for [`ItemProblem::EmptyKey`]).
    pub fn key(&self) -> &str {
        match self {
            ItemProblem::EmptyKey => "",
            ItemProblem::ReservedKey(key) | ItemProblem::RepeatedKey(key) => key,
        }
    }
}

impl fmt::Display for ItemProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ItemProblem::EmptyKey => f.write_str("has an empty key; item keys are non-empty"),
            ItemProblem::ReservedKey(key) => write!(
                f,
                "has the key {}, which is reserved: the host provides `repository` and \
                 `automation` itself",
                Value::from(key.as_str())
            ),
            ItemProblem::RepeatedKey(key) => write!(
                f,
                "repeats the key {}; a key appears once per item",
                Value::from(key.as_str())
            ),
        }
    }
}

/// The item rules: every key is non-empty, not reserved, and appears once. The first
/// pair that breaks one is reported. Values may be anything, `""` included.
///
/// ```
/// use curupira_protocol::{ItemProblem, check_item};
///
/// assert!(check_item(&[("issue", "7"), ("title", "")]).is_ok());
/// let error = check_item(&[("a", "1"), ("a", "2")]).unwrap_err();
/// assert_eq!((error.index, error.problem), (1, ItemProblem::RepeatedKey("a".into())));
/// assert_eq!(
///     check_item(&[("repository", "x")]).unwrap_err().to_string(),
///     "pair 0 has the key \"repository\", which is reserved: the host provides \
///      `repository` and `automation` itself"
/// );
/// ```
pub fn check_item<P: AsPair>(pairs: &[P]) -> Result<(), ItemError> {
    let mut seen = HashSet::with_capacity(pairs.len());
    for (index, pair) in pairs.iter().enumerate() {
        let key = pair.key();
        let problem = if key.is_empty() {
            ItemProblem::EmptyKey
        } else if is_reserved(key) {
            ItemProblem::ReservedKey(key.to_owned())
        } else if !seen.insert(key) {
            ItemProblem::RepeatedKey(key.to_owned())
        } else {
            continue;
        };
        return Err(ItemError { index, problem });
    }
    Ok(())
}
