/*!
SQL over a logsieve corpus, on DataFusion, with the search pushed down to
the engine.

The table `logs` ([`table::LogsTable`]) is a session's corpus, one row per
line. A `WHERE` conjunct on `line` (`LIKE`/`ILIKE`, `contains`, `strpos`,
`starts_with`, `ends_with`, `regexp_like`, `~`/`~*`, `=`/`IN`, and
`grep(line, 'pattern' [, 'flags'])`, the command line's search), on `time`
(comparisons, `BETWEEN`), on a field (`=`, `IN`, `IS NULL`) or on `file`,
and AND/OR/NOT of these, is answered by the engine through the session's
one route (the GPU when the corpus is resident) and reported exact to
DataFusion ([`pushdown`]). Only the projected columns of the selected
lines are built, so `count(*)` never builds `line`, and the scan's row
count is exact, so a `count(*)` over pushed filters reads no row.
Everything else is DataFusion over the rows the scan yields.

Each watchlist of the session is a table `watchlist_<name>(idx,
pattern)`, and `matches(line, 'name')` lists the indices of its patterns
a line holds (so `unnest` and a join name them).

```
use std::sync::Arc;
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, SearchOptions, Session};
use logsieve_sql::{Local, SqlEngine, SqlLimits};

let log = b"2026-11-20T10:00:00Z web-01 INFO ok\n\
            2026-11-20T10:05:00Z web-02 ERROR failed\n".to_vec();
let corpus = Corpus::from_bytes("app.log", log);
let opts = ColumnOptions { fields: vec![FieldSpec::host(), FieldSpec::level()], ..Default::default() };
let cols = Columns::build(&corpus, &opts);
let mut session = Session::new(corpus);
session.set_columns(cols);
let engine = SqlEngine::new(Local::new(session), SearchOptions::default(), SqlLimits::local()).unwrap();
let rt = tokio::runtime::Runtime::new().unwrap();
let answer = rt
    .block_on(engine.query("SELECT host, count(*) AS n FROM logs WHERE line LIKE '%fail%' GROUP BY host"))
    .unwrap();
assert_eq!(answer.rows, 1);
```
*/
#![deny(missing_docs)]

pub mod format;
mod provider;
pub mod pushdown;
pub mod select;
pub mod table;
mod udf;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, StringArray, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::MemTable;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::{SQLOptions, SessionConfig, SessionContext};
use futures::StreamExt;
use logsieve::{Query, Request, SearchOptions, Session, Watchlist};
use parking_lot::{Mutex, RwLock};

/// A session held for the length of one scan.
pub trait Snapshot: Send + Sync {
    /// The session.
    fn session(&self) -> &Session;
}

impl Snapshot for Session {
    fn session(&self) -> &Session {
        self
    }
}

/// Where the `logs` table's session comes from.
pub trait Source: Send + Sync + fmt::Debug {
    /// The session as it is now, held until the snapshot is dropped.
    fn snapshot(&self) -> Result<Arc<dyn Snapshot>, String>;

    /// Called before each engine search of `q`: a source that owns its
    /// session may make the corpus resident when the planner says it
    /// pays (the server decided at load: nothing to do).
    fn prepare(&self, _q: &Query, _opts: &SearchOptions) {}
}

/// A session owned here (the CLI, tests): prepared for each search as
/// `logsieve search` prepares its one.
pub struct Local(
    Arc<RwLock<Session>>,
    /// The queries prepared already (preparing again re-plans the route:
    /// 0.2 ms a query on the 2-core build machine).
    Mutex<std::collections::HashSet<(Vec<Vec<u8>>, String)>>,
);

impl Local {
    /// Wraps `session`.
    pub fn new(session: Session) -> Arc<Local> {
        Local::over(Arc::new(RwLock::new(session)))
    }

    /// Over a session another writer changes too (a follower appending
    /// lines): each scan reads it as it is when the scan starts.
    pub fn over(session: Arc<RwLock<Session>>) -> Arc<Local> {
        Arc::new(Local(session, Default::default()))
    }
}

impl fmt::Debug for Local {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Local")
    }
}

