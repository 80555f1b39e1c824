//! The names the model sees for tools, built as the Spirit app builds them:
//! `extension__{id}__{tool}__{hash}` for one tool ([`invocation_name`]), and the `__1`,
//! `__2`… suffixes that the app adds when names collide over the installed list
//! ([`offered_tools`]).

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt::Write as _;

use sha1::{Digest, Sha1};

use crate::model::{Capability, PackageJson, Tool};

/// The longest invocation name: the common limit of model tool-name APIs, whose names
/// must match `^[a-zA-Z0-9_-]{1,64}$`.
pub const MAX_INVOCATION_NAME: usize = 64;

const PREFIX: &str = "extension__";
const SEPARATOR: &str = "__";
const HASH_DIGITS: usize = 8;
/// The longest id fragment.
const ID_FRAGMENT: usize = 16;
/// The longest tool fragment.
const TOOL_FRAGMENT: usize = 24;
/// What an empty fragment becomes.
const EMPTY_FRAGMENT: &str = "tool";

/// The name the Spirit app gives the tool `tool` of the extension `id` (its package
/// name), before any collision suffix: `extension__{id}__{tool}__{hash}`, always
/// matching `^[a-z0-9_]{1,64}$`.
///
/// - Each of `id` and `tool` becomes a *fragment*: ASCII letters and digits, lower-cased,
///   are kept; every run of other characters (Unicode scalar values, not bytes) becomes
///   one `_`; `_` is trimmed at both ends; an empty result becomes `tool`.
/// - The id fragment is then cut to 16 characters and the tool fragment to 24, with no
///   second trim (so a cut can leave a trailing `_`).
/// - `hash` is the first 8 lowercase hex digits of the SHA-1 of
///   `{id fragment}\0{tool fragment}` — of the fragments, so `my-ext`/`get.item` and
///   `my.ext`/`get-item` get the same name; [`offered_tools`] tells them apart with a
///   suffix.
/// - The whole is cut to [`MAX_INVOCATION_NAME`] characters (the parts above make at
///   most 63, so this never cuts; it is the app's rule all the same).
///
/// The function never fails and never panics.
///
/// ```
/// use spirit_manifest::invocation_name;
///
/// assert_eq!(
///     invocation_name("@example/spirit-extension", "lookup_item"),
///     "extension__example_spirit_e__lookup_item__8b3b40e0"
/// );
/// ```
pub fn invocation_name(id: &str, tool: &str) -> String {
    let id = cut(fragment(id), ID_FRAGMENT);
    let tool = cut(fragment(tool), TOOL_FRAGMENT);
    let digest = Sha1::new()
        .chain_update(id.as_bytes())
        .chain_update([0])
        .chain_update(tool.as_bytes())
        .finalize();
    let mut name = String::with_capacity(MAX_INVOCATION_NAME);
    name.push_str(PREFIX);
    name.push_str(&id);
    name.push_str(SEPARATOR);
    name.push_str(&tool);
    name.push_str(SEPARATOR);
    for byte in digest.iter().take(HASH_DIGITS / 2) {
        // Writing to a `String` cannot fail.
        let _ = write!(name, "{byte:02x}");
    }
    // ASCII only, so a byte length is a character count and any byte a boundary.
    name.truncate(MAX_INVOCATION_NAME);
    name
}

/// `text` as a name fragment: ASCII letters and digits lower-cased, every run of other
/// characters one `_`, `_` trimmed at both ends, `tool` when nothing is left.
fn fragment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        EMPTY_FRAGMENT.to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// The first `limit` characters of an ASCII fragment.
fn cut(mut fragment: String, limit: usize) -> String {
    fragment.truncate(limit);
    fragment
}

/// Whether the Spirit app offers the package's tools to the model: only when it
/// requests both `tool-definitions` and `tool-execution`. A package that lacks one
/// gets no names and takes no suffixes.
pub fn offers_tools(package: &PackageJson) -> bool {
    let requested = &package.spirit_extension.requested_capabilities;
    requested.contains(&Capability::ToolDefinitions)
        && requested.contains(&Capability::ToolExecution)
}

/// One tool as the Spirit app offers it to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool<'a> {
    /// The extension the tool belongs to.
    pub package: &'a PackageJson,
    /// The tool, as its manifest declares it.
    pub tool: &'a Tool,
    /// The name the model sees: [`invocation_name`], with `__N` when an earlier tool
    /// already took that name.
    pub name: String,
}

/// The order in which the Spirit app lists installed extensions: by `displayName`
/// under the app's collation (`localeCompare` with the `zh-CN` locale), then by id
/// (`localeCompare` with `en`).
///
/// With the crate's `collation` feature both comparisons are ICU's (`icu_collator`,
/// the collation the app's JavaScript engine uses). Without it, display names and ids
/// made only of ASCII characters are ordered exactly as ICU orders them (whitespace,
/// then punctuation and symbols in ICU's order, digits, letters; lower case before
/// upper case only when nothing else differs; control characters ignored), and any
/// other character sorts after every ASCII one, by code point — an approximation,
/// wrong for names in Chinese, for instance, which ICU orders by pinyin.
pub fn installed_order(a: &PackageJson, b: &PackageJson) -> Ordering {
    collate::display_names(
        &a.spirit_extension.display_name,
        &b.spirit_extension.display_name,
    )
    .then_with(|| collate::ids(&a.name, &b.name))
}

