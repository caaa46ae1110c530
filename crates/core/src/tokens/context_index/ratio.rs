//! Self-correction: the ratio of the provider's counts to the estimate,
//! learned between two fresh usages of one context (see the parent's doc).
use super::*;

impl ContextIndex {
    /// Learns the ratio between what the provider reported and the
    /// estimate of the same messages (see the module's doc), measuring the
    /// pending estimates of the span with `fill`; keeps the one it had when
    /// there is no span to learn from. Returns the ratio now in force.
    pub fn learn_ratio<E>(
        &mut self,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<f64, E> {
        if self.self_correcting {
            if let Some(r) = self.find_ratio(&mut fill)? {
                self.ratio = r;
            }
        }
        Ok(self.ratio)
    }

    /// Walks back from the end, context by context (a context: the messages
    /// after a summary up to the next one), to the newest with two fresh
    /// usages; the ratio over its first and last (what the model read for
    /// each, [`MessageFacts::prompt`], over the estimate of the messages the
    /// later read and the earlier did not: from the earlier reply up to the
    /// later one), when that estimate reaches [`MIN_RATIO_SPAN`].
    pub(super) fn find_ratio<E>(
        &mut self,
        fill: &mut impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<Option<f64>, E> {
        let mut end = self.facts.len();
        while end > 0 {
            let summary = self.facts[..end]
                .iter()
                .rposition(|f| f.role == Role::CompactionSummary);
            let start = summary.map_or(0, |s| s + 1);
            let stale = Stale::after(summary.map(|s| (s, &self.facts[s])));
            // What the model read for each (its own output left out: a
            // reasoning model's counts reasoning it is never sent again).
            let mut counted = self
                .counted_usages(start, end, stale)
                .map(|(i, u)| (i, self.facts[i].prompt().unwrap_or(u)))
                .filter(|(_, read)| read.is_finite());
            let first = counted.next();
            let last = counted.last().or(first);
            if let (Some((first, before)), Some((last, after))) = (first, last) {
                if first < last {
                    // The later read the messages from the earlier reply on.
                    let mut estimate = 0u64;
                    for i in first..last {
                        estimate = estimate.saturating_add(self.tokens_of(i, fill)?);
                    }
                    if estimate < MIN_RATIO_SPAN {
                        return Ok(None);
                    }
                    let r = (after - before) / estimate as f64;
                    return Ok(Some(r.clamp(MIN_RATIO, MAX_RATIO)));
                }
            }
            end = summary.unwrap_or(0);
        }
        Ok(None)
    }
}
