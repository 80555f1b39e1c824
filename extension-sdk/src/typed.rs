//! Typed triggers: a parameters struct in, an item struct out, and the [`App`] that
//! serves them, as the official Python SDK serves a typed function.
//!
//! What the official SDK derives from a function's signature, this module derives
//! from two types: the JSON Schema and the validated configuration from
//! [`TypedTrigger::Params`] (`serde` + `schemars`), the `prompt_fields` and the pairs
//! of an item from [`TypedTrigger::Item`]. The rules are the official SDK's (see
//! [`App`]); its sentences are reproduced word for word where it has one.

use std::collections::HashSet;
use std::error::Error;

use curupira_protocol::{
    Arguments, Configuration, Pair, TriggerDescription, TriggerSchema, is_core_key, parameters,
};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::quote::{quoted, quoted_list};
use crate::trigger::{PollContext, Trigger, TriggerError, ValidateError};

/// Any error, boxed: what trigger code returns, so that `?` works on every error type
/// (`std::io::Error`, `serde_json::Error`, a `String` or `&str` with `.into()`).
///
/// The reply is command failure (-32002) `execution error: <the error>`, as the
/// official SDK answers an exception, unless the error is a [`TriggerError`], whose
/// code, message and data are kept (`Err(TriggerError::internal("…").into())`).
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// A trigger whose parameters and items are Rust types; register it with
/// [`App::trigger`].
///
/// - [`Params`](Self::Params) is a struct deriving `Deserialize`, `Serialize` and
///   `JsonSchema`: its JSON Schema is the trigger's schema, a `#[serde(default = …)]`
///   gives a parameter its default, an `Option` makes it optional, doc comments
///   become descriptions. The host's core keys (`trigger_type`, `repository`,
///   `prompt`, `profile`, `checkout`) cannot be parameters.
/// - [`Item`](Self::Item) is a struct deriving `Serialize` and `JsonSchema`: its field
///   names, in declaration order, are the trigger's `prompt_fields`, and each polled
///   item becomes one pair per field (see [`App`] for how values become strings).
///
/// Nothing here speaks the protocol: the [`App`] binds the automation's table to
/// `Params`, runs [`check`](Self::check), calls [`poll`](Self::poll) and writes the
/// item as pairs.
pub trait TypedTrigger {
    /// The trigger's parameters: what an automation sets beside the core keys.
    type Params: DeserializeOwned + Serialize + JsonSchema;

    /// One work item; its fields are the prompt's `${field}`s.
    type Item: Serialize + JsonSchema;

    /// The next work item, or `None` when there is nothing to do (`trigger/poll`).
    ///
    /// `params` are the automation's, bound and checked again for every poll (a host
    /// may poll without validating first). `context` says how many items the host
    /// takes this round and whether it is a dry run.
    fn poll(
        &mut self,
        params: &Self::Params,
        context: PollContext,
    ) -> Result<Option<Self::Item>, BoxError>;

    /// A check of the parameters beyond their types (the official SDK's
    /// `param_check`), run by `trigger/validate` and before every poll. `Err` carries
    /// one sentence saying what is wrong: validate answers `{"ok": false, "error":
    /// <it>}`, a poll fails with command failure (-32002) and that sentence. Accepts
    /// everything by default.
    fn check(&self, params: &Self::Params) -> Result<(), String> {
        let _ = params;
        Ok(())
    }

    /// One sentence for people listing triggers, sent as `description` in
    /// `describe` (a host that does not know the member ignores it). None by
    /// default.
    fn description(&self) -> Option<String> {
        None
    }

    /// The host is about to work on an item this trigger polled
    /// (`trigger/onStarted`); `values` are exactly the polled pairs. An error fails
    /// the task in the reference host. Does nothing by default.
    fn on_started(&mut self, values: &[Pair]) -> Result<(), BoxError> {
        let _ = values;
        Ok(())
    }

    /// The host is done with an item, whether the agent succeeded or not
    /// (`trigger/onFinished`); `values` are exactly the polled pairs. Does nothing
    /// by default.
    fn on_finished(&mut self, values: &[Pair]) -> Result<(), BoxError> {
        let _ = values;
        Ok(())
    }
}