/// Two extension ids in the Spirit app's order: `localeCompare(other, "en")`, the order
/// of its installed list among equal display names and of `extensions.json`'s entries.
///
/// ICU's with the `collation` feature; without it exact for ids of ASCII characters
/// (every valid id), as [`installed_order`] says.
///
/// ```
/// use std::cmp::Ordering;
/// use spirit_manifest::compare_ids;
///
/// // ICU puts punctuation before digits and `_` before `-`; bytes do the opposite.
/// assert_eq!(compare_ids("@acme/x", "1x"), Ordering::Less);
/// assert_eq!(compare_ids("a_b", "a-b"), Ordering::Less);
/// ```
pub fn compare_ids(a: &str, b: &str) -> Ordering {
    collate::ids(a, b)
}

/// Every tool the Spirit app offers to the model when `installed` are the installed
/// extensions of one host, in the app's order, each with its name.
///
/// The extensions are sorted as the app lists them ([`installed_order`]; equal ones
/// keep their order here), and then named as [`offered_tools_in_order`] does.
///
/// ```
/// use spirit_manifest::{check_str, offered_tools, Options};
///
/// let package = |name: &str, display: &str| {
///     let text = format!(
///         r#"{{"name": "{name}", "version": "1.0.0", "main": "index.js",
///             "spiritExtension": {{"displayName": "{display}", "supportedHosts": ["cli"],
///               "requestedCapabilities": ["tool-definitions", "tool-execution"],
///               "contributes": {{"tools": [{{"name": "get-item", "description": "Get.",
///                 "inputSchema": {{"type": "object"}}}}]}}}}}}"#
///     );
///     check_str(&text, "package.json", &Options::default()).package.unwrap()
/// };
/// let installed = [package("my.ext", "Zeta"), package("my-ext", "Alpha")];
/// let names: Vec<_> = offered_tools(&installed)
///     .into_iter()
///     .map(|offered| (offered.package.name.as_str(), offered.name))
///     .collect();
/// assert_eq!(
///     names,
///     [
///         ("my-ext", "extension__my_ext__get_item__26b4c02d".to_owned()),
///         ("my.ext", "extension__my_ext__get_item__26b4c02d__1".to_owned()),
///     ]
/// );
/// ```
pub fn offered_tools<'a, I>(installed: I) -> Vec<OfferedTool<'a>>
where
    I: IntoIterator<Item = &'a PackageJson>,
{
    let mut sorted: Vec<&PackageJson> = installed.into_iter().collect();
    sorted.sort_by(|a, b| installed_order(a, b));
    offered_tools_in_order(sorted)
}

/// Every tool the Spirit app offers to the model, for extensions already in the app's
/// list order (as [`offered_tools`] sorts them).
///
/// Extensions that do not request both tool capabilities ([`offers_tools`]) are left
/// out. The others' tools are named in list order, then tool order: each gets its
/// [`invocation_name`], or, when an earlier tool already has that name, the first of
/// `name__1`, `name__2`… that is free, the name cut so that it and the suffix stay
/// within [`MAX_INVOCATION_NAME`] characters.
pub fn offered_tools_in_order<'a, I>(installed: I) -> Vec<OfferedTool<'a>>
where
    I: IntoIterator<Item = &'a PackageJson>,
{
    let mut taken = HashSet::new();
    let mut offered = Vec::new();
    for package in installed.into_iter().filter(|p| offers_tools(p)) {
        for tool in package.tools() {
            let name = unique(invocation_name(&package.name, &tool.name), &taken);
            taken.insert(name.clone());
            offered.push(OfferedTool {
                package,
                tool,
                name,
            });
        }
    }
    offered
}

/// `base`, or when it is taken the first free `base__N` (N from 1), `base` cut so the
/// whole stays within [`MAX_INVOCATION_NAME`].
fn unique(base: String, taken: &HashSet<String>) -> String {
    if !taken.contains(&base) {
        return base;
    }
    let mut candidate = String::with_capacity(MAX_INVOCATION_NAME);
    for index in 1_usize.. {
        let suffix = format!("{SEPARATOR}{index}");
        candidate.clear();
        // `base` is ASCII, so any byte is a character boundary.
        let keep = base
            .len()
            .min(MAX_INVOCATION_NAME.saturating_sub(suffix.len()));
        candidate.push_str(base.get(..keep).unwrap_or(&base));
        candidate.push_str(&suffix);
        if !taken.contains(&candidate) {
            break;
        }
    }
    candidate
}

/// The two comparisons of [`installed_order`].
mod collate {
    use std::cmp::Ordering;

    /// Display names, as `localeCompare(other, "zh-CN")`.
    pub(super) fn display_names(a: &str, b: &str) -> Ordering {
        #[cfg(feature = "collation")]
        if let Some(collator) = icu::ZH_CN.as_ref() {
            return collator.compare(a, b);
        }
        ascii(a, b)
    }

