//! What automatic compaction does after an agent run (SPEC §3, "Automatic
//! compaction in an agent loop"): the decision, free of any agent or
//! JavaScript, so that every branch is tested natively. The boundary
//! (`wasm::attach`) gathers the facts, asks [`after_run`], and carries the
//! answer out (takes the failed attempt out, compacts, saves, retries).
//!
//! pi's `AgentSession._checkCompaction` is the model, with one deliberate
//! difference the spec asks for: a *silent* overflow (a `stop` answer whose
//! input exceeded the window) keeps its answer and is not retried, where pi
//! drops the answer and runs the turn again.

use crate::tokens::overflow::StopReason;

/// The facts about a run's last assistant message that the decision needs.
#[derive(Clone, Copy, Debug)]
pub struct RunEnd {
    pub stop_reason: StopReason,
    /// pi's `isContextOverflow(message, contextWindow)`.
    pub overflow: bool,
    /// The message came from the agent's current model (provider and id):
    /// an overflow from another model says nothing about this one.
    pub same_model: bool,
    /// Its timestamp is at or before the last summary's: it describes a
    /// context that no longer exists.
    pub before_last_summary: bool,
}

/// What to do after a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Nothing,
    /// Overflow with no answer: take the failed attempt out, compact
    /// (reason `overflow`, `willRetry`), run the turn again once.
    OverflowRetry,
    /// A second overflow right after a recovery: stop, with pi's text.
    RecoveryFailed,
    /// A real answer whose input exceeded the window: keep it, compact
    /// (reason `overflow`), no retry.
    SilentOverflow,
    /// Over `contextWindow - reserveTokens`: compact (reason `threshold`),
    /// no retry.
    Threshold,
}

/// pi's text when an overflow follows a compact-and-retry.
pub const RECOVERY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry \
     attempt. Try reducing context or switching to a larger-context model.";

/// The decision. `needs_compaction` is asked only when the threshold
/// matters (it may cost a walk over new messages).
pub fn after_run(
    end: &RunEnd,
    enabled: bool,
    retry_used: bool,
    needs_compaction: impl FnOnce() -> bool,
) -> Flow {
    if !enabled || end.stop_reason == StopReason::Aborted || end.before_last_summary {
        return Flow::Nothing;
    }
    if end.overflow && end.same_model {
        let answered = matches!(end.stop_reason, StopReason::Stop | StopReason::ToolUse);
        return match (answered, retry_used) {
            (true, _) => Flow::SilentOverflow,
            (false, true) => Flow::RecoveryFailed,
            (false, false) => Flow::OverflowRetry,
        };
    }
    if needs_compaction() {
        Flow::Threshold
    } else {
        Flow::Nothing
    }
}

/// The one-retry guard: set when an overflow is retried, cleared by a new
/// user message or by an assistant message that is not an overflow, so a
/// later, unrelated overflow gets its own retry but a retry that overflows
/// again does not start a loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct RetryGuard {
    used: bool,
}

impl RetryGuard {
    pub fn used(&self) -> bool {
        self.used
    }
    pub fn on_retry(&mut self) {
        self.used = true;
    }
    pub fn on_user_message(&mut self) {
        self.used = false;
    }
    pub fn on_assistant_message(&mut self, overflow: bool) {
        if !overflow {
            self.used = false;
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn end(stop_reason: StopReason, overflow: bool) -> RunEnd {
        RunEnd {
            stop_reason,
            overflow,
            same_model: true,
            before_last_summary: false,
        }
    }

    fn decide(end: &RunEnd, retry_used: bool, over_threshold: bool) -> Flow {
        after_run(end, true, retry_used, || over_threshold)
    }

    #[test]
    fn an_overflow_error_is_retried_once_then_recovery_fails() {
        let e = end(StopReason::Error, true);
        assert_eq!(decide(&e, false, false), Flow::OverflowRetry);
        assert_eq!(decide(&e, true, false), Flow::RecoveryFailed);
        // A zero-output length stop at a full window is an overflow with no answer too.
        let l = end(StopReason::Length, true);
        assert_eq!(decide(&l, false, true), Flow::OverflowRetry);
    }

    #[test]
    fn a_silent_overflow_keeps_its_answer_and_never_retries() {
        let e = end(StopReason::Stop, true);
        assert_eq!(decide(&e, false, false), Flow::SilentOverflow);
        assert_eq!(decide(&e, true, false), Flow::SilentOverflow);
    }

    #[test]
    fn an_overflow_from_another_model_only_counts_for_the_threshold() {
        let mut e = end(StopReason::Error, true);
        e.same_model = false;
        assert_eq!(decide(&e, false, false), Flow::Nothing);
        assert_eq!(decide(&e, false, true), Flow::Threshold);
    }

    #[test]
    fn aborted_runs_stale_messages_and_disabled_settings_do_nothing() {
        let mut asked = false;
        let flow = after_run(&end(StopReason::Aborted, false), true, false, || {
            asked = true;
            true
        });
        assert_eq!(flow, Flow::Nothing);
        assert!(
            !asked,
            "the threshold is not even measured for an aborted run"
        );
        let mut stale = end(StopReason::Error, true);
        stale.before_last_summary = true;
        assert_eq!(decide(&stale, false, true), Flow::Nothing);
        assert_eq!(
            after_run(&end(StopReason::Error, true), false, false, || true),
            Flow::Nothing
        );
    }

    #[test]
    fn a_normal_answer_compacts_only_over_the_threshold() {
        let e = end(StopReason::Stop, false);
        assert_eq!(decide(&e, false, false), Flow::Nothing);
        assert_eq!(decide(&e, false, true), Flow::Threshold);
        assert_eq!(
            decide(&end(StopReason::Error, false), false, true),
            Flow::Threshold
        );
    }

    #[test]
    fn the_guard_resets_on_a_user_message_or_a_non_overflow_answer_only() {
        let mut g = RetryGuard::default();
        g.on_retry();
        g.on_assistant_message(true);
        assert!(g.used(), "an overflow again keeps the guard");
        g.on_assistant_message(false);
        assert!(!g.used());
        g.on_retry();
        g.on_user_message();
        assert!(!g.used());
    }
}
