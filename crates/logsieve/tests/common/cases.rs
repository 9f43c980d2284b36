//! The table of cases every configuration of every backend runs.

use logsieve::Syntax;

use super::{pats, Flags};

/// One named case. `expected` is written by hand (never copied from an
/// engine's output); the oracle must agree with it too.
pub struct Case {
    /// Unique name, `group/what`.
    pub name: &'static str,
    /// The whole document.
    pub corpus: &'static [u8],
    /// The patterns (`-e` repeated).
    pub patterns: &'static [&'static [u8]],
    /// How the patterns are read.
    pub syntax: Syntax,
    /// Flag letters among "iwxv".
    pub flags: &'static str,
    /// Selected line ids (after `-v`), 0-based.
    pub expected: &'static [u64],
}

impl Case {
    /// The patterns, owned.
    pub fn patterns(&self) -> Vec<Vec<u8>> {
        pats(self.patterns)
    }

    /// The flags, parsed.
    pub fn flags(&self) -> Flags {
        Flags::parse(self.flags)
    }
}

const F: Syntax = Syntax::Fixed;
const R: Syntax = Syntax::Regex;
const W: Syntax = Syntax::Wildcard;

macro_rules! case {
    ($name:expr, $corpus:expr, [$($p:expr),* $(,)?], $syn:expr, $flags:expr, [$($e:expr),* $(,)?]) => {
        Case {
            name: $name,
            corpus: $corpus,
            patterns: &[$($p),*],
            syntax: $syn,
            flags: $flags,
            expected: &[$($e),*],
        }
    };
}

/// 70 bytes: longer than a 64-bit bit-vector and than one 64-byte block.
const LONG70: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-=+0123";

