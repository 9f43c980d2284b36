//! Fields extracted from each line: the built-in `level` and `host`, and
//! user fields `NAME=REGEX`.

use regex::bytes::Regex;

use super::time::{Stamp, TimeFormat};
use crate::error::Error;

/// The level words, in the canonical (upper) case they are stored in:
/// log4j / logback / Python (`TRACE` … `FATAL`, `CRITICAL`), syslog's
/// severities (`NOTICE`, `ERR`, `CRIT`, `ALERT`, `EMERG`),
/// java.util.logging's and BGL's `SEVERE`, logcat's `VERBOSE`.
pub const LEVELS: [&str; 15] = [
    "TRACE", "VERBOSE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "ERR", "SEVERE",
    "CRIT", "CRITICAL", "ALERT", "FATAL", "EMERG",
];

/// What a field extracts.
#[derive(Clone, Debug)]
pub enum FieldKind {
    /// The first level word of the line (see [`level_of`]).
    Level,
    /// The host of a syslog-style line (see [`host_of`]).
    Host,
    /// The first capture group of a regex, or its whole match when it has
    /// no group.
    Regex(Regex),
}

/// A named field.
#[derive(Clone, Debug)]
pub struct FieldSpec {
    /// The name used by `--count-by`.
    pub name: String,
    /// How values are found.
    pub kind: FieldKind,
}

impl FieldSpec {
    /// The built-in `level` field.
    pub fn level() -> FieldSpec {
        FieldSpec {
            name: "level".to_string(),
            kind: FieldKind::Level,
        }
    }

    /// The built-in `host` field.
    pub fn host() -> FieldSpec {
        FieldSpec {
            name: "host".to_string(),
            kind: FieldKind::Host,
        }
    }

    /// The built-in field called `name`, if any.
    pub fn builtin(name: &str) -> Option<FieldSpec> {
        match name {
            "level" => Some(FieldSpec::level()),
            "host" => Some(FieldSpec::host()),
            _ => None,
        }
    }

    /// The built-in `level` and `host`, then each `NAME=REGEX` of
    /// `specs` (`--field`; one named like a built-in replaces it): the
    /// columns of `serve` and `sql`.
    pub fn with_builtins(specs: &[String]) -> Result<Vec<FieldSpec>, Error> {
        let mut fields = vec![FieldSpec::level(), FieldSpec::host()];
        for spec in specs {
            let f = FieldSpec::parse(spec)?;
            fields.retain(|g| g.name != f.name);
            fields.push(f);
        }
        Ok(fields)
    }

    /// A user field from `NAME=REGEX` (`--field`).
    pub fn parse(spec: &str) -> Result<FieldSpec, Error> {
        let Some((name, re)) = spec.split_once('=') else {
            return Err(Error::query(format!(
                "--field {spec:?}: expected NAME=REGEX (e.g. user='user=(\\w+)')"
            )));
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(Error::query(format!(
                "--field {spec:?}: the name must be letters, digits, '_' or '-'"
            )));
        }
        FieldSpec::regex(name, re)
    }

    /// A user field `name` with the regex `re`.
    pub fn regex(name: &str, re: &str) -> Result<FieldSpec, Error> {
        let re = Regex::new(re).map_err(|e| Error::pattern(format!("--field {name}: {e}")))?;
        Ok(FieldSpec {
            name: name.to_string(),
            kind: FieldKind::Regex(re),
        })
    }

    /// The value of this field in `line`, whose timestamp is `stamp`.
    pub fn extract<'a>(&self, line: &'a [u8], stamp: Option<Stamp>) -> Option<&'a [u8]> {
        match &self.kind {
            FieldKind::Level => level_of(line, stamp).map(str::as_bytes),
            FieldKind::Host => host_of(line, stamp),
            FieldKind::Regex(re) => {
                if re.captures_len() > 1 {
                    re.captures(line)
                        .and_then(|c| c.get(1))
                        .map(|m| m.as_bytes())
                } else {
                    re.find(line).map(|m| m.as_bytes())
                }
            }
        }
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn level_word(w: &[u8], any_case: bool) -> Option<&'static str> {
    if !(3..=8).contains(&w.len()) {
        return None;
    }
    LEVELS.iter().copied().find(|l| {
        if any_case {
            l.as_bytes().eq_ignore_ascii_case(w)
        } else {
            l.as_bytes() == w
        }
    })
}

