//! Exit codes (grep's and ripgrep's) and the one way errors reach stderr.

use std::io::Write;

/// A line was selected (or a pattern found).
pub const EXIT_MATCH: i32 = 0;
/// Nothing was selected.
pub const EXIT_NO_MATCH: i32 = 1;
/// An error, even when something was selected (usage errors included).
pub const EXIT_ERROR: i32 = 2;

/// Writes `logsieve: MSG` on stderr.
pub fn err(msg: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "logsieve: {msg}");
}
