//! LogQL's tokens, each with the byte offset where it starts.

use super::ParseError;

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A label name, function name or keyword (`sum`, `by`, `json`).
    Ident(String),
    /// A string: `"..."` with Go's escapes, or a raw `` `...` ``.
    Str(String),
    /// A number (`1`, `0.5`).
    Num(f64),
    /// A duration (`5m`, `1h30m`, `500ms`), in milliseconds.
    Duration(i64),
    /// Punctuation and operators, as written (`{`, `=~`, `|=`, `|`, `+`).
    Op(&'static str),
    /// The end of the input.
    Eof,
}

/// Operators, longest first so `!=` wins over `!`.
const OPS: &[&str] = &[
    "|>", "!>", "|=", "|~", "!=", "!~", "=~", "==", ">=", "<=", "{", "}", "(", ")", "[", "]", ",",
    "=", "|", "+", "-", "*", "/", "%", "^", ">", "<", "!",
];

/// Splits `src` into tokens with their byte offsets; the last is `Eof`.
pub fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // A comment runs to the end of the line (LogQL allows `#`).
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c == b'"' {
            let (s, end) = string(src, i)?;
            out.push((Tok::Str(s), start));
            i = end;
        } else if c == b'`' {
            let Some(len) = src[i + 1..].find('`') else {
                return Err(ParseError::new(
                    start,
                    "unterminated raw string (no closing `)",
                ));
            };
            out.push((Tok::Str(src[i + 1..i + 1 + len].to_string()), start));
            i += len + 2;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), start));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let word = &src[start..i];
            if word.bytes().any(|c| c.is_ascii_alphabetic()) {
                let ms = duration_ms(word).ok_or_else(|| {
                    ParseError::new(
                        start,
                        format!("{word:?} is not a duration (e.g. 30s, 5m, 1h30m, 500ms, 1d)"),
                    )
                })?;
                out.push((Tok::Duration(ms), start));
            } else {
                let n: f64 = word
                    .parse()
                    .map_err(|_| ParseError::new(start, format!("{word:?} is not a number")))?;
                out.push((Tok::Num(n), start));
            }
        } else if let Some(op) = OPS.iter().find(|op| src[i..].starts_with(**op)) {
            out.push((Tok::Op(op), start));
            i += op.len();
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(ParseError::new(
                start,
                format!("unexpected character {ch:?}"),
            ));
        }
    }
    out.push((Tok::Eof, b.len()));
    Ok(out)
}

/// A double-quoted string from `at` (its opening quote): the value and the
/// offset after the closing quote. Go's escapes, as Loki reads them.
fn string(src: &str, at: usize) -> Result<(String, usize), ParseError> {
    let mut out = String::new();
    let mut chars = src[at + 1..].char_indices().map(|(k, c)| (at + 1 + k, c));
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return Ok((out, k + 1)),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    '\'' => out.push('\''),
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'f' => out.push('\x0c'),
                    'v' => out.push('\x0b'),
                    'x' | 'u' | 'U' => {
                        let n = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = (0..n).filter_map(|_| chars.next().map(|x| x.1)).collect();
                        let ch = u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| hex.len() == n)
                            .and_then(char::from_u32)
                            .ok_or_else(|| {
                                ParseError::new(k, format!("invalid escape \\{e}{hex} in a string"))
                            })?;
                        out.push(ch);
                    }
                    other => {
                        return Err(ParseError::new(
                            k,
                            format!("invalid escape \\{other} in a string (a regex backslash is written \\\\ or inside `backticks`)"),
                        ))
                    }
                }
            }
            c => out.push(c),
        }
    }
    Err(ParseError::new(at, "unterminated string (no closing \")"))
}

/// Prometheus' duration syntax (`1h30m`, `500ms`, `1d`, `2w`, `1y`), in ms.
pub fn duration_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (mut i, mut total) = (0, 0i64);
    if b.is_empty() {
        return None;
    }
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let n: i64 = s.get(start..i)?.parse().ok()?;
        let us = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit: i64 = match &s[us..i] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 7 * 86_400_000,
            "y" => 365 * 86_400_000,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    Some(total)
}
