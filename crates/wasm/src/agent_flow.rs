//! `compactor.attach(agent, { store?, sessionId?, onStateChange?, backgroundAt? })`: the
//! flows of SPEC §3 in a running pi-agent-core 0.73 `Agent`.
//!
//! The decision after a run is `core::agent_flow`; this module listens to
//! the agent, gathers the facts, compacts, sets the agent's messages, saves
//! and retries. What pi-agent-core 0.73 imposes (SPEC §3): listeners are
//! awaited and the run stays active until the `agent_end` listeners settle,
//! so compaction runs inside that listener (the agent refuses `prompt()`
//! meanwhile; the app queues with `followUp()`), and the retry is started
//! once the agent is idle, never awaited inside the listener.
//!
//! Before a prompt: the first LLM call of a run (and the first after the
//! agent's model changed: its window and settings are applied then) passes
//! through the compactor's `transformContext`, which the agent awaits. A
//! session that is over the threshold there is compacted before the request
//! goes out;
//! for the rest of that run the loop keeps its own copy of the messages
//! (without the summary), so the hook puts the summary in front of the kept
//! messages of that copy.
//!
//! In the background (`backgroundAt`, `core::compaction::background`): after
//! an answer (the provider has just cached everything before it) a
//! compaction may start on a copy of the messages, awaited by nobody; its
//! summary goes into the agent's messages when it arrives if the agent is
//! idle, else at the run's next request (then in front of the loop's copy,
//! as above); a request over the threshold before it arrives waits for it.
//!
//! Stops (`core::agent_flow::Stop`): the agent hands its listeners and
//! `transformContext` the run's abort signal; `agent.abort()` cancels the
//! compaction the run waits for and ends its wait for one in the
//! background (which goes on: it belongs to no run). `detach()` aborts
//! every compaction the attachment started, and nothing reaches the agent,
//! its store or `onStateChange` after it.

use crate::compactor::{compaction_end_event, emit, Compactor};
use crate::js::errors::bad_input;
use crate::js::values::{object, prop, shape, Opt};
use agent_compaction_core::compaction::agent_flow::{
    after_run, attach_options, then, Flow, Owner, RetryGuard, RunEnd, Stop, Then, AGENT_TAKEN,
    ALREADY_ATTACHED, RECOVERY_FAILED,
};
use agent_compaction_core::compaction::background::{Act, Checkpoint, Next};
use agent_compaction_core::compaction::reason::Reason;
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::conversation::view::is_failed_attempt;
use agent_compaction_core::tokens::overflow::StopReason;
use js_sys::{Array, Function, Promise, Reflect};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

type Listener = Closure<dyn Fn(JsValue, JsValue) -> JsValue>;

/// A compaction inserted by the hook during the current run: the loop's
/// own array lacks it, so the run's later requests get it put back.
enum Substitute {
    Summary {
        /// Where the kept messages start in the loop's own array.
        first_kept: u32,
        kept: JsValue,
        /// The summary, then the pinned messages re-sent after it.
        head: Array,
    },
    /// A `toolOutputCleared` marker, which goes at `at`, right after
    /// `anchor` (the newest output it cleared).
    Marker {
        at: u32,
        anchor: JsValue,
        marker: JsValue,
    },
}

pub(super) struct Attachment {
    compactor: Compactor,
    agent: JsValue,
    store: Option<(JsValue, JsValue)>,
    on_state_change: Option<Function>,
    on_event: Option<Function>,
    guard: Cell<RetryGuard>,
    last_assistant: RefCell<Option<JsValue>>,
    run_started: Cell<bool>,
    /// The tier of the last compaction that changed the messages.
    last_tier: RefCell<Option<JsValue>>,
    substitute: RefCell<Option<Substitute>>,
    /// The agent's model as last applied: provider, id, contextWindow.
    model: RefCell<[JsValue; 3]>,
    /// What `attach` replaced on the agent, put back by `detach`.
    previous_hooks: RefCell<Option<[JsValue; 2]>>,
    unsubscribe: RefCell<Option<Function>>,
    /// The agent's listener; it holds this attachment only weakly.
    listener: RefCell<Option<Listener>>,
    /// `backgroundAt`: the fraction of the threshold at which a compaction
    /// starts in the background (`None`: never).
    background_at: Option<f64>,
    /// `detach()` was called: nothing more reaches the agent, its store or
    /// `onStateChange`.
    detached: Cell<bool>,
    /// Aborted by `detach()` ([`Stop::Detached`]).
    detaching: JsValue,
}

