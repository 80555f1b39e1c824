//! Any manifest the types can hold prints (`to_toml`) as a manifest that checks
//! without errors and parses back to an equal value.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_manifest::{
    Capabilities, ExtensionName, Kind, Launch, Manifest, NpmPackageName, Package, PackageSource,
    Program, ProtocolVersion, PythonPackage, Runtime, TriggerType, TriggerTypes, Version,
    check_str,
};
use proptest::prelude::*;

fn version() -> impl Strategy<Value = Version> {
    (
        0u64..=u64::MAX,
        0u64..1000,
        0u64..1000,
        proptest::option::of("[a-z][a-z0-9-]{0,6}(\\.(0|[1-9][0-9]{0,3}|[a-z-]{1,4}))?"),
        proptest::option::of("[a-zA-Z0-9-]{1,6}(\\.[a-zA-Z0-9-]{1,6})?"),
    )
        .prop_map(|(major, minor, patch, pre, build)| {
            let mut text = format!("{major}.{minor}.{patch}");
            if let Some(pre) = pre {
                text.push('-');
                text.push_str(&pre);
            }
            if let Some(build) = build {
                text.push('+');
                text.push_str(&build);
            }
            Version::parse(&text).unwrap()
        })
}

fn runtime() -> impl Strategy<Value = Runtime> {
    prop_oneof![
        proptest::sample::select(Runtime::KNOWN.to_vec()).prop_map(Runtime::from_name),
        // Any text at all, quotes, backslashes and control characters included.
        any::<String>().prop_map(|name| Runtime::from_name(&name)),
    ]
}

fn trigger_types() -> impl Strategy<Value = TriggerTypes> {
    proptest::collection::btree_set("[a-z0-9]{1,5}([._-][a-z0-9]{1,5}){0,3}", 1..5).prop_map(
        |set| {
            TriggerTypes::new(
                set.into_iter()
                    .map(|t| TriggerType::new(t).unwrap())
                    .collect(),
            )
            .unwrap()
        },
    )
}

/// Any text that is not blank: what `Program` and `PythonPackage` hold.
fn not_blank() -> impl Strategy<Value = String> {
    any::<String>().prop_filter("blank", |text| !text.trim().is_empty())
}

fn args() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(any::<String>(), 0..4)
}

fn launch() -> impl Strategy<Value = Launch> {
    let package = prop_oneof![
        "[a-z0-9][a-z0-9._~-]{0,20}",
        "@[a-z0-9][a-z0-9._-]{0,8}/[a-z0-9_-][a-z0-9._-]{0,10}",
        // Legacy names npm still serves: uppercase, special characters.
        "[A-Za-z0-9][A-Za-z0-9!()*'._-]{0,12}",
    ]
    .prop_filter_map("not an npm name", |name| NpmPackageName::new(name).ok());
    let program = || not_blank().prop_map(|p| Program::new(p).unwrap());
    let uvx = (
        not_blank().prop_map(|p| PythonPackage::new(p).unwrap()),
        program(),
        proptest::option::of(version()),
        args(),
    )
        .prop_map(|(package, executable, version, args)| Launch::Uvx {
            package,
            executable,
            version,
            args,
        });
    let npx = (
        package,
        proptest::option::of(version()),
        proptest::option::of(program()),
        args(),
    )
        .prop_map(|(package, version, bin, args)| Launch::Npx {
            package,
            version,
            bin,
            args,
        });
    let executable =
        (program(), args()).prop_map(|(program, args)| Launch::Executable { program, args });
    prop_oneof![uvx, npx, executable]
}

fn package() -> impl Strategy<Value = Package> {
    let source = prop_oneof![
        proptest::sample::select(PackageSource::KNOWN.to_vec()).prop_map(PackageSource::from_name),
        // Unknown sources are kept (with a warning), whatever their text.
        any::<String>().prop_map(|name| PackageSource::from_name(&name)),
    ];
    (source, any::<String>(), proptest::option::of(version())).prop_map(
        |(source, name, version)| Package {
            source,
            name,
            version,
        },
    )
}

