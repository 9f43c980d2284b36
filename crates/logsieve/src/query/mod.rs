//! Queries: what the user asked for, and what it means for each backend.
//!
//! A [`Query`] is built once by a [`QueryBuilder`] and is backend-neutral. It
//! records the analysis that the planner and the backends need: whether the
//! patterns are plain literals (a regex such as `ERROR_503` is), which kind of
//! case folding applies, and the compiled CPU matcher, which is also the
//! reference every other backend is checked against.
//!
//! # Matching rules (every backend follows them)
//!
//! * A line is the bytes between two `\n`; a `\r` before the `\n` is part of
//!   the line. Patterns never match across lines; a pattern containing `\n`
//!   is split into several patterns (as grep does).
//! * The empty pattern matches every line.
//! * `-i` on an ASCII-only literal folds ASCII letters only. On a regex it
//!   follows Unicode simple case folding (the `regex` crate), and a literal
//!   with a non-ASCII letter folds by Unicode too. A regex that is a plain
//!   literal is only treated as a literal under `-i` when the two foldings
//!   agree (no `k` or `s`, whose folds include U+212A and U+017F).
//! * `-w`: some match must have a non-word character (or the line edge) on
//!   each side; word characters are Unicode `\w`, and invalid UTF-8 is neither
//!   (as in the `regex` crate). `-x`: some match must span the whole line.
//! * `--wildcard`: `*` is any run of bytes within the line, `?` one byte.
//! * `--fuzzy K`: the line holds a substring within Levenshtein distance K of
//!   the pattern, counted in bytes.

use std::sync::Arc;

use crate::cpu::matcher::Matcher;
use crate::cpu::multi::CpuMulti;
use crate::error::Error;
use spec::Analysis;

pub mod bitap;
pub mod classes;
pub mod glushkov;
pub mod literals;
mod replace;
pub(crate) mod spec;

pub use spec::{CaseMode, QueryBuilder, QueryKind, Syntax};

impl QueryBuilder {
    /// Compiles the patterns (one or many) into a query.
    ///
    /// Errors on an invalid regex (the message shows where), a fuzzy
    /// distance above 3, or no pattern at all.
    pub fn build<P: AsRef<[u8]>>(&self, patterns: &[P]) -> Result<Query, Error> {
        if patterns.is_empty() {
            return Err(Error::query("no pattern given"));
        }
        if let Syntax::Fuzzy(k) = self.syntax {
            if k > 3 {
                return Err(Error::query(format!(
                    "--fuzzy {k}: the edit distance must be 0, 1, 2 or 3"
                )));
            }
        }
        // A pattern with newlines is several patterns (grep's rule).
        let mut split: Vec<Vec<u8>> = Vec::new();
        for p in patterns {
            let p = p.as_ref();
            if p.is_empty() || self.multiline {
                // -U: a `\n` in a pattern is matched (rg).
                split.push(p.to_vec());
            } else {
                split.extend(p.split(|&b| b == b'\n').map(|s| s.to_vec()));
            }
        }
        if self.crlf && self.syntax == Syntax::Regex && !self.pcre2 {
            // The flag travels inside each pattern, so that every matcher
            // built from `patterns()` (per-pattern counts and naming too)
            // reads it alike.
            for p in &mut split {
                p.splice(0..0, b"(?R)".iter().copied());
            }
        }
        let analysis = analyze(self, &split)?;
        let cpu_only = if self.multiline {
            Some(
                "-U/--multiline: a match may span lines, and the GPU kernels match within one line",
            )
        } else if self.pcre2 {
            Some("-P/--pcre2: PCRE2 (look-around, backreferences) runs on the CPU only")
        } else {
            None
        };
        let matcher = Matcher::new(self, &split, &analysis)?;
        Ok(Query {
            patterns: split,
            syntax: self.syntax,
            // -x wins over -w (rg, grep): every engine reads one of them.
            word: self.word && !self.whole_line,
            whole_line: self.whole_line,
            invert: self.invert,
            case: analysis.case,
            kind: analysis.kind,
            literal_lens: analysis.literals.as_ref().and_then(|l| {
                let lens = l.iter().map(Vec::len);
                Some((lens.clone().min()?, lens.max()?))
            }),
            literals: analysis.literals,
            cpu_only,
            multiline: self.multiline,
            cpu_multi: self.cpu_multi,
            matcher: Arc::new(matcher),
            replacer: Arc::default(),
            rare_sets: Arc::default(),
            class_set: Arc::default(),
        })
    }
}

