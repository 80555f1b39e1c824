//! Where placeholder values come from.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

/// A source of placeholder values: maps a key to its value, or says it has none.
///
/// Implemented for:
/// - `HashMap<K, V, S>` (any hasher) and `BTreeMap<K, V>`, with `K: Borrow<str>` and
///   `V: AsRef<str>`: `HashMap<String, String>`, `BTreeMap<&str, &str>`, …;
/// - slices, arrays and vectors of `(K, V)` pairs with `K, V: AsRef<str>`, searched in
///   order (the first pair with the key wins). For the handful of pairs a work item
///   carries this beats hashing, and the host needs no map per item;
/// - [`Chain`]: two lookups, the first asked first (item pairs, then host variables);
/// - closures, through [`from_fn`];
/// - references and boxes of any of these, and `dyn Lookup`.
///
/// The empty key is not special: a lookup that has `""` replaces `${}`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a template `Lookup`",
    label = "not a `Lookup`",
    note = "wrap a closure `|key: &str| -> Option<&str>` with `curupira_template::from_fn(closure)`",
    note = "maps of strings, slices of `(key, value)` pairs and `Chain` are lookups"
)]
pub trait Lookup {
    /// The value for `key`, or `None` to leave its placeholder as written.
    fn get(&self, key: &str) -> Option<&str>;
}

impl<L: Lookup + ?Sized> Lookup for &L {
    fn get(&self, key: &str) -> Option<&str> {
        (**self).get(key)
    }
}

impl<L: Lookup + ?Sized> Lookup for Box<L> {
    fn get(&self, key: &str) -> Option<&str> {
        (**self).get(key)
    }
}

impl<K, V, S> Lookup for HashMap<K, V, S>
where
    K: Borrow<str> + Hash + Eq,
    V: AsRef<str>,
    S: BuildHasher,
{
    fn get(&self, key: &str) -> Option<&str> {
        HashMap::get(self, key).map(AsRef::as_ref)
    }
}

impl<K, V> Lookup for BTreeMap<K, V>
where
    K: Borrow<str> + Ord,
    V: AsRef<str>,
{
    fn get(&self, key: &str) -> Option<&str> {
        BTreeMap::get(self, key).map(AsRef::as_ref)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Lookup for [(K, V)] {
    fn get(&self, key: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| v.as_ref())
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> Lookup for [(K, V); N] {
    fn get(&self, key: &str) -> Option<&str> {
        Lookup::get(self.as_slice(), key)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Lookup for Vec<(K, V)> {
    fn get(&self, key: &str) -> Option<&str> {
        Lookup::get(self.as_slice(), key)
    }
}

/// Two lookups as one: `first` is asked first, `second` only when `first` has no value.
///
/// The host renders a prompt from the item's pairs plus its own variables without
/// building a map per item:
///
/// ```
/// use curupira_template::{Chain, Template};
///
/// let vars = [("repository", "github.com/acme/widgets"), ("automation", "triage")];
/// let pairs = vec![("issue-number".to_owned(), "7".to_owned())];
/// let template = Template::parse("${automation}: ${repository}#${issue-number}");
/// let lookup = Chain(pairs.as_slice(), &vars);
/// assert_eq!(template.render(&lookup), "triage: github.com/acme/widgets#7");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Chain<A, B>(pub A, pub B);

impl<A: Lookup, B: Lookup> Lookup for Chain<A, B> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).or_else(|| self.1.get(key))
    }
}

/// A closure used as a [`Lookup`]; made by [`from_fn`].
///
/// The wrapper exists for the lifetimes: [`Lookup::get`] lends its value for as long as
/// the lookup itself is borrowed, and a bare closure type cannot promise that its
/// `&'v str` outlives that borrow. `FromFn` carries `'v` in its type, which makes the
/// promise checkable.
#[derive(Clone, Copy)]
pub struct FromFn<'v, F> {
    function: F,
    values: PhantomData<&'v str>,
}

/// Turns a closure `Fn(&str) -> Option<&str>` into a [`Lookup`].
///
/// The closure may return text borrowed from anything it captures:
///
/// ```
/// use std::collections::HashMap;
/// use curupira_template::{Template, from_fn};
///
/// let fields: HashMap<String, String> = HashMap::from([("user".into(), "ana".into())]);
/// let template = Template::parse("hi ${USER} / ${user}");
/// let lookup = from_fn(|key: &str| fields.get(&key.to_lowercase()).map(String::as_str));
/// assert_eq!(template.render(&lookup), "hi ana / ana");
/// ```
pub fn from_fn<'v, F>(function: F) -> FromFn<'v, F>
where
    F: Fn(&str) -> Option<&'v str>,
{
    FromFn {
        function,
        values: PhantomData,
    }
}

impl<'v, F> Lookup for FromFn<'v, F>
where
    F: Fn(&str) -> Option<&'v str>,
{
    fn get(&self, key: &str) -> Option<&str> {
        (self.function)(key)
    }
}

impl<F> std::fmt::Debug for FromFn<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<L: Lookup + ?Sized>(lookup: &L, key: &str) -> Option<String> {
        lookup.get(key).map(str::to_owned)
    }

    #[test]
    fn maps_of_any_string_kind() {
        let owned: HashMap<String, String> = HashMap::from([("a".into(), "1".into())]);
        let borrowed: HashMap<&str, &str> = HashMap::from([("a", "2")]);
        let tree: BTreeMap<String, Box<str>> = BTreeMap::from([("a".into(), "3".into())]);
        assert_eq!(value(&owned, "a").as_deref(), Some("1"));
        assert_eq!(value(&borrowed, "a").as_deref(), Some("2"));
        assert_eq!(value(&tree, "a").as_deref(), Some("3"));
        assert_eq!(value(&owned, "b"), None);
        assert_eq!(value(&tree, "A"), None);
    }

    #[test]
    fn pair_slices_search_in_order_and_first_wins() {
        let pairs = vec![("k".to_owned(), "first"), ("k".to_owned(), "second")];
        assert_eq!(value(&pairs, "k").as_deref(), Some("first"));
        assert_eq!(value(pairs.as_slice(), "k").as_deref(), Some("first"));
        assert_eq!(value(&[("", "empty")], "").as_deref(), Some("empty"));
        assert_eq!(value(&[("", "empty")], "k"), None);
    }

    #[test]
    fn chain_asks_first_then_second() {
        let first = [("a", "1")];
        let second = [("a", "ignored"), ("b", "2")];
        let chain = Chain(&first, &second);
        assert_eq!(value(&chain, "a").as_deref(), Some("1"));
        assert_eq!(value(&chain, "b").as_deref(), Some("2"));
        assert_eq!(value(&chain, "c"), None);
    }

    #[test]
    fn closures_and_trait_objects() {
        let store = String::from("captured");
        let lookup = from_fn(|key: &str| (key == "x").then_some(store.as_str()));
        assert_eq!(value(&lookup, "x").as_deref(), Some("captured"));
        assert_eq!(value(&lookup, "y"), None);
        let boxed: Box<dyn Lookup> = Box::new(HashMap::from([("k".to_owned(), "v")]));
        assert_eq!(value(&boxed, "k").as_deref(), Some("v"));
        assert_eq!(value(&*boxed, "k").as_deref(), Some("v"));
    }
}
