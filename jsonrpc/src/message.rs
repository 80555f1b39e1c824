//! The message types and how they are written.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{ErrorCode, Id, describe};

/// One JSON-RPC 2.0 message: a request, a notification or a response.
///
/// Build one with [`Request::new`], [`Notification::new`], [`Response::ok`] or
/// [`Response::err`]; read one with [`parse_message`](crate::parse_message). Serializing
/// always writes `"jsonrpc":"2.0"`, and [`Display`](fmt::Display) writes the compact
/// JSON that goes into a frame body.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that expects a response.
    Request(Request),
    /// A call that expects no response.
    Notification(Notification),
    /// The answer to a request.
    Response(Response),
}

/// A call that expects a [`Response`] with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Echoed in the response. `Id::Null` is allowed, though unwise.
    pub id: Id,
    /// The method name, such as `trigger/poll`.
    pub method: String,
    /// The arguments; `None` writes no `params` member.
    pub params: Option<Params>,
}

/// A call without an `id`: the receiver never answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The arguments; `None` writes no `params` member.
    pub params: Option<Params>,
}

/// The answer to a request: exactly one of a result or an error, by construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request this answers; `Id::Null` when that id could not be read.
    pub id: Id,
    /// `Ok` is written as `result`, `Err` as `error`.
    pub result: Result<Value, ErrorObject>,
}

/// The `params` of a request or notification: JSON-RPC 2.0 allows only an array
/// (positional arguments) or an object (named arguments).
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// Positional arguments.
    Array(Vec<Value>),
    /// Named arguments.
    Object(Map<String, Value>),
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ErrorObject {
    /// What kind of error this is.
    pub code: ErrorCode,
    /// One sentence saying what went wrong.
    pub message: String,
    /// Anything more the receiver may use, such as the list of validation errors that
    /// accompanies -32003.
    pub data: Option<Value>,
}

/// An error reply received from an extension, as the host reports it.
///
/// ```
/// use curupira_jsonrpc::{ErrorObject, RemoteError};
/// let err = RemoteError::from(ErrorObject::invalid_params("`trigger_type` is missing"));
/// assert_eq!(
///     err.to_string(),
///     "extension replied with error invalid params (-32602): `trigger_type` is missing"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("extension replied with error {}: {}", .0.code, .0.message)]
pub struct RemoteError(pub ErrorObject);

/// A value that is not a valid `params` member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`params` must be an object or an array, found {found}")]
pub struct ParamsNotStructured {
    pub(crate) found: String,
}

impl Message {
    /// The compact JSON of this message, ready to be a frame body.
    pub fn to_vec(&self) -> Vec<u8> {
        // Straight into bytes: no UTF-8 re-check of every chunk as `Display` needs.
        // Serializing our types cannot fail (every map key is a string); the
        // `Display` path, which gives the same bytes, is the fallback all the same.
        serde_json::to_vec(self).unwrap_or_else(|_| self.to_string().into_bytes())
    }

    /// The id of a request or response; `None` for a notification.
    pub fn id(&self) -> Option<&Id> {
        match self {
            Message::Request(request) => Some(&request.id),
            Message::Notification(_) => None,
            Message::Response(response) => Some(&response.id),
        }
    }

    /// The method of a request or notification; `None` for a response.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(request) => Some(&request.method),
            Message::Notification(notification) => Some(&notification.method),
            Message::Response(_) => None,
        }
    }
}

impl Request {
    /// A request.
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: Option<Params>) -> Request {
        Request {
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

impl Notification {
    /// A notification.
    pub fn new(method: impl Into<String>, params: Option<Params>) -> Notification {
        Notification {
            method: method.into(),
            params,
        }
    }
}

impl Response {
    /// A successful response.
    pub fn ok(id: impl Into<Id>, result: Value) -> Response {
        Response {
            id: id.into(),
            result: Ok(result),
        }
    }

    /// An error response.
    pub fn err(id: impl Into<Id>, error: ErrorObject) -> Response {
        Response {
            id: id.into(),
            result: Err(error),
        }
    }

    /// The -32700 reply to a body that is not JSON; its id is always `null`.
    ///
    /// [`ParseFailure::reply`](crate::ParseFailure::reply) builds this (or the -32600
    /// reply) from a failed parse.
    pub fn parse_error(message: impl Into<String>) -> Response {
        Response::err(Id::Null, ErrorObject::new(ErrorCode::PARSE_ERROR, message))
    }

    /// The -32601 reply to a request for a method the receiver does not have.
    pub fn method_not_found(id: impl Into<Id>, method: &str) -> Response {
        Response::err(id, ErrorObject::method_not_found(method))
    }

    /// The -32602 reply to a request whose params do not fit its method.
    pub fn invalid_params(id: impl Into<Id>, message: impl Into<String>) -> Response {
        Response::err(id, ErrorObject::invalid_params(message))
    }

    /// The -32603 reply to a request the receiver failed to handle.
    pub fn internal_error(id: impl Into<Id>, message: impl Into<String>) -> Response {
        Response::err(id, ErrorObject::internal_error(message))
    }

    /// The result, or the received error as a [`RemoteError`].
    pub fn into_result(self) -> Result<Value, RemoteError> {
        self.result.map_err(RemoteError)
    }
}

impl ErrorObject {
    /// An error object without `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    pub fn with_data(self, data: Value) -> ErrorObject {
        ErrorObject {
            data: Some(data),
            ..self
        }
    }

    /// -32601, naming the method as a JSON string: `method "trigger/pol" not found`.
    pub fn method_not_found(method: &str) -> ErrorObject {
        let method = Value::from(method);
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method {method} not found"),
        )
    }

    /// -32602 with the given message.
    pub fn invalid_params(message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603 with the given message.
    pub fn internal_error(message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    }
}

impl Params {
    /// The params as a plain JSON value (an array or an object), for example to
    /// deserialize them into a typed struct with `serde_json::from_value`.
    pub fn into_value(self) -> Value {
        Value::from(self)
    }

    /// The named arguments, when the params are an object.
    pub fn as_object(&self) -> Option<&Map<String, Value>> {
        match self {
            Params::Object(map) => Some(map),
            Params::Array(_) => None,
        }
    }

    /// The positional arguments, when the params are an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Params::Array(items) => Some(items),
            Params::Object(_) => None,
        }
    }
}

