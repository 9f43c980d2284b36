//! `-U`: matches that may span lines, searched over the whole buffer on
//! one thread (a match may cross any cut), with ripgrep 13's rules:
//!
//! * a match selects every line it spans (a match ending in `\n` ends on
//!   that `\n`'s line); matches sharing a line form one [`Block`], one
//!   printed record (`--json`), and `-m` counts blocks. When the pattern
//!   can match a `\n` (rg then runs its multiline searcher) a match whose
//!   first line follows a block's last line joins that block too; when it
//!   cannot (rg searches line by line) it does not;
//! * after a match the search resumes at its end (`abc foo\nbar foo\nbar`
//!   holds two matches of `foo\nbar`);
//! * a count (`-c`) counts matches, not lines;
//! * under `-v` the search resumes after the last line of each match, and
//!   the lines no match touched are selected.

use std::ops::Range;

use super::doc_regex::DocRegex;
use super::{complement, count_lines, count_newlines};
use crate::cancel::Cancel;
use crate::error::Error;
use crate::results::{DocHits, Want};

/// Lines selected together: `lines` runs from the first line's start to
/// the end of the last one (its `\n` excluded); `matches` are the matches
/// in it, as absolute byte ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The lines' bytes in the buffer, without the last `\n`.
    pub lines: Range<usize>,
    /// The matches, left to right.
    pub matches: Vec<Range<usize>>,
}

/// The lines `m` spans: from its line's start to the end of the line of
/// its last byte. `None` for an empty match after the last `\n` (no line).
fn span(hay: &[u8], m: &Range<usize>) -> Option<Range<usize>> {
    if m.start == hay.len() && hay.last().is_none_or(|&b| b == b'\n') {
        return None;
    }
    let ls = memchr::memrchr(b'\n', &hay[..m.start]).map_or(0, |i| i + 1);
    let last = if m.end > m.start { m.end - 1 } else { m.start };
    let le = memchr::memchr(b'\n', &hay[last.min(hay.len())..]).map_or(hay.len(), |i| last + i);
    Some(ls..le)
}

/// The matches of `re` in `hay` grouped into blocks; at most `max` blocks.
pub(crate) fn blocks(re: &DocRegex, hay: &[u8], max: Option<u64>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    // rg's multiline searcher (a pattern that can match `\n`) joins a
    // match starting on the line after a block to the block.
    let join = usize::from(re.can_match_newline());
    for m in re.find_iter(hay) {
        let Some(lines) = span(hay, &m) else {
            continue;
        };
        match out.last_mut() {
            Some(b) if lines.start <= b.lines.end + join => {
                b.lines.end = b.lines.end.max(lines.end);
                b.matches.push(m);
            }
            _ => {
                if max.is_some_and(|n| out.len() as u64 >= n) {
                    break;
                }
                out.push(Block {
                    lines,
                    matches: vec![m],
                });
            }
        }
    }
    out
}

/// The line starts in `hay[r]` (`r.start` a line start).
fn line_starts(hay: &[u8], r: &Range<usize>, out: &mut Vec<u64>) {
    out.push(r.start as u64);
    out.extend(memchr::memchr_iter(b'\n', &hay[r.clone()]).map(|i| (r.start + i + 1) as u64));
}

