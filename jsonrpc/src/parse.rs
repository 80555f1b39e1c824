//! Strict parsing of a frame body: one pass of JSON, then classification by which
//! members are present.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, de};
use serde_json::Value;

use crate::describe;
use crate::message::{ParamsNotStructured, error_object};
use crate::{ErrorCode, ErrorObject, Id, Message, Notification, Params, Request, Response};

/// What one frame body holds: a single message or a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A JSON object that is a valid message.
    Single(Message),
    /// A non-empty JSON array; each element was classified on its own, in order.
    Batch(Vec<Result<Message, ParseFailure>>),
}

/// Why a frame body (or one element of a batch) is not a valid message.
///
/// Carries the code (-32700 or -32600), one sentence saying what was wrong, and the
/// request id when it could be read (otherwise `Id::Null`). [`reply`](Self::reply)
/// builds the error response a receiver of requests sends back.
///
/// ```
/// use curupira_jsonrpc::{ErrorCode, Id, parse_message};
/// let failure = parse_message(br#"{"jsonrpc":"1.0","id":7,"method":"describe"}"#).unwrap_err();
/// assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST);
/// assert_eq!(failure.id(), &Id::from(7));
/// assert_eq!(failure.message(), r#"member `jsonrpc` must be the string "2.0", found "1.0""#);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ParseFailure {
    code: ErrorCode,
    message: String,
    id: Id,
}

impl ParseFailure {
    fn parse_error(message: String) -> ParseFailure {
        ParseFailure {
            code: ErrorCode::PARSE_ERROR,
            message,
            id: Id::Null,
        }
    }

    fn invalid(id: Id, message: String) -> ParseFailure {
        ParseFailure {
            code: ErrorCode::INVALID_REQUEST,
            message,
            id,
        }
    }

    /// [`ErrorCode::PARSE_ERROR`] or [`ErrorCode::INVALID_REQUEST`].
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// One sentence saying what was wrong, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The id of the offending message when it had a valid `id` member, else `Id::Null`.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The error response to send back: this failure's id, code and message.
    pub fn reply(&self) -> Response {
        self.clone().into_reply()
    }

    /// The error response to send back, consuming the failure.
    pub fn into_reply(self) -> Response {
        Response::err(self.id, ErrorObject::new(self.code, self.message))
    }
}

/// Parses one frame body: a message, or a batch of them.
///
/// Fails as a whole (one error reply) when the body is not UTF-8 or not JSON
/// (-32700), is JSON but neither an object nor an array, is an empty array, or is an
/// object that is not a valid message (-32600). Inside a non-empty batch each element
/// succeeds or fails on its own.
pub fn parse(body: &[u8]) -> Result<Incoming, ParseFailure> {
    match read_shape(body)? {
        Shape::Object(members) => classify(members).map(Incoming::Single),
        Shape::Batch(elements) if elements.is_empty() => Err(ParseFailure::invalid(
            Id::Null,
            "a batch must not be an empty array".to_owned(),
        )),
        Shape::Batch(elements) => Ok(Incoming::Batch(
            elements.into_iter().map(classify_element).collect(),
        )),
        Shape::Other(value) => Err(ParseFailure::invalid(
            Id::Null,
            format!(
                "a message must be a JSON object (or a batch of them in an array), found {}",
                describe(&value)
            ),
        )),
    }
}

/// Parses one frame body that must hold a single message; a batch is refused with
/// -32600 (this protocol's host never sends one).
pub fn parse_message(body: &[u8]) -> Result<Message, ParseFailure> {
    match parse(body)? {
        Incoming::Single(message) => Ok(message),
        Incoming::Batch(elements) => Err(ParseFailure::invalid(
            Id::Null,
            format!(
                "expected a single message, found a batch of {} (batches are not accepted here)",
                match elements.len() {
                    1 => "1 element".to_owned(),
                    n => format!("{n} elements"),
                }
            ),
        )),
    }
}

fn read_shape(body: &[u8]) -> Result<Shape, ParseFailure> {
    if body.is_empty() {
        return Err(ParseFailure::parse_error(
            "body is empty, expected a JSON-RPC message".to_owned(),
        ));
    }
    let text = std::str::from_utf8(body).map_err(|err| {
        let offset = err.valid_up_to();
        ParseFailure::parse_error(match err.error_len() {
            Some(_) => format!(
                "body is not valid UTF-8: byte 0x{:02x} at offset {offset} cannot appear there",
                body.get(offset).copied().unwrap_or_default()
            ),
            None => format!(
                "body is not valid UTF-8: it ends inside a multi-byte character at offset {offset}"
            ),
        })
    })?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let shape = ShapeSeed { top: true }
        .deserialize(&mut deserializer)
        .and_then(|shape| deserializer.end().map(|()| shape))
        .map_err(|err| ParseFailure::parse_error(format!("body is not valid JSON: {err}")))?;
    Ok(shape)
}

fn classify_element(shape: Shape) -> Result<Message, ParseFailure> {
    let found = match shape {
        Shape::Object(members) => return classify(members),
        Shape::Batch(_) => "an array".to_owned(),
        Shape::Other(value) => describe(&value),
    };
    Err(ParseFailure::invalid(
        Id::Null,
        format!("a batch element must be a JSON object, found {found}"),
    ))
}

/// The members JSON-RPC 2.0 names; any other member of a message is skipped unread.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
    /// The first JSON-RPC member that appeared twice.
    duplicate: Option<&'static str>,
}

/// The top-level shape of a body, read in the same pass as the JSON syntax.
enum Shape {
    Object(Members),
    Batch(Vec<Shape>),
    Other(Value),
}

