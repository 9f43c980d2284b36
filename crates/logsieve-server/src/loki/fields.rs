//! Fields found in log lines at query time, as Loki's `detected_fields`
//! finds them (`pkg/querier/queryrange/detected_fields.go`): a line that
//! is a JSON object gives its keys (nested objects flattened with `_`,
//! arrays and nulls left out), any other line its logfmt `key=value`
//! pairs (empty values left out); keys are sanitised as Loki sanitises
//! label names, and a key equal to one of the line's labels gets
//! `_extracted`. Each value's type is inferred in Loki's order: `int`,
//! `float`, `boolean`, `duration`, `bytes`, else `string`.

use serde_json::Value as J;

/// One field of one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The field's name (sanitised; `_extracted` on a clash with a label).
    pub name: String,
    /// Its value.
    pub value: String,
    /// `json` or `logfmt`.
    pub parser: &'static str,
    /// For JSON, the path of keys to it.
    pub json_path: Option<Vec<String>>,
}

/// Loki's `sanitizeLabelKey`: characters outside `[A-Za-z0-9_]` become
/// `_`, and a leading digit gets a `_` before it.
pub fn sanitize_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 1);
    for (i, c) in key.chars().enumerate() {
        if i == 0 && c.is_ascii_digit() {
            out.push('_');
        }
        out.push(if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        });
    }
    out
}

/// The fields of `line`; `is_label` says which names are the line's
/// labels (those keys get `_extracted`).
pub fn parse_line(line: &[u8], is_label: &dyn Fn(&str) -> bool) -> Vec<Found> {
    parse_with(line, true, true, is_label)
}

/// [`parse_line`] with the parsers a query names: `json` for a JSON
/// object, `logfmt` for the other lines (or for every line without
/// `json`).
pub fn parse_with(
    line: &[u8],
    json: bool,
    logfmt: bool,
    is_label: &dyn Fn(&str) -> bool,
) -> Vec<Found> {
    let trimmed = line.trim_ascii();
    let mut out = Vec::new();
    if json && trimmed.first() == Some(&b'{') {
        if let Ok(J::Object(map)) = serde_json::from_slice::<J>(trimmed) {
            let mut path = Vec::new();
            flatten(&map, &mut path, &mut out);
            for f in &mut out {
                if is_label(&f.name) {
                    f.name.push_str("_extracted");
                }
            }
            return out;
        }
    }
    if !logfmt {
        return out;
    }
    for (k, v) in logfmt_pairs(line) {
        let mut name = sanitize_key(&String::from_utf8_lossy(k));
        if name.is_empty() || v.is_empty() {
            continue;
        }
        if is_label(&name) {
            name.push_str("_extracted");
        }
        out.push(Found {
            name,
            value: String::from_utf8_lossy(&v).into_owned(),
            parser: "logfmt",
            json_path: None,
        });
    }
    out
}

fn flatten(map: &serde_json::Map<String, J>, path: &mut Vec<String>, out: &mut Vec<Found>) {
    for (k, v) in map {
        path.push(k.clone());
        let value = match v {
            J::Object(m) => {
                flatten(m, path, out);
                None
            }
            J::Array(_) | J::Null => None,
            J::String(s) => Some(s.clone()),
            J::Bool(b) => Some(b.to_string()),
            J::Number(n) => Some(n.to_string()),
        };
        if let Some(value) = value {
            let name = sanitize_key(&path.join("_"));
            if !name.is_empty() {
                out.push(Found {
                    name,
                    value,
                    parser: "json",
                    json_path: Some(path.clone()),
                });
            }
        }
        path.pop();
    }
}

