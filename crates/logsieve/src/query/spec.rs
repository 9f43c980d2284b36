//! The plain data of a query, before compilation: how patterns are read
//! ([`Syntax`]), the flags ([`QueryBuilder`]) and what analysis found
//! ([`Analysis`]). The CPU matcher is built from these; it depends on this
//! module, not on [`crate::query`], which holds the compiled [`Query`].

use crate::cpu::multi::CpuMulti;

/// How patterns are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Syntax {
    /// A regular expression (grep's default); literals are noticed.
    #[default]
    Regex,
    /// Fixed strings (`-F`).
    Fixed,
    /// `*` and `?` wildcards, everything else literal.
    Wildcard,
    /// Lines within this edit distance (0..=3) of the pattern.
    Fuzzy(u8),
}

impl Syntax {
    /// The syntax called `name` (`literal` or `fixed`, `regex`,
    /// `wildcard`, `fuzzy` with `fuzzy_k` edits, 1 when absent), as the
    /// HTTP API and the page name them; `None` for another name.
    pub fn from_name(name: &str, fuzzy_k: Option<u8>) -> Option<Syntax> {
        Some(match name {
            "literal" | "fixed" => Syntax::Fixed,
            "regex" => Syntax::Regex,
            "wildcard" => Syntax::Wildcard,
            "fuzzy" => Syntax::Fuzzy(fuzzy_k.unwrap_or(1)),
            _ => return None,
        })
    }

    /// The name [`Syntax::from_name`] reads, and the edits of a fuzzy one.
    pub fn name(self) -> (&'static str, Option<u8>) {
        match self {
            Syntax::Regex => ("regex", None),
            Syntax::Fixed => ("literal", None),
            Syntax::Wildcard => ("wildcard", None),
            Syntax::Fuzzy(k) => ("fuzzy", Some(k)),
        }
    }
}

/// Which case folding a query needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseMode {
    /// Bytes compare as they are.
    Sensitive,
    /// ASCII letters fold (`-i` on an ASCII literal): GPU-capable.
    Ascii,
    /// Unicode simple case folding (`-i` on a regex or a non-ASCII literal).
    Unicode,
}

/// The shape of a query after analysis, for the planner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// Every pattern is a plain literal (possibly after regex analysis).
    Literal,
    /// A real regular expression.
    Regex,
    /// Wildcard patterns.
    Wildcard,
    /// Approximate matching.
    Fuzzy,
}

/// Builds a [`Query`].
#[derive(Clone, Debug, Default)]
pub struct QueryBuilder {
    pub(crate) syntax: Syntax,
    pub(crate) case_insensitive: bool,
    pub(crate) word: bool,
    pub(crate) whole_line: bool,
    pub(crate) invert: bool,
    pub(crate) crlf: bool,
    pub(crate) multiline: bool,
    pub(crate) pcre2: bool,
    pub(crate) cpu_multi: CpuMulti,
}

impl QueryBuilder {
    /// A builder for regex queries, case-sensitive, not inverted.
    pub fn new() -> QueryBuilder {
        QueryBuilder::default()
    }

    /// How patterns are read.
    pub fn syntax(&mut self, syntax: Syntax) -> &mut QueryBuilder {
        self.syntax = syntax;
        self
    }

    /// `-i`: case-insensitive.
    pub fn case_insensitive(&mut self, yes: bool) -> &mut QueryBuilder {
        self.case_insensitive = yes;
        self
    }

    /// `-w`: whole words only.
    pub fn word(&mut self, yes: bool) -> &mut QueryBuilder {
        self.word = yes;
        self
    }

    /// `-x`: whole lines only.
    pub fn whole_line(&mut self, yes: bool) -> &mut QueryBuilder {
        self.whole_line = yes;
        self
    }

    /// `-v`: select the lines that do not match.
    pub fn invert(&mut self, yes: bool) -> &mut QueryBuilder {
        self.invert = yes;
        self
    }

    /// `--crlf`: in a regex, `$` also matches before `\r\n`, `^` after
    /// `\r`, and `.` matches no `\r` (the `regex` crate's CRLF mode, `(?R)`).
    /// The matched lines are the same on every backend: a regex that is a
    /// plain literal is unchanged, any other is verified on the CPU.
    pub fn crlf(&mut self, yes: bool) -> &mut QueryBuilder {
        self.crlf = yes;
        self
    }

    /// `-U`: a regex may match across lines (ripgrep's multiline mode):
    /// `.` still matches no `\n` unless `(?s)`, every line a match spans
    /// is selected, patterns are not split on `\n`, and a count counts
    /// matches (rg's `-U -c`). CPU only ([`crate::Query::cpu_only`]).
    pub fn multiline(&mut self, yes: bool) -> &mut QueryBuilder {
        self.multiline = yes;
        self
    }

    /// `-P`: patterns are PCRE2 regexes (look-around, backreferences),
    /// run by the `pcre2` crate; building such a query without the
    /// `pcre2` feature is an error that says so. CPU only.
    pub fn pcre2(&mut self, yes: bool) -> &mut QueryBuilder {
        self.pcre2 = yes;
        self
    }

    /// Which CPU matcher a set of literals compiles to (benchmarks and
    /// tests force one; [`crate::Tuning::cpu_multi`]).
    pub fn cpu_multi(&mut self, choice: CpuMulti) -> &mut QueryBuilder {
        self.cpu_multi = choice;
        self
    }
}

/// What analysis finds out about a set of patterns.
pub(crate) struct Analysis {
    pub(crate) kind: QueryKind,
    pub(crate) case: CaseMode,
    /// The literal bytes of each pattern, when `kind == Literal`.
    pub(crate) literals: Option<Vec<Vec<u8>>>,
}