/// `object[key](...args)`; what it throws, or a TypeError when it is no function.
fn call(object: &JsValue, key: &str, args: &Array) -> Result<JsValue, JsValue> {
    let f = prop(object, key);
    match f.dyn_ref::<Function>() {
        Some(f) => f.apply(object, args),
        None => Err(js_sys::TypeError::new(&format!("{key} is not a function")).into()),
    }
}

async fn settle(value: Result<JsValue, JsValue>) -> Result<JsValue, JsValue> {
    JsFuture::from(Promise::resolve(&value?)).await
}

impl Attachment {
    fn messages(&self) -> JsValue {
        prop(&prop(&self.agent, "state"), "messages")
    }

    /// `agent.state.messages = messages` (the agent copies the array), and
    /// `onStateChange` told the context tokens of the array that now holds
    /// the summary (the state reported as the compaction ended was still the
    /// array before it).
    fn set_messages(&self, messages: &JsValue) {
        if self.detached.get() {
            return;
        }
        let _ = Reflect::set(&prop(&self.agent, "state"), &"messages".into(), messages);
        self.state_changed();
    }

    pub(super) fn state_changed(&self) {
        let Some(f) = self
            .on_state_change
            .as_ref()
            .filter(|_| !self.detached.get())
        else {
            return;
        };
        let tokens = self
            .compactor
            .context_tokens(self.messages())
            .unwrap_or(f64::NAN);
        let state = shape(shapes::attach_state(
            self.compactor.is_compacting(),
            self.compactor.is_compacting_in_background(),
            tokens,
            self.last_tier.borrow().clone(),
        ));
        let _ = f.call1(&JsValue::UNDEFINED, &state);
    }

    /// Saves the agent's messages; a failure is a `save_error` event, and
    /// the messages in memory stay as they are.
    async fn save(&self) {
        let Some((store, id)) = self.store.as_ref().filter(|_| !self.detached.get()) else {
            return;
        };
        let args = Array::of2(id, &self.messages());
        if let Err(error) = settle(call(store, "save", &args)).await {
            let event = shape(shapes::save_error_event(error));
            emit(self.on_event.clone(), event);
        }
    }

    /// The agent's system prompt and tools, so that summary requests may
    /// repeat the conversation as its own requests send it.
    fn conversation(&self) -> JsValue {
        let state = prop(&self.agent, "state");
        object(&[
            ("systemPrompt", prop(&state, "systemPrompt")),
            ("tools", prop(&state, "tools")),
        ])
    }

    /// Whether the background compaction would start now for `messages`.
    fn background_due(&self, messages: &JsValue) -> bool {
        self.background_at.is_some()
            && (self.compactor.next(messages, self.background_at))
                .is_ok_and(|(_, next)| next == Next::Start)
    }

    /// The signal that cancels what is done for `owner`: the run's abort
    /// (`run`, the agent's signal) and `detach()`, as far as each
    /// [`Stop::cancels`] it; and what undoes the links made for it.
    fn signal_for(&self, owner: Owner, run: Option<&JsValue>) -> (Option<JsValue>, Vec<Function>) {
        let detaching = prop(&self.detaching, "signal");
        let sources: Vec<JsValue> = [
            (Stop::RunAborted, run.cloned()),
            (Stop::Detached, Some(detaching)),
        ]
        .into_iter()
        .filter(|(stop, _)| stop.cancels(owner))
        .filter_map(|(_, signal)| signal.filter(JsValue::is_object))
        .collect();
        match sources.as_slice() {
            [] => (None, Vec::new()),
            [one] => (Some(one.clone()), Vec::new()),
            many => {
                let controller = crate::compaction::new_abort_controller();
                let unlink = many
                    .iter()
                    .map(|signal| crate::compaction::link_abort(signal, &controller))
                    .collect();
                (Some(prop(&controller, "signal")), unlink)
            }
        }
    }

