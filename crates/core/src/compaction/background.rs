//! Compaction in the background: a threshold compaction started early, on
//! a snapshot of the messages, while the conversation goes on with the full
//! context. When its summary arrives it goes in at the cut chosen at the
//! start, and the messages added meanwhile stay after it.
//!
//! The adapters (`attach`, the AI SDK conversation, the `Compactor`'s own
//! methods) ask [`next`] after each turn and before a run's first request,
//! and [`arrived`] when a summary is there to insert. One [`Checkpoint`]
//! carries [`next`]'s answers out the same way for all of them
//! (`compactIfNeeded`).

use crate::error::{FieldPath, InputError};
use crate::js::options::out_of_range;

/// Where the background compaction stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// None under way.
    Idle,
    /// Started, not ended.
    Running,
    /// Ended with a summary not yet inserted.
    Ready,
}

/// What an adapter does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Nothing,
    /// Start a compaction in the background.
    Start,
    /// Insert the summary that is ready ([`arrived`] says whether it still
    /// fits the messages).
    Insert,
    /// The context reached the threshold before the summary arrived: the
    /// next request waits for it.
    Wait,
    /// Over the threshold with nothing under way: compact now, as without
    /// background compaction.
    Compact,
}

impl Next {
    /// What an overflow asks of the background compaction: one under way
    /// or with its summary ready is awaited and its summary taken (the
    /// compaction the retry needs); with none, a compaction now, whatever
    /// the threshold says.
    pub fn after_overflow(job: Job) -> Next {
        match job {
            Job::Idle => Next::Compact,
            Job::Running | Job::Ready => Next::Wait,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Next::Nothing => "nothing",
            Next::Start => "start",
            Next::Insert => "insert",
            Next::Wait => "wait",
            Next::Compact => "compact",
        }
    }
}

/// The next step. `over_threshold`: the context exceeds the threshold (the
/// stall rule applied); `due`: it exceeds the background fraction of it;
/// `busy`: a compaction the app started itself runs. A ready summary goes
/// in first, whatever the context; a compaction under way, the app's or
/// the background one, is never doubled.
pub fn next(job: Job, over_threshold: bool, due: bool, busy: bool) -> Next {
    match (job, over_threshold) {
        (Job::Ready, _) => Next::Insert,
        (Job::Running, true) => Next::Wait,
        (Job::Running, false) => Next::Nothing,
        (Job::Idle, _) if busy => Next::Nothing,
        (Job::Idle, true) => Next::Compact,
        (Job::Idle, false) if due => Next::Start,
        (Job::Idle, false) => Next::Nothing,
    }
}

/// What an adapter does at a checkpoint, for one answer of [`next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Nothing more: the request goes out as it is.
    Done,
    /// Start a compaction in the background, and go on.
    Start,
    /// Take the summary that is ready into the messages, after waiting for
    /// the compaction under way when `wait`. When none goes in (it failed,
    /// or the messages changed meanwhile), ask [`next`] again.
    Take { wait: bool },
    /// A threshold compaction now.
    Compact,
}

/// How a checkpoint's wait for the compaction under way ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// The compaction ended (with a summary, or failed).
    Ended,
    /// The compaction was cancelled (`compactor.abort()`).
    Aborted,
    /// The checkpoint stopped waiting ([`Checkpoint::stop`]: the agent's
    /// run was aborted, or the adapter detached); the compaction goes on.
    Stopped,
}

/// The course of one checkpoint (before a request, after an answer): each
/// answer of [`next`] to an [`Act`], the same for every adapter.
///
/// A take that brought nothing asks [`next`] once more, and only a
/// compaction comes of that answer: after a failure the stall rule has
/// made the threshold quiet, so the summarizer is not asked again at once;
/// after a summary dropped because the messages changed, an edit that left
/// the context over the threshold is compacted now.
///
/// A wait that ended with the compaction cancelled ends the checkpoint:
/// the cancel was the user's, and a compaction started at once in its
/// place would undo it (after an overflow, the recovery ends there and the
/// provider's error stays). A checkpoint stopped by the one it runs for
/// (the agent's run aborted, the adapter detached) waits for nothing more
/// and starts nothing; only a summary that is ready still goes in.
#[derive(Clone, Copy, Debug)]
pub struct Checkpoint {
    /// A compaction may start in the background here.
    start: bool,
    /// A threshold compaction may run here.
    compact: bool,
    asked: bool,
    stopped: bool,
    /// The compaction it waited for was cancelled: nothing more.
    over: bool,
}