/// logfmt's `key=value` pairs (go-logfmt's rules, not strict: a pair that
/// does not scan is skipped): a key is a run of bytes above space other
/// than `=` and `"`; a value is such a run or a quoted string with `\`
/// escapes. A key without `=` has an empty value.
pub fn logfmt_pairs(line: &[u8]) -> Vec<(&[u8], Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 0;
    let n = line.len();
    while i < n {
        while i < n && line[i] <= b' ' {
            i += 1;
        }
        let ks = i;
        while i < n && line[i] > b' ' && line[i] != b'=' && line[i] != b'"' {
            i += 1;
        }
        let key = &line[ks..i];
        if key.is_empty() {
            // A stray `=` or `"`: skip to the next space.
            while i < n && line[i] > b' ' {
                i += 1;
            }
            continue;
        }
        if i >= n || line[i] != b'=' {
            if i < n && line[i] == b'"' {
                while i < n && line[i] > b' ' {
                    i += 1;
                }
                continue;
            }
            out.push((key, Vec::new()));
            continue;
        }
        i += 1;
        if i < n && line[i] == b'"' {
            i += 1;
            let mut v = Vec::new();
            let mut closed = false;
            while i < n {
                match line[i] {
                    b'\\' if i + 1 < n => {
                        v.push(match line[i + 1] {
                            b'n' => b'\n',
                            b't' => b'\t',
                            b'r' => b'\r',
                            c => c,
                        });
                        i += 2;
                    }
                    b'"' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    c => {
                        v.push(c);
                        i += 1;
                    }
                }
            }
            if closed {
                out.push((key, v));
            }
            continue;
        }
        let vs = i;
        let mut bad = false;
        while i < n && line[i] > b' ' {
            bad |= line[i] == b'=' || line[i] == b'"';
            i += 1;
        }
        if !bad {
            out.push((key, line[vs..i].to_vec()));
        }
    }
    out
}

