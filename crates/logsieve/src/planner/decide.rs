//! The decision: the inhibitors first, then each side's score.

use super::cost::{
    bitap_units, cpu_base, cpu_estimate, cpu_gbps, fault_ms, shift_and_units, tier2_gbps,
    VERIFY_MS_PER_LINE,
};
use super::{
    kernel_gbps, passes, Choice, Decision, DeviceClass, Factor, PlanInput, SampleStats,
    DENSITY_LIMIT, NO_ADAPTER,
};
use crate::kernel::{Kernel, MultiKernel};
use crate::query::Query;
use crate::results::Want;
use crate::support::{gpu_support, PrefilterPlan};

/// The many-literal kernel for `query`, and why (for `--explain`).
pub fn multi_kernel(query: &Query) -> (Kernel, String) {
    let shortest = query.patterns().iter().map(|p| p.len()).min().unwrap_or(0);
    let kernel = MultiKernel::DEFAULT.for_query(query);
    let why = match MultiKernel::DEFAULT.fallback_note(query) {
        Some(_) => format!(
            "{} ({} needs >= {}-byte patterns; shortest {shortest})",
            kernel.name(),
            MultiKernel::DEFAULT.name(),
            MultiKernel::BLOOM_MIN_LEN
        ),
        None => format!("{} (shortest pattern {shortest} bytes)", kernel.name()),
    };
    (kernel.into(), why)
}

/// The categorical inhibitors for a query (empty: the GPU may run it):
/// the query's shape ([`gpu_support`], the one support check) and, for line
/// output, the match density.
pub fn inhibitors(query: &Query, want: Want, sample: &SampleStats) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(u) = gpu_support(query) {
        if u.is_categorical() {
            out.push(u.reason().to_string());
        }
    }
    if want == Want::Lines && sample.density() > DENSITY_LIMIT {
        out.push(format!(
            "high match density (est. {:.0} matching lines per 1,000 > {:.0})",
            sample.density() * 1000.0,
            DENSITY_LIMIT * 1000.0
        ));
    }
    out
}

/// ` x2` when `scan` runs once per literal of a set, else nothing.
fn passes_note(t: &PrefilterPlan) -> String {
    match passes(t) {
        1 => String::new(),
        n => format!(" x{n}"),
    }
}

/// `; rejected: ...` when the routing point chose among several sets.
fn rejected_note(input: &PlanInput<'_>) -> String {
    match &input.tier1_rejected {
        Some(r) if !r.is_empty() => format!("; rejected: {r}"),
        _ => String::new(),
    }
}

