//! JSON-RPC 2.0 message types and strict parsing for the Curupira protocol.
