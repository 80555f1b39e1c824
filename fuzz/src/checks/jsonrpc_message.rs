//! Any bytes through message classification (`curupira_jsonrpc::parse`) and, for what
//! classifies, through the protocol's strict readers (`curupira_protocol::Wire::read`):
//!
//! - bytes that are not UTF-8 JSON text (serde_json's syntax check) are a -32700
//!   failure with `id: null`; a failure on JSON text is -32600; a body classified as a
//!   message (or a batch) is JSON text, and a batch has one entry per element. (JSON
//!   text is what the grammar accepts: a number like `5e3020` in a member nobody reads
//!   is JSON, though serde_json cannot hold it as a `Value`; where such a number must
//!   be read, the body is -32700.)
//! - a classified message written back (`Message::to_vec`) classifies as the same
//!   message, and a failure's reply is a response carrying its id and code;
//! - every params and result type of protocol 2 (in the shapes of the reference host
//!   and the official SDK) reads any value without panicking, and what it reads,
//!   written back (`to_json`), reads as the same thing (`NoParams` and `Ack`, written
//!   as `null` and `{}`, included).

use std::fmt::Debug;

use curupira_jsonrpc::{ErrorCode, Id, Incoming, Message, parse, parse_message};
use curupira_protocol::{
    Ack, DescribeResult, InitializeParams, InitializeResult, NoParams, PollParams, PollResult,
    SchemaParams, TaskParams, TriggerSchema, ValidateParams, ValidateResult, Wire, to_json,
};
use serde_json::Value;

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let is_json = std::str::from_utf8(data).is_ok()
        && serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok();
    let theirs = serde_json::from_slice::<Value>(data);
    match parse(data) {
        Err(failure) => {
            if !is_json {
                assert_eq!(failure.code(), ErrorCode::PARSE_ERROR, "{failure:?}");
                assert_eq!(failure.id(), &Id::Null);
            } else if theirs.is_ok() {
                assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST, "{failure:?}");
            } else {
                // JSON text with a number no `Value` can hold (`5e321`): refused as -32700
                // where it must be read, ignored in a member nobody reads.
                assert!(
                    failure.code() == ErrorCode::PARSE_ERROR
                        || failure.code() == ErrorCode::INVALID_REQUEST,
                    "{failure:?}"
                );
            }
            assert!(!failure.message().is_empty() && !failure.message().contains('\n'));
            let reply = Message::from(failure.reply()).to_vec();
            match parse_message(&reply) {
                Ok(Message::Response(response)) => {
                    assert_eq!(&response.id, failure.id());
                    let error = response.into_result().expect_err("an error reply");
                    assert_eq!(error.0.code, failure.code());
                }
                other => panic!("the reply {reply:?} reads as {other:?}"),
            }
        }
        Ok(Incoming::Single(message)) => {
            assert!(is_json && data.trim_ascii_start().starts_with(b"{"));
            round_trip(&message);
        }
        Ok(Incoming::Batch(elements)) => {
            assert!(is_json && data.trim_ascii_start().starts_with(b"["));
            if let Ok(Value::Array(items)) = &theirs {
                assert_eq!(items.len(), elements.len());
            }
            assert!(!elements.is_empty());
            for message in elements.iter().flatten() {
                round_trip(message);
            }
        }
    }
    // The protocol's readers, on the whole value and on a request's params.
    if let Ok(value) = &theirs {
        every_reader(Some(value));
        if let Some(params) = value.get("params") {
            every_reader(Some(params));
        }
    }
}

fn round_trip(message: &Message) {
    let written = message.to_vec();
    match parse(&written) {
        Ok(Incoming::Single(again)) => assert_eq!(&again, message),
        other => panic!("{message:?} written as {written:?} reads as {other:?}"),
    }
}

fn every_reader(value: Option<&Value>) {
    reads_back::<InitializeParams>(value);
    reads_back::<InitializeResult>(value);
    reads_back::<NoParams>(value);
    reads_back::<DescribeResult>(value);
    reads_back::<SchemaParams>(value);
    reads_back::<TriggerSchema>(value);
    reads_back::<ValidateParams>(value);
    reads_back::<ValidateResult>(value);
    reads_back::<PollParams>(value);
    reads_back::<PollResult>(value);
    reads_back::<TaskParams>(value);
    reads_back::<Ack>(value);
}

fn reads_back<T: Wire + PartialEq + Debug>(value: Option<&Value>) {
    let Ok(read) = T::read(value) else {
        return;
    };
    let written = to_json(&read).expect("protocol values are JSON");
    let again = T::read(Some(&written))
        .unwrap_or_else(|error| panic!("{read:?} written as {written} reads as {error}"));
    assert_eq!(again, read);
}
