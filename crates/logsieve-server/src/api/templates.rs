//! `GET|POST /api/v1/patterns/templates`: the log templates of the served
//! lines, mined with Drain ([`logsieve::patterns`]), largest first, with
//! per-step counts.

use axum::extract::RawQuery;
use axum::http::Method;
use logsieve::patterns::{count_steps, Miner, MinerOptions};
use logsieve::BackendChoice;
use rayon::prelude::*;

use super::*;
use crate::loki::params::Params;

/// The most templates one answer lists.
pub const MAX_TEMPLATES: u32 = 10_000;
/// The most steps of the per-step counts.
pub const MAX_STEPS: i64 = 11_000;

/// What to mine: the lines of `files` in the time window, in file order.
#[derive(Deserialize, ToSchema, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct TemplatesRequest {
    /// Lines at or after this time (as `search`'s `since`).
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub since: Option<String>,
    /// Lines before this time (as `search`'s `until`).
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub until: Option<String>,
    /// Only these served files (an unknown name is a 400).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// At most this many templates, largest first (default 100).
    #[schema(minimum = 1, maximum = 10000)]
    #[serde(default)]
    pub limit: Option<u32>,
    /// Width of the per-step counts (`30s`, `5m`, `1h`); without it (empty,
    /// or `0s`) the span of the selected lines in about 50 steps. A step that
    /// would make more than 11,000 steps is widened (`step_ms` says).
    #[schema(pattern = r"^(([0-9]{1,6}(ms|s|m|h|d|w)){1,4})?$")]
    #[serde(default)]
    pub step: Option<String>,
    /// Drain's similarity threshold: the share of equal tokens a line
    /// needs to join a template (default 0.4).
    #[schema(minimum = 0.0, maximum = 1.0)]
    #[serde(default)]
    pub sim_threshold: Option<f64>,
    /// Drain's tree depth (default 4: one leading token chooses the leaf).
    #[schema(minimum = 3, maximum = 16)]
    #[serde(default)]
    pub depth: Option<u32>,
}

/// One template.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct TemplateRow {
    /// The template, `<_>` for each variable part (Loki's form).
    pub pattern: String,
    /// Lines assigned to it (every line is assigned to exactly one).
    pub count: u64,
    /// Per step, `[start ms, lines]`, steps with lines only.
    pub samples: Vec<[i64; 2]>,
}

/// The templates.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct TemplatesResponse {
    /// Lines mined.
    pub lines: u64,
    /// Templates found (`templates` lists the `limit` largest).
    pub total: u64,
    /// The step of `samples`, ms (0 when no line has a time).
    pub step_ms: i64,
    /// Largest first (ties by first appearance).
    pub templates: Vec<TemplateRow>,
}

