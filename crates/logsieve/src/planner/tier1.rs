//! Tier 1's literals: which of a query's candidate sets of required
//! literals (`Query::literal_alternatives`: prefix sets, inner literals and
//! alternations, suffix sets) finds the fewest candidate lines on this
//! corpus, at the lowest estimated GPU cost.
//!
//! The static pick (`RequiredLiterals::from_hir`: longer literals, fewer of
//! them, rarer bytes by a fixed log-text ranking) cannot know the corpus:
//! in `web-\d\d (ERROR|WARN)` it takes `web-` (one literal of 4 bytes),
//! which is on ~69% of generated lines; the set {`ERROR`, `WARN`} is on
//! far fewer. Here each candidate set is counted on the planner's sample
//! windows (the lines holding one of its members), memoised per corpus and
//! query shape like the sample, and the set with the lowest estimated GPU
//! time (`tier1_gpu_ms`: the literal passes plus verifying its share)
//! wins. Without a sample (an empty corpus) the static pick stands.

use super::{sample_windows, Calibration, VERIFY_MS_PER_LINE};
use crate::corpus::Corpus;
use crate::kernel::Kernel;
use crate::query::classes::ClassSet;
use crate::query::literals::{Prefilter, RequiredLiterals};
use crate::query::Query;
use crate::support::{prefilter_support_with, PrefilterPlan, Unsupported, Verifier};

/// Sample windows the shares are counted on (the planner's sample's).
pub const WINDOWS: usize = 16;

/// Lines in the sample windows and, per candidate set of `q`
/// (`Query::literal_alternatives`, in order), the sampled lines holding one
/// of its members. Memoised per corpus and query shape.
pub fn literal_counts(corpus: &Corpus, q: &Query) -> (u64, Vec<u64>) {
    let alts = q.literal_alternatives();
    let key = super::memo_key("tier1", q, WINDOWS, false);
    if let Some(v) = corpus.samples.lock().ok().and_then(|mut m| m.get(&key)) {
        if v.len() == alts.len() + 1 {
            return (v[0], v[1..].to_vec());
        }
    }
    let windows = sample_windows(corpus, WINDOWS);
    let mut lines = 0;
    for &(d, s, e) in &windows {
        lines += crate::cpu::count_lines(&corpus.docs()[d].data()[s..e]);
    }
    let counts: Vec<u64> = alts
        .iter()
        .map(|alt| {
            let pre = Prefilter::new(alt.clone());
            let mut n = 0;
            for &(d, s, e) in &windows {
                let hay = corpus.docs()[d].data();
                let mut pos = s;
                while let Some(p) = pre.find(hay, pos, e) {
                    n += 1;
                    pos = memchr::memchr(b'\n', &hay[p..e]).map_or(e, |i| p + i + 1);
                }
            }
            n
        })
        .collect();
    if let Ok(mut m) = corpus.samples.lock() {
        let mut v = vec![lines];
        v.extend(&counts);
        m.put(key, v);
    }
    (lines, counts)
}

/// Class-test units a second on the GPU where a class string's survivors
/// are checked in full (`scan.wgsl`'s `class_at`; a unit is one word's
/// range tests or one position's lookup: `ClassString::test_units`).
/// Provisional, from the per-position loop it replaced (H100,
/// 2026-11-28, `trace=[0-9a-f]{32}`: 688,597 matching lines of 1M, 38
/// positions, 0.55 ms over its scan, 47 G positions/s) at a word's tests
/// costing about two positions'.
const CLASS_UNITS_PER_S: f64 = 25e9;

/// Estimated GPU time of a class set (`PrefilterPlan::classes`), ms, as
/// [`tier1_gpu_ms`] (no fixed latency): a `scan` pass an alternative,
/// and the lines it matches (`share` of them) each checked against the
/// costliest alternative.
pub fn class_gpu_ms(cs: &ClassSet, share: f64, bytes: f64, lines: f64, c: &Calibration) -> f64 {
    let passes = cs.alts.len() as f64 * bytes / (c.best_kernel().1 * 1e9) * 1e3;
    let units = cs.alts.iter().map(|a| a.test_units()).max().unwrap_or(0) as f64;
    passes + share * lines * units / CLASS_UNITS_PER_S * 1e3
}

