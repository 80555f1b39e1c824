//! RFC 8785 canonical JSON and SHA-256 task identity.
