//! The command line before clap sees it: `logsieve PATTERN [PATH]...` means
//! `logsieve search PATTERN [PATH]...` (as `rg PATTERN`), and a search
//! reads its defaults file first (`LOGSIEVE_CONFIG_PATH`, ripgrep's
//! `RIPGREP_CONFIG_PATH` rules).

use std::ffi::{OsStr, OsString};
use std::path::Path;

use clap::CommandFactory;

use super::Cli;

/// The environment variable naming the defaults file.
pub const CONFIG_ENV: &str = "LOGSIEVE_CONFIG_PATH";

/// `args` (program name first) with `search` inserted when the first
/// argument is neither a subcommand nor `--help`/`--version`, and, for a
/// search without `--no-config`, the defaults file's arguments right after
/// `search` (so that the command line overrides them: the last flag wins).
/// Returns the arguments and the errors reading the defaults file.
pub fn expand(args: Vec<OsString>) -> (Vec<OsString>, Option<String>) {
    let mut args = args;
    if args.len() < 2 {
        return (args, None);
    }
    let first = args[1].clone();
    let cmd = Cli::command();
    let is_subcommand = first == "help"
        || cmd
            .get_subcommands()
            .any(|s| s.get_name() == first || s.get_all_aliases().any(|a| a == first));
    let top_level = ["-h", "--help", "-V", "--version"]
        .iter()
        .any(|f| first == *f);
    if top_level || (is_subcommand && first != "search") {
        return (args, None);
    }
    if !is_subcommand {
        args.insert(1, OsString::from("search"));
    }
    // `--no-config` anywhere (even as a pattern, as rg reads it) disables
    // the file.
    if args[2..].iter().any(|a| a == "--no-config") {
        return (args, None);
    }
    let Some(path) = std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) else {
        return (args, None);
    };
    match read_config(Path::new(&path)) {
        Ok(extra) => {
            args.splice(2..2, extra);
            (args, None)
        }
        Err(e) => (args, Some(format!("{}: {e}", Path::new(&path).display()))),
    }
}

/// ripgrep's config format: one argument per line, surrounding whitespace
/// trimmed, blank lines and lines starting with `#` ignored.
fn read_config(path: &Path) -> std::io::Result<Vec<OsString>> {
    let data = std::fs::read(path)?;
    Ok(parse_config(&data))
}

fn parse_config(data: &[u8]) -> Vec<OsString> {
    data.split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .map(bytes_to_os)
        .collect()
}

fn bytes_to_os(b: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(b).to_os_string()
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(b).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn config_lines() {
        let got = parse_config(b"# comment\n--smart-case\n\n  -g=*.log  \r\n#-i\n");
        assert_eq!(got, os(&["--smart-case", "-g=*.log"]));
    }

    #[test]
    fn default_subcommand() {
        let (a, _) = expand(os(&["logsieve", "foo", "x.log"]));
        assert_eq!(a, os(&["logsieve", "search", "foo", "x.log"]));
        let (a, _) = expand(os(&["logsieve", "-i", "foo"]));
        assert_eq!(a, os(&["logsieve", "search", "-i", "foo"]));
        let (a, _) = expand(os(&["logsieve", "gen", "--lines", "3"]));
        assert_eq!(a, os(&["logsieve", "gen", "--lines", "3"]));
        let (a, _) = expand(os(&["logsieve", "--help"]));
        assert_eq!(a, os(&["logsieve", "--help"]));
        let (a, _) = expand(os(&["logsieve", "search", "gen", "--no-config"]));
        assert_eq!(a, os(&["logsieve", "search", "gen", "--no-config"]));
    }
}
