//! "Did you mean …?" for unknown keys and values.

/// The known word closest to `unknown`, when it is close enough to be a likely typo.
///
/// Distance is the Damerau–Levenshtein edit distance (a swap of two neighbours counts
/// as one edit) between the lowercased words; a candidate qualifies when the distance
/// is at most `max(1, n / 3)`, `n` being the number of characters of `unknown` (the
/// cutoff cargo uses for its suggestions). The closest candidate wins; on a tie, the
/// first in `known` order.
///
/// ```
/// use curupira_diagnostics::did_you_mean;
///
/// let keys = ["name", "version", "protocol_version", "trigger_types"];
/// assert_eq!(did_you_mean("nmae", keys), Some("name"));
/// assert_eq!(did_you_mean("protocolVersion", keys), Some("protocol_version"));
/// assert_eq!(did_you_mean("trigger-type", keys), Some("trigger_types"));
/// assert_eq!(did_you_mean("colour", keys), None);
/// ```
pub fn did_you_mean<'k>(
    unknown: &str,
    known: impl IntoIterator<Item = &'k str>,
) -> Option<&'k str> {
    let unknown_lower = unknown.to_lowercase();
    let cutoff = (unknown.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'k str)> = None;
    for candidate in known {
        if candidate == unknown {
            continue;
        }
        let distance = strsim::damerau_levenshtein(&unknown_lower, &candidate.to_lowercase());
        if distance <= cutoff && best.is_none_or(|(closest, _)| distance < closest) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// `` `a`, `b` or `c` ``: the alternatives of a closed set, for messages.
///
/// ```
/// use curupira_diagnostics::{all_of, one_of};
///
/// assert_eq!(one_of(["cli", "desktop"]), "`cli` or `desktop`");
/// assert_eq!(all_of(["a", "b", "c"]), "`a`, `b` and `c`");
/// ```
pub fn one_of<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    joined(names, "or")
}

/// `` `a`, `b` and `c` ``: every member of a list, for messages.
pub fn all_of<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    joined(names, "and")
}

fn joined<S: AsRef<str>>(names: impl IntoIterator<Item = S>, last: &str) -> String {
    let names: Vec<String> = names
        .into_iter()
        .map(|n| format!("`{}`", n.as_ref().escape_debug()))
        .collect();
    match names.len() {
        0 => String::new(),
        1 => names[0].clone(),
        n => format!("{} {last} {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutoff_grows_with_the_length() {
        // Three letters: one edit allowed.
        assert_eq!(did_you_mean("knd", ["kind"]), Some("kind"));
        assert_eq!(did_you_mean("kd", ["kind"]), None);
        // Twelve letters: four edits allowed.
        assert_eq!(
            did_you_mean("triger_tpes", ["trigger_types"]),
            Some("trigger_types")
        );
        assert_eq!(did_you_mean("xxxxxxxxxxxx", ["trigger_types"]), None);
    }

    #[test]
    fn closest_wins_and_ties_keep_the_given_order() {
        assert_eq!(
            did_you_mean("versin", ["version", "versions"]),
            Some("version")
        );
        assert_eq!(did_you_mean("ab", ["ac", "ad"]), Some("ac"));
    }

    #[test]
    fn case_differences_count_as_nothing() {
        assert_eq!(did_you_mean("Name", ["name"]), Some("name"));
        assert_eq!(did_you_mean("name", ["name"]), None);
    }
}