impl From<Map<String, Value>> for Params {
    fn from(map: Map<String, Value>) -> Self {
        Params::Object(map)
    }
}

impl From<Vec<Value>> for Params {
    fn from(items: Vec<Value>) -> Self {
        Params::Array(items)
    }
}

/// Accepts an array or an object; any other value is refused.
impl TryFrom<Value> for Params {
    type Error = ParamsNotStructured;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        match value {
            Value::Array(items) => Ok(Params::Array(items)),
            Value::Object(map) => Ok(Params::Object(map)),
            other => Err(ParamsNotStructured {
                found: describe(&other),
            }),
        }
    }
}

impl From<Params> for Value {
    fn from(params: Params) -> Self {
        match params {
            Params::Array(items) => Value::Array(items),
            Params::Object(map) => Value::Object(map),
        }
    }
}

impl From<ErrorObject> for RemoteError {
    fn from(error: ErrorObject) -> Self {
        RemoteError(error)
    }
}

impl From<Request> for Message {
    fn from(request: Request) -> Self {
        Message::Request(request)
    }
}

impl From<Notification> for Message {
    fn from(notification: Notification) -> Self {
        Message::Notification(notification)
    }
}

impl From<Response> for Message {
    fn from(response: Response) -> Self {
        Message::Response(response)
    }
}

/// Compact JSON, the same bytes as [`Message::to_vec`].
impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::write_json(f, self)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(request) => request.serialize(serializer),
            Message::Notification(notification) => notification.serialize(serializer),
            Message::Response(response) => response.serialize(serializer),
        }
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 3 + usize::from(self.params.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 2 + usize::from(self.params.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        match &self.result {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

impl Serialize for ErrorObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 2 + usize::from(self.data.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("code", &self.code)?;
        map.serialize_entry("message", &self.message)?;
        if let Some(data) = &self.data {
            map.serialize_entry("data", data)?;
        }
        map.end()
    }
}

impl Serialize for Params {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Params::Array(items) => items.serialize(serializer),
            Params::Object(map) => map.serialize(serializer),
        }
    }
}

