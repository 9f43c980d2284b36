//! A decision in words: the one-line reason a route carries and the
//! report `--explain` prints.

use super::{Choice, Decision};

impl Decision {
    /// A one-line reason.
    pub fn summary(&self) -> String {
        if let Some(i) = self.inhibitors.first() {
            return format!("inhibitor: {i}");
        }
        if let Some(n) = self.notes.first() {
            return n.clone();
        }
        let est = match self.estimate_ms {
            Some((c, g)) => format!("estimated cpu {c:.3} ms vs gpu {g:.3} ms"),
            None => "no estimate".to_string(),
        };
        match &self.tier1 {
            Some(t) => format!("{est}; {t}"),
            None => est,
        }
    }

    /// A multi-line report for `--explain`.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        let choice = match &self.choice {
            Choice::Cpu => "cpu".to_string(),
            Choice::Gpu(k) => format!("gpu/{}", k.name()),
            Choice::GpuPrefilter(k) => format!("gpu/{}+verify (tier 1)", k.name()),
        };
        s.push_str(&format!("plan: {choice}\n"));
        if self.inhibitors.is_empty() {
            s.push_str("inhibitors: none\n");
        } else {
            for i in &self.inhibitors {
                s.push_str(&format!("inhibitor: {i}\n"));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        if let Some(t) = &self.tier1 {
            s.push_str(&format!("{t}\n"));
        }
        if !self.factors.is_empty() {
            s.push_str("factors (estimated ms: cpu | gpu):\n");
            for f in &self.factors {
                s.push_str(&format!(
                    "  {:<26} {:<24} {:>9.3} | {:>9.3}\n",
                    f.name, f.value, f.ms.0, f.ms.1
                ));
            }
        }
        if let Some((c, g)) = self.estimate_ms {
            s.push_str(&format!("estimate: cpu {c:.3} ms, gpu {g:.3} ms\n"));
        } else if let Some(c) = self.cpu_estimate_ms {
            s.push_str(&format!(
                "estimate: cpu {c:.3} ms (the GPU was not scored)\n"
            ));
        }
        if !self.cpu_basis.is_empty() {
            s.push_str(&format!("cpu speed: {}\n", self.cpu_basis));
        }
        s
    }
}