/// Every configuration of every backend runs these.
pub const CASES: &[Case] = &[
    // --- lines ---
    case!(
        "lines/simple",
        b"foo\nbar\nfoobar\n",
        [b"foo"],
        F,
        "",
        [0, 2]
    ),
    case!(
        "lines/no_trailing_newline",
        b"a\nb\nab",
        [b"b"],
        F,
        "",
        [1, 2]
    ),
    case!("lines/empty_corpus", b"", [b"a"], F, "", []),
    case!("lines/only_newline_empty_pattern", b"\n", [b""], F, "", [0]),
    case!("lines/empty_lines", b"\n\nx\n\n", [b"x"], F, "v", [0, 1, 3]),
    case!("lines/crlf_cr_kept", b"ab\r\ncd\r\n", [b"b\r"], F, "", [0]),
    case!("lines/crlf_x", b"ab\r\nab\n", [b"ab"], F, "x", [1]),
    case!("lines/nul_byte", b"a\0b\nc\n", [b"b"], F, "", [0]),
    case!(
        "lines/invalid_utf8_literal",
        b"\xff\xfe\nx\xfe\n\xfe\xff",
        [b"\xfe\xff"],
        F,
        "",
        [2]
    ),
    case!(
        "lines/match_at_very_end",
        b"xx\nyy\nneedle",
        [b"needle"],
        F,
        "",
        [2]
    ),
    case!(
        "lines/match_at_very_start",
        b"needle\nyy\n",
        [b"needle"],
        F,
        "",
        [0]
    ),
    // --- empty pattern ---
    case!("empty/every_line", b"a\n\nb", [b""], F, "", [0, 1, 2]),
    case!("empty/empty_corpus", b"", [b""], F, "", []),
    case!("empty/inverted", b"a\nb", [b""], F, "v", []),
    case!("empty/regex", b"a\n\nb\n", [b""], R, "", [0, 1, 2]),
    case!("empty/with_other", b"a\nb\n", [b"zzz", b""], F, "", [0, 1]),
    case!(
        "empty/x_only_empty_lines",
        b"a\n\nb\n\n",
        [b""],
        F,
        "x",
        [1, 3]
    ),
    // --- -v ---
    case!("invert/basic", b"a\nb\nc\n", [b"b"], F, "v", [0, 2]),
    case!("invert/none_match", b"a\nb", [b"z"], F, "v", [0, 1]),
    case!("invert/regex", b"1\na\n22\n", [b"^[0-9]+$"], R, "v", [1]),
    // --- many patterns ---
    case!(
        "multi/two",
        b"one\ntwo\nthree\nfour\n",
        [b"two", b"four"],
        F,
        "",
        [1, 3]
    ),
    case!(
        "multi/overlapping",
        b"abcd\nbc\nxx\n",
        [b"abc", b"bcd", b"bc"],
        F,
        "",
        [0, 1]
    ),
    case!(
        "multi/newline_splits",
        b"one\ntwo\nthree\n",
        [b"one\nthree"],
        F,
        "",
        [0, 2]
    ),
    case!(
        "multi/regex_and_literal",
        b"id=1\nfoo\nbar\n",
        [b"id=[0-9]", b"bar"],
        R,
        "",
        [0, 2]
    ),
    case!("multi/x", b"a\nb\nab\n", [b"a", b"b"], F, "x", [0, 1]),
    case!(
        "multi/many_literals",
        b"alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n",
        [b"lph", b"amm", b"psi", b"eta", b"qqq", b"rrr", b"sss", b"ttt", b"uuu", b"vvv"],
        F,
        "",
        [0, 1, 2, 4, 5, 6, 7]
    ),
    // --- -i ---
    case!(
        "case/ascii",
        b"ERROR x\nerror y\nErRoR\nerr\n",
        [b"error"],
        F,
        "i",
        [0, 1, 2]
    ),
    case!(
        "case/ascii_multi",
        b"FOO\nbar\nBaR\nbaz\n",
        [b"foo", b"bar"],
        F,
        "i",
        [0, 1, 2]
    ),
    // -F -i on an ASCII literal folds ASCII only: KELVIN SIGN is not 'k'.
    case!(
        "case/ascii_no_kelvin",
        b"K\n\xe2\x84\xaa\nk\n",
        [b"k"],
        F,
        "i",
        [0, 2]
    ),
    // A regex folds by Unicode: KELVIN SIGN is 'k'.
    case!(
        "case/regex_kelvin",
        b"K\n\xe2\x84\xaa\nk\n",
        [b"k"],
        R,
        "i",
        [0, 1, 2]
    ),
    case!(
        "case/regex_long_s",
        b"S\n\xc5\xbf\nx\n",
        [b"s"],
        R,
        "i",
        [0, 1]
    ),
    case!(
        "case/unicode_e_acute",
        "café\nCAFÉ\ncafe\n".as_bytes(),
        ["café".as_bytes()],
        F,
        "i",
        [0, 1]
    ),
    case!(
        "case/unicode_sensitive",
        "café\nCAFÉ\n".as_bytes(),
        ["É".as_bytes()],
        F,
        "",
        [1]
    ),
    case!(
        "case/greek",
        "ΣΊΣΥΦΟΣ\nσίσυφος\nsisyphus\n".as_bytes(),
        ["σίσυφος".as_bytes()],
        R,
        "i",
        [0, 1]
    ),
    case!(
        "case/greek_fixed",
        "ΣΊΣΥΦΟΣ\nσίσυφος\n".as_bytes(),
        ["ΊΣ".as_bytes()],
        F,
        "i",
        [0, 1]
    ),
    // --- -w ---
    case!(
        "word/basic",
        b"foo bar\nfoobar\nbar_foo\n(foo)\nfoo",
        [b"foo"],
        F,
        "w",
        [0, 3, 4]
    ),
    case!(
        "word/later_occurrence",
        b"foobar foo\nfoofoo\n",
        [b"foo"],
        F,
        "w",
        [0]
    ),
    case!(
        "word/unicode_neighbour",
        "éfoo\nfoo é\n→foo\nfooé\n".as_bytes(),
        [b"foo"],
        F,
        "w",
        [1, 2]
    ),
    case!(
        "word/invalid_utf8_neighbour",
        b"\xfffoo\nfoo\xff\n foo \n",
        [b"foo"],
        F,
        "w",
        [2]
    ),
    case!(
        "word/digits_are_word",
        b"a1 b\na b1\n",
        [b"a", b"b"],
        F,
        "w",
        [0, 1]
    ),
    case!("word/regex", b"id=42\nid=423x\n", [b"[0-9]+"], R, "w", [0]),
    case!("word/invert", b"foo\nfood\n", [b"foo"], F, "wv", [1]),
    case!("word/ascii_i", b"FOO bar\nFOObar\n", [b"foo"], F, "wi", [0]),
    case!("word/alternatives", b"abc\n", [b"ab", b"abc"], F, "w", [0]),
    // --- -x ---
    case!(
        "line/basic",
        b"abc\nabcd\nxabc\nabc",
        [b"abc"],
        F,
        "x",
        [0, 3]
    ),
    case!("line/regex", b"123\n12a\n", [b"[0-9]+"], R, "x", [0]),
    case!(
        "line/ascii_i",
        b"ABC\nabc\nabcd\n",
        [b"abc"],
        F,
        "xi",
        [0, 1]
    ),
    case!("line/invert", b"abc\nabcd\n", [b"abc"], F, "xv", [1]),
    // --- wildcard ---
    case!(
        "wild/star",
        b"GET /a/b HTTP\nPOST /a HTTP\nGET x\n",
        [b"GET*HTTP"],
        W,
        "",
        [0]
    ),
    case!(
        "wild/question",
        b"cat\ncot\ncoat\nct\n",
        [b"c?t"],
        W,
        "",
        [0, 1]
    ),
    case!("wild/no_cross_line", b"ab\ncd\n", [b"b*c"], W, "", []),
    case!("wild/star_alone", b"x\n\n", [b"*"], W, "", [0, 1]),
    case!(
        "wild/question_is_one_byte",
        "é\ne\n".as_bytes(),
        [b"??"],
        W,
        "x",
        [0]
    ),
    case!(
        "wild/no_metachar_is_literal",
        b"a.b\naxb\n",
        [b"a.b"],
        W,
        "",
        [0]
    ),
    case!(
        "wild/ascii_i",
        b"get /X\nGET /y\n",
        [b"get /?"],
        W,
        "i",
        [0, 1]
    ),
    case!("wild/x", b"a1b\na1bc\n", [b"a*b"], W, "x", [0]),
    // --- fuzzy ---
    case!(
        "fuzzy/k0_is_exact",
        b"hello\nhelo\n",
        [b"hello"],
        Syntax::Fuzzy(0),
        "",
        [0]
    ),
    case!(
        "fuzzy/k1",
        b"hello\nhelo\nhallo\nhxllx\nworld\n",
        [b"hello"],
        Syntax::Fuzzy(1),
        "",
        [0, 1, 2]
    ),
    case!(
        "fuzzy/k2",
        b"hello\nhelo\nhallo\nhxllx\nworld\n",
        [b"hello"],
        Syntax::Fuzzy(2),
        "",
        [0, 1, 2, 3]
    ),
    case!(
        "fuzzy/k3_insertions",
        b"abcXdeYfgZh\nabcd\nefgh\n",
        [b"abcdefgh"],
        Syntax::Fuzzy(3),
        "",
        [0]
    ),
    case!(
        "fuzzy/ascii_i",
        b"HELO\nHALLO\n",
        [b"hello"],
        Syntax::Fuzzy(1),
        "i",
        [0, 1]
    ),
    case!(
        "fuzzy/short_pattern_all",
        b"x\n\nyy\n",
        [b"ab"],
        Syntax::Fuzzy(2),
        "",
        [0, 1, 2]
    ),
    case!(
        "fuzzy/multi",
        b"apple\nbanana\ncherry\n",
        [b"appel", b"chery"],
        Syntax::Fuzzy(1),
        "",
        [0, 2]
    ),
    case!(
        "fuzzy/invert",
        b"hello\nworld\n",
        [b"hellp"],
        Syntax::Fuzzy(1),
        "v",
        [1]
    ),
    case!(
        "fuzzy/long_pattern",
        LONG70,
        [LONG70],
        Syntax::Fuzzy(2),
        "",
        [0]
    ),
    case!(
        "fuzzy/crlf_and_no_final_newline",
        b"helo\r\nworld\r\nhellp",
        [b"hello"],
        Syntax::Fuzzy(1),
        "",
        [0, 2]
    ),
    case!(
        // 33 bytes: the bitap chain's second word.
        "fuzzy/two_word_chain",
        b"abcdefghijklMnopqrstuvwxyz0123456\nXbcdefghijklmnopqrstuvwxyz012345X\nabcdefghijklmnopqrstuvwxyz012345\n",
        [b"abcdefghijklmnopqrstuvwxyz0123456"],
        Syntax::Fuzzy(1),
        "",
        [0, 2]
    ),
    case!(
        // -i folds ASCII only: the 0x89/0xA9 of \xc3\x89/\xc3\xa9 is an edit.
        "fuzzy/ascii_i_non_ascii",
        "CAF\u{c9}\nCAFE\ncaf\u{e9}\n".as_bytes(),
        ["caf\u{e9}".as_bytes()],
        Syntax::Fuzzy(1),
        "i",
        [0, 2]
    ),
    // --- long patterns ---
    case!("long/literal", LONG70, [LONG70], F, "", [0]),
    case!(
        "long/literal_miss_by_one",
        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-=+012",
        [LONG70],
        F,
        "",
        []
    ),
    case!(
        "long/regex_literal",
        LONG70,
        [b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-=\\+0123"],
        R,
        "",
        [0]
    ),
    // --- regex ---
    case!("regex/class", b"id=42\nid=x\n", [b"id=[0-9]+"], R, "", [0]),
    case!("regex/anchor_start", b"abc\nxabc\n", [b"^abc"], R, "", [0]),
    case!(
        "regex/anchor_end",
        b"abc\nabcx\nabc\r\n",
        [b"abc$"],
        R,
        "",
        [0]
    ),
    case!("regex/empty_line", b"a\n\nb\n\n", [b"^$"], R, "", [1, 3]),
    case!(
        "regex/cross_newline_space",
        b"a\nb\na b\n",
        [b"a\\sb"],
        R,
        "",
        [2]
    ),
    case!(
        "regex/cross_newline_class",
        b"a\nb\n",
        [b"a[\\n]b"],
        R,
        "",
        []
    ),
    case!(
        "regex/cross_newline_negated",
        b"a\nb\naxb\n",
        [b"a[^x]b"],
        R,
        "",
        []
    ),
    case!(
        "regex/cross_newline_later_real",
        b"acx\nb\n",
        [b"a[^z]*\\nb|c"],
        R,
        "",
        [0]
    ),
    case!(
        "regex/alternation",
        b"cat\ndog\nbird\n",
        [b"cat|bird"],
        R,
        "",
        [0, 2]
    ),
    // --- REGRESSION: bugs found by this suite ---
    // A regex that parses to a literal containing `\n` was searched as that
    // literal over the whole buffer, so `\n` matched every terminated line
    // and `a\nb` matched across two lines. Patterns never match across
    // lines.
    case!(
        "REGRESSION/regex_escaped_newline",
        b"a\nb\nc",
        [b"\\n"],
        R,
        "",
        []
    ),
    case!(
        "REGRESSION/regex_literal_across_lines",
        b"a\nb\nab\n",
        [b"a\\nb"],
        R,
        "",
        []
    ),
    case!(
        "REGRESSION/regex_escaped_newline_inverted",
        b"a\nb",
        [b"\\n"],
        R,
        "v",
        [0, 1]
    ),
    // `--fuzzy 0 -i` folded by Unicode when the pattern was non-ASCII, but
    // fuzzy matching counts bytes and folds ASCII only (so K = 0 matched
    // lines that K = 1 did not).
    case!(
        "REGRESSION/fuzzy0_i_ascii_only",
        "S\ns\nſ\n".as_bytes(),
        ["ſ".as_bytes()],
        Syntax::Fuzzy(0),
        "i",
        [2]
    ),
    case!(
        "REGRESSION/fuzzy0_i_w_non_ascii",
        "É x\né x\néx\n".as_bytes(),
        ["é".as_bytes()],
        Syntax::Fuzzy(0),
        "iw",
        [1]
    ),
    // An empty regex match at the very end of a last line without `\n`
    // (position == buffer end) was taken for the start of a next line and
    // dropped: `$` missed the last line, as did `-w ''` on "a ".
    case!(
        "REGRESSION/regex_dollar_last_line_unterminated",
        b"ab\ncd",
        [b"$"],
        R,
        "",
        [0, 1]
    ),
    case!(
        "REGRESSION/regex_optional_at_end",
        b"x\nab",
        [b"z?$"],
        R,
        "",
        [0, 1]
    ),
    case!(
        "REGRESSION/word_empty_pattern_at_end",
        b"a \nb",
        [b""],
        F,
        "w",
        [0]
    ),
    case!(
        "REGRESSION/word_empty_regex_at_end",
        b"a ",
        [b""],
        R,
        "w",
        [0]
    ),
    case!(
        "REGRESSION/fuzzy1_i_ascii_only",
        "S\ns\nſ\n".as_bytes(),
        ["ſ".as_bytes()],
        Syntax::Fuzzy(1),
        "i",
        [2]
    ),
];