/// The share of the sample windows' lines that hold a match of `cs`
/// (the host's `ClassSet::is_match_line`), memoised per corpus and query
/// shape.
pub fn class_share(corpus: &Corpus, q: &Query, cs: &ClassSet) -> f64 {
    let key = super::memo_key("tier1-classes", q, WINDOWS, false);
    if let Some(v) = corpus.samples.lock().ok().and_then(|mut m| m.get(&key)) {
        if let [lines, hits] = v[..] {
            return hits as f64 / lines.max(1) as f64;
        }
    }
    let (mut lines, mut hits) = (0u64, 0u64);
    for (d, s, e) in sample_windows(corpus, WINDOWS) {
        for line in corpus.docs()[d].data()[s..e].split(|&b| b == b'\n') {
            lines += 1;
            hits += u64::from(cs.is_match_line(line));
        }
    }
    if let Ok(mut m) = corpus.samples.lock() {
        m.put(key, vec![lines, hits]);
    }
    hits as f64 / lines.max(1) as f64
}

/// Estimated GPU time of tier 1 with `plan` whose candidates are `share`
/// of the lines, ms, without the fixed dispatch latency (the same for
/// every plan): the literal kernel's passes over `bytes` (one `scan` per
/// literal when the set runs that way) plus the verification — the
/// automaton over the candidates' share of the bytes at tier 2's speed, or
/// the candidates read back and checked by the CPU on `threads` threads.
/// The planner's score uses the same terms (`plan`).
pub fn tier1_gpu_ms(
    q: &Query,
    plan: &PrefilterPlan,
    share: f64,
    bytes: f64,
    lines: f64,
    threads: f64,
    c: &Calibration,
) -> f64 {
    if let Some(cs) = &plan.classes {
        // Without its sample: its passes alone (`class_gpu_ms`).
        return class_gpu_ms(cs, 0.0, bytes, lines, c);
    }
    let scan = bytes / (kernel_gbps(plan, c) * 1e9) * 1e3;
    let n = share * lines;
    match plan.verify {
        Verifier::Gpu => {
            scan + share * bytes / (super::tier2_gbps(c, Kernel::ShiftAnd, q) * 1e9) * 1e3
        }
        Verifier::Cpu => {
            scan + lines / 8.0 / 10e9 * 1e3 + n * 2e-6 + n * VERIFY_MS_PER_LINE / threads.max(1.0)
        }
    }
}

/// The literal kernel's speed for `plan`, GB/s of corpus: calibrated (a
/// many-literal kernel before any run at a tenth of the best
/// single-literal kernel), divided by the passes when `scan` runs once per
/// literal.
pub fn kernel_gbps(plan: &PrefilterPlan, c: &Calibration) -> f64 {
    let best = c.best_kernel().1;
    let g = c.gpu_gbps.get(&plan.kernel).copied();
    let g = g.unwrap_or(if plan.kernel.multi().is_some() {
        best / 10.0
    } else {
        best
    });
    g / passes(plan) as f64
}

/// Passes of the literal kernel: one per literal when `scan` runs several.
pub fn passes(plan: &PrefilterPlan) -> usize {
    match plan.kernel {
        Kernel::Scan => plan.literals.patterns().len().max(1),
        _ => 1,
    }
}

/// One candidate set as tier 1 would run it.
#[derive(Clone, Debug)]
pub struct Tier1Option {
    /// The plan (kernel, literals, verifier).
    pub plan: PrefilterPlan,
    /// Sampled lines holding one of its literals.
    pub count: u64,
    /// Its share of the sampled lines (`None`: no sample).
    pub share: Option<f64>,
    /// [`tier1_gpu_ms`] at that share.
    pub gpu_ms: f64,
}