/// Decides where `input.query` runs.
pub fn plan(input: &PlanInput<'_>) -> Decision {
    let mut inhib = inhibitors(input.query, input.want, &input.sample);
    // The kernels' categorical reason (a regex, say) inhibits only when
    // tier 1 cannot take the query either; then it says why.
    if let Err(u) = gpu_support(input.query) {
        if let Some(at) = inhib.iter().position(|i| i == u.reason()) {
            match &input.prefilter {
                Some(Ok(_)) => {
                    inhib.remove(at);
                }
                Some(Err(t)) => inhib[at] = format!("{}; GPU prefilter: {}", u.reason(), t),
                None => {}
            }
        }
    }
    let tier1 = match &input.prefilter {
        Some(Ok(p)) => Some(p),
        _ => None,
    };
    let mut d = Decision {
        choice: Choice::Cpu,
        inhibitors: inhib,
        notes: Vec::new(),
        factors: Vec::new(),
        estimate_ms: None,
        cpu_estimate_ms: Some(cpu_estimate(input)),
        cpu_basis: cpu_base(input).1,
        tier1: None,
    };
    if !d.inhibitors.is_empty() {
        return d;
    }
    if let (Some(r), None) = (&input.gpu_unsupported, tier1) {
        d.notes
            .push(format!("GPU kernels do not run this query: {r}"));
        return d;
    }
    let Some((class, name)) = &input.gpu else {
        d.notes.push(NO_ADAPTER.to_string());
        return d;
    };
    if *class == DeviceClass::Software {
        d.notes.push(format!(
            "{name} is a software adapter: never chosen automatically (use --backend gpu)"
        ));
        return d;
    }
    let c = input.calibration;
    let bytes = input.bytes as f64;
    let mut f = Vec::new();
    let threads = input.threads.max(1) as f64;
    // Parallel efficiency on one document: measured ~0.8 per extra thread;
    // the chosen matcher's speed (`cpu_estimate`).
    let cpu_gbps = cpu_gbps(input);
    let cpu_all = cpu_estimate(input);
    let cpu_scan = bytes / (cpu_gbps * 1e9) * 1e3;
    f.push(Factor {
        name: "corpus bytes",
        value: format!("{:.1} MB", bytes / 1e6),
        ms: (cpu_scan, 0.0),
    });
    let multi = input.query.literals().is_some_and(|l| l.len() > 1);
    let (kernel, gpu_gbps) = if let Some(cs) = tier1.and_then(|t| t.classes.as_ref()) {
        // The class strings on `scan`, one pass each, exact
        // (`query::classes`).
        f.push(Factor {
            name: "tier 1 class strings",
            value: format!("{}: scan tests two bytes, then the classes", cs.describe()),
            ms: (0.0, 0.0),
        });
        (Kernel::Scan, c.best_kernel().1 / cs.alts.len() as f64)
    } else if let Some(t) = tier1 {
        f.push(Factor {
            name: "tier 1 literals",
            value: format!("{} ({})", t.describe(), t.kernel.name()),
            ms: (0.0, 0.0),
        });
        if let Some(r) = &input.tier1_rejected {
            f.push(Factor {
                name: "tier 1 sets rejected",
                value: r.clone(),
                ms: (0.0, 0.0),
            });
        }
        // One scan pass per literal when a few run on scan.
        (t.kernel, kernel_gbps(t, c))
    } else if multi {
        // Many literals: the multi-literal kernel, at its calibrated speed
        // (before any run, a tenth of the single-literal kernels').
        let (k, why) = multi_kernel(input.query);
        f.push(Factor {
            name: "multi-literal kernel",
            value: why,
            ms: (0.0, 0.0),
        });
        let g = c.gpu_gbps.get(&k).copied();
        (k, g.unwrap_or_else(|| c.best_kernel().1 / 10.0))
    } else if gpu_support(input.query).is_ok_and(|p| p.kernel == Kernel::ShiftAnd) {
        // Tier 2: the regex automaton, one thread per line, at its
        // calibrated speed.
        f.push(Factor {
            name: "tier 2 automaton",
            value: format!(
                "shift-and, one thread per line, {:.0} units a byte",
                shift_and_units(input.query)
            ),
            ms: (0.0, 0.0),
        });
        (
            Kernel::ShiftAnd,
            tier2_gbps(c, Kernel::ShiftAnd, input.query),
        )
    } else if let Some(units) = gpu_support(input.query)
        .ok()
        .filter(|p| p.kernel == Kernel::Bitap)
        .and_then(|_| bitap_units(input.query))
    {
        // Fuzzy: the bitap kernel, one thread per line, its speed per
        // state-word update divided by the chain's updates per byte
        // (`cost::tier2_gbps`).
        f.push(Factor {
            name: "fuzzy kernel",
            value: format!("bitap, {units:.1} word updates a byte"),
            ms: (0.0, 0.0),
        });
        (Kernel::Bitap, tier2_gbps(c, Kernel::Bitap, input.query))
    } else {
        c.best_kernel()
    };
    let gpu_scan = bytes / (gpu_gbps * 1e9) * 1e3;
    f.push(Factor {
        name: "throughput (calibrated)",
        value: format!("cpu {:.1} / gpu {:.0} GB/s", cpu_gbps, gpu_gbps),
        ms: (0.0, gpu_scan),
    });
    f.push(Factor {
        name: "dispatch + readback",
        value: format!("{:.3} ms fixed", c.gpu_latency_ms),
        ms: (0.0, c.gpu_latency_ms),
    });
    // Start-up and upload when the corpus is not resident (one-shot).
    let mut cold_ms = 0.0;
    if !input.resident {
        let up = bytes / (c.upload_gbps * 1e9) * 1e3;
        cold_ms = up + c.gpu_startup_ms;
        f.push(Factor {
            name: "upload (not resident)",
            value: format!("{:.1} GB/s", c.upload_gbps),
            ms: (0.0, up),
        });
        f.push(Factor {
            name: "GPU start-up",
            value: "adapter+device+pipelines".to_string(),
            ms: (0.0, c.gpu_startup_ms),
        });
    } else {
        f.push(Factor {
            name: "residency",
            value: "corpus resident on GPU".to_string(),
            ms: (0.0, 0.0),
        });
    }
    let lines = input.lines.unwrap_or((bytes / 200.0) as u64) as f64;
    let density = input.sample.density();
    let readback = match input.want {
        // Tier 1 verified on the CPU reads back its candidates instead
        // (below).
        _ if tier1.is_some_and(|t| t.verify == crate::support::Verifier::Cpu) => 0.0,
        // Count: a few bytes per segment. Lines: one bit per line, then
        // decoding the selected ids on the host.
        Want::Count => 0.0,
        Want::Lines => lines / 8.0 / 10e9 * 1e3 + density * lines * 2e-6,
    };
    let faults = fault_ms(input);
    if faults > 0.0 {
        f.push(Factor {
            name: "page faults (lazy map)",
            value: format!("{:.1} GB/s", input.sample.fault_gbps),
            ms: (faults, 0.0),
        });
    }
    f.push(Factor {
        name: "expected matches",
        value: format!("{:.2}% of lines", density * 100.0),
        ms: ((cpu_all - cpu_scan - faults).max(0.0), readback),
    });
    if let Some(t) = tier1 {
        let share = input.sample.candidate_share();
        let n = share * lines;
        if let Some(cs) = &t.classes {
            d.tier1 = Some(format!(
                "tier 1: the regex is {}: one scan pass each on its rarest bytes, the \
                 classes tested at each survivor, exact (nothing to verify){}",
                cs.describe(),
                rejected_note(input)
            ));
        } else if t.verify == crate::support::Verifier::Gpu {
            // The automaton over the candidate lines, in the literal's
            // submission: their share of the bytes at tier 2's speed, no
            // readback (`gpu::tier2`).
            let g2 = tier2_gbps(c, Kernel::ShiftAnd, input.query);
            let verify = share * bytes / (g2 * 1e9) * 1e3;
            f.push(Factor {
                name: "candidate share",
                value: format!("{:.2}% of lines (sample)", share * 100.0),
                ms: (0.0, 0.0),
            });
            f.push(Factor {
                name: "verify on GPU",
                value: format!("{n:.0} lines, shift-and at {:.0} GB/s", g2),
                ms: (0.0, verify),
            });
            d.tier1 = Some(format!(
                "tier 1: GPU prefilter on {} ({}{}), candidates {:.2}% of lines, GPU verify (shift-and) est. {verify:.3} ms{}",
                t.describe(),
                t.kernel.name(),
                passes_note(t),
                share * 100.0,
                rejected_note(input)
            ));
        } else {
            // Candidates come back as line ids (the bit sets, decoded),
            // then each is verified on the CPU.
            let back = lines / 8.0 / 10e9 * 1e3 + n * 2e-6;
            let verify = n * VERIFY_MS_PER_LINE / threads;
            f.push(Factor {
                name: "candidate share",
                value: format!("{:.2}% of lines (sample)", share * 100.0),
                ms: (0.0, back),
            });
            f.push(Factor {
                name: "verify on CPU",
                value: format!("{n:.0} lines, {threads:.0} threads"),
                ms: (0.0, verify),
            });
            d.tier1 = Some(format!(
                "tier 1: GPU prefilter on {} ({}{}), candidates {:.2}% of lines, CPU verify est. {verify:.3} ms{}",
                t.describe(),
                t.kernel.name(),
                passes_note(t),
                share * 100.0,
                rejected_note(input)
            ));
        }
    }
    f.push(Factor {
        name: "phase-1 elimination",
        value: format!("{:.1}% (sample)", input.sample.elimination() * 100.0),
        ms: (0.0, 0.0),
    });
    f.push(Factor {
        name: "device",
        value: format!("{class:?} {name}"),
        ms: (0.0, 0.0),
    });
    let cpu_total: f64 = f.iter().map(|x| x.ms.0).sum();
    let gpu_total: f64 = f.iter().map(|x| x.ms.1).sum();
    d.estimate_ms = Some((cpu_total, gpu_total));
    let cross = c.crossover_bytes;
    f.push(Factor {
        name: "crossover",
        value: format!("{:.0} KB", cross as f64 / 1e3),
        ms: (0.0, 0.0),
    });
    d.factors = f;
    if input.bytes < cross {
        d.notes.push(format!(
            "corpus below the {:.0} KB crossover",
            cross as f64 / 1e3
        ));
        return d;
    }
    // Tier 2 instead of tier 1 when its whole scan is estimated cheaper
    // than tier 1's verification (a required literal on most lines: on the
    // H100 `trace=[0-9a-f]{32}`, 69% candidates, took 8.5 ms on tier 1 and
    // 3.3 on tier 2; docs/bench/h100-2026-11-24-regex.md).
    if tier1.is_some() && crate::support::shift_and_support(input.query).is_ok() {
        let g2 = tier2_gbps(c, Kernel::ShiftAnd, input.query);
        // Tier 2 pays start-up and upload too when not resident
        // (REGRESSION: without them one-shot `-w`, `-x` and prefix-literal
        // regexes started the GPU: 436-496 ms against rg's 32-43 on the
        // H100 machine, docs/bench/h100-2026-11-25-merged.md).
        let t2 = bytes / (g2 * 1e9) * 1e3 + c.gpu_latency_ms + cold_ms;
        if t2 < gpu_total && t2 < cpu_total {
            d.factors.push(Factor {
                name: "tier 2 instead of tier 1",
                value: format!("shift-and est. {t2:.3} ms < tier 1 {gpu_total:.3} ms"),
                ms: (0.0, 0.0),
            });
            d.tier1 = Some(format!(
                "tier 2 (shift-and, est. {t2:.3} ms) beats {}",
                d.tier1.take().unwrap_or_default()
            ));
            d.choice = Choice::Gpu(Kernel::ShiftAnd);
            return d;
        }
    }
    if gpu_total < cpu_total {
        d.choice = match tier1 {
            Some(_) => Choice::GpuPrefilter(kernel),
            None => Choice::Gpu(kernel),
        };
    }
    d
}