    /// The checkpoint (`compactIfNeeded`) on `messages`, the agent's or the
    /// loop's copy at a request, along `course` (after an overflow:
    /// `overflow` is `Some(will_retry)`), for the run whose abort signal is
    /// `run` (none: for no run). A result goes into the agent's messages
    /// (saved) when they are still those of the start: then `(result,
    /// true)`. A summary that arrives later goes in when the agent is idle
    /// (during a run, the next request puts it in).
    async fn checkpoint(
        self: &Rc<Self>,
        messages: &JsValue,
        course: Checkpoint,
        overflow: Option<bool>,
        run: Option<&JsValue>,
    ) -> Option<(JsValue, bool)> {
        // A copy of the agent's messages as the compaction starts: the app
        // may push to the same array meanwhile, or replace it.
        let before = self
            .messages()
            .dyn_into::<Array>()
            .ok()
            .map(|a| a.slice(0, a.length()));
        let this = self.clone();
        let ended = Box::new(move || {
            crate::js::values::spawn_detached(async move {
                if !prop(&prop(&this.agent, "state"), "isStreaming").is_truthy() {
                    this.insert_background().await;
                }
            })
        });
        let (stop, unlink) = self.signal_for(Owner::Run, run);
        let (background_signal, _) = self.signal_for(Owner::Background, run);
        let how = crate::compactor::Checkpoint {
            fraction: self.background_at,
            conversation: self.conversation(),
            overflow,
            course,
            stop,
            background_signal,
        };
        let checkpoint = self
            .compactor
            .shared()
            .checkpoint(messages.clone(), how, Some(ended));
        let result = checkpoint.await;
        for f in unlink {
            let _ = f.call0(&JsValue::UNDEFINED);
        }
        let result = result.ok()?;
        if !result.is_object() || self.detached.get() {
            return None;
        }
        *self.last_tier.borrow_mut() = Some(prop(&result, "tier"));
        let placed = before.and_then(|before| placed(&result, messages, &before, &self.messages()));
        let applied = placed.is_some();
        if let Some(placed) = placed {
            self.set_messages(&prop(&placed, "messages"));
            self.save().await;
        }
        Some((result, applied))
    }

    /// Puts a background summary that is ready into the agent's messages
    /// (saved); the result, when there was one for them.
    async fn insert_background(&self) -> Option<JsValue> {
        if self.detached.get() {
            return None;
        }
        let result = (self.compactor.take_background(self.messages())).unwrap_or_default();
        if !result.is_object() {
            return None;
        }
        *self.last_tier.borrow_mut() = Some(prop(&result, "tier"));
        self.set_messages(&prop(&result, "messages"));
        self.save().await;
        Some(result)
    }

    /// Starts `agent.continue()` once the agent is idle (never awaited by a
    /// listener: that would deadlock the run).
    fn continue_when_idle(self: &Rc<Self>) {
        let this = self.clone();
        crate::js::values::spawn_detached(async move {
            let _ = settle(call(&this.agent, "waitForIdle", &Array::new())).await;
            if !this.detached.get() {
                let _ = settle(call(&this.agent, "continue", &Array::new())).await;
            }
        });
    }

    fn kick_queued(self: &Rc<Self>) {
        if call(&self.agent, "hasQueuedMessages", &Array::new()).is_ok_and(|v| v.is_truthy()) {
            self.continue_when_idle();
        }
    }

    /// What follows a run's flow ([`then`]): the retry, the queued
    /// messages, or nothing (the run was aborted, or `detach()` called).
    fn then(self: &Rc<Self>, retry: bool, applied: bool, run: &JsValue) {
        let stopped = prop(run, "aborted").is_truthy() || self.detached.get();
        match then(retry, applied, stopped) {
            Then::Nothing => {}
            Then::Retry => self.continue_when_idle(),
            Then::SendQueued => self.kick_queued(),
        }
    }

    fn overflow(&self, message: &JsValue) -> bool {
        let window = self.compactor.context_window().unwrap_or(0.0);
        crate::estimate::is_context_overflow(message.clone(), window.into()).unwrap_or(false)
    }

