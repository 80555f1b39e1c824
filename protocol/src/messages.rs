//! The params and results of every method, typed, each with its strict reader.
//!
//! Members a definition does not name are ignored on reading (a later minor version
//! may add some), except inside a pair, which has exactly `key` and `value`. Optional
//! string members are absent or strings: `null` is neither.

use curupira_task_identity::Pair;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::item::check_item;
use crate::shape::{Problem, Reader, Root, ShapeError, child};
use crate::version::ProtocolVersion;

/// A value that crosses the wire: written with serde, read strictly with a
/// [`ShapeError`] naming the offending member.
pub trait Wire: Serialize + Sized {
    /// Whether this is a request's params or a response's result.
    const ROOT: Root;

    /// Reads the value; `None` when it is absent (a request without `params`).
    fn read(value: Option<&Value>) -> Result<Self, ShapeError>;
}

/// An automation's `arguments`: the object from the config, after the host applied
/// the schema's `default`s.
pub type Arguments = Map<String, Value>;

const PARAMS: Reader = Reader { root: Root::Params };
const RESULT: Reader = Reader { root: Root::Result };

/// Who the host is, in `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// The host's name (`curupira`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The host's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `initialize` params: `{"protocol_version": 2, "host"?: {"name"?, "version"?}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitializeParams {
    /// The version the host speaks.
    pub protocol_version: ProtocolVersion,
    /// Who the host is, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInfo>,
}

impl Wire for InitializeParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(
            value,
            "",
            r#"an object like {"protocol_version": 2, "host": {"name": "…", "version": "…"}}"#,
        )?;
        let protocol_version = read_version(PARAMS, map)?;
        let host = match map.get("host") {
            None => None,
            Some(host) => {
                let host = PARAMS.object(
                    Some(host),
                    "/host",
                    "an object with the strings `name` and `version`",
                )?;
                Some(HostInfo {
                    name: PARAMS.optional_string(host, "/host", "name")?,
                    version: PARAMS.optional_string(host, "/host", "version")?,
                })
            }
        };
        Ok(InitializeParams {
            protocol_version,
            host,
        })
    }
}

/// `initialize` result: `{"protocol_version": 2, "name"?: s, "version"?: s}`. Whether
/// the version is compatible is not part of the shape: see
/// [`check_compatible`](crate::check_compatible).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitializeResult {
    /// The version the extension speaks.
    pub protocol_version: ProtocolVersion,
    /// The extension's name, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The extension's version, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl Wire for InitializeResult {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = RESULT.object(value, "", "an object with `protocol_version`")?;
        Ok(InitializeResult {
            protocol_version: read_version(RESULT, map)?,
            name: RESULT.optional_string(map, "", "name")?,
            version: RESULT.optional_string(map, "", "version")?,
        })
    }
}

fn read_version(reader: Reader, map: &Map<String, Value>) -> Result<ProtocolVersion, ShapeError> {
    let value = reader.required(map, "", "protocol_version", "a protocol version")?;
    ProtocolVersion::from_json(value)
        .map_err(|error| reader.error("/protocol_version", Problem::Version(error)))
}

/// Params that are absent or an object whose members are ignored (`describe`,
/// `shutdown`); written as `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Map::new().serialize(serializer)
    }
}

impl Wire for NoParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        match value {
            None | Some(Value::Object(_)) => Ok(NoParams),
            Some(other) => Err(PARAMS.error(
                "",
                Problem::WrongType {
                    expected: "absent or an object",
                    found: curupira_jsonrpc::describe(other),
                },
            )),
        }
    }
}

/// A result nothing depends on (`trigger/validate`, `trigger/onStarted`,
/// `trigger/onFinished`, `shutdown`): any value is accepted; written as `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ack;

impl Serialize for Ack {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Map::new().serialize(serializer)
    }
}

impl Wire for Ack {
    const ROOT: Root = Root::Result;

    fn read(_: Option<&Value>) -> Result<Self, ShapeError> {
        Ok(Ack)
    }
}

/// One trigger listed by `describe`: `{"type": s, "description"?: s}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerDescription {
    /// The trigger's local name, such as `github-issue`; non-empty.
    #[serde(rename = "type")]
    pub trigger_type: String,
    /// One sentence for people listing triggers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl TriggerDescription {
    /// A trigger type with a description.
    pub fn new(trigger_type: impl Into<String>, description: impl Into<String>) -> Self {
        TriggerDescription {
            trigger_type: trigger_type.into(),
            description: Some(description.into()),
        }
    }
}

/// `describe` result: `{"triggers": [{"type", "description"?}, …]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DescribeResult {
    /// The trigger types the extension offers.
    pub triggers: Vec<TriggerDescription>,
}

impl Wire for DescribeResult {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        const EXPECTED: &str = "an array of {\"type\", \"description\"?} objects";
        let map = RESULT.object(value, "", "an object with a `triggers` array")?;
        let items = RESULT.required_array(map, "", "triggers", EXPECTED)?;
        let mut triggers = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let at = format!("/triggers/{index}");
            let object = RESULT.object(Some(item), &at, "an object with a string `type`")?;
            triggers.push(TriggerDescription {
                trigger_type: RESULT.required_name(object, &at, "type")?,
                description: RESULT.optional_string(object, &at, "description")?,
            });
        }
        Ok(DescribeResult { triggers })
    }
}

