//! Reading a JSON value strictly: what is wrong, at which JSON Pointer.

use std::fmt;

use curupira_jsonrpc::describe;
use curupira_task_identity::Pair;
use serde_json::{Map, Value};

use crate::item::ItemError;

/// Whose value was read: the names messages use for the whole value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// A request's `params` (read by an extension).
    Params,
    /// A response's `result` (read by a host).
    Result,
}

impl Root {
    fn name(self) -> &'static str {
        match self {
            Root::Params => "the params",
            Root::Result => "the result",
        }
    }
}

/// A params or result value that does not have the shape its method requires. Its
/// `Display` is one sentence naming the member by its JSON Pointer
/// (`` `/values/0/value` must be a string, found 5 ``).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", Shown(self))]
pub struct ShapeError {
    /// Whose value it is.
    pub root: Root,
    /// RFC 6901 pointer of the offending member, relative to the value (`""` for the
    /// value itself).
    pub pointer: String,
    /// What is wrong there.
    pub problem: Problem,
}

/// What is wrong at a [`ShapeError`]'s pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A required member is absent (or the params are).
    Missing {
        /// What the member should be; named when the whole value is missing.
        expected: &'static str,
        /// A hint for a member that is easy to forget (`""` when there is none).
        hint: &'static str,
    },
    /// A value of the wrong JSON type.
    WrongType {
        /// What it should be (`a string`, `an object with …`).
        expected: &'static str,
        /// What it is, shortened (`5`, `an array`).
        found: String,
    },
    /// A string that must not be empty is.
    Empty,
    /// An object with a member its definition does not allow.
    UnknownMember {
        /// The member's name.
        member: String,
        /// What the object may hold.
        allowed: &'static str,
    },
    /// A `protocol_version` that is not a version.
    Version(crate::VersionError),
    /// A polled item that breaks an item rule (the pointer is `/values/<index>`).
    Item(ItemError),
}

struct Shown<'a>(&'a ShapeError);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ShapeError {
            root,
            pointer,
            problem,
        } = self.0;
        let subject = |f: &mut fmt::Formatter<'_>| {
            if pointer.is_empty() {
                f.write_str(root.name())
            } else {
                write!(f, "`{pointer}`")
            }
        };
        match problem {
            Problem::Missing { expected, .. } if pointer.is_empty() => {
                write!(f, "{} are missing; expected {expected}", root.name())
            }
            Problem::Missing { hint, .. } => {
                write!(f, "member `{pointer}` is required")?;
                if !hint.is_empty() {
                    write!(f, " ({hint})")?;
                }
                Ok(())
            }
            Problem::WrongType { expected, found } => {
                subject(f)?;
                write!(f, " must be {expected}, found {found}")
            }
            Problem::Empty => {
                subject(f)?;
                f.write_str(" must not be empty")
            }
            Problem::UnknownMember { member, allowed } => {
                subject(f)?;
                write!(
                    f,
                    " has an unknown member {}; {allowed}",
                    Value::from(member.as_str())
                )
            }
            Problem::Version(error) => {
                subject(f)?;
                write!(f, ": {error}")
            }
            Problem::Item(error) => {
                subject(f)?;
                write!(f, " {}", error.problem)
            }
        }
    }
}