    fn run_end(&self, message: &JsValue, messages: &JsValue) -> RunEnd {
        let model = prop(&prop(&self.agent, "state"), "model");
        let same_model = prop(message, "provider") == prop(&model, "provider")
            && prop(message, "model") == prop(&model, "id");
        let stop_reason = prop(message, "stopReason")
            .as_string()
            .map_or(StopReason::Other, |s| StopReason::from_name(&s));
        // pi compares timestamps; a retry can start in the very millisecond
        // its summary was made, so look for the message itself instead.
        let before_last_summary = self
            .compactor
            .last_summary_index(messages)
            .is_some_and(|at| !found_after(messages, message, at));
        RunEnd {
            stop_reason,
            overflow: self.overflow(message),
            same_model,
            before_last_summary,
        }
    }

    /// The agent's model, when its provider, id or contextWindow changed
    /// since last seen (at `attach`: seen first).
    fn new_model(&self) -> Option<JsValue> {
        let model = prop(&prop(&self.agent, "state"), "model");
        let facts = [
            prop(&model, "provider"),
            prop(&model, "id"),
            prop(&model, "contextWindow"),
        ];
        let mut seen = self.model.borrow_mut();
        if *seen == facts {
            return None;
        }
        *seen = facts;
        Some(model)
    }

    /// Gives the compactor the agent's model when it changed (its window
    /// and per-model settings); whether it did. A model it cannot take (a
    /// window the settings cannot work with) is a `hook_error` event, once
    /// per change: the compactor keeps its window and settings.
    fn follow_model(&self) -> bool {
        let Some(model) = self.new_model() else {
            return false;
        };
        match self.compactor.set_model(model, JsValue::UNDEFINED) {
            Ok(()) => true,
            Err(error) => {
                let event = shape(shapes::hook_error_event("transformContext", error));
                emit(self.on_event.clone(), event);
                false
            }
        }
    }

    /// The flows after a run (`agent_end`); `run`: the run's abort signal.
    async fn after_run(self: &Rc<Self>, run: &JsValue) {
        self.follow_model();
        let Some(message) = self.last_assistant.borrow_mut().take() else {
            return;
        };
        let messages = self.messages();
        let end = self.run_end(&message, &messages);
        let enabled = self.compactor.enabled();
        let flow = after_run(&end, enabled, self.guard.get().used(), || {
            self.compactor
                .needs_compaction(messages.clone())
                .unwrap_or(false)
        });
        if flow == Flow::RecoveryFailed {
            let failed = Some(RECOVERY_FAILED);
            let event =
                compaction_end_event("overflow", JsValue::UNDEFINED, false, false, failed, None);
            emit(self.on_event.clone(), event);
        }
        let overflow = flow
            .compaction()
            .filter(|how| how.reason == Reason::Overflow);
        let Some(how) = overflow else {
            // Under the threshold a summary that arrived goes in, or one
            // starts in the background when due; over it, one under way is
            // awaited, else a threshold compaction runs now.
            let course = Checkpoint::new(true, flow == Flow::Threshold);
            let applied = self.checkpoint(&messages, course, None, Some(run)).await;
            self.then(false, applied.is_some_and(|(_, a)| a), run);
            return;
        };
        // An overflow: a compaction in the background ends first (one at a
        // time), and its summary is the compaction this needs; else one
        // runs now. For a retry the failed attempt goes with it; if nothing
        // went in, it stays, so the app still shows the provider's error.
        let input = if how.retry {
            self.update_guard(RetryGuard::on_retry);
            without_last(&messages, &message)
        } else {
            messages
        };
        let course = Checkpoint::new(false, true);
        let applied = self
            .checkpoint(&input, course, Some(how.retry), Some(run))
            .await;
        self.then(how.retry, applied.is_some_and(|(_, a)| a), run);
    }

    fn update_guard(&self, update: impl FnOnce(&mut RetryGuard)) {
        let mut guard = self.guard.get();
        update(&mut guard);
        self.guard.set(guard);
    }

