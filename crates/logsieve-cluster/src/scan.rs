//! The cluster's scan of `logs`: planned on the coordinator, one task per
//! worker holding the shards it scans, run on that worker by its own
//! engine.
//!
//! [`ShardScanExec`] is the leaf the coordinator's table plans: the
//! pushed filters, the projection, the limit, and which worker scans
//! which shards. The distributed planner asks [`desired_tasks`] how many
//! tasks it wants (one per worker used), [`scale_up`] splits it into one
//! variant per task, and [`route`] sends task `i` to the worker its
//! variant names. On the worker, [`ShardCodec`] decodes a variant into
//! the worker's own [`LogScanExec`] over its resident session (the
//! filters, plus `file IN (its shards)`), refusing shards it does not
//! hold. Only the stage above the scan's rows (partial aggregates, the
//! projection, a limit) crosses the network.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{col, lit, Expr};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedLeafExec, RouteTasksEvent,
    RouteTasksEventResponse, ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
};
use datafusion_proto::bytes::Serializeable;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use logsieve::{SearchOptions, Session};
use logsieve_sql::table::{LogScanExec, LogsTable, Shape};
use logsieve_sql::Local;
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::status::ShardInfo;

/// What a worker is told to scan (the wire form of a variant).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScanSpec {
    /// The `logs` table's fields on the coordinator (a worker with
    /// others refuses: its columns would not line up).
    pub fields: Vec<String>,
    /// The shards (file names) to scan.
    pub shards: Vec<String>,
    /// The pushed filters, as DataFusion's protobuf.
    pub filters: Vec<Vec<u8>>,
    /// Their text, for `EXPLAIN`.
    pub filter_text: Vec<String>,
    /// The projected columns (indices into the table's schema).
    pub projection: Vec<usize>,
    /// At most this many rows.
    pub limit: Option<usize>,
    /// Partitions of the scan on the worker.
    pub partitions: usize,
    /// Rows per batch.
    pub batch_size: usize,
}

/// What a worker holds, as its sessions see it (a session config
/// extension on the worker).
pub struct Held {
    /// The `logs` table over the worker's resident session.
    pub table: LogsTable,
    /// That session (a follower may append to it and add files).
    pub session: Arc<RwLock<Session>>,
    /// Scans run per shard (the status's `scans`).
    pub scans: Mutex<BTreeMap<String, u64>>,
}

impl Held {
    /// The `logs` table over `session`; each engine search runs with
    /// `opts`.
    pub fn new(session: Arc<RwLock<Session>>, opts: SearchOptions) -> Result<Held, String> {
        let table = LogsTable::new(Local::over(session.clone()), opts, true)?;
        Ok(Held {
            table,
            session,
            scans: Mutex::new(BTreeMap::new()),
        })
    }

    /// The shards as held now, by name (a followed file rotated by
    /// rename is two documents of one name: one shard, their sums).
    pub fn shards(&self) -> Vec<ShardInfo> {
        let scans = self.scans.lock().clone();
        let s = self.session.read_recursive();
        let mut out: Vec<ShardInfo> = Vec::new();
        let mut at: BTreeMap<&str, usize> = BTreeMap::new();
        for d in s.corpus().docs() {
            let i = *at.entry(d.name()).or_insert_with(|| {
                out.push(ShardInfo {
                    name: d.name().to_string(),
                    bytes: 0,
                    lines: 0,
                    scans: scans.get(d.name()).copied().unwrap_or(0),
                });
                out.len() - 1
            });
            out[i].bytes += d.data().len() as u64;
            out[i].lines += d.lines().len();
        }
        out
    }
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Held").finish_non_exhaustive()
    }
}

/// The coordinator's leaf: a scan of shards on the workers holding them.
pub struct ShardScanExec {
    spec: ScanSpec,
    schema: SchemaRef,
    props: Arc<PlanProperties>,
    /// Which worker scans which shards (the plan before it is split).
    groups: Vec<(Url, Vec<String>)>,
    /// The worker a variant runs on.
    holder: Option<Url>,
}

