//! "Can the GPU run this query?" answered once, for the planner and the GPU
//! backend alike ([`gpu_support`]). Every limit the GPU kernels have is
//! defined here and nowhere else.

use crate::kernel::{Kernel, MultiKernel};
use crate::query::{CaseMode, Query, QueryKind};

/// The longest single pattern the GPU kernels take: it lives in the query's
/// parameters (512-byte uniform, or the immediates), packed in words.
/// Several literals run on the many-literal kernels, whose patterns live in
/// a table of any length.
pub const MAX_PATTERN: usize = 64;

/// What the GPU runs for a query it supports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuPlan {
    /// The default kernel for the query's shape: `scan` for one literal,
    /// the default many-literal kernel (or its short-pattern fallback) for
    /// several.
    pub kernel: Kernel,
    /// Why another kernel than the default many-literal one runs, if so.
    pub note: Option<String>,
}

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
pub fn kernel_support(q: &Query, asked: Option<Kernel>) -> Result<GpuPlan, Unsupported> {
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
    let longest = lits.iter().map(|p| p.len()).max().unwrap_or(0);
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
    if lits.is_empty() || lits.iter().any(|l| l.is_empty()) {
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
    Ok(GpuPlan { kernel, note })
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
        assert!(why(&fixed("é".as_bytes(), &|b| {
            b.case_insensitive(true);
        }))
        .reason()
        .contains("Unicode"));
        let re = QueryBuilder::new().build(&["a+b"]).unwrap();
        assert!(why(&re).reason().contains("regex"));
    }
}