    /// The agent's event listener; `run`: the run's abort signal.
    fn on_agent_event(self: &Rc<Self>, event: &JsValue, run: &JsValue) -> JsValue {
        if self.detached.get() {
            return JsValue::UNDEFINED;
        }
        let kind = prop(event, "type").as_string().unwrap_or_default();
        match kind.as_str() {
            "agent_start" => {
                self.run_started.set(true);
                *self.substitute.borrow_mut() = None;
                JsValue::UNDEFINED
            }
            "message_start" => {
                if prop(&prop(event, "message"), "role").as_string().as_deref() == Some("user") {
                    self.update_guard(RetryGuard::on_user_message);
                }
                JsValue::UNDEFINED
            }
            "message_end" => {
                let message = prop(event, "message");
                if prop(&message, "role").as_string().as_deref() == Some("assistant") {
                    let overflow = self.overflow(&message);
                    self.update_guard(|g| g.on_assistant_message(overflow));
                    // Right after an answer the provider has cached all the
                    // conversation before it: the moment for a compaction in
                    // the background to start, its summary request repeating
                    // that prefix.
                    let stop = prop(&message, "stopReason").as_string().unwrap_or_default();
                    let start = !is_failed_attempt(&stop) && self.background_due(&self.messages());
                    *self.last_assistant.borrow_mut() = Some(message);
                    if start {
                        let this = self.clone();
                        let messages = self.messages();
                        // Only a start: the loop's own array would lack an
                        // inserted summary.
                        crate::js::values::spawn_detached(async move {
                            let course = Checkpoint::new(true, false);
                            this.checkpoint(&messages, course, None, None).await;
                        });
                    }
                }
                let this = self.clone();
                crate::js::values::spawn(async move {
                    this.save().await;
                    this.state_changed();
                    Ok(JsValue::UNDEFINED)
                })
                .into()
            }
            "agent_end" => {
                self.run_started.set(false);
                *self.substitute.borrow_mut() = None;
                let this = self.clone();
                let run = run.clone();
                crate::js::values::spawn(async move {
                    this.after_run(&run).await;
                    Ok(JsValue::UNDEFINED)
                })
                .into()
            }
            _ => JsValue::UNDEFINED,
        }
    }

    /// The `transformContext` hook's part: `Some(context)` when the
    /// attachment decides the context of this call; `run`: the run's abort
    /// signal.
    pub(super) fn transform(self: &Rc<Self>, messages: &JsValue, run: &JsValue) -> Option<Promise> {
        if self.detached.get() {
            return None;
        }
        let new_model = self.follow_model();
        if let Some(sub) = self.substitute.borrow().as_ref() {
            let array: &Array = messages.dyn_ref()?;
            return match sub {
                Substitute::Summary {
                    first_kept,
                    kept,
                    head,
                } if array.length() > *first_kept && array.get(*first_kept) == *kept => {
                    let context: JsValue = head
                        .concat(&array.slice(*first_kept, array.length()))
                        .into();
                    Some(Promise::resolve(&context))
                }
                Substitute::Marker { at, anchor, marker }
                    if *at >= 1 && array.length() >= *at && array.get(at - 1) == *anchor =>
                {
                    let with = crate::compaction::insert_at(array, *at, marker);
                    let context = self.compactor.context_of(&with.into());
                    Some(Promise::resolve(
                        &self.compactor.transform_answer(context, messages),
                    ))
                }
                _ => None,
            };
        }
        // The first request of a run, or the first with a new model.
        // The threshold is asked at a run's first request (and the first
        // with a new model); later ones only while a background compaction
        // runs or has its summary ready. A summary that goes in is put in
        // front of the kept messages of the loop's array for the rest of
        // the run.
        let first = self.run_started.replace(false) | new_model;
        if !first && !self.compactor.has_background() {
            return None;
        }
        // Nothing to do here (the common case), or messages that cannot be
        // read: the hook's own answer, at once.
        let course = Checkpoint::new(false, first);
        let (_, next) = self.compactor.next(messages, self.background_at).ok()?;
        let mut probe = course;
        if probe.step(next) == Act::Done {
            return None;
        }
        let this = self.clone();
        let messages = messages.clone();
        let run = run.clone();
        Some(crate::js::values::spawn(async move {
            let context = match this.checkpoint(&messages, course, None, Some(&run)).await {
                Some((result, _)) => this.with_result(&messages, &result),
                None => this.compactor.context_of(&messages),
            };
            Ok(this.compactor.transform_answer(context, &messages))
        }))
    }

