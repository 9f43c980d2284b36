//! Which `WHERE` conjuncts the engine answers, as a predicate tree.
//!
//! DataFusion hands the `logs` table each top-level conjunct of a filter
//! ([`crate::table::LogsTable`]'s `supports_filters_pushdown`). One that
//! [`translate`] turns into a [`Pred`] is run by the engine and reported
//! `Exact`: DataFusion does not filter again. Anything else is left to
//! DataFusion, which filters the rows the scan yields.
//!
//! The tree is in negation normal form with SQL's three-valued logic: a
//! negated leaf selects the rows where the leaf is *false*, not null
//! (`NOT level = 'INFO'` skips lines without a level, as SQL does), and
//! De Morgan's laws hold for AND/OR under NOT in Kleene logic.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};

/// The columns a predicate can be about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// `line`: a text test the engine searches for.
    Line,
    /// `time`: a window over the time column.
    Time,
    /// `file`: the document's name.
    File,
    /// A field column (`level`, `host`, a `--field`): its index in the
    /// session's columns.
    Field(usize),
}

/// A test on `line`, as one engine query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// The pattern: a literal, or a regex when `regex`.
    pub pattern: String,
    /// `pattern` is a regex (else a literal).
    pub regex: bool,
    /// Case-insensitive (`ILIKE`, `~*`, `regexp_like(.., 'i')`).
    pub fold: bool,
    /// The whole line equals the literal (`line = '...'`), or matches
    /// the regex whole (`grep(.., 'x')`).
    pub whole: bool,
    /// Only matches that are whole words (`grep(.., 'w')`, as `-w`).
    pub word: bool,
}

/// `grep(line, 'pattern', 'flags')` as an engine text test: the pattern
/// is a regex unless the flags hold `F`; `i` ignores case, `w` selects
/// whole words and `x` whole lines, as the command line's `-F -i -w -x`.
pub fn grep_text(pattern: &str, flags: &str) -> Result<Text, String> {
    let mut t = Text {
        pattern: pattern.to_string(),
        regex: true,
        fold: false,
        whole: false,
        word: false,
    };
    for c in flags.chars() {
        match c {
            'F' => t.regex = false,
            'i' => t.fold = true,
            'w' => t.word = true,
            'x' => t.whole = true,
            _ => {
                return Err(format!(
                    "grep(line, pattern, flags): unknown flag {c:?} (F: literal, i: ignore case, w: words, x: whole lines)"
                ))
            }
        }
    }
    Ok(t)
}

/// One predicate the engine answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Leaf {
    /// A text test on `line`.
    Text(Text),
    /// `lo <= time < hi` (ms; either end open). Null time: null.
    Time {
        /// Lower bound (inclusive).
        lo: Option<i64>,
        /// Upper bound (exclusive).
        hi: Option<i64>,
    },
    /// `time IS NULL`.
    TimeNull,
    /// The field equals one of `values`. No value: null.
    Field {
        /// The field's index in the session's columns.
        field: usize,
        /// The values (bytes of the UTF-8 literals).
        values: Vec<Vec<u8>>,
    },
    /// `field IS NULL`.
    FieldNull(usize),
    /// `file` is one of these names.
    File(Vec<String>),
}

impl Leaf {
    /// True when the engine's search answers it (else the columns do).
    pub fn is_text(&self) -> bool {
        matches!(self, Leaf::Text(_))
    }
}

/// A predicate tree in negation normal form.
#[derive(Clone, Debug, PartialEq)]
pub enum Pred {
    /// A leaf; `true` selects the rows where it is false (not null).
    Leaf(Leaf, bool),
    /// Every child holds.
    And(Vec<Pred>),
    /// Some child holds.
    Or(Vec<Pred>),
    /// Every row, or none.
    Const(bool),
}

impl Pred {
    /// True when some leaf needs the engine's search.
    pub fn has_text(&self) -> bool {
        match self {
            Pred::Leaf(l, _) => l.is_text(),
            Pred::And(v) | Pred::Or(v) => v.iter().any(Pred::has_text),
            Pred::Const(_) => false,
        }
    }
}

/// `e` as a predicate the engine answers exactly, or `None` (DataFusion
/// then filters). `column` names the table's columns.
pub fn translate(e: &Expr, column: &dyn Fn(&str) -> Option<ColumnKind>) -> Option<Pred> {
    tr(e, false, column)
}

