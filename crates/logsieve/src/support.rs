//! "Can the GPU run this query?" answered once, for the planner and the GPU
//! backend alike ([`gpu_support`]). Every limit the GPU kernels have is
//! defined here and nowhere else.
//!
//! Two tiers. A query the literal kernels run as it is (tier 0:
//! [`gpu_support`], [`kernel_support`]) runs there alone. A query they
//! cannot run — a regex, a wildcard, `-w`, `-x`, Unicode `-i` — may still
//! hold literals every match contains ([`Query::required_literals`]):
//! tier 1 ([`prefilter_support`]) searches for those on the GPU, which
//! yields candidate lines, and the CPU matcher verifies each one. Tier 2
//! runs a regex's automaton whole ([`shift_and_support`]); `--fuzzy K`
//! runs the bitap kernel ([`bitap_support`]).

use crate::kernel::{Kernel, MultiKernel};
use std::sync::{Arc, Mutex, OnceLock};

use crate::query::classes::ClassSet;
use crate::query::glushkov::Automaton;
use crate::query::literals::RequiredLiterals;
use crate::query::{CaseMode, Query, QueryBuilder, QueryKind, QueryShape, Syntax};

/// The answers of this module that depend on the query alone — not on the
/// corpus or the device — kept per query shape for the routing point,
/// which asks them on every request: the position automaton (a regex
/// parse and compile, 10-50 us on the build machine), the direct kernel
/// per asked kernel, and tier 1's plan per candidate set (each builds a
/// literal query). Without this, auto ran 0.07-0.34 ms behind the same
/// route forced on the H100 (2026-11-25); `regex-route` in
/// `logsieve-bench` times each step.
#[derive(Default)]
struct Answers {
    shift_and: OnceLock<Result<Arc<Automaton>, Unsupported>>,
    kernel: Mutex<Vec<KernelAnswer>>,
    prefilter: Mutex<Vec<PrefilterAnswer>>,
}

type KernelAnswer = (Option<Kernel>, Result<GpuPlan, Unsupported>);

type PrefilterAnswer = (
    (Option<Kernel>, RequiredLiterals),
    Result<PrefilterPlan, Unsupported>,
);

/// Query shapes whose answers are kept (least recently used dropped).
const MEMO_CAPACITY: usize = 128;

static MEMO: Mutex<Vec<(QueryShape, Arc<Answers>)>> = Mutex::new(Vec::new());

/// The kept answers of `q`'s shape (created empty on first use), for the
/// queries the literal kernels cannot run as they are (regex, wildcard,
/// `-w`, `-x`, Unicode `-i`): the others' answers are cheap.
fn answers(q: &Query) -> Option<Arc<Answers>> {
    let regexy = matches!(q.kind(), QueryKind::Regex | QueryKind::Wildcard)
        || q.word()
        || q.whole_line()
        || q.case() == CaseMode::Unicode;
    if !regexy {
        return None;
    }
    // Only queries of a few patterns are kept (`Query::memo_key`); a long
    // list's literal answers are cheap.
    if !q.memoised() {
        return None;
    }
    let mut m = MEMO.lock().ok()?;
    if let Some(i) = m.iter().position(|(k, _)| q.has_shape(k)) {
        let e = m.remove(i);
        let a = e.1.clone();
        m.push(e);
        return Some(a);
    }
    if m.len() >= MEMO_CAPACITY {
        m.remove(0);
    }
    let a = Arc::new(Answers::default());
    m.push((q.shape_key(), a.clone()));
    Some(a)
}

/// The longest single pattern the GPU kernels take: it lives in the query's
/// parameters (512-byte uniform, or the immediates), packed in words.
/// Several literals run on the many-literal kernels, whose patterns live in
/// a table of any length.
pub const MAX_PATTERN: usize = 64;

