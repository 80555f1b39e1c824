//! Strings as JavaScript reads them, for the checks that must agree with a JavaScript
//! program (the Spirit app, npm).
//!
//! `String.prototype.trim` (and `trimStart`, `trimEnd`) removes ECMAScript's
//! *WhiteSpace* and *LineTerminator* code points: tab, line tabulation, form feed,
//! space, no-break space, U+FEFF (the byte order mark) and every other `Zs` space
//! separator, then line feed, carriage return, U+2028 and U+2029. That is Rust's
//! [`char::is_whitespace`] with U+FEFF added and U+0085 (NEL) removed: a name padded
//! with U+FEFF is the bare name to JavaScript, and one ending in NEL is not.
//! `recordings/javascript/trim.json` holds the set as Node removes it, and a test
//! holds [`is_whitespace`] to it on every code point.
//!
//! ```
//! use curupira_diagnostics::js;
//!
//! assert_eq!(js::trim("\u{feff} my-tool \u{feff}"), "my-tool");
//! assert_eq!(js::trim("my-tool\u{85}"), "my-tool\u{85}");
//! assert!(js::trim("\u{feff}").is_empty());
//! ```

/// Whether `String.prototype.trim` removes `c`.
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// `text.trim()` as JavaScript computes it.
pub fn trim(text: &str) -> &str {
    text.trim_matches(is_whitespace)
}

/// `text.trimStart()` as JavaScript computes it.
pub fn trim_start(text: &str) -> &str {
    text.trim_start_matches(is_whitespace)
}

/// `text.trimEnd()` as JavaScript computes it.
pub fn trim_end(text: &str) -> &str {
    text.trim_end_matches(is_whitespace)
}

/// [`trim`], [`trim_start`] and [`trim_end`] as methods of `str`, for code that reads
/// like the JavaScript it agrees with (`text.js_trim()` where the app has
/// `text.trim()`).
pub trait JsTrim {
    /// `trim()` as JavaScript computes it.
    fn js_trim(&self) -> &str;
    /// `trimStart()` as JavaScript computes it.
    fn js_trim_start(&self) -> &str;
    /// `trimEnd()` as JavaScript computes it.
    fn js_trim_end(&self) -> &str;
}

impl JsTrim for str {
    fn js_trim(&self) -> &str {
        trim(self)
    }
    fn js_trim_start(&self) -> &str {
        trim_start(self)
    }
    fn js_trim_end(&self) -> &str {
        trim_end(self)
    }
}

/// Whether `text` is empty once trimmed as JavaScript trims it (`!text.trim()`).
pub fn is_blank(text: &str) -> bool {
    trim(text).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every scalar value, against the set Node recorded.
    #[test]
    fn the_set_is_the_one_node_removes() {
        let recorded: serde_json::Value =
            serde_json::from_str(include_str!("../../recordings/javascript/trim.json")).unwrap();
        let trimmed: Vec<u32> = recorded["trimmed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hex| u32::from_str_radix(&hex.as_str().unwrap()[2..], 16).unwrap())
            .collect();
        assert_eq!(trimmed.len(), 25);
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            assert_eq!(
                is_whitespace(c),
                trimmed.contains(&u32::from(c)),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }

    #[test]
    fn it_differs_from_rust_in_two_code_points_only() {
        let differ: Vec<char> = (0..=0x10_ffff)
            .filter_map(char::from_u32)
            .filter(|&c| c.is_whitespace() != is_whitespace(c))
            .collect();
        assert_eq!(differ, ['\u{85}', '\u{feff}']);
    }

    proptest::proptest! {
        #[test]
        fn trimming_removes_only_the_set_and_only_at_the_ends(text in "\\PC*", pad in "[ \t\u{feff}\u{3000}\u{2028}]*") {
            let padded = format!("{pad}{text}{pad}");
            let trimmed = trim(&padded);
            proptest::prop_assert!(padded.contains(trimmed));
            proptest::prop_assert!(!trimmed.starts_with(is_whitespace));
            proptest::prop_assert!(!trimmed.ends_with(is_whitespace));
            proptest::prop_assert_eq!(trim(trimmed), trimmed);
            proptest::prop_assert_eq!(trim_end(trim_start(&padded)), trimmed);
        }
    }
}
