//! The coordinator: SQL over the workers' shards.
//!
//! Any process coordinates (the CLI, `serve --cluster`): it asks each
//! worker for its status, places every shard's scan on one live worker
//! holding it (the least loaded by bytes), and runs the query on
//! datafusion-distributed with the `logs` table's scan split by worker
//! ([`crate::scan`]). A worker that does not answer is left out and the
//! query run again on the replicas; a shard no live worker holds fails
//! the query with its name, never an answer without it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use datafusion::catalog::{Session as DfSession, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use datafusion_distributed::{DistributedExt, SessionStateBuilderExt, WorkerResolver};
use datafusion_proto::bytes::Serializeable;
use logsieve_sql::table::Shape;
use logsieve_sql::{Answer, SqlLimits};
use parking_lot::Mutex;
use url::Url;

use crate::scan::{self, ScanSpec, ShardCodec, ShardScanExec};
use crate::status::{self, WorkerStatus};

/// How long a status may take.
const STATUS_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a placement is reused before the workers are asked again
/// (a query that fails on a worker asks at once).
const PLACEMENT_TTL: Duration = Duration::from_secs(1);

/// The workers of a cluster, as one coordinator sees them.
pub struct Cluster {
    urls: Vec<Url>,
    token: Option<String>,
    /// Each worker's last status: its shards stay known while it is down.
    known: Mutex<BTreeMap<Url, WorkerStatus>>,
    placed: Mutex<Option<(Instant, Arc<Placement>)>>,
    live: Arc<Mutex<Vec<Url>>>,
}

/// Which worker scans which shard, for one query.
#[derive(Debug)]
pub struct Placement {
    /// The workers that answered.
    pub live: Vec<Url>,
    /// Shards per worker used, in worker order.
    pub groups: Vec<(Url, Vec<String>)>,
    /// The table's field columns.
    pub fields: Vec<String>,
    /// A live worker follows its files: its shards may be new by the
    /// next query, so the next query places anew.
    pub following: bool,
}

