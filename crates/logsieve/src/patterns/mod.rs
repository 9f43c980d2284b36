//! Log templates mined with Drain (He et al., ICWS 2017), the algorithm
//! behind Loki's `/loki/api/v1/patterns` and drain3: a fixed-depth parse
//! tree whose first layer is the token count and whose next layers are the
//! first tokens (a token with a digit goes under the wildcard), and at the
//! leaf the most similar template, kept when the share of equal tokens is
//! at least the threshold. A kept line turns the positions where it differs
//! into variables, written `<_>` as Loki writes them.
//!
//! * Tokens are split as Loki's pattern ingester splits them
//!   ([`tokens`]); the spaces between them are part of a template's
//!   layout, and a line joins only a template of the same layout, so a
//!   template's text, `<_>` read as "one or more characters", matches
//!   every line assigned to it.
//! * Every line is assigned to exactly one template ([`Miner::add`]
//!   returns it). A template only generalises (a literal becomes `<_>`,
//!   never back), so a line keeps matching the template it was assigned
//!   to while later lines are added.
//! * [`Miner::add_many`] (what the front ends call) groups lines by
//!   shape first ([`shape`]) and adds each shape once.
//! * Deterministic: the same lines in the same order give the same
//!   templates, numbered in order of creation.
//!
//! # Example
//!
//! ```
//! use logsieve::patterns::{Miner, MinerOptions};
//!
//! let mut m = Miner::new(MinerOptions::default());
//! let a = m.add(b"connected to 10.0.0.1 in 20ms");
//! let b = m.add(b"connected to 10.0.0.7 in 31ms");
//! let c = m.add(b"disk full");
//! assert_eq!(a, b);
//! assert_ne!(a, c);
//! assert_eq!(m.pattern(a), "connected to <_> in <_>");
//! assert!(m.matches(a, b"connected to 10.0.0.9 in 5ms"));
//! assert_eq!(m.count(a), 2);
//! ```

// Natively only: the grouping runs on every core around the GPU's passes.
#[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
pub(crate) mod gpu;
pub mod shape;
pub mod tokens;

#[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
pub use gpu::Refused;

use std::collections::HashMap;

use tokens::{tokenize_into, LineTokens, Tokens};

/// How variable parts are written in a template (Loki's `<_>`).
pub const PARAM: &str = "<_>";

/// Drain's parameters.
#[derive(Clone, Debug)]
pub struct MinerOptions {
    /// The tree's depth, counting the root, the token-count layer and the
    /// leaf: `depth - 3` leading tokens choose the leaf (drain3's default
    /// 4: the first token).
    pub depth: usize,
    /// The share of equal tokens (variables not counted) a line needs to
    /// join a template (drain3's default 0.4).
    pub sim_threshold: f64,
    /// Children per tree node; past it new tokens go under the wildcard
    /// (drain3's default 100).
    pub max_children: usize,
}

impl Default for MinerOptions {
    fn default() -> MinerOptions {
        MinerOptions {
            depth: 4,
            sim_threshold: 0.4,
            max_children: 100,
        }
    }
}

#[derive(Default)]
struct Node {
    children: HashMap<Box<[u8]>, u32>,
    param: Option<u32>,
    clusters: Vec<u32>,
}

impl Node {
    fn child_count(&self) -> usize {
        self.children.len() + usize::from(self.param.is_some())
    }
}

struct Cluster {
    /// `None`: a variable.
    tokens: Vec<Option<Box<[u8]>>>,
    lead: u32,
    after: Box<[u32]>,
    count: u64,
}

/// A Drain miner: add lines one by one, read the templates at any time.
pub struct Miner {
    opts: MinerOptions,
    nodes: Vec<Node>,
    by_len: HashMap<usize, u32>,
    clusters: Vec<Cluster>,
    scratch: Tokens,
}

/// One template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Its number (order of creation, from 0).
    pub id: u32,
    /// Its text, `<_>` for each variable part.
    pub pattern: String,
    /// Lines assigned to it.
    pub count: u64,
}