    /// The context of the loop's array `messages` with what `result` (a
    /// compaction of its first messages) inserted, for this request and
    /// the run's later ones (the loop's own array lacks it): a clearing
    /// marker, whose placeholders go in place of the outputs it lists; or
    /// the summary and the pinned messages before it (at the same indices
    /// in the loop's array) in front of the kept messages.
    fn with_result(&self, messages: &JsValue, result: &JsValue) -> Result<JsValue, JsValue> {
        let array: &Array = messages.unchecked_ref();
        if prop(result, "tier").as_string().as_deref() == Some("clear") {
            let at = prop(result, "markerIndex").as_f64().unwrap_or(0.0) as u32;
            let marker = prop(result, "marker");
            if at >= 1 {
                *self.substitute.borrow_mut() = Some(Substitute::Marker {
                    at,
                    anchor: array.get(at - 1),
                    marker: marker.clone(),
                });
            }
            let with = crate::compaction::insert_at(array, at, &marker);
            return self.compactor.context_of(&with.into());
        }
        let first_kept = prop(result, "firstKeptIndex").as_f64().unwrap_or(0.0) as u32;
        let summary = prop(result, "summary");
        let head = self
            .compactor
            .context_head(&prop(result, "messages"))
            .unwrap_or_else(|| Array::of1(&summary));
        *self.substitute.borrow_mut() = Some(Substitute::Summary {
            first_kept,
            kept: array.get(first_kept),
            head: head.clone(),
        });
        Ok(head.concat(&array.slice(first_kept, array.length())).into())
    }

    /// Nothing more reaches the agent, its store or `onStateChange`; the
    /// compactions this started are aborted ([`Stop::Detached`]).
    fn detach(&self) {
        self.detached.set(true);
        if let Some(f) = prop(&self.detaching, "abort").dyn_ref::<Function>() {
            let _ = f.call0(&self.detaching);
        }
        if let Some(f) = self.unsubscribe.borrow_mut().take() {
            let _ = f.call0(&JsValue::UNDEFINED);
        }
        if let Some(previous) = self.previous_hooks.borrow_mut().take() {
            // Each hook the agent still holds from `attach` is put back; one
            // the app set over it since stays.
            let ours = self.compactor.agent_hooks();
            for (name, hook) in HOOKS.iter().zip(&previous) {
                if js_sys::Object::is(&prop(&self.agent, name), &prop(&ours, name)) {
                    let _ = Reflect::set(&self.agent, &JsValue::from_str(name), hook);
                }
            }
        }
        ATTACHED.with(|agents| agents.delete(self.agent.unchecked_ref()));
    }
}

thread_local! {
    /// The agents a `Compactor` is attached to (held weakly).
    static ATTACHED: js_sys::WeakSet = js_sys::WeakSet::new();
}

/// The agent's hooks `attach` replaces and `detach` puts back.
const HOOKS: [&str; 2] = ["transformContext", "convertToLlm"];

/// Sets the agent's [`HOOKS`] to `hooks`; returns what they were.
/// `result`, a compaction of `input`, for the agent's messages `live`,
/// which were `before` as it started: as it is while they still are; with
/// the messages the app added meanwhile (pushed, or in a new array that
/// starts with `before`'s) after it, `compactor::arrive`; `None` when the
/// app changed them otherwise (its change wins, and the compaction is
/// dropped rather than overwrite it). What the agent held beyond `input`
/// (a failed attempt a retry leaves out) stays out.
fn placed(result: &JsValue, input: &JsValue, before: &Array, live: &JsValue) -> Option<JsValue> {
    let (input, live) = (input.dyn_ref::<Array>()?, live.dyn_ref::<Array>()?);
    if !crate::compactor::starts_with(before, live) {
        return None;
    }
    let grown = input.concat(&live.slice(before.length(), live.length()));
    crate::compactor::arrive(result, input, &grown)
}