fn tr(e: &Expr, neg: bool, col: &dyn Fn(&str) -> Option<ColumnKind>) -> Option<Pred> {
    match e {
        Expr::Not(x) => tr(x, !neg, col),
        Expr::Literal(ScalarValue::Boolean(Some(b)), _) => Some(Pred::Const(*b != neg)),
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::And | Operator::Or) =>
        {
            let (l, r) = (tr(left, neg, col)?, tr(right, neg, col)?);
            // NOT (a AND b) = NOT a OR NOT b, and the dual.
            Some(if (*op == Operator::And) != neg {
                Pred::And(vec![l, r])
            } else {
                Pred::Or(vec![l, r])
            })
        }
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char,
            case_insensitive,
        }) => {
            if kind(expr, col)? != ColumnKind::Line {
                return None;
            }
            // DataFusion takes only `\` as the escape: another is its
            // error, pushed or not.
            if escape_char.is_some_and(|c| c != '\\') {
                return None;
            }
            let p = string(pattern)?;
            let leaf = like(&p, '\\', *case_insensitive)?;
            Some(match leaf {
                Some(t) => Pred::Leaf(Leaf::Text(t), neg != *negated),
                // `%`: every line (never null).
                None => Pred::Const(neg == *negated),
            })
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => binary(left, *op, right, neg, col),
        Expr::InList(l) => {
            let values: Vec<String> = l.list.iter().map(string).collect::<Option<_>>()?;
            let neg = neg != l.negated;
            match kind(&l.expr, col)? {
                ColumnKind::Field(f) => Some(Pred::Leaf(
                    Leaf::Field {
                        field: f,
                        values: values.into_iter().map(String::into_bytes).collect(),
                    },
                    neg,
                )),
                ColumnKind::File => Some(Pred::Leaf(Leaf::File(values), neg)),
                ColumnKind::Line => {
                    let leaves = values
                        .into_iter()
                        .map(|v| Pred::Leaf(Leaf::Text(whole(v)), neg))
                        .collect();
                    Some(if neg {
                        Pred::And(leaves)
                    } else {
                        Pred::Or(leaves)
                    })
                }
                ColumnKind::Time => None,
            }
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            if kind(expr, col)? != ColumnKind::Time {
                return None;
            }
            let (lo, hi) = (timestamp_ns(low)?, timestamp_ns(high)?);
            let leaf = Leaf::Time {
                lo: Some(ceil_ms(lo)),
                hi: Some(floor_ms(hi).saturating_add(1)),
            };
            Some(Pred::Leaf(leaf, neg != *negated))
        }
        Expr::IsNull(x) | Expr::IsNotNull(x) => {
            let leaf = match kind(x, col)? {
                ColumnKind::Time => Leaf::TimeNull,
                ColumnKind::Field(f) => Leaf::FieldNull(f),
                // Never null.
                ColumnKind::Line | ColumnKind::File => {
                    return Some(Pred::Const(matches!(e, Expr::IsNotNull(_)) != neg))
                }
            };
            Some(Pred::Leaf(leaf, neg != matches!(e, Expr::IsNotNull(_))))
        }
        Expr::ScalarFunction(f) => {
            let t = text_function(f.func.name(), &f.args, col)?;
            Some(Pred::Leaf(Leaf::Text(t), neg))
        }
        _ => None,
    }
}

/// `contains(line, 'x')`, `starts_with`, `ends_with`, `regexp_like(line,
/// 're' [, 'i'])`.
fn text_function(
    name: &str,
    args: &[Expr],
    col: &dyn Fn(&str) -> Option<ColumnKind>,
) -> Option<Text> {
    let first = args.first()?;
    if kind(first, col)? != ColumnKind::Line {
        return None;
    }
    let arg = string(args.get(1)?)?;
    let lit = |pattern: String, regex| Text {
        pattern,
        regex,
        fold: false,
        whole: false,
        word: false,
    };
    match (name, args.len()) {
        ("grep", 2) => grep_text(&arg, "").ok(),
        ("grep", 3) => grep_text(&arg, &string(&args[2])?).ok(),
        ("contains", 2) => Some(lit(arg, false)),
        ("starts_with", 2) => Some(lit(format!("^{}", regex_syntax_escape(&arg)), true)),
        ("ends_with", 2) => Some(lit(format!("{}$", regex_syntax_escape(&arg)), true)),
        ("regexp_like", 2) => Some(lit(arg, true)),
        ("regexp_like", 3) => match string(&args[2])?.as_str() {
            "" => Some(lit(arg, true)),
            "i" => Some(Text {
                fold: true,
                ..lit(arg, true)
            }),
            _ => None,
        },
        _ => None,
    }
}

