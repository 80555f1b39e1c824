//! The params and results of every method, typed, each with its strict reader, in
//! the shapes the reference host `curupira` 0.4.0 and the official Python SDK
//! `curupira-sdk` 0.1.0 speak.
//!
//! Members a definition does not name are ignored on reading (the official SDK adds
//! `agents` to `describe`), except inside a pair, which has exactly `key` and
//! `value`. Optional string members are absent or strings: `null` is neither.

use curupira_task_identity::Pair;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::item::check_item;
use crate::shape::{Problem, Reader, Root, ShapeError, child};
use crate::validation::ValidationError;
use crate::version::ProtocolVersion;

/// A value that crosses the wire: written with serde, read strictly with a
/// [`ShapeError`] naming the offending member.
pub trait Wire: Serialize + Sized {
    /// Whether this is a request's params or a response's result.
    const ROOT: Root;

    /// Reads the value; `None` when it is absent (a request without `params`, or
    /// with `"params": null`).
    fn read(value: Option<&Value>) -> Result<Self, ShapeError>;
}

/// An automation's table as the host sends it to `trigger/validate` (and, as
/// validate returned it, to `trigger/poll`): the trigger's parameters and the
/// [`CORE_KEYS`] the host adds.
pub type Configuration = Map<String, Value>;

/// A trigger's parameters: a [`Configuration`] without its [`CORE_KEYS`]
/// ([`parameters`]).
pub type Arguments = Map<String, Value>;

/// The keys of a [`Configuration`] that belong to the host, not to the trigger: the
/// reference host puts them in every automation's table, and the official SDK leaves
/// them out when it binds the rest to the trigger's parameters.
pub const CORE_KEYS: [&str; 5] = [
    "trigger_type",
    "repository",
    "prompt",
    "profile",
    "checkout",
];

/// Whether `key` is one of the [`CORE_KEYS`].
pub fn is_core_key(key: &str) -> bool {
    CORE_KEYS.contains(&key)
}

/// The trigger's parameters in `configuration`: every member but the [`CORE_KEYS`].
pub fn parameters(configuration: &Configuration) -> Arguments {
    configuration
        .iter()
        .filter(|(key, _)| !is_core_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The local name of a trigger type: the last `/` segment of `alias/local`, or the
/// whole name (the official SDK resolves `trigger_type` this way).
pub fn local_trigger_type(trigger_type: &str) -> &str {
    trigger_type.rsplit('/').next().unwrap_or(trigger_type)
}

const PARAMS: Reader = Reader { root: Root::Params };
const RESULT: Reader = Reader { root: Root::Result };

/// Who a peer is: `client_info` (the host) in `initialize`'s params, `server_info`
/// (the extension) in its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeerInfo {
    /// The program's name (`curupira`, `curupira-plugins`).
    pub name: String,
    /// Its version.
    pub version: String,
}

impl PeerInfo {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        PeerInfo {
            name: name.into(),
            version: version.into(),
        }
    }

    fn read(reader: Reader, map: &Map<String, Value>, member: &str) -> Result<Self, ShapeError> {
        let at = child("", member);
        let info = reader.object(
            map.get(member),
            &at,
            "an object with the strings `name` and `version`",
        )?;
        Ok(PeerInfo {
            name: reader.required_string(info, &at, "name")?,
            version: reader.required_string(info, &at, "version")?,
        })
    }
}

/// `initialize` params: `{"protocol_version": 2, "client_info": {"name", "version"}}`.
/// `client_info` may be absent on reading (the official SDK does not need it).
///
/// **Ours:** a host may add `"capabilities": {…}` ([`HostCapabilities`]) to say which
/// of our additions to the protocol it reads. The reference host sends none, the
/// official SDK ignores the member, and an extension must send an addition only to a
/// host that announced it: the reference host refuses any member it does not know
/// in a result (recorded: `{"values": null, "rejected": 2}` fails the automation
/// with `unknown field `rejected`, expected `values``).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitializeParams {
    /// The version the host speaks.
    pub protocol_version: ProtocolVersion,
    /// Who the host is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_info: Option<PeerInfo>,
    /// What the host reads beyond the reference protocol (**ours**); sent only when
    /// it announces something.
    #[serde(skip_serializing_if = "HostCapabilities::is_none")]
    pub capabilities: HostCapabilities,
}

/// What a host announces in `initialize` that it reads beyond the reference
/// protocol (**ours**): `{"poll_rejected": true}`. Unknown members are ignored on
/// reading, so a later host may announce more.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HostCapabilities {
    /// The host reads [`PollResult::rejected`]: how many entries of its source the
    /// trigger skipped during that poll because it could not read them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub poll_rejected: bool,
}

