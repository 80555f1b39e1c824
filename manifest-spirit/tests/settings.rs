//! The run-time settings and secrets rules (SPEC section 3, `settingsSchema` and
//! `secretSlots`, as the Spirit app's settings accessors apply them): one test per
//! rule, each overriding one value of a valid fixture, then properties over generated
//! schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use spirit_manifest::settings::{
    SecretKeyError, SettingError, Values, check_secret_key, check_update, check_values,
    with_defaults,
};
use spirit_manifest::{SecretSlot, SettingDef, SettingType};

/// One setting of each type; `region` and `api_url` are required, only `region` has a
/// default.
fn schema() -> Vec<SettingDef> {
    serde_json::from_value(json!([
        {
            "key": "region", "type": "select", "title": "Region", "required": true,
            "defaultValue": "us",
            "options": [{ "value": "us", "label": "US" }, { "value": "eu", "label": "EU" }]
        },
        { "key": "api_url", "type": "string", "title": "API URL", "required": true },
        { "key": "limit", "type": "number", "title": "Limit", "defaultValue": 10 },
        { "key": "verbose", "type": "boolean", "title": "Verbose" },
        { "key": "nickname", "type": "string", "title": "Nickname" }
    ]))
    .unwrap()
}

/// A complete, valid stored map for [`schema`].
fn valid() -> Values {
    map(json!({
        "region": "eu",
        "api_url": "https://api.example.com",
        "limit": 5,
        "verbose": true,
        "nickname": "ann"
    }))
}

/// [`valid`] with `key` set to `value`.
fn valid_with(key: &str, value: Value) -> Values {
    let mut values = valid();
    values.insert(key.to_owned(), value);
    values
}

/// [`valid`] without `key`.
fn valid_without(key: &str) -> Values {
    let mut values = valid();
    values.remove(key);
    values
}