/// Tier 1's choice among a query's candidate sets.
#[derive(Clone, Debug)]
pub struct Tier1Literals {
    /// Every set tier 1 can run, in `Query::literal_alternatives` order
    /// (the static pick first).
    pub options: Vec<Tier1Option>,
    /// The index of the chosen one.
    pub chosen: usize,
    /// Lines in the sample windows (0: no sample; the static pick stands).
    pub sample_lines: u64,
}

impl Tier1Literals {
    /// The chosen set.
    pub fn best(&self) -> &Tier1Option {
        &self.options[self.chosen]
    }

    /// The sets not chosen, with their shares and estimates, for
    /// `--explain` (at most four, the cheapest first).
    pub fn rejected(&self) -> String {
        let mut others: Vec<&Tier1Option> = self
            .options
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != self.chosen)
            .map(|(_, o)| o)
            .collect();
        others.sort_by(|a, b| a.gpu_ms.total_cmp(&b.gpu_ms));
        let mut parts: Vec<String> = others
            .iter()
            .take(4)
            .map(|o| {
                format!(
                    "{} ({}{}) {} est. {:.3} ms",
                    o.plan.describe(),
                    o.plan.kernel.name(),
                    match passes(&o.plan) {
                        1 => String::new(),
                        n => format!(" x{n}"),
                    },
                    o.share.map_or("share unknown".to_string(), |s| format!(
                        "{:.2}% of lines",
                        s * 100.0
                    )),
                    o.gpu_ms
                )
            })
            .collect();
        if others.len() > 4 {
            parts.push(format!("+{} more", others.len() - 4));
        }
        parts.join("; ")
    }
}

/// What the routing point asks of [`tier1_literals`].
#[derive(Clone, Copy, Debug)]
pub struct Tier1Input<'a> {
    /// The corpus (its sample windows).
    pub corpus: &'a Corpus,
    /// The kernel asked for (`--gpu-kernel`), if any.
    pub asked: Option<Kernel>,
    /// Corpus bytes and lines (estimated when not indexed).
    pub bytes: f64,
    /// See `bytes`.
    pub lines: f64,
    /// CPU threads that verify candidates.
    pub threads: f64,
    /// Throughputs.
    pub calibration: &'a Calibration,
    /// Count the sets on the sample; false (no GPU to run them) keeps the
    /// static pick without touching the corpus.
    pub sample: bool,
    /// A class string may run as itself (`GpuState::class_scan`).
    pub class_scan: bool,
    /// And does, whatever the estimates (`GpuState::force_class_scan`).
    pub force_classes: bool,
}