/// Accepts an array or an object.
impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Params::try_from(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// Applies the same rules as an `error` member inside a message: an object with an
/// integer `code`, a string `message` and optionally `data`; other members are ignored.
impl<'de> Deserialize<'de> for ErrorObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        error_object(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// Reads an error object: integer `code`, string `message`, optional `data`; other
/// members are ignored. What `parse` reads a response's `error` member with, and
/// [`ErrorObject`]'s `Deserialize`.
pub(crate) fn error_object(value: Value) -> Result<ErrorObject, String> {
    let Value::Object(mut map) = value else {
        return Err(format!(
            "member `error` must be an object, found {}",
            describe(&value)
        ));
    };
    let code = match map.get("code") {
        Some(Value::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(code), _) => ErrorCode::new(code),
            (None, Some(_)) => {
                return Err(format!(
                    "member `error.code` must fit in a signed 64-bit integer, found {n}"
                ));
            }
            (None, None) => {
                return Err(format!("member `error.code` must be an integer, found {n}"));
            }
        },
        Some(other) => {
            return Err(format!(
                "member `error.code` must be an integer, found {}",
                describe(other)
            ));
        }
        None => return Err("member `error.code` is missing".to_owned()),
    };
    let message = match map.remove("message") {
        Some(Value::String(message)) => message,
        Some(other) => {
            return Err(format!(
                "member `error.message` must be a string, found {}",
                describe(&other)
            ));
        }
        None => return Err("member `error.message` is missing".to_owned()),
    };
    Ok(ErrorObject {
        code,
        message,
        data: map.remove("data"),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn json_of(message: impl Into<Message>) -> Value {
        serde_json::from_slice(&message.into().to_vec()).unwrap()
    }

    #[test]
    fn to_vec_writes_the_bytes_of_display() {
        let messages = [
            Message::from(Response::ok(7, json!({"values": null}))),
            Message::from(Response::ok(
                "a\"b",
                json!({"values": [{"key": "t", "value": "é \n \u{1F600} \\"}], "n": 1.5}),
            )),
            Message::from(Response::err(
                Id::Null,
                ErrorObject::invalid_params("bad").with_data(json!({"errors": []})),
            )),
            Message::from(Request::new(1, "describe", None)),
        ];
        for message in messages {
            assert_eq!(
                message.to_vec(),
                message.to_string().into_bytes(),
                "{message}"
            );
        }
    }

    #[test]
    fn requests_always_carry_the_version_and_omit_absent_params() {
        assert_eq!(
            Message::from(Request::new(1, "describe", None)).to_string(),
            r#"{"jsonrpc":"2.0","id":1,"method":"describe"}"#
        );
        assert_eq!(
            json_of(Request::new("a", "sum", Some(Params::from(vec![json!(1)])))),
            json!({"jsonrpc": "2.0", "id": "a", "method": "sum", "params": [1]})
        );
        assert_eq!(
            json_of(Request::new(Id::Null, "x", None)),
            json!({"jsonrpc": "2.0", "id": null, "method": "x"})
        );
    }

    #[test]
    fn notifications_have_no_id_member() {
        let params = Params::try_from(json!({"a": 1})).unwrap();
        assert_eq!(
            json_of(Notification::new("log", Some(params))),
            json!({"jsonrpc": "2.0", "method": "log", "params": {"a": 1}})
        );
    }

    #[test]
    fn responses_write_exactly_one_of_result_and_error() {
        assert_eq!(
            json_of(Response::ok(3, Value::Null)),
            json!({"jsonrpc": "2.0", "id": 3, "result": null})
        );
        assert_eq!(
            json_of(Response::err(
                3,
                ErrorObject::new(ErrorCode::CONFIGURATION_INVALID, "bad")
                    .with_data(json!({"errors": []}))
            )),
            json!({"jsonrpc": "2.0", "id": 3, "error": {
                "code": -32003, "message": "bad", "data": {"errors": []}
            }})
        );
    }

    #[test]
    fn reply_builders() {
        assert_eq!(
            json_of(Response::parse_error("body is empty")),
            json!({"jsonrpc": "2.0", "id": null,
                   "error": {"code": -32700, "message": "body is empty"}})
        );
        assert_eq!(
            json_of(Response::method_not_found(4, "trigger/pol")),
            json!({"jsonrpc": "2.0", "id": 4,
                   "error": {"code": -32601, "message": "method \"trigger/pol\" not found"}})
        );
        assert_eq!(
            json_of(Response::invalid_params("x", "`trigger_type` is missing")),
            json!({"jsonrpc": "2.0", "id": "x",
                   "error": {"code": -32602, "message": "`trigger_type` is missing"}})
        );
        assert_eq!(
            json_of(Response::internal_error(5, "disk full")),
            json!({"jsonrpc": "2.0", "id": 5,
                   "error": {"code": -32603, "message": "disk full"}})
        );
    }

    #[test]
    fn received_errors_display_code_name_and_message() {
        let response = Response::err(1, ErrorObject::new(ErrorCode::TIMEOUT, "gave up"));
        let err = response.into_result().unwrap_err();
        assert_eq!(
            err.to_string(),
            "extension replied with error timeout (-32004): gave up"
        );
        let unnamed = RemoteError(ErrorObject::new(ErrorCode::new(12), "custom"));
        assert_eq!(
            unnamed.to_string(),
            "extension replied with error code 12: custom"
        );
        assert_eq!(Response::ok(1, json!(2)).into_result(), Ok(json!(2)));
    }

    #[test]
    fn params_refuse_scalars() {
        assert_eq!(
            Params::try_from(json!("bar")).unwrap_err().to_string(),
            "`params` must be an object or an array, found \"bar\""
        );
        assert!(Params::try_from(Value::Null).is_err());
        assert!(serde_json::from_str::<Params>("3").is_err());
        assert_eq!(
            serde_json::from_str::<Params>("[1]").unwrap(),
            Params::Array(vec![json!(1)])
        );
        let object = Params::try_from(json!({"k": "v"})).unwrap();
        assert_eq!(object.as_object().unwrap()["k"], "v");
        assert_eq!(object.as_array(), None);
        assert_eq!(object.into_value(), json!({"k": "v"}));
    }

    #[test]
    fn message_accessors() {
        let request = Message::from(Request::new(9, "m", None));
        assert_eq!(request.id(), Some(&Id::from(9)));
        assert_eq!(request.method(), Some("m"));
        let notification = Message::from(Notification::new("n", None));
        assert_eq!(notification.id(), None);
        let response = Message::from(Response::ok("r", json!(1)));
        assert_eq!(response.id(), Some(&Id::from("r")));
        assert_eq!(response.method(), None);
    }
}
