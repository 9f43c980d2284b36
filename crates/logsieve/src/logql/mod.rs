//! LogQL, the subset `logsieve serve`'s Loki API answers: a hand-written
//! lexer and recursive-descent parser, a pure function ([`parse`]) with
//! byte positions in its errors (the fuzz target calls it directly).
//!
//! The grammar covered:
//!
//! ```text
//! expr     := sum_expr
//! sum_expr := mul_expr (("+" | "-") mul_expr)*
//! mul_expr := unary (("*" | "/" | "%") unary)*
//! unary    := NUMBER | "vector" "(" NUMBER ")" | "(" expr ")"
//!           | RANGE_FN "(" log "[" DURATION "]" ")"
//!           | AGG [grouping] "(" expr ")" [grouping]
//!           | log                                      (only as the whole query)
//! log      := "{" matcher ("," matcher)* [","] "}" stage*
//! matcher  := LABEL ("=" | "!=" | "=~" | "!~") STRING
//! stage    := FILTER STRING | "|" LABEL ("=" | "==" | "!=" | "=~" | "!~") STRING
//!           | "|" "json" | "|" "logfmt" | "|" "drop" LABEL ("," LABEL)*
//!           | "|" LABEL (">" | ">=" | "<" | "<=" | "==" | "!=") (NUMBER | DURATION)
//! FILTER   := "|=" | "!=" | "|~" | "!~" | "|>" | "!>"   (`|>`: a Loki pattern)
//! RANGE_FN := count_over_time | rate | bytes_over_time | bytes_rate
//! AGG      := sum | count | min | max | avg
//! grouping := ("by" | "without") "(" [LABEL ("," LABEL)*] ")"
//! ```
//!
//! A label filter stage (`| level="ERROR"`) compares a label the lines
//! carry, as a matcher does, and is parsed as one (appended to
//! [`LogExpr::matchers`]); after a parser stage (`| json`, `| logfmt`,
//! without arguments) it goes to [`LogExpr::field_filters`], to compare a
//! label or an extracted field. `| drop NAMES` is accepted and has no
//! effect (no stage here adds labels to drop). Anything else — parsers
//! with arguments, numeric label filters, `line_format`, `offset`,
//! `unwrap`, other functions — is an error naming what is not supported
//! and where.
//!
//! # Example
//!
//! ```
//! use logsieve::logql::{parse, Expr, FilterOp};
//!
//! let e = parse(r#"{filename="app.log", level=~"ERROR|WARN"} |= "timeout" != "retry""#).unwrap();
//! let Expr::Log(log) = e else { unreachable!() };
//! assert_eq!(log.matchers.len(), 2);
//! assert_eq!(log.filters[1].op, FilterOp::NotContains);
//!
//! let err = parse(r#"{filename="app.log"} | unpack"#).unwrap_err();
//! assert_eq!(err.pos, 21);
//! ```

mod lexer;
mod parser;
#[cfg(test)]
mod tests;

pub use lexer::duration_ms;

/// A parsed query.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A log query: streams of lines.
    Log(LogExpr),
    /// A metric query: series of numbers.
    Metric(MetricExpr),
}

/// A stream selector and its line filters.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LogExpr {
    /// The label matchers (at least one), and the label filter stages
    /// written before any parser stage.
    pub matchers: Vec<Matcher>,
    /// The line filters, in order (all must pass).
    pub filters: Vec<LineFilter>,
    /// The parser stages (`| json`, `| logfmt`), in order.
    pub parsers: Vec<ParserStage>,
    /// The label filter stages written after a parser stage: on a label
    /// of the line as a matcher, else on the field the parsers extract
    /// from the line (a line without it has it empty).
    pub field_filters: Vec<Matcher>,
    /// Numeric label filter stages (`| latency_ms > 100`, `| dur >= 5ms`),
    /// on a label or a parsed field.
    pub numeric_filters: Vec<NumericFilter>,
}

/// `| name OP NUMBER` or `| name OP DURATION`.
#[derive(Clone, Debug, PartialEq)]
pub struct NumericFilter {
    /// The label or field.
    pub name: String,
    /// The comparison.
    pub op: CmpOp,
    /// The number, or the duration in seconds.
    pub value: f64,
    /// True when written as a duration: the line's value is read as one
    /// (Go's form, `1.5s`, `200ms`), else as a number.
    pub duration: bool,
}

/// A numeric comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==` or `=`
    Eq,
    /// `!=`
    Ne,
}

impl CmpOp {
    /// `a OP b`.
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// A parser stage without arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParserStage {
    /// `| json`: a JSON object's keys, nested ones joined by `_`.
    Json,
    /// `| logfmt`: `key=value` pairs.
    Logfmt,
}