impl HostCapabilities {
    /// Everything this version of the protocol crate knows of.
    pub const ALL: HostCapabilities = HostCapabilities {
        poll_rejected: true,
    };

    /// Whether nothing is announced (the reference host's `initialize`).
    pub fn is_none(&self) -> bool {
        *self == HostCapabilities::default()
    }

    fn read(map: &Map<String, Value>) -> Result<Self, ShapeError> {
        let Some(value) = map.get("capabilities") else {
            return Ok(HostCapabilities::default());
        };
        let members = PARAMS.object(
            Some(value),
            "/capabilities",
            r#"an object like {"poll_rejected": true}"#,
        )?;
        let poll_rejected = PARAMS.optional_bool(members, "/capabilities", "poll_rejected")?;
        Ok(HostCapabilities { poll_rejected })
    }
}

impl Wire for InitializeParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(
            value,
            "",
            r#"an object like {"protocol_version": 2, "client_info": {"name": "…", "version": "…"}}"#,
        )?;
        let protocol_version = read_version(PARAMS, map)?;
        let client_info = match map.contains_key("client_info") {
            true => Some(PeerInfo::read(PARAMS, map, "client_info")?),
            false => None,
        };
        Ok(InitializeParams {
            protocol_version,
            client_info,
            capabilities: HostCapabilities::read(map)?,
        })
    }
}

/// `initialize` result: `{"protocol_version": 2, "server_info": {"name", "version"}}`
/// (the reference host fails an extension without `server_info`). Whether the
/// version is compatible is not part of the shape: see
/// [`check_compatible`](crate::check_compatible).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitializeResult {
    /// The version the extension speaks.
    pub protocol_version: ProtocolVersion,
    /// Who the extension is.
    pub server_info: PeerInfo,
}

impl Wire for InitializeResult {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = RESULT.object(
            value,
            "",
            "an object with `protocol_version` and `server_info`",
        )?;
        Ok(InitializeResult {
            protocol_version: read_version(RESULT, map)?,
            server_info: PeerInfo::read(RESULT, map, "server_info")?,
        })
    }
}

fn read_version(reader: Reader, map: &Map<String, Value>) -> Result<ProtocolVersion, ShapeError> {
    let value = reader.required(map, "", "protocol_version", "a protocol version")?;
    ProtocolVersion::from_json(value)
        .map_err(|error| reader.error("/protocol_version", Problem::Version(error)))
}

/// Params that are absent, `null` or an object whose members are ignored
/// (`describe`, `shutdown`); written as `null`, which a host sends as no `params`
/// member at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

impl Wire for NoParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        match value {
            None | Some(Value::Null | Value::Object(_)) => Ok(NoParams),
            Some(other) => Err(PARAMS.error(
                "",
                Problem::WrongType {
                    expected: "absent, null or an object",
                    found: curupira_jsonrpc::describe(other),
                },
            )),
        }
    }
}

/// A result nothing depends on (`trigger/onStarted`, `trigger/onFinished`,
/// `shutdown`): any value is accepted, `null` included; written as `{}`.
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

/// Reads `prompt_fields`: absent is none; else an array of strings (the reference
/// host refuses objects).
fn read_prompt_fields(map: &Map<String, Value>, parent: &str) -> Result<Vec<String>, ShapeError> {
    const EXPECTED: &str = "an array of strings (the keys items carry)";
    if !map.contains_key("prompt_fields") {
        return Ok(Vec::new());
    }
    let items = RESULT.required_array(map, parent, "prompt_fields", EXPECTED)?;
    let at = child(parent, "prompt_fields");
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            RESULT
                .string(item, &format!("{at}/{index}"))
                .map(str::to_owned)
        })
        .collect()
}

/// One trigger listed by `describe`:
/// `{"trigger_type": s, "prompt_fields": [s, …], "description"?: s}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TriggerDescription {
    /// The trigger's local name, such as `github-issues`; non-empty.
    pub trigger_type: String,
    /// The keys its items carry, usable as `${key}` in a prompt; empty when not known
    /// in advance (absent on reading).
    pub prompt_fields: Vec<String>,
    /// One sentence for people listing triggers (ours: neither the reference host
    /// nor the official SDK has it; they ignore it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl TriggerDescription {
    /// A trigger type whose items carry `prompt_fields`.
    pub fn new<F: Into<String>>(
        trigger_type: impl Into<String>,
        prompt_fields: impl IntoIterator<Item = F>,
    ) -> Self {
        TriggerDescription {
            trigger_type: trigger_type.into(),
            prompt_fields: prompt_fields.into_iter().map(Into::into).collect(),
            description: None,
        }
    }

    /// The same trigger with a description.
    pub fn with_description(self, description: impl Into<String>) -> Self {
        TriggerDescription {
            description: Some(description.into()),
            ..self
        }
    }
}

