use super::*;

fn log(q: &str) -> LogExpr {
    match parse(q) {
        Ok(Expr::Log(l)) => l,
        other => panic!("{q}: {other:?}"),
    }
}

fn metric(q: &str) -> MetricExpr {
    match parse(q) {
        Ok(Expr::Metric(m)) => m,
        other => panic!("{q}: {other:?}"),
    }
}

fn m(name: &str, op: MatchOp, value: &str) -> Matcher {
    Matcher {
        name: name.into(),
        op,
        value: value.into(),
    }
}

#[test]
fn selectors_and_filters() {
    let l = log(r#"{filename="a.log",host!="web-01", level=~"ERROR|WARN", user!~"u1.*",}"#);
    assert_eq!(
        l.matchers,
        vec![
            m("filename", MatchOp::Eq, "a.log"),
            m("host", MatchOp::Neq, "web-01"),
            m("level", MatchOp::Re, "ERROR|WARN"),
            m("user", MatchOp::Nre, "u1.*"),
        ]
    );
    assert!(l.filters.is_empty());
    let l = log(r#"{host="h"} |= "a b" != `c\d` |~ "x\\d+" !~ `(?i)y`"#);
    let ops: Vec<_> = l.filters.iter().map(|f| (f.op, f.value.as_str())).collect();
    assert_eq!(
        ops,
        vec![
            (FilterOp::Contains, "a b"),
            (FilterOp::NotContains, r"c\d"),
            (FilterOp::Regex, r"x\d+"),
            (FilterOp::NotRegex, "(?i)y"),
        ]
    );
    // Go escapes in double quotes.
    let l = log("{host=\"a\\\"b\\n\\u00e9\\x41\"}");
    assert_eq!(l.matchers[0].value, "a\"b\né\x41");
    // A comment.
    let l = log("{host=\"a\"} # the rest\n |= \"x\"");
    assert_eq!(l.filters.len(), 1);
}

#[test]
fn metric_queries() {
    let e = metric(r#"count_over_time({filename="a.log"} |= "x" [5m])"#);
    assert_eq!(
        e,
        MetricExpr::Range {
            func: RangeFn::CountOverTime,
            log: LogExpr {
                matchers: vec![m("filename", MatchOp::Eq, "a.log")],
                filters: vec![LineFilter {
                    op: FilterOp::Contains,
                    value: "x".into()
                }],
                ..Default::default()
            },
            range_ms: 300_000,
        }
    );
    for (q, func, ms) in [
        (r#"rate({host="h"}[1h30m])"#, RangeFn::Rate, 5_400_000),
        (
            r#"bytes_over_time({host="h"}[500ms])"#,
            RangeFn::BytesOverTime,
            500,
        ),
        (
            r#"bytes_rate({host="h"}[1d])"#,
            RangeFn::BytesRate,
            86_400_000,
        ),
    ] {
        match metric(q) {
            MetricExpr::Range {
                func: f, range_ms, ..
            } => {
                assert_eq!((f, range_ms), (func, ms), "{q}")
            }
            other => panic!("{q}: {other:?}"),
        }
    }
    let by_before = metric(r#"sum by (level, host) (rate({host=~".+"}[1m]))"#);
    let by_after = metric(r#"sum(rate({host=~".+"}[1m])) by (level, host)"#);
    assert_eq!(by_before, by_after);
    match by_before {
        MetricExpr::Aggregate { op, grouping, .. } => {
            assert_eq!(op, AggOp::Sum);
            assert_eq!(
                grouping,
                Some(Grouping {
                    without: false,
                    labels: vec!["level".into(), "host".into()]
                })
            );
        }
        other => panic!("{other:?}"),
    }
    match metric(r#"count without (host) (count_over_time({level="ERROR"}[5m]))"#) {
        MetricExpr::Aggregate { op, grouping, .. } => {
            assert_eq!(op, AggOp::Count);
            assert!(grouping.unwrap().without);
        }
        other => panic!("{other:?}"),
    }
    // Grafana's health check, and precedence: 1 + 2 * 3.
    assert_eq!(
        metric("vector(1)+vector(1)"),
        MetricExpr::Binary {
            op: BinOp::Add,
            lhs: Box::new(MetricExpr::Vector(1.0)),
            rhs: Box::new(MetricExpr::Vector(1.0)),
        }
    );
    match metric("1 + 2 * 3") {
        MetricExpr::Binary {
            op: BinOp::Add,
            rhs,
            ..
        } => {
            assert!(matches!(*rhs, MetricExpr::Binary { op: BinOp::Mul, .. }))
        }
        other => panic!("{other:?}"),
    }
}

/// Invalid queries: the byte position and words of each error.
#[test]
fn errors_carry_positions() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "empty query"),
        ("   ", 3, "empty query"),
        (
            r#"{filename="a"} | unpack"#,
            15,
            "pipeline stage `| unpack`",
        ),
        (
            r#"{filename="a"} |= "x" | logfmt --strict"#,
            22,
            "pipeline stage `| logfmt`",
        ),
        (
            r#"{filename="a"} | line_format "{{.x}}""#,
            15,
            "line_format",
        ),
        (r#"{filename="a""#, 13, "expected `,` or `}`"),
        (r#"{filename=a}"#, 10, "quoted value"),
        (r#"{filename=="a"}"#, 9, "expected =, !=, =~ or !~"),
        (r#"{="a"}"#, 1, "label name"),
        (r#"{filename="a}"#, 10, "unterminated string"),
        (
            r#"{host=~".*"}"#,
            0,
            "at least one regexp or equality matcher",
        ),
        (r#"{host!="x"}"#, 0, "empty-compatible"),
        (r#"{host=""}"#, 0, "empty-compatible"),
        (r#"{host=~"("}"#, 7, "invalid regex"),
        (r#"{host="a"} |~ "(""#, 14, "invalid regex"),
        (r#"{host="a"} |= x"#, 14, "quoted string"),
        (r#"{host="a"} |= "\q""#, 15, "invalid escape"),
        (r#"count_over_time({host="a"})"#, 26, "range such as [5m]"),
        (r#"count_over_time({host="a"}[5x])"#, 27, "not a duration"),
        (
            r#"count_over_time({host="a"}[0s])"#,
            27,
            "positive duration",
        ),
        (
            r#"count_over_time({host="a"}[5m] offset 1h)"#,
            31,
            "`offset`",
        ),
        (
            r#"count_over_time({host="a"}[5m]) offset 1h"#,
            32,
            "`offset`",
        ),
        (
            r#"avg_over_time({host="a"}[5m])"#,
            0,
            "`avg_over_time` is not supported",
        ),
        (
            r#"topk(3, rate({host="a"}[5m]))"#,
            0,
            "`topk` is not supported",
        ),
        (r#"sum(3, rate({host="a"}[5m]))"#, 4, "takes no parameter"),
        (r#"frobnicate({host="a"})"#, 0, "unknown function"),
        (
            r#"sum by (host (rate({host="a"}[5m]))"#,
            13,
            "expected `,` or `)`",
        ),
        (r#"sum(rate({host="a"}[5m])"#, 24, "to close sum("),
        (r#"rate({host="a"}[5m]) > 3"#, 21, "comparison `>`"),
        (
            r#"rate({host="a"}[5m]) or vector(0)"#,
            21,
            "`or` is not supported",
        ),
        (r#"{host="a"} + 1"#, 11, "after the end of the query"),
        (
            r#"1 + {host="a"}"#,
            4,
            "cannot be part of a metric expression",
        ),
        (r#"{host="a"} |= "x" @"#, 18, "unexpected character '@'"),
        ("{host=\"é\"} ¤", 12, "unexpected character '¤'"),
    ];
    for &(q, pos, words) in cases {
        let e = parse(q).expect_err(q);
        assert_eq!(e.pos, pos, "{q}: {e}");
        assert!(e.to_string().contains(words), "{q}: {e}");
        assert!(
            e.to_string().starts_with("parse error at line 1, col "),
            "{q}: {e}"
        );
    }
    // Line and column (characters) as Loki prints them.
    let e = parse("{host=\"é\"}\n  | unpack").unwrap_err();
    assert_eq!((e.line, e.col, e.pos), (2, 3, 14));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let q = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    let e = parse(&q).unwrap_err();
    assert!(e.message.contains("nested deeper"), "{e}");
    let q = format!("{}vector(1){}", "sum(".repeat(5_000), ")".repeat(5_000));
    assert!(parse(&q).is_err());
}

/// Every prefix of valid queries, and bytes flipped: errors, never panics.
#[test]
fn prefixes_and_mutations_never_panic() {
    let qs = [
        r#"sum by (level) (count_over_time({filename=~"a.*", host!="x"} |= "a\"b" !~ `c+` [5m]))"#,
        r#"vector(1)+vector(1) * 2 - (3 % 2)"#,
        "{host=\"é\"} |~ \"\\u00e9\"",
    ];
    for q in qs {
        assert!(parse(q).is_ok(), "{q}");
        for (i, _) in q.char_indices() {
            let _ = parse(&q[..i]);
            for c in ['{', '}', '"', '`', '\\', '|', '[', ' ', '(', ')'] {
                let mut s = q.to_string();
                s.replace_range(
                    i..i + q[i..].chars().next().unwrap().len_utf8(),
                    &c.to_string(),
                );
                let _ = parse(&s);
            }
        }
    }
}

/// `| name OP "value"` stages are matchers on the lines' labels, between
/// line filters in any order (Logs Drilldown's level filters).
#[test]
fn label_filter_stages_are_matchers() {
    let Expr::Log(log) = parse(
        r#"{service_name="app"} | detected_level != "" |= "x" | detected_level=~"error|warn" | host == "web-01""#,
    )
    .unwrap() else {
        panic!("a log query")
    };
    let m: Vec<(&str, MatchOp, &str)> = log
        .matchers
        .iter()
        .map(|m| (m.name.as_str(), m.op, m.value.as_str()))
        .collect();
    assert_eq!(
        m,
        [
            ("service_name", MatchOp::Eq, "app"),
            ("detected_level", MatchOp::Neq, ""),
            ("detected_level", MatchOp::Re, "error|warn"),
            ("host", MatchOp::Eq, "web-01"),
        ]
    );
    assert_eq!(log.filters.len(), 1);
    // Inside a range function too.
    assert!(parse(r#"sum(count_over_time({a="b"} | level="ERROR" [1m])) by (level)"#).is_ok());
    // Still refused: parsers with arguments, a bad regex, a bare word.
    for (q, needle) in [
        (r#"{a="b"} | json x="y""#, "`| json`"),
        (r#"{a="b"} | logfmt --strict"#, "`| logfmt`"),
        (r#"{a="b"} | level =~ "(""#, "invalid regex"),
        (r#"{a="b"} | level = x"#, "`| level`"),
    ] {
        let e = parse(q).unwrap_err();
        assert!(e.message.contains(needle), "{q}: {e}");
    }
}

/// `| json`, `| logfmt` and `| drop`: Drilldown's mixed parser stage, then
/// field filters on what they extract.
#[test]
fn parser_stages_and_field_filters() {
    let l = log(
        r#"{service_name="app"} | detected_level="error" |= "x" | json | logfmt | drop __error__, __error_details__ | status="500" | msg=~"time.*""#,
    );
    assert_eq!(l.parsers, [ParserStage::Json, ParserStage::Logfmt]);
    assert_eq!(l.matchers.len(), 2);
    let f: Vec<(&str, MatchOp, &str)> = l
        .field_filters
        .iter()
        .map(|m| (m.name.as_str(), m.op, m.value.as_str()))
        .collect();
    assert_eq!(
        f,
        [
            ("status", MatchOp::Eq, "500"),
            ("msg", MatchOp::Re, "time.*")
        ]
    );
    assert_eq!(l.filters.len(), 1);
    assert!(parse(r#"sum by (level) (count_over_time({a="b"} | logfmt | x!="" [5m]))"#).is_ok());
    let e = parse(r#"{a="b"} | drop 5"#).unwrap_err();
    assert!(e.message.contains("`| drop`"), "{e}");
}

/// `|> "pattern"` and `!> "pattern"`: the whole line against a Loki
/// pattern, read as an anchored regex.
#[test]
fn pattern_filters_are_anchored_regexes() {
    let l = log(r#"{a="b"} |> "<_> level=<lvl> msg=\"a.b\" <_>" !> "x<_>""#);
    assert_eq!(l.filters[0].op, FilterOp::Regex);
    assert_eq!(l.filters[1].op, FilterOp::NotRegex);
    let re = regex::Regex::new(&l.filters[0].value).unwrap();
    assert!(re.is_match(r#"ts=1 level=info msg="a.b" done"#));
    assert!(!re.is_match(r#"ts=1 level=info msg="aXb" done"#));
    assert!(
        !re.is_match(r#"level=info msg="a.b" done"#),
        "<_> then a space"
    );
    let re = regex::Regex::new(&l.filters[1].value).unwrap();
    assert!(re.is_match("xyz") && !re.is_match("yx"));
    assert_eq!(parser::pattern_regex("a<b"), "^a<b$");
}

/// `| name > 100`, `| dur >= 5ms`: numeric filters.
#[test]
fn numeric_filters() {
    let l = log(r#"{a="b"} | logfmt | latency_ms > 100 | dur <= 1m30s | code != 5"#);
    let f: Vec<(&str, CmpOp, f64, bool)> = l
        .numeric_filters
        .iter()
        .map(|f| (f.name.as_str(), f.op, f.value, f.duration))
        .collect();
    assert_eq!(
        f,
        [
            ("latency_ms", CmpOp::Gt, 100.0, false),
            ("dur", CmpOp::Le, 90.0, true),
            ("code", CmpOp::Ne, 5.0, false),
        ]
    );
    assert!(CmpOp::Ge.holds(2.0, 2.0) && !CmpOp::Lt.holds(2.0, 2.0));
    assert!(parse(r#"{a="b"} | size > 10KB"#).is_err());
}