/// Why [`App::try_trigger`] refused a trigger: a mistake in the extension's code,
/// found before any request is served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// The local name is not kebab-case: ASCII letters, digits and single `-`
    /// between them, at least one letter, no `/` (the host adds `alias/` itself).
    #[error(
        "trigger name {} is not valid: {reason}",
        quoted(.name)
    )]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two triggers of one app have the same local name.
    #[error("duplicate trigger name {}", quoted(.0))]
    Duplicate(String),
    /// The parameters' schema does not describe an object (`Params` is not a struct
    /// or a map).
    #[error(
        "trigger {}: the parameters must be a struct (a JSON object), and the schema of \
         `Params` is {schema}",
        quoted(.trigger)
    )]
    ParamsNotAnObject {
        /// The trigger's local name.
        trigger: String,
        /// The schema derived for `Params`.
        schema: String,
    },
    /// A parameter has the name of a core key, which the host owns.
    #[error(
        "trigger {}: parameter {} conflicts with a core automation field; use a \
         different name (for example `repo`)",
        quoted(.trigger),
        quoted(.parameter)
    )]
    CoreKeyParameter {
        /// The trigger's local name.
        trigger: String,
        /// The parameter.
        parameter: String,
    },
    /// The item's schema does not describe an object (`Item` is not a struct or a
    /// map), so it has no fields to become pairs.
    #[error(
        "trigger {}: the item must be a struct (a JSON object), and the schema of `Item` \
         is {schema}",
        quoted(.trigger)
    )]
    ItemNotAnObject {
        /// The trigger's local name.
        trigger: String,
        /// The schema derived for `Item`.
        schema: String,
    },
}

/// An extension made of typed triggers: the [`Trigger`] that serves every
/// [`TypedTrigger`] registered with [`trigger`](Self::trigger), by local name. Give it
/// to [`run`](crate::run) (or [`serve`](crate::serve)).
///
/// It answers as the official Python SDK answers:
///
/// - `describe` lists the triggers in registration order, each with its
///   `prompt_fields`; `trigger/schema` answers the schema of `Params` and the same
///   `prompt_fields`.
/// - The schema is what `schemars` derives for `Params` (subschemas inlined, no
///   `$schema`, no generated `title`), with `"additionalProperties": false` unless
///   the derived schema says otherwise (a flattened map).
/// - Binding an automation's table to `Params`, the core keys are left out; then,
///   every problem in one `; `-separated answer: a key that is no parameter
///   (`trigger 'list-entries': unknown parameters ['colour']`), a required parameter
///   that is missing (`trigger 'list-entries': missing required parameter 'path'`), a
///   value of the wrong JSON type (`trigger 'list-entries' parameter 'limit_total':
///   expected integer`), and what `serde` refuses beyond that, with the path to it
///   (`trigger 'gh' parameter 'labels'[0]: invalid type: …`). Then
///   [`TypedTrigger::check`].
/// - `trigger/validate` answers a bad table with `{"ok": false, "error": …}`; a good
///   one with `{"ok": true, "configuration": …}`: the table as received, core keys
///   kept, plus every parameter it lacks as `Params` serialises it (the defaults,
///   `null` for an absent `Option`). A value the table has is never rewritten.
/// - `trigger/poll` binds and checks the same way (a problem is command failure,
///   -32002), calls [`TypedTrigger::poll`] and writes the item as pairs, in the order
///   of `prompt_fields`, then any other key of a flattened map in key order. Values
///   become strings as the official SDK makes them: a string as it is, a number as
///   its JSON text (`1`, `2.5`), a boolean as `true` / `false`, `null` (an absent
///   `Option`) as `null`, an array or object as compact JSON with sorted keys. An
///   item that does not serialise to an object is internal error (-32603).
/// - A poll or hook error is command failure (-32002) `execution error: …`, except a
///   [`TriggerError`], which keeps its code (see [`BoxError`]).
#[derive(Default)]
pub struct App {
    triggers: Vec<Registered>,
}

