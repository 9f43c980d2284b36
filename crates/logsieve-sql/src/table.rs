//! The `logs` table: a DataFusion `TableProvider` over a session's
//! corpus, and its scan.
//!
//! Columns: `file`, `line_number` (1-based), `byte_offset`, `time`
//! (timestamp ms UTC; null before a document's first stamp and where it
//! has none), every field of the session's columns (`level`, `host`,
//! `--field`s; null where a line has no value), `line` (UTF-8, invalid
//! bytes replaced) and `line_bytes` (the raw bytes).
//!
//! The scan ([`LogScanExec`]) runs the pushed predicate through the
//! engine once ([`crate::select`]), then yields only the projected
//! columns of the selected lines, in document and line order, split into
//! contiguous partitions. Its row count is exact, so `count(*)` over
//! pushed filters is answered from it without reading a row.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, RecordBatch, RecordBatchOptions, StringBuilder,
    TimestampMillisecondBuilder, UInt64Array,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{Session as DfSession, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use logsieve::SearchOptions;
use parking_lot::Mutex;

use crate::pushdown::{translate, ColumnKind, Pred};
use crate::select::{field_value, time, DocSel, Eval};
use crate::{Snapshot, Source};

/// The columns every `logs` table has besides its fields.
const FILE: &str = "file";
const LINE_NUMBER: &str = "line_number";
const BYTE_OFFSET: &str = "byte_offset";
const TIME: &str = "time";
const LINE: &str = "line";
const LINE_BYTES: &str = "line_bytes";

/// One column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    File,
    LineNumber,
    ByteOffset,
    Time,
    Field(usize),
    Line,
    LineBytes,
}

/// The `logs` table's columns for a list of field names, and which of
/// its filters the engine answers. One decision for every table over a
/// corpus (a session's here, a cluster's shards).
#[derive(Clone, Debug)]
pub struct Shape {
    schema: SchemaRef,
    cols: Vec<Col>,
    fields: Vec<String>,
}

impl Shape {
    /// The columns a scan reads: `projection`, or all of them.
    pub fn projection(&self, projection: Option<&Vec<usize>>) -> Vec<usize> {
        projection
            .cloned()
            .unwrap_or_else(|| (0..self.cols.len()).collect())
    }