fn has_digit(t: &[u8]) -> bool {
    t.iter().any(u8::is_ascii_digit)
}

impl Miner {
    /// An empty miner.
    pub fn new(opts: MinerOptions) -> Miner {
        Miner {
            opts,
            nodes: vec![Node::default()],
            by_len: HashMap::new(),
            clusters: Vec::new(),
            scratch: Tokens::default(),
        }
    }

    fn max_node_depth(&self) -> usize {
        self.opts.depth.saturating_sub(2).max(1)
    }

    /// Adds one line (without its `\n`; a trailing `\r` is left out) and
    /// returns the template it is assigned to.
    pub fn add(&mut self, line: &[u8]) -> u32 {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut t = std::mem::take(&mut self.scratch);
        tokenize_into(line, &mut t);
        let id = self.add_tokens(line, t.view(), &[], 1);
        self.scratch = t;
        id
    }

    /// Adds `lines` and appends each one's template to `out`. The lines
    /// are grouped by shape first ([`shape`], on every core) and each
    /// group is added once, in order of its first line, as
    /// [`Miner::add_group`] adds it: Drain's sequential part runs once per
    /// shape. Each line's template matches it, as with [`Miner::add`];
    /// the templates are those of the groups' first lines added in order,
    /// with the digit tokens that vary within a group as variables.
    pub fn add_many(&mut self, lines: &[&[u8]], out: &mut Vec<u32>) {
        self.add_shapes(lines, &shape::group(lines), out);
    }

    /// [`Miner::add_many`] with the lines grouped one by one
    /// ([`shape::group_in_order`]): the reference the front ends are
    /// checked against.
    pub fn add_in_order(&mut self, lines: &[&[u8]], out: &mut Vec<u32>) {
        self.add_shapes(lines, &shape::group_in_order(lines), out);
    }

    fn add_shapes(&mut self, lines: &[&[u8]], shapes: &shape::Shapes, out: &mut Vec<u32>) {
        self.add_grouped(shapes, |i| lines[i], out);
    }