/// One registered trigger: what `describe` and `trigger/schema` answer, derived once,
/// and the trigger behind its type-erased face.
struct Registered {
    description: TriggerDescription,
    schema: TriggerSchema,
    trigger: Box<dyn Erased>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field(
                "triggers",
                &self
                    .triggers
                    .iter()
                    .map(|registered| &registered.description)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl App {
    /// An app without triggers yet.
    pub fn new() -> App {
        App::default()
    }

    /// The same app with `trigger` registered under the local name `name` (such as
    /// `list-entries`; the host addresses it as `<alias>/list-entries` or by that
    /// name alone).
    ///
    /// # Panics
    ///
    /// When [`try_trigger`](Self::try_trigger) refuses the trigger: a mistake in the
    /// extension's own code (a name that is not kebab-case or is taken, a parameter
    /// named like a core key, `Params` or `Item` not a struct), which no input can
    /// cause. The message is the [`RegistrationError`]'s.
    #[track_caller]
    pub fn trigger<T: TypedTrigger + 'static>(self, name: &str, trigger: T) -> App {
        match self.try_trigger(name, trigger) {
            Ok(app) => app,
            Err(err) => panic!("{err}"),
        }
    }

    /// [`trigger`](Self::trigger), returning the mistake instead of panicking.
    pub fn try_trigger<T: TypedTrigger + 'static>(
        mut self,
        name: &str,
        trigger: T,
    ) -> Result<App, RegistrationError> {
        check_name(name)?;
        if self
            .triggers
            .iter()
            .any(|registered| registered.description.trigger_type == name)
        {
            return Err(RegistrationError::Duplicate(name.to_owned()));
        }
        let schema = params_schema::<T::Params>(name)?;
        let prompt_fields = item_fields::<T::Item>(name)?;
        let mut description = TriggerDescription::new(name, prompt_fields.iter().cloned());
        if let Some(text) = trigger.description() {
            description = description.with_description(text);
        }
        self.triggers.push(Registered {
            description,
            schema: TriggerSchema::new(schema.clone(), prompt_fields.iter().cloned()),
            trigger: Box::new(Typed {
                name: name.to_owned(),
                schema,
                prompt_fields,
                trigger,
            }),
        });
        Ok(self)
    }

    fn find(&self, trigger_type: &str) -> Result<&Registered, TriggerError> {
        self.triggers
            .iter()
            .find(|registered| registered.description.trigger_type == trigger_type)
            .ok_or_else(|| unsupported(trigger_type))
    }

    fn find_mut(&mut self, trigger_type: &str) -> Result<&mut Registered, TriggerError> {
        self.triggers
            .iter_mut()
            .find(|registered| registered.description.trigger_type == trigger_type)
            .ok_or_else(|| unsupported(trigger_type))
    }
}

/// The serve loop answers an unknown type before calling the app; this is the same
/// answer, for a caller that did not go through it.
fn unsupported(trigger_type: &str) -> TriggerError {
    TriggerError::new(
        curupira_jsonrpc::ErrorCode::CONFIGURATION_INVALID,
        format!("unsupported trigger_type {}", quoted(trigger_type)),
    )
}

impl Trigger for App {
    fn describe(&self) -> Vec<TriggerDescription> {
        self.triggers
            .iter()
            .map(|registered| registered.description.clone())
            .collect()
    }

    fn schema(&self, trigger_type: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(self.find(trigger_type)?.schema.clone())
    }

    fn validate(&self, trigger_type: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        self.find(trigger_type)?.trigger.check(arguments).map(drop)
    }

    fn validate_configuration(
        &self,
        trigger_type: &str,
        configuration: Configuration,
    ) -> Result<Configuration, ValidateError> {
        let registered = self.find(trigger_type)?;
        let bound = registered.trigger.check(&parameters(&configuration))?;
        let mut configuration = configuration;
        for (key, value) in bound {
            configuration.entry(key).or_insert(value);
        }
        Ok(configuration)
    }

    fn poll(
        &mut self,
        trigger_type: &str,
        arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        self.poll_in(trigger_type, arguments, PollContext::default())
    }

    fn poll_in(
        &mut self,
        trigger_type: &str,
        arguments: &Arguments,
        context: PollContext,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        self.find_mut(trigger_type)?
            .trigger
            .poll(arguments, context)
    }

    fn on_started(&mut self, trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        self.find_mut(trigger_type)?.trigger.on_started(values)
    }

    fn on_finished(&mut self, trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        self.find_mut(trigger_type)?.trigger.on_finished(values)
    }
}

/// A [`TypedTrigger`] with its types erased, so that one [`App`] holds triggers of
/// different types.
trait Erased {
    /// Binds and checks `arguments`; the parameters as `Params` serialises them.
    fn check(&self, arguments: &Arguments) -> Result<Map<String, Value>, ValidateError>;
    fn poll(
        &mut self,
        arguments: &Arguments,
        context: PollContext,
    ) -> Result<Option<Vec<Pair>>, TriggerError>;
    fn on_started(&mut self, values: &[Pair]) -> Result<(), TriggerError>;
    fn on_finished(&mut self, values: &[Pair]) -> Result<(), TriggerError>;
}

struct Typed<T> {
    name: String,
    schema: Value,
    prompt_fields: Vec<String>,
    trigger: T,
}

impl<T: TypedTrigger> Typed<T> {
    /// `arguments` bound to `Params` and checked, or the sentence saying why not.
    fn bind(&self, arguments: &Arguments) -> Result<T::Params, String> {
        let params: T::Params = bind(&self.name, &self.schema, arguments)?;
        self.trigger.check(&params)?;
        Ok(params)
    }
}

