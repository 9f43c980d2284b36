//! Lines as tokens, split as Loki's pattern ingester splits them (its
//! punctuation tokenizer, `pkg/pattern/drain/line_tokenizer.go`): a space
//! ends a token and is kept as layout; `=` and ASCII punctuation other
//! than `_ - . : /` are tokens of their own; everything else (letters,
//! digits, `_ - . : /`, symbols such as `$ + < > | ~`, tabs, any non-ASCII
//! byte) continues the current token.
//!
//! A line's *layout* (the spaces before the first token and after each
//! token) is kept exactly, so a template rendered from tokens and layout
//! reproduces the line where its tokens are literal.

/// True for the bytes that are tokens of their own: `=` and Go's
/// `unicode.IsPunct` over ASCII minus `_ - . : /`.
#[inline]
pub const fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'=' | b'!'
            | b'"'
            | b'#'
            | b'%'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b','
            | b';'
            | b'?'
            | b'@'
            | b'['
            | b'\\'
            | b']'
            | b'{'
            | b'}'
    )
}

/// One line split: token ranges into the line and the layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Byte ranges of the tokens in the line.
    pub spans: Vec<(u32, u32)>,
    /// Spaces before the first token.
    pub lead: u32,
    /// Spaces after each token (one entry per token).
    pub after: Vec<u32>,
}

impl Tokens {
    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.view().len()
    }

    /// True for a line of spaces only (or empty).
    pub fn is_empty(&self) -> bool {
        self.view().is_empty()
    }

    /// Token `i` of `line` (the line these tokens were taken from).
    #[inline]
    pub fn token<'a>(&self, line: &'a [u8], i: usize) -> &'a [u8] {
        self.view().token(line, i)
    }
}

/// Splits `line` (without its line terminator) into `out`, reusing its
/// buffers.
pub fn tokenize_into(line: &[u8], out: &mut Tokens) {
    out.spans.clear();
    out.after.clear();
    out.lead = split_onto(line, &mut out.spans, &mut out.after);
}

/// Appends `line`'s token ranges and the spaces after each to `spans` and
/// `after`; returns the spaces before its first token.
fn split_onto(line: &[u8], spans: &mut Vec<(u32, u32)>, after: &mut Vec<u32>) -> u32 {
    let base = after.len();
    let mut lead = 0;
    let mut start = 0usize;
    for (i, &c) in line.iter().enumerate() {
        let delim = is_delimiter(c);
        if c != b' ' && !delim {
            continue;
        }
        if i > start {
            spans.push((start as u32, i as u32));
            after.push(0);
        }
        if c == b' ' {
            match after.len() > base {
                true => *after.last_mut().expect("a token of this line") += 1,
                false => lead += 1,
            }
        } else {
            spans.push((i as u32, i as u32 + 1));
            after.push(0);
        }
        start = i + 1;
    }
    if start < line.len() {
        spans.push((start as u32, line.len() as u32));
        after.push(0);
    }
    lead
}

/// One line's tokens, borrowed from a [`Tokens`].
#[derive(Clone, Copy, Debug)]
pub struct LineTokens<'a> {
    /// Byte ranges of the tokens in the line.
    pub spans: &'a [(u32, u32)],
    /// Spaces before the first token.
    pub lead: u32,
    /// Spaces after each token.
    pub after: &'a [u32],
}

impl LineTokens<'_> {
    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True for a line of spaces only (or empty).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Token `i` of `line` (the line these tokens were taken from).
    #[inline]
    pub fn token<'l>(&self, line: &'l [u8], i: usize) -> &'l [u8] {
        let (a, b) = self.spans[i];
        &line[a as usize..b as usize]
    }
}

impl Tokens {
    /// These tokens, borrowed.
    pub fn view(&self) -> LineTokens<'_> {
        LineTokens {
            spans: &self.spans,
            lead: self.lead,
            after: &self.after,
        }
    }
}

/// [`tokenize_into`] into a fresh value.
pub fn tokenize(line: &[u8]) -> Tokens {
    let mut t = Tokens::default();
    tokenize_into(line, &mut t);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        let t = tokenize(line.as_bytes());
        (0..t.len())
            .map(|i| String::from_utf8_lossy(t.token(line.as_bytes(), i)).into_owned())
            .collect()
    }

    #[test]
    fn splits_as_loki_does() {
        assert_eq!(
            words("ts=2024-03-30T23:03:40 caller=grpc_logging.go:66 msg=\"a b\""),
            [
                "ts",
                "=",
                "2024-03-30T23:03:40",
                "caller",
                "=",
                "grpc_logging.go:66",
                "msg",
                "=",
                "\"",
                "a",
                "b",
                "\""
            ]
        );
        assert_eq!(
            words("[error] [client 1.2.3.4] x+y<z>"),
            ["[", "error", "]", "[", "client", "1.2.3.4", "]", "x+y<z>"]
        );
        let t = tokenize(b"  a  b ");
        assert_eq!((t.lead, t.after.clone()), (2, vec![2, 1]));
        assert!(tokenize(b"   ").is_empty());
        assert_eq!(tokenize(b"   ").lead, 3);
    }
}