    /// Adds lines grouped already ([`shape::group`], or
    /// [`crate::Session::group_shapes`] on the GPU): each group once, in
    /// order, as [`Miner::add_group`] adds it, `first(i)` giving line `i`
    /// of those grouped (only groups' first lines are asked for); appends
    /// each line's template to `out`.
    pub fn add_grouped<'a>(
        &mut self,
        shapes: &shape::Shapes,
        first: impl Fn(usize) -> &'a [u8],
        out: &mut Vec<u32>,
    ) {
        let ids: Vec<u32> = shapes
            .groups
            .iter()
            .map(|g| self.add_group(first(g.first), &g.varies, g.count))
            .collect();
        out.extend(shapes.of_line.iter().map(|&g| ids[g as usize]));
    }

    /// Adds `weight` lines of one shape, given as the first of them, with
    /// `varies` (per token) marking the tokens to take as variables: the
    /// digit tokens whose values differ among the lines (see [`shape`]).
    /// Returns their template.
    pub fn add_group(&mut self, line: &[u8], varies: &[bool], weight: u64) -> u32 {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut t = std::mem::take(&mut self.scratch);
        tokenize_into(line, &mut t);
        let id = self.add_tokens(line, t.view(), varies, weight);
        self.scratch = t;
        id
    }

    /// Adds `weight` lines split as `t`, the tokens marked in `vars` as
    /// variables.
    fn add_tokens(&mut self, line: &[u8], t: LineTokens<'_>, vars: &[bool], weight: u64) -> u32 {
        let var = |i: usize| vars.get(i).copied().unwrap_or(false);
        match self.search(line, t, &var) {
            Some(id) => {
                let c = &mut self.clusters[id as usize];
                for (i, slot) in c.tokens.iter_mut().enumerate() {
                    if slot
                        .as_deref()
                        .is_some_and(|v| var(i) || v != t.token(line, i))
                    {
                        *slot = None;
                    }
                }
                c.count += weight;
                id
            }
            None => self.create(line, t, &var, weight),
        }
    }

    /// The leaf a line's tokens lead to, if the path exists.
    fn leaf(&self, line: &[u8], t: LineTokens<'_>) -> Option<u32> {
        let n = t.len();
        let mut cur = *self.by_len.get(&n)?;
        // Token i is read at depth i + 1 (the root is 0, the count 1).
        for i in 0..n {
            let depth = i + 1;
            if depth >= self.max_node_depth() || depth == n {
                break;
            }
            let node = &self.nodes[cur as usize];
            cur = match node.children.get(t.token(line, i)) {
                Some(&c) => c,
                None => node.param?,
            };
        }
        Some(cur)
    }

    fn search(&self, line: &[u8], t: LineTokens<'_>, var: &dyn Fn(usize) -> bool) -> Option<u32> {
        let leaf = self.leaf(line, t)?;
        let mut best: Option<(u32, f64, usize)> = None;
        for &id in &self.nodes[leaf as usize].clusters {
            let c = &self.clusters[id as usize];
            if c.lead != t.lead || *c.after != *t.after {
                continue;
            }
            let (mut same, mut params) = (0usize, 0usize);
            for (i, tok) in c.tokens.iter().enumerate() {
                match tok {
                    None => params += 1,
                    Some(v) if !var(i) && **v == *t.token(line, i) => same += 1,
                    Some(_) => {}
                }
            }
            let sim = if c.tokens.is_empty() {
                1.0
            } else {
                same as f64 / c.tokens.len() as f64
            };
            if best.is_none_or(|(_, s, p)| sim > s || (sim == s && params > p)) {
                best = Some((id, sim, params));
            }
        }
        best.filter(|&(_, s, _)| s >= self.opts.sim_threshold)
            .map(|(id, _, _)| id)
    }

    fn new_node(&mut self) -> u32 {
        self.nodes.push(Node::default());
        (self.nodes.len() - 1) as u32
    }

    fn create(
        &mut self,
        line: &[u8],
        t: LineTokens<'_>,
        var: &dyn Fn(usize) -> bool,
        weight: u64,
    ) -> u32 {
        let id = self.clusters.len() as u32;
        let tokens: Vec<Option<Box<[u8]>>> = (0..t.len())
            .map(|i| (!var(i)).then(|| t.token(line, i).into()))
            .collect();
        let n = tokens.len();
        self.clusters.push(Cluster {
            tokens,
            lead: t.lead,
            after: t.after.into(),
            count: weight,
        });
        let mut cur = match self.by_len.get(&n) {
            Some(&c) => c,
            None => {
                let c = self.new_node();
                self.by_len.insert(n, c);
                c
            }
        };
        let max_depth = self.max_node_depth();
        let max_children = self.opts.max_children;
        for i in 0..=n {
            let depth = i + 1;
            if i == n || depth >= max_depth || depth >= n {
                self.nodes[cur as usize].clusters.push(id);
                break;
            }
            let tok = t.token(line, i);
            let node = &self.nodes[cur as usize];
            cur = if let Some(&c) = node.children.get(tok) {
                c
            } else if has_digit(tok) {
                match node.param {
                    Some(p) => p,
                    None => {
                        let p = self.new_node();
                        self.nodes[cur as usize].param = Some(p);
                        p
                    }
                }
            } else {
                let count = node.child_count();
                match node.param {
                    Some(p) if count >= max_children => p,
                    Some(_) => self.token_child(cur, tok),
                    None if count + 1 < max_children => self.token_child(cur, tok),
                    None => {
                        let p = self.new_node();
                        self.nodes[cur as usize].param = Some(p);
                        p
                    }
                }
            };
        }
        id
    }

    fn token_child(&mut self, parent: u32, tok: &[u8]) -> u32 {
        let c = self.new_node();
        self.nodes[parent as usize].children.insert(tok.into(), c);
        c
    }

    /// The number of templates.
    pub fn len(&self) -> usize {
        self.clusters.len()
    }

    /// True before the first line.
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// Lines assigned to template `id`.
    pub fn count(&self, id: u32) -> u64 {
        self.clusters[id as usize].count
    }

    /// Template `id`'s text as bytes: its layout's spaces, its literal
    /// tokens, and `<_>` for each run of variable tokens not separated by
    /// a space (Loki writes `<_><_>` as `<_>`).
    pub fn pattern_bytes(&self, id: u32) -> Vec<u8> {
        let c = &self.clusters[id as usize];
        let mut out = vec![b' '; c.lead as usize];
        let mut prev_param = false;
        for (tok, &after) in c.tokens.iter().zip(c.after.iter()) {
            match tok {
                Some(v) => {
                    out.extend_from_slice(v);
                    prev_param = false;
                }
                None if prev_param => {}
                None => {
                    out.extend_from_slice(PARAM.as_bytes());
                    prev_param = true;
                }
            }
            if after > 0 {
                out.resize(out.len() + after as usize, b' ');
                prev_param = false;
            }
        }
        out
    }

    /// Template `id`'s text (non-UTF-8 bytes replaced).
    pub fn pattern(&self, id: u32) -> String {
        String::from_utf8_lossy(&self.pattern_bytes(id)).into_owned()
    }

    /// True when `line` has template `id`'s layout and its literal tokens.
    pub fn matches(&self, id: u32, line: &[u8]) -> bool {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let c = &self.clusters[id as usize];
        let t = tokens::tokenize(line);
        t.len() == c.tokens.len()
            && t.lead == c.lead
            && *t.after == *c.after
            && c.tokens
                .iter()
                .enumerate()
                .all(|(i, v)| v.as_deref().is_none_or(|v| v == t.token(line, i)))
    }

    /// Every template, by id.
    pub fn templates(&self) -> Vec<Template> {
        (0..self.clusters.len() as u32)
            .map(|id| Template {
                id,
                pattern: self.pattern(id),
                count: self.count(id),
            })
            .collect()
    }
}