fn has_ascii_fold_exception(p: &[u8]) -> bool {
    p.iter().any(|b| matches!(b, b'k' | b'K' | b's' | b'S'))
}

fn analyze(b: &QueryBuilder, pats: &[Vec<u8>]) -> Result<Analysis, Error> {
    let all_ascii = pats.iter().all(|p| p.is_ascii());
    let ci_case = if all_ascii {
        CaseMode::Ascii
    } else {
        CaseMode::Unicode
    };
    let case = if b.case_insensitive {
        ci_case
    } else {
        CaseMode::Sensitive
    };
    Ok(match b.syntax {
        Syntax::Fixed => Analysis {
            kind: QueryKind::Literal,
            case,
            literals: Some(pats.to_vec()),
        },
        Syntax::Wildcard => {
            // A wildcard pattern without `*` or `?` is a literal.
            if pats
                .iter()
                .all(|p| !p.iter().any(|&c| c == b'*' || c == b'?'))
            {
                Analysis {
                    kind: QueryKind::Literal,
                    case,
                    literals: Some(pats.to_vec()),
                }
            } else {
                Analysis {
                    kind: QueryKind::Wildcard,
                    case,
                    literals: None,
                }
            }
        }
        // Fuzzy matching counts bytes, so -i folds ASCII letters only, for
        // K = 0 too (exact matching).
        Syntax::Fuzzy(0) => Analysis {
            kind: QueryKind::Literal,
            case: if b.case_insensitive {
                CaseMode::Ascii
            } else {
                CaseMode::Sensitive
            },
            literals: Some(pats.to_vec()),
        },
        Syntax::Fuzzy(_) => Analysis {
            kind: QueryKind::Fuzzy,
            case: if b.case_insensitive {
                CaseMode::Ascii
            } else {
                CaseMode::Sensitive
            },
            literals: None,
        },
        // PCRE2 syntax is not Rust's: not parsed here (PCRE2 reports its
        // own errors), never a literal.
        Syntax::Regex if b.pcre2 => Analysis {
            kind: QueryKind::Regex,
            case: if b.case_insensitive {
                CaseMode::Unicode
            } else {
                CaseMode::Sensitive
            },
            literals: None,
        },
        Syntax::Regex => {
            let mut lits = Vec::with_capacity(pats.len());
            for p in pats {
                let s = std::str::from_utf8(p).map_err(|_| {
                    Error::pattern(format!(
                        "regex pattern {:?} is not valid UTF-8 (use -F for raw bytes)",
                        String::from_utf8_lossy(p)
                    ))
                })?;
                // Parse to report errors with their position, and to find
                // plain literals.
                let hir = regex_syntax::ParserBuilder::new()
                    .utf8(false)
                    .build()
                    .parse(s)
                    .map_err(|e| Error::pattern(e.to_string()))?;
                // A literal holding `\n` (the regex `\n`) can never match
                // inside a line; searched as a literal over the whole buffer
                // it would match across lines, so it stays a regex (whose
                // matches across lines are verified away).
                lits.push(literal_of(&hir).filter(|l| !l.contains(&b'\n')));
            }
            let is_lit = lits.iter().all(|l| l.is_some());
            let fold_ok = !b.case_insensitive
                || (all_ascii && !lits.iter().flatten().any(|l| has_ascii_fold_exception(l)));
            if is_lit && fold_ok {
                Analysis {
                    kind: QueryKind::Literal,
                    case,
                    literals: Some(lits.into_iter().map(|l| l.unwrap()).collect()),
                }
            } else {
                Analysis {
                    kind: QueryKind::Regex,
                    case: if b.case_insensitive {
                        CaseMode::Unicode
                    } else {
                        CaseMode::Sensitive
                    },
                    literals: None,
                }
            }
        }
    })
}

/// The literal bytes a regex HIR matches, if it matches exactly one string.
fn literal_of(hir: &regex_syntax::hir::Hir) -> Option<Vec<u8>> {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty => Some(Vec::new()),
        HirKind::Literal(l) => Some(l.0.to_vec()),
        HirKind::Concat(parts) => {
            let mut out = Vec::new();
            for p in parts {
                out.extend(literal_of(p)?);
            }
            Some(out)
        }
        HirKind::Capture(c) => literal_of(&c.sub),
        _ => None,
    }
}

/// [`Query::shape_key`]: the patterns and [`ShapeFlags`].
pub(crate) type QueryShape = (Vec<Vec<u8>>, ShapeFlags);