    /// The columns with these fields (`level`, `host`, `--field`s).
    pub fn new(fields: &[String]) -> Result<Shape, String> {
        let mut schema = vec![
            Field::new(FILE, DataType::Utf8, false),
            Field::new(LINE_NUMBER, DataType::UInt64, false),
            Field::new(BYTE_OFFSET, DataType::UInt64, false),
            Field::new(
                TIME,
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
        ];
        let mut cols = vec![Col::File, Col::LineNumber, Col::ByteOffset, Col::Time];
        for (i, f) in fields.iter().enumerate() {
            if [FILE, LINE_NUMBER, BYTE_OFFSET, TIME, LINE, LINE_BYTES].contains(&f.as_str()) {
                return Err(format!(
                    "field {f:?} has the name of a column of logs: rename it (--field NAME=REGEX)"
                ));
            }
            schema.push(Field::new(f, DataType::Utf8, true));
            cols.push(Col::Field(i));
        }
        schema.push(Field::new(LINE, DataType::Utf8, false));
        schema.push(Field::new(LINE_BYTES, DataType::Binary, false));
        cols.extend([Col::Line, Col::LineBytes]);
        Ok(Shape {
            schema: Arc::new(Schema::new(schema)),
            cols,
            fields: fields.to_vec(),
        })
    }

    /// The fields of the session's columns now.
    pub fn of(session: &logsieve::Session) -> Result<Shape, String> {
        let fields: Vec<String> = session
            .columns()
            .map(|c| c.fields().iter().map(|f| f.name.clone()).collect())
            .unwrap_or_default();
        Shape::new(&fields)
    }

    /// The table's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The field columns' names.
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    fn column_kind(&self, name: &str) -> Option<ColumnKind> {
        let i = self.schema.index_of(name).ok()?;
        match self.cols[i] {
            Col::Line => Some(ColumnKind::Line),
            Col::Time => Some(ColumnKind::Time),
            Col::File => Some(ColumnKind::File),
            Col::Field(f) => Some(ColumnKind::Field(f)),
            _ => None,
        }
    }

    /// `e` as a predicate the engine answers exactly, or `None`.
    pub fn translate(&self, e: &Expr) -> Option<Pred> {
        translate(e, &|n| self.column_kind(n))
    }

    /// Each filter pushed: `Exact` where the engine answers it whole.
    pub fn pushdown(&self, filters: &[&Expr], on: bool) -> Vec<TableProviderFilterPushDown> {
        filters
            .iter()
            .map(|f| match on.then(|| self.translate(f)).flatten() {
                Some(_) => TableProviderFilterPushDown::Exact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect()
    }
}

/// The `logs` table.
#[derive(Debug)]
pub struct LogsTable {
    source: Arc<dyn Source>,
    shape: Shape,
    opts: SearchOptions,
    pushdown: bool,
}

impl LogsTable {
    /// The table over `source`'s session; its field columns are those of
    /// the session's columns now. `opts` are each engine search's
    /// (backend, threads); without `pushdown` DataFusion filters every
    /// line itself.
    pub fn new(
        source: Arc<dyn Source>,
        opts: SearchOptions,
        pushdown: bool,
    ) -> Result<LogsTable, String> {
        let shape = Shape::of(source.snapshot()?.session())?;
        Ok(LogsTable {
            source,
            shape,
            opts,
            pushdown,
        })
    }

    /// The table's columns.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The scan of `projection` (every column: `None`) of the rows where
    /// every filter holds, at most `limit`, in `partitions` partitions of
    /// batches of `batch_size` rows. Each filter must be one the table
    /// reported pushed.
    pub fn exec(
        &self,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        partitions: usize,
        batch_size: usize,
    ) -> Result<Arc<LogScanExec>> {
        let preds: Vec<Pred> = filters
            .iter()
            .map(|f| {
                self.pushdown
                    .then(|| self.shape.translate(f))
                    .flatten()
                    .ok_or_else(|| {
                        DataFusionError::Internal(format!(
                            "a filter not pushed reached the scan: {f}"
                        ))
                    })
            })
            .collect::<Result<_>>()?;
        let pred = match preds.len() {
            0 => None,
            1 => preds.into_iter().next(),
            _ => Some(Pred::And(preds)),
        };
        let proj = self.shape.projection(projection);
        let schema = Arc::new(self.shape.schema.project(&proj)?);
        let partitions = partitions.max(1);
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(Arc::new(LogScanExec {
            source: self.source.clone(),
            opts: self.opts.clone(),
            filters: filters.iter().map(|f| f.to_string()).collect(),
            pred,
            cols: proj.iter().map(|&i| self.shape.cols[i]).collect(),
            schema,
            limit,
            partitions,
            batch_size: batch_size.max(1),
            props: Arc::new(props),
            scanned: Arc::new(Mutex::new(ScanState::Pending)),
        }))
    }
}

#[async_trait]
impl TableProvider for LogsTable {
    crate::logs_table_methods!();

    async fn scan(
        &self,
        state: &dyn DfSession,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let c = state.config();
        let scan = self.exec(
            projection,
            filters,
            limit,
            partitions(projection, c.target_partitions()),
            c.batch_size(),
        )?;
        Ok(scan)
    }
}

/// The partitions a scan of `projection` runs as: one when it reads no
/// column (`count(*)`: a row count, nothing to spread; on a cluster each
/// partition is a stream from the worker), else DataFusion's
/// `target_partitions`.
pub fn partitions(projection: Option<&Vec<usize>>, target: usize) -> usize {
    match projection {
        Some(p) if p.is_empty() => 1,
        _ => target.max(1),
    }
}

/// The selected lines of one scan, computed once.
struct Scanned {
    snap: Arc<dyn Snapshot>,
    sel: Vec<DocSel>,
    /// Rows per document (after the limit).
    rows: Vec<u64>,
    total: u64,
    backends: Vec<String>,
}

/// The scan of `logs`: the engine's selection, then the projected
/// columns of its lines.
pub struct LogScanExec {
    source: Arc<dyn Source>,
    opts: SearchOptions,
    filters: Vec<String>,
    pred: Option<Pred>,
    cols: Vec<Col>,
    schema: SchemaRef,
    limit: Option<usize>,
    partitions: usize,
    batch_size: usize,
    props: Arc<PlanProperties>,
    scanned: Arc<Mutex<ScanState>>,
}

/// Where a scan's selection is. The plan holds the session's snapshot
/// (its read lock) only until every partition has started: then the
/// partitions' streams hold it, and it goes with the last of them. A
/// plan kept after its query (a cluster worker keeps its tasks' plans a
/// while) must not keep a follower from appending.
enum ScanState {
    /// Not computed yet.
    Pending,
    /// Computed; the partitions started so far.
    Held(Arc<Scanned>, Vec<bool>),
    /// Every partition started: what statistics and `EXPLAIN` show.
    Released { total: u64, backends: Vec<String> },
    /// The engine's error.
    Failed(String),
}

impl fmt::Debug for LogScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogScanExec")
            .field("filters", &self.filters)
            .field("limit", &self.limit)
            .finish()
    }
}

impl LogScanExec {
    /// The selection, computed on first use (statistics or execution),
    /// as `state` holds it (locked).
    fn compute(&self, state: &mut ScanState) -> Result<()> {
        if matches!(state, ScanState::Pending) {
            *state = match self.select() {
                Ok(s) => ScanState::Held(s, vec![false; self.partitions]),
                Err(e) => ScanState::Failed(e),
            };
        }
        match state {
            ScanState::Failed(e) => Err(DataFusionError::Execution(e.clone())),
            _ => Ok(()),
        }
    }

