//! `-r/--replace`: each match of a line replaced by a template with `$1`,
//! `${name}` capture groups, as ripgrep (the `regex` crate's `expand`).
//!
//! The matches are the query's own ([`Query::find_iter_line`]), so `-w`,
//! `-x` and every backend agree on *where*; the capture regex only names the
//! groups inside each match. Patterns are joined with `|` as rg joins them,
//! so group numbers run on across patterns as in rg; fixed strings have no
//! group but `$0`.

use regex::bytes::{Regex, RegexBuilder};

use super::{CaseMode, Query, QueryKind, Syntax};

impl Query {
    /// `line` with each match replaced by `replacement` expanded against the
    /// match's capture groups (`$0` is the whole match; an unknown group is
    /// empty).
    pub fn replace_line(&self, line: &[u8], replacement: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(line.len());
        let mut at = 0;
        for m in self.find_iter_line(line) {
            out.extend_from_slice(&line[at..m.start]);
            out.extend(self.expand_match(line, m.clone(), replacement));
            at = m.end;
        }
        out.extend_from_slice(&line[at..]);
        out
    }

    /// `replacement` expanded for the match `line[m]`.
    pub fn expand_match(
        &self,
        line: &[u8],
        m: std::ops::Range<usize>,
        replacement: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let re = self.replacer.get_or_init(|| capture_regex(self));
        if let Some(re) = re {
            if let Some(c) = re.captures_at(&line[..m.end], m.start) {
                if c.get(0).is_some_and(|g| g.range() == m) {
                    c.expand(replacement, &mut out);
                    return out;
                }
            }
        }
        // No capture regex (wildcard, fuzzy) or it disagrees: the match
        // alone is group 0.
        let whole = Regex::new("(?s-u)^.*$").expect("a valid regex");
        let c = whole.captures(&line[m]).expect("matches every byte string");
        c.expand(replacement, &mut out);
        out
    }
}

fn capture_regex(q: &Query) -> Option<Regex> {
    let alts: Vec<String> = match (q.syntax(), q.kind()) {
        (Syntax::Regex, _) => q
            .patterns()
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect(),
        (_, QueryKind::Literal) => q
            .literals()?
            .iter()
            .map(|l| std::str::from_utf8(l).ok().map(regex_syntax::escape))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    let body = alts
        .iter()
        .map(|p| format!("(?:{p})"))
        .collect::<Vec<_>>()
        .join("|");
    RegexBuilder::new(&body)
        .multi_line(true)
        .case_insensitive(q.case() != CaseMode::Sensitive)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use crate::{QueryBuilder, Syntax};

    #[test]
    fn groups_by_number_and_name() {
        let q = QueryBuilder::new().build(&[r"(o+) (\w+)"]).unwrap();
        assert_eq!(q.replace_line(b"foo bar", b"[$2|$1]"), b"f[bar|oo]");
        // `$1Y` names the group `1Y`, which does not exist (as in rg).
        assert_eq!(q.replace_line(b"foo bar", b"X$1Y"), b"fX");
        let q = QueryBuilder::new().build(&[r"(?P<w>f\w+)"]).unwrap();
        assert_eq!(q.replace_line(b"foo fab", b"${w}!"), b"foo! fab!");
    }

    #[test]
    fn fixed_strings_have_group_zero_only() {
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(true)
            .build(&["a.b"])
            .unwrap();
        assert_eq!(q.replace_line(b"xA.By a.b", b"<$0$1>"), b"x<A.B>y <a.b>");
    }
}