impl fmt::Debug for ShardScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardScanExec")
            .field("shards", &self.spec.shards.len())
            .field("holder", &self.holder)
            .finish()
    }
}

impl ShardScanExec {
    /// The scan of `spec` split as `groups` say.
    pub fn new(spec: ScanSpec, groups: Vec<(Url, Vec<String>)>) -> Result<ShardScanExec> {
        let shape = Shape::new(&spec.fields).map_err(DataFusionError::Plan)?;
        let schema = Arc::new(shape.schema().project(&spec.projection)?);
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(spec.partitions.max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(ShardScanExec {
            spec,
            schema,
            props: Arc::new(props),
            groups,
            holder: None,
        })
    }

    fn variant(&self, holder: Url, shards: Vec<String>) -> ShardScanExec {
        ShardScanExec {
            spec: ScanSpec {
                shards,
                ..self.spec.clone()
            },
            schema: self.schema.clone(),
            props: self.props.clone(),
            groups: Vec::new(),
            holder: Some(holder),
        }
    }
}

impl DisplayAs for ShardScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "ShardScanExec: engine_filters=[{}]",
            self.spec.filter_text.join(", ")
        )?;
        let names: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        write!(f, ", projection=[{}]", names.join(", "))?;
        if let Some(l) = self.spec.limit {
            write!(f, ", limit={l}")?;
        }
        match &self.holder {
            Some(h) => write!(f, ", worker={h}, shards={}", self.spec.shards.len()),
            None => {
                let w: Vec<String> = self
                    .groups
                    .iter()
                    .map(|(u, s)| format!("{u}:{}", s.len()))
                    .collect();
                write!(f, ", shards per worker=[{}]", w.join(", "))
            }
        }
    }
}

impl ExecutionPlan for ShardScanExec {
    logsieve_sql::leaf_scan_methods!("ShardScanExec");

    fn execute(
        &self,
        _partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // The rows are on the workers; a scan run here would answer
        // nothing and look complete.
        Err(DataFusionError::Internal(
            "the cluster's scan ran on the coordinator: no worker task was planned for it".into(),
        ))
    }
}

/// Tasks a scan asks for at least: the distributed planner keeps a
/// stage of one task on the coordinator, where the rows are not.
pub const MIN_TASKS: usize = 2;

/// One task per worker the scan uses (at least [`MIN_TASKS`]; the
/// extra ones scan nothing).
pub fn desired_tasks(ev: DesiredTaskCountEvent) -> Option<Result<DesiredTaskCountEventResponse>> {
    let s = ev.plan.downcast_ref::<ShardScanExec>()?;
    Some(Ok(DesiredTaskCountEventResponse::desired(
        s.groups.len().max(MIN_TASKS),
    )))
}

/// The scan split into its tasks: variant `i` scans group `i`'s shards
/// on group `i`'s worker (tasks beyond the groups scan nothing).
pub fn scale_up(ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let s = ev.plan.downcast_ref::<ShardScanExec>()?;
    if s.holder.is_some() {
        return None;
    }
    let (n, g) = (ev.task_count, s.groups.len());
    if n < g || g == 0 {
        return Some(Err(DataFusionError::Plan(format!(
            "the cluster's scan needs {g} worker tasks, the planner gave {n}"
        ))));
    }
    let variants = (0..n).map(|i| {
        let (url, shards) = match s.groups.get(i) {
            Some((u, sh)) => (u.clone(), sh.clone()),
            None => (s.groups[0].0.clone(), Vec::new()),
        };
        Arc::new(s.variant(url, shards)) as Arc<dyn ExecutionPlan>
    });
    Some(
        DistributedLeafExec::try_new(Arc::clone(ev.plan), variants)
            .map(|p| ScaleUpLeafNodeEventResponse::new(Arc::new(p))),
    )
}

