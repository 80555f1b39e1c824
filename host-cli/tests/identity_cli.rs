//! `curupira identity` run as a real process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli_support;

use std::process::Output;

use cli_support::run_with_stdin;

fn identity(args: &[&str], stdin: &[u8]) -> Output {
    let args: Vec<&str> = ["identity"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    run_with_stdin(&args, stdin)
}

/// The same list as `CANONICAL`, laid out freely and with members in another order.
const INPUT: &str = r#"[
  {"key": "issue", "value": "42"},
  {"value": "Crash \"now\"\n", "key": "title"}
]
"#;

/// Written by hand from SPEC section 6 and RFC 8785.
const CANONICAL: &str =
    r#"[{"key":"issue","value":"42"},{"key":"title","value":"Crash \"now\"\n"}]"#;

/// `printf '%s' "$CANONICAL" | sha256sum`
const ID: &str = "56ea91e8a67a3de064176c9503b235b46c6edad857741d87dd407228ee156472";

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn prints_the_task_id_and_a_newline() {
    let output = identity(&[], INPUT.as_bytes());
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), format!("{ID}\n"));
    assert!(output.stderr.is_empty());
}

#[test]
fn canonical_prints_exactly_the_hashed_bytes() {
    let output = identity(&["--canonical"], INPUT.as_bytes());
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), CANONICAL);
}

#[test]
fn another_order_is_another_task() {
    let swapped = r#"[{"key":"title","value":"Crash \"now\"\n"},{"key":"issue","value":"42"}]"#;
    let output = identity(&[], swapped.as_bytes());
    assert!(output.status.success());
    // printf '%s' "$swapped" | sha256sum
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "f7aaee51a17c8da67fde50ace5414ed5b68e19d850912f9c7118329d80049ee6\n"
    );
}

#[test]
fn empty_list() {
    let output = identity(&[], b"[]");
    assert!(output.status.success());
    // printf '[]' | sha256sum
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945\n"
    );
}

#[test]
fn unicode_is_kept_raw_and_controls_escaped() {
    let output = identity(
        &["--canonical"],
        "[{\"key\":\"\\u00e9\",\"value\":\"\\u0001\\u2028😀\"}]".as_bytes(),
    );
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "[{\"key\":\"é\",\"value\":\"\\u0001\u{2028}😀\"}]"
    );
}

#[test]
fn bad_input_exits_1_with_one_sentence() {
    let cases: [(&[u8], &str); 7] = [
        (
            br#"[{"key":"n","value":7}]"#,
            r#"error: element 0 has a "value" that is a number; keys and values are strings (line 1, column 21)"#,
        ),
        (
            br#"[{"key":"a","value":"b","extra":"c"}]"#,
            r#"error: element 0 has an unexpected member "extra"; only "key" and "value" are allowed (line 1, column 31)"#,
        ),
        (
            b"[{\"key\":\"a\",\n\"value\":",
            "error: the input is not valid JSON: EOF while parsing a value (line 2, column 8)",
        ),
        (
            br#"{"key":"a","value":"b"}"#,
            r#"error: the input is an object, expected an array of {"key": …, "value": …} objects (line 1, column 1)"#,
        ),
        (
            br#"[{"key":"a"}]"#,
            r#"error: element 0 has no "value" member (line 1, column 12)"#,
        ),
        (
            b"",
            "error: the input is not valid JSON: EOF while parsing a value (line 1, column 0)",
        ),
        (
            b"[{\"key\":\"\xff\",\"value\":\"b\"}]",
            "error: standard input is not UTF-8 (invalid byte at offset 9)",
        ),
    ];
    for (input, message) in cases {
        for args in [&[][..], &["--canonical"][..]] {
            let output = identity(args, input);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{}",
                String::from_utf8_lossy(input)
            );
            assert!(output.stdout.is_empty());
            assert_eq!(stderr(&output), format!("{message}\n"));
        }
    }
}

/// `curupira identity` under a 192 MiB address-space limit (`ulimit -v`, so its
/// resident size cannot pass it either: buffering the input would abort it; the debug
/// binary's own mappings take some 35 MiB beside the 64 MiB input buffer, and 100 MiB
/// left no room for the binary to grow) with
/// `prefix` then `GiB` gibibytes of `filler` streamed on stdin from a thread. Returns
/// its output and how many bytes the thread got into the pipe before it broke.
#[cfg(target_os = "linux")]
fn identity_under_192_mib(prefix: &[u8], filler: u8, gib: usize) -> (Output, usize) {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let mut child = Command::new("sh")
        .args(["-c", "ulimit -v 196608 && exec \"$0\" identity"])
        .arg(env!("CARGO_BIN_EXE_curupira"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let prefix = prefix.to_vec();
    let feeder = std::thread::spawn(move || {
        let chunk = vec![filler; 1024 * 1024];
        let mut written = 0;
        if stdin.write_all(&prefix).is_err() {
            return written;
        }
        written += prefix.len();
        for _ in 0..gib * 1024 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    let output = child.wait_with_output().unwrap();
    (output, feeder.join().unwrap())
}

/// Issue 12: 3 GB of NUL bytes used to be read whole (3.15 GB resident) though the
/// first byte decides.
#[cfg(target_os = "linux")]
#[test]
fn a_gibibyte_of_invalid_input_is_refused_at_its_first_byte() {
    let (output, written) = identity_under_192_mib(b"", 0, 1);
    assert_eq!(
        stderr(&output),
        "error: the input is not valid JSON: expected value (line 1, column 1)\n"
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        written < 16 * 1024 * 1024,
        "{written} bytes went in before the host stopped reading"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn reading_stops_at_64_mib() {
    let (output, written) = identity_under_192_mib(br#"[{"key":"a","value":""#, b'a', 1);
    assert_eq!(
        stderr(&output),
        "error: standard input is larger than 67108864 bytes (64 MiB), the most a pair list \
         may take; nothing was read past that\n"
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        written < 80 * 1024 * 1024,
        "{written} bytes went in before the host stopped reading"
    );
}