struct LocalSnap(lock_api::ArcRwLockReadGuard<parking_lot::RawRwLock, Session>);

impl Snapshot for LocalSnap {
    fn session(&self) -> &Session {
        &self.0
    }
}

impl Source for Local {
    fn snapshot(&self) -> Result<Arc<dyn Snapshot>, String> {
        Ok(Arc::new(LocalSnap(self.0.read_arc_recursive())))
    }

    fn prepare(&self, q: &Query, opts: &SearchOptions) {
        // Another scan of the same query holding a snapshot: search as
        // the session is (never wait for a write).
        let key = (
            q.patterns().to_vec(),
            format!("{:?}{:?}", q.syntax(), q.case()),
        );
        if self.1.lock().contains(&key) {
            return;
        }
        if let Some(mut s) = self.0.try_write() {
            if s.prepare(&Request::Search(q), opts).is_ok() {
                self.1.lock().insert(key);
            }
        }
    }
}

/// What a query may use.
#[derive(Clone, Debug)]
pub struct SqlLimits {
    /// DataFusion's memory pool, in bytes (sorts, joins and aggregates
    /// that need more fail with a message).
    pub memory: usize,
    /// Rows kept of an answer (the rest are counted, not kept).
    pub max_rows: Option<usize>,
    /// `CREATE`, `INSERT`, `SET` and other statements allowed (a local
    /// user's own files); never on a server.
    pub statements: bool,
    /// DataFusion's partitions (0: one per core).
    pub partitions: usize,
    /// Filters pushed down to the engine (off: DataFusion filters every
    /// line itself, the tests' oracle).
    pub pushdown: bool,
}

impl SqlLimits {
    /// A local run: the user's machine, statements allowed, no row cap.
    pub fn local() -> SqlLimits {
        SqlLimits {
            memory: 8 << 30,
            max_rows: None,
            statements: true,
            partitions: 0,
            pushdown: true,
        }
    }

    /// A server's: queries only, capped.
    pub fn server(memory: usize, max_rows: usize, partitions: usize) -> SqlLimits {
        SqlLimits {
            memory,
            max_rows: Some(max_rows),
            statements: false,
            partitions,
            pushdown: true,
        }
    }
}

/// The answer to one query.
#[derive(Debug)]
pub struct Answer {
    /// Its columns.
    pub schema: SchemaRef,
    /// The kept rows.
    pub batches: Vec<RecordBatch>,
    /// Rows kept.
    pub rows: usize,
    /// More rows came than [`SqlLimits::max_rows`] keeps (the query
    /// was stopped there).
    pub truncated: bool,
}

/// SQL over one source.
pub struct SqlEngine {
    ctx: SessionContext,
    limits: SqlLimits,
    source: Arc<dyn Source>,
    /// The watchlists whose tables are registered.
    watchlists: Mutex<BTreeMap<String, Arc<Watchlist>>>,
}

impl SqlEngine {
    /// The tables `logs` and `watchlist_<name>`, and `matches`, over
    /// `source`; each engine search runs with `opts`.
    pub fn new(
        source: Arc<dyn Source>,
        opts: SearchOptions,
        limits: SqlLimits,
    ) -> Result<SqlEngine, String> {
        let state = state_builder(&limits)?.build();
        let ctx = SessionContext::new_with_state(state);
        let logs = table::LogsTable::new(source.clone(), opts, limits.pushdown)?;
        ctx.register_table("logs", Arc::new(logs))
            .map_err(|e| e.to_string())?;
        ctx.register_udf(ScalarUDF::new_from_impl(udf::Matches::new(source.clone())));
        ctx.register_udf(grep());
        let e = SqlEngine {
            ctx,
            limits,
            source,
            watchlists: Mutex::new(BTreeMap::new()),
        };
        e.sync_watchlists()?;
        Ok(e)
    }