impl Cluster {
    /// The cluster of these workers; `token` is sent to each.
    pub fn new(urls: Vec<Url>, token: Option<String>) -> Cluster {
        Cluster {
            urls,
            token,
            known: Mutex::new(BTreeMap::new()),
            placed: Mutex::new(None),
            live: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The workers' addresses.
    pub fn urls(&self) -> &[Url] {
        &self.urls
    }

    /// Every worker's status (or why it did not answer), in order.
    pub async fn statuses(&self) -> Vec<(Url, Result<WorkerStatus, String>)> {
        let asks = self.urls.iter().map(|u| async move {
            let s = status::fetch(u, self.token.as_deref(), STATUS_TIMEOUT).await;
            (u.clone(), s)
        });
        futures::future::join_all(asks).await
    }

    /// The placement of every shard on a live holder, asked anew.
    pub async fn place(&self) -> Result<Arc<Placement>, String> {
        let answers = self.statuses().await;
        let mut known = self.known.lock();
        let mut down = Vec::new();
        let mut live = Vec::new();
        for (u, s) in answers {
            match s {
                Ok(s) => {
                    known.insert(u.clone(), s);
                    live.push(u);
                }
                Err(e) => down.push((u, e)),
            }
        }
        let unknown: Vec<String> = down
            .iter()
            .filter(|(u, _)| !known.contains_key(u))
            .map(|(u, e)| format!("{} ({e})", host_port(u)))
            .collect();
        if !unknown.is_empty() {
            return Err(format!(
                "worker(s) not answering, shards unknown: {} — an answer without them could be incomplete",
                unknown.join("; ")
            ));
        }
        let fields = match live.first() {
            Some(u) => known[u].fields.clone(),
            None => return Err("no worker of the cluster answers".into()),
        };
        for u in &live {
            if known[u].fields != fields {
                return Err(format!(
                    "workers disagree on the fields: {} has [{}], {} has [{}] (start every worker with the same --field flags)",
                    host_port(&live[0]),
                    fields.join(", "),
                    host_port(u),
                    known[u].fields.join(", ")
                ));
            }
        }
        // Every shard any worker reported, with its live holders.
        let mut shards: BTreeMap<&str, (u64, Vec<&Url>)> = BTreeMap::new();
        for (u, s) in known.iter() {
            for sh in &s.shards {
                let e = shards.entry(&sh.name).or_insert((sh.bytes, Vec::new()));
                if live.contains(u) {
                    e.1.push(u);
                }
            }
        }
        let missing: Vec<&str> = shards
            .iter()
            .filter(|(_, (_, h))| h.is_empty())
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            let why: Vec<String> = down
                .iter()
                .map(|(u, e)| format!("{} ({e})", host_port(u)))
                .collect();
            return Err(format!(
                "shard(s) held by no live worker: {}; down: {}",
                missing.join(", "),
                why.join("; ")
            ));
        }
        // The largest shards first, each to its least loaded holder.
        let mut order: Vec<(&str, u64, Vec<&Url>)> =
            shards.into_iter().map(|(n, (b, h))| (n, b, h)).collect();
        order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut load: BTreeMap<&Url, u64> = BTreeMap::new();
        let mut by: BTreeMap<&Url, Vec<String>> = BTreeMap::new();
        for (name, bytes, holders) in order {
            let h = holders
                .iter()
                .min_by_key(|u| (load.get(*u).copied().unwrap_or(0), self.rank(u)))
                .copied()
                .expect("a holder");
            *load.entry(h).or_insert(0) += bytes.max(1);
            by.entry(h).or_default().push(name.to_string());
        }
        let mut groups: Vec<(Url, Vec<String>)> = by
            .into_iter()
            .map(|(u, mut s)| {
                s.sort();
                (u.clone(), s)
            })
            .collect();
        groups.sort_by_key(|(u, _)| self.rank(u));
        *self.live.lock() = live.clone();
        let following = live.iter().any(|u| known[u].following);
        let p = Arc::new(Placement {
            live,
            groups,
            fields,
            following,
        });
        *self.placed.lock() = Some((Instant::now(), p.clone()));
        Ok(p)
    }

    /// The placement, reused within [`PLACEMENT_TTL`] unless a worker
    /// follows its files (a file added since would be left out).
    pub async fn placement(&self) -> Result<Arc<Placement>, String> {
        if let Some((at, p)) = self.placed.lock().as_ref() {
            if !p.following && at.elapsed() < PLACEMENT_TTL {
                return Ok(p.clone());
            }
        }
        self.place().await
    }

    fn rank(&self, u: &Url) -> usize {
        self.urls.iter().position(|x| x == u).unwrap_or(usize::MAX)
    }
}

fn host_port(u: &Url) -> String {
    format!(
        "{}:{}",
        u.host_str().unwrap_or(""),
        u.port_or_known_default().unwrap_or(0)
    )
}

struct LiveWorkers(Arc<Mutex<Vec<Url>>>);

impl WorkerResolver for LiveWorkers {
    /// The live workers, one repeated up to [`scan::MIN_TASKS`] (the
    /// planner caps a stage's tasks at the workers it is given).
    fn get_urls(&self) -> Result<Vec<Url>, DataFusionError> {
        let mut v = self.0.lock().clone();
        if let Some(first) = v.first().cloned() {
            while v.len() < scan::MIN_TASKS {
                v.push(first.clone());
            }
        }
        Ok(v)
    }
}

/// The cluster's `logs` table: its scan is split by worker, as the
/// query's placement (an extension of its session config) says.
#[derive(Debug)]
struct ClusterTable {
    shape: Shape,
    pushdown: bool,
}

#[async_trait]
impl TableProvider for ClusterTable {
    logsieve_sql::logs_table_methods!();

