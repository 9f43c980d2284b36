//! `logsieve completions SHELL` and `logsieve man`: generated from the clap
//! definitions, so they never drift from the flags.

use std::io::{self, Write};
use std::path::Path;

use clap::CommandFactory;

use crate::exit::{err, EXIT_ERROR};
use crate::flags::{Cli, CompletionsArgs, ManArgs};

/// Prints the completion script for the shell; returns the exit code.
pub fn completions(a: &CompletionsArgs) -> i32 {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "logsieve", &mut out);
    write_out(&out)
}

/// `logsieve man [SUBCOMMAND]... [--dir DIR]`: prints one page (roff), the
/// top page or a subcommand's, or writes that page and those of the
/// subcommands below it into DIR; returns the exit code.
pub fn man(a: &ManArgs) -> i32 {
    let pages = man_pages();
    let Some(at) = find_page(&pages, &a.name) else {
        let names: Vec<&str> = pages[1..].iter().map(|p| p.sub_name()).collect();
        err(format!(
            "man: no subcommand {:?} (one of: {})",
            a.name.join(" "),
            names.join(", ")
        ));
        return EXIT_ERROR;
    };
    match &a.dir {
        None => {
            let mut out = Vec::new();
            if let Err(e) = page(&pages[at].cmd).render(&mut out) {
                err(e);
                return EXIT_ERROR;
            }
            write_out(&out)
        }
        Some(dir) => {
            let root = pages[at].file.clone();
            // The page asked for and every page below it.
            let under = pages
                .iter()
                .filter(|p| p.file == root || p.file.starts_with(&format!("{root}-")));
            for p in under {
                if let Err(e) = write_page(p, dir) {
                    err(format!("{}: {e}", dir.join(&p.file).display()));
                    return EXIT_ERROR;
                }
            }
            0
        }
    }
}

/// One man page: the command it documents and its name (`logsieve`,
/// `logsieve-search`, and so on down nested subcommands).
struct Page {
    cmd: clap::Command,
    file: String,
}

impl Page {
    /// The name `logsieve man` takes for it: `search`, `a-b` for `a b`.
    fn sub_name(&self) -> &str {
        self.file
            .strip_prefix("logsieve-")
            .unwrap_or(self.file.as_str())
    }
}

/// Every page, the top one first, then each subcommand's (depth first, in
/// the order `--help` lists them). The `help` subcommand has none: the
/// pages replace it.
fn man_pages() -> Vec<Page> {
    fn walk(cmd: &clap::Command, out: &mut Vec<Page>) {
        out.push(Page {
            cmd: cmd.clone(),
            file: cmd
                .get_display_name()
                .unwrap_or_else(|| cmd.get_name())
                .to_string(),
        });
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out);
        }
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Building names the subcommands `logsieve-search` (the page) and
    // `logsieve search` (the synopsis).
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out);
    out
}

/// The page `names` asks for: none is the top page; `search`, or a nested
/// subcommand as `a b`, `a-b` or `logsieve-a-b`.
fn find_page(pages: &[Page], names: &[String]) -> Option<usize> {
    if names.is_empty() {
        return Some(0);
    }
    let want = names.join("-");
    pages
        .iter()
        .position(|p| p.sub_name() == want || p.file == want)
}

fn page(cmd: &clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd.clone()).source(format!("logsieve {}", env!("CARGO_PKG_VERSION")))
}

fn write_page(p: &Page, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    page(&p.cmd).generate_to(dir).map(|_| ())
}

fn write_out(bytes: &[u8]) -> i32 {
    match io::stdout().lock().write_all(bytes) {
        Ok(()) => 0,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}