/// The templates of `lines` and each line's template.
pub struct Mined {
    /// Every template, by id.
    pub templates: Vec<Template>,
    /// Per line, in input order, its template's id.
    pub assignment: Vec<u32>,
}

/// Mines `lines` in order.
pub fn mine<'a>(lines: impl IntoIterator<Item = &'a [u8]>, opts: MinerOptions) -> Mined {
    let mut m = Miner::new(opts);
    let lines: Vec<&[u8]> = lines.into_iter().collect();
    let mut assignment = Vec::new();
    m.add_many(&lines, &mut assignment);
    Mined {
        templates: m.templates(),
        assignment,
    }
}

/// Counts per template and time step: `times[i]` (any unit) of line `i`
/// assigned to `assignment[i]` falls in step `(t - start) / step` when
/// `start <= t` and the step is below `steps`; other lines are not
/// counted. Returns, per template id (`templates` of them), a count per
/// step.
pub fn count_steps(
    assignment: &[u32],
    times: &[i64],
    templates: usize,
    start: i64,
    step: i64,
    steps: usize,
) -> Vec<Vec<u64>> {
    let mut out = vec![vec![0u64; steps]; templates];
    let step = step.max(1);
    for (&id, &t) in assignment.iter().zip(times) {
        if t < start {
            continue;
        }
        let k = ((t - start) / step) as usize;
        if k < steps {
            out[id as usize][k] += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `add_many` (grouped on every core) gives what `add_in_order` (the
    /// reference, grouped line by line) gives; every line
    /// matches its template, and the counts are the lines assigned —
    /// across calls, with CRLF, empty and space-only lines among
    /// generated ones.
    #[test]
    fn add_many_adds_each_shape_once() {
        let data = crate::gen::generate(&crate::gen::GenOptions {
            lines: 40_000,
            seed: 7,
            ..Default::default()
        });
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        for (i, extra) in [&b""[..], b"  ", b"x y\r", b"\r", b"a=1 b=2\r"]
            .iter()
            .enumerate()
        {
            lines.insert(i * 9_001, extra);
        }
        let mut by_group = Miner::new(MinerOptions::default());
        let mut want = Vec::new();
        for part in [&lines[..100], &lines[100..]] {
            by_group.add_in_order(part, &mut want);
        }
        let mut many = Miner::new(MinerOptions::default());
        let mut got = Vec::new();
        many.add_many(&lines[..100], &mut got);
        many.add_many(&lines[100..], &mut got);
        assert_eq!(got, want);
        assert_eq!(many.templates(), by_group.templates());
        assert!(many.len() > 5, "{} templates", many.len());
        let mut counts = vec![0u64; many.len()];
        for (l, &id) in lines.iter().zip(&got) {
            counts[id as usize] += 1;
            assert!(
                many.matches(id, l),
                "{:?} / {}",
                String::from_utf8_lossy(l),
                many.pattern(id)
            );
        }
        assert!((0..many.len()).all(|id| many.count(id as u32) == counts[id]));
    }

    /// A digit token that is the same in every line of a shape stays
    /// literal; one that differs becomes a variable, however few tokens
    /// the lines share.
    #[test]
    fn add_many_keeps_constant_digit_tokens() {
        let mut m = Miner::new(MinerOptions::default());
        let mut ids = Vec::new();
        m.add_many(
            &[
                b"ts=2024-03-30T23:03:40 caller=grpc_logging.go:66 level=info duration=200ms",
                b"ts=2024-03-30T23:03:41 caller=grpc_logging.go:66 level=info duration=500ms",
                b"1 2 3 4 x",
                b"5 6 7 8 x",
            ],
            &mut ids,
        );
        assert_eq!(ids, [0, 0, 1, 1]);
        assert_eq!(
            m.pattern(0),
            "ts=<_> caller=grpc_logging.go:66 level=info duration=<_>"
        );
        assert_eq!(m.pattern(1), "<_> <_> <_> <_> x");
        assert_eq!((m.count(0), m.count(1)), (2, 2));
    }

    #[test]
    fn loki_docs_example() {
        let mut m = Miner::new(MinerOptions::default());
        let a = m.add(b"ts=2024-03-30T23:03:40 caller=grpc_logging.go:66 level=info method=/cortex.Ingester/Push duration=200ms msg=gRPC");
        let b = m.add(b"ts=2024-03-30T23:03:41 caller=grpc_logging.go:66 level=info method=/cortex.Ingester/Push duration=500ms msg=gRPC");
        assert_eq!(a, b);
        assert_eq!(
            m.pattern(a),
            "ts=<_> caller=grpc_logging.go:66 level=info method=/cortex.Ingester/Push duration=<_> msg=gRPC"
        );
    }

    #[test]
    fn layout_and_empty_lines() {
        let mut m = Miner::new(MinerOptions::default());
        let a = m.add(b"open file a");
        let b = m.add(b"open  file b");
        assert_ne!(a, b, "a different layout is a different template");
        let e1 = m.add(b"");
        let e2 = m.add(b"\r");
        let e3 = m.add(b"  ");
        assert_eq!(e1, e2);
        assert_ne!(e1, e3);
        assert_eq!(m.pattern(e3), "  ");
        for (id, l) in [
            (a, &b"open file a"[..]),
            (b, &b"open  file b"[..]),
            (e3, &b"  "[..]),
        ] {
            assert!(m.matches(id, l));
        }
    }

    #[test]
    fn adjacent_variables_are_one() {
        let mut m = Miner::new(MinerOptions::default());
        let a = m.add(b"user id=\"x1\" done now ok");
        let b = m.add(b"user id=(y2) done now ok");
        assert_eq!(a, b);
        assert_eq!(m.pattern(a), "user id=<_> done now ok");
    }

    #[test]
    fn steps_counted() {
        let c = count_steps(&[0, 1, 0, 0], &[5, 10, 19, 40], 2, 0, 10, 3);
        assert_eq!(c, vec![vec![1, 1, 0], vec![0, 1, 0]]);
    }
}
