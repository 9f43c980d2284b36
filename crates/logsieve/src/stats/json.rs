//! The stats answer as one JSON object: what `logsieve stats --json`
//! prints, shared with the server's `/api/v1/stats`.

use serde_json::{json, Map, Value};

use super::{format_ms, Stats, StatsQuery};

/// `selected`, the window (`since`, `until`) and the `oldest` and `newest`
/// times of the lines asked about (`span`: [`super::Columns::span`]) as
/// `{"ms", "utc"}` (or null), with `count_by` the
/// `count_by` names and `groups` (`{"key": {name: value|null}, "count"}`),
/// `histogram` (`{"bucket_ms", "buckets": [{"start_ms", "start", "count"}]}`)
/// when asked for, and the `backend` that ran. `names` are the count-by
/// field names, in `q.count_by`'s order.
pub fn stats_json(
    span: (Option<i64>, Option<i64>),
    q: &StatsQuery,
    s: &Stats,
    names: &[String],
    backend: &str,
) -> Value {
    let t = |v: Option<i64>| v.map_or(Value::Null, |t| json!({"ms": t, "utc": format_ms(t)}));
    let groups: Vec<Value> = s
        .groups
        .iter()
        .map(|g| {
            let mut key = Map::new();
            for (n, v) in names.iter().zip(&g.key) {
                let v = v.as_ref().map_or(Value::Null, |b| {
                    Value::String(String::from_utf8_lossy(b).into())
                });
                key.insert(n.clone(), v);
            }
            json!({"key": key, "count": g.count})
        })
        .collect();
    let mut obj = Map::new();
    obj.insert("selected".into(), json!(s.selected));
    obj.insert("since".into(), t(q.since));
    obj.insert("until".into(), t(q.until));
    obj.insert("oldest".into(), t(span.0));
    obj.insert("newest".into(), t(span.1));
    if !names.is_empty() {
        obj.insert("count_by".into(), json!(names));
        obj.insert("groups".into(), Value::Array(groups));
    }
    if let Some(h) = &s.histogram {
        let buckets: Vec<Value> = h
            .counts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let st = h.start + i as i64 * h.bucket;
                json!({"start_ms": st, "start": format_ms(st), "count": c})
            })
            .collect();
        obj.insert(
            "histogram".into(),
            json!({"bucket_ms": h.bucket, "buckets": buckets}),
        );
    }
    obj.insert("backend".into(), json!(backend));
    Value::Object(obj)
}