    async fn scan(
        &self,
        state: &dyn DfSession,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let c = state.config();
        let p = c
            .get_extension::<Placement>()
            .ok_or_else(|| DataFusionError::Internal("the cluster is not placed".into()))?;
        let spec = ScanSpec {
            fields: self.shape.fields().to_vec(),
            shards: p.groups.iter().flat_map(|(_, s)| s.clone()).collect(),
            filters: filters
                .iter()
                .map(|f| f.to_bytes().map(|b| b.to_vec()))
                .collect::<Result<_>>()?,
            filter_text: filters.iter().map(|f| f.to_string()).collect(),
            projection: self.shape.projection(projection),
            limit,
            // At least 2: the planner cuts a stage at the merge of a
            // scan's partitions; a scan of one would stay here.
            partitions: logsieve_sql::table::partitions(projection, c.target_partitions()).max(2),
            batch_size: c.batch_size().max(1),
        };
        Ok(Arc::new(ShardScanExec::new(spec, p.groups.clone())?))
    }
}

/// SQL over a cluster.
pub struct ClusterEngine {
    cluster: Arc<Cluster>,
    ctx: SessionContext,
    table: Arc<ClusterTable>,
    limits: SqlLimits,
}

impl ClusterEngine {
    /// The engine over `cluster`'s workers, as they answer now.
    pub async fn connect(
        cluster: Arc<Cluster>,
        limits: SqlLimits,
    ) -> Result<ClusterEngine, String> {
        let p = cluster.place().await?;
        let shape = Shape::new(&p.fields)?;
        let mut headers = http::HeaderMap::new();
        if let Some(t) = &cluster.token {
            let v = format!("Bearer {t}")
                .parse()
                .map_err(|_| "the token is not a valid header value".to_string())?;
            headers.insert(http::header::AUTHORIZATION, v);
        }
        let df = |e: DataFusionError| e.to_string();
        let mut state = logsieve_sql::state_builder(&limits)?
            .with_distributed_worker_resolver(LiveWorkers(cluster.live.clone()))
            .with_distributed_planner()
            .with_distributed_user_codec(ShardCodec)
            .with_distributed_desired_task_count_handler(scan::desired_tasks)
            .with_distributed_scale_up_leaf_node_handler(scan::scale_up)
            .with_distributed_route_tasks_handler(scan::route)
            .with_distributed_passthrough_headers(headers)
            .map_err(df)?
            .with_distributed_compression(None)
            .map_err(df)?
            .build();
        // A scan that reads no column is one partition per task; spreading
        // it round-robin would only add streams from every worker. A
        // grouped aggregate ends on the coordinator (partial ones on the
        // workers): log groups are few (hosts, levels, minutes), and a
        // shuffle between workers is another hop per query.
        let opt = &mut state.config_mut().options_mut().optimizer;
        opt.enable_round_robin_repartition = false;
        opt.repartition_aggregations = false;
        let ctx = SessionContext::new_with_state(state);
        let table = Arc::new(ClusterTable {
            shape,
            pushdown: limits.pushdown,
        });
        ctx.register_table("logs", table.clone()).map_err(df)?;
        ctx.register_udf(logsieve_sql::grep());
        Ok(ClusterEngine {
            cluster,
            ctx,
            table,
            limits,
        })
    }

    /// The cluster.
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// Runs `sql` with the limits' row cap.
    pub async fn query(&self, sql: &str) -> Result<Answer, String> {
        self.query_capped(sql, self.limits.max_rows).await
    }

    /// Runs `sql`: on a worker lost mid-query, again on the shards' live
    /// holders (at most once per worker); a shard no live worker holds
    /// is an error naming it.
    pub async fn query_capped(&self, sql: &str, max_rows: Option<usize>) -> Result<Answer, String> {
        let mut p = self.cluster.placement().await?;
        for _ in 0..=self.cluster.urls.len() {
            if p.fields != self.table.shape.fields() {
                return Err(format!(
                    "the workers' fields changed to [{}]: reconnect",
                    p.fields.join(", ")
                ));
            }
            // Each query plans over its own placement: a query in
            // flight keeps its own while another one places anew.
            let mut state = self.ctx.state();
            state.config_mut().set_extension(p.clone());
            let ctx = SessionContext::new_with_state(state);
            let err = match logsieve_sql::run(&ctx, sql, &self.limits, max_rows).await {
                Ok(a) => return Ok(a),
                Err(e) => e,
            };
            // Lost a worker? Ask them all again; the same live set means
            // the error is the query's own.
            let again = self.cluster.place().await?;
            if again.live == p.live {
                return Err(err);
            }
            p = again;
        }
        Err("the cluster kept losing workers during the query".into())
    }
}