    /// The engine's selection over the session as it is now.
    fn select(&self) -> Result<Arc<Scanned>, String> {
        if let Some(p) = &self.pred {
            for q in crate::select::queries(p)? {
                self.source.prepare(&q, &self.opts);
            }
        }
        let snap = self.source.snapshot()?;
        let session = snap.session();
        let mut ev = Eval {
            session,
            opts: &self.opts,
            backends: Vec::new(),
        };
        let docs = session.corpus().docs();
        // No column read (`count(*)`): a count is enough.
        let sel = ev.scan(self.pred.as_ref(), self.cols.is_empty())?;
        let mut left = self.limit.map_or(u64::MAX, |l| l as u64);
        let rows: Vec<u64> = sel
            .iter()
            .zip(docs)
            .map(|(s, d)| {
                let n = s.len(d.lines().len()).min(left);
                left -= n;
                n
            })
            .collect();
        let total = rows.iter().sum();
        let backends = std::mem::take(&mut ev.backends);
        Ok(Arc::new(Scanned {
            snap: snap.clone(),
            sel,
            rows,
            total,
            backends,
        }))
    }

    /// Rows of the scan.
    fn total(&self) -> Result<u64> {
        let mut st = self.scanned.lock();
        self.compute(&mut st)?;
        Ok(match &*st {
            ScanState::Held(s, _) => s.total,
            ScanState::Released { total, .. } => *total,
            ScanState::Pending | ScanState::Failed(_) => 0,
        })
    }