fn map(value: Value) -> Values {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn messages(errors: &[SettingError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn wrong_type(key: &str, expected: SettingType, found: &'static str) -> SettingError {
    SettingError::WrongType {
        key: key.to_owned(),
        expected,
        found,
    }
}

#[test]
fn the_fixture_is_valid() {
    assert_eq!(check_update(&schema(), &valid()), Ok(()));
    assert_eq!(check_values(&schema(), &valid()), Ok(()));
}

#[test]
fn a_string_setting_takes_only_strings() {
    let errors = check_update(&schema(), &valid_with("api_url", json!(8080))).unwrap_err();
    assert_eq!(
        errors,
        [wrong_type("api_url", SettingType::String, "a number")]
    );
    assert_eq!(
        messages(&errors),
        ["setting `api_url` has type `string`: expected a string, found a number"]
    );
    // A required string must not be blank; one that is not required may be "".
    for blank in ["", "  \t"] {
        assert_eq!(
            check_update(&schema(), &valid_with("api_url", json!(blank))),
            Err(vec![SettingError::Blank {
                key: "api_url".into(),
                value: blank.into(),
            }])
        );
    }
    assert_eq!(
        check_update(&schema(), &valid_with("nickname", json!(""))),
        Ok(())
    );
}

#[test]
fn a_number_setting_takes_any_json_number() {
    for number in [
        json!(0),
        json!(-3),
        json!(2.5),
        json!(1e300),
        json!(u64::MAX),
    ] {
        assert_eq!(
            check_update(&schema(), &valid_with("limit", number)),
            Ok(())
        );
    }
    let errors = check_update(&schema(), &valid_with("limit", json!("10"))).unwrap_err();
    assert_eq!(
        errors,
        [wrong_type("limit", SettingType::Number, "a string")]
    );
}

#[test]
fn a_boolean_setting_takes_only_true_or_false() {
    let errors = check_update(&schema(), &valid_with("verbose", json!("true"))).unwrap_err();
    assert_eq!(
        errors,
        [wrong_type("verbose", SettingType::Boolean, "a string")]
    );
    assert_eq!(
        messages(&errors),
        ["setting `verbose` has type `boolean`: expected `true` or `false`, found a string"]
    );
    let errors = check_update(&schema(), &valid_with("verbose", json!(1))).unwrap_err();
    assert_eq!(
        errors,
        [wrong_type("verbose", SettingType::Boolean, "a number")]
    );
}

#[test]
fn a_select_setting_takes_only_a_string() {
    let errors = check_update(&schema(), &valid_with("region", json!(1))).unwrap_err();
    assert_eq!(
        errors,
        [wrong_type("region", SettingType::Select, "a number")]
    );
}

#[test]
fn a_select_value_must_be_one_of_the_options() {
    let errors = check_update(&schema(), &valid_with("region", json!("asia"))).unwrap_err();
    assert_eq!(
        errors,
        [SettingError::NotAnOption {
            key: "region".into(),
            value: "asia".into(),
            options: vec!["us".into(), "eu".into()],
        }]
    );
    assert_eq!(
        messages(&errors),
        ["setting `region` has no option \"asia\": expected one of \"us\", \"eu\""]
    );
    // Option values, not labels, and case matters.
    let errors = check_update(&schema(), &valid_with("region", json!("EU"))).unwrap_err();
    assert!(matches!(errors[..], [SettingError::NotAnOption { .. }]));
}

#[test]
fn a_select_without_options_takes_any_string() {
    let schema: Vec<SettingDef> = serde_json::from_value(json!([
        { "key": "mode", "type": "select", "title": "Mode" }
    ]))
    .unwrap();
    assert_eq!(
        check_update(&schema, &map(json!({"mode": "anything"}))),
        Ok(())
    );
    assert!(check_update(&schema, &map(json!({"mode": 1}))).is_err());
}

#[test]
fn the_extension_sees_the_app_s_words() {
    let messages: Vec<String> = [
        ("limit", json!("ten")),
        ("verbose", json!(1)),
        ("region", json!(2)),
        ("region", json!("asia")),
        ("api_url", json!(null)),
        ("api_url", json!(" ")),
        ("colour", json!("red")),
    ]
    .into_iter()
    .map(|(key, value)| {
        let errors = check_update(&schema(), &map(json!({ key: value }))).unwrap_err();
        errors[0].spirit_message()
    })
    .collect();
    assert_eq!(
        messages,
        [
            "Extension setting limit must be a number.",
            "Extension setting verbose must be a boolean.",
            "Extension setting region must be a string.",
            "Extension setting region has an invalid value: asia",
            "Extension setting api_url is required and cannot be cleared.",
            "Extension setting api_url must not be empty.",
            "The extension does not declare the setting: colour",
        ]
    );
    let error = check_secret_key(&slots(), "nope").unwrap_err();
    assert_eq!(
        error.spirit_message(),
        "The extension does not declare the secret slot: nope"
    );
}

#[test]
fn arrays_and_objects_are_never_setting_values() {
    for key in ["region", "api_url", "limit", "verbose"] {
        let errors = check_update(&schema(), &valid_with(key, json!(["eu"]))).unwrap_err();
        assert!(
            matches!(
                &errors[..],
                [SettingError::WrongType {
                    found: "an array",
                    ..
                }]
            ),
            "{key}: {errors:?}"
        );
        let errors = check_update(&schema(), &valid_with(key, json!({}))).unwrap_err();
        assert!(
            matches!(
                &errors[..],
                [SettingError::WrongType {
                    found: "an object",
                    ..
                }]
            ),
            "{key}: {errors:?}"
        );
    }
}

#[test]
fn a_required_setting_without_a_default_cannot_be_cleared() {
    let changes = map(json!({ "api_url": null }));
    let errors = check_update(&schema(), &changes).unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "setting `api_url` is required and has no `defaultValue`, so it cannot be cleared: expected a string, found null"
        ]
    );
    // With a default it can: the default shows again.
    assert_eq!(
        check_update(&schema(), &map(json!({ "region": null }))),
        Ok(())
    );
}

#[test]
fn a_stored_null_is_a_problem_every_read_fails_on() {
    let stored = valid_with("region", Value::Null);
    let expected = SettingError::StoredNull {
        key: "region".into(),
        expected: SettingType::Select,
    };
    assert_eq!(
        check_values(&schema(), &stored),
        Err(vec![expected.clone()])
    );
    assert_eq!(with_defaults(&schema(), &stored), Err(expected.clone()));
    assert_eq!(
        expected.spirit_message(),
        "Extension setting region must not be empty."
    );
}

#[test]
fn null_clears_a_setting_that_is_not_required() {
    let changes = map(json!({ "limit": null, "nickname": null, "verbose": null }));
    assert_eq!(check_update(&schema(), &changes), Ok(()));
    // A cleared setting is left out of the stored map, and reads as its default.
    let stored = valid_without("limit");
    assert_eq!(check_values(&schema(), &stored), Ok(()));
    assert_eq!(
        with_defaults(&schema(), &stored).unwrap()["limit"],
        json!(10)
    );
}

#[test]
fn an_update_need_not_name_every_setting() {
    let changes = map(json!({ "verbose": false }));
    assert_eq!(check_update(&schema(), &changes), Ok(()));
}

#[test]
fn an_unknown_key_is_refused_with_a_suggestion() {
    let changes = map(json!({ "regoin": "eu" }));
    let errors = check_update(&schema(), &changes).unwrap_err();
    assert_eq!(
        errors,
        [SettingError::UnknownKey {
            key: "regoin".into(),
            suggestion: Some("region".into()),
            declared: ["region", "api_url", "limit", "verbose", "nickname"]
                .map(String::from)
                .to_vec(),
        }]
    );
    assert_eq!(
        messages(&errors),
        ["setting `regoin` is not declared in `settingsSchema`: did you mean `region`?"]
    );
}

#[test]
fn an_unknown_key_without_a_close_one_lists_the_declared_keys() {
    let errors = check_update(&schema(), &map(json!({ "colour": "red" }))).unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "setting `colour` is not declared in `settingsSchema`: expected one of `region`, `api_url`, `limit`, `verbose`, `nickname`"
        ]
    );
    let errors = check_update(&[], &map(json!({ "colour": "red" }))).unwrap_err();
    assert_eq!(
        messages(&errors),
        ["setting `colour` is not declared: the extension declares no `settingsSchema`"]
    );
}