/// `describe` result: `{"triggers": [{"trigger_type", "prompt_fields"}, …],
/// "agents": […]}`. `agents` (agent providers an extension offers, which this host
/// does not use) is kept as it came, and written as `[]` when empty, as the official
/// SDK writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DescribeResult {
    /// The trigger types the extension offers.
    pub triggers: Vec<TriggerDescription>,
    /// The agent providers it offers, unread.
    pub agents: Vec<Value>,
}

impl Wire for DescribeResult {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        const EXPECTED: &str = "an array of {\"trigger_type\", \"prompt_fields\"} objects";
        let map = RESULT.object(value, "", "an object with a `triggers` array")?;
        let items = RESULT.required_array(map, "", "triggers", EXPECTED)?;
        let mut triggers = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let at = format!("/triggers/{index}");
            let object =
                RESULT.object(Some(item), &at, "an object with a string `trigger_type`")?;
            triggers.push(TriggerDescription {
                trigger_type: RESULT.required_name(object, &at, "trigger_type")?,
                prompt_fields: read_prompt_fields(object, &at)?,
                description: RESULT.optional_string(object, &at, "description")?,
            });
        }
        let agents = match map.get("agents") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(agents)) => agents.clone(),
            Some(other) => {
                return Err(RESULT.error(
                    "/agents",
                    Problem::WrongType {
                        expected: "an array",
                        found: curupira_jsonrpc::describe(other),
                    },
                ));
            }
        };
        Ok(DescribeResult { triggers, agents })
    }
}

/// Params naming a trigger type (`trigger/schema`): `{"trigger_type": s}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaParams {
    /// The trigger type asked about: its local name, or `alias/local`.
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

/// `trigger/schema` result: `{"schema": {…}, "prompt_fields": [s, …]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriggerSchema {
    /// The JSON Schema of the trigger's parameters: an object or a boolean.
    pub schema: Value,
    /// The keys polled items carry; empty when not known in advance (or absent).
    pub prompt_fields: Vec<String>,
}

impl TriggerSchema {
    /// A schema and the keys items carry.
    pub fn new<F: Into<String>>(schema: Value, prompt_fields: impl IntoIterator<Item = F>) -> Self {
        TriggerSchema {
            schema,
            prompt_fields: prompt_fields.into_iter().map(Into::into).collect(),
        }
    }
}

impl Wire for TriggerSchema {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        const SCHEMA: &str = "a JSON Schema (an object or a boolean)";
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
        Ok(TriggerSchema {
            schema,
            prompt_fields: read_prompt_fields(map, "")?,
        })
    }
}

/// Reads an optional object member as a [`Configuration`]: absent (or `null`) is
/// empty, as the official SDK reads it.
fn optional_configuration(
    map: &Map<String, Value>,
    member: &str,
) -> Result<Configuration, ShapeError> {
    match map.get(member) {
        None | Some(Value::Null) => Ok(Configuration::new()),
        Some(value) => PARAMS
            .object(Some(value), &child("", member), "an object")
            .cloned(),
    }
}

/// `trigger/validate` params: `{"trigger_type": s, "configuration": {…}}`. On reading,
/// an absent `configuration` is empty (the official SDK then reports the missing
/// parameters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidateParams {
    /// The trigger type: its local name.
    pub trigger_type: String,
    /// The automation's table: the trigger's parameters and the host's
    /// [`CORE_KEYS`].
    pub configuration: Configuration,
}

impl Wire for ValidateParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(
            value,
            "",
            "an object with `trigger_type` and `configuration`",
        )?;
        Ok(ValidateParams {
            trigger_type: PARAMS.required_string(map, "", "trigger_type")?,
            configuration: optional_configuration(map, "configuration")?,
        })
    }
}

