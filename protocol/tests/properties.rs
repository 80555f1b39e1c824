//! Properties of the item rules and of reading what was written.

#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use curupira_protocol::{
    CORE_KEYS, Configuration, ItemProblem, Pair, PollParams, PollResult, Problem, ProtocolVersion,
    RESERVED_KEYS, TaskParams, ValidateParams, ValidateResult, Wire, check_item, is_core_key,
    parameters, to_json,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Keys drawn from a small alphabet so that repeats, `""` and reserved keys happen.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ab]{0,2}",
        1 => Just("repository".to_owned()),
        1 => Just("automation".to_owned()),
        1 => "\\PC{0,6}",
    ]
}

fn item() -> impl Strategy<Value = Vec<Pair>> {
    prop::collection::vec((key(), "\\PC{0,6}"), 0..6)
        .prop_map(|pairs| pairs.into_iter().map(Pair::from).collect())
}

/// The rules written the plain way: the first pair whose key is empty, reserved, or
/// seen before.
fn model(pairs: &[Pair]) -> Option<(usize, ItemProblem)> {
    let mut seen = HashSet::new();
    for (index, pair) in pairs.iter().enumerate() {
        if pair.key.is_empty() {
            return Some((index, ItemProblem::EmptyKey));
        }
        if RESERVED_KEYS.contains(&pair.key.as_str()) {
            return Some((index, ItemProblem::ReservedKey(pair.key.clone())));
        }
        if !seen.insert(pair.key.clone()) {
            return Some((index, ItemProblem::RepeatedKey(pair.key.clone())));
        }
    }
    None
}

/// An automation's table: core keys and parameters, with values of every JSON kind.
fn table() -> impl Strategy<Value = Configuration> {
    let name = prop_oneof![
        1 => prop::sample::select(CORE_KEYS.to_vec()).prop_map(str::to_owned),
        2 => "[a-z_]{1,8}",
    ];
    let value = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
        prop::collection::vec("\\PC{0,3}", 0..3).prop_map(|items| json!(items)),
    ];
    prop::collection::btree_map(name, value, 0..8).prop_map(|members| members.into_iter().collect())
}

proptest! {
    #[test]
    fn parameters_are_the_table_without_its_core_keys(table in table()) {
        let kept = parameters(&table);
        prop_assert!(kept.keys().all(|key| !is_core_key(key)));
        for (key, value) in &table {
            prop_assert_eq!(kept.get(key), (!is_core_key(key)).then_some(value));
        }
    }

    #[test]
    fn validate_and_poll_params_read_back(
        trigger_type in "\\PC{0,8}",
        table in table(),
        limit in prop::option::of(any::<u64>()),
        preview in any::<bool>(),
    ) {
        let validate = ValidateParams { trigger_type: trigger_type.clone(), configuration: table.clone() };
        prop_assert_eq!(ValidateParams::read(Some(&to_json(&validate).unwrap())).unwrap(), validate);
        let accepted = ValidateResult::Accepted { configuration: Some(table.clone()) };
        prop_assert_eq!(ValidateResult::read(Some(&to_json(&accepted).unwrap())).unwrap(), accepted);
        let poll = PollParams { trigger_type, automation: table, limit, preview };
        let written = to_json(&poll).unwrap();
        prop_assert_eq!(written.get("limit").is_some(), limit.is_some());
        prop_assert_eq!(PollParams::read(Some(&written)).unwrap(), poll);
    }

    #[test]
    fn check_item_is_the_plain_rule(pairs in item()) {
        let expected = model(&pairs);
        let got = check_item(&pairs).err().map(|error| (error.index, error.problem));
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn a_poll_result_reads_back_or_names_the_pair(pairs in item()) {
        let written = json!({"values": pairs});
        match PollResult::read(Some(&written)) {
            Ok(read) => {
                prop_assert!(model(&pairs).is_none());
                prop_assert_eq!(read.values.as_ref(), Some(&pairs));
                prop_assert_eq!(to_json(&read).unwrap(), written);
            }
            Err(error) => {
                let (index, problem) = model(&pairs).unwrap();
                prop_assert_eq!(error.pointer, format!("/values/{index}"));
                prop_assert!(matches!(error.problem, Problem::Item(ref item) if item.problem == problem));
            }
        }
    }

    #[test]
    fn task_params_read_back(trigger_type in "\\PC{0,8}", pairs in item()) {
        let params = TaskParams { trigger_type, values: pairs };
        let written = to_json(&params).unwrap();
        prop_assert_eq!(TaskParams::read(Some(&written)).unwrap(), params);
    }

    #[test]
    fn versions_read_as_they_print(major in 0u64..1000, minor in prop::option::of(0u64..1000)) {
        let version = ProtocolVersion::new(major, minor);
        let written = serde_json::to_value(version).unwrap();
        prop_assert_eq!(ProtocolVersion::from_json(&written).unwrap(), version);
        prop_assert_eq!(version.to_string().parse::<ProtocolVersion>().unwrap(), version);
        prop_assert_eq!(version.is_compatible(), major == 2);
        if minor.is_none() {
            prop_assert_eq!(written, Value::from(major));
        }
    }
}
