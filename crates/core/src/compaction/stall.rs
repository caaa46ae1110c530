//! The stall rule: a threshold compaction that frees almost nothing (or
//! fails, or has nothing to do) is not run again on every turn. The
//! threshold goes quiet until the context grows 5 % past what the
//! compaction left, the model or its window changes, or the messages are
//! replaced by something other than the same conversation grown (an undo).
//! Overflow and manual compactions are never held back.

use crate::compaction::flow::{Ending, Failure};
use crate::compaction::reason::Reason;

/// A compaction that leaves more than this share of the context stalled.
const STALLED_SHARE: f64 = 0.95;
/// How much the context must grow past a stall before the threshold counts.
const GROWTH: f64 = 1.05;

/// How a compaction ended, as the stall rule sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ended {
    /// It changed the messages: the context's tokens before and after.
    Compacted { before: f64, after: f64 },
    /// It failed or had nothing to do; the context's tokens then.
    Unchanged(f64),
    /// It was cancelled: nothing is learnt.
    Aborted,
}

impl Ended {
    /// How a compaction's `ending` counts: `(before, after)` its result's
    /// tokens (when it compacted), `now` the context's tokens. A cancelled
    /// one counts for nothing.
    pub fn of<A>(ending: &Ending<'_, A>, (before, after): (f64, f64), now: f64) -> Ended {
        match ending {
            Ending::Compacted => Ended::Compacted { before, after },
            Ending::Failed(Failure::Aborted(_) | Failure::Cancelled) => Ended::Aborted,
            Ending::NothingToDo | Ending::Failed(Failure::Failed(_) | Failure::Input(_)) => {
                Ended::Unchanged(now)
            }
        }
    }
}

/// Whether the threshold is quiet, and until when.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stall {
    hold: Option<Hold>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hold {
    /// The threshold stays quiet while the context tokens are at most this.
    until: f64,
    /// The generation of the messages the hold is about.
    generation: u32,
    /// The compaction's own result is still to be adopted (one edit).
    adopting: bool,
}

impl Stall {
    /// Learns from a compaction of the messages at `generation` that ended
    /// so; `Some(tokens)`: the threshold is quiet until the context exceeds
    /// them (what the `compaction_end` event says).
    pub fn ended(&mut self, reason: Reason, ended: Ended, generation: u32) -> Option<f64> {
        if reason != Reason::Threshold {
            return None;
        }
        let (tokens, adopting) = match ended {
            Ended::Compacted { before, after } if after > before * STALLED_SHARE => (after, true),
            Ended::Compacted { .. } => {
                self.hold = None;
                return None;
            }
            Ended::Unchanged(tokens) => (tokens, false),
            Ended::Aborted => return None,
        };
        let until = (tokens * GROWTH).ceil();
        self.hold = Some(Hold {
            until,
            generation,
            adopting,
        });
        Some(until)
    }

    /// The limit the context tokens of the messages at `generation` are
    /// compared with: `threshold`, or higher while quiet. A change of
    /// generation other than adopting the compaction's result ends the hold.
    pub fn limit(&mut self, threshold: f64, generation: u32) -> f64 {
        let Some(hold) = &mut self.hold else {
            return threshold;
        };
        if hold.generation != generation {
            if !hold.adopting {
                self.hold = None;
                return threshold;
            }
            hold.generation = generation;
            hold.adopting = false;
        }
        threshold.max(hold.until)
    }

    /// The model or its window changed: the threshold counts again.
    pub fn release(&mut self) {
        self.hold = None;
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    const T: Reason = Reason::Threshold;

    fn stalled() -> Stall {
        let mut s = Stall::default();
        let ended = Ended::Compacted {
            before: 10_000.0,
            after: 9_600.0,
        };
        assert_eq!(s.ended(T, ended, 3), Some(10_080.0));
        s
    }

    #[test]
    fn endings_count_by_how_they_ended() {
        let of = |ending: &Ending<'_, ()>| Ended::of(ending, (10.0, 9.0), 7.0);
        let compacted = Ended::Compacted {
            before: 10.0,
            after: 9.0,
        };
        assert_eq!(of(&Ending::Compacted), compacted);
        assert_eq!(of(&Ending::NothingToDo), Ended::Unchanged(7.0));
        let failed = Failure::Failed("boom".into());
        assert_eq!(of(&Ending::Failed(&failed)), Ended::Unchanged(7.0));
        for cancelled in [Failure::Aborted(()), Failure::Cancelled] {
            assert_eq!(of(&Ending::Failed(&cancelled)), Ended::Aborted);
        }
    }

    #[test]
    fn without_a_hold_the_threshold_is_the_limit() {
        assert_eq!(Stall::default().limit(8_000.0, 0), 8_000.0);
    }

    #[test]
    fn a_compaction_freeing_under_5_percent_holds_until_5_percent_growth() {
        let mut s = stalled();
        assert_eq!(s.limit(8_000.0, 3), 10_080.0);
        // Adopting the result is one edit; the hold stays.
        assert_eq!(s.limit(8_000.0, 4), 10_080.0);
        assert_eq!(s.limit(8_000.0, 4), 10_080.0);
        // A threshold above the hold wins.
        assert_eq!(s.limit(12_000.0, 4), 12_000.0);
    }

    #[test]
    fn a_compaction_freeing_more_clears_the_hold() {
        let mut s = stalled();
        let ended = Ended::Compacted {
            before: 10_000.0,
            after: 9_400.0,
        };
        assert_eq!(s.ended(T, ended, 3), None);
        assert_eq!(s.limit(8_000.0, 3), 8_000.0);
    }

    #[test]
    fn a_failed_or_idle_compaction_holds_at_the_context_then() {
        let mut s = Stall::default();
        assert_eq!(s.ended(T, Ended::Unchanged(9_000.0), 7), Some(9_450.0));
        assert_eq!(s.limit(8_000.0, 7), 9_450.0);
        // Its messages were not changed: any edit ends the hold.
        assert_eq!(s.limit(8_000.0, 8), 8_000.0);
        assert_eq!(s.limit(8_000.0, 7), 8_000.0);
    }

    #[test]
    fn the_hold_is_a_whole_number_of_tokens() {
        let mut s = Stall::default();
        // 16,227 × 1.05 = 17,038.35: the context must exceed 17,039.
        assert_eq!(s.ended(T, Ended::Unchanged(16_227.0), 1), Some(17_039.0));
    }

    #[test]
    fn an_edit_after_adopting_the_result_ends_the_hold() {
        let mut s = stalled();
        assert_eq!(s.limit(8_000.0, 4), 10_080.0);
        assert_eq!(s.limit(8_000.0, 5), 8_000.0, "an undo");
    }

    #[test]
    fn a_model_or_window_change_ends_the_hold() {
        let mut s = stalled();
        s.release();
        assert_eq!(s.limit(8_000.0, 3), 8_000.0);
    }

    #[test]
    fn overflow_manual_and_aborted_compactions_change_nothing() {
        for reason in [Reason::Overflow, Reason::Manual] {
            let mut s = stalled();
            assert_eq!(s.ended(reason, Ended::Unchanged(50_000.0), 3), None);
            assert_eq!(s, stalled());
            let mut s = Stall::default();
            assert_eq!(s.ended(reason, Ended::Unchanged(50_000.0), 3), None);
            assert_eq!(s.limit(8_000.0, 3), 8_000.0);
        }
        let mut s = stalled();
        assert_eq!(s.ended(T, Ended::Aborted, 3), None);
        assert_eq!(s, stalled());
    }
}
