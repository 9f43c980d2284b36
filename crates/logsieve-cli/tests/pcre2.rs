//! `-P/--pcre2`. Built without the `pcre2` feature (the default): a clear
//! error. With it (`cargo test --workspace --release --features
//! logsieve-cli/pcre2 --test pcre2`, a line of `.ci/run`): look-around,
//! backreferences, `-i`, `-w`, `-x`, `-o`, `-c`, `--json` and `-U -P`
//! against `rg -P` byte for byte (skipped, loudly, where rg has no PCRE2).

mod common;

use common::{search, tmp, write};

fn fixture() -> tempfile::TempDir {
    let d = tmp();
    write(
        d.path(),
        "a.txt",
        b"foo bar\nFoo baz\nnothing\nfoo foo\nabba\nxx yy\nfoo\nbar end\n\xff foo\n",
    );
    d
}

#[cfg(not(feature = "pcre2"))]
#[test]
fn pcre2_without_the_feature_says_how_to_get_it() {
    let d = fixture();
    let o = search(d.path(), &["-P", "foo", "a.txt"]);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("built without PCRE2"), "{}", o.stderr);
    assert!(o.stderr.contains("--features pcre2"), "{}", o.stderr);
    assert!(o.stdout.is_empty());
}

#[cfg(feature = "pcre2")]
fn rg_has_pcre2() -> bool {
    common::have("rg")
        && std::process::Command::new("rg")
            .arg("--pcre2-version")
            .output()
            .is_ok_and(|o| o.status.success())
}

#[cfg(feature = "pcre2")]
#[test]
fn pcre2_matches_rg_p() {
    let d = fixture();
    // Without rg: PCRE2's own semantics, asserted.
    let o = search(d.path(), &["-P", "-n", r"foo(?= bar)", "a.txt"]);
    assert_eq!(o.out(), "1:foo bar\n");
    let o = search(d.path(), &["-P", "-o", r"(\w)\1", "a.txt"]);
    assert_eq!(o.out(), "oo\noo\noo\noo\nbb\nxx\nyy\noo\noo\n");
    if !rg_has_pcre2() {
        eprintln!("rg with PCRE2 not installed: -P not compared");
        return;
    }
    for args in [
        &["-P", r"foo(?= bar)", "a.txt"][..],
        &["-P", "-n", r"(?<=foo )foo", "a.txt"],
        &["-P", "-n", r"(?<!foo )ba", "a.txt"],
        &["-P", "-o", r"(\w)\1", "a.txt"],
        &["-P", "-c", r"(\w)\1", "a.txt"],
        &["-P", "-i", "-n", r"^foo\b", "a.txt"],
        &["-P", "-w", "-n", "foo", "a.txt"],
        &["-P", "-x", "-n", "foo", "a.txt"],
        &["-P", "-v", "-n", r"o{2}", "a.txt"],
        &["-P", "-o", "-b", r"\w+(?=\s)", "a.txt"],
        &["-P", "-U", "-n", r"foo\nbar", "a.txt"],
        &["-P", "-n", r"\bnothing\b", "a.txt"],
    ] {
        common::same_as_rg(d.path(), args);
    }
    let strip = |o: &common::Out| -> Vec<serde_json::Value> {
        o.lines()
            .iter()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["type"] == "match")
            .map(|mut v| {
                for s in v["data"]["submatches"].as_array_mut().unwrap() {
                    s.as_object_mut().unwrap().remove("patterns");
                }
                v
            })
            .collect()
    };
    // rg -P hands PCRE2 invalid UTF-8 transcoded (U+FFFD), so its --json
    // offsets on such a line count the replacement's 3 bytes; ours are
    // the file's bytes (as every other record). Compared on valid text.
    write(
        d.path(),
        "u.txt",
        b"foo bar\nFoo baz\nnothing\nfoo foo\nabba\nxx yy\nfoo\nbar end\n",
    );
    let args = ["-P", "--json", r"(?<=f)oo", "u.txt"];
    assert_eq!(
        strip(&search(d.path(), &args)),
        strip(&common::rg(d.path(), &args))
    );
    // CPU only: the GPU is refused with the reason.
    let o = search(d.path(), &["-P", "--backend", "gpu", "foo", "a.txt"]);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("-P/--pcre2"), "{}", o.stderr);
}