/// Task `i` to the worker its variant names.
pub fn route(ev: RouteTasksEvent) -> Option<Result<RouteTasksEventResponse>> {
    let mut urls = None;
    let walked = ev.plan.apply(|node| {
        if let Some(leaf) = node.downcast_ref::<DistributedLeafExec>() {
            if leaf.original().downcast_ref::<ShardScanExec>().is_some() {
                urls = Some(
                    leaf.variants()
                        .iter()
                        .map(|v| {
                            v.downcast_ref::<ShardScanExec>()
                                .and_then(|s| s.holder.clone())
                                .ok_or_else(|| {
                                    DataFusionError::Internal(
                                        "a cluster scan task without a worker".into(),
                                    )
                                })
                        })
                        .collect::<Result<Vec<Url>>>(),
                );
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    if let Err(e) = walked {
        return Some(Err(e));
    }
    let urls = urls?;
    Some(urls.and_then(|u| {
        if u.len() == ev.task_count {
            Ok(RouteTasksEventResponse::new(u))
        } else {
            Err(DataFusionError::Internal(format!(
                "{} cluster scan tasks for {} task slots",
                u.len(),
                ev.task_count
            )))
        }
    }))
}

/// The codec of the cluster's scan: a variant travels as its
/// [`ScanSpec`]; a worker decodes it into its own engine's scan.
#[derive(Debug, Default)]
pub struct ShardCodec;

const MAGIC: &[u8] = b"logsieve-shard-scan/1\n";

impl PhysicalExtensionCodec for ShardCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        _inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let body = buf
            .strip_prefix(MAGIC)
            .ok_or_else(|| DataFusionError::Internal("not a logsieve shard scan".into()))?;
        let spec: ScanSpec = serde_json::from_slice(body)
            .map_err(|e| DataFusionError::Internal(format!("a bad shard scan: {e}")))?;
        let Some(held) = ctx.session_config().get_extension::<Held>() else {
            // Not a worker (a plan shown on the coordinator).
            return Ok(Arc::new(ShardScanExec::new(spec, Vec::new())?));
        };
        Ok(worker_scan(&held, &spec, ctx)?)
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let s = node.downcast_ref::<ShardScanExec>().ok_or_else(|| {
            DataFusionError::Internal(format!("not a shard scan: {}", node.name()))
        })?;
        buf.extend_from_slice(MAGIC);
        serde_json::to_writer(&mut *buf, &s.spec)
            .map_err(|e| DataFusionError::Internal(e.to_string()))
    }
}

/// The worker's scan of `spec`: its filters and `file IN (shards)` on
/// the worker's own table. Shards it does not hold are refused (an
/// empty answer would look complete).
pub fn worker_scan(held: &Held, spec: &ScanSpec, ctx: &TaskContext) -> Result<Arc<LogScanExec>> {
    let shape = held.table.shape();
    if shape.fields() != spec.fields.as_slice() {
        return Err(DataFusionError::Execution(format!(
            "this worker's fields are [{}], the query's [{}]: start every worker with the same --field flags",
            shape.fields().join(", "),
            spec.fields.join(", ")
        )));
    }
    {
        let names: BTreeSet<String> = {
            let s = held.session.read_recursive();
            s.corpus()
                .docs()
                .iter()
                .map(|d| d.name().to_string())
                .collect()
        };
        let missing: Vec<&str> = spec
            .shards
            .iter()
            .filter(|s| !names.contains(s.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(DataFusionError::Execution(format!(
                "this worker does not hold shard(s) {}",
                missing.join(", ")
            )));
        }
        let mut scans = held.scans.lock();
        for s in &spec.shards {
            *scans.entry(s.clone()).or_insert(0) += 1;
        }
    }
    let mut filters = spec
        .filters
        .iter()
        .map(|b| Expr::from_bytes_with_ctx(b, ctx))
        .collect::<Result<Vec<Expr>>>()?;
    filters.push(if spec.shards.is_empty() {
        lit(false)
    } else {
        col("file").in_list(spec.shards.iter().map(|s| lit(s.as_str())).collect(), false)
    });
    held.table.exec(
        Some(&spec.projection),
        &filters,
        spec.limit,
        spec.partitions,
        spec.batch_size,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use logsieve::{Corpus, Document};

    fn held() -> Held {
        let mut corpus = Corpus::from_bytes("a.log", b"x ERROR 1\ny ok\n".to_vec());
        corpus.push(Document::from_bytes("b.log", b"z ERROR 2\n".to_vec()));
        Held::new(
            Arc::new(RwLock::new(Session::new(corpus))),
            Default::default(),
        )
        .unwrap()
    }

    fn spec(shards: &[&str], fields: &[&str]) -> ScanSpec {
        ScanSpec {
            fields: fields.iter().map(|f| f.to_string()).collect(),
            shards: shards.iter().map(|s| s.to_string()).collect(),
            filters: vec![col("line")
                .like(lit("%ERROR%"))
                .to_bytes()
                .unwrap()
                .to_vec()],
            filter_text: Vec::new(),
            projection: vec![0, 1],
            limit: None,
            partitions: 1,
            batch_size: 1024,
        }
    }

    #[test]
    fn a_worker_refuses_shards_it_does_not_hold_and_fields_that_differ() {
        let h = held();
        let ctx = TaskContext::default();
        let e = worker_scan(&h, &spec(&["a.log", "nope.log"], &[]), &ctx).unwrap_err();
        assert!(
            e.to_string().contains("does not hold shard(s) nope.log"),
            "{e}"
        );
        let e = worker_scan(&h, &spec(&["a.log"], &["user"]), &ctx).unwrap_err();
        assert!(e.to_string().contains("fields"), "{e}");
        assert!(
            h.shards().iter().all(|s| s.scans == 0),
            "a refused scan counts nothing"
        );
    }

    #[test]
    fn a_worker_scans_only_the_shards_asked_and_counts_them() {
        let h = held();
        let ctx = Arc::new(TaskContext::default());
        let scan = worker_scan(&h, &spec(&["b.log"], &[]), &ctx).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let batches: Vec<_> = rt.block_on(async {
            use futures::TryStreamExt;
            scan.execute(0, ctx.clone())
                .unwrap()
                .try_collect()
                .await
                .unwrap()
        });
        let rows: usize = batches
            .iter()
            .map(|b: &datafusion::arrow::array::RecordBatch| b.num_rows())
            .sum();
        assert_eq!(rows, 1, "only b.log's ERROR line");
        let counts: Vec<(String, u64)> =
            h.shards().into_iter().map(|s| (s.name, s.scans)).collect();
        assert_eq!(counts, [("a.log".into(), 0), ("b.log".into(), 1)]);
        // No shard (a task beyond the workers used): no row.
        let none = worker_scan(&h, &spec(&[], &[]), &ctx).unwrap();
        let n: usize = rt.block_on(async {
            use futures::TryStreamExt;
            let b: Vec<datafusion::arrow::array::RecordBatch> = none
                .execute(0, ctx.clone())
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            b.iter().map(|b| b.num_rows()).sum()
        });
        assert_eq!(n, 0);
    }

    #[test]
    fn a_spec_survives_the_codec() {
        let s = ShardScanExec::new(spec(&["a.log"], &[]), Vec::new()).unwrap();
        let mut buf = Vec::new();
        ShardCodec
            .try_encode(
                Arc::new(s),
                &mut buf,
                &datafusion_proto::physical_plan::DefaultPhysicalProtoConverter {},
            )
            .unwrap();
        let body = buf.strip_prefix(MAGIC).unwrap();
        let back: ScanSpec = serde_json::from_slice(body).unwrap();
        assert_eq!(back, spec(&["a.log"], &[]));
    }
}