impl Checkpoint {
    pub fn new(start: bool, compact: bool) -> Checkpoint {
        Checkpoint {
            start,
            compact,
            asked: false,
            stopped: false,
            over: false,
        }
    }

    /// What to do with `next`'s answer.
    pub fn step(&mut self, next: Next) -> Act {
        let again = std::mem::replace(&mut self.asked, true);
        match next {
            _ if self.over => Act::Done,
            Next::Insert if self.stopped && !again => Act::Take { wait: false },
            _ if self.stopped => Act::Done,
            Next::Compact if self.compact => Act::Compact,
            _ if again => Act::Done,
            Next::Insert => Act::Take { wait: false },
            Next::Wait => Act::Take { wait: true },
            Next::Start if self.start => Act::Start,
            _ => Act::Done,
        }
    }

    /// The one this checkpoint runs for stopped: the agent's run was
    /// aborted, or the adapter detached.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether the checkpoint was stopped.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// How the wait of an [`Act::Take`] ended; whether the summary is
    /// taken now (then [`next`] is asked again if none went in).
    pub fn waited(&mut self, how: Waited) -> bool {
        match how {
            Waited::Ended => true,
            Waited::Aborted => {
                self.over = true;
                false
            }
            Waited::Stopped => {
                self.stopped = true;
                false
            }
        }
    }
}

/// Whether the compaction under way is one nobody waits for
/// (`isCompactingInBackground`): one in the background while no request
/// (or retry) waits for it. `waiting`: the checkpoints waiting for it. A
/// conversation that waits for it is held up as by any compaction: the
/// app disables its input (`isCompacting` alone).
pub fn unattended(running: bool, job: Job, waiting: usize) -> bool {
    running && job == Job::Running && waiting == 0
}

/// Whether a summary made from a snapshot of `snapshot_len` messages goes
/// into the messages now (`live_len` of them): only when they are the
/// snapshot grown (`same_prefix`: its messages, the same objects, in
/// order). Otherwise (an undo, an edit, another tab's version) it is
/// dropped: inserting it would summarize what the user changed.
pub fn arrived(snapshot_len: usize, live_len: usize, same_prefix: bool) -> bool {
    live_len >= snapshot_len && same_prefix
}

/// Where a compaction's result goes in messages that grew by `appended`
/// since the snapshot it was made from (a background compaction, or one a
/// running loop kept appending through). The messages added meanwhile were
/// answered with the old, larger context, so their usage is stale like the
/// kept messages': a summary stays at its cut with them counted among its
/// kept messages (`keptMessages` + `appended`); a clearing marker goes after
/// them (the usage after a marker is taken to reflect what it freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The summary at its cut, the messages added meanwhile after the rest,
    /// and the summary's `keptMessages`.
    Summary { kept_messages: usize },
    /// The marker after every message, those added meanwhile included.
    MarkerLast,
}

impl Arrival {
    /// For a summary that kept `kept_messages` (`None`: a clearing marker).
    pub fn new(kept_messages: Option<usize>, appended: usize) -> Arrival {
        match kept_messages {
            Some(kept) => Arrival::Summary {
                kept_messages: kept.saturating_add(appended),
            },
            None => Arrival::MarkerLast,
        }
    }
}

/// What a compaction in the background keeps of the newest messages, in
/// tokens: `keep_recent_tokens` less the room still left under the
/// `threshold` at its start (`context`: the context then), never under half
/// of `keep_recent_tokens`. The conversation goes on while the summary is
/// written, and what it adds meanwhile stays after the summary as recent
/// context too; keeping the whole `keep_recent_tokens` besides would leave
/// each background compaction freeing less than one at the threshold, and
/// compactions twice as frequent.
pub fn keep_recent(keep_recent_tokens: f64, threshold: f64, context: f64) -> f64 {
    let room = (threshold - context).max(0.0);
    (keep_recent_tokens - room).max(keep_recent_tokens / 2.0)
}

/// The background fraction: of the threshold, in (0, 1]; another number
/// is out of range at `path`.
pub fn fraction(
    given: Option<f64>,
    path: impl FnOnce() -> FieldPath,
) -> Result<Option<f64>, InputError> {
    match given {
        None => Ok(None),
        Some(f) if is_fraction(f) => Ok(Some(f)),
        Some(f) => Err(out_of_range(path(), FRACTION, f)),
    }
}

