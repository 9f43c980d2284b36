//! The recursive-descent parser over [`lexer`](super::lexer)'s tokens.

use super::lexer::{lex, Tok};
use super::*;

/// Nesting past this is refused: a fuzzer's `((((...` must not overflow
/// the stack.
const MAX_DEPTH: usize = 64;

struct Parser {
    toks: Vec<(Tok, usize)>,
    at: usize,
    depth: usize,
}

pub(super) fn parse(src: &str) -> Result<Expr, ParseError> {
    let mut p = Parser {
        toks: lex(src)?,
        at: 0,
        depth: 0,
    };
    if p.peek() == &Tok::Eof {
        return Err(p.err("empty query: expected a stream selector such as {filename=\"app.log\"}"));
    }
    // A log query stands alone; everything else is a metric expression.
    let e = if p.peek() == &Tok::Op("{") {
        let log = p.log()?;
        Expr::Log(log)
    } else {
        Expr::Metric(p.sum_expr()?)
    };
    match p.peek() {
        Tok::Eof => Ok(e),
        Tok::Op("|") if matches!(e, Expr::Log(_)) => Err(p.pipeline_stage()),
        Tok::Ident(w) if w == "offset" => Err(p.err("`offset` is not supported by logsieve")),
        Tok::Op(op @ ("==" | "!=" | ">" | "<" | ">=" | "<=")) => Err(p.err(format!(
            "comparison `{op}` is not supported by logsieve (arithmetic + - * / % only)"
        ))),
        Tok::Ident(w) if w == "and" || w == "or" || w == "unless" => Err(p.err(format!(
            "`{w}` is not supported by logsieve (arithmetic + - * / % only)"
        ))),
        t => {
            let t = describe(t);
            Err(p.err(format!("unexpected {t} after the end of the query")))
        }
    }
}