/// Searches one document of a multiline query (`re` its regex).
pub(crate) fn search_doc(
    re: &DocRegex,
    hay: &[u8],
    invert: bool,
    want: Want,
    max_count: Option<u64>,
    cancel: &Cancel,
) -> Result<DocHits, Error> {
    cancel.check()?;
    if !invert {
        let bs = blocks(re, hay, max_count);
        cancel.check()?;
        if want == Want::Count {
            let count = bs.iter().map(|b| b.matches.len() as u64).sum();
            return Ok(DocHits {
                count,
                lines: Vec::new(),
                starts: Vec::new(),
            });
        }
        let mut starts = Vec::new();
        for b in &bs {
            line_starts(hay, &b.lines, &mut starts);
        }
        let mut lines = Vec::with_capacity(starts.len());
        let (mut at, mut id) = (0usize, 0u64);
        for &s in &starts {
            id += count_newlines(&hay[at..s as usize]);
            at = s as usize;
            lines.push(id);
        }
        return Ok(DocHits {
            count: starts.len() as u64,
            lines,
            starts,
        });
    }
    // -v: the lines no match touches, searching on after each match's
    // last line.
    let mut touched = Vec::new();
    let mut pos = 0;
    while pos < hay.len() {
        let Some(m) = re.find_at(hay, pos) else {
            break;
        };
        let Some(lines) = span(hay, &m) else {
            break;
        };
        line_starts(hay, &lines, &mut touched);
        pos = lines.end + 1;
    }
    cancel.check()?;
    let mut ids = Vec::with_capacity(touched.len());
    let (mut at, mut id) = (0usize, 0u64);
    for &s in &touched {
        id += count_newlines(&hay[at..s as usize]);
        at = s as usize;
        ids.push(id);
    }
    let mut ids = complement(&ids, count_lines(hay));
    if let Some(m) = max_count {
        ids.truncate(m.min(usize::MAX as u64) as usize);
    }
    Ok(DocHits {
        count: ids.len() as u64,
        lines: if want == Want::Count { Vec::new() } else { ids },
        starts: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> DocRegex {
        DocRegex::rust(p, false, false, false).unwrap()
    }

    #[test]
    fn blocks_merge_matches_sharing_a_line() {
        let hay = b"foo bar\nbaz qux\nfoo\nbar end\nzzz\nabc foo\nbar foo\nbar\n";
        let bs = blocks(&re("foo\\nbar"), hay, None);
        assert_eq!(bs.len(), 2);
        assert_eq!(&hay[bs[0].lines.clone()], b"foo\nbar end");
        assert_eq!(&hay[bs[1].lines.clone()], b"abc foo\nbar foo\nbar");
        assert_eq!(bs[1].matches.len(), 2);
        let one = blocks(&re("foo\\nbar"), hay, Some(1));
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn a_match_ending_in_a_newline_ends_on_its_line() {
        let hay = b"ab\ncd\n";
        let bs = blocks(&re("b\\n"), hay, None);
        assert_eq!(bs.len(), 1);
        assert_eq!(&hay[bs[0].lines.clone()], b"ab");
        // An empty match after the last newline is on no line.
        assert!(span(hay, &(6..6)).is_none());
    }

    /// rg 13: a pattern that can match `\n` (a class or literal holding
    /// it, or a line anchor) joins a match on the line after a block to
    /// the block; one that cannot keeps each line's matches apart.
    #[test]
    fn adjacent_lines_join_when_the_pattern_can_match_a_newline() {
        let hay = b"a\na\nb\na\n";
        let all: &[u8] = b"a\na\nb\na";
        for (p, joins, first) in [
            ("a\\n", true, &b"a\na"[..]),
            ("a\\n?", true, b"a\na"),
            // These match the `\n` after `b` too: one block.
            ("[^b]", true, all),
            ("\\s", true, all),
            ("^a", true, b"a\na"),
            ("a$", true, b"a\na"),
            ("(?s)a.", true, b"a\na"),
            ("a", false, b"a"),
            ("\\ba", false, b"a"),
            ("(?i)A", false, b"a"),
            ("[a-z]", false, b"a"),
            ("\\Aa", false, b"a"),
        ] {
            assert_eq!(re(p).can_match_newline(), joins, "{p}");
            let bs = blocks(&re(p), hay, None);
            assert_eq!(&hay[bs[0].lines.clone()], first, "{p}");
        }
        // Lines apart stay apart.
        let hay = b"foo\nbar\nx\nfoo\nbar\nfoo\nbar";
        let bs = blocks(&re("foo\\nbar"), hay, None);
        assert_eq!(bs.len(), 2);
        assert_eq!(&hay[bs[1].lines.clone()], b"foo\nbar\nfoo\nbar");
    }
}
