//! The name the model sees for a tool: `extension__{id}__{tool}__{hash}`.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The longest invocation name: the common limit of model tool-name APIs, whose names
/// must match `^[a-zA-Z0-9_-]{1,64}$`.
pub const MAX_INVOCATION_NAME: usize = 64;

const PREFIX: &str = "extension__";
const SEPARATOR: &str = "__";
const HASH_DIGITS: usize = 8;
/// What a name holds besides `id` and `tool`: the prefix, two separators and the hash.
const FIXED: usize = PREFIX.len() + 2 * SEPARATOR.len() + HASH_DIGITS;
/// Room left for `id` and `tool` together.
const ROOM: usize = MAX_INVOCATION_NAME - FIXED;

/// The name the model sees for the tool `tool` of the package `package`:
/// `extension__{id}__{tool}__{hash}`, always matching `^[a-zA-Z0-9_-]{1,64}$`.
///
/// - `id` is the package name with every character (Unicode scalar value, not byte)
///   outside `[A-Za-z0-9_-]` replaced by `_`, so `@acme/x` becomes `_acme_x`;
/// - the tool part is the tool name sanitised the same way (`item.get` → `item_get`);
/// - `hash` is the first 8 lowercase hex digits of the SHA-256 of
///   `"{package}\n{tool}"`, computed over the names as given (before sanitising and
///   shortening), so two different pairs get different names even when their
///   sanitised or shortened parts are equal (`a.b` and `a_b`).
///
/// An empty part becomes `_`, so each part of the name stays non-empty. When the whole
/// would exceed [`MAX_INVOCATION_NAME`] characters, `id` is cut from the right first,
/// down to 1 character, then the tool part, down to 1 character; the prefix, the
/// separators and the hash (23 characters) leave 41 for the two parts, so the result
/// always fits. The function never fails and never panics.
///
/// ```
/// use spirit_manifest::invocation_name;
///
/// assert_eq!(
///     invocation_name("@example/spirit-extension", "lookup_item"),
///     "extension___example_spirit-extension__lookup_item__079d1c57"
/// );
/// ```
pub fn invocation_name(package: &str, tool: &str) -> String {
    let mut id = sanitise(package);
    let mut tool_part = sanitise(tool);
    // Both parts are ASCII, so byte lengths are character counts and truncating at any
    // byte is a character boundary.
    if id.len() + tool_part.len() > ROOM {
        let id_len = ROOM.saturating_sub(tool_part.len()).max(1);
        id.truncate(id_len);
    }
    if id.len() + tool_part.len() > ROOM {
        let tool_len = ROOM.saturating_sub(id.len()).max(1);
        tool_part.truncate(tool_len);
    }

    let digest = Sha256::new()
        .chain_update(package.as_bytes())
        .chain_update(b"\n")
        .chain_update(tool.as_bytes())
        .finalize();
    let mut name = String::with_capacity(MAX_INVOCATION_NAME);
    name.push_str(PREFIX);
    name.push_str(&id);
    name.push_str(SEPARATOR);
    name.push_str(&tool_part);
    name.push_str(SEPARATOR);
    for byte in digest.iter().take(HASH_DIGITS / 2) {
        // Writing to a `String` cannot fail.
        let _ = write!(name, "{byte:02x}");
    }
    name
}

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_`; `_` when empty.
fn sanitise(text: &str) -> String {
    if text.is_empty() {
        return "_".to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
