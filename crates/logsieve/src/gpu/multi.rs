//! The many-literal kernels (`trie`, `ac`, `prefix-hash`, `bloom`): which
//! one runs a query is [`crate::kernel::MultiKernel`] (typed, outside the
//! backend), what they cannot run is [`crate::support::kernel_support`].
//! Their tables, pipelines and driver are in `kernels/multi_common.rs` and
//! each kernel's own file; the corpus runs them in `pattern_set.rs`. This
//! module keeps the tests of that choice against the tables.

pub use crate::kernel::MultiKernel;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{Query, QueryBuilder, Syntax};

    fn q(p: &[&[u8]], ci: bool) -> Query {
        QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(ci)
            .build(p)
            .unwrap()
    }

    #[test]
    fn planner_sends_many_literals_to_the_multi_kernel() {
        use crate::planner::{self, Calibration, Choice, DeviceClass, PlanInput, SampleStats};
        let long = vec![b'x'; 70];
        let query = q(&[b"10.0.0.1", &long], false);
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let plan = |query: &Query| {
            planner::plan(&PlanInput {
                query,
                want: crate::Want::Count,
                line_ids: true,
                bytes: 1 << 30,
                lines: Some((1 << 30) / 200),
                threads: 1,
                gpu: Some((DeviceClass::Discrete, "test gpu".into())),
                resident: true,
                gpu_unsupported: crate::gpu::unsupported_reason(query),
                prefilter: None,
                tier1_rejected: None,
                sample: SampleStats::default(),
                calibration: &cal,
            })
        };
        let d = plan(&query);
        assert!(d.inhibitors.is_empty(), "{:?}", d.inhibitors);
        assert_eq!(d.choice, Choice::Gpu(crate::Kernel::Bloom));
        // A pattern shorter than 4 bytes: ac, and --explain says why.
        let short = q(&[b"10.0.0.1", b"ab"], false);
        let d = plan(&short);
        assert_eq!(d.choice, Choice::Gpu(crate::Kernel::Ac));
        assert!(
            d.explain().contains("bloom needs >= 4-byte"),
            "{}",
            d.explain()
        );
        assert_eq!(MultiKernel::choose(None, &short), MultiKernel::Ac);
        assert_eq!(MultiKernel::choose(None, &query), MultiKernel::Bloom);
        assert_eq!(
            planner::multi_kernel(&short).0,
            MultiKernel::Bloom.for_query(&short).into()
        );
        // One pattern longer than 64 bytes is still a CPU query.
        let one = q(&[&long], false);
        assert!(!planner::inhibitors(&one, crate::Want::Count, &SampleStats::default()).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for k in MultiKernel::ALL {
            assert_eq!(MultiKernel::from_name(k.name()), Some(k));
            assert_eq!(
                super::super::GpuKernel::from_name(k.name())
                    .and_then(super::super::GpuKernel::multi),
                Some(k)
            );
        }
    }
}