impl<T: TypedTrigger> Erased for Typed<T> {
    fn check(&self, arguments: &Arguments) -> Result<Map<String, Value>, ValidateError> {
        let params = self.bind(arguments).map_err(ValidateError::Rejected)?;
        match serde_json::to_value(&params) {
            Ok(Value::Object(bound)) => Ok(bound),
            Ok(other) => Err(ValidateError::Failed(TriggerError::internal(format!(
                "trigger {}: the parameters serialise to {}, not to an object",
                quoted(&self.name),
                kind(&other)
            )))),
            Err(err) => Err(ValidateError::Failed(TriggerError::internal(format!(
                "trigger {}: cannot serialise the parameters: {err}",
                quoted(&self.name)
            )))),
        }
    }

    fn poll(
        &mut self,
        arguments: &Arguments,
        context: PollContext,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        let params = self.bind(arguments).map_err(TriggerError::command_failed)?;
        let Some(item) = self
            .trigger
            .poll(&params, context)
            .map_err(execution_error)?
        else {
            return Ok(None);
        };
        to_pairs(&item, &self.prompt_fields)
            .map(Some)
            .map_err(|problem| {
                TriggerError::internal(format!("trigger {}: {problem}", quoted(&self.name)))
            })
    }

    fn on_started(&mut self, values: &[Pair]) -> Result<(), TriggerError> {
        self.trigger.on_started(values).map_err(execution_error)
    }

    fn on_finished(&mut self, values: &[Pair]) -> Result<(), TriggerError> {
        self.trigger.on_finished(values).map_err(execution_error)
    }
}

/// The reply to an error of trigger code: a [`TriggerError`] as it is, anything else
/// as the official SDK answers an exception.
fn execution_error(error: BoxError) -> TriggerError {
    match error.downcast::<TriggerError>() {
        Ok(error) => *error,
        Err(error) => TriggerError::command_failed(format!("execution error: {error}")),
    }
}

/// Refuses a local name the official SDK would refuse (its rule is kebab-case).
fn check_name(name: &str) -> Result<(), RegistrationError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.contains('/') {
        Some("it contains `/`; the host prefixes the extension's alias itself")
    } else if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Some("only ASCII letters, digits and `-` may be used")
    } else if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        Some("`-` goes between letters or digits, one at a time")
    } else if !name.chars().any(|c| c.is_ascii_alphabetic()) {
        Some("it needs at least one letter")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(RegistrationError::InvalidName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// What the JSON Schemas of this module are derived with: subschemas inlined (the
/// official SDK's schemas have no references), no `$schema`.
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|settings| {
        settings.meta_schema = None;
        settings.inline_subschemas = true;
    })
}