/// [`Query::shape_flags`]: syntax, `-w`/`-x`/`-v`, case, kind, and why it
/// runs on the CPU only.
pub(crate) type ShapeFlags = (Syntax, [bool; 3], CaseMode, QueryKind, Option<&'static str>);

/// A compiled, backend-neutral query. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Query {
    patterns: Vec<Vec<u8>>,
    syntax: Syntax,
    word: bool,
    whole_line: bool,
    invert: bool,
    case: CaseMode,
    kind: QueryKind,
    literals: Option<Vec<Vec<u8>>>,
    /// The shortest and longest literal, computed once: the routing
    /// point and the GPU driver ask per request, and a scan of 100k
    /// patterns costs ~0.2 ms each time.
    literal_lens: Option<(usize, usize)>,
    /// Why no GPU kernel can run this query (`-U`, `-P`), for the route.
    cpu_only: Option<&'static str>,
    multiline: bool,
    cpu_multi: CpuMulti,
    pub(crate) matcher: Arc<Matcher>,
    /// The capture regex of `-r`, compiled on first use.
    replacer: Arc<std::sync::OnceLock<Option<regex::bytes::Regex>>>,
    /// [`Query::literal_alternatives`] of a regex without a CPU
    /// prefilter: its rare single bytes, on first use.
    rare_sets: Arc<std::sync::OnceLock<Vec<literals::RequiredLiterals>>>,
    /// [`Query::class_set`], on first use.
    class_set: Arc<std::sync::OnceLock<Option<Arc<classes::ClassSet>>>>,
}

impl Query {
    /// The CPU many-literal matcher this query was built for.
    pub(crate) fn cpu_multi(&self) -> CpuMulti {
        self.cpu_multi
    }