    /// The selection for partition `p`'s stream; the plan lets go of it
    /// once every partition has one.
    fn start(&self, p: usize) -> Result<Arc<Scanned>> {
        let mut st = self.scanned.lock();
        self.compute(&mut st)?;
        let (s, done) = match &mut *st {
            ScanState::Held(s, started) => {
                if let Some(b) = started.get_mut(p) {
                    *b = true;
                }
                (s.clone(), started.iter().all(|&b| b))
            }
            _ => {
                return Err(DataFusionError::Execution(
                    "this scan's partitions all ran already: plan the query again".into(),
                ))
            }
        };
        if done {
            *st = ScanState::Released {
                total: s.total,
                backends: s.backends.clone(),
            };
        }
        Ok(s)
    }

    /// Partition `p`'s share of the rows: `[from, to)` in scan order.
    fn share(&self, total: u64, p: usize) -> (u64, u64) {
        let n = self.partitions as u128;
        let at = |k: usize| (u128::from(total) * k as u128 / n) as u64;
        (at(p), at(p + 1))
    }
}

impl DisplayAs for LogScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let names: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        write!(
            f,
            "LogScanExec: engine_filters=[{}]",
            self.filters.join(", ")
        )?;
        write!(f, ", projection=[{}]", names.join(", "))?;
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        let shown = match &*self.scanned.lock() {
            ScanState::Held(s, _) => Some((s.total, s.backends.clone())),
            ScanState::Released { total, backends } => Some((*total, backends.clone())),
            ScanState::Pending | ScanState::Failed(_) => None,
        };
        if let Some((total, backends)) = shown {
            write!(f, ", rows={total}")?;
            if !backends.is_empty() {
                write!(f, ", backends=[{}]", backends.join(", "))?;
            }
        }
        Ok(())
    }
}

impl ExecutionPlan for LogScanExec {
    crate::leaf_scan_methods!("LogScanExec");

    #[allow(deprecated)]
    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let total = self.total()?;
        let rows = match partition {
            None => total,
            Some(p) => {
                let (a, b) = self.share(total, p);
                b - a
            }
        };
        Ok(Arc::new(
            Statistics::new_unknown(&self.schema).with_num_rows(Precision::Exact(rows as usize)),
        ))
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let s = self.start(partition)?;
        let (from, to) = self.share(s.total, partition);
        let batches = Batches {
            s,
            cols: self.cols.clone(),
            schema: self.schema.clone(),
            batch: self.batch_size as u64,
            doc: 0,
            k: 0,
            seen: 0,
            from,
            to,
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        )))
    }
}

/// One partition's batches, built as they are pulled.
struct Batches {
    s: Arc<Scanned>,
    cols: Vec<Col>,
    schema: SchemaRef,
    batch: u64,
    /// The document being read, and the next of its selected rows.
    doc: usize,
    k: u64,
    /// Rows of the scan before `(doc, k)`.
    seen: u64,
    from: u64,
    to: u64,
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        // To this partition's next row: past documents before `from`
        // and those read to their end.
        loop {
            let n = *self.s.rows.get(self.doc)?;
            if self.seen + n <= self.from || self.k >= n {
                self.seen += n;
                self.doc += 1;
                self.k = 0;
                continue;
            }
            self.k = self.k.max(self.from.saturating_sub(self.seen));
            break;
        }
        if self.seen + self.k >= self.to {
            return None;
        }
        let n = self.s.rows[self.doc];
        let end = n.min(self.k + self.batch).min(self.to - self.seen);
        let out = build(&self.s, &self.cols, &self.schema, self.doc, self.k, end);
        self.k = end;
        Some(out)
    }
}