#[test]
fn every_problem_is_reported_in_the_order_of_the_changes() {
    // serde_json's map keeps its keys sorted.
    let changes = map(json!({
        "api_url": null,
        "colour": "red",
        "limit": "ten",
        "region": "asia",
        "verbose": true
    }));
    let errors = check_update(&schema(), &changes).unwrap_err();
    let keys: Vec<&str> = errors.iter().map(SettingError::key).collect();
    assert_eq!(keys, ["api_url", "colour", "limit", "region"]);
}

#[test]
fn a_required_setting_without_a_value_or_default_is_reported() {
    let errors = check_values(&schema(), &valid_without("api_url")).unwrap_err();
    assert_eq!(
        errors,
        [SettingError::Required {
            key: "api_url".into(),
            expected: SettingType::String,
        }]
    );
    assert_eq!(
        messages(&errors),
        [
            "setting `api_url` is required but has no value and no `defaultValue`: Spirit reads it as undefined; expected a string"
        ]
    );
    // It reads as absent; reading does not fail.
    let all = with_defaults(&schema(), &valid_without("api_url")).unwrap();
    assert!(!all.contains_key("api_url"));
    // An update is not a complete map: leaving it out there is fine.
    assert_eq!(check_update(&schema(), &valid_without("api_url")), Ok(()));
}

#[test]
fn a_default_satisfies_a_required_setting() {
    assert_eq!(check_values(&schema(), &valid_without("region")), Ok(()));
}

#[test]
fn with_defaults_fills_missing_settings_and_drops_undeclared_ones() {
    let stored = map(json!({ "api_url": "https://x.example", "colour": "red" }));
    assert_eq!(
        Value::Object(with_defaults(&schema(), &stored).unwrap()),
        json!({
            "region": "us",
            "api_url": "https://x.example",
            "limit": 10
        })
    );
    // Values written win over defaults.
    assert_eq!(with_defaults(&schema(), &valid()), Ok(valid()));
    // The first stored value (in schema order) that breaks its setting is the error.
    let broken = map(json!({ "limit": "x", "region": "asia" }));
    assert!(matches!(
        with_defaults(&schema(), &broken),
        Err(SettingError::NotAnOption { .. })
    ));
}

