//! The corpus's memo of facts derived from it.

/// Facts derived from a corpus, keyed by bytes, the most recent
/// [`Memo::CAPACITY`] kept: the planner's samples of recent queries
/// (`planner::sample`), so that a repeated query is routed without
/// sampling again (up to ~0.1 ms for a regex).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    entries: Vec<(Vec<u8>, Vec<u64>)>,
}

impl Memo {
    const CAPACITY: usize = 64;

    pub(crate) fn get(&mut self, key: &[u8]) -> Option<Vec<u64>> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        let e = self.entries.remove(i);
        let v = e.1.clone();
        self.entries.push(e);
        Some(v)
    }

    pub(crate) fn put(&mut self, key: Vec<u8>, v: Vec<u64>) {
        if self.entries.len() >= Self::CAPACITY {
            self.entries.remove(0);
        }
        self.entries.push((key, v));
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    #[cfg(test)]
    pub(crate) fn entries_len(&self) -> usize {
        self.entries.len()
    }
}
