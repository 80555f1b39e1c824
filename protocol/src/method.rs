//! The methods of protocol 2: each name with its params and result types.

use crate::messages::{
    Ack, DescribeResult, InitializeParams, InitializeResult, NoParams, PollParams, PollResult,
    SchemaParams, TaskParams, TriggerSchema, ValidateParams, ValidateResult, Wire,
};

/// A method of the protocol: its name on the wire and the types of its params and
/// result (as `lsp-types` does for LSP).
///
/// ```
/// use curupira_protocol::method::{Method, Poll};
///
/// assert_eq!(Poll::NAME, "trigger/poll");
/// ```
pub trait Method {
    /// The method's name on the wire.
    const NAME: &'static str;
    /// What the host sends.
    type Params: Wire;
    /// What the extension answers.
    type Result: Wire;
}

macro_rules! methods {
    ($($(#[$doc:meta])* $marker:ident = $name:literal, $params:ty => $result:ty;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub enum $marker {}

            impl Method for $marker {
                const NAME: &'static str = $name;
                type Params = $params;
                type Result = $result;
            }
        )*

        /// Every method's name, in the order of the protocol's table.
        pub const ALL: &[&str] = &[$($name),*];
    };
}

methods! {
    /// `initialize`: the first request; agrees on the protocol version.
    Initialize = "initialize", InitializeParams => InitializeResult;
    /// `describe`: the trigger types the extension offers.
    Describe = "describe", NoParams => DescribeResult;
    /// `trigger/schema`: a trigger type's parameters schema and prompt fields.
    Schema = "trigger/schema", SchemaParams => TriggerSchema;
    /// `trigger/validate`: checks an automation's configuration, and normalises it.
    Validate = "trigger/validate", ValidateParams => ValidateResult;
    /// `trigger/poll`: the next work item, or none.
    Poll = "trigger/poll", PollParams => PollResult;
    /// `trigger/onStarted`: the host is about to work on an item.
    OnStarted = "trigger/onStarted", TaskParams => Ack;
    /// `trigger/onFinished`: the host is done with an item.
    OnFinished = "trigger/onFinished", TaskParams => Ack;
    /// `shutdown`: the last request; the extension answers and exits.
    Shutdown = "shutdown", NoParams => Ack;
}

/// Whether `name` may only be sent after `initialize` succeeded: every method but
/// `initialize` and `shutdown`.
pub fn requires_initialize(name: &str) -> bool {
    ALL.contains(&name) && name != Initialize::NAME && name != Shutdown::NAME
}