fn swap_hooks(agent: &JsValue, hooks: [JsValue; 2]) -> [JsValue; 2] {
    let previous = HOOKS.map(|name| prop(agent, name));
    for (name, hook) in HOOKS.iter().zip(&hooks) {
        let _ = Reflect::set(agent, &JsValue::from_str(name), hook);
    }
    previous
}

/// `messages` without its last element when that is `message`: a new
/// array either way.
fn without_last(messages: &JsValue, message: &JsValue) -> JsValue {
    let array: &Array = messages.unchecked_ref();
    let len = array.length();
    let end = if len > 0 && array.get(len - 1) == *message {
        len - 1
    } else {
        len
    };
    array.slice(0, end).into()
}

/// Whether `message` is in `messages` after index `at`.
fn found_after(messages: &JsValue, message: &JsValue, at: usize) -> bool {
    let Some(array) = messages.dyn_ref::<Array>() else {
        return false;
    };
    (at as u32 + 1..array.length())
        .rev()
        .any(|i| array.get(i) == *message)
}

#[wasm_bindgen]
impl Compactor {
    /// Wires the compactor into a pi-agent-core `Agent` (SPEC §3): installs
    /// the hooks, runs the automatic flows after each run, saves to `store`.
    /// Returns the function that detaches it.
    pub fn attach(&self, agent: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let read = |value: &Opt, key| Opt(prop(&value.0, key));
        let o = attach_options(&Opt(agent.clone()), &Opt(options), read)
            .map_err(|(message, range)| bad_input(&message, range))?;
        if self.attachment().is_some() {
            return Err(js_sys::Error::new(ALREADY_ATTACHED).into());
        }
        if ATTACHED.with(|agents| agents.has(agent.unchecked_ref())) {
            return Err(js_sys::Error::new(AGENT_TAKEN).into());
        }

        // The hooks: the agent reads them at the start of every run.
        let hooks = self.agent_hooks();
        let previous = swap_hooks(&agent, HOOKS.map(|name| prop(&hooks, name)));

        let attachment = Rc::new(Attachment {
            compactor: self.shared(),
            agent: agent.clone(),
            store: o.store.map(|(store, id)| (store.0, id.0)),
            on_state_change: o.on_state_change,
            on_event: self.on_event(),
            guard: Cell::new(RetryGuard::default()),
            last_assistant: RefCell::new(None),
            run_started: Cell::new(false),
            last_tier: RefCell::new(None),
            substitute: RefCell::new(None),
            model: RefCell::new(Default::default()),
            previous_hooks: RefCell::new(Some(previous)),
            unsubscribe: RefCell::new(None),
            listener: RefCell::new(None),
            background_at: o.background_at,
            detached: Cell::new(false),
            detaching: crate::compaction::new_abort_controller(),
        });
        let weak = Rc::downgrade(&attachment);
        let listener = Listener::new(move |event: JsValue, run: JsValue| match weak.upgrade() {
            Some(a) => a.on_agent_event(&event, &run),
            None => JsValue::UNDEFINED,
        });
        let unsubscribe = call(&agent, "subscribe", &Array::of1(listener.as_ref()))?;
        *attachment.listener.borrow_mut() = Some(listener);
        *attachment.unsubscribe.borrow_mut() = unsubscribe.dyn_into::<Function>().ok();
        attachment.new_model();
        self.set_attachment(Some(attachment.clone()));
        ATTACHED.with(|agents| agents.add(agent.unchecked_ref()));
        attachment.state_changed();

        // The compactor owns the attachment; `detach` only names it. Held
        // strongly here, a detached attachment would live as long as this
        // function, which its own abort reason (an error whose stack holds
        // the function) keeps alive: the agent and its messages with it.
        let compactor = self.shared();
        let attachment = Rc::downgrade(&attachment);
        let detach = Closure::<dyn Fn()>::new(move || {
            if let (Some(a), Some(ours)) = (compactor.attachment(), attachment.upgrade()) {
                if Rc::ptr_eq(&a, &ours) {
                    a.detach();
                    compactor.set_attachment(None);
                }
            }
        });
        Ok(detach.into_js_value())
    }
}
