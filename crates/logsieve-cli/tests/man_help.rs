//! `logsieve man` (a page for every subcommand, `--dir`) and the layout
//! of `search -h` / `search --help` (short and long texts, headings).

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{exe, run_limited, tmp, Out};

fn logsieve(args: &[&str]) -> Out {
    let d = tmp();
    run_limited(exe(), d.path(), args, Duration::from_secs(20))
}

/// The subcommands the top page's SUBCOMMANDS section points to, as
/// `logsieve-NAME(1)` (roff writes `-` as `\-`).
fn listed_subcommands(top: &str) -> Vec<String> {
    let section = top
        .split(".SH SUBCOMMANDS")
        .nth(1)
        .expect("the top page has a SUBCOMMANDS section");
    let section = section.split("\n.SH ").next().unwrap();
    let mut names = Vec::new();
    for line in section.lines() {
        let line = line.replace("\\-", "-");
        if let Some(rest) = line.strip_prefix("logsieve-") {
            if let Some(name) = rest.strip_suffix("(1)") {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// REGRESSION: the top page pointed to `logsieve-search(1)` and the
/// others, which nothing printed.
#[test]
fn man_has_a_page_for_every_subcommand_it_lists() {
    let top = logsieve(&["man"]);
    assert_eq!(top.code, Some(0), "{}", top.stderr);
    let top = top.out();
    assert!(top.contains(".TH logsieve 1"), "{top}");
    let names = listed_subcommands(&top);
    for want in ["search", "stats", "serve", "gpu-info", "man"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    // No page for clap's `help`: the pages are the help.
    assert!(!names.iter().any(|n| n == "help"), "{names:?}");
    for name in &names {
        let o = logsieve(&["man", name]);
        assert_eq!(o.code, Some(0), "man {name}: {}", o.stderr);
        let page = o.out();
        assert!(
            page.contains(&format!(".TH logsieve-{name} 1")),
            "man {name}: {page}"
        );
        // The synopsis names the command as typed.
        let typed = format!("logsieve {}", name.replace('-', "\\-"));
        assert!(page.contains(&typed), "man {name}: no {typed:?}");
        assert_ne!(page, top, "man {name} printed the top page");
    }
    // The page of `search` documents its flags, under their headings.
    let search = logsieve(&["man", "search"]).out();
    for s in [
        "\\-\\-fixed\\-strings",
        "\\-\\-histogram",
        ".SH \"OUTPUT OPTIONS\"",
    ] {
        assert!(search.contains(s), "man search lacks {s}");
    }
    // `logsieve-search` (the page's own name) is accepted too.
    assert_eq!(logsieve(&["man", "logsieve-search"]).out(), search);
}

#[test]
fn man_unknown_subcommand_exits_2() {
    let o = logsieve(&["man", "no-such-command"]);
    assert_eq!(o.code, Some(2));
    assert!(o.stdout.is_empty());
    assert!(o.stderr.contains("no-such-command"), "{}", o.stderr);
    assert!(
        o.stderr.contains("search"),
        "names the known ones: {}",
        o.stderr
    );
}

#[test]
fn man_dir_writes_one_page_per_subcommand() {
    // Every page down the tree: a subcommand's page lists its own
    // subcommands (`cluster` lists `cluster-worker`) the same way.
    let mut names = Vec::new();
    let mut todo = listed_subcommands(&logsieve(&["man"]).out());
    while let Some(name) = todo.pop() {
        let page = logsieve(&["man", &name]).out();
        if page.contains(".SH SUBCOMMANDS") {
            todo.extend(listed_subcommands(&page));
        }
        names.push(name);
    }
    assert!(
        names.iter().any(|n| n.contains('-')),
        "nested pages are listed: {names:?}"
    );
    let d = tmp();
    let dir = d.path().join("man1");
    let o = logsieve(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.is_empty());
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut want: BTreeSet<String> = names.iter().map(|n| format!("logsieve-{n}.1")).collect();
    want.insert("logsieve.1".to_string());
    assert_eq!(files, want);
    // Each file is the page `logsieve man NAME` prints.
    for name in &names {
        let file = std::fs::read_to_string(dir.join(format!("logsieve-{name}.1"))).unwrap();
        assert_eq!(file, logsieve(&["man", name]).out(), "{name}");
    }
    let top = std::fs::read_to_string(dir.join("logsieve.1")).unwrap();
    assert_eq!(top, logsieve(&["man"]).out());
    // With a subcommand: its page (and those below it) only.
    let one = d.path().join("one");
    let o = logsieve(&["man", "stats", "--dir", one.to_str().unwrap()]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let files: Vec<_> = std::fs::read_dir(&one).unwrap().collect();
    assert_eq!(files.len(), 1);
    assert!(one.join("logsieve-stats.1").is_file());
}

/// `search --help`'s headings, in the order they must appear.
const HEADINGS: &[&str] = &[
    "Input options:",
    "Search options:",
    "Filter options:",
    "Output options:",
    "Output modes:",
    "Time window and stats options:",
    "GPU and engine options:",
    "Other behaviors:",
];

/// The heading (a line ending in `:` at the left margin) above each flag.
fn heading_of<'a>(help: &'a str, flag: &str) -> &'a str {
    let mut heading = "";
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            heading = line;
        }
        // A flag's own line: indented by 2 or 6, not a help text's 10.
        let text = line.trim_start();
        let indent = line.len() - text.len();
        let spec = text.split("  ").next().unwrap_or_default();
        if (1..10).contains(&indent) && spec.split([' ', ',']).any(|w| w == flag) {
            return heading;
        }
    }
    panic!("{flag} not in the help");
}

/// REGRESSION: `search --help` was one flat list of every flag, the GPU
/// options first, and `-h` printed the same.
#[test]
fn search_help_is_grouped_and_short_help_is_short() {
    let short = logsieve(&["search", "-h"]);
    let long = logsieve(&["search", "--help"]);
    assert_eq!((short.code, long.code), (Some(0), Some(0)));
    let (short, long) = (short.out(), long.out());
    let (ns, nl) = (short.lines().count(), long.lines().count());
    assert!(2 * ns < nl, "-h {ns} lines, --help {nl}");
    // -h: every flag's help on the flag's own line.
    for line in short.lines() {
        assert!(
            !line.starts_with("          "),
            "-h wraps a flag's help: {line:?}"
        );
    }
    // --help has the long texts -h leaves out.
    assert!(long.contains("A link loop is reported and skipped"));
    assert!(!short.contains("A link loop is reported and skipped"));
    for help in [&short, &long] {
        let at: Vec<usize> = HEADINGS
            .iter()
            .map(|h| {
                help.lines()
                    .position(|l| l == *h)
                    .unwrap_or_else(|| panic!("no heading {h:?}"))
            })
            .collect();
        assert!(
            at.windows(2).all(|w| w[0] < w[1]),
            "headings out of order: {at:?}"
        );
        for (flag, heading) in [
            ("--regexp", "Input options:"),
            ("--fixed-strings", "Search options:"),
            ("--glob", "Filter options:"),
            ("--line-number", "Output options:"),
            ("--include-zero", "Output options:"),
            ("--count", "Output modes:"),
            ("--json", "Output modes:"),
            ("--histogram", "Time window and stats options:"),
            ("--gpus", "GPU and engine options:"),
            ("--backend", "GPU and engine options:"),
            ("--threads", "GPU and engine options:"),
            ("--server", "Other behaviors:"),
        ] {
            assert_eq!(heading_of(help, flag), heading, "{flag}");
        }
    }
    // --help's long texts fit 80 columns (clap indents them by 10).
    for line in long.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
}

#[test]
fn stats_help_keeps_its_groups_in_order() {
    let help = logsieve(&["stats", "--help"]).out();
    let at = |h: &str| help.lines().position(|l| l == h).expect(h);
    assert!(at("Input options:") < at("Search options:"));
    assert!(at("Search options:") < at("Filter options:"));
    assert!(at("Time window and stats options:") < at("GPU and engine options:"));
    // The flags `stats` words for counting keep their group.
    assert_eq!(heading_of(&help, "--regexp"), "Input options:");
    assert_eq!(
        heading_of(&help, "--include-zero"),
        "Time window and stats options:"
    );
    assert!(help.contains("Only lines matching PATTERN"));
}
