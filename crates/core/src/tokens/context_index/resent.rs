//! Pinned messages before the last summary, re-sent after it: which of
//! them count, and what they cost.
use super::*;

impl ContextIndex {
    /// Whether the re-sent pinned messages count in the estimates: no fresh
    /// usage follows the summary (one would include them).
    pub(super) fn resent_count(&self) -> bool {
        self.last_usage.is_none()
    }

    /// The re-sent pinned messages that count (see [`resent_count`]).
    ///
    /// [`resent_count`]: Self::resent_count
    pub(super) fn counted_resent(&self) -> Vec<usize> {
        if self.resent_count() {
            self.resent().to_vec()
        } else {
            Vec::new()
        }
    }

    /// Adds the re-sent pinned messages to the totals (after the summary
    /// reset them): measured with `fill`, or without it left out, their
    /// bounds in the slack when pending.
    pub(super) fn count_resent<E, F: FnMut(usize) -> Result<u64, E>>(
        &mut self,
        mut fill: Option<&mut F>,
    ) -> Result<(), E> {
        for i in self.counted_resent() {
            match fill.as_deref_mut() {
                Some(fill) => {
                    let tokens = self.tokens_of(i, fill)?;
                    self.trailing += tokens;
                }
                None if self.facts[i].tokens_pending() => {
                    self.unmeasured += 1;
                    self.slack = self.slack.saturating_add(u64::from(self.facts[i].tokens));
                }
                None => self.trailing += u64::from(self.facts[i].tokens),
            }
        }
        Ok(())
    }

    /// The estimates of the re-sent pinned messages while they count (no
    /// fresh usage after the summary; 0 otherwise), measured with `fill`
    /// where pending.
    pub fn resent_tokens<E>(
        &mut self,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<u64, E> {
        let mut total = 0u64;
        for i in self.counted_resent() {
            total = total.saturating_add(self.tokens_of(i, &mut fill)?);
        }
        Ok(total)
    }
}