/// `parent` + `/` + `name`, with `~` and `/` escaped as RFC 6901 requires.
pub(crate) fn child(parent: &str, name: &str) -> String {
    format!("{parent}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// A strict reader of one root value, building pointers as it descends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reader {
    pub(crate) root: Root,
}

impl Reader {
    pub(crate) fn error(self, pointer: impl Into<String>, problem: Problem) -> ShapeError {
        ShapeError {
            root: self.root,
            pointer: pointer.into(),
            problem,
        }
    }

    fn wrong(self, pointer: &str, expected: &'static str, found: &Value) -> ShapeError {
        self.error(
            pointer,
            Problem::WrongType {
                expected,
                found: describe(found),
            },
        )
    }

    /// The value itself, which must be an object (`None`: the member is absent).
    pub(crate) fn object<'v>(
        self,
        value: Option<&'v Value>,
        pointer: &str,
        expected: &'static str,
    ) -> Result<&'v Map<String, Value>, ShapeError> {
        match value {
            Some(Value::Object(map)) => Ok(map),
            Some(other) => Err(self.wrong(pointer, expected, other)),
            None => Err(self.error(pointer, Problem::Missing { expected, hint: "" })),
        }
    }

    /// A required member.
    pub(crate) fn required<'v>(
        self,
        map: &'v Map<String, Value>,
        parent: &str,
        name: &str,
        expected: &'static str,
    ) -> Result<&'v Value, ShapeError> {
        map.get(name)
            .ok_or_else(|| self.error(child(parent, name), Problem::Missing { expected, hint: "" }))
    }

    /// A value that must be a string.
    pub(crate) fn string<'v>(self, value: &'v Value, pointer: &str) -> Result<&'v str, ShapeError> {
        match value {
            Value::String(text) => Ok(text),
            other => Err(self.wrong(pointer, "a string", other)),
        }
    }

    /// A required string member.
    pub(crate) fn required_string(
        self,
        map: &Map<String, Value>,
        parent: &str,
        name: &str,
    ) -> Result<String, ShapeError> {
        let value = self.required(map, parent, name, "a string")?;
        self.string(value, &child(parent, name)).map(str::to_owned)
    }

    /// A required string member that must not be empty.
    pub(crate) fn required_name(
        self,
        map: &Map<String, Value>,
        parent: &str,
        name: &str,
    ) -> Result<String, ShapeError> {
        let value = self.required(map, parent, name, "a non-empty string")?;
        let pointer = child(parent, name);
        match value {
            Value::String(text) if text.is_empty() => Err(self.error(pointer, Problem::Empty)),
            Value::String(text) => Ok(text.clone()),
            other => Err(self.wrong(&pointer, "a non-empty string", other)),
        }
    }

    /// An optional boolean member: absent or `null` is false.
    pub(crate) fn optional_bool(
        self,
        map: &Map<String, Value>,
        parent: &str,
        name: &str,
    ) -> Result<bool, ShapeError> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(value)) => Ok(*value),
            Some(other) => Err(self.wrong(&child(parent, name), "a boolean", other)),
        }
    }

    /// An optional non-negative integer member: absent or `null` is `None`.
    pub(crate) fn optional_count(
        self,
        map: &Map<String, Value>,
        parent: &str,
        name: &str,
    ) -> Result<Option<u64>, ShapeError> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
            Some(other) => Err(self.wrong(&child(parent, name), "a non-negative integer", other)),
        }
    }

    /// An optional string member: absent, or a string (`null` is neither).
    pub(crate) fn optional_string(
        self,
        map: &Map<String, Value>,
        parent: &str,
        name: &str,
    ) -> Result<Option<String>, ShapeError> {
        map.get(name)
            .map(|value| self.string(value, &child(parent, name)).map(str::to_owned))
            .transpose()
    }

    /// A required array member.
    pub(crate) fn required_array<'v>(
        self,
        map: &'v Map<String, Value>,
        parent: &str,
        name: &str,
        expected: &'static str,
    ) -> Result<&'v [Value], ShapeError> {
        match self.required(map, parent, name, expected)? {
            Value::Array(items) => Ok(items),
            other => Err(self.wrong(&child(parent, name), expected, other)),
        }
    }

    /// A list of `{"key": s, "value": s}` objects with exactly those members, at
    /// `pointer`. Item rules are not applied here (see [`crate::check_item`]).
    pub(crate) fn pairs(self, items: &[Value], pointer: &str) -> Result<Vec<Pair>, ShapeError> {
        const EXPECTED: &str = "an object with string members `key` and `value`";
        let mut pairs = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let at = format!("{pointer}/{index}");
            let Value::Object(members) = item else {
                return Err(self.wrong(&at, EXPECTED, item));
            };
            if let Some(unknown) = members.keys().find(|k| *k != "key" && *k != "value") {
                return Err(self.error(
                    at,
                    Problem::UnknownMember {
                        member: unknown.clone(),
                        allowed: "a pair has only `key` and `value`",
                    },
                ));
            }
            let key = self.required_string(members, &at, "key")?;
            let value = self.required_string(members, &at, "value")?;
            pairs.push(Pair { key, value });
        }
        Ok(pairs)
    }
}