/// The batch of rows `k0..k1` of document `doc`'s selection.
fn build(
    s: &Scanned,
    cols: &[Col],
    schema: &SchemaRef,
    doc: usize,
    k0: u64,
    k1: u64,
) -> Result<RecordBatch> {
    let session = s.snap.session();
    let d = &session.corpus().docs()[doc];
    let columns = session.columns();
    let sel = &s.sel[doc];
    if cols.is_empty() {
        let opts = RecordBatchOptions::new().with_row_count(Some((k1 - k0) as usize));
        return Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            Vec::new(),
            &opts,
        )?);
    }
    let ids: Vec<u64> = (k0..k1).map(|k| sel.nth(k)).collect();
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(cols.len());
    for c in cols {
        let a: ArrayRef = match c {
            Col::File => {
                let mut b = StringBuilder::with_capacity(ids.len(), d.name().len() * ids.len());
                for _ in &ids {
                    b.append_value(d.name());
                }
                Arc::new(b.finish())
            }
            Col::LineNumber => Arc::new(UInt64Array::from_iter_values(
                ids.iter().map(|&i| d.first_line() + i + 1),
            )),
            Col::ByteOffset => Arc::new(UInt64Array::from_iter_values(
                ids.iter()
                    .map(|&i| d.first_offset() + d.lines().line_range(i).start),
            )),
            Col::Time => {
                let mut b = TimestampMillisecondBuilder::with_capacity(ids.len());
                for &i in &ids {
                    b.append_option(time(columns, doc, i));
                }
                Arc::new(b.finish().with_timezone("UTC"))
            }
            Col::Field(f) => {
                let mut b = StringBuilder::with_capacity(ids.len(), ids.len() * 8);
                for &i in &ids {
                    match field_value(columns, doc, *f, i) {
                        Some(v) => b.append_value(String::from_utf8_lossy(v)),
                        None => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
            Col::Line => {
                let mut b = StringBuilder::with_capacity(ids.len(), ids.len() * 64);
                for &i in &ids {
                    b.append_value(String::from_utf8_lossy(d.line(i)));
                }
                Arc::new(b.finish())
            }
            Col::LineBytes => {
                let mut b = BinaryBuilder::with_capacity(ids.len(), ids.len() * 64);
                for &i in &ids {
                    b.append_value(d.line(i));
                }
                Arc::new(b.finish())
            }
        };
        arrays.push(a);
    }
    let opts = RecordBatchOptions::new().with_row_count(Some(ids.len()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        arrays,
        &opts,
    )?)
}

impl LogScanExec {
    /// `self` as `Any` (tests find the scan in a plan).
    pub fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};
    use futures::TryStreamExt;
    use logsieve::{Corpus, Session};
    use parking_lot::RwLock;

    /// A scan's plan kept after its streams end (a cluster worker keeps
    /// its tasks' plans a while) holds no read of the session: a writer
    /// (the follower) gets the lock, and a partition started again is
    /// refused rather than read from a session that changed.
    #[test]
    fn a_plan_lets_go_of_the_session_once_its_partitions_ran() {
        let log = b"a ERROR 1\nb ok\nc ERROR 2\nd ERROR 3\n".to_vec();
        let lock = Arc::new(RwLock::new(Session::new(Corpus::from_bytes("x.log", log))));
        let table =
            LogsTable::new(crate::Local::over(lock.clone()), Default::default(), true).unwrap();
        let filter = col("line").like(lit("%ERROR%"));
        let plan = table.exec(None, &[filter], None, 2, 1).unwrap();
        let ctx = Arc::new(TaskContext::default());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let first = plan.execute(0, ctx.clone()).unwrap();
        assert!(
            lock.try_write().is_none(),
            "held while a partition is to start"
        );
        let second = plan.execute(1, ctx.clone()).unwrap();
        let rows: usize = rt.block_on(async {
            let mut n = 0;
            for s in [first, second] {
                let b: Vec<RecordBatch> = s.try_collect().await.unwrap();
                n += b.iter().map(|b| b.num_rows()).sum::<usize>();
            }
            n
        });
        assert_eq!(rows, 3);
        assert!(lock.try_write().is_some(), "the kept plan holds no read");
        let shown = format!(
            "{}",
            datafusion::physical_plan::displayable(plan.as_ref()).one_line()
        );
        assert!(shown.contains("rows=3"), "{shown}");
        let again = plan.execute(0, ctx).err().unwrap().to_string();
        assert!(again.contains("ran already"), "{again}");
    }
}