/// The root schema `schemars` derives for `T`, as a JSON object, without the `title`
/// it generates from the type's name (a `#[schemars(title = …)]` stays).
fn root_schema<T: JsonSchema>(settings: SchemaSettings) -> Value {
    let schema: Schema = settings.into_generator().into_root_schema_for::<T>();
    let mut schema = schema.to_value();
    if let Value::Object(object) = &mut schema
        && object.get("title").and_then(Value::as_str) == Some(T::schema_name().as_ref())
    {
        object.remove("title");
    }
    schema
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The trigger's schema: `Params`'s, deserialisation side, closed to unknown keys
/// unless it says otherwise.
fn params_schema<P: JsonSchema>(trigger: &str) -> Result<Value, RegistrationError> {
    let mut schema = root_schema::<P>(settings().for_deserialize());
    if !is_object_schema(&schema) {
        return Err(RegistrationError::ParamsNotAnObject {
            trigger: trigger.to_owned(),
            schema: schema.to_string(),
        });
    }
    if let Some(Value::Object(properties)) = schema.get("properties")
        && let Some(parameter) = properties.keys().find(|key| is_core_key(key))
    {
        return Err(RegistrationError::CoreKeyParameter {
            trigger: trigger.to_owned(),
            parameter: parameter.clone(),
        });
    }
    if let Value::Object(object) = &mut schema {
        object
            .entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
    Ok(schema)
}

/// The item's field names in declaration order: its serialisation-side schema lists
/// every field a value always has in `required`, in declaration order (`properties`
/// is a sorted map); fields that may be skipped follow, in name order.
fn item_fields<I: JsonSchema>(trigger: &str) -> Result<Vec<String>, RegistrationError> {
    let schema = root_schema::<I>(settings().for_serialize());
    if !is_object_schema(&schema) {
        return Err(RegistrationError::ItemNotAnObject {
            trigger: trigger.to_owned(),
            schema: schema.to_string(),
        });
    }
    let mut fields: Vec<String> = match schema.get("required") {
        Some(Value::Array(required)) => required
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for key in properties.keys() {
            if !fields.contains(key) {
                fields.push(key.clone());
            }
        }
    }
    Ok(fields)
}

/// Binds the parameters to `P` by the official SDK's rules, every problem in one
/// `; `-separated sentence (see [`App`]).
fn bind<P: DeserializeOwned>(
    trigger: &str,
    schema: &Value,
    arguments: &Arguments,
) -> Result<P, String> {
    let trigger = quoted(trigger);
    let empty = Map::new();
    let properties = match schema.get("properties") {
        Some(Value::Object(properties)) => properties,
        _ => &empty,
    };
    let mut problems = Vec::new();

    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut unknown: Vec<&str> = arguments
            .keys()
            .map(String::as_str)
            .filter(|key| !properties.contains_key(*key))
            .collect();
        unknown.sort_unstable();
        if !unknown.is_empty() {
            problems.push(format!(
                "trigger {trigger}: unknown parameters {}",
                quoted_list(unknown)
            ));
        }
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(name) {
                problems.push(format!(
                    "trigger {trigger}: missing required parameter {}",
                    quoted(name)
                ));
            }
        }
    }
    for (key, value) in arguments {
        if let Some(property) = properties.get(key)
            && let Some(expected) = mismatch(property, value, schema)
        {
            problems.push(format!(
                "trigger {trigger} parameter {}: {expected}",
                quoted(key)
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }

    serde_path_to_error::deserialize(Value::Object(arguments.clone())).map_err(|err| {
        let at = path(err.path());
        let inner = err.into_inner();
        match at {
            Some(at) => format!("trigger {trigger} parameter {at}: {inner}"),
            None => format!("trigger {trigger}: {inner}"),
        }
    })
}

/// Where serde refused a value, as the official SDK writes it: the parameter quoted,
/// then `[0]` for an element and `.key` for a member (`'labels'[0]`). `None` for the
/// table itself.
fn path(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut segments = path.iter();
    let first = match segments.next()? {
        Segment::Map { key } => quoted(key),
        Segment::Seq { index } => format!("[{index}]"),
        Segment::Enum { variant } => quoted(variant),
        Segment::Unknown => return None,
    };
    let mut out = first;
    for segment in segments {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push('.');
                out.push_str(key);
            }
            Segment::Unknown => out.push_str(".?"),
        }
    }
    Some(out)
}

/// What is wrong with `value` at the top of a property's schema, in the official
/// SDK's words (`expected integer`, `expected a value, got null`); `None` when its
/// `type`, `enum` and `const` keywords (through `anyOf`, `oneOf` and local `$ref`s)
/// let it pass, the rest being serde's to judge.
fn mismatch(schema: &Value, value: &Value, root: &Value) -> Option<String> {
    let mut expected = Vec::new();
    if accepts(schema, value, root, &mut expected, 0) {
        return None;
    }
    if value.is_null() && !expected.iter().any(|e| e == "null") {
        return Some("expected a value, got null".to_owned());
    }
    if expected.is_empty() {
        return Some("no value is allowed here".to_owned());
    }
    let mut seen = HashSet::new();
    expected.retain(|e| seen.insert(e.clone()));
    Some(format!("expected {}", expected.join(" or ")))
}

/// Whether `value` passes `schema`'s `type`, `enum` and `const`; what would have
/// passed is added to `expected` (`integer`, `one of "open", "closed"`).
fn accepts(
    schema: &Value,
    value: &Value,
    root: &Value,
    expected: &mut Vec<String>,
    depth: u8,
) -> bool {
    const MAX_DEPTH: u8 = 16;
    let Value::Object(object) = schema else {
        // `true` and `false` schemas.
        return schema != &Value::Bool(false);
    };
    if depth > MAX_DEPTH {
        return true;
    }
    if let Some(Value::String(reference)) = object.get("$ref") {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer));
        if let Some(target) = target
            && !accepts(target, value, root, expected, depth + 1)
        {
            return false;
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(keyword) {
            let mut any = false;
            for branch in branches {
                any |= accepts(branch, value, root, expected, depth + 1);
            }
            if !any {
                return false;
            }
        }
    }
    if let Some(Value::Array(allowed)) = object.get("enum") {
        let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        expected.push(format!("one of {}", listed.join(", ")));
        return allowed.contains(value);
    }
    if let Some(constant) = object.get("const") {
        expected.push(constant.to_string());
        return constant == value;
    }
    let names: Vec<&str> = match object.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => return true,
    };
    expected.extend(names.iter().map(|name| (*name).to_owned()));
    names.iter().any(|name| has_type(name, value))
}