    /// Ids, as `localeCompare(other, "en")`.
    pub(super) fn ids(a: &str, b: &str) -> Ordering {
        #[cfg(feature = "collation")]
        if let Some(collator) = icu::EN.as_ref() {
            return collator.compare(a, b);
        }
        ascii(a, b)
    }

    #[cfg(feature = "collation")]
    mod icu {
        use std::sync::LazyLock;

        use icu_collator::options::CollatorOptions;
        use icu_collator::{Collator, CollatorBorrowed};
        use icu_locale_core::{Locale, locale};

        /// `new Intl.Collator("zh-CN")`: the default options (tertiary strength,
        /// punctuation not ignored, no numeric ordering). `None` only if the compiled
        /// data lacked the locale, and then the ASCII order serves.
        pub(super) static ZH_CN: LazyLock<Option<CollatorBorrowed<'static>>> =
            LazyLock::new(|| collator(locale!("zh-CN")));
        /// `new Intl.Collator("en")`.
        pub(super) static EN: LazyLock<Option<CollatorBorrowed<'static>>> =
            LazyLock::new(|| collator(locale!("en")));

        fn collator(locale: Locale) -> Option<CollatorBorrowed<'static>> {
            Collator::try_new((&locale).into(), CollatorOptions::default()).ok()
        }
    }

    /// ASCII in ICU's root order (which `en` and `zh-CN` keep for ASCII), one primary
    /// weight per entry: whitespace, punctuation, symbols, digits; letters follow,
    /// each with its upper-case form.
    const BEFORE_LETTERS: &[u8] = b"\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789";

    /// The primary weight of `c`; `None` for the control characters ICU ignores.
    /// Characters outside ASCII come after all of ASCII, by code point.
    fn primary(c: char) -> Option<u32> {
        if let Some(rank) = BEFORE_LETTERS.iter().position(|&b| char::from(b) == c) {
            // The table is far shorter than `u32::MAX`.
            return u32::try_from(rank).ok();
        }
        let letters = u32::try_from(BEFORE_LETTERS.len()).unwrap_or(u32::MAX);
        if c.is_ascii_alphabetic() {
            return Some(letters + u32::from(c.to_ascii_lowercase() as u8 - b'a'));
        }
        if c.is_ascii() {
            // The remaining ASCII characters are controls.
            return None;
        }
        Some(letters + 26 + u32::from(c))
    }

    /// The order ICU gives strings of ASCII: primary weights first, then case (lower
    /// before upper), ignored characters skipped.
    pub(super) fn ascii(a: &str, b: &str) -> Ordering {
        let weights = |text: &str| {
            text.chars()
                .filter_map(|c| primary(c).map(|p| (p, c.is_ascii_uppercase())))
                .collect::<Vec<_>>()
        };
        let (a, b) = (weights(a), weights(b));
        let primaries = a.iter().map(|w| w.0).cmp(b.iter().map(|w| w.0));
        primaries.then_with(|| a.iter().map(|w| w.1).cmp(b.iter().map(|w| w.1)))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn ascii_order_follows_icu_root() {
            // Sorted with Node.js 20 (ICU 78): `[...].sort((a, b) => a.localeCompare(b, "zh-CN"))`.
            let sorted = [
                "\tx", " x", "_x", "-x", ",x", ";x", ":x", "!x", "?x", ".x", "'x", "\"x", "(x",
                ")x", "[x", "]x", "{x", "}x", "@x", "*x", "/x", "\\x", "&x", "#x", "%x", "`x",
                "^x", "+x", "<x", "=x", ">x", "|x", "~x", "$x", "0x", "9x", "a", "A", "ab", "aB",
                "Ab", "AB", "b", "z", "Z",
            ];
            for (i, a) in sorted.iter().enumerate() {
                for (j, b) in sorted.iter().enumerate() {
                    assert_eq!(ascii(a, b), i.cmp(&j), "{a:?} vs {b:?}");
                }
            }
        }

        #[test]
        fn control_characters_are_ignored_and_case_decides_last() {
            assert_eq!(ascii("a\u{1}b", "ab"), Ordering::Equal);
            assert_eq!(ascii("Ab", "ac"), Ordering::Less);
            assert_eq!(ascii("ab", "Ab"), Ordering::Less);
            assert_eq!(ascii("a-b", "ab"), Ordering::Less);
            assert_eq!(ascii("my_ext", "my-ext"), Ordering::Less);
            assert_eq!(ascii("é", "z"), Ordering::Greater);
        }

        #[cfg(feature = "collation")]
        mod against_icu {
            use proptest::prelude::*;

            use super::super::{ascii, display_names, ids};

            proptest! {
                #[test]
                fn the_ascii_order_is_icus(a in "[\\x00-\\x7f]{0,6}", b in "[\\x00-\\x7f]{0,6}") {
                    prop_assert_eq!(ascii(&a, &b), display_names(&a, &b), "{:?} {:?}", a, b);
                    prop_assert_eq!(ascii(&a, &b), ids(&a, &b), "{:?} {:?}", a, b);
                }
            }
        }
    }
}