/// `label OP "value"`.
#[derive(Clone, Debug, PartialEq)]
pub struct Matcher {
    /// The label's name.
    pub name: String,
    /// How it is compared.
    pub op: MatchOp,
    /// The value or the regex (anchored at both ends, as in Prometheus).
    pub value: String,
}

/// A label matcher's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchOp {
    /// `=`
    Eq,
    /// `!=`
    Neq,
    /// `=~` (the whole value)
    Re,
    /// `!~`
    Nre,
}

/// `|= "text"` and its kin.
#[derive(Clone, Debug, PartialEq)]
pub struct LineFilter {
    /// The operator.
    pub op: FilterOp,
    /// The literal or the regex (unanchored: it matches anywhere in the line).
    pub value: String,
}

/// A line filter's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterOp {
    /// `|=`: the line contains the literal.
    Contains,
    /// `!=`: it does not.
    NotContains,
    /// `|~`: the regex matches somewhere in the line.
    Regex,
    /// `!~`: it does not.
    NotRegex,
}

impl FilterOp {
    /// True for `!=` and `!~`.
    pub fn negated(self) -> bool {
        matches!(self, FilterOp::NotContains | FilterOp::NotRegex)
    }
    /// True for `|~` and `!~`.
    pub fn regex(self) -> bool {
        matches!(self, FilterOp::Regex | FilterOp::NotRegex)
    }
}

/// A metric expression.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricExpr {
    /// `count_over_time({...} |= "x" [5m])` and its kin.
    Range {
        /// The function.
        func: RangeFn,
        /// The lines counted.
        log: LogExpr,
        /// The range, in ms.
        range_ms: i64,
    },
    /// `sum by (host) (...)`.
    Aggregate {
        /// The operator.
        op: AggOp,
        /// `by`/`without`, when given.
        grouping: Option<Grouping>,
        /// What is aggregated.
        inner: Box<MetricExpr>,
    },
    /// A number (a scalar).
    Number(f64),
    /// `vector(N)`: one series without labels.
    Vector(f64),
    /// `a + b` and its kin: series matched by equal label sets, or a
    /// scalar applied to every series.
    Binary {
        /// The operator.
        op: BinOp,
        /// Left side.
        lhs: Box<MetricExpr>,
        /// Right side.
        rhs: Box<MetricExpr>,
    },
}

/// A range function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeFn {
    /// Lines in the range.
    CountOverTime,
    /// Lines per second in the range.
    Rate,
    /// Bytes of the lines in the range.
    BytesOverTime,
    /// Bytes per second in the range.
    BytesRate,
}

impl RangeFn {
    fn from_name(s: &str) -> Option<RangeFn> {
        Some(match s {
            "count_over_time" => RangeFn::CountOverTime,
            "rate" => RangeFn::Rate,
            "bytes_over_time" => RangeFn::BytesOverTime,
            "bytes_rate" => RangeFn::BytesRate,
            _ => return None,
        })
    }
}

/// An aggregation operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggOp {
    /// The sum of the values.
    Sum,
    /// How many series.
    Count,
    /// The smallest value.
    Min,
    /// The largest value.
    Max,
    /// The mean.
    Avg,
}

impl AggOp {
    fn from_name(s: &str) -> Option<AggOp> {
        Some(match s {
            "sum" => AggOp::Sum,
            "count" => AggOp::Count,
            "min" => AggOp::Min,
            "max" => AggOp::Max,
            "avg" => AggOp::Avg,
            _ => return None,
        })
    }
}

/// An arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
}

impl BinOp {
    /// Applies the operator (Prometheus' float rules: `x / 0` is ±Inf or NaN).
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Mod => a % b,
        }
    }
}

/// `by (a, b)` or `without (a, b)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Grouping {
    /// True for `without`.
    pub without: bool,
    /// The labels.
    pub labels: Vec<String>,
}

/// Why a query does not parse, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The byte offset in the query.
    pub pos: usize,
    /// What is wrong.
    pub message: String,
    /// 1-based line and column (in characters) of `pos`, as Loki reports them.
    pub line: usize,
    /// See `line`.
    pub col: usize,
}

impl ParseError {
    fn new(pos: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            pos,
            message: message.into(),
            line: 0,
            col: 0,
        }
    }

    fn locate(mut self, src: &str) -> ParseError {
        let pos = self.pos.min(src.len());
        let before = src.get(..pos).unwrap_or(src);
        self.line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        self.col = before[line_start..].chars().count() + 1;
        self
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "parse error at line {}, col {}: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses a LogQL query of the supported subset. Never panics: any input
/// is a query or an error with its byte position.
pub fn parse(src: &str) -> Result<Expr, ParseError> {
    parser::parse(src).map_err(|e| e.locate(src))
}