/// The level of a line: the first level word ([`LEVELS`]) standing as a whole word
/// (`ERROR_503` is not one). Upper case anywhere; any case when bracketed
/// (`[error]`, `<warn>`, Apache) or when it is the first word after the
/// timestamp (`Info`, Windows CBS) — lower-case `error` inside a message is
/// prose, not a level. Returned upper-cased.
pub fn level_of(line: &[u8], stamp: Option<Stamp>) -> Option<&'static str> {
    if let Some(st) = stamp.filter(|s| s.format == TimeFormat::Logcat) {
        if let Some(l) = logcat_level(&line[st.end.min(line.len())..]) {
            return Some(l);
        }
    }
    let after_ts = stamp.map(|s| {
        let mut i = s.end;
        while i < line.len() && !is_word(line[i]) {
            i += 1;
        }
        i
    });
    let n = line.len();
    let mut i = 0;
    while i < n {
        while i < n && !is_word(line[i]) {
            i += 1;
        }
        let s = i;
        while i < n && is_word(line[i]) {
            i += 1;
        }
        let w = &line[s..i];
        if w.len() < 3 || w.len() > 8 || !w[0].is_ascii_alphabetic() {
            continue;
        }
        if let Some(l) = level_word(w, false) {
            return Some(l);
        }
        let bracketed = s > 0
            && i < n
            && matches!(
                (line[s - 1], line[i]),
                (b'[', b']') | (b'<', b'>') | (b'(', b')')
            );
        if bracketed || after_ts == Some(s) {
            if let Some(l) = level_word(w, true) {
                return Some(l);
            }
        }
    }
    None
}

/// Android logcat's priority letter, after the time, the pid and the tid
/// (`03-17 16:13:38.811  1702  2395 D WindowManager: ...`): `V`, `D`, `I`,
/// `W`, `E`, `F` and `A` (assert), named as the level words of other
/// formats (`V` is `VERBOSE`, `A` is `ASSERT`).
fn logcat_level(rest: &[u8]) -> Option<&'static str> {
    let mut words = rest
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let pid = words.next()?;
    let tid = words.next()?;
    if !pid.iter().all(u8::is_ascii_digit) || !tid.iter().all(u8::is_ascii_digit) {
        return None;
    }
    match words.next()? {
        b"V" => Some("VERBOSE"),
        b"D" => Some("DEBUG"),
        b"I" => Some("INFO"),
        b"W" => Some("WARN"),
        b"E" => Some("ERROR"),
        b"F" => Some("FATAL"),
        b"A" => Some("ASSERT"),
        _ => None,
    }
}