/// Whether `value` is of the JSON Schema type `name` (`integer` is a whole number
/// without a fraction part, as serde reads integers).
fn has_type(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The item as pairs: its fields in the order of `fields`, then any other key in key
/// order, each value a string (see [`App`]).
fn to_pairs<I: Serialize>(item: &I, fields: &[String]) -> Result<Vec<Pair>, String> {
    let mut object = match serde_json::to_value(item) {
        Ok(Value::Object(object)) => object,
        Ok(other) => {
            return Err(format!(
                "the item serialises to {}, not to an object of fields",
                kind(&other)
            ));
        }
        Err(err) => return Err(format!("cannot serialise the item: {err}")),
    };
    let mut pairs = Vec::with_capacity(object.len());
    for field in fields {
        if let Some(value) = object.remove(field) {
            pairs.push(Pair::new(field.clone(), text(value)));
        }
    }
    for (key, value) in object {
        pairs.push(Pair::new(key, text(value)));
    }
    Ok(pairs)
}

/// A field's value as the string a pair carries.
fn text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        nested @ (Value::Array(_) | Value::Object(_)) => nested.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use curupira_jsonrpc::ErrorCode;

    #[derive(Debug, Deserialize, Serialize, JsonSchema)]
    struct Params {
        path: String,
        #[serde(default = "hundred")]
        limit_total: i64,
        labels: Option<Vec<String>>,
        #[serde(default)]
        state: State,
    }

    fn hundred() -> i64 {
        100
    }

    #[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum State {
        #[default]
        Open,
        Closed,
    }

    #[derive(Serialize, JsonSchema)]
    struct Item {
        title: String,
        id: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        author: Option<String>,
        body: String,
    }

    /// Polls what `next` holds, checks `limit_total >= 1`, records the hooks.
    #[derive(Default)]
    struct Fake {
        next: Option<Result<Item, BoxError>>,
        finished: Vec<Vec<Pair>>,
    }

    impl TypedTrigger for Fake {
        type Params = Params;
        type Item = Item;

        fn poll(&mut self, _: &Params, _: PollContext) -> Result<Option<Item>, BoxError> {
            self.next.take().transpose()
        }

        fn check(&self, params: &Params) -> Result<(), String> {
            match params.limit_total {
                n if n < 1 => Err("limit_total must be at least 1".to_owned()),
                _ => Ok(()),
            }
        }

        fn on_finished(&mut self, values: &[Pair]) -> Result<(), BoxError> {
            self.finished.push(values.to_vec());
            Err("the queue file is read-only".into())
        }
    }

    fn app() -> App {
        App::new().trigger("list-entries", Fake::default())
    }

    fn table(value: Value) -> Configuration {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn rejected(app: &App, configuration: Value) -> String {
        match app.validate_configuration("list-entries", table(configuration)) {
            Err(ValidateError::Rejected(error)) => error,
            other => panic!("not a rejection: {other:?}"),
        }
    }

    #[test]
    fn the_schema_is_derived_from_params_and_closed() {
        let schema = app().schema("list-entries").unwrap();
        assert_eq!(
            schema.schema,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "limit_total": {"type": "integer", "format": "int64", "default": 100},
                    "labels": {"type": ["array", "null"], "items": {"type": "string"}},
                    "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
                },
                "required": ["path"],
                "additionalProperties": false,
            })
        );
        assert_eq!(schema.prompt_fields, ["title", "id", "body", "author"]);
    }

    #[test]
    fn describe_lists_the_triggers_in_registration_order() {
        struct Described;
        impl TypedTrigger for Described {
            type Params = BTreeMap<String, String>;
            type Item = BTreeMap<String, String>;
            fn poll(
                &mut self,
                _: &Self::Params,
                _: PollContext,
            ) -> Result<Option<Self::Item>, BoxError> {
                Ok(None)
            }
            fn description(&self) -> Option<String> {
                Some("Anything goes.".to_owned())
            }
        }
        let app = app().trigger("any", Described);
        assert_eq!(
            app.describe(),
            [
                TriggerDescription::new("list-entries", ["title", "id", "body", "author"]),
                TriggerDescription::new("any", Vec::<String>::new())
                    .with_description("Anything goes."),
            ]
        );
        // A map of parameters takes any key; the schema says so.
        let schema = app.schema("any").unwrap().schema;
        assert_eq!(
            schema,
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        let configuration = app
            .validate_configuration("any", table(json!({"colour": "red", "prompt": "p"})))
            .unwrap();
        assert_eq!(
            Value::Object(configuration),
            json!({"colour": "red", "prompt": "p"})
        );
    }

    #[test]
    fn an_accepted_table_gets_every_parameter_and_keeps_its_own_values() {
        let configuration = app()
            .validate_configuration(
                "list-entries",
                table(json!({
                    "trigger_type": "rec/list-entries",
                    "repository": "demo",
                    "prompt": "Entry ${id}",
                    "path": "/tmp/entries.json",
                    "state": "closed",
                })),
            )
            .unwrap();
        assert_eq!(
            Value::Object(configuration),
            json!({
                "trigger_type": "rec/list-entries",
                "repository": "demo",
                "prompt": "Entry ${id}",
                "path": "/tmp/entries.json",
                "state": "closed",
                "limit_total": 100,
                "labels": null,
            })
        );
    }

    #[test]
    fn each_binding_problem_is_one_sentence_in_the_official_words() {
        let app = app();
        let base = json!({"trigger_type": "rec/list-entries", "repository": "demo", "path": "p"});
        let with = |extra: Value| {
            let mut value = base.clone();
            for (key, member) in table(extra) {
                value[key] = member;
            }
            value
        };
        let cases = [
            (
                with(json!({"colour": "red", "size": 2, "checkout": "main"})),
                "trigger 'list-entries': unknown parameters ['colour', 'size']",
            ),
            (
                json!({"prompt": "x"}),
                "trigger 'list-entries': missing required parameter 'path'",
            ),
            (
                with(json!({"limit_total": "many"})),
                "trigger 'list-entries' parameter 'limit_total': expected integer",
            ),
            (
                with(json!({"limit_total": 2.5})),
                "trigger 'list-entries' parameter 'limit_total': expected integer",
            ),
            (
                with(json!({"path": null})),
                "trigger 'list-entries' parameter 'path': expected a value, got null",
            ),
            (
                with(json!({"labels": "agent-ready"})),
                "trigger 'list-entries' parameter 'labels': expected array or null",
            ),
            (
                with(json!({"state": "sideways"})),
                "trigger 'list-entries' parameter 'state': expected one of \"open\", \"closed\"",
            ),
            (
                with(json!({"labels": ["a", 3]})),
                "trigger 'list-entries' parameter 'labels'[1]: invalid type: integer `3`, \
                 expected a string",
            ),
            (
                with(json!({"limit_total": 0})),
                "limit_total must be at least 1",
            ),
            (
                json!({"colour": "red", "limit_total": true}),
                "trigger 'list-entries': unknown parameters ['colour']; \
                 trigger 'list-entries': missing required parameter 'path'; \
                 trigger 'list-entries' parameter 'limit_total': expected integer",
            ),
        ];
        for (configuration, expected) in cases {
            assert_eq!(
                rejected(&app, configuration.clone()),
                expected,
                "{configuration}"
            );
        }
    }

    #[test]
    fn an_item_becomes_pairs_in_field_order_with_string_values() {
        let mut app = App::new().trigger(
            "list-entries",
            Fake {
                next: Some(Ok(Item {
                    title: "first".to_owned(),
                    id: 1,
                    author: Some("ana".to_owned()),
                    body: "b1".to_owned(),
                })),
                ..Fake::default()
            },
        );
        let arguments = table(json!({"path": "p"}));
        let pairs = app
            .poll_in("list-entries", &arguments, PollContext::new(Some(5), false))
            .unwrap();
        assert_eq!(
            pairs,
            Some(vec![
                Pair::new("title", "first"),
                Pair::new("id", "1"),
                Pair::new("body", "b1"),
                Pair::new("author", "ana"),
            ])
        );
        assert_eq!(app.poll("list-entries", &arguments).unwrap(), None);
    }

    #[test]
    fn values_become_strings_as_the_official_sdk_makes_them() {
        assert_eq!(text(json!("as is")), "as is");
        assert_eq!(text(json!(7)), "7");
        assert_eq!(text(json!(-7)), "-7");
        assert_eq!(text(json!(2.5)), "2.5");
        assert_eq!(text(json!(true)), "true");
        assert_eq!(text(json!(false)), "false");
        assert_eq!(text(Value::Null), "null");
        assert_eq!(text(json!(["a", 1])), r#"["a",1]"#);
        assert_eq!(text(json!({"z": 1, "a": [true]})), r#"{"a":[true],"z":1}"#);
    }

    #[test]
    fn poll_failures_keep_the_official_codes() {
        let poll_with = |next: Result<Item, BoxError>, arguments: Value| {
            let mut app = App::new().trigger(
                "list-entries",
                Fake {
                    next: Some(next),
                    ..Fake::default()
                },
            );
            let err = app
                .poll("list-entries", &table(arguments))
                .expect_err("the poll fails");
            (err.code(), err.message().to_owned())
        };
        let item = || Item {
            title: String::new(),
            id: 0,
            author: None,
            body: String::new(),
        };
        assert_eq!(
            poll_with(Err("no such file: p".into()), json!({"path": "p"})),
            (
                ErrorCode::COMMAND_FAILURE,
                "execution error: no such file: p".to_owned()
            )
        );
        assert_eq!(
            poll_with(
                Err(TriggerError::internal("the cache is corrupt").into()),
                json!({"path": "p"})
            ),
            (ErrorCode::INTERNAL_ERROR, "the cache is corrupt".to_owned())
        );
        assert_eq!(
            poll_with(Ok(item()), json!({"arguments": {"path": "p"}})),
            (
                ErrorCode::COMMAND_FAILURE,
                "trigger 'list-entries': unknown parameters ['arguments']; trigger \
                 'list-entries': missing required parameter 'path'"
                    .to_owned()
            )
        );
        assert_eq!(
            poll_with(Ok(item()), json!({"path": "p", "limit_total": 0})),
            (
                ErrorCode::COMMAND_FAILURE,
                "limit_total must be at least 1".to_owned()
            )
        );
    }

    #[test]
    fn hook_errors_are_execution_errors() {
        let mut app = app();
        let values = [Pair::new("id", "1")];
        assert_eq!(app.on_started("list-entries", &values), Ok(()));
        let err = app.on_finished("list-entries", &values).unwrap_err();
        assert_eq!(err.code(), ErrorCode::COMMAND_FAILURE);
        assert_eq!(
            err.message(),
            "execution error: the queue file is read-only"
        );
        assert_eq!(
            app.on_finished("nope", &values).unwrap_err().message(),
            "unsupported trigger_type 'nope'"
        );
    }

    #[test]
    fn mistakes_in_the_extension_code_are_refused_at_registration() {
        struct Wrong<P, I>(std::marker::PhantomData<(P, I)>);
        impl<P, I> TypedTrigger for Wrong<P, I>
        where
            P: DeserializeOwned + Serialize + JsonSchema,
            I: Serialize + JsonSchema,
        {
            type Params = P;
            type Item = I;
            fn poll(&mut self, _: &P, _: PollContext) -> Result<Option<I>, BoxError> {
                Ok(None)
            }
        }
        fn wrong<P, I>() -> Wrong<P, I> {
            Wrong(std::marker::PhantomData)
        }
        #[derive(Deserialize, Serialize, JsonSchema)]
        struct Prompted {
            prompt: String,
        }
        let refused = |name: &str| {
            App::new()
                .try_trigger(name, wrong::<Params, Item>())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(refused(""), "trigger name '' is not valid: it is empty");
        assert_eq!(
            refused("gh/issues"),
            "trigger name 'gh/issues' is not valid: it contains `/`; the host prefixes the \
             extension's alias itself"
        );
        assert!(refused("list_entries").contains("only ASCII letters, digits and `-`"));
        assert!(refused("list--entries").contains("one at a time"));
        assert!(refused("-list").contains("one at a time"));
        assert!(refused("123").contains("at least one letter"));
        assert!(
            App::new()
                .try_trigger("v2-issues", wrong::<Params, Item>())
                .is_ok()
        );

        assert_eq!(
            app()
                .try_trigger("list-entries", wrong::<Params, Item>())
                .unwrap_err(),
            RegistrationError::Duplicate("list-entries".to_owned())
        );
        assert_eq!(
            App::new()
                .try_trigger("x", wrong::<Prompted, Item>())
                .unwrap_err()
                .to_string(),
            "trigger 'x': parameter 'prompt' conflicts with a core automation field; use a \
             different name (for example `repo`)"
        );
        assert_eq!(
            App::new()
                .try_trigger("x", wrong::<String, Item>())
                .unwrap_err()
                .to_string(),
            "trigger 'x': the parameters must be a struct (a JSON object), and the schema of \
             `Params` is {\"type\":\"string\"}"
        );
        assert!(matches!(
            App::new().try_trigger("x", wrong::<Params, Vec<String>>()),
            Err(RegistrationError::ItemNotAnObject { .. })
        ));
    }

    #[test]
    #[should_panic(expected = "duplicate trigger name 'list-entries'")]
    fn trigger_panics_with_the_registration_error() {
        let _ = app().trigger("list-entries", Fake::default());
    }
}