impl TemplatesRequest {
    fn from_params(p: &Params) -> Result<TemplatesRequest, ApiError> {
        let num = |name: &str| -> Result<Option<f64>, ApiError> {
            p.get(name)
                .map(|v| {
                    v.parse::<f64>().map_err(|_| {
                        ApiError::bad_request("invalid_request", format!("{name}={v:?}: a number"))
                    })
                })
                .transpose()
        };
        let mut files: Vec<String> = p.all("file").into_iter().map(String::from).collect();
        files.extend(p.all("files").into_iter().map(String::from));
        let int = |name: &str| -> Result<Option<u32>, ApiError> {
            num(name)?
                .map(|v| {
                    (v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v))
                        .then_some(v as u32)
                        .ok_or_else(|| {
                            ApiError::bad_request(
                                "invalid_request",
                                format!("{name}={v}: a whole number"),
                            )
                        })
                })
                .transpose()
        };
        Ok(TemplatesRequest {
            since: p.get("since").map(String::from),
            until: p.get("until").map(String::from),
            files: (!files.is_empty()).then_some(files),
            limit: int("limit")?,
            step: p.get("step").map(String::from),
            sim_threshold: num("sim_threshold")?,
            depth: int("depth")?,
        })
    }

    /// The miner's options and the template limit, or the 400 that says
    /// which field is out of its range.
    fn checked(&self) -> Result<(MinerOptions, u32), ApiError> {
        let opts = self.options()?;
        let limit = self.limit.unwrap_or(100);
        if !(1..=MAX_TEMPLATES).contains(&limit) {
            return Err(ApiError::bad_request(
                "invalid_request",
                format!("`limit` is {limit}: from 1 to {MAX_TEMPLATES}"),
            ));
        }
        Ok((opts, limit))
    }

    /// These fields, each taken from `other` where this request has none.
    fn or(self, other: TemplatesRequest) -> TemplatesRequest {
        TemplatesRequest {
            since: self.since.or(other.since),
            until: self.until.or(other.until),
            files: self.files.or(other.files),
            limit: self.limit.or(other.limit),
            step: self.step.or(other.step),
            sim_threshold: self.sim_threshold.or(other.sim_threshold),
            depth: self.depth.or(other.depth),
        }
    }

    fn options(&self) -> Result<MinerOptions, ApiError> {
        let mut o = MinerOptions::default();
        if let Some(s) = self.sim_threshold {
            if !(0.0..=1.0).contains(&s) {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    format!("`sim_threshold` is {s}: from 0 to 1"),
                ));
            }
            o.sim_threshold = s;
        }
        if let Some(d) = self.depth {
            if !(3..=16).contains(&d) {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    format!("`depth` is {d}: from 3 to 16"),
                ));
            }
            o.depth = d as usize;
        }
        Ok(o)
    }
}

/// The log templates of the served lines (Drain, as Loki's pattern
/// ingester mines them; `<_>` for variable parts), largest first, each
/// with its lines per step. Every selected line counts in exactly one
/// template, whose text matches it with `<_>` read as one or more
/// characters. GET takes the same fields as query parameters (`files` or
/// `file` repeated); POST as JSON.
#[utoipa::path(
    method(get, post),
    path = "/api/v1/patterns/templates",
    params(
        ("since" = Option<String>, Query, description = "lines at or after this time (as search's since)"),
        ("until" = Option<String>, Query, description = "lines before this time"),
        ("file" = Option<Vec<String>>, Query, description = "only this served file (repeatable; `files` too)"),
        ("limit" = Option<u32>, Query, description = "at most this many templates (1 to 10000, default 100)", minimum = 1, maximum = 10000),
        ("step" = Option<String>, Query, description = "width of the per-step counts (`5m`)"),
        ("sim_threshold" = Option<f64>, Query, description = "similarity threshold, 0 to 1 (default 0.4)", minimum = 0.0, maximum = 1.0),
        ("depth" = Option<u32>, Query, description = "tree depth, 3 to 16 (default 4)", minimum = 3, maximum = 16),
    ),
    request_body(content = TemplatesRequest, description = "POST: the same fields as JSON", content_type = "application/json"),
    responses(
        (status = 200, body = TemplatesResponse),
        (status = 400, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody),
    )
)]
pub async fn templates(
    State(state): State<AppState>,
    method: Method,
    RawQuery(q): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let res = async {
        // Both methods read (and check) both the query's parameters and a
        // JSON body, as the document gives them to both; the body's fields
        // win. A POST needs a body.
        let query = TemplatesRequest::from_params(&Params::new(q.as_deref(), &[]))?;
        query.checked()?;
        let empty = body.as_ref().is_ok_and(|b| b.is_empty());
        let req: TemplatesRequest = if method == Method::POST || !empty {
            parse_body::<TemplatesRequest>(body)?.or(query)
        } else {
            query
        };
        let (opts, limit) = req.checked()?;
        let step = match req.step.as_deref().filter(|s| !s.is_empty()) {
            None => None,
            // 0 is the default step.
            Some(s) => Some(logsieve::logql::duration_ms(s).ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_time",
                    format!("step: {s:?} is not a duration such as 30s, 5m, 1h"),
                )
            })?)
            .filter(|&ms| ms > 0),
        };
        let ready = ready(&state)?;
        let held = hold(&state)?;
        let cancel = Cancel::new();
        let _guard = cancel.on_drop();
        let t0 = Instant::now();
        let ((resp, backend), _held) = run_blocking(&state, &cancel, held, move |c| {
            mine_templates(&ready, &req, opts, limit, step, c)
        })
        .await?;
        state.0.metrics.query("templates", backend, t0.elapsed());
        Ok::<_, ApiError>(Json(resp).into_response())
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