/// The host of a line: the field right after its timestamp — always for a
/// syslog timestamp (`Jun 14 15:16:01 combo sshd[1]:` → `combo`); after
/// other formats only when it looks like a numbered host name (starts with
/// a letter, holds only letters, digits and `.-:`, has a digit, and is not
/// a level word): the generator's `web-07`, loghub Thunderbird's `dn228`.
pub fn host_of(line: &[u8], stamp: Option<Stamp>) -> Option<&[u8]> {
    let s = stamp?;
    let mut i = s.end;
    if i >= line.len() || !(line[i] == b' ' || line[i] == b'\t') {
        return None;
    }
    while i < line.len() && (line[i] == b' ' || line[i] == b'\t') {
        i += 1;
    }
    let start = i;
    while i < line.len() && !line[i].is_ascii_whitespace() {
        i += 1;
    }
    let tok = &line[start..i];
    if tok.is_empty() {
        return None;
    }
    if s.format == TimeFormat::Syslog {
        return Some(tok);
    }
    let hostish = tok[0].is_ascii_alphabetic()
        && tok
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':'))
        && tok.iter().any(u8::is_ascii_digit)
        && !tok.ends_with(b":")
        && level_word(tok, true).is_none();
    hostish.then_some(tok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::time::TimeRules;

    fn stamp(line: &[u8]) -> Option<Stamp> {
        let r = TimeRules::detect(std::iter::once(line), None, 2020);
        r.stamp(line, 2020)
    }

    #[test]
    fn levels() {
        let l = |s: &str| level_of(s.as_bytes(), stamp(s.as_bytes()));
        assert_eq!(l("2015-10-18 18:01:47,978 INFO [main] x"), Some("INFO"));
        assert_eq!(l("x ERROR_503 then WARN y"), Some("WARN"));
        assert_eq!(
            l("[Sun Dec 04 04:47:44 2005] [error] mod_jk"),
            Some("ERROR")
        );
        assert_eq!(l("2016-09-28 04:30:30, Info   CBS x"), Some("INFO"));
        assert_eq!(l("an error occurred, info follows"), None);
        assert_eq!(l("2015-07-29 17:41:44,747 - WARNING [x]"), Some("WARNING"));
        assert_eq!(l("ERR: x"), Some("ERR"));
        assert_eq!(l(""), None);
        // REGRESSION: BGL's SEVERE, syslog's CRIT and kin were no level.
        let bgl = "- 1120241131 2005.07.01 R37-M1-N4 2005-07-01-11.05.31.120732 R37-M1-N4 NULL DISCOVERY SEVERE Can not get";
        assert_eq!(l(bgl), Some("SEVERE"));
        let bgl = "- 1117869872 2005.06.04 R02-M1-N0-C:J12-U11 2005-06-04-00.24.32.432192 R02-M1-N0-C:J12-U11 RAS KERNEL FATAL data TLB error interrupt";
        assert_eq!(l(bgl), Some("FATAL"));
        assert_eq!(
            l("Jun 14 15:16:01 combo app[1]: CRIT disk full"),
            Some("CRIT")
        );
        assert_eq!(l("2026-11-20T10:00:00Z <emerg> x"), Some("EMERG"));
        assert_eq!(l("2026-11-20T10:00:00Z Notice: x"), Some("NOTICE"));
        assert_eq!(l("2026-11-20T10:00:00Z trace x"), Some("TRACE"));
        assert_eq!(l("2026-11-20T10:00:00Z VERBOSE x"), Some("VERBOSE"));
        // Android logcat: the priority letter after the pid and the tid
        // (REGRESSION: every loghub Android line was `(none)`).
        let logcat = |s: &str| {
            let st = TimeFormat::Logcat
                .parse(s.as_bytes(), 2017)
                .map(|(ms, end)| Stamp {
                    ms,
                    format: TimeFormat::Logcat,
                    end,
                });
            level_of(s.as_bytes(), st)
        };
        for (letter, level) in [
            ("V", "VERBOSE"),
            ("D", "DEBUG"),
            ("I", "INFO"),
            ("W", "WARN"),
            ("E", "ERROR"),
            ("F", "FATAL"),
            ("A", "ASSERT"),
        ] {
            let line = format!("03-17 16:13:38.811  1702  2395 {letter} WindowManager: x");
            assert_eq!(logcat(&line), Some(level), "{line}");
        }
        // Not a priority letter: the words decide as elsewhere.
        assert_eq!(
            logcat("03-17 16:13:38.811  1702  2395 X Tag: ERROR y"),
            Some("ERROR")
        );
        assert_eq!(logcat("03-17 16:13:38.811 D Tag: y"), None);
    }

    #[test]
    fn hosts() {
        let h = |s: &str| host_of(s.as_bytes(), stamp(s.as_bytes())).map(|b| b.to_vec());
        assert_eq!(
            h("Jun 14 15:16:01 combo sshd[1]: x"),
            Some(b"combo".to_vec())
        );
        assert_eq!(
            h("Jul  1 09:00:55 calvisitor-10 kernel[0]: x"),
            Some(b"calvisitor-10".to_vec())
        );
        assert_eq!(
            h("2026-11-20T00:00:00.000Z web-07 INFO  [svc] x"),
            Some(b"web-07".to_vec())
        );
        assert_eq!(h("2015-10-18 18:01:47,978 INFO [main] x"), None);
        assert_eq!(h("081109 203615 148 INFO dfs"), None);
        assert_eq!(
            h("- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 x"),
            Some(b"dn228".to_vec())
        );
        assert_eq!(h("no timestamp here"), None);
    }

    #[test]
    fn user_fields() {
        let f = FieldSpec::parse("user=user=(u\\d+)").unwrap();
        assert_eq!(f.extract(b"a user=u123 b", None), Some(&b"u123"[..]));
        let g = FieldSpec::parse("ip=\\d+\\.\\d+\\.\\d+\\.\\d+").unwrap();
        assert_eq!(
            g.extract(b"from 10.0.0.1 port", None),
            Some(&b"10.0.0.1"[..])
        );
        assert_eq!(g.extract(b"none", None), None);
        assert!(FieldSpec::parse("novalue").is_err());
        assert!(FieldSpec::parse("=x").is_err());
        assert!(FieldSpec::parse("a=(").is_err());
    }
}