    /// Why this query runs on the CPU only (`-U`, `-P`): `support.rs`
    /// refuses the GPU with this reason and the route says it.
    pub fn cpu_only(&self) -> Option<&'static str> {
        self.cpu_only
    }

    /// True for `-U`: matches may span lines ([`Query::multiline_blocks`]).
    pub fn multiline(&self) -> bool {
        self.multiline
    }

    /// `-U`: the matches in `hay` grouped into blocks of whole lines, as
    /// ripgrep prints them (a match selects every line it spans; matches
    /// sharing a line share a block); at most `max_blocks`. Empty for a
    /// query that is not multiline.
    pub fn multiline_blocks(
        &self,
        hay: &[u8],
        max_blocks: Option<u64>,
    ) -> Vec<crate::cpu::multiline::Block> {
        match self.matcher.doc_regex() {
            Some(re) if self.multiline => crate::cpu::multiline::blocks(re, hay, max_blocks),
            _ => Vec::new(),
        }
    }

    /// What decides the lines this query selects (patterns, syntax and
    /// flags): equal keys, equal results over the same corpus.
    pub(crate) fn shape_key(&self) -> QueryShape {
        (self.patterns.clone(), self.shape_flags())
    }

    /// [`Query::shape_key`] but the patterns.
    pub(crate) fn shape_flags(&self) -> ShapeFlags {
        (
            self.syntax,
            [self.word, self.whole_line, self.invert],
            self.case,
            self.kind,
            // -U and -P (CPU-only kinds) select other lines than the same
            // patterns without them.
            self.cpu_only,
        )
    }

    /// True when `shape` is this query's [`Query::shape_key`] (compared
    /// without a copy: a memo's lookup).
    pub(crate) fn has_shape(&self, shape: &QueryShape) -> bool {
        shape.1 == self.shape_flags() && shape.0 == self.patterns
    }

    /// [`Query::shape_key`] as the key of a memo, when the patterns hold at
    /// most [`Query::MEMO_MAX_BYTES`]: `None` above (the key is a copy of
    /// them, and a 100k-pattern list would cost more to copy and compare
    /// than what the memo saves).
    pub(crate) fn memo_key(&self) -> Option<QueryShape> {
        self.memoised().then(|| self.shape_key())
    }

    /// True when memos keep facts of this query ([`Query::memo_key`]).
    pub(crate) fn memoised(&self) -> bool {
        let bytes: usize = self.patterns.iter().map(Vec::len).sum();
        bytes <= Self::MEMO_MAX_BYTES
    }

    /// The most pattern bytes a memo keys on ([`Query::memo_key`]).
    pub(crate) const MEMO_MAX_BYTES: usize = 4096;

    /// The patterns, after splitting on newlines.
    pub fn patterns(&self) -> &[Vec<u8>] {
        &self.patterns
    }

    /// The syntax the patterns were read with.
    pub fn syntax(&self) -> Syntax {
        self.syntax
    }

    /// The query's shape after analysis.
    pub fn kind(&self) -> QueryKind {
        self.kind
    }

    /// The case folding in force.
    pub fn case(&self) -> CaseMode {
        self.case
    }

    /// True for `-w`.
    pub fn word(&self) -> bool {
        self.word
    }

    /// True for `-x`.
    pub fn whole_line(&self) -> bool {
        self.whole_line
    }

    /// True for `-v`.
    pub fn invert(&self) -> bool {
        self.invert
    }

    /// The plain literals to find, when every pattern is one.
    pub fn literals(&self) -> Option<&[Vec<u8>]> {
        self.literals.as_deref()
    }

    /// The lengths of the shortest and the longest of [`Query::literals`]
    /// (`None` when there are none).
    pub fn literal_lens(&self) -> Option<(usize, usize)> {
        self.literal_lens
    }

    /// The literals every match contains one of (`query::literals`), when
    /// the CPU matcher runs behind a required-literal prefilter: exact
    /// bytes, case variants listed. The GPU's tier 1 searches for them
    /// (`support::prefilter_support`).
    pub fn required_literals(&self) -> Option<&literals::RequiredLiterals> {
        self.matcher.prefilter().map(|p| p.literals())
    }

    /// Every candidate set of required literals (`query::literals::
    /// alternatives`), [`Query::required_literals`] first: tier 1 takes
    /// the one that finds the fewest lines of the corpus
    /// (`planner::tier1_literals`). Empty without required literals.
    /// The regex as fixed-length runs of byte classes (a few alternatives
    /// of them), when its matches are such (`query::classes`): tier 1's
    /// `scan` then answers it exactly, one pass an alternative. `None` for
    /// literal queries (they are literals already) and other regexes.
    pub fn class_set(&self) -> Option<Arc<classes::ClassSet>> {
        self.class_set
            .get_or_init(|| {
                if self.matcher.regex_pattern().is_none() || self.cpu_only.is_some() {
                    return None;
                }
                classes::ClassSet::for_query(self).map(Arc::new)
            })
            .clone()
    }

    /// A regex without a CPU prefilter (no literal of 3+ bytes) may still
    /// hold a rare byte (`@` in an email regex): its sets are those bytes
    /// (`query::literals::rare_byte_sets`), which only tier 1 weighs
    /// (the CPU's regex engine keeps its own scan).
    pub fn literal_alternatives(&self) -> &[literals::RequiredLiterals] {
        if let Some(p) = self.matcher.prefilter() {
            return p.alternatives();
        }
        self.rare_sets.get_or_init(|| {
            let Some(pattern) = self.matcher.regex_pattern() else {
                return Vec::new();
            };
            regex_syntax::ParserBuilder::new()
                .utf8(false)
                .multi_line(true)
                .case_insensitive(self.case != CaseMode::Sensitive)
                .build()
                .parse(pattern)
                .map_or(Vec::new(), |hir| literals::rare_byte_sets(&hir))
        })
    }

    /// The CPU searcher for [`Query::required_literals`].
    pub(crate) fn prefilter(&self) -> Option<&literals::Prefilter> {
        self.matcher.prefilter()
    }

    /// Which CPU matcher runs this query (`memmem`, `aho-corasick`, `regex`,
    /// `fuzzy`, `all-lines`).
    pub fn cpu_matcher_name(&self) -> &'static str {
        self.matcher.name()
    }

    /// True when `line` (without its terminator) matches, before `-v`.
    pub fn is_match_line(&self, line: &[u8]) -> bool {
        self.matcher.is_match_line(line)
    }

    /// The matches in `line`, left to right and non-overlapping, as byte
    /// ranges (for `-o`, colour and `--json` submatches). Inverted queries
    /// have none.
    pub fn find_iter_line(&self, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        self.matcher.find_iter_line_into(line, &mut out);
        out
    }

    /// [`Query::find_iter_line`] into `out` (cleared first): a printer
    /// reuses one vector for every line (`-o` on 20k lines: two
    /// allocations a line saved).
    pub fn find_iter_line_into(&self, line: &[u8], out: &mut Vec<std::ops::Range<usize>>) {
        out.clear();
        self.matcher.find_iter_line_into(line, out);
    }
}