fn slots() -> Vec<SecretSlot> {
    serde_json::from_value(json!([
        { "key": "api_token", "title": "API token", "required": true },
        { "key": "webhook_secret", "title": "Webhook secret" }
    ]))
    .unwrap()
}

#[test]
fn secrets_are_reachable_only_by_declared_keys() {
    assert_eq!(check_secret_key(&slots(), "api_token"), Ok(()));
    assert_eq!(check_secret_key(&slots(), "webhook_secret"), Ok(()));

    let error = check_secret_key(&slots(), "api_tokn").unwrap_err();
    assert_eq!(
        error,
        SecretKeyError {
            key: "api_tokn".into(),
            suggestion: Some("api_token".into()),
            declared: vec!["api_token".into(), "webhook_secret".into()],
        }
    );
    assert_eq!(
        error.to_string(),
        "secret `api_tokn` is not declared in `secretSlots`: did you mean `api_token`?"
    );

    assert_eq!(
        check_secret_key(&slots(), "password")
            .unwrap_err()
            .to_string(),
        "secret `password` is not declared in `secretSlots`: expected one of `api_token`, `webhook_secret`"
    );
    assert_eq!(
        check_secret_key(&[], "api_token").unwrap_err().to_string(),
        "secret `api_token` is not declared: the extension declares no `secretSlots`"
    );
}

// ----- properties over generated schemas -----

/// What a generated setting looks like before it becomes a [`SettingDef`].
#[derive(Debug, Clone)]
struct Gen {
    kind: SettingType,
    required: bool,
    default: Option<Value>,
    options: Vec<String>,
}

impl Gen {
    fn def(&self, index: usize) -> SettingDef {
        let mut def = json!({
            "key": key(index),
            "type": self.kind.as_str(),
            "title": format!("Setting {index}"),
            "required": self.required,
        });
        if let Some(default) = &self.default {
            def["defaultValue"] = default.clone();
        }
        if self.kind == SettingType::Select {
            def["options"] = self
                .options
                .iter()
                .map(|value| json!({ "value": value, "label": value.to_uppercase() }))
                .collect();
        }
        serde_json::from_value(def).unwrap()
    }
}

fn key(index: usize) -> String {
    format!("setting_{index}")
}

fn defs(gens: &[Gen]) -> Vec<SettingDef> {
    gens.iter().enumerate().map(|(i, g)| g.def(i)).collect()
}

/// A value valid for a setting of type `kind` (with `options`, for a `select`).
fn valid_value(kind: SettingType, options: &[String]) -> BoxedStrategy<Value> {
    match kind {
        // Not blank: a blank string is refused for a required string setting.
        SettingType::String => "[ a-z]{0,3}[a-z][ a-z]{0,3}".prop_map(Value::from).boxed(),
        SettingType::Number => prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter_map("not finite", |f| {
                serde_json::Number::from_f64(f).map(Value::Number)
            }),
        ]
        .boxed(),
        SettingType::Boolean => any::<bool>().prop_map(Value::from).boxed(),
        SettingType::Select => prop::sample::select(options.to_vec())
            .prop_map(Value::from)
            .boxed(),
    }
}

/// A value whose JSON type is wrong for `kind` (never `null`), with its type's name.
fn wrong_value(kind: SettingType) -> BoxedStrategy<(Value, &'static str)> {
    let string = any::<String>().prop_map(|s| (Value::from(s), "a string"));
    let number = any::<i64>().prop_map(|n| (Value::from(n), "a number"));
    let boolean = any::<bool>().prop_map(|b| (Value::from(b), "a boolean"));
    let array = prop::collection::vec(any::<i32>(), 0..3).prop_map(|v| (json!(v), "an array"));
    let object = prop::collection::btree_map("[a-z]{1,3}", any::<bool>(), 0..3)
        .prop_map(|m| (json!(m), "an object"));
    match kind {
        SettingType::String | SettingType::Select => {
            prop_oneof![number, boolean, array, object].boxed()
        }
        SettingType::Number => prop_oneof![string, boolean, array, object].boxed(),
        SettingType::Boolean => prop_oneof![string, number, array, object].boxed(),
    }
}

