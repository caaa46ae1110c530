//! What automatic compaction does after an agent run (SPEC §3, "Automatic
//! compaction in an agent loop"): the decision, free of any agent or
//! JavaScript, so that every branch is tested natively. The host (the
//! package's `attach`) gathers the facts, asks [`after_run`], and carries the
//! answer out (takes the failed attempt out, compacts, saves, retries).
//!
//! pi's `AgentSession._checkCompaction` is the model, with one deliberate
//! difference the spec asks for: a *silent* overflow (a `stop` answer whose
//! input exceeded the window) keeps its answer and is not retried, where pi
//! drops the answer and runs the turn again.

use crate::compaction::reason::Reason;
use crate::js::number::number_to_string;
use crate::js::options::Value;
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

impl RunEnd {
    /// A call made without pi's agent, judged by its caller (`overflow`),
    /// whose messages end with `reply` when their newest is an assistant
    /// message: its stop reason, and whether it is itself a context
    /// overflow (`isContextOverflow` against the window). A reply that
    /// answered (`stop`, `toolUse`) with its input over the window is a
    /// silent overflow, as `attach` takes it: the answer stays. Any other
    /// call is [`RunEnd::of_call`]'s, so a call that failed and left no
    /// reply (the AI SDK's) after an answer that fit is retried.
    pub fn of_reply(overflow: bool, reply: Option<(StopReason, bool)>) -> RunEnd {
        match reply {
            Some((stop_reason @ (StopReason::Stop | StopReason::ToolUse), true)) if overflow => {
                RunEnd {
                    stop_reason,
                    overflow,
                    same_model: true,
                    before_last_summary: false,
                }
            }
            _ => RunEnd::of_call(overflow),
        }
    }

    /// A call an adapter without pi's agent made (the AI SDK's): it failed
    /// with a context overflow or answered; the model is the adapter's own
    /// and its messages are current.
    pub fn of_call(overflow: bool) -> RunEnd {
        RunEnd {
            stop_reason: if overflow {
                StopReason::Error
            } else {
                StopReason::Stop
            },
            overflow,
            same_model: true,
            before_last_summary: false,
        }
    }
}

/// How a flow compacts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowCompaction {
    pub reason: Reason,
    /// The turn is run again: the failed attempt is taken out before
    /// compacting, and the retry started once the result is saved (without
    /// it, messages the app queued meanwhile are sent once it ends).
    pub retry: bool,
}

impl Flow {
    /// Every flow, in declaration order (`ALL[flow as usize] == flow`).
    pub const ALL: [Flow; 5] = [
        Flow::Nothing,
        Flow::OverflowRetry,
        Flow::RecoveryFailed,
        Flow::SilentOverflow,
        Flow::Threshold,
    ];

    /// Its name in the adapters' answer (`afterRun`).
    pub fn name(self) -> &'static str {
        match self {
            Flow::Nothing => "nothing",
            Flow::OverflowRetry => "overflowRetry",
            Flow::RecoveryFailed => "recoveryFailed",
            Flow::SilentOverflow => "silentOverflow",
            Flow::Threshold => "threshold",
        }
    }

    /// The compaction it runs, if any.
    pub fn compaction(self) -> Option<FlowCompaction> {
        let (reason, retry) = match self {
            Flow::Nothing | Flow::RecoveryFailed => return None,
            Flow::OverflowRetry => (Reason::Overflow, true),
            Flow::SilentOverflow => (Reason::Overflow, false),
            Flow::Threshold => (Reason::Threshold, false),
        };
        Some(FlowCompaction { reason, retry })
    }
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

/// What the adapter starts once the agent is idle, after a run's flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    Nothing,
    /// The turn again (`agent.continue()`), after an overflow compacted.
    Retry,
    /// The messages the app queued meanwhile (`agent.continue()` when the
    /// agent has some).
    SendQueued,
}