fn binary(
    left: &Expr,
    op: Operator,
    right: &Expr,
    neg: bool,
    col: &dyn Fn(&str) -> Option<ColumnKind>,
) -> Option<Pred> {
    // `strpos(line, 'x') > 0` and its forms: contains.
    if let Expr::ScalarFunction(f) = left {
        if matches!(f.func.name(), "strpos" | "instr" | "position") && f.args.len() == 2 {
            let n = integer(right)?;
            let holds = match op {
                Operator::Gt if n == 0 => true,
                Operator::GtEq if n == 1 => true,
                Operator::NotEq if n == 0 => true,
                Operator::Eq if n == 0 => false,
                _ => return None,
            };
            let t = text_function("contains", &f.args, col)?;
            return Some(Pred::Leaf(Leaf::Text(t), neg == holds));
        }
    }
    // The column on the left.
    let (c, op, lit) = match (kind(left, col), kind(right, col)) {
        (Some(c), None) => (c, op, right),
        (None, Some(c)) => (c, op.swap()?, left),
        _ => return None,
    };
    match (c, op) {
        (ColumnKind::Line, Operator::RegexMatch | Operator::RegexIMatch) => {
            let t = Text {
                pattern: string(lit)?,
                regex: true,
                fold: op == Operator::RegexIMatch,
                whole: false,
                word: false,
            };
            Some(Pred::Leaf(Leaf::Text(t), neg))
        }
        (ColumnKind::Line, Operator::RegexNotMatch | Operator::RegexNotIMatch) => {
            let t = Text {
                pattern: string(lit)?,
                regex: true,
                fold: op == Operator::RegexNotIMatch,
                whole: false,
                word: false,
            };
            Some(Pred::Leaf(Leaf::Text(t), !neg))
        }
        (ColumnKind::Line, Operator::Eq | Operator::NotEq) => Some(Pred::Leaf(
            Leaf::Text(whole(string(lit)?)),
            neg != (op == Operator::NotEq),
        )),
        (ColumnKind::Field(f), Operator::Eq | Operator::NotEq) => Some(Pred::Leaf(
            Leaf::Field {
                field: f,
                values: vec![string(lit)?.into_bytes()],
            },
            neg != (op == Operator::NotEq),
        )),
        (ColumnKind::File, Operator::Eq | Operator::NotEq) => Some(Pred::Leaf(
            Leaf::File(vec![string(lit)?]),
            neg != (op == Operator::NotEq),
        )),
        (ColumnKind::Time, _) => {
            let v = timestamp_ns(lit)?;
            // time (ms) against a literal in ns: exact bounds in ms.
            let (lo, hi) = match op {
                Operator::Gt => (Some(floor_ms(v).saturating_add(1)), None),
                Operator::GtEq => (Some(ceil_ms(v)), None),
                Operator::Lt => (None, Some(ceil_ms(v))),
                Operator::LtEq => (None, Some(floor_ms(v).saturating_add(1))),
                Operator::Eq if v.rem_euclid(1_000_000) == 0 => {
                    let ms = floor_ms(v);
                    (Some(ms), Some(ms.saturating_add(1)))
                }
                // A time with a fraction of a millisecond equals no line's.
                Operator::Eq => (Some(1), Some(0)),
                _ => return None,
            };
            Some(Pred::Leaf(Leaf::Time { lo, hi }, neg))
        }
        _ => None,
    }
}

fn whole(v: String) -> Text {
    Text {
        pattern: v,
        regex: false,
        fold: false,
        whole: true,
        word: false,
    }
}

/// A `LIKE` pattern as an engine text test; `Some(None)` for one that
/// matches every line (`%`), `None` when it holds U+FFFD (which stands
/// for invalid bytes in `line`: the engine sees the bytes).
fn like(p: &str, escape: char, fold: bool) -> Option<Option<Text>> {
    enum Tok {
        Lit(char),
        One,
        Many,
    }
    if p.contains('\u{FFFD}') {
        return None;
    }
    let mut toks = Vec::new();
    let mut it = p.chars();
    while let Some(c) = it.next() {
        toks.push(match c {
            c if c == escape => Tok::Lit(it.next().unwrap_or(escape)),
            '%' => Tok::Many,
            '_' => Tok::One,
            c => Tok::Lit(c),
        });
    }
    let lead = toks.iter().take_while(|t| matches!(t, Tok::Many)).count();
    let trail = toks[lead..]
        .iter()
        .rev()
        .take_while(|t| matches!(t, Tok::Many))
        .count();
    let mid = &toks[lead..toks.len() - trail];
    if mid.is_empty() && lead + trail > 0 {
        return Some(None);
    }
    let lits: Option<String> = mid
        .iter()
        .map(|t| match t {
            Tok::Lit(c) => Some(*c),
            _ => None,
        })
        .collect();
    let text = |pattern, regex, whole| Text {
        pattern,
        regex,
        fold,
        whole,
        word: false,
    };
    Some(Some(match lits {
        Some(s) if lead > 0 && trail > 0 => text(s, false, false),
        Some(s) if lead == 0 && trail == 0 => text(s, false, true),
        _ => {
            let mut re = String::from("(?s)");
            if lead == 0 {
                re.push('^');
            }
            for t in mid {
                match t {
                    Tok::Lit(c) => re.push_str(&regex_syntax_escape(&c.to_string())),
                    Tok::One => re.push('.'),
                    Tok::Many => re.push_str(".*"),
                }
            }
            if trail == 0 {
                re.push('$');
            }
            text(re, true, false)
        }
    }))
}