fn mine_templates(
    ready: &Ready,
    req: &TemplatesRequest,
    opts: MinerOptions,
    limit: u32,
    step: Option<i64>,
    cancel: &Cancel,
) -> Result<(TemplatesResponse, &'static str), ApiError> {
    let docs = search::select_files(ready, req.files.as_deref())?;
    let q = StatsQuery {
        since: window(ready, req.since.as_deref(), "since")?,
        until: window(ready, req.until.as_deref(), "until")?,
        ..Default::default()
    };
    let corpus = ready.session.corpus();
    let cols = ready.session.columns();
    // The lines in the window, and their times, on every core.
    let mut picked: Vec<(usize, Vec<u64>)> = Vec::with_capacity(docs.len());
    let mut times: Vec<i64> = Vec::new();
    for d in docs {
        cancel.check().map_err(ApiError::from_lib)?;
        let dt = cols.map(|c| &c.docs()[d].times[..]).unwrap_or(&[]);
        let time = |l: u64| {
            dt.get(l as usize)
                .copied()
                .unwrap_or(logsieve::stats::NO_TIME)
        };
        let lines: Vec<u64> = (0..corpus.docs()[d].lines().len())
            .into_par_iter()
            .filter(|&l| q.in_window(time(l)))
            .collect();
        times.par_extend(lines.par_iter().map(|&l| time(l)));
        picked.push((d, lines));
    }
    cancel.check().map_err(ApiError::from_lib)?;
    let grouped = ready
        .session
        .group_shapes(&picked, BackendChoice::Auto)
        .map_err(ApiError::from_lib)?;
    // Picked line `i`: the run holding it, by the runs' first indices.
    let mut at = Vec::with_capacity(picked.len());
    let mut n = 0usize;
    for (_, ls) in &picked {
        at.push(n);
        n += ls.len();
    }
    let line = |i: usize| {
        let r = at.partition_point(|&a| a <= i) - 1;
        let (d, ls) = &picked[r];
        corpus.docs()[*d].line(ls[i - at[r]])
    };
    let mut miner = Miner::new(opts);
    let mut assignment = Vec::with_capacity(n);
    miner.add_grouped(&grouped.shapes, line, &mut assignment);
    let timed: Vec<i64> = times
        .iter()
        .copied()
        .filter(|&t| t != logsieve::stats::NO_TIME)
        .collect();
    let (lo, hi) = (
        timed.iter().copied().min().unwrap_or(0),
        timed.iter().copied().max().unwrap_or(0),
    );
    let step_ms = match step {
        Some(s) => s,
        None if timed.is_empty() => 0,
        None => ((hi - lo) / 50).max(1),
    };
    // A step too fine for the span is widened to MAX_STEPS steps.
    let step_ms = if step_ms > 0 && (hi - lo) / step_ms >= MAX_STEPS {
        (hi - lo) / (MAX_STEPS - 1) + 1
    } else {
        step_ms
    };
    let (start, steps) = if step_ms > 0 && !timed.is_empty() {
        let start = lo - lo.rem_euclid(step_ms);
        (start, ((hi - start) / step_ms + 1) as usize)
    } else {
        (0, 0)
    };
    let per = count_steps(&assignment, &times, miner.len(), start, step_ms, steps);
    let mut rows: Vec<(u32, u64)> = (0..miner.len() as u32)
        .map(|id| (id, miner.count(id)))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let total = rows.len() as u64;
    rows.truncate(limit as usize);
    let templates = rows
        .into_iter()
        .map(|(id, count)| TemplateRow {
            pattern: miner.pattern(id),
            count,
            samples: per[id as usize]
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(k, &n)| [start + k as i64 * step_ms, n as i64])
                .collect(),
        })
        .collect();
    let resp = TemplatesResponse {
        lines: assignment.len() as u64,
        total,
        step_ms,
        templates,
    };
    Ok((resp, grouped.backend))
}