/// Whether `f` is a background fraction: in (0, 1].
pub fn is_fraction(f: f64) -> bool {
    f > 0.0 && f <= 1.0
}

/// What a background fraction must be.
const FRACTION: &str = "a number in (0, 1]: a fraction of the threshold";

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_ready_summary_goes_in_first() {
        for (over, due) in [(false, false), (true, true), (false, true)] {
            assert_eq!(next(Job::Ready, over, due, false), Next::Insert);
        }
    }

    #[test]
    fn over_the_threshold_a_running_compaction_is_awaited_else_one_runs_now() {
        assert_eq!(next(Job::Running, true, true, false), Next::Wait);
        assert_eq!(next(Job::Idle, true, true, false), Next::Compact);
    }

    #[test]
    fn under_the_threshold_one_starts_when_due_and_never_twice() {
        assert_eq!(next(Job::Idle, false, true, false), Next::Start);
        assert_eq!(next(Job::Idle, false, false, false), Next::Nothing);
        assert_eq!(next(Job::Running, false, true, false), Next::Nothing);
    }

    #[test]
    fn a_compaction_the_app_runs_is_not_doubled() {
        assert_eq!(next(Job::Idle, true, true, true), Next::Nothing);
        assert_eq!(next(Job::Idle, false, true, true), Next::Nothing);
        assert_eq!(Next::Compact.name(), "compact");
    }

    #[test]
    fn a_checkpoint_carries_each_answer_out() {
        let first = |next, start, compact| Checkpoint::new(start, compact).step(next);
        assert_eq!(first(Next::Nothing, true, true), Act::Done);
        assert_eq!(first(Next::Start, true, true), Act::Start);
        assert_eq!(first(Next::Insert, true, true), Act::Take { wait: false });
        assert_eq!(first(Next::Wait, true, true), Act::Take { wait: true });
        assert_eq!(first(Next::Compact, true, true), Act::Compact);
        // Where the adapter may not start or compact (a request in the
        // middle of a run), only a summary goes in.
        assert_eq!(first(Next::Start, false, false), Act::Done);
        assert_eq!(first(Next::Compact, false, false), Act::Done);
        assert_eq!(first(Next::Wait, false, false), Act::Take { wait: true });
    }

    #[test]
    fn after_an_overflow_the_summary_under_way_is_the_compaction_else_one_runs_now() {
        assert_eq!(Next::after_overflow(Job::Running), Next::Wait);
        assert_eq!(Next::after_overflow(Job::Ready), Next::Wait);
        assert_eq!(Next::after_overflow(Job::Idle), Next::Compact);
        // The course an overflow takes: wait and take; when that brought
        // nothing (the summary failed), compact now.
        let mut course = Checkpoint::new(false, true);
        assert_eq!(
            course.step(Next::after_overflow(Job::Running)),
            Act::Take { wait: true }
        );
        assert_eq!(course.step(Next::after_overflow(Job::Idle)), Act::Compact);
    }

    #[test]
    fn after_a_take_that_brought_nothing_only_a_compaction_comes_of_asking_again() {
        for next in [Next::Insert, Next::Wait] {
            let mut course = Checkpoint::new(true, true);
            assert!(matches!(course.step(next), Act::Take { .. }));
            // The summary failed: the stall rule made the threshold quiet,
            // and a new background compaction would ask the summarizer
            // again at once.
            assert_eq!(course.step(Next::Start), Act::Done);
            assert_eq!(course.step(Next::Nothing), Act::Done);
            let mut course = Checkpoint::new(true, true);
            course.step(next);
            // Dropped (the messages changed), and still over the threshold.
            assert_eq!(course.step(Next::Compact), Act::Compact);
            let mut course = Checkpoint::new(true, false);
            course.step(next);
            assert_eq!(course.step(Next::Compact), Act::Done);
        }
    }

    #[test]
    fn a_wait_whose_compaction_was_cancelled_ends_the_checkpoint() {
        // Before a request over the threshold, and after an overflow: the
        // cancelled compaction is not followed by another.
        for (overflow, compact) in [(false, true), (true, true)] {
            let mut course = Checkpoint::new(!overflow, compact);
            assert_eq!(course.step(Next::Wait), Act::Take { wait: true });
            assert!(!course.waited(Waited::Aborted), "nothing to take");
            let after = if overflow {
                Next::after_overflow(Job::Idle)
            } else {
                Next::Compact
            };
            assert_eq!(course.step(after), Act::Done);
            assert_eq!(course.step(Next::Insert), Act::Done);
        }
        // A wait that ended otherwise takes the summary, as before.
        let mut course = Checkpoint::new(false, true);
        course.step(Next::Wait);
        assert!(course.waited(Waited::Ended));
        assert_eq!(course.step(Next::Compact), Act::Compact);
    }

    #[test]
    fn a_stopped_checkpoint_waits_for_nothing_and_starts_nothing() {
        // The run was aborted while it waited: it stops waiting, the
        // compaction goes on, and nothing takes its place.
        let mut course = Checkpoint::new(true, true);
        assert_eq!(course.step(Next::Wait), Act::Take { wait: true });
        assert!(!course.waited(Waited::Stopped));
        assert!(course.stopped());
        for next in [Next::Wait, Next::Compact, Next::Start, Next::Nothing] {
            assert_eq!(course.step(next), Act::Done);
        }
        // Stopped before it began (the run was aborted already): a summary
        // that is ready still goes in; nothing is awaited, compacted or
        // started.
        for next in [Next::Wait, Next::Compact, Next::Start] {
            let mut course = Checkpoint::new(true, true);
            course.stop();
            assert_eq!(course.step(next), Act::Done);
        }
        let mut course = Checkpoint::new(true, true);
        course.stop();
        assert_eq!(course.step(Next::Insert), Act::Take { wait: false });
        assert_eq!(course.step(Next::Compact), Act::Done);
    }

    #[test]
    fn a_background_compaction_a_request_waits_for_is_no_longer_unattended() {
        assert!(unattended(true, Job::Running, 0));
        assert!(!unattended(true, Job::Running, 1), "the conversation waits");
        assert!(!unattended(true, Job::Idle, 0), "the app's own compaction");
        assert!(!unattended(false, Job::Running, 0), "ended");
        assert!(!unattended(true, Job::Ready, 0));
    }

    #[test]
    fn a_summary_goes_in_only_where_the_snapshot_still_is() {
        assert!(arrived(10, 10, true));
        assert!(
            arrived(10, 14, true),
            "messages added meanwhile stay after it"
        );
        assert!(!arrived(10, 14, false), "an edit or an undo");
        assert!(!arrived(10, 9, true), "messages taken away");
    }

    #[test]
    fn messages_added_meanwhile_count_as_kept_and_a_marker_goes_after_them() {
        assert_eq!(
            Arrival::new(Some(6), 3),
            Arrival::Summary { kept_messages: 9 }
        );
        assert_eq!(
            Arrival::new(Some(6), 0),
            Arrival::Summary { kept_messages: 6 }
        );
        assert_eq!(Arrival::new(None, 3), Arrival::MarkerLast);
    }

    #[test]
    fn a_background_compaction_keeps_less_by_the_room_left_but_never_under_half() {
        // 20,000 kept at the threshold; started 8,000 under it: 12,000.
        assert_eq!(keep_recent(20_000.0, 84_000.0, 76_000.0), 12_000.0);
        // Started far under it: half.
        assert_eq!(keep_recent(20_000.0, 84_000.0, 60_000.0), 10_000.0);
        // At or over the threshold: all of it.
        assert_eq!(keep_recent(20_000.0, 84_000.0, 84_000.0), 20_000.0);
        assert_eq!(keep_recent(20_000.0, 84_000.0, 90_000.0), 20_000.0);
    }

    #[test]
    fn the_fraction_is_of_the_threshold() {
        let path = || FieldPath::argument("fraction");
        assert_eq!(fraction(None, path), Ok(None));
        assert_eq!(fraction(Some(0.8), path), Ok(Some(0.8)));
        assert_eq!(fraction(Some(1.0), path), Ok(Some(1.0)));
        for (bad, shown) in [(0.0, "0"), (1.5, "1.5"), (f64::NAN, "NaN")] {
            let e = fraction(Some(bad), path).unwrap_err();
            assert!(e.is_range());
            assert_eq!(
                e.to_string(),
                format!(
                    "fraction must be a number in (0, 1]: a fraction of the threshold, got {shown}"
                )
            );
        }
    }
}