/// Params naming a trigger type (`trigger/schema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaParams {
    /// The trigger type asked about.
    pub trigger_type: String,
}

impl Wire for SchemaParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(value, "", "an object with `trigger_type`")?;
        Ok(SchemaParams {
            trigger_type: PARAMS.required_string(map, "", "trigger_type")?,
        })
    }
}

/// A key that polled items carry: `{"key": s, "description"?: s}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptField {
    /// The pair key, usable as `${key}` in a prompt; non-empty.
    pub key: String,
    /// What the value holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl PromptField {
    /// A prompt field with a description.
    pub fn new(key: impl Into<String>, description: impl Into<String>) -> Self {
        PromptField {
            key: key.into(),
            description: Some(description.into()),
        }
    }
}

/// `trigger/schema` result: `{"schema": {…}, "prompt_fields"?: [{"key", "description"?}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerSchema {
    /// The JSON Schema of the trigger's `arguments`: an object or a boolean.
    pub schema: Value,
    /// The keys polled items carry; empty when not known in advance (or absent).
    #[serde(default)]
    pub prompt_fields: Vec<PromptField>,
}

impl Wire for TriggerSchema {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        const SCHEMA: &str = "a JSON Schema (an object or a boolean)";
        const FIELDS: &str = "an array of {\"key\", \"description\"?} objects";
        let map = RESULT.object(value, "", "an object with `schema`")?;
        let schema = match RESULT.required(map, "", "schema", SCHEMA)? {
            schema @ (Value::Object(_) | Value::Bool(_)) => schema.clone(),
            other => {
                return Err(RESULT.error(
                    "/schema",
                    Problem::WrongType {
                        expected: SCHEMA,
                        found: curupira_jsonrpc::describe(other),
                    },
                ));
            }
        };
        let mut prompt_fields = Vec::new();
        if map.contains_key("prompt_fields") {
            let items = RESULT.required_array(map, "", "prompt_fields", FIELDS)?;
            for (index, item) in items.iter().enumerate() {
                let at = format!("/prompt_fields/{index}");
                let object = RESULT.object(Some(item), &at, "an object with a string `key`")?;
                prompt_fields.push(PromptField {
                    key: RESULT.required_name(object, &at, "key")?,
                    description: RESULT.optional_string(object, &at, "description")?,
                });
            }
        }
        Ok(TriggerSchema {
            schema,
            prompt_fields,
        })
    }
}

/// Params naming a trigger type and an automation's arguments (`trigger/validate`,
/// `trigger/poll`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentsParams {
    /// The trigger type.
    pub trigger_type: String,
    /// The automation's arguments.
    pub arguments: Arguments,
}

impl Wire for ArgumentsParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(value, "", "an object with `trigger_type` and `arguments`")?;
        let trigger_type = PARAMS.required_string(map, "", "trigger_type")?;
        let arguments = PARAMS
            .object(map.get("arguments"), "/arguments", "an object")?
            .clone();
        Ok(ArgumentsParams {
            trigger_type,
            arguments,
        })
    }
}

/// `trigger/poll` result: `{"values": null}` when nothing was found, else one item's
/// pairs (`[]` is an item without fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PollResult {
    /// The item, or `None`.
    pub values: Option<Vec<Pair>>,
}

impl Wire for PollResult {
    const ROOT: Root = Root::Result;

    /// Reads a poll result: the shape, then the item rules ([`check_item`]); an item
    /// that breaks one is reported at `/values/<index>`.
    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        const EXPECTED: &str = "null or an array of {\"key\", \"value\"} objects";
        let map = RESULT.object(value, "", "an object with a `values` member")?;
        let Some(values) = map.get("values") else {
            return Err(RESULT.error(
                "/values",
                Problem::Missing {
                    expected: EXPECTED,
                    hint: "write `\"values\": null` when nothing was found",
                },
            ));
        };
        let items = match values {
            Value::Null => return Ok(PollResult { values: None }),
            Value::Array(items) => items,
            other => {
                return Err(RESULT.error(
                    "/values",
                    Problem::WrongType {
                        expected: EXPECTED,
                        found: curupira_jsonrpc::describe(other),
                    },
                ));
            }
        };
        let pairs = RESULT.pairs(items, "/values")?;
        check_item(&pairs).map_err(|error| {
            RESULT.error(format!("/values/{}", error.index), Problem::Item(error))
        })?;
        Ok(PollResult {
            values: Some(pairs),
        })
    }
}

/// Params of `trigger/onStarted` and `trigger/onFinished`: the trigger type and the
/// item exactly as polled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskParams {
    /// The trigger type.
    pub trigger_type: String,
    /// The polled pairs.
    pub values: Vec<Pair>,
}

impl Wire for TaskParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(value, "", "an object with `trigger_type` and `values`")?;
        let trigger_type = PARAMS.required_string(map, "", "trigger_type")?;
        let items = PARAMS.required_array(
            map,
            "",
            "values",
            "an array of {\"key\": …, \"value\": …} objects",
        )?;
        let values = PARAMS.pairs(items, &child("", "values"))?;
        Ok(TaskParams {
            trigger_type,
            values,
        })
    }
}