/// A Loki pattern (`<_> level=<level> <_>`) as an anchored regex: each
/// `<_>` or `<name>` any text (shortest first), the rest literal.
pub(super) fn pattern_regex(p: &str) -> String {
    let mut out = String::from("^");
    let mut rest = p;
    while let Some(i) = rest.find('<') {
        let name = rest[i + 1..].find('>').map(|j| &rest[i + 1..i + 1 + j]);
        match name {
            Some(n)
                if n == "_"
                    || (!n.is_empty()
                        && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')) =>
            {
                out += &regex_syntax::escape(&rest[..i]);
                out += "(?s:.*?)";
                rest = &rest[i + n.len() + 2..];
            }
            _ => {
                out += &regex_syntax::escape(&rest[..=i]);
                rest = &rest[i + 1..];
            }
        }
    }
    out += &regex_syntax::escape(rest);
    out.push('$');
    out
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Str(s) => format!("string {s:?}"),
        Tok::Num(n) => format!("number {n}"),
        Tok::Duration(_) => "a duration".into(),
        Tok::Op(o) => format!("`{o}`"),
        Tok::Eof => "end of query".into(),
    }
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].0
    }
    fn pos(&self) -> usize {
        self.toks[self.at].1
    }
    fn bump(&mut self) -> Tok {
        let t = self.toks[self.at].0.clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }
    fn err(&self, msg: impl Into<String>) -> ParseError {
        ParseError::new(self.pos(), msg)
    }
    fn expect(&mut self, op: &'static str, what: &str) -> Result<(), ParseError> {
        if self.peek() == &Tok::Op(op) {
            self.bump();
            Ok(())
        } else {
            Err(self.err(format!(
                "expected `{op}` {what}, found {}",
                describe(self.peek())
            )))
        }
    }
    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    /// `| json` and other pipeline stages: named in the error.
    fn pipeline_stage(&mut self) -> ParseError {
        let at = self.pos();
        self.bump();
        let what = match self.peek() {
            Tok::Ident(w) => format!("pipeline stage `| {w}`"),
            t => format!("`|` followed by {}", describe(t)),
        };
        ParseError::new(
            at,
            format!("{what} is not supported by logsieve (line filters |= != |~ !~ only)"),
        )
    }

    fn log(&mut self) -> Result<LogExpr, ParseError> {
        let open = self.pos();
        self.expect("{", "to open a stream selector")?;
        let mut matchers = Vec::new();
        while self.peek() != &Tok::Op("}") {
            let name = match self.bump() {
                Tok::Ident(n) => n,
                t => {
                    self.at -= 1;
                    return Err(self.err(format!(
                        "expected a label name in the stream selector, found {}",
                        describe(&t)
                    )));
                }
            };
            let op = match self.peek() {
                Tok::Op("=") => MatchOp::Eq,
                Tok::Op("!=") => MatchOp::Neq,
                Tok::Op("=~") => MatchOp::Re,
                Tok::Op("!~") => MatchOp::Nre,
                t => {
                    return Err(self.err(format!(
                        "expected =, !=, =~ or !~ after label {name:?}, found {}",
                        describe(t)
                    )))
                }
            };
            self.bump();
            let vpos = self.pos();
            let value = match self.bump() {
                Tok::Str(s) => s,
                t => {
                    self.at -= 1;
                    return Err(self.err(format!(
                        "expected a quoted value for label {name:?}, found {}",
                        describe(&t)
                    )));
                }
            };
            if matches!(op, MatchOp::Re | MatchOp::Nre) {
                regex_syntax::Parser::new().parse(&value).map_err(|e| {
                    ParseError::new(
                        vpos,
                        format!(
                            "invalid regex {value:?} for label {name:?}: {}",
                            first_line(&e.to_string())
                        ),
                    )
                })?;
            }
            matchers.push(Matcher { name, op, value });
            match self.peek() {
                Tok::Op(",") => {
                    self.bump();
                }
                Tok::Op("}") => {}
                t => {
                    return Err(self.err(format!(
                        "expected `,` or `}}` in the stream selector, found {}",
                        describe(t)
                    )))
                }
            }
        }
        self.bump();
        // Loki's rule: a selector that every stream matches is refused.
        let matches_empty = |m: &Matcher| match m.op {
            MatchOp::Eq => m.value.is_empty(),
            MatchOp::Neq | MatchOp::Nre => true,
            MatchOp::Re => regex::Regex::new(&format!("^(?:{})$", m.value))
                .map(|r| r.is_match(""))
                .unwrap_or(true),
        };
        if matchers.iter().all(matches_empty) {
            return Err(ParseError::new(
                open,
                "queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~\".*\" does not meet this requirement, but app=~\".+\" will",
            ));
        }
        let mut filters = Vec::new();
        let (mut parsers, mut field_filters) = (Vec::new(), Vec::new());
        let mut numeric_filters = Vec::new();
        loop {
            if let Some(f) = self.numeric_filter() {
                numeric_filters.push(f);
                continue;
            }
            // `| name OP "value"`: a label filter, on a label the lines
            // carry, is a matcher (Grafana's Logs Drilldown writes level
            // and label filters this way); after a parser stage it may be
            // on an extracted field.
            if let Some(m) = self.label_filter()? {
                if parsers.is_empty() {
                    matchers.push(m);
                } else {
                    field_filters.push(m);
                }
                continue;
            }
            if let Some(p) = self.parser_stage()? {
                if let Some(p) = p {
                    parsers.push(p);
                }
                continue;
            }
            let (op, pattern) = match self.peek() {
                Tok::Op("|=") => (FilterOp::Contains, false),
                Tok::Op("!=") => (FilterOp::NotContains, false),
                Tok::Op("|~") => (FilterOp::Regex, false),
                Tok::Op("!~") => (FilterOp::NotRegex, false),
                // A pattern filter (`|> "<_> error <_>"`): the whole line
                // against the pattern, `<_>` and `<name>` any text.
                Tok::Op("|>") => (FilterOp::Regex, true),
                Tok::Op("!>") => (FilterOp::NotRegex, true),
                _ => break,
            };
            self.bump();
            let vpos = self.pos();
            let value = match self.bump() {
                Tok::Str(s) if pattern => pattern_regex(&s),
                Tok::Str(s) => s,
                t => {
                    self.at -= 1;
                    return Err(self.err(format!(
                        "expected a quoted string after a line filter, found {}",
                        describe(&t)
                    )));
                }
            };
            if op.regex() {
                regex_syntax::Parser::new().parse(&value).map_err(|e| {
                    ParseError::new(
                        vpos,
                        format!(
                            "invalid regex {value:?} in a line filter: {}",
                            first_line(&e.to_string())
                        ),
                    )
                })?;
            }
            filters.push(LineFilter { op, value });
        }
        if self.peek() == &Tok::Op("|") {
            return Err(self.pipeline_stage());
        }
        Ok(LogExpr {
            matchers,
            filters,
            parsers,
            field_filters,
            numeric_filters,
        })
    }

    /// `| name OP NUMBER|DURATION` (OP `>`, `>=`, `<`, `<=`, `==`, `=`,
    /// `!=`), or `None` (nothing consumed).
    fn numeric_filter(&mut self) -> Option<NumericFilter> {
        let (Some((Tok::Op("|"), _)), Some((Tok::Ident(name), _)), Some((Tok::Op(op), _))) = (
            self.toks.get(self.at),
            self.toks.get(self.at + 1),
            self.toks.get(self.at + 2),
        ) else {
            return None;
        };
        let op = match *op {
            ">" => CmpOp::Gt,
            ">=" => CmpOp::Ge,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            "==" | "=" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            _ => return None,
        };
        let (value, duration) = match self.toks.get(self.at + 3) {
            Some((Tok::Num(n), _)) => (*n, false),
            Some((Tok::Duration(ms), _)) => (*ms as f64 / 1000.0, true),
            _ => return None,
        };
        let name = name.clone();
        self.at += 4;
        Some(NumericFilter {
            name,
            op,
            value,
            duration,
        })
    }

    /// `| json`, `| logfmt` (`Some(Some(..))`) or `| drop a, b`
    /// (`Some(None)`); `None` (nothing consumed) for another stage. A
    /// parser followed by arguments is left for the caller's error.
    fn parser_stage(&mut self) -> Result<Option<Option<ParserStage>>, ParseError> {
        let (Some((Tok::Op("|"), _)), Some((Tok::Ident(w), _))) =
            (self.toks.get(self.at), self.toks.get(self.at + 1))
        else {
            return Ok(None);
        };
        let next = self.toks.get(self.at + 2).map(|t| &t.0);
        let ends = |t: Option<&Tok>| {
            matches!(
                t,
                None | Some(Tok::Eof | Tok::Op("|" | "|=" | "!=" | "|~" | "!~" | "[" | ")"))
            )
        };
        match w.as_str() {
            "json" | "logfmt" if ends(next) => {
                let p = if w == "json" {
                    ParserStage::Json
                } else {
                    ParserStage::Logfmt
                };
                self.at += 2;
                Ok(Some(Some(p)))
            }
            "drop" if matches!(next, Some(Tok::Ident(_))) => {
                self.at += 3;
                while self.peek() == &Tok::Op(",") {
                    self.bump();
                    match self.bump() {
                        Tok::Ident(_) => {}
                        t => {
                            self.at -= 1;
                            return Err(self.err(format!(
                                "expected a label name after `,` in `| drop`, found {}",
                                describe(&t)
                            )));
                        }
                    }
                }
                Ok(Some(None))
            }
            _ => Ok(None),
        }
    }

    /// `| name OP "value"` (OP `=`, `==`, `!=`, `=~`, `!~`) as a matcher, or
    /// `None` (nothing consumed) when the next stage is something else.
    fn label_filter(&mut self) -> Result<Option<Matcher>, ParseError> {
        let (Some((Tok::Op("|"), _)), Some((Tok::Ident(name), _)), Some((Tok::Op(op), _))) = (
            self.toks.get(self.at),
            self.toks.get(self.at + 1),
            self.toks.get(self.at + 2),
        ) else {
            return Ok(None);
        };
        let op = match *op {
            "=" | "==" => MatchOp::Eq,
            "!=" => MatchOp::Neq,
            "=~" => MatchOp::Re,
            "!~" => MatchOp::Nre,
            _ => return Ok(None),
        };
        let Some((Tok::Str(value), vpos)) = self.toks.get(self.at + 3) else {
            return Ok(None);
        };
        let (name, value, vpos) = (name.clone(), value.clone(), *vpos);
        if matches!(op, MatchOp::Re | MatchOp::Nre) {
            regex_syntax::Parser::new().parse(&value).map_err(|e| {
                ParseError::new(
                    vpos,
                    format!(
                        "invalid regex {value:?} for label {name:?}: {}",
                        first_line(&e.to_string())
                    ),
                )
            })?;
        }
        self.at += 4;
        Ok(Some(Matcher { name, op, value }))
    }

    fn sum_expr(&mut self) -> Result<MetricExpr, ParseError> {
        let mut lhs = self.mul_expr()?;
        loop {
            let op = match self.peek() {
                Tok::Op("+") => BinOp::Add,
                Tok::Op("-") => BinOp::Sub,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.mul_expr()?;
            lhs = MetricExpr::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
        }
    }

    fn mul_expr(&mut self) -> Result<MetricExpr, ParseError> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Op("*") => BinOp::Mul,
                Tok::Op("/") => BinOp::Div,
                Tok::Op("%") => BinOp::Mod,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.unary()?;
            lhs = MetricExpr::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
        }
    }

    fn unary(&mut self) -> Result<MetricExpr, ParseError> {
        self.enter()?;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<MetricExpr, ParseError> {
        let start = self.pos();
        match self.bump() {
            Tok::Num(n) => Ok(MetricExpr::Number(n)),
            Tok::Op("-") => match self.bump() {
                Tok::Num(n) => Ok(MetricExpr::Number(-n)),
                t => {
                    self.at -= 1;
                    Err(self.err(format!("expected a number after `-`, found {}", describe(&t))))
                }
            },
            Tok::Op("(") => {
                let e = self.sum_expr()?;
                self.expect(")", "to close `(`")?;
                Ok(e)
            }
            Tok::Op("{") => Err(ParseError::new(
                start,
                "a log query cannot be part of a metric expression: wrap it in a range function such as count_over_time({...}[5m])",
            )),
            Tok::Ident(name) => {
                if name == "vector" {
                    self.expect("(", "after `vector`")?;
                    let n = match self.bump() {
                        Tok::Num(n) => n,
                        Tok::Op("-") => match self.bump() {
                            Tok::Num(n) => -n,
                            t => {
                                self.at -= 1;
                                return Err(self.err(format!("expected a number in vector(), found {}", describe(&t))));
                            }
                        },
                        t => {
                            self.at -= 1;
                            return Err(self.err(format!("expected a number in vector(), found {}", describe(&t))));
                        }
                    };
                    self.expect(")", "to close vector(")?;
                    Ok(MetricExpr::Vector(n))
                } else if let Some(func) = RangeFn::from_name(&name) {
                    self.expect("(", &format!("after `{name}`"))?;
                    if self.peek() != &Tok::Op("{") {
                        return Err(self.err(format!(
                            "expected a stream selector in {name}(), found {}",
                            describe(self.peek())
                        )));
                    }
                    let log = self.log()?;
                    self.expect("[", "and a range such as [5m] after the log query")?;
                    let range_ms = match self.bump() {
                        Tok::Duration(ms) if ms > 0 => ms,
                        t => {
                            self.at -= 1;
                            return Err(self.err(format!("expected a positive duration such as 5m in the range, found {}", describe(&t))));
                        }
                    };
                    self.expect("]", "to close the range")?;
                    if let Tok::Ident(w) = self.peek() {
                        if w == "offset" {
                            return Err(self.err("`offset` is not supported by logsieve"));
                        }
                    }
                    self.expect(")", &format!("to close {name}("))?;
                    Ok(MetricExpr::Range {
                        func,
                        log,
                        range_ms,
                    })
                } else if let Some(op) = AggOp::from_name(&name) {
                    let mut grouping = self.grouping()?;
                    self.expect("(", &format!("after `{name}`"))?;
                    if matches!(self.peek(), Tok::Num(_)) {
                        return Err(self.err(format!(
                            "{name}() takes no parameter in logsieve (topk/quantile-style parameters are not supported)"
                        )));
                    }
                    let inner = self.sum_expr()?;
                    self.expect(")", &format!("to close {name}("))?;
                    if let Some(g) = self.grouping()? {
                        if grouping.is_some() {
                            return Err(ParseError::new(start, format!("{name}: by/without given twice")));
                        }
                        grouping = Some(g);
                    }
                    Ok(MetricExpr::Aggregate {
                        op,
                        grouping,
                        inner: Box::new(inner),
                    })
                } else {
                    Err(ParseError::new(start, unsupported_function(&name)))
                }
            }
            t => {
                self.at -= 1;
                Err(self.err(format!(
                    "expected a stream selector, a range function or an aggregation, found {}",
                    describe(&t)
                )))
            }
        }
    }

    fn grouping(&mut self) -> Result<Option<Grouping>, ParseError> {
        let without = match self.peek() {
            Tok::Ident(w) if w == "by" => false,
            Tok::Ident(w) if w == "without" => true,
            _ => return Ok(None),
        };
        self.bump();
        self.expect("(", "after by/without")?;
        let mut labels = Vec::new();
        while self.peek() != &Tok::Op(")") {
            match self.bump() {
                Tok::Ident(l) => labels.push(l),
                t => {
                    self.at -= 1;
                    return Err(self.err(format!("expected a label name, found {}", describe(&t))));
                }
            }
            match self.peek() {
                Tok::Op(",") => {
                    self.bump();
                }
                Tok::Op(")") => {}
                t => return Err(self.err(format!("expected `,` or `)`, found {}", describe(t)))),
            }
        }
        self.bump();
        Ok(Some(Grouping { without, labels }))
    }
}

fn first_line(s: &str) -> String {
    s.lines().last().unwrap_or(s).trim().to_string()
}

fn unsupported_function(name: &str) -> String {
    const KNOWN: &[&str] = &[
        "avg_over_time",
        "sum_over_time",
        "min_over_time",
        "max_over_time",
        "stddev_over_time",
        "stdvar_over_time",
        "quantile_over_time",
        "first_over_time",
        "last_over_time",
        "absent_over_time",
        "rate_counter",
        "topk",
        "bottomk",
        "stddev",
        "stdvar",
        "sort",
        "sort_desc",
        "label_replace",
    ];
    if KNOWN.contains(&name) {
        format!("`{name}` is not supported by logsieve (supported: count_over_time, rate, bytes_over_time, bytes_rate, sum, count, min, max, avg, vector)")
    } else {
        format!("unknown function or keyword `{name}` (expected a stream selector {{...}}, count_over_time, rate, bytes_over_time, bytes_rate, sum, count, min, max, avg or vector)")
    }
}