    /// The tables `watchlist_<name>` as the session's watchlists are
    /// now (defined, replaced and removed ones since the last query).
    fn sync_watchlists(&self) -> Result<(), String> {
        let snap = self.source.snapshot()?;
        let now: BTreeMap<String, Arc<Watchlist>> = snap
            .session()
            .watchlists()
            .into_iter()
            .map(|w| (w.name().to_string(), w))
            .collect();
        let mut held = self.watchlists.lock();
        let same = held.len() == now.len()
            && held
                .iter()
                .zip(&now)
                .all(|((a, x), (b, y))| a == b && Arc::ptr_eq(x, y));
        if same {
            return Ok(());
        }
        for name in held.keys() {
            let _ = self.ctx.deregister_table(format!("watchlist_{name}"));
        }
        for (name, w) in &now {
            let schema = Arc::new(Schema::new(vec![
                Field::new("idx", DataType::UInt32, false),
                Field::new("pattern", DataType::Utf8, false),
            ]));
            let pats = w.patterns();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(UInt32Array::from_iter_values(0..pats.len() as u32)),
                    Arc::new(StringArray::from_iter_values(
                        pats.iter().map(|p| String::from_utf8_lossy(p)),
                    )),
                ],
            )
            .map_err(|e| e.to_string())?;
            let t = MemTable::try_new(schema, vec![vec![batch]]).map_err(|e| e.to_string())?;
            self.ctx
                .register_table(format!("watchlist_{name}"), Arc::new(t))
                .map_err(|e| e.to_string())?;
        }
        *held = now;
        Ok(())
    }

    /// Runs `sql` (one statement): its rows, up to the row cap. A SQL
    /// error is DataFusion's message.
    pub async fn query(&self, sql: &str) -> Result<Answer, String> {
        self.query_capped(sql, self.limits.max_rows).await
    }

    /// [`SqlEngine::query`] with a row cap of its own.
    pub async fn query_capped(&self, sql: &str, max_rows: Option<usize>) -> Result<Answer, String> {
        self.sync_watchlists()?;
        run(&self.ctx, sql, &self.limits, max_rows).await
    }
}

/// `grep(line, 'pattern' [, 'flags'])` (flags `F`, `i`, `w`, `x`, as the
/// command line's): every engine registers it, and so does a cluster's
/// coordinator and worker.
pub fn grep() -> ScalarUDF {
    ScalarUDF::new_from_impl(udf::Grep::new())
}

/// DataFusion's session as `limits` say (memory pool, partitions, the
/// information schema), with its default functions: every engine's
/// (local, a cluster's coordinator) before its tables.
pub fn state_builder(limits: &SqlLimits) -> Result<SessionStateBuilder, String> {
    let mut config = SessionConfig::new().with_information_schema(true);
    if limits.partitions > 0 {
        config = config.with_target_partitions(limits.partitions);
    }
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_limit(limits.memory, 1.0)
        .build_arc()
        .map_err(|e| e.to_string())?;
    Ok(SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features())
}

/// Runs `sql` (one statement, the statements `limits` allow) on `ctx`:
/// its rows, up to `max_rows`. A SQL error is DataFusion's message.
pub async fn run(
    ctx: &SessionContext,
    sql: &str,
    limits: &SqlLimits,
    max_rows: Option<usize>,
) -> Result<Answer, String> {
    let opts = SQLOptions::new()
        .with_allow_ddl(limits.statements)
        .with_allow_dml(limits.statements)
        .with_allow_statements(limits.statements);
    let df = ctx
        .sql_with_options(sql, opts)
        .await
        .map_err(|e| e.to_string())?;
    let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
    let mut stream = df.execute_stream().await.map_err(|e| e.to_string())?;
    let cap = max_rows.unwrap_or(usize::MAX);
    let (mut batches, mut rows, mut truncated) = (Vec::new(), 0usize, false);
    while let Some(b) = stream.next().await {
        let b = b.map_err(|e| e.to_string())?;
        let keep = b.num_rows().min(cap - rows);
        if keep > 0 {
            batches.push(b.slice(0, keep));
            rows += keep;
        }
        if keep < b.num_rows() {
            truncated = true;
            break;
        }
    }
    Ok(Answer {
        schema,
        batches,
        rows,
        truncated,
    })
}
