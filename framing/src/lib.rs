//! The Curupira frame codec: 8-hex-digit length-prefixed frames.