/// Go's `strconv.ParseBool`.
fn is_bool(s: &str) -> bool {
    matches!(
        s,
        "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False"
    )
}

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+`, or `0`.
fn is_duration(s: &str) -> bool {
    duration_secs(s).is_some()
}

/// A Go duration's value in seconds (`1m30s` → 90).
pub fn duration_secs(s: &str) -> Option<f64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if s == "0" {
        return Some(0.0);
    }
    if s.is_empty() {
        return None;
    }
    let mut total = 0.0;
    let mut rest = s;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num = &rest[..n];
        if num.is_empty() || num == "." || num.matches('.').count() > 1 {
            return None;
        }
        let v: f64 = num.parse().ok()?;
        rest = &rest[n..];
        let (unit, scale) = [
            ("ns", 1e-9),
            ("us", 1e-6),
            ("µs", 1e-6),
            ("μs", 1e-6),
            ("ms", 1e-3),
            ("s", 1.0),
            ("m", 60.0),
            ("h", 3600.0),
        ]
        .into_iter()
        .filter(|(u, _)| rest.starts_with(u))
        .max_by_key(|(u, _)| u.len())?;
        rest = &rest[unit.len()..];
        total += v * scale;
    }
    Some(if neg { -total } else { total })
}

/// go-humanize's `ParseBytes`: digits, `.` and `,`, then optional spaces
/// and one of its unit names (or none), case-insensitive. The value in
/// bytes.
pub fn parse_bytes(s: &str) -> Option<f64> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(s.len());
    let num: String = s[..end].chars().filter(|&c| c != ',').collect();
    let f: f64 = num.parse().ok()?;
    let unit = s[end..].trim().to_ascii_lowercase();
    let k: f64 = 1000.0;
    let ki: f64 = 1024.0;
    let m = match unit.as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => k,
        "kib" | "ki" => ki,
        "mb" | "m" => k.powi(2),
        "mib" | "mi" => ki.powi(2),
        "gb" | "g" => k.powi(3),
        "gib" | "gi" => ki.powi(3),
        "tb" | "t" => k.powi(4),
        "tib" | "ti" => ki.powi(4),
        "pb" | "p" => k.powi(5),
        "pib" | "pi" => ki.powi(5),
        "eb" | "e" => k.powi(6),
        "eib" | "ei" => ki.powi(6),
        _ => return None,
    };
    let v = f * m;
    (v < u64::MAX as f64).then_some(v.floor())
}

/// go-humanize's `Bytes` without its space (`1.5kB`, `83MB`): how Loki
/// writes a bytes value in `detected_field/NAME/values`.
pub fn format_bytes(v: f64) -> String {
    if v < 10.0 {
        return format!("{}B", v as u64);
    }
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let e = (v.ln() / 1000f64.ln()).floor() as usize;
    let e = e.min(units.len() - 1);
    let val = (v / 1000f64.powi(e as i32) * 10.0 + 0.5).floor() / 10.0;
    if val < 10.0 {
        format!("{val:.1}{}", units[e])
    } else {
        format!("{val:.0}{}", units[e])
    }
}

/// The units Loki rewrites a bytes value for (a value ending in one).
const BYTES_SUFFIXES: &[&str] = &[
    "b", "kib", "kb", "mib", "mb", "gib", "gb", "tib", "tb", "pib", "pb", "eib", "eb", "ki", "k",
    "mi", "m", "gi", "g", "ti", "t", "pi", "p", "ei", "e",
];

/// A value as `detected_field/NAME/values` lists it: a bytes value with a
/// unit rewritten (`10KB` → `10kB`), others unchanged.
pub fn listed_value(v: &str) -> String {
    let lower = v.to_ascii_lowercase();
    match parse_bytes(v) {
        Some(b) if BYTES_SUFFIXES.iter().any(|s| lower.ends_with(s)) => format_bytes(b),
        _ => v.to_string(),
    }
}

/// Loki's inferred type of a value.
pub fn value_type(v: &str) -> &'static str {
    let int_like = {
        let d = v.strip_prefix(['-', '+']).unwrap_or(v);
        !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit())
    };
    if int_like && v.parse::<i64>().is_ok() {
        "int"
    } else if is_go_float(v) {
        "float"
    } else if is_bool(v) {
        "boolean"
    } else if is_duration(v) {
        "duration"
    } else if parse_bytes(v).is_some() {
        "bytes"
    } else {
        "string"
    }
}

/// Go's `strconv.ParseFloat` on decimal forms (and `inf`, `nan`).
fn is_go_float(v: &str) -> bool {
    let d = v.strip_prefix(['-', '+']).unwrap_or(v).to_ascii_lowercase();
    if matches!(d.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    !d.is_empty()
        && d.bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'+' | b'-'))
        && v.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_as_loki_infers_them() {
        for (v, t) in [
            ("42", "int"),
            ("-7", "int"),
            ("1.5", "float"),
            ("1e3", "float"),
            ("true", "boolean"),
            ("F", "boolean"),
            ("200ms", "duration"),
            ("1h2m3.5s", "duration"),
            ("10KB", "bytes"),
            ("5 MiB", "bytes"),
            ("10m", "duration"),
            ("GET", "string"),
            ("192.168.1.1", "string"),
            ("", "string"),
        ] {
            assert_eq!(value_type(v), t, "{v:?}");
        }
        assert_eq!(listed_value("10KB"), "10kB");
        assert_eq!(listed_value("1500b"), "1.5kB");
        assert_eq!(listed_value("abc"), "abc");
        assert_eq!(format_bytes(82_854_982.0), "83MB");
        assert_eq!(duration_secs("1m30s"), Some(90.0));
        assert_eq!(duration_secs("1.5ms"), Some(0.0015));
        assert_eq!(duration_secs("-2h"), Some(-7200.0));
        assert_eq!(duration_secs("5"), None);
        assert_eq!(duration_secs("1.2.3s"), None);
    }

    #[test]
    fn logfmt_and_json() {
        let none = |_: &str| false;
        let f = parse_line(
            br#"level=info msg="hello world" dur=5ms bare x= a"b=c status=200"#,
            &none,
        );
        let kv: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.name.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            kv,
            [
                ("level", "info"),
                ("msg", "hello world"),
                ("dur", "5ms"),
                ("status", "200")
            ]
        );
        let label = |n: &str| n == "level";
        let f = parse_line(
            br#"{"level":"warn","req":{"id":7,"ok":true},"tags":[1],"n":null,"a-b":"x"}"#,
            &label,
        );
        let kv: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.name.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            kv,
            [
                ("level_extracted", "warn"),
                ("req_id", "7"),
                ("req_ok", "true"),
                ("a_b", "x")
            ]
        );
        assert_eq!(
            f[1].json_path.as_deref(),
            Some(&["req".to_string(), "id".to_string()][..])
        );
        assert_eq!(sanitize_key("1st.key"), "_1st_key");
    }
}