/// `trigger/validate` result: `{"ok": true, "configuration"?: {…}}` or
/// `{"ok": false, "error": s}`. A rejection is a result, not a JSON-RPC error; `{}`
/// and `null` are refused (as the reference host refuses them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidateResult {
    /// `ok: true`: the automation fits. `configuration` is the table normalised by
    /// the extension (its defaults filled in), which every later poll receives;
    /// `None` when it sent none (polls then receive the table as sent).
    Accepted {
        /// The normalised table, when the extension returned one.
        configuration: Option<Configuration>,
    },
    /// `ok: false`: the automation does not fit, and why (`None` when the extension
    /// did not say).
    Rejected {
        /// The extension's sentence.
        error: Option<String>,
        /// Each problem at its JSON Pointer into the parameters, when the extension
        /// lists them (`"errors": [{"path", "message"}]`, a member of this project's:
        /// the reference host ignores it; this host reports each problem where the
        /// config file says it).
        errors: Vec<ValidationError>,
    },
}

impl Serialize for ValidateResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ValidateResult::Accepted { configuration } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("ok", &true)?;
                if let Some(configuration) = configuration {
                    map.serialize_entry("configuration", configuration)?;
                }
                map.end()
            }
            ValidateResult::Rejected { error, errors } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("ok", &false)?;
                if let Some(error) = error {
                    map.serialize_entry("error", error)?;
                }
                if !errors.is_empty() {
                    map.serialize_entry("errors", errors)?;
                }
                map.end()
            }
        }
    }
}

impl Wire for ValidateResult {
    const ROOT: Root = Root::Result;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = RESULT.object(
            value,
            "",
            r#"an object like {"ok": true} or {"ok": false, "error": "…"}"#,
        )?;
        let ok = match RESULT.required(map, "", "ok", "a boolean")? {
            Value::Bool(ok) => *ok,
            other => {
                return Err(RESULT.error(
                    "/ok",
                    Problem::WrongType {
                        expected: "a boolean",
                        found: curupira_jsonrpc::describe(other),
                    },
                ));
            }
        };
        if !ok {
            // `"error": null` (a Python extension's `None`) says nothing.
            let error = match map.get("error") {
                None | Some(Value::Null) => None,
                Some(_) => RESULT.optional_string(map, "", "error")?,
            };
            return Ok(ValidateResult::Rejected {
                error,
                errors: crate::validation::error_entries(map.get("errors")),
            });
        }
        let configuration = match map.get("configuration") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                RESULT
                    .object(Some(value), "/configuration", "an object")?
                    .clone(),
            ),
        };
        Ok(ValidateResult::Accepted { configuration })
    }
}

/// `trigger/poll` params:
/// `{"trigger_type": s, "automation": {…}, "limit": n, "preview": bool}`. On reading,
/// an absent `automation` is empty, an absent `limit` is `None` and an absent
/// `preview` is false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PollParams {
    /// The trigger type: its local name.
    pub trigger_type: String,
    /// The configuration `trigger/validate` returned (else the table as sent).
    pub automation: Configuration,
    /// The most items the host takes this round (the automation's `batch_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Whether this is a dry run: the host will start no agent, so an extension
    /// should change nothing on account of this poll.
    pub preview: bool,
}

impl Wire for PollParams {
    const ROOT: Root = Root::Params;

    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        let map = PARAMS.object(value, "", "an object with `trigger_type` and `automation`")?;
        let limit = PARAMS.optional_count(map, "", "limit")?;
        let preview = PARAMS.optional_bool(map, "", "preview")?;
        Ok(PollParams {
            trigger_type: PARAMS.required_string(map, "", "trigger_type")?,
            automation: optional_configuration(map, "automation")?,
            limit,
            preview,
        })
    }
}

/// `trigger/poll` result: `{"values": null}` when nothing was found, else one item's
/// pairs (`[]` is an item without fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PollResult {
    /// The item, or `None`.
    pub values: Option<Vec<Pair>>,
    /// **Ours**, only to a host that announced
    /// [`HostCapabilities::poll_rejected`]: how many entries of its source the
    /// trigger skipped during this poll because it could not read them (and said so
    /// on stderr), for the host's round summary. Absent means none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<u64>,
}

impl Wire for PollResult {
    const ROOT: Root = Root::Result;

    /// Reads a poll result: the shape, then the item rules ([`check_item`]); an item
    /// that breaks one is reported at `/values/<index>`.
    fn read(value: Option<&Value>) -> Result<Self, ShapeError> {
        const EXPECTED: &str = "null or an array of {\"key\", \"value\"} objects";
        let map = RESULT.object(value, "", "an object with a `values` member")?;
        let rejected = RESULT.optional_count(map, "", "rejected")?;
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
            Value::Null => {
                return Ok(PollResult {
                    values: None,
                    rejected,
                });
            }
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
            rejected,
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

#[cfg(test)]
mod tests;