/// What the GPU runs for a query it supports: the kernel and the work
/// this module compiled for it, which the route carries to the executor
/// and the executor hands to the GPU as it is (nothing downstream builds
/// it again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuPlan {
    /// The default kernel for the query's shape: `scan` for one literal,
    /// the default many-literal kernel (or its short-pattern fallback) for
    /// several.
    pub kernel: Kernel,
    /// Why another kernel than the default many-literal one runs, if so.
    pub note: Option<String>,
    /// What the kernel runs.
    pub work: GpuWork,
}

/// The compiled work of a [`GpuPlan`].
#[derive(Clone, Debug)]
pub enum GpuWork {
    /// The query's literals, as the literal kernels take them (the GPU
    /// builds their uniform or tables against the corpus it holds).
    Literals,
    /// Tier 2: the regex's position automaton, for `shift-and`.
    Automaton(Arc<Automaton>),
    /// `--fuzzy K`: the pattern chains, for `bitap`.
    Bitap(Arc<crate::query::bitap::Bitap>),
}

/// Two plans' work is the same when it is the same compiled automaton
/// (compiled once per query shape) or equal tables.
impl PartialEq for GpuWork {
    fn eq(&self, other: &GpuWork) -> bool {
        match (self, other) {
            (GpuWork::Literals, GpuWork::Literals) => true,
            (GpuWork::Automaton(a), GpuWork::Automaton(b)) => Arc::ptr_eq(a, b),
            (GpuWork::Bitap(a), GpuWork::Bitap(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for GpuWork {}

/// Why the GPU cannot run a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    reason: String,
    categorical: bool,
}

impl Unsupported {
    fn categorical(reason: String) -> Unsupported {
        Unsupported {
            reason,
            categorical: true,
        }
    }

    fn shape(reason: String) -> Unsupported {
        Unsupported {
            reason,
            categorical: false,
        }
    }

    /// A categorical inhibitor (the query's kind, length or case rules):
    /// the planner reports it as an inhibitor. Other shapes (`-w`, `-x`,
    /// the empty pattern) are reported as notes.
    pub fn is_categorical(&self) -> bool {
        self.categorical
    }

    /// The reason, for a person.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// Whether the GPU kernels run `q`, and with which kernel by default:
/// non-empty literals (one of at most [`MAX_PATTERN`] bytes, or several of
/// any length), case-sensitive or ASCII `-i`, without `-w` or `-x`. `-v`
/// and `-m` are applied on the host, so they do not matter here.
pub fn gpu_support(q: &Query) -> Result<GpuPlan, Unsupported> {
    kernel_support(q, None)
}

/// [`gpu_support`] for the kernel `asked` for (`--gpu-kernel`): the kernel
/// that runs is [`Kernel::effective`]; the many-literal kernels hold their
/// patterns in a table, so [`MAX_PATTERN`] binds only the single-literal
/// ones.
///
/// Tier 2 ([`shift_and_support`]): `shift-and` when asked for by name, and
/// by default for a query the literal kernels cannot run and that has no
/// required literal for tier 1 ([`prefilter_support`]): a regex without a
/// useful literal runs whole on the GPU; one with a literal runs tier 1.
/// In the browser, where tier 1 does not run, tier 2 takes every regex it
/// can.
///
/// Fuzzy matching ([`bitap_support`]): `bitap` when asked for by name, and
/// by default for `--fuzzy K` with K >= 1 (K = 0 is a literal).
pub fn kernel_support(q: &Query, asked: Option<Kernel>) -> Result<GpuPlan, Unsupported> {
    let Some(memo) = answers(q) else {
        return kernel_support_uncached(q, asked);
    };
    if let Some(r) = memo
        .kernel
        .lock()
        .ok()
        .and_then(|m| m.iter().find(|(k, _)| *k == asked).map(|(_, r)| r.clone()))
    {
        return r;
    }
    let r = kernel_support_uncached(q, asked);
    if let Ok(mut m) = memo.kernel.lock() {
        m.push((asked, r.clone()));
    }
    r
}

fn kernel_support_uncached(q: &Query, asked: Option<Kernel>) -> Result<GpuPlan, Unsupported> {
    if let Some(why) = q.cpu_only() {
        return Err(Unsupported::categorical(why.to_string()));
    }
    if asked == Some(Kernel::Bitap) {
        return bitap_support(q).map(|b| GpuPlan {
            kernel: Kernel::Bitap,
            note: None,
            work: GpuWork::Bitap(Arc::new(b)),
        });
    }
    if asked.is_none() && q.kind() == QueryKind::Fuzzy {
        return bitap_support(q).map(|b| GpuPlan {
            kernel: Kernel::Bitap,
            note: Some(format!(
                "fuzzy: Wu-Manber bitap on the GPU ({} state chains of {} words)",
                b.k + 1,
                b.words
            )),
            work: GpuWork::Bitap(Arc::new(b)),
        });
    }
    if asked == Some(Kernel::ShiftAnd) {
        return shift_and_support(q).map(|a| GpuPlan {
            kernel: Kernel::ShiftAnd,
            note: None,
            work: GpuWork::Automaton(a),
        });
    }
    match literal_support(q, asked) {
        Err(u)
            if asked.is_none()
                && ((q.literal_alternatives().is_empty()
                    // A class string holds a byte: tier 1's (`prefilter_uncached`).
                    && q.class_set().and_then(|c| c.literals()).is_none())
                    || cfg!(target_arch = "wasm32"))
                && q.matcher.regex_pattern().is_some() =>
        {
            match shift_and_support(q) {
                Ok(a) => Ok(GpuPlan {
                    kernel: Kernel::ShiftAnd,
                    work: GpuWork::Automaton(a),
                    note: Some(format!(
                        "tier 2: the regex's automaton on the GPU ({u}; {})",
                        match q.literal_alternatives().is_empty() {
                            true => "no required literal",
                            false => "tier 1 does not run in the browser",
                        }
                    )),
                }),
                // Both tiers' reasons (a forced route shows them).
                Err(t) => Err(Unsupported {
                    reason: format!("{u}; tier 2: {t}"),
                    categorical: u.categorical,
                }),
            }
        }
        r => r,
    }
}

/// Whether tier 2 runs `q`: the `shift-and` kernel over the position
/// automaton of the query's CPU regex (`query::glushkov`: regexes,
/// wildcards, `-w`, `-x`, Unicode `-i`). Not: fuzzy matching and plain
/// literals (no regex matcher; the literal kernels run those), more than
/// [`crate::query::glushkov::MAX_POSITIONS`] positions once bounded
/// repetition is expanded, more than
/// [`crate::query::glushkov::MAX_GROUPS`] look-around edge groups. It
/// runs in the browser build too (its pipelines and its readback of
/// undecided lines are async); tier 1 does not (`prefilter_support`).
pub fn shift_and_support(q: &Query) -> Result<Arc<Automaton>, Unsupported> {
    match answers(q) {
        Some(memo) => memo.shift_and.get_or_init(|| shift_and_uncached(q)).clone(),
        None => shift_and_uncached(q),
    }
}

fn shift_and_uncached(q: &Query) -> Result<Arc<Automaton>, Unsupported> {
    if let Some(why) = q.cpu_only() {
        return Err(Unsupported::categorical(why.to_string()));
    }
    if q.kind() == QueryKind::Fuzzy {
        return Err(Unsupported::categorical(
            "fuzzy matching runs on the bitap kernel, not the regex automaton".to_string(),
        ));
    }
    Automaton::for_query(q)
        .map(Arc::new)
        .map_err(|e| Unsupported::categorical(format!("GPU regex automaton: {e}")))
}

/// Whether the `bitap` kernel runs `q`: `--fuzzy K` (any K, `-i` folding
/// ASCII letters, several patterns) whose patterns hold at most
/// [`crate::query::bitap::MAX_BITS`] bytes together (longer sets stay on
/// the CPU). Every line is decided on the GPU: no candidates, no
/// readback of undecided lines, so the browser build runs it too.
pub fn bitap_support(q: &Query) -> Result<crate::query::bitap::Bitap, Unsupported> {
    if let Some(why) = q.cpu_only() {
        return Err(Unsupported::categorical(why.to_string()));
    }
    if !matches!(q.syntax(), Syntax::Fuzzy(_)) {
        return Err(Unsupported::categorical(
            "the bitap kernel runs fuzzy queries (--fuzzy K) only".to_string(),
        ));
    }
    // The builder refuses -w/-x with K >= 1; K = 0 is a literal, and a
    // literal with -w/-x is tier 1's or tier 2's, not bitap's.
    if q.word() || q.whole_line() {
        return Err(Unsupported::shape(
            "the bitap kernel has no word or line anchors (-w, -x)".to_string(),
        ));
    }
    crate::query::bitap::Bitap::for_query(q)
        .map_err(|e| Unsupported::categorical(format!("fuzzy matching: {e}")))
}

/// The literal kernels' part of [`kernel_support`]: whether `scan`, the
/// single-literal kernels or a many-literal kernel run `q` as it is.
pub fn literal_support(q: &Query, asked: Option<Kernel>) -> Result<GpuPlan, Unsupported> {
    match q.kind() {
        QueryKind::Regex => {
            return Err(Unsupported::categorical(
                "regex (the regex crate runs on the CPU)".to_string(),
            ))
        }
        QueryKind::Wildcard => {
            return Err(Unsupported::categorical("wildcard pattern".to_string()))
        }
        QueryKind::Fuzzy => return Err(Unsupported::categorical("fuzzy matching".to_string())),
        QueryKind::Literal => {}
    }
    let lits = q.literals().unwrap_or(&[]);
    let kernel = Kernel::effective(asked, q);
    let (shortest, longest) = q.literal_lens().unwrap_or((0, 0));
    if kernel.multi().is_none() && longest > MAX_PATTERN {
        return Err(Unsupported::categorical(format!(
            "pattern longer than {MAX_PATTERN} bytes ({longest} bytes)"
        )));
    }
    if q.case() == CaseMode::Unicode {
        return Err(Unsupported::categorical(
            "Unicode case-insensitive (-i with a non-ASCII pattern)".to_string(),
        ));
    }
    if lits.is_empty() || shortest == 0 {
        return Err(Unsupported::shape(
            "the empty pattern matches every line (no GPU needed)".to_string(),
        ));
    }
    if q.word() {
        return Err(Unsupported::shape(
            "-w (word boundaries) runs on the CPU".to_string(),
        ));
    }
    if q.whole_line() {
        return Err(Unsupported::shape(
            "-x (whole lines) runs on the CPU".to_string(),
        ));
    }
    if kernel.multi().is_some() && cfg!(target_arch = "wasm32") {
        return Err(Unsupported::shape(
            "several patterns run on the CPU engine in the browser \
             (the many-literal GPU kernels block, which a browser thread cannot)"
                .to_string(),
        ));
    }
    let note = kernel.multi().and_then(|_| {
        asked
            .and_then(Kernel::multi)
            .unwrap_or(MultiKernel::DEFAULT)
            .fallback_note(q)
    });
    Ok(GpuPlan {
        kernel,
        note,
        work: GpuWork::Literals,
    })
}

/// What tier 1 runs for a query the literal kernels cannot run directly.
#[derive(Clone, Debug)]
pub struct PrefilterPlan {
    /// The literal kernel that finds candidate lines (on
    /// [`PrefilterPlan::literals`]).
    pub kernel: Kernel,
    /// The required literals as a case-sensitive literal query: exact
    /// bytes (case variants listed), each cut to [`MAX_PATTERN`] bytes (a
    /// prefix of a required literal is required too).
    pub literals: Query,
    /// Why another kernel than the default many-literal one runs, if so.
    pub note: Option<String>,
    /// Who decides the candidates.
    pub verify: Verifier,
    /// The regex as a class string that `scan` answers exactly on this
    /// corpus ([`class_scan`]): then tier 1 is that one pass, with nothing
    /// to verify (`gpu::tier2`'s `search_verified` runs it). Set by the
    /// routing point (`planner::tier1_literals`), which knows the corpus.
    pub classes: Option<Arc<ClassSet>>,
}

/// `q`'s class string (`query::classes`) when `scan` answers it exactly
/// on `corpus`: always when its classes and `\b` are ASCII ones, and for
/// Unicode ones (`\d`, `\w`, `\b` by default) when no document holds a
/// byte >= 0x80. `None` elsewhere: tier 1 then scans the plan's literals
/// and the automaton verifies (exact either way). The routing point and
/// the GPU executor both ask this, so they agree.
pub fn class_scan(q: &Query, corpus: &crate::corpus::Corpus) -> Option<Arc<ClassSet>> {
    if cfg!(target_arch = "wasm32") {
        return None;
    }
    let cs = q.class_set()?;
    (!cs.unicode() || corpus.docs().iter().all(|d| d.is_ascii())).then_some(cs)
}

/// Who verifies tier 1's candidate lines. Either way the answer is exact:
/// candidates are a prefilter's (false positives, never false negatives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verifier {
    /// The CPU matcher, over the candidate lines read back
    /// (`gpu::readback::Candidates::verify`).
    Cpu,
    /// `shift-and` on the GPU, over the lines `scan` marked, in the same
    /// submission (no candidate readback): when the literal kernel is
    /// `scan` and [`shift_and_support`] takes the query.
    Gpu,
}

impl Verifier {
    /// `cpu` or `gpu/shift-and`, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Verifier::Cpu => "cpu",
            Verifier::Gpu => "gpu/shift-and",
        }
    }
}

impl PrefilterPlan {
    /// The literals for `--explain`: the first few, quoted, the rest
    /// counted.
    pub fn describe(&self) -> String {
        let lits = describe_literals(self.literals.patterns());
        match self.literals.case() {
            crate::query::CaseMode::Sensitive => lits,
            _ => format!("{lits} (any ASCII case)"),
        }
    }
}

/// Up to four literals quoted (each cut to 24 bytes), and how many more.
pub fn describe_literals(lits: &[Vec<u8>]) -> String {
    const SHOW: usize = 4;
    let mut parts: Vec<String> = lits
        .iter()
        .take(SHOW)
        .map(|l| {
            let cut = &l[..l.len().min(24)];
            let more = if cut.len() < l.len() { "…" } else { "" };
            format!("{:?}{more}", String::from_utf8_lossy(cut))
        })
        .collect();
    if lits.len() > SHOW {
        parts.push(format!("+{} more", lits.len() - SHOW));
    }
    parts.join(", ")
}

/// The executor's side of a tier-1 route: the plan derived again with the
/// kernel the caller asked for (`asked`, as the route saw it), which must
/// name the route's `kernel`. Deriving it with the route's kernel as the
/// ask instead could disagree with the route (a literal kernel named by
/// hand takes queries it does not take by default: REGRESSION
/// gpu_bitap::random_fuzzy_queries_on_the_gpu, a 65-byte `--fuzzy 0`
/// routed to tier 1 and then refused as "run directly").
pub fn prefilter_plan(
    q: &Query,
    asked: Option<Kernel>,
    kernel: Kernel,
) -> Result<PrefilterPlan, Unsupported> {
    let plan = prefilter_support(q, asked)?;
    if plan.kernel != kernel {
        return Err(Unsupported::shape(format!(
            "the route chose {} for tier 1, the plan {}",
            kernel.name(),
            plan.kernel.name()
        )));
    }
    Ok(plan)
}

/// Whether tier 1 runs `q` — the required literals on the GPU as a
/// prefilter, every candidate line verified by the CPU matcher — and with
/// which kernel (`asked` as in [`kernel_support`]). The literals are the
/// first of [`Query::literal_alternatives`]: the CPU's own prefilter's
/// ([`Query::required_literals`]: at most
/// [`crate::query::literals::MAX_SET`], none shorter than
/// [`crate::query::literals::MIN_LEN`] bytes), or for a regex without
/// one a rare byte it must hold (`@`), so tier 1 takes regexes,
/// wildcards, `-w`, `-x` and Unicode `-i` exactly when such a set exists.
/// Fuzzy matching, and queries without required literals, stay on the
/// CPU. A query [`kernel_support`] takes is not tier 1's (it runs directly).
pub fn prefilter_support(q: &Query, asked: Option<Kernel>) -> Result<PrefilterPlan, Unsupported> {
    match q.literal_alternatives().first() {
        Some(req) => prefilter_support_with(q, asked, req),
        None => prefilter_support_with(q, asked, &RequiredLiterals::from_literals(Vec::new())),
    }
}

/// At most this many required literals run as one `scan` each (their
/// line bits OR-ed, one submission) with the automaton verifying the
/// lines they marked on the GPU; a larger set runs on a many-literal
/// kernel and the CPU verifies. Each `scan` pass costs about what the
/// automaton costs over 2-5% of the lines on the H100 (0.1-0.2 ms against
/// 2-9 ms for tier 2 over all lines, 194 MB), so a few passes for a set
/// far rarer than one common literal pay.
pub const MAX_SCANS: usize = 4;

/// [`prefilter_support`] for one candidate set `req` of `q`'s required
/// literals (`Query::literal_alternatives`; the routing point takes the
/// one that finds the fewest lines, `planner::tier1_literals`).
pub fn prefilter_support_with(
    q: &Query,
    asked: Option<Kernel>,
    req: &RequiredLiterals,
) -> Result<PrefilterPlan, Unsupported> {
    let Some(memo) = answers(q) else {
        return prefilter_uncached(q, asked, req);
    };
    let found = memo.prefilter.lock().ok().and_then(|m| {
        m.iter()
            .find(|((k, l), _)| *k == asked && l == req)
            .map(|(_, r)| r.clone())
    });
    if let Some(r) = found {
        return r;
    }
    let r = prefilter_uncached(q, asked, req);
    if let Ok(mut m) = memo.prefilter.lock() {
        m.push(((asked, req.clone()), r.clone()));
    }
    r
}

fn prefilter_uncached(
    q: &Query,
    asked: Option<Kernel>,
    req: &RequiredLiterals,
) -> Result<PrefilterPlan, Unsupported> {
    if let Some(why) = q.cpu_only() {
        return Err(Unsupported::categorical(why.to_string()));
    }
    if q.kind() == QueryKind::Fuzzy {
        return Err(Unsupported::categorical(
            "fuzzy matching (no GPU prefilter)".to_string(),
        ));
    }
    if kernel_support(q, asked).is_ok() {
        return Err(Unsupported::shape(
            "the GPU kernels run this query directly".to_string(),
        ));
    }
    // A class string without a required literal of 3+ bytes (`\bu\d{5}\b`,
    // a UUID, an ISO timestamp) still holds a byte every match has: tier 1
    // scans it, and where the class string runs as itself (the routing
    // point sets `PrefilterPlan::classes`) that pass is the answer.
    let from_classes;
    let req = match q.class_set().and_then(|c| c.literals()) {
        Some(lits) if req.literals().is_empty() => {
            from_classes = RequiredLiterals::from_literals(lits);
            &from_classes
        }
        _ => req,
    };
    if req.literals().is_empty() {
        return Err(Unsupported::categorical(
            "no required literal of 3+ bytes for the GPU prefilter".to_string(),
        ));
    }
    // A literal holding `\n` cannot occur inside a line; the literal query
    // would split it on `\n` (grep's rule). Such a regex never matches.
    if req.literals().iter().any(|l| l.contains(&b'\n')) {
        return Err(Unsupported::categorical(
            "a required literal holds a newline".to_string(),
        ));
    }
    if cfg!(target_arch = "wasm32") {
        return Err(Unsupported::shape(
            "the GPU prefilter runs natively only (its readback blocks)".to_string(),
        ));
    }
    let mut lits: Vec<Vec<u8>> = req
        .literals()
        .iter()
        .map(|l| l[..l.len().min(MAX_PATTERN)].to_vec())
        .collect();
    lits.sort();
    lits.dedup();
    // Folded literals (`query::literals::folded_alternatives`) are lower
    // case and searched with ASCII `-i` (`scan`'s fold, the many-literal
    // kernels' folded tables).
    let literals = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .case_insensitive(req.folded())
        .build(&lits)
        .map_err(|e| Unsupported::categorical(format!("GPU prefilter literals: {e}")))?;
    // A few literals, each on `scan` (OR-ed line bits), when the
    // automaton verifies on the GPU and no other kernel is asked for.
    let few = lits.len() > 1 && lits.len() <= MAX_SCANS;
    if few && matches!(asked, None | Some(Kernel::Scan)) && shift_and_support(q).is_ok() {
        return Ok(PrefilterPlan {
            kernel: Kernel::Scan,
            literals,
            note: Some(format!("{} scan passes, line bits OR-ed", lits.len())),
            verify: Verifier::Gpu,
            classes: None,
        });
    }
    let plan = kernel_support(&literals, asked)?;
    // One literal on `scan` leaves its bits for the automaton; the
    // many-literal kernels' candidates are verified on the CPU (not
    // written for them yet).
    let verify = match plan.kernel == Kernel::Scan && shift_and_support(q).is_ok() {
        true => Verifier::Gpu,
        false => Verifier::Cpu,
    };
    Ok(PrefilterPlan {
        kernel: plan.kernel,
        literals,
        note: plan.note,
        verify,
        classes: None,
    })
}

/// Whether the stats kernel runs with `search` as its text filter: it takes
/// the line bits of one `scan`, so the search must be one literal the GPU
/// runs (several literals, which `scan` does not take, stay on the CPU).
pub fn stats_support(search: Option<&Query>) -> Result<(), Unsupported> {
    let Some(q) = search else {
        return Ok(());
    };
    let plan = gpu_support(q)?;
    if plan.kernel != Kernel::Scan {
        return Err(Unsupported::shape(
            "the stats kernel filters by one literal (several run on the CPU)".to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{QueryBuilder, Syntax};

    fn fixed(p: &[u8], f: &dyn Fn(&mut QueryBuilder)) -> Query {
        let mut b = QueryBuilder::new();
        b.syntax(Syntax::Fixed);
        f(&mut b);
        b.build(&[p]).unwrap()
    }

    #[test]
    fn supported_shapes_and_their_kernels() {
        let ok = |q: &Query| gpu_support(q).map(|p| p.kernel);
        assert_eq!(ok(&fixed(b"error", &|_| {})), Ok(Kernel::Scan));
        assert_eq!(
            ok(&fixed(b"error", &|b| {
                b.case_insensitive(true).invert(true);
            })),
            Ok(Kernel::Scan)
        );
        assert_eq!(ok(&fixed(&[b'a'; 64], &|_| {})), Ok(Kernel::Scan));
        assert_eq!(ok(&fixed(b"abcd\nefgh", &|_| {})), Ok(Kernel::Bloom));
        let short = gpu_support(&fixed(b"a\nbcde", &|_| {})).unwrap();
        assert_eq!(short.kernel, Kernel::Ac);
        assert!(short.note.unwrap().contains("bloom needs"));
        let long = [vec![b'a'; 100], b"bcde".to_vec()].join(&b'\n');
        assert_eq!(ok(&fixed(&long, &|_| {})), Ok(Kernel::Bloom));
        // One long pattern: only a many-literal kernel asked for by name.
        let one_long = fixed(&[b'a'; 65], &|_| {});
        assert!(gpu_support(&one_long).is_err());
        let bloom = kernel_support(&one_long, Some(Kernel::Bloom)).unwrap();
        assert_eq!(bloom.kernel, Kernel::Bloom);
    }

    #[test]
    fn fuzzy_runs_bitap_up_to_its_chain() {
        let fz = |p: &str, k: u8| {
            QueryBuilder::new()
                .syntax(Syntax::Fuzzy(k))
                .build(&[p])
                .unwrap()
        };
        let p = gpu_support(&fz("NullPointerExceptoin", 1)).unwrap();
        assert_eq!(p.kernel, Kernel::Bitap);
        assert!(p.note.unwrap().contains("bitap"));
        // K = 0 is a literal: scan by default, bitap by name.
        assert_eq!(gpu_support(&fz("hello", 0)).unwrap().kernel, Kernel::Scan);
        let named = kernel_support(&fz("hello", 0), Some(Kernel::Bitap)).unwrap();
        assert_eq!(named.kernel, Kernel::Bitap);
        // Longer than the chain: the CPU, with the reason.
        let long = gpu_support(&fz(&"a".repeat(257), 2)).unwrap_err();
        assert!(
            long.is_categorical() && long.reason().contains("256"),
            "{long}"
        );
        // Not fuzzy: bitap refuses by name; shift-and refuses fuzzy.
        let lit = fixed(b"error", &|_| {});
        assert!(kernel_support(&lit, Some(Kernel::Bitap)).is_err());
        assert!(kernel_support(&fz("hello", 1), Some(Kernel::ShiftAnd)).is_err());
        assert!(kernel_support(&fz("hello", 1), Some(Kernel::Scan)).is_err());
    }

    #[test]
    fn stats_take_one_literal() {
        assert!(stats_support(None).is_ok());
        assert!(stats_support(Some(&fixed(b"error", &|_| {}))).is_ok());
        // REGRESSION: two literals reached the GPU stats path, which
        // filtered by the first one only.
        assert!(stats_support(Some(&fixed(b"error\nwarn", &|_| {}))).is_err());
        let re = QueryBuilder::new().build(&["a+b"]).unwrap();
        assert!(stats_support(Some(&re)).is_err());
    }

    #[test]
    fn unsupported_shapes_say_why() {
        let why = |q: &Query| gpu_support(q).unwrap_err();
        let long = why(&fixed(&[b'a'; 65], &|_| {}));
        assert!(long.is_categorical() && long.reason().contains("longer than 64"));
        assert!(!why(&fixed(b"", &|_| {})).is_categorical());
        assert!(!why(&fixed(b"a\n\nb", &|_| {})).is_categorical());
        assert!(why(&fixed(b"err", &|b| {
            b.word(true);
        }))
        .reason()
        .contains("-w"));
        assert!(why(&fixed(b"err", &|b| {
            b.whole_line(true);
        }))
        .reason()
        .contains("-x"));
        // The literal kernels' reasons.
        let scan = |q: &Query| kernel_support(q, Some(Kernel::Scan)).unwrap_err();
        let e_ci = fixed("é".as_bytes(), &|b| {
            b.case_insensitive(true);
        });
        assert!(scan(&e_ci).reason().contains("Unicode"));
        let re = QueryBuilder::new().build(&["a+b"]).unwrap();
        assert!(scan(&re).reason().contains("regex"));
        // `a+b` is a class string (`ab`, exactly where `a+b` matches):
        // tier 1 scans its `b` and tests the `a`; `é` under Unicode -i
        // goes to tier 2.
        assert!(re.class_set().is_some());
        assert!(prefilter_support(&re, None).is_ok());
        assert!(gpu_support(&re).is_err());
        let p = gpu_support(&e_ci).unwrap();
        assert_eq!(p.kernel, Kernel::ShiftAnd);
        assert!(p.note.unwrap().contains("tier 2"));
        let big = QueryBuilder::new().build(&["a{300}"]).unwrap();
        assert!(why(&big).reason().contains("regex"));
        assert!(shift_and_support(&big)
            .unwrap_err()
            .reason()
            .contains("positions"));
    }
}