/// Tier 1's plan for `q`: the candidate set with the lowest estimated GPU
/// time on this corpus ([`tier1_gpu_ms`] at its sampled share; the static
/// pick on a tie or without a sample). An error when tier 1 cannot run
/// any set (the reason is the static pick's, as
/// [`crate::support::prefilter_support`] gives it).
pub fn tier1_literals(q: &Query, input: &Tier1Input<'_>) -> Result<Tier1Literals, Unsupported> {
    let alts = q.literal_alternatives();
    let first = match alts.first() {
        Some(a) => prefilter_support_with(q, input.asked, a),
        None => crate::support::prefilter_support(q, input.asked),
    };
    let first = first?;
    let (sample_lines, counts) = match alts.len() {
        _ if !input.sample => (0, Vec::new()),
        0 | 1 => (0, Vec::new()),
        _ => literal_counts(input.corpus, q),
    };
    // A class string runs as itself wherever the automaton would verify
    // on the GPU (`scan`'s plans): the literals then only name the plan.
    let classes = match input.sample && input.class_scan {
        true => crate::support::class_scan(q, input.corpus),
        false => None,
    };
    // Its lines on the sample: a floor for any literal set's candidates,
    // which is what the sets not counted on the sample are priced at.
    let cshare = classes.as_ref().map(|cs| class_share(input.corpus, q, cs));
    let mut options = Vec::new();
    for (i, alt) in alts.iter().enumerate() {
        let plan = match i {
            0 => first.clone(),
            _ => match prefilter_support_with(q, input.asked, alt) {
                Ok(p) => p,
                Err(_) => continue,
            },
        };
        let count = counts.get(i).copied().unwrap_or(0);
        let share = (sample_lines > 0).then(|| count as f64 / sample_lines as f64);
        let gpu_ms = tier1_gpu_ms(
            q,
            &plan,
            share.or(cshare).unwrap_or(0.0),
            input.bytes,
            input.lines,
            input.threads,
            input.calibration,
        );
        options.push(Tier1Option {
            plan,
            count,
            share,
            gpu_ms,
        });
    }
    // The class set as its own option: the first plan the automaton
    // would verify on the GPU, else one on the class set's own literals
    // (a set too large for `scan`'s passes goes to a kernel the CPU
    // verifies), priced by its passes and the class tests of the lines it
    // matches on the sample (`class_gpu_ms`): where most lines match a
    // long class string (`trace=[0-9a-f]{32}`) the automaton's split
    // verification is faster.
    if let Some(cs) = &classes {
        let base = options
            .iter()
            .find(|o| o.plan.verify == Verifier::Gpu)
            .map(|o| o.plan.clone())
            .or_else(|| {
                let own = RequiredLiterals::from_literals(cs.literals()?);
                prefilter_support_with(q, input.asked, &own)
                    .ok()
                    .filter(|p| p.verify == Verifier::Gpu)
            });
        if let Some(mut plan) = base {
            plan.classes = Some(cs.clone());
            let share = cshare.unwrap_or(0.0);
            let gpu_ms = class_gpu_ms(cs, share, input.bytes, input.lines, input.calibration);
            options.push(Tier1Option {
                plan,
                count: 0,
                share: Some(share),
                gpu_ms,
            });
        }
    }
    if options.is_empty() {
        options.push(Tier1Option {
            plan: first,
            count: 0,
            share: None,
            gpu_ms: 0.0,
        });
    }
    // A class set has its own sample: it is weighed even where the
    // literal sets were not.
    // On a tie the class set (exact, one dispatch fewer), then the static
    // pick.
    let forced =
        (0..options.len()).find(|&i| input.force_classes && options[i].plan.classes.is_some());
    let chosen = match sample_lines {
        _ if forced.is_some() => forced.unwrap_or(0),
        0 if options.iter().all(|o| o.plan.classes.is_none()) => 0,
        _ => (0..options.len())
            .min_by(|&a, &b| {
                options[a]
                    .gpu_ms
                    .total_cmp(&options[b].gpu_ms)
                    .then(
                        options[b]
                            .plan
                            .classes
                            .is_some()
                            .cmp(&options[a].plan.classes.is_some()),
                    )
                    .then(a.cmp(&b))
            })
            .unwrap_or(0),
    };
    Ok(Tier1Literals {
        options,
        chosen,
        sample_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::DeviceClass;
    use crate::{QueryBuilder, Syntax};

    /// 4,000 lines with known frequencies: `web-NN` and `common=` on every
    /// line, ` ERROR` on every 20th, ` WARN` on every 50th (the 7% hold
    /// one), `rare7` on every 100th, `prefixq` on every 25th.
    fn corpus() -> Corpus {
        let mut data = Vec::new();
        for i in 0..4000u32 {
            data.extend_from_slice(format!("web-{:02} common={i}", i % 100).as_bytes());
            if i % 20 == 0 {
                data.extend_from_slice(b" ERROR x");
            } else if i % 50 == 1 {
                data.extend_from_slice(b" WARN y");
            } else {
                data.extend_from_slice(b" INFO z");
            }
            if i % 100 == 3 {
                data.extend_from_slice(b" rare7 xx common=1");
            }
            if i % 25 == 4 {
                data.extend_from_slice(b" prefixq42 common");
            }
            data.push(b'\n');
        }
        Corpus::from_bytes("t", data)
    }

    fn choose(c: &Corpus, p: &str) -> Tier1Literals {
        let q = QueryBuilder::new()
            .syntax(Syntax::Regex)
            .build(&[p])
            .unwrap();
        let cal = Calibration::defaults(DeviceClass::Discrete);
        tier1_literals(
            &q,
            &Tier1Input {
                corpus: c,
                asked: None,
                bytes: c.total_bytes() as f64 * 1000.0,
                lines: 4e6,
                threads: 16.0,
                calibration: &cal,
                sample: true,
                // These tests weigh the literal sets; class strings have
                // their own below.
                class_scan: false,
                force_classes: false,
            },
        )
        .unwrap()
    }

    fn lits(t: &Tier1Literals) -> Vec<String> {
        t.best()
            .plan
            .literals
            .patterns()
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    #[test]
    fn the_rarest_set_wins_on_a_corpus_with_known_frequencies() {
        let c = corpus();
        // (regex, a substring every chosen literal holds, its share).
        let table: &[(&str, &[&str], f64)] = &[
            // The static pick ` common=` (the longest) is on every line,
            // so is `web-`; {ERROR, WARN} on 7%.
            (
                r"web-\d\d common=\d+ (ERROR|WARN)",
                &["ERROR", "WARN"],
                0.07,
            ),
            // A rare prefix literal, a common (and longer) suffix one.
            (r"rare7 \w+ common=\d+", &["rare7"], 0.01),
            // A rare prefix, a common suffix.
            (r"prefixq\d+ common", &["prefixq"], 0.04),
        ];
        for &(p, want, share) in table {
            let t = choose(&c, p);
            let got = lits(&t);
            assert!(
                got.iter().all(|l| want.iter().any(|w| l.contains(w))),
                "{p}: chose {got:?}; rejected {}",
                t.rejected()
            );
            let s = t.best().share.unwrap();
            assert!((s - share).abs() < 0.02, "{p}: share {s}, known {share}");
            // Every other set is estimated at least as dear.
            for o in &t.options {
                assert!(o.gpu_ms >= t.best().gpu_ms, "{p}: {}", t.rejected());
            }
            assert!(!t.rejected().is_empty(), "{p}");
        }
        // A set of two runs as two scan passes, verified on the GPU.
        let t = choose(&c, r"web-\d\d common=\d+ (ERROR|WARN)");
        assert_eq!(t.best().plan.kernel, Kernel::Scan);
        assert_eq!(passes(&t.best().plan), 2);
        assert_eq!(t.best().plan.verify, Verifier::Gpu);
    }

    /// A class string (ASCII corpus) runs as itself on every plan the
    /// automaton would verify, priced as one scan pass whatever its
    /// literals' share; without the switch, or for a regex that is no
    /// class string, the literal sets are weighed as before.
    #[test]
    fn a_class_string_is_one_exact_scan() {
        let c = corpus();
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let input = |class_scan| Tier1Input {
            corpus: &c,
            asked: None,
            bytes: c.total_bytes() as f64 * 1000.0,
            lines: 4e6,
            threads: 16.0,
            calibration: &cal,
            sample: true,
            class_scan,
            force_classes: false,
        };
        let q = |p: &str| {
            QueryBuilder::new()
                .syntax(Syntax::Regex)
                .build(&[p])
                .unwrap()
        };
        let one_scan = input(true).bytes / (cal.best_kernel().1 * 1e9) * 1e3;
        let class_of = |t: &Tier1Literals| {
            t.options
                .iter()
                .find(|o| o.plan.classes.is_some())
                .cloned()
                .expect("a class option")
        };
        // `common=` is on every line, and so is a match (`common=NN`, 99.75%
        // of lines): the class set's option is priced by its pass and the
        // class tests of every line, and weighed beside the literal's.
        let cs = q(r"common=\d\d");
        let t = tier1_literals(&cs, &input(true)).unwrap();
        let o = class_of(&t);
        let cls = o.plan.classes.as_ref().unwrap();
        assert_eq!((cls.alts.len(), cls.alts[0].masks.len()), (1, 9));
        let share = o.share.unwrap();
        assert!((share - 0.9975).abs() < 0.01, "{share}");
        let want = class_gpu_ms(cls, share, input(true).bytes, 4e6, &cal);
        assert!((o.gpu_ms - want).abs() < 1e-9);
        assert!(want > one_scan);
        for other in &t.options {
            assert!(other.gpu_ms >= t.best().gpu_ms, "{}", t.rejected());
        }
        // A match on few lines: the class set wins.
        let rare = q(r"rare7 \w\w common=\d");
        let t = tier1_literals(&rare, &input(true)).unwrap();
        assert!(t.best().plan.classes.is_some(), "{}", t.rejected());
        assert!(t.best().gpu_ms < one_scan * 1.1);
        let t = tier1_literals(&cs, &input(false)).unwrap();
        assert!(t.options.iter().all(|o| o.plan.classes.is_none()));
        // An alternation of class strings is a pass each; a run inside
        // is a step where what follows it is of another class, and no
        // class string where it is not.
        let t = tier1_literals(&q(r"web-\d\d common=\d\d (ERROR|WARN)"), &input(true)).unwrap();
        let o = class_of(&t);
        assert_eq!(o.plan.classes.as_ref().unwrap().alts.len(), 2);
        assert!(o.gpu_ms >= 2.0 * one_scan);
        let t = tier1_literals(&q(r"web-\d\d common=\d+ (ERROR|WARN)"), &input(true)).unwrap();
        let steps = class_of(&t).plan.classes.unwrap().alts[0].steps.len();
        assert_eq!(steps, 7);
        let t = tier1_literals(&q(r"web-\d\d common=\d*\d (ERROR|WARN)"), &input(true)).unwrap();
        assert!(t.options.iter().all(|o| o.plan.classes.is_none()));
        // A Unicode class on a corpus with a byte >= 0x80 is not exact
        // there; a byte class is.
        let mut data = c.docs()[0].data().to_vec();
        data.extend_from_slice("caf\u{e9} common=42\n".as_bytes());
        let c2 = Corpus::from_bytes("t", data);
        let in2 = Tier1Input {
            corpus: &c2,
            ..input(true)
        };
        assert!(tier1_literals(&cs, &in2)
            .unwrap()
            .best()
            .plan
            .classes
            .is_none());
        let bytes = q(r"(?-u:common=\d\d)");
        assert!(tier1_literals(&bytes, &in2)
            .unwrap()
            .best()
            .plan
            .classes
            .is_some());
    }

    #[test]
    fn ties_and_no_sample_keep_the_static_pick() {
        // Neither literal is in the corpus: both shares 0, the static pick
        // (the longer literal) stands.
        let c = corpus();
        let t = choose(&c, r"absentlong\d+ nothere");
        assert_eq!(t.chosen, 0);
        assert_eq!(lits(&t), vec!["absentlong".to_string()]);
        // No sample (an empty corpus): the static pick, shares unknown.
        let empty = Corpus::from_bytes("e", Vec::new());
        let t = choose(&empty, r"web-\d\d common=\d+ (ERROR|WARN)");
        assert_eq!(t.chosen, 0);
        assert_eq!(t.sample_lines, 0);
        assert!(t.best().share.is_none());
        assert!(t.rejected().contains("share unknown"), "{}", t.rejected());
    }

    #[test]
    fn shares_are_memoised() {
        let c = corpus();
        let q = QueryBuilder::new()
            .build(&[r"web-\d\d common=\d+ (ERROR|WARN)"])
            .unwrap();
        let a = literal_counts(&c, &q);
        let n = c.samples.lock().unwrap().entries_len();
        let b = literal_counts(&c, &q);
        assert_eq!(a, b);
        assert_eq!(c.samples.lock().unwrap().entries_len(), n);
        assert_eq!(a.1.len(), q.literal_alternatives().len());
    }
}
