//! Which fresh usage counts, beyond the stale rule (SPEC §3): a reported
//! usage must describe what the model is sent after the messages it
//! follows. Two cases where it does not:
//!
//! - **An edit took its context away.** A usage reported after a summary
//!   (or after a clearing marker) counted the summary (the placeholders);
//!   once an edit takes that message out (`removeLastCompaction`), the
//!   model is sent far more than the usage says. The index sees the edit:
//!   the usage reported after the removed message counts no more
//!   ([`MessageFacts::forget_usage`]), the messages are estimated, until a
//!   usage is reported after the edit.
//! - **Implausibly small.** An index that did not see the edit (a fresh
//!   one, after a reload) has only the array. Within one context (no
//!   summary between) and with no clearing marker between, the provider is
//!   sent at least what it was sent before, so a usage whose model read
//!   below [`MIN_USAGE_SHARE`] of what it read for the usage that counted
//!   before it cannot describe the messages it follows: it counts as no
//!   usage, as a usage of zero does. What the model read (input, cached
//!   included, without the output: [`MessageFacts::prompt`]) is compared,
//!   since a reasoning model's output counts reasoning that is never sent
//!   again and may be many times what it read. It is compared with the
//!   provider's own earlier count, not with an estimate: images, cached
//!   tokens and the tokenizer's scale are in both, and it costs nothing per
//!   turn (the index knows the last usage that counts). The share leaves
//!   room for what a provider legitimately sends less of (thinking blocks
//!   of earlier turns, a failed attempt left out); a drop below it within
//!   one context, with no marker between, is an undone summary or clearing,
//!   or a provider's numbers that cannot be trusted.

use super::*;

/// A usage whose model read below this share of what it read for the usage
/// that counted before it in the same context, with no clearing marker
/// between, counts as no usage.
pub const MIN_USAGE_SHARE: f64 = 0.5;

/// Whether a fresh usage whose model read `prompt` tokens is too small for
/// the messages it follows, the model having read `before` for the usage
/// that counted before it in its context (with no marker between). NaN is
/// never too small (pi's numbers then stay NaN).
pub fn implausible(prompt: f64, before: Option<f64>) -> bool {
    before.is_some_and(|b| prompt < MIN_USAGE_SHARE * b)
}

impl ContextIndex {
    /// What a usage pushed now is compared with: what the model read for
    /// the last that counts, unless a marker came after it.
    pub(super) fn usage_before_next(&self) -> Option<f64> {
        let (at, _) = self.last_usage?;
        let prompt = self.facts[at].prompt()?;
        self.markers
            .last()
            .is_none_or(|&m| m < at)
            .then_some(prompt)
    }

    /// The usages that count among messages `[start, end)` of one context
    /// (`start` at or after its summary, `stale` that summary's rule), in
    /// order: fresh, and not [`implausible`] after the one that counted
    /// before (a marker between resets the comparison). What a push decides
    /// one message at a time, from the facts alone.
    pub(super) fn counted_usages(
        &self,
        start: usize,
        end: usize,
        stale: Stale,
    ) -> impl Iterator<Item = (usize, f64)> + '_ {
        let mut before = None;
        (start..end).filter_map(move |i| {
            let f = &self.facts[i];
            if f.role == Role::ToolOutputCleared {
                before = None;
                return None;
            }
            let usage = f.usage().filter(|_| stale.is_fresh(i, f))?;
            let prompt = f.prompt().unwrap_or(usage);
            if implausible(prompt, before) {
                return None;
            }
            before = Some(prompt);
            Some((i, usage))
        })
    }

    /// The summary or clearing marker at `at` is about to be taken out by
    /// an edit: the usage reported after it (what the summary counted as
    /// fresh; everything after a marker) counts no more. Costs the messages
    /// after it, once per such edit.
    pub(super) fn forget_usage_after(&mut self, at: usize) {
        let f = self.facts[at];
        let reported_after = match f.role {
            Role::CompactionSummary => Stale::after(Some((at, &f))),
            Role::ToolOutputCleared => Stale::Through(at),
            _ => return,
        };
        for i in at + 1..self.facts.len() {
            let g = &mut self.facts[i];
            if g.usage().is_some() && reported_after.is_fresh(i, g) {
                g.forget_usage();
            }
        }
    }
}