/// One setting; with `required_has_default`, every `required` one has a default.
fn setting(required_has_default: bool) -> impl Strategy<Value = Gen> {
    (
        prop::sample::select(SettingType::ALL),
        prop::collection::btree_set("[a-z][a-z0-9-]{0,5}", 1..=4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(kind, options, required, has_default)| {
            let options: Vec<String> = options.into_iter().collect();
            let with_default = has_default || (required && required_has_default);
            valid_value(kind, &options).prop_map(move |default| Gen {
                kind,
                required,
                default: with_default.then_some(default),
                options: options.clone(),
            })
        })
}

fn schema_of(required_has_default: bool) -> impl Strategy<Value = Vec<Gen>> {
    prop::collection::vec(setting(required_has_default), 1..6)
}

/// For each setting of `gens`: a valid value, whether it is present, and whether it is
/// `null` instead (see [`values_of`]).
fn entries(gens: &[Gen]) -> impl Strategy<Value = Vec<(Value, bool, bool)>> + use<> {
    gens.iter()
        .map(|g| {
            (
                valid_value(g.kind, &g.options),
                any::<bool>(),
                any::<bool>(),
            )
        })
        .collect::<Vec<_>>()
}

/// The map [`entries`] describe; `null` is honoured only for settings that are not
/// `required`, unless `null_anywhere`.
fn values_of(gens: &[Gen], entries: &[(Value, bool, bool)], null_anywhere: bool) -> Values {
    let mut values = Values::new();
    for (i, (g, (value, present, null))) in gens.iter().zip(entries).enumerate() {
        if !present {
            continue;
        }
        let value = if *null && (null_anywhere || !g.required) {
            Value::Null
        } else {
            value.clone()
        };
        values.insert(key(i), value);
    }
    values
}

proptest! {
    #[test]
    fn valid_values_pass(
        (gens, entries) in schema_of(false).prop_flat_map(|gens| {
            let entries = entries(&gens);
            (Just(gens), entries)
        })
    ) {
        let schema = defs(&gens);
        let mut values = values_of(&gens, &entries, false);
        prop_assert_eq!(check_update(&schema, &values), Ok(()));
        // Stored, a cleared (`null`) setting is left out.
        values.retain(|_, value| !value.is_null());

        for (i, (g, (value, _, _))) in gens.iter().zip(&entries).enumerate() {
            if g.required {
                values.entry(key(i)).or_insert_with(|| value.clone());
            }
        }
        prop_assert_eq!(check_values(&schema, &values), Ok(()));
    }

    #[test]
    fn a_value_of_the_wrong_json_type_is_exactly_one_wrong_type(
        (gens, entries, index, (wrong, found)) in schema_of(false)
            .prop_flat_map(|gens| {
                let entries = entries(&gens);
                let count = gens.len();
                (Just(gens), entries, 0..count)
            })
            .prop_flat_map(|(gens, entries, index)| {
                let wrong = wrong_value(gens[index].kind);
                (Just(gens), Just(entries), Just(index), wrong)
            })
    ) {
        let schema = defs(&gens);
        let mut values = values_of(&gens, &entries, false);
        values.insert(key(index), wrong);
        let expected = vec![SettingError::WrongType {
            key: key(index),
            expected: gens[index].kind,
            found,
        }];
        prop_assert_eq!(check_update(&schema, &values), Err(expected.clone()));
        // A stored map may also miss a required setting or hold a `null`; the type
        // error is among the problems, and it is the one every read fails on when
        // nothing before it in the schema is broken.
        let errors = check_values(&schema, &values).unwrap_err();
        prop_assert!(errors.contains(&expected[0]), "{:?}", errors);
    }

    #[test]
    fn with_defaults_passes_when_every_required_setting_has_a_default(
        (gens, entries) in schema_of(true).prop_flat_map(|gens| {
            let entries = entries(&gens);
            (Just(gens), entries)
        })
    ) {
        let schema = defs(&gens);
        let mut values = values_of(&gens, &entries, true);
        values.retain(|_, value| !value.is_null());
        let all = with_defaults(&schema, &values).unwrap();
        prop_assert_eq!(check_values(&schema, &all), Ok(()));
        for (i, g) in gens.iter().enumerate() {
            if g.default.is_some() {
                prop_assert!(all.get(&key(i)).is_some_and(|v| !v.is_null()));
            }
        }
    }
}