/// What follows a run's flow: `retry` the flow's compaction retries the
/// turn; `applied` a compaction changed the agent's messages; `stopped`
/// the run was aborted (`agent.abort()`, the app's Stop) or the adapter
/// detached, during the run or its compaction. A stop starts nothing: the
/// agent stays idle, and what the app queued stays queued for it.
pub fn then(retry: bool, applied: bool, stopped: bool) -> Then {
    match (stopped, retry, applied) {
        (true, _, _) => Then::Nothing,
        (false, true, true) => Then::Retry,
        // No summary: no retry, the provider's error stays.
        (false, true, false) => Then::Nothing,
        (false, false, _) => Then::SendQueued,
    }
}

/// Whom a compaction the adapter starts is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The agent's run, which waits for it (after a run, before a request,
    /// an overflow's retry); also a wait for a background summary.
    Run,
    /// Nobody: one in the background.
    Background,
}

/// What ends the adapter's part in a compaction early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The agent's run was aborted (`agent.abort()`).
    RunAborted,
    /// `detach()`.
    Detached,
}

impl Stop {
    /// Whether it cancels a compaction (or a wait) of `owner`. The run's
    /// abort cancels what the run waits for (the summarizer's signal is
    /// aborted, nothing goes in) but not a compaction in the background,
    /// which belongs to no run: its summary still goes in when it arrives,
    /// as the conversation goes on. A detach cancels every compaction the
    /// adapter started: after it nothing more reaches the agent, its store
    /// or `onStateChange`, and a result nobody would take is not paid for.
    pub fn cancels(self, owner: Owner) -> bool {
        match (self, owner) {
            (Stop::Detached, _) => true,
            (Stop::RunAborted, Owner::Run) => true,
            (Stop::RunAborted, Owner::Background) => false,
        }
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

/// What `attach(agent, options)` was given, checked.
pub struct AttachOptions<V: Value> {
    /// The store and the session id, when a store is given.
    pub store: Option<(V, V)>,
    pub on_state_change: Option<V::Function>,
    /// `backgroundAt`: threshold compactions start in the background at
    /// this fraction of the threshold (`None`: `false`, never).
    pub background_at: Option<f64>,
}

/// `attach`'s and the AI SDK conversation's default `backgroundAt`.
pub const BACKGROUND_AT: f64 = 0.8;

/// Checks `attach`'s arguments: an agent with `subscribe()` and `state`;
/// options an object or absent; a store with `save()` and then a string
/// `sessionId`; `onStateChange` a function or absent; `backgroundAt` a
/// fraction or `false`. `prop` reads a property (`undefined` when it
/// cannot). `Err` is the error's text: a `RangeError`'s with `true` (a
/// number out of range), a `TypeError`'s else.
pub fn attach_options<V: Value>(
    agent: &V,
    options: &V,
    prop: impl Fn(&V, &'static str) -> V,
) -> Result<AttachOptions<V>, (String, bool)> {
    let refused =
        |what: &str, value: &V| (format!("attach: {what}, got {}", value.describe()), false);
    let is_agent = agent.is_object()
        && prop(agent, "subscribe").function().is_some()
        && prop(agent, "state").is_object();
    if !is_agent {
        let what = "agent must be a pi-agent-core Agent (with subscribe() and state)";
        return Err(refused(what, agent));
    }
    if !(options.is_nullish() || options.is_object()) {
        return Err(refused("options must be an object or undefined", options));
    }
    let store = prop(options, "store");
    let session_id = prop(options, "sessionId");
    let store = if store.is_nullish() {
        None
    } else if prop(&store, "save").function().is_none() {
        let what = "attach: options.store must have a save() method (a SessionStore)";
        return Err((what.into(), false));
    } else if session_id.name().is_none() {
        let what = "options.sessionId must be a string when options.store is given";
        return Err(refused(what, &session_id));
    } else {
        Some((store, session_id))
    };
    let given = prop(options, "onStateChange");
    let on_state_change = match given.function() {
        _ if given.is_nullish() => None,
        Some(f) => Some(f),
        None => return Err(refused("options.onStateChange must be a function", &given)),
    };
    let given = prop(options, "backgroundAt");
    let what =
        "options.backgroundAt must be a number in (0, 1] (a fraction of the threshold) or false";
    let background_at = match (given.is_undefined(), given.boolean(), given.number()) {
        (true, _, _) => Some(BACKGROUND_AT),
        (_, Some(false), _) => None,
        (_, _, Some(f)) if super::background::is_fraction(f) => Some(f),
        (_, _, Some(f)) => {
            return Err((format!("attach: {what}, got {}", number_to_string(f)), true))
        }
        _ => return Err(refused(what, &given)),
    };
    Ok(AttachOptions {
        store,
        on_state_change,
        background_at,
    })
}

/// `attach` on a compactor that is attached already (an `Error`).
pub const ALREADY_ATTACHED: &str = "attach: this Compactor is already attached to an agent; call the function attach returned to detach it first";
/// `attach` to an agent another `Compactor` is attached to: both would
/// compact and save each run, and their hooks would undo each other's.
pub const AGENT_TAKEN: &str = "attach: this agent is attached to another Compactor; call the function its attach returned to detach it first";

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

    #[test]
    fn each_flow_names_its_compaction() {
        let c = |reason, retry| Some(FlowCompaction { reason, retry });
        let want = [
            ("nothing", None),
            ("overflowRetry", c(Reason::Overflow, true)),
            ("recoveryFailed", None),
            ("silentOverflow", c(Reason::Overflow, false)),
            ("threshold", c(Reason::Threshold, false)),
        ];
        for (k, flow) in Flow::ALL.into_iter().enumerate() {
            assert_eq!(flow as usize, k);
            assert_eq!((flow.name(), flow.compaction()), want[k]);
        }
    }

    #[test]
    fn an_adapters_call_is_an_error_when_it_overflowed() {
        let e = RunEnd::of_call(true);
        assert_eq!(e.stop_reason, StopReason::Error);
        assert!(e.overflow && e.same_model && !e.before_last_summary);
        assert_eq!(decide(&e, false, false), Flow::OverflowRetry);
        let e = RunEnd::of_call(false);
        assert_eq!(e.stop_reason, StopReason::Stop);
        assert!(!e.overflow && e.same_model && !e.before_last_summary);
        assert_eq!(decide(&e, false, true), Flow::Threshold);
    }

    #[test]
    fn a_reply_that_answered_over_the_window_is_a_silent_overflow() {
        for stop in [StopReason::Stop, StopReason::ToolUse] {
            let e = RunEnd::of_reply(true, Some((stop, true)));
            assert_eq!(decide(&e, false, false), Flow::SilentOverflow);
            assert_eq!(decide(&e, true, false), Flow::SilentOverflow);
        }
        // A reply with no answer, an earlier answer that fit (the call
        // failed and left none), or no reply at all: the call's rule.
        for reply in [
            Some((StopReason::Error, true)),
            Some((StopReason::Length, true)),
            Some((StopReason::Stop, false)),
            None,
        ] {
            let e = RunEnd::of_reply(true, reply);
            assert_eq!(decide(&e, false, false), Flow::OverflowRetry, "{reply:?}");
            assert_eq!(decide(&e, true, false), Flow::RecoveryFailed, "{reply:?}");
        }
        // The caller saw no overflow: a threshold check.
        let e = RunEnd::of_reply(false, Some((StopReason::Stop, true)));
        assert_eq!(decide(&e, false, true), Flow::Threshold);
        assert_eq!(decide(&e, false, false), Flow::Nothing);
    }

    #[test]
    fn after_a_flow_a_retry_needs_a_summary_and_a_stop_starts_nothing() {
        assert_eq!(then(true, true, false), Then::Retry);
        assert_eq!(then(true, false, false), Then::Nothing);
        assert_eq!(then(false, true, false), Then::SendQueued);
        assert_eq!(then(false, false, false), Then::SendQueued);
        for (retry, applied) in [(true, true), (true, false), (false, true), (false, false)] {
            assert_eq!(then(retry, applied, true), Then::Nothing);
        }
    }

    #[test]
    fn the_runs_abort_cancels_what_the_run_waits_for_and_a_detach_everything() {
        assert!(Stop::RunAborted.cancels(Owner::Run));
        assert!(
            !Stop::RunAborted.cancels(Owner::Background),
            "a background compaction belongs to no run"
        );
        assert!(Stop::Detached.cancels(Owner::Run));
        assert!(Stop::Detached.cancels(Owner::Background));
    }

    use crate::js::options::tests::Js;

    /// Objects by name: `agent`, `agent.state`, `store` with `save`, …
    fn prop(value: &Js, key: &'static str) -> Js {
        match (value, key) {
            (Js::Fun("agent"), "subscribe") => Js::Fun("subscribe"),
            (Js::Fun("agent"), "state") => Js::Obj,
            (Js::Fun("store"), "save") => Js::Fun("save"),
            (Js::Fun("options"), "store") => Js::Fun("store"),
            (Js::Fun("options"), "sessionId") => Js::Str("s1"),
            (Js::Fun("options"), "onStateChange") => Js::Fun("changed"),
            (Js::Fun("bad store"), "store") => Js::Obj,
            (Js::Fun("no id"), "store") => Js::Fun("store"),
            (Js::Fun("no id"), "sessionId") => Js::Num(1.0),
            (Js::Fun("bad hook"), "onStateChange") => Js::Num(1.0),
            (Js::Fun("options"), "backgroundAt") => Js::Num(0.5),
            (Js::Fun("no background"), "backgroundAt") => Js::Bool(false),
            (Js::Fun("bad background"), "backgroundAt") => Js::Num(2.0),
            _ => Js::Undefined,
        }
    }

    fn error(agent: Js, options: Js) -> String {
        match attach_options(&agent, &options, prop) {
            Ok(_) => panic!("accepted"),
            Err((e, _)) => e,
        }
    }

    #[test]
    fn attach_checks_the_agent_and_its_options() {
        let o = attach_options(&Js::Fun("agent"), &Js::Fun("options"), prop).unwrap();
        assert_eq!(o.store, Some((Js::Fun("store"), Js::Str("s1"))));
        assert_eq!(o.on_state_change, Some("changed"));
        assert_eq!(o.background_at, Some(0.5));
        for none in [Js::Undefined, Js::Null, Js::Obj] {
            let o = attach_options(&Js::Fun("agent"), &none, prop).unwrap();
            assert_eq!((o.store, o.on_state_change), (None, None));
            assert_eq!(o.background_at, Some(BACKGROUND_AT), "on by default");
        }
        let o = attach_options(&Js::Fun("agent"), &Js::Fun("no background"), prop).unwrap();
        assert_eq!(o.background_at, None);
        assert_eq!(
            error(Js::Fun("agent"), Js::Fun("bad background")),
            "attach: options.backgroundAt must be a number in (0, 1] (a fraction of the threshold) or false, got 2"
        );
        // A number out of range is a RangeError; another type a TypeError.
        let class = |options| {
            attach_options(&Js::Fun("agent"), &options, prop)
                .err()
                .map(|(_, range)| range)
        };
        assert_eq!(class(Js::Fun("bad background")), Some(true));
        assert_eq!(class(Js::Num(1.0)), Some(false));
        assert_eq!(
            error(Js::Obj, Js::Undefined),
            "attach: agent must be a pi-agent-core Agent (with subscribe() and state), got an object"
        );
        assert_eq!(
            error(Js::Fun("agent"), Js::Str("x")),
            "attach: options must be an object or undefined, got a string"
        );
        assert_eq!(
            error(Js::Fun("agent"), Js::Fun("bad store")),
            "attach: options.store must have a save() method (a SessionStore)"
        );
        assert_eq!(
            error(Js::Fun("agent"), Js::Fun("no id")),
            "attach: options.sessionId must be a string when options.store is given, got a number"
        );
        assert_eq!(
            error(Js::Fun("agent"), Js::Fun("bad hook")),
            "attach: options.onStateChange must be a function, got a number"
        );
    }
}