/// The regex that matches `s` literally.
fn regex_syntax_escape(s: &str) -> String {
    regex::escape(s)
}

/// The column `e` names (through a cast to a string type).
fn kind(e: &Expr, col: &dyn Fn(&str) -> Option<ColumnKind>) -> Option<ColumnKind> {
    match e {
        Expr::Column(c) => col(&c.name),
        Expr::Cast(c) if c.field.data_type().is_string() => match kind(&c.expr, col)? {
            k @ (ColumnKind::Line | ColumnKind::File | ColumnKind::Field(_)) => Some(k),
            ColumnKind::Time => None,
        },
        _ => None,
    }
}

fn literal(e: &Expr) -> Option<&ScalarValue> {
    match e {
        Expr::Literal(v, _) => Some(v),
        _ => None,
    }
}

/// A string literal (null: `None`).
fn string(e: &Expr) -> Option<String> {
    fn of(v: &ScalarValue) -> Option<String> {
        match v {
            ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s) => {
                s.clone()
            }
            ScalarValue::Dictionary(_, inner) => of(inner),
            _ => None,
        }
    }
    of(literal(e)?)
}

fn integer(e: &Expr) -> Option<i64> {
    match literal(e)? {
        ScalarValue::Int8(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int16(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int32(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int64(Some(v)) => Some(*v),
        ScalarValue::UInt8(Some(v)) => Some(i64::from(*v)),
        ScalarValue::UInt16(Some(v)) => Some(i64::from(*v)),
        ScalarValue::UInt32(Some(v)) => Some(i64::from(*v)),
        ScalarValue::UInt64(Some(v)) => i64::try_from(*v).ok(),
        _ => None,
    }
}

/// A timestamp literal in ns (any unit; the zone does not move an
/// instant).
fn timestamp_ns(e: &Expr) -> Option<i128> {
    let v = match literal(e)? {
        ScalarValue::TimestampSecond(Some(v), _) => i128::from(*v) * 1_000_000_000,
        ScalarValue::TimestampMillisecond(Some(v), _) => i128::from(*v) * 1_000_000,
        ScalarValue::TimestampMicrosecond(Some(v), _) => i128::from(*v) * 1_000,
        ScalarValue::TimestampNanosecond(Some(v), _) => i128::from(*v),
        _ => return None,
    };
    Some(v)
}

fn floor_ms(ns: i128) -> i64 {
    ns.div_euclid(1_000_000)
        .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

fn ceil_ms(ns: i128) -> i64 {
    (-(-ns).div_euclid(1_000_000)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(pattern: &str, regex: bool, fold: bool, whole: bool) -> Option<Option<Text>> {
        Some(Some(Text {
            pattern: pattern.into(),
            regex,
            fold,
            whole,
            word: false,
        }))
    }

    #[test]
    fn like_patterns_become_the_cheapest_engine_query() {
        assert_eq!(like("%x%", '\\', false), t("x", false, false, false));
        assert_eq!(like("%%x%%", '\\', true), t("x", false, true, false));
        assert_eq!(like("abc", '\\', false), t("abc", false, false, true));
        assert_eq!(like("a%", '\\', false), t("(?s)^a", true, false, false));
        assert_eq!(like("%a", '\\', false), t("(?s)a$", true, false, false));
        assert_eq!(like("%a_b%", '\\', false), t("(?s)a.b", true, false, false));
        assert_eq!(
            like("%a%b%", '\\', false),
            t("(?s)a.*b", true, false, false)
        );
        assert_eq!(like("%1.2%", '\\', false), t("1.2", false, false, false));
        assert_eq!(like("%a\\%b%", '\\', false), t("a%b", false, false, false));
        assert_eq!(like("%a!_b%", '!', false), t("a_b", false, false, false));
        assert_eq!(
            like("x.y%", '\\', false),
            t("(?s)^x\\.y", true, false, false)
        );
        assert_eq!(like("%", '\\', false), Some(None));
        assert_eq!(like("%%", '\\', false), Some(None));
        assert_eq!(like("", '\\', false), t("", false, false, true));
        assert_eq!(like("%\u{FFFD}%", '\\', false), None);
    }

    #[test]
    fn bounds_in_ms_from_literals_in_any_unit() {
        assert_eq!(floor_ms(1_500_000), 1);
        assert_eq!(ceil_ms(1_500_000), 2);
        assert_eq!(ceil_ms(2_000_000), 2);
        assert_eq!(floor_ms(-1), -1);
        assert_eq!(ceil_ms(-1), 0);
        assert_eq!(floor_ms(i128::MAX), i64::MAX);
    }
}
