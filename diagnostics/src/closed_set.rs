//! Closed sets of string values (hosts, statuses, capabilities …) as enums that know
//! their spellings, so validators can test membership and suggest the closest value.

/// Declares an enum whose variants are spelled as given in JSON: `Serialize` /
/// `Deserialize` by those spellings (the calling crate depends on `serde` with its
/// `derive` feature), `ALL`, `as_str`, `from_name`, `names` (for did-you-mean) and
/// `Display`.
///
/// ```
/// curupira_diagnostics::closed_set! {
///     /// Where it runs.
///     Host {
///         /// The terminal.
///         Cli = "cli",
///         /// The desktop.
///         Desktop = "desktop",
///     }
/// }
/// assert_eq!(Host::from_name("cli"), Some(Host::Cli));
/// assert_eq!(Host::Desktop.to_string(), "desktop");
/// assert_eq!(curupira_diagnostics::did_you_mean("desk", Host::names()), None);
/// assert_eq!(curupira_diagnostics::did_you_mean("destkop", Host::names()), Some("desktop"));
/// ```
#[macro_export]
macro_rules! closed_set {
    ($(#[$doc:meta])* $name:ident { $( $(#[$vdoc:meta])* $variant:ident = $text:literal, )* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ::serde::Serialize, ::serde::Deserialize)]
        pub enum $name {
            $( $(#[$vdoc])* #[serde(rename = $text)] $variant, )*
        }

        impl $name {
            /// Every value, in the order the format's documentation lists them.
            pub const ALL: &[$name] = &[$( $name::$variant, )*];

            /// The value as written in the file.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $text, )* }
            }

            /// The value written as `text`, if it is one.
            pub fn from_name(text: &str) -> Option<Self> {
                match text { $( $text => Some($name::$variant), )* _ => None }
            }

            /// Every value as written, for messages and did-you-mean.
            pub fn names() -> impl Iterator<Item = &'static str> + Clone {
                Self::ALL.iter().map(|v| v.as_str())
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