fn classify(members: Members) -> Result<Message, ParseFailure> {
    let Members {
        jsonrpc,
        id,
        method,
        params,
        result,
        error,
        duplicate,
    } = members;

    // The id the reply must carry: the message's own when it is readable, else null.
    let recovered_id = match (&id, duplicate) {
        (_, Some("id")) | (None, _) => Id::Null,
        (Some(value), _) => Id::from_value(value).unwrap_or(Id::Null),
    };
    let invalid = |message: String| ParseFailure::invalid(recovered_id.clone(), message);

    if let Some(name) = duplicate {
        return Err(invalid(format!("member `{name}` appears more than once")));
    }
    match &jsonrpc {
        Some(Value::String(version)) if version == "2.0" => {}
        Some(other) => {
            return Err(invalid(format!(
                "member `jsonrpc` must be the string \"2.0\", found {}",
                describe(other)
            )));
        }
        None => {
            return Err(invalid(
                "member `jsonrpc` is missing, it must be the string \"2.0\"".to_owned(),
            ));
        }
    }

    if let Some(method) = method {
        let Value::String(method) = method else {
            return Err(invalid(format!(
                "member `method` must be a string, found {}",
                describe(&method)
            )));
        };
        for (name, present) in [("result", result.is_some()), ("error", error.is_some())] {
            if present {
                return Err(invalid(format!(
                    "a request or notification (it has `method`) must not have a `{name}` member"
                )));
            }
        }
        // `"params": null` is read as absent: the reference Curupira host sends it.
        let params = match params
            .filter(|value| !value.is_null())
            .map(Params::try_from)
            .transpose()
        {
            Ok(params) => params,
            Err(ParamsNotStructured { found }) => {
                return Err(invalid(format!(
                    "member `params` must be an object or an array, found {found}"
                )));
            }
        };
        return match id {
            None => Ok(Message::Notification(Notification { method, params })),
            Some(value) => {
                let id = Id::from_value(&value).map_err(|found| invalid(bad_id(&found)))?;
                Ok(Message::Request(Request { id, method, params }))
            }
        };
    }

    let result = match (result, error) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "a response must have exactly one of `result` and `error`, found both".to_owned(),
            ));
        }
        (None, None) => {
            return Err(invalid(
                "a message must have `method` (request or notification) or one of `result` and `error` (response), found none of them".to_owned(),
            ));
        }
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(error),
    };
    if params.is_some_and(|value| !value.is_null()) {
        return Err(invalid(
            "a response (it has no `method`) must not have a `params` member".to_owned(),
        ));
    }
    let Some(id) = id else {
        return Err(invalid("a response must have an `id` member".to_owned()));
    };
    let id = Id::from_value(&id).map_err(|found| invalid(bad_id(&found)))?;
    let result = match result {
        Ok(value) => Ok(value),
        Err(error) => Err(error_object(error).map_err(invalid)?),
    };
    Ok(Message::Response(Response { id, result }))
}

fn bad_id(found: &str) -> String {
    format!("member `id` must be an integer, a string or null, found {found}")
}

/// Reads a single message with the same rules as [`parse_message`]; the error is the
/// failure's sentence.
impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match (ShapeSeed { top: false }).deserialize(deserializer)? {
            Shape::Object(members) => {
                classify(members).map_err(|failure| de::Error::custom(failure.message))
            }
            Shape::Other(Value::Array(_)) | Shape::Batch(_) => Err(de::Error::custom(
                "expected a single message, found a batch",
            )),
            Shape::Other(value) => Err(de::Error::custom(format_args!(
                "a message must be a JSON object, found {}",
                describe(&value)
            ))),
        }
    }
}

/// Deserializes a [`Shape`]; at the top level an array becomes a batch whose elements
/// are shapes too, deeper arrays stay plain values.
struct ShapeSeed {
    top: bool,
}

impl<'de> DeserializeSeed<'de> for ShapeSeed {
    type Value = Shape;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ShapeSeed {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Shape, E> {
        Ok(Shape::Other(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Shape, E> {
        Ok(Shape::Other(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Shape, E> {
        Ok(Shape::Other(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Shape, E> {
        Ok(Shape::Other(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Shape, E> {
        Ok(Shape::Other(Value::from(v)))
    }

    fn visit_string<E>(self, v: String) -> Result<Shape, E> {
        Ok(Shape::Other(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        if !self.top {
            let items = Vec::<Value>::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
            return Ok(Shape::Other(Value::Array(items)));
        }
        let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(element) = seq.next_element_seed(ShapeSeed { top: false })? {
            elements.push(element);
        }
        Ok(Shape::Batch(elements))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut members = Members::default();
        while let Some(key) = map.next_key::<Key>()? {
            let (name, slot) = match key {
                Key::Jsonrpc => ("jsonrpc", &mut members.jsonrpc),
                Key::Id => ("id", &mut members.id),
                Key::Method => ("method", &mut members.method),
                Key::Params => ("params", &mut members.params),
                Key::Result => ("result", &mut members.result),
                Key::Error => ("error", &mut members.error),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                map.next_value::<IgnoredAny>()?;
                members.duplicate.get_or_insert(name);
            } else {
                *slot = Some(map.next_value()?);
            }
        }
        Ok(Shape::Object(members))
    }
}

/// A member name, read without allocating.
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Key, E> {
        Ok(match name {
            "jsonrpc" => Key::Jsonrpc,
            "id" => Key::Id,
            "method" => Key::Method,
            "params" => Key::Params,
            "result" => Key::Result,
            "error" => Key::Error,
            _ => Key::Other,
        })
    }
}