fn manifest() -> impl Strategy<Value = Manifest> {
    (
        "[a-z0-9][a-z0-9._-]{0,40}",
        version(),
        proptest::option::of(any::<u64>()),
        runtime(),
        trigger_types(),
        launch(),
        proptest::option::of(package()),
        args(),
    )
        .prop_map(
            |(name, version, minor, runtime, trigger_types, launch, package, permissions)| {
                Manifest {
                    name: ExtensionName::new(name).unwrap(),
                    version,
                    protocol_version: ProtocolVersion::new(2, minor),
                    runtime,
                    kind: Kind::Trigger,
                    trigger_types,
                    launch,
                    package,
                    capabilities: Capabilities { permissions },
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn to_toml_round_trips(manifest in manifest()) {
        let printed = manifest.to_toml();
        let checked = check_str(&printed, "printed.toml");
        prop_assert_eq!(checked.report.errors(), 0, "{}\n{}", printed, checked.report.render_human(false));
        prop_assert_eq!(checked.manifest.as_ref(), Some(&manifest), "{}", printed);
    }
}

#[test]
fn printed_layout_follows_the_spec_order() {
    let manifest: Manifest = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus/valid/seed-example.toml"),
    )
    .unwrap()
    .parse()
    .unwrap();
    assert_eq!(
        manifest.to_toml(),
        "manifest_version = 1\n\
         name = \"acme-curupira-ext\"\n\
         version = \"1.2.0\"\n\
         protocol_version = 2\n\
         runtime = \"node\"\n\
         kind = \"trigger\"\n\
         trigger_types = [\"github-issue\"]\n\
         \n\
         [launch]\n\
         type = \"npx\"\n\
         package = \"@acme/curupira-ext\"\n\
         version = \"1.2.0\"\n"
    );
}

#[test]
fn a_protocol_minor_prints_as_a_string() {
    let mut manifest: Manifest = include_str!("corpus/valid/seed-example.toml")
        .parse()
        .unwrap();
    manifest.protocol_version = ProtocolVersion::new(2, Some(7));
    manifest.launch = Launch::Executable {
        program: Program::new("./bin/x").unwrap(),
        args: vec!["a b".to_owned()],
    };
    let printed = manifest.to_toml();
    assert!(
        printed.contains("protocol_version = \"2.7\"\n"),
        "{printed}"
    );
    assert!(
        printed.ends_with(
            "[launch]\ntype = \"executable\"\nprogram = \"./bin/x\"\nargs = [\"a b\"]\n"
        ),
        "{printed}"
    );
}

#[test]
fn every_table_prints_in_the_reference_hosts_order() {
    let manifest: Manifest = include_str!("corpus/valid/uvx-launch.toml")
        .parse()
        .unwrap();
    let mut manifest = Manifest {
        capabilities: Capabilities {
            permissions: vec!["network".to_owned()],
        },
        ..manifest
    };
    assert_eq!(
        manifest.to_toml(),
        "manifest_version = 1\n\
         name = \"acme-issues\"\n\
         version = \"0.1.0\"\n\
         protocol_version = 2\n\
         runtime = \"python\"\n\
         kind = \"trigger\"\n\
         trigger_types = [\"github-issue\", \"github-pull-request\"]\n\
         \n\
         [launch]\n\
         type = \"uvx\"\n\
         package = \"acme-issues\"\n\
         version = \"0.1.0\"\n\
         executable = \"acme-issues-ext\"\n\
         args = [\"--quiet\"]\n\
         \n\
         [package]\n\
         source = \"pip\"\n\
         name = \"acme-issues\"\n\
         version = \"0.1.0\"\n\
         \n\
         [capabilities]\n\
         permissions = [\"network\"]\n"
    );
    manifest.launch = Launch::Npx {
        package: NpmPackageName::new("@acme/tools").unwrap(),
        version: None,
        bin: Some(Program::new("acme-queue").unwrap()),
        args: Vec::new(),
    };
    manifest.package = None;
    manifest.capabilities = Capabilities::default();
    assert!(
        manifest.to_toml().ends_with(
            "\n[launch]\ntype = \"npx\"\npackage = \"@acme/tools\"\nbin = \"acme-queue\"\n"
        ),
        "{}",
        manifest.to_toml()
    );
}
