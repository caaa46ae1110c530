//! The `Compactor`: per-turn context accounting and the agent hooks.
//!
//! The compactor keeps the core's books of the messages it has seen
//! (`core::conversation::tracker`, `core::conversation::llm`) and its own
//! copy of the array, so that each turn costs only the new messages: `contextTokens`, `needsCompaction` and
//! the hooks cross the wasm boundary a fixed number of times plus once per
//! new range, and slice with the engine's own `Array.prototype.slice`.

use crate::clearing::cleared_outputs;
use crate::compaction::{check_not_aborted, link_abort, new_abort_controller, Job, JsFailure};
use crate::estimate::context_tokens_object;
use crate::js::errors::messages_unreadable;
use crate::js::errors::{bad_input, input_error};
use crate::js::message_access::{is_array, message_and_role, message_at, messages_array, JsArray};
use crate::js::message_facts::EstimateChunks;
use crate::js::values::{object, prop, read_fields, read_options, shape, Opt};
use crate::message::convert_message;
use crate::prepare::prepare;
use crate::settings::{model_from_js, ModelInfo};
use agent_compaction_core::compaction::background;
use agent_compaction_core::compaction::branch::budget_tokens;
use agent_compaction_core::compaction::clearing::{
    resolve_all, tries_clearing, ClearedOutputs, ClearingSettings,
};
use agent_compaction_core::compaction::flow::{
    end_event, nothing_to_do, prefix_room, Ending, Failure, NothingToDo, Reason, CANCELLED,
};
use agent_compaction_core::compaction::options::{self, Conversation};
use agent_compaction_core::compaction::settings::CompactionSettings;
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::compaction::stall::Ended;
use agent_compaction_core::conversation::llm::{Converter, Fresh, LlmBooks};
use agent_compaction_core::conversation::tracker::{threshold, Synced, Tracker};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::history::tool;
use agent_compaction_core::js::json::Json;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::context_tokens::ContextTokens;
use js_sys::{Array, Function, Int32Array, Promise};
use std::cell::{RefCell, RefMut};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = syncLlm, catch)]
    fn sync_llm(known: &Array, messages: &Array, scan: bool) -> Result<f64, JsValue>;
    #[wasm_bindgen(js_name = rebaseOut)]
    fn rebase_out(out: &Array, dropped: u32, first: &JsValue);
    #[wasm_bindgen(js_name = syncKnown, catch)]
    fn sync_known(known: &Array, messages: &Array, scan: bool) -> Result<f64, JsValue>;
    #[wasm_bindgen(js_name = takeSync)]
    fn take_sync() -> Array;
    #[wasm_bindgen(js_name = notedSummary)]
    fn noted_summary(message: &JsValue, note: &str) -> JsValue;
    #[wasm_bindgen(js_name = settledUnless)]
    fn settled_unless(promise: &Promise, signal: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = sameRun, catch)]
    fn same_run(known: &Array, messages: &Array) -> Result<bool, JsValue>;
}

/// The array the compactor keeps in step with: its own copy of the messages
/// it has indexed, and the core's books of them.
struct Tracked {
    known: Array,
    tracker: Tracker,
    /// The array last brought in line, and its length then: passed again
    /// unchanged (the same turn's next call), it is not checked again.
    synced: Option<(JsValue, u32)>,
}

/// The `convertToLlm` hook's cache: the inputs it has converted, their
/// outputs, and the core's books of which outputs follow which inputs.
#[derive(Default)]
struct LlmCache {
    known: Array,
    out: Array,
    books: LlmBooks,
}

struct State {
    /// The summarizer and its options (SPEC §3).
    summarize: Option<Function>,
    fallback_extractive: bool,
    before_compact: Option<Function>,
    summarizer_window: Option<u64>,
    timeout_ms: f64,
    /// Summary requests may take the prefix form (`cacheFriendly`).
    cache_friendly: bool,
    /// The summarizer is asked once for everything a compaction hides, and
    /// given what it covers (its `oneRequest` is true: it has its provider
    /// compact the conversation).
    one_request: bool,
    /// The running compaction's abort controller.
    running: Option<JsValue>,
    context_window: f64,
    model_key: Option<agent_compaction_core::js::string::JsStr>,
    settings_input: Option<Json>,
    settings: CompactionSettings,
    /// `settings.toolOutputClearing` (the clearing tier).
    clearing: ClearingSettings,
    on_event: Option<Function>,
    tracked: Tracked,
    llm: LlmCache,
    /// The facts the model's view needs, per message (`modelContext`).
    view: crate::conversation::ViewFacts,
    /// The context `transformContext` last returned: (array, its length,
    /// the tracked generation then).
    last_context: Option<(JsValue, u32, u32)>,
    /// The agent this compactor is attached to (`attach`).
    attached: Option<Rc<crate::agent_flow::Attachment>>,
    /// The compaction running in the background, or its summary not yet
    /// inserted (`compaction::background`).
    background: Option<BackgroundJob>,
    /// The checkpoints waiting for the background compaction (a request,
    /// or a retry, held up by it).
    waiting: usize,
    /// The history search's index (`searchHistory`).
    history: crate::history::Books,
    /// The history tools are offered (`historyTools()` was called): the
    /// model is sent the last summary ending with the history note.
    history_offered: bool,
    /// The last summary and the copy of it the model is sent.
    noted: RefCell<Option<(JsValue, JsValue)>>,
}

/// A compaction in the background: the messages it summarizes, the
/// promise `compact` returned for them, and its result once it ended with
/// a summary.
struct BackgroundJob {
    snapshot: Array,
    promise: Promise,
    /// Its abort controller.
    controller: JsValue,
    /// Set as it ends: it was cancelled (`abort()`, its signal, or
    /// `beforeCompact`), rather than failed or done.
    cancelled: Rc<std::cell::Cell<bool>>,
    result: Option<JsValue>,
}

#[wasm_bindgen(skip_typescript)]
pub struct Compactor {
    state: Rc<RefCell<State>>,
    hooks: RefCell<Option<JsValue>>,
}

const BUSY: &str = "the Compactor was called again while it was reading messages (from a getter?)";

fn busy() -> JsValue {
    js_sys::Error::new(BUSY).into()
}

impl Tracked {
    /// Brings the tracker in line with `messages` and returns the array.
    fn sync(&mut self, messages: &JsValue) -> Result<JsArray, InputError> {
        let array = messages_array(messages)?;
        let current: &JsValue = array.as_array();
        let same = |(v, len): &(JsValue, u32)| v == current && *len == array.len();
        if self.synced.as_ref().is_some_and(same) {
            return Ok(array);
        }
        self.synced = None;
        // Every known message compared by identity (pointers, in
        // JavaScript): one replaced before the last summary changes what
        // the model is sent as much as one after it.
        let scanned = sync_known(&self.known, array.as_array(), true)
            .map_err(messages_unreadable)
            .and_then(|result| synced(result, &array));
        let mut source = self.source(&array);
        if let Err(e) = self.tracker.sync(scanned.map(|(s, _)| s), &mut source) {
            // The tracker starts over; so does the copy.
            self.known.set_length(0);
            return Err(e);
        }
        self.synced = Some((current.clone(), array.len()));
        Ok(array)
    }

    /// What the tracker reads of `array` (just synced).
    fn source<'a>(&self, array: &'a JsArray) -> EstimateChunks<'a> {
        EstimateChunks::with(array, self.tracker.estimator())
    }
}

/// The change a scan's result describes (`takeSync()` read only when it
/// was not an append), and where the LLM cache's rebase cut `known` (0: not
/// rebased).
#[inline]
fn synced(result: f64, array: &JsArray) -> Result<(Synced, usize), InputError> {
    if result >= 0.0 {
        return Ok((Synced::Appended(result as usize), 0));
    }
    let parts = take_sync();
    let number = |i| parts.get(i).as_f64().unwrap_or_default() as usize;
    let words = parts.get(1).dyn_ref::<Int32Array>().map(Int32Array::to_vec);
    let synced = Synced::from_scan(number(0), words.as_deref(), array.len() as usize)?;
    Ok((synced, number(2)))
}

impl LlmCache {
    /// The outputs for `messages`; `is_context(array)`: it is the context
    /// `transformContext` returned at the tracker's `generation`.
    fn convert(
        &mut self,
        messages: &JsValue,
        is_context: impl FnOnce(&JsArray) -> bool,
        generation: u32,
    ) -> Result<Array, InputError> {
        let result = messages_array(messages).and_then(|array| {
            let is_context = is_context(&array);
            let mut converting = Converting {
                known: &self.known,
                out: &self.out,
                array: &array,
            };
            let len = self
                .books
                .convert(&mut converting, is_context, generation)?;
            Ok(self.out.slice(0, len))
        });
        if result.is_err() {
            self.books.start_over();
            self.known.set_length(0);
            self.out.set_length(0);
        }
        result
    }
}

/// The LLM cache's arrays and the inputs of one call, as the books drive
/// them.
struct Converting<'a> {
    known: &'a Array,
    out: &'a Array,
    array: &'a JsArray,
}

impl Converter for Converting<'_> {
    type Message = JsValue;

    #[inline]
    fn scan(&mut self, trusted: bool) -> Result<(Synced, usize), InputError> {
        // Trusted: the shim checks the first and last known inputs alone.
        let result =
            sync_llm(self.known, self.array.as_array(), !trusted).map_err(messages_unreadable)?;
        synced(result, self.array)
    }

    #[inline]
    fn read(&mut self, from: usize) -> Result<Vec<(JsValue, Role)>, InputError> {
        (from..self.array.len() as usize)
            .map(|i| message_and_role(self.array, i))
            .collect()
    }

    fn read_all(&mut self) -> Result<Fresh<JsValue>, InputError> {
        let roles = crate::js::message_access::roles(self.array)?;
        let cleared = cleared_outputs(self.array, &roles)?;
        let all = roles
            .into_iter()
            .enumerate()
            .map(|(i, role)| Ok((message_at(self.array, i)?, role)))
            .collect::<Result<_, InputError>>()?;
        Ok((all, cleared))
    }

    fn convert(
        &mut self,
        message: &JsValue,
        index: usize,
        role: Role,
        cleared: &ClearedOutputs<Vec<u16>>,
    ) -> Result<bool, InputError> {
        let converted = convert_message(message, index, role, cleared)?;
        if let Some(output) = &converted {
            self.out.push(output);
        }
        Ok(converted.is_some())
    }

    fn rebase(
        &mut self,
        dropped: u32,
        cleared: &ClearedOutputs<Vec<u16>>,
    ) -> Result<bool, InputError> {
        let (message, role) = message_and_role(self.array, 0)?;
        let first = convert_message(&message, 0, role, cleared)?;
        rebase_out(
            self.out,
            dropped,
            first.as_ref().unwrap_or(&JsValue::UNDEFINED),
        );
        Ok(first.is_some())
    }

    fn truncate(&mut self, len: u32) {
        self.out.set_length(len);
    }
}

impl State {
    /// Where the background compaction stands.
    fn job(&self) -> background::Job {
        match &self.background {
            None => background::Job::Idle,
            Some(b) if b.result.is_some() => background::Job::Ready,
            Some(_) => background::Job::Running,
        }
    }

    /// `messages` brought in line with the index, and the view's fact
    /// cache kept for the tracked generation.
    fn sync_view(&mut self, messages: &JsValue) -> Result<JsArray, JsValue> {
        let array = self.tracked.sync(messages).map_err(input_error)?;
        let generation = self.tracked.tracker.generation();
        self.view.keep(generation, array.len() as usize);
        Ok(array)
    }

    /// The summary `original` as the model is sent it ([`summary_for_model`]).
    fn summary_for_model(&self, original: JsValue) -> JsValue {
        summary_for_model(self.history_offered, &self.noted, original)
    }

    /// `view` (a model view that starts with the last summary) with its
    /// summary as the model is sent it.
    fn noted_view(&self, view: &Array) {
        noted_view(self.history_offered, &self.noted, view);
    }

    /// The history tools are offered from now on: the views and
    /// conversions made before are made anew.
    fn offer_history(&mut self) {
        if !self.history_offered {
            self.history_offered = true;
            // The summary is sent with the note: it counts.
            self.tracked.tracker.append_to_summary(tool::SUMMARY_NOTE);
            self.view = Default::default();
            self.llm = LlmCache::default();
            self.last_context = None;
        }
    }

    /// The settings for `model` with the window `given` (else the model's,
    /// else `current`); refused settings change nothing.
    fn resolve(
        &mut self,
        model: ModelInfo,
        given: Option<f64>,
        current: Option<f64>,
    ) -> Result<(), JsValue> {
        let window = model
            .window(given, current)
            .map_err(js_sys::TypeError::new)?;
        (self.settings, self.clearing) = resolve_all(
            self.settings_input.as_ref(),
            model.key.as_ref(),
            Some(window),
        )
        .map_err(crate::settings::settings_error)?;
        if window != self.context_window || model.key != self.model_key {
            self.tracked.tracker.release_stall();
        }
        self.context_window = window;
        self.model_key = model.key;
        Ok(())
    }
}

/// Where the tracked array's last summary is and the pinned messages
/// re-sent after it (none before the first summary).
fn view_head(tracker: &Tracker) -> (Option<usize>, &[usize]) {
    match tracker.view_head() {
        Some((summary, resent)) => (Some(summary), resent),
        None => (None, &[]),
    }
}

/// The summary `original` as the model is sent it: ending with the history
/// note once the history tools are `offered` (the same copy, kept in
/// `noted`, each time for the same summary), else itself.
fn summary_for_model(
    offered: bool,
    noted: &RefCell<Option<(JsValue, JsValue)>>,
    original: JsValue,
) -> JsValue {
    if !offered {
        return original;
    }
    let mut noted = noted.borrow_mut();
    if let Some((o, d)) = &*noted {
        if js_sys::Object::is(o, &original) {
            return d.clone();
        }
    }
    let derived = noted_summary(&original, tool::SUMMARY_NOTE);
    *noted = Some((original, derived.clone()));
    derived
}

/// `view`, a model view that starts with the last summary, with that
/// summary as the model is sent it.
fn noted_view(offered: bool, noted: &RefCell<Option<(JsValue, JsValue)>>, view: &Array) {
    if offered {
        view.set(0, summary_for_model(offered, noted, view.get(0)));
    }
}

/// `result`, a compaction of `snapshot`, put into `live`, the snapshot
/// grown meanwhile (`core::compaction::background::Arrival`): a summary at
/// its cut with the messages added meanwhile counted among its kept ones
/// (a copy of it, `keptMessages` raised), a clearing marker after them.
/// `None` when `live` is not the snapshot grown (an edit or an undo
/// meanwhile: the result is dropped).
pub(crate) fn arrive(result: &JsValue, snapshot: &Array, live: &Array) -> Option<JsValue> {
    let (len, now) = (snapshot.length(), live.length());
    if !background::arrived(len as usize, now as usize, starts_with(snapshot, live)) {
        return None;
    }
    if now == len {
        return Some(result.clone());
    }
    let messages = prop(result, "messages").dyn_into::<Array>().ok()?;
    let summary = prop(result, "summary");
    let at = prop(result, "firstKeptIndex").as_f64().map(|i| i as u32);
    let summary_at =
        at.filter(|&i| summary.is_object() && js_sys::Object::is(&messages.get(i), &summary));
    let kept = summary_at.map(|i| messages.length().saturating_sub(i + 1) as usize);
    let out = js_sys::Object::assign(&js_sys::Object::new(), result.unchecked_ref());
    let set = |key: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(&out, &key.into(), value);
    };
    match background::Arrival::new(kept, (now - len) as usize) {
        background::Arrival::Summary { kept_messages } => {
            let copy = js_sys::Object::assign(&js_sys::Object::new(), summary.unchecked_ref());
            let _ = js_sys::Reflect::set(
                &copy,
                &"keptMessages".into(),
                &(kept_messages as f64).into(),
            );
            let merged = messages.concat(&live.slice(len, now));
            merged.set(summary_at?, copy.clone().into());
            set("summary", &copy);
            set("messages", &merged);
        }
        background::Arrival::MarkerLast => {
            let marker = prop(result, "marker");
            if !marker.is_object() {
                return None;
            }
            let merged = live.slice(0, now);
            merged.push(&marker);
            set("messages", &merged);
            set("markerIndex", &(now as f64).into());
        }
    }
    Some(out.into())
}

/// Whether `live` starts with `snapshot`'s messages, the same objects (one
/// crossing; a getter that throws is no match).
pub(crate) fn starts_with(snapshot: &Array, live: &Array) -> bool {
    live.length() >= snapshot.length() && same_run(snapshot, live).unwrap_or(false)
}

/// `rebaseCompaction(result, before, messages)`: see `arrive`; `undefined`
/// when `messages` is not `before` grown.
#[wasm_bindgen(js_name = rebaseCompaction, skip_typescript)]
pub fn rebase_compaction(
    result: JsValue,
    before: JsValue,
    messages: JsValue,
) -> Result<JsValue, JsValue> {
    let array = |value: &JsValue, name: &'static str| {
        JsArray::expect(value, || FieldPath::argument(name), "an array of messages")
            .map_err(input_error)
    };
    let (before, live) = (array(&before, "before")?, array(&messages, "messages")?);
    if !result.is_object() || !is_array(&prop(&result, "messages")).unwrap_or(false) {
        return Err(crate::js::errors::bad_input(
            "result must be what compact resolved to (an object with messages)",
            false,
        ));
    }
    Ok(arrive(&result, before.as_array(), live.as_array()).unwrap_or(JsValue::UNDEFINED))
}

/// Calls the app's `onEvent` with no borrow held; an exception in it is
/// the app's, and does not disturb the compactor.
pub(crate) fn emit(on_event: Option<Function>, event: JsValue) {
    if let Some(f) = on_event {
        let _ = f.call1(&JsValue::UNDEFINED, &event);
    }
}

// The events `onEvent` receives (`CompactorEvent`): laid out by the core
// (`core::compaction::shapes`); the values the app gave or gets (results,
// errors) are passed through as they are.

/// A `compaction_end` event (also `attach`'s recovery failure): the
/// result's `tier`, when it has one, is named.
pub(crate) fn compaction_end_event(
    reason: &'static str,
    result: JsValue,
    aborted: bool,
    will_retry: bool,
    error_message: Option<&str>,
    quiet_until: Option<f64>,
) -> JsValue {
    let tier = prop(&result, "tier").as_string();
    shape(shapes::compaction_end_event(
        reason,
        result,
        aborted,
        will_retry,
        error_message,
        tier,
        quiet_until,
    ))
}

#[wasm_bindgen]
impl Compactor {
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Compactor, JsValue> {
        let o = read_options(&options, |options, r| {
            let settings = |v: Opt| crate::settings::settings_json(&v.0);
            let model = |v: Opt| model_from_js(&v.0, "options.model");
            options::compactor_options(options, r, settings, model)
        })
        .map_err(input_error)?;
        let one_request = (o.summarize.as_ref()).is_some_and(|f| prop(f, "oneRequest").is_truthy());
        let mut state = State {
            summarize: o.summarize,
            fallback_extractive: o.fallback_extractive,
            before_compact: o.before_compact,
            summarizer_window: o.summarizer_window,
            timeout_ms: o.timeout_ms,
            cache_friendly: o.cache_friendly,
            one_request,
            running: None,
            context_window: 0.0,
            model_key: None,
            settings_input: o.settings.map_err(crate::settings::settings_error)?,
            settings: CompactionSettings::default(),
            clearing: ClearingSettings::default(),
            on_event: o.on_event,
            tracked: Tracked {
                known: Array::new(),
                tracker: Tracker::new(o.estimator),
                synced: None,
            },
            last_context: None,
            llm: LlmCache::default(),
            view: Default::default(),
            attached: None,
            background: None,
            waiting: 0,
            history: Default::default(),
            history_offered: false,
            noted: RefCell::new(None),
        };
        state.resolve(o.model, o.context_window, None)?;
        Ok(Compactor {
            state: Rc::new(RefCell::new(state)),
            hooks: RefCell::new(None),
        })
    }

    #[wasm_bindgen(getter)]
    pub fn settings(&self) -> Result<JsValue, JsValue> {
        let s = self.state.try_borrow().map_err(|_| busy())?;
        Ok(shape(shapes::settings(&s.settings)))
    }

    #[wasm_bindgen(getter, js_name = contextWindow)]
    pub fn context_window(&self) -> Result<f64, JsValue> {
        Ok(self.state.try_borrow().map_err(|_| busy())?.context_window)
    }

    #[wasm_bindgen(js_name = contextTokens)]
    pub fn context_tokens(&self, messages: JsValue) -> Result<f64, JsValue> {
        Ok(self.tokens(&messages)?.tokens)
    }

    #[wasm_bindgen(js_name = contextTokenEstimate)]
    pub fn context_token_estimate(&self, messages: JsValue) -> Result<JsValue, JsValue> {
        Ok(context_tokens_object(&self.tokens(&messages)?))
    }

    #[wasm_bindgen(js_name = needsCompaction)]
    pub fn needs_compaction(&self, messages: JsValue) -> Result<bool, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let s = &mut *s;
        let array = s.tracked.sync(&messages).map_err(input_error)?;
        let mut source = s.tracked.source(&array);
        let tracker = &mut s.tracked.tracker;
        tracker
            .threshold_exceeded(&s.settings, s.context_window, &mut source)
            .map_err(input_error)
    }

    #[wasm_bindgen(js_name = setModel)]
    pub fn set_model(&self, model: JsValue, context_window: JsValue) -> Result<(), JsValue> {
        let model = model_from_js(&model, "model").map_err(input_error)?;
        self.switch(Some(model), &context_window)
    }

    /// The same model with another window (`contextWindow` required).
    #[wasm_bindgen(js_name = setContextWindow)]
    pub fn set_context_window(&self, context_window: JsValue) -> Result<(), JsValue> {
        self.switch(None, &context_window)
    }

    /// Whether a compaction is running (between `compaction_start` and
    /// `compaction_end`).
    #[wasm_bindgen(getter, js_name = isCompacting)]
    pub fn is_compacting(&self) -> bool {
        self.state
            .try_borrow()
            .map(|s| s.running.is_some())
            .unwrap_or(true)
    }

    /// Whether the running compaction is one in the background
    /// (`compactInBackground`) that nobody waits for: no request waits
    /// for its summary (`background::unattended`).
    #[wasm_bindgen(getter, js_name = isCompactingInBackground)]
    pub fn is_compacting_in_background(&self) -> bool {
        (self.state.try_borrow())
            .is_ok_and(|s| background::unattended(s.running.is_some(), s.job(), s.waiting))
    }

    /// Cancels the running compaction, if any: it ends with `aborted: true`
    /// and changes nothing.
    pub fn abort(&self) {
        let controller = self.state.try_borrow().ok().and_then(|s| s.running.clone());
        if let Some(c) = controller {
            abort_controller(&c);
        }
    }

    /// Compacts `messages`: resolves to `{ messages, summary, tokensBefore,
    /// tokensAfter, firstKeptIndex }`, or rejects and changes nothing.
    pub fn compact(&self, messages: JsValue, options: JsValue) -> Promise {
        self.start(messages, options, false)
    }

    /// Starts a threshold compaction of a copy of `messages` in the
    /// background and returns at once (the promise is `compact`'s). Its
    /// summary waits in the compactor, from its `compaction_end` on, until
    /// `takeBackground` inserts it into the messages of that moment.
    #[wasm_bindgen(js_name = compactInBackground)]
    pub fn compact_in_background(&self, messages: JsValue, options: JsValue) -> Promise {
        // Not an array (or a revoked proxy): the compaction fails at it.
        let Ok(Some(array)) = JsArray::new(&messages, || FieldPath::argument("messages")) else {
            return self.compact(messages, options);
        };
        let array = array.as_array();
        // A bad message is found before the copy (of a sparse array's whole
        // length): the compaction of the array itself then fails at it.
        let checked = match self.state.try_borrow_mut() {
            Ok(mut s) => s.tracked.sync(&messages).is_ok(),
            Err(_) => true,
        };
        if !checked {
            return self.start(messages.clone(), options, true);
        }
        let snapshot = array.slice(0, array.length());
        let idle = self.state.try_borrow().is_ok_and(|s| s.running.is_none());
        let promise = self.start(snapshot.clone().into(), options, true);
        let Ok(mut s) = self.state.try_borrow_mut() else {
            return promise;
        };
        // Only a start that claimed the compactor is the background job: one
        // refused (another compaction runs, bad options) leaves the job under
        // way, or the summary ready, as it is. Its end records the result
        // (`run_compact`).
        if let (true, Some(controller)) = (idle, s.running.clone()) {
            s.background = Some(BackgroundJob {
                snapshot,
                promise: promise.clone(),
                controller,
                cancelled: Default::default(),
                result: None,
            });
        }
        promise
    }

    /// What to do next for `messages` with compaction in the background at
    /// `fraction` of the threshold: `"nothing"`, `"start"`
    /// (`compactInBackground`), `"insert"` (`takeBackground`), `"wait"`
    /// (`waitForBackground`, then `takeBackground`) or `"compact"` (a
    /// threshold compaction now).
    #[wasm_bindgen(js_name = backgroundNext)]
    pub fn background_next(&self, messages: JsValue, fraction: JsValue) -> Result<String, JsValue> {
        let fraction =
            crate::js::values::optional_number(&fraction, || FieldPath::argument("fraction"))
                .map_err(input_error)?;
        let fraction = background::fraction(fraction, || FieldPath::argument("fraction"))
            .map_err(input_error)?;
        Ok(self.next(&messages, fraction)?.1.name().into())
    }

    /// Before a request or after an answer, what the context needs
    /// (`core::compaction::background::Checkpoint`): a background summary
    /// that is ready goes in, or one under way is awaited when the context
    /// is over the threshold; a compaction starts in the background past
    /// `backgroundAt`; over the threshold with none, a threshold compaction
    /// runs now. Resolves to the result that changed the messages, else
    /// `undefined` (a failed compaction was reported by `compaction_end`).
    #[wasm_bindgen(js_name = compactIfNeeded)]
    pub fn compact_if_needed(&self, messages: JsValue, options: JsValue) -> Promise {
        let o = match read_options(&options, options::if_needed_options) {
            Ok(o) => o,
            Err(e) => return Promise::reject(&input_error(e)),
        };
        let ended = o.on_background_end.map(|f| {
            Box::new(move || {
                let _ = f.call0(&JsValue::UNDEFINED);
            }) as Box<dyn FnOnce()>
        });
        let how = Checkpoint {
            fraction: o.background_at,
            conversation: o.conversation.map(|c| c.0).unwrap_or_default(),
            overflow: o.overflow,
            course: background::Checkpoint::new(o.overflow.is_none(), true),
            stop: None,
            background_signal: None,
        };
        crate::js::values::spawn(self.shared().checkpoint(messages, how, ended))
    }

    /// The background compaction's result for `messages`, its summary
    /// inserted where the compaction chose and the messages added since
    /// after it; `undefined` when none is ready, or when `messages` are no
    /// longer the summarized ones grown (then the summary is dropped).
    /// `messages` that are no array are a `TypeError`, and a summary that
    /// is ready stays.
    #[wasm_bindgen(js_name = takeBackground)]
    pub fn take_background(&self, messages: JsValue) -> Result<JsValue, JsValue> {
        let live = messages_array(&messages).map_err(input_error)?;
        let Ok(mut s) = self.state.try_borrow_mut() else {
            return Ok(JsValue::UNDEFINED);
        };
        if s.background.as_ref().is_none_or(|b| b.result.is_none()) {
            return Ok(JsValue::UNDEFINED);
        }
        let job = s.background.take().unwrap();
        drop(s);
        let result = job.result.unwrap_or_default();
        Ok(arrive(&result, &job.snapshot, live.as_array()).unwrap_or(JsValue::UNDEFINED))
    }

    /// Resolves when the background compaction has ended (at once when none
    /// runs); never rejects.
    #[wasm_bindgen(js_name = waitForBackground)]
    pub fn wait_for_background(&self) -> Promise {
        let running = self
            .state
            .try_borrow()
            .ok()
            .and_then(|s| s.background.as_ref().map(|b| b.promise.clone()));
        crate::js::values::spawn(async move {
            if let Some(p) = running {
                let _ = wasm_bindgen_futures::JsFuture::from(p).await;
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The running start of `compact` and `compactInBackground`.
    fn start(&self, messages: JsValue, options: JsValue, background: bool) -> Promise {
        // Options are checked and the compactor claimed right away, so
        // `isCompacting` is true as soon as `compact` returns.
        let read = match background {
            true => options::background_options,
            false => options::compact_options,
        };
        let claimed = read_options(&options, read)
            .and_then(|opts| {
                let conversation = match &opts.conversation {
                    Some(c) => Some(read_fields("options.conversation", &c.0, |_, r| {
                        options::conversation(r)
                    })?),
                    None => None,
                };
                Ok((opts, conversation))
            })
            .map_err(input_error)
            .and_then(|(opts, conversation)| {
                let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
                if s.running.is_some() {
                    return Err(js_sys::Error::new(
                        "a compaction is already running: wait for it to end, or abort() it",
                    )
                    .into());
                }
                let controller = new_abort_controller();
                s.running = Some(controller.clone());
                Ok((opts, conversation, controller))
            });
        match claimed {
            Ok((opts, conversation, controller)) => {
                let state = self.state.clone();
                crate::js::values::spawn(run_compact(
                    state,
                    messages,
                    opts,
                    conversation,
                    controller,
                    background,
                ))
            }
            Err(e) => Promise::reject(&e),
        }
    }

    /// A `branchSummary` message for messages the conversation leaves
    /// (pi's branch summary: newest first within contextWindow −
    /// reserveTokens, tool results skipped, file lists carried).
    #[wasm_bindgen(js_name = summarizeBranch)]
    pub fn summarize_branch(&self, messages: JsValue, options: JsValue) -> Promise {
        let job = match self.state.try_borrow() {
            Ok(s) => crate::branch::BranchJob {
                summarize: s.summarize.clone(),
                fallback_extractive: s.fallback_extractive,
                timeout_ms: s.timeout_ms,
                budget_tokens: budget_tokens(s.context_window, &s.settings),
            },
            Err(_) => return Promise::reject(&busy()),
        };
        crate::js::values::spawn(crate::branch::summarize_branch(job, messages, options))
    }

    /// The same hooks object on every call.
    #[wasm_bindgen(js_name = agentHooks)]
    pub fn agent_hooks(&self) -> JsValue {
        if let Some(h) = self.hooks.borrow().as_ref() {
            return h.clone();
        }
        let state = self.state.clone();
        let transform = Closure::<dyn Fn(JsValue, JsValue) -> Promise>::new(
            move |messages: JsValue, signal: JsValue| {
                let attached = state.try_borrow().ok().and_then(|s| s.attached.clone());
                if let Some(promise) = attached.and_then(|a| a.transform(&messages, &signal)) {
                    return promise;
                }
                let result = context_of(&state, &messages);
                hook_answer(&state, "transformContext", result, messages)
            },
        );
        let state = self.state.clone();
        let convert = Closure::<dyn Fn(JsValue) -> Promise>::new(move |messages: JsValue| {
            let result = match state.try_borrow_mut() {
                Ok(mut s) => {
                    let s = &mut *s;
                    let generation = s.tracked.tracker.generation();
                    let last_context = &s.last_context;
                    let is_context = |array: &JsArray| {
                        last_context.as_ref().is_some_and(|(c, len, g)| {
                            *c == messages && *g == generation && array.len() == *len
                        })
                    };
                    let result = s.llm.convert(&messages, is_context, generation);
                    result.map(JsValue::from).map_err(input_error)
                }
                Err(_) => Err(busy()),
            };
            hook_answer(&state, "convertToLlm", result, messages)
        });
        let hooks = object(&[
            ("transformContext", transform.into_js_value()),
            ("convertToLlm", convert.into_js_value()),
        ]);
        *self.hooks.borrow_mut() = Some(hooks.clone());
        hooks
    }
}

/// What a hook resolves to: its result, or, when it could not do its work
/// (a `hook_error` event), [`unchanged`] input.
fn hook_answer(
    state: &Rc<RefCell<State>>,
    hook: &'static str,
    result: Result<JsValue, JsValue>,
    messages: JsValue,
) -> Promise {
    Promise::resolve(&result.unwrap_or_else(|error| hook_failed(state, hook, error, messages)))
}

/// A hook that could not do its work: a `hook_error` event, and
/// [`unchanged`] input as its answer.
fn hook_failed(
    state: &RefCell<State>,
    hook: &'static str,
    error: JsValue,
    messages: JsValue,
) -> JsValue {
    let on_event = state.try_borrow().ok().and_then(|s| s.on_event.clone());
    emit(on_event, shape(shapes::hook_error_event(hook, error)));
    unchanged(messages)
}

/// What a hook gives back when it cannot do its work: its input, unless
/// resolving a promise with it would run code of its own (a `then` that
/// throws when read, or a thenable): then an empty array, so that the hook
/// never rejects nor hangs.
fn unchanged(messages: JsValue) -> JsValue {
    let thenable = messages.is_object()
        && js_sys::Reflect::get(&messages, &"then".into()).map_or(true, |t| t.is_function());
    if thenable {
        Array::new().into()
    } else {
        messages
    }
}

/// The LLM context of `messages`: the caller's array, or a slice of it from
/// the last summary on.
fn context_of(state: &Rc<RefCell<State>>, messages: &JsValue) -> Result<JsValue, JsValue> {
    let mut s = state.try_borrow_mut().map_err(|_| busy())?;
    let array = s.tracked.sync(messages).map_err(input_error)?;
    let tracker = &s.tracked.tracker;
    let context: JsValue = match tracker.view_head() {
        None => messages.clone(),
        // The summary, the pinned messages before it, then the rest.
        Some((start, resent)) => {
            let view = crate::pinned::view(&array, start, resent).map_err(input_error)?;
            s.noted_view(&view);
            view.into()
        }
    };
    let len = tracker.view_len(array.len() as usize) as u32;
    s.last_context = Some((context.clone(), len, tracker.generation()));
    Ok(context)
}

/// What `attach` uses of the compactor (a second handle on the same state).
impl Compactor {
    /// The context tokens of `messages`, every estimate that counts
    /// measured.
    fn tokens(&self, messages: &JsValue) -> Result<ContextTokens, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let array = s.tracked.sync(messages).map_err(input_error)?;
        let mut source = s.tracked.source(&array);
        s.tracked
            .tracker
            .context_tokens(&mut source)
            .map_err(input_error)
    }

    /// `model` (none: the current one) with the window given, else the
    /// model's, else (with a model) the current one.
    fn switch(&self, model: Option<ModelInfo>, context_window: &JsValue) -> Result<(), JsValue> {
        let window = crate::js::values::optional_number(context_window, || {
            FieldPath::argument("contextWindow")
        })
        .map_err(input_error)?;
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let current = model.is_some().then_some(s.context_window);
        let model = model.unwrap_or_else(|| ModelInfo {
            key: s.model_key.clone(),
            context_window: None,
        });
        s.resolve(model, window, current)
    }

    pub(super) fn shared(&self) -> Compactor {
        Compactor {
            state: self.state.clone(),
            hooks: RefCell::new(self.hooks.borrow().clone()),
        }
    }

    pub(super) fn attachment(&self) -> Option<Rc<crate::agent_flow::Attachment>> {
        self.state
            .try_borrow()
            .ok()
            .and_then(|s| s.attached.clone())
    }

    pub(super) fn set_attachment(&self, attachment: Option<Rc<crate::agent_flow::Attachment>>) {
        if let Ok(mut s) = self.state.try_borrow_mut() {
            s.attached = attachment;
        }
    }

    pub(super) fn on_event(&self) -> Option<Function> {
        self.state
            .try_borrow()
            .ok()
            .and_then(|s| s.on_event.clone())
    }

    pub(super) fn enabled(&self) -> bool {
        self.state.try_borrow().is_ok_and(|s| s.settings.enabled)
    }

    pub(super) fn context_of(&self, messages: &JsValue) -> Result<JsValue, JsValue> {
        context_of(&self.state, messages)
    }

    /// What `transformContext` answers when `context` failed: the hook
    /// never rejects ([`hook_failed`]).
    pub(super) fn transform_answer(
        &self,
        context: Result<JsValue, JsValue>,
        messages: &JsValue,
    ) -> JsValue {
        context
            .unwrap_or_else(|e| hook_failed(&self.state, "transformContext", e, messages.clone()))
    }

    /// The last summary of `messages` and the pinned messages re-sent after
    /// it (the start of its model view), from the index.
    pub(super) fn context_head(&self, messages: &JsValue) -> Option<Array> {
        let mut s = self.state.try_borrow_mut().ok()?;
        let array = s.tracked.sync(messages).ok()?;
        let (start, resent) = s.tracked.tracker.view_head()?;
        let head = crate::pinned::view(&array, start, resent).ok()?;
        s.noted_view(&head);
        head.set_length(1 + resent.len() as u32);
        Some(head)
    }

    /// `messages` brought in line with the index, then `f` with the array,
    /// where its last summary is, the pinned messages re-sent after it and
    /// the view's fact cache (kept for the tracked generation).
    pub(super) fn with_view<R>(
        &self,
        messages: &JsValue,
        f: impl FnOnce(&JsArray, Option<usize>, &[usize], &mut crate::conversation::ViewFacts) -> R,
    ) -> Result<R, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let s = &mut *s;
        let array = s.sync_view(messages)?;
        let (summary, resent) = view_head(&s.tracked.tracker);
        let head = match summary {
            Some(i) if s.history_offered => {
                Some(s.summary_for_model(message_at(&array, i).map_err(input_error)?))
            }
            _ => None,
        };
        s.view.head = head;
        Ok(f(&array, summary, resent, &mut s.view))
    }

    /// `f` with `messages` (brought in line), the places of those the
    /// history holds and the history index.
    pub(super) fn with_history<R>(
        &self,
        messages: &JsValue,
        f: impl FnOnce(&JsArray, &[usize], &mut crate::history::Books) -> R,
    ) -> Result<R, JsValue> {
        let (mut s, array, hidden) = history_view(&self.state, messages)?;
        Ok(f(&array, &hidden, &mut s.history))
    }

    /// The history tools are offered from now on (`historyTools`).
    pub(super) fn offer_history(&self) -> Result<(), JsValue> {
        self.state
            .try_borrow_mut()
            .map_err(|_| busy())?
            .offer_history();
        Ok(())
    }

    /// Where the background compaction stands, and [`background::next`]
    /// for `messages` with its start at `fraction` of the threshold (none:
    /// never).
    pub(super) fn next(
        &self,
        messages: &JsValue,
        fraction: Option<f64>,
    ) -> Result<(background::Job, background::Next), JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let s = &mut *s;
        let job = s.job();
        let array = s.tracked.sync(messages).map_err(input_error)?;
        let mut source = s.tracked.source(&array);
        let tracker = &mut s.tracked.tracker;
        let over = tracker
            .threshold_exceeded(&s.settings, s.context_window, &mut source)
            .map_err(input_error)?;
        let due = match fraction {
            Some(f) if !over && s.running.is_none() => tracker
                .exceeds(&s.settings, s.context_window, f, &mut source)
                .map_err(input_error)?,
            _ => false,
        };
        Ok((job, background::next(job, over, due, s.running.is_some())))
    }

    /// Whether a background compaction runs or has a summary to insert.
    pub(super) fn has_background(&self) -> bool {
        self.state
            .try_borrow()
            .is_ok_and(|s| s.background.is_some())
    }

    /// Where the last `compactionSummary` in `messages` is.
    pub(super) fn last_summary_index(&self, messages: &JsValue) -> Option<usize> {
        let mut s = self.state.try_borrow_mut().ok()?;
        s.tracked.sync(messages).ok()?;
        s.tracked.tracker.index().last_summary()
    }
}

fn abort_controller(controller: &JsValue) {
    if let Some(f) = prop(controller, "abort").dyn_ref::<Function>() {
        let _ = f.call0(controller);
    }
}

type CompactOptions = options::CompactOptions<Opt>;

/// Reports `compaction_end` as the core words it.
fn emit_end(
    on_event: Option<Function>,
    reason: Reason,
    result: JsValue,
    will_retry: bool,
    ending: Ending<'_, JsValue>,
    quiet_until: Option<f64>,
) -> Option<String> {
    let end = end_event(reason, will_retry, ending);
    emit(
        on_event,
        compaction_end_event(
            reason.name(),
            result,
            end.aborted,
            end.will_retry,
            end.error_message.as_deref(),
            quiet_until,
        ),
    );
    end.error_message
}

/// The state, `messages` (brought in line) and the places of those the
/// history holds (`history::lookup::hidden`: what the last summary left
/// out and the tool outputs sent as placeholders): the part of
/// [`Compactor::with_history`] that is the same for every use.
fn history_view<'s>(
    state: &'s RefCell<State>,
    messages: &JsValue,
) -> Result<(RefMut<'s, State>, JsArray, Vec<usize>), JsValue> {
    let mut state = state.try_borrow_mut().map_err(|_| busy())?;
    let s = &mut *state;
    let array = s.sync_view(messages)?;
    let (summary, resent) = view_head(&s.tracked.tracker);
    let steps = s.view.steps(&array, summary, resent).map_err(input_error)?;
    let hidden = agent_compaction_core::history::lookup::hidden(
        array.len() as usize,
        summary,
        resent,
        &steps,
    );
    Ok((state, array, hidden))
}

/// Once the history tools are offered, a compaction indexes the messages
/// its summary hides, so that the model's first search does not wait for
/// them. A failure here is the next search's to report.
fn index_hidden(state: &RefCell<State>, messages: &JsValue) {
    if !state.try_borrow().is_ok_and(|s| s.history_offered) {
        return;
    }
    if let Ok((mut s, array, hidden)) = history_view(state, messages) {
        let _ = s.history.sync(&array, &hidden);
    }
}

/// The whole compaction. Borrows of the state are short and never held
/// across an await, so event handlers and callbacks may call back into the
/// compactor.
async fn run_compact(
    state: Rc<RefCell<State>>,
    messages: JsValue,
    opts: CompactOptions,
    conversation: Option<Conversation<Opt>>,
    controller: JsValue,
    background: bool,
) -> Result<JsValue, JsValue> {
    let reason = opts.reason;
    let on_event = state.try_borrow().ok().and_then(|s| s.on_event.clone());
    let signal = opts.signal.clone().map(|s| s.0).unwrap_or_default();
    let unlink = link_abort(&signal, &controller);
    emit(
        on_event.clone(),
        shape(shapes::compaction_start_event(reason.name(), background)),
    );
    attached_state_changed(&state);
    let rejected = RefCell::new(None);
    let outcome = compact_job(
        &state,
        &messages,
        &opts,
        conversation,
        &controller,
        background,
        &rejected,
    )
    .await;
    let _ = unlink.call0(&JsValue::UNDEFINED);
    if let Ok(mut s) = state.try_borrow_mut() {
        s.running = None;
        // A checkpoint waiting for it learns how it ended.
        let cancelled = matches!(outcome, Err(Failure::Aborted(_) | Failure::Cancelled));
        let job = (s.background.as_mut()).filter(|b| background && b.controller == controller);
        if let Some(job) = job {
            job.cancelled.set(cancelled);
            // Ready as it ends (`compaction_end`'s handlers may take it);
            // failed or nothing to do: as if none had started.
            match &outcome {
                Ok(Some(result)) => job.result = Some(result.clone()),
                _ => s.background = None,
            }
        }
    }
    if let (Ok(Some(result)), false) = (&outcome, background) {
        index_hidden(&state, &prop(result, "messages"));
    }
    let (result, ending) = match &outcome {
        Ok(Some(result)) => (result.clone(), Ending::Compacted),
        Ok(None) => (JsValue::UNDEFINED, Ending::NothingToDo),
        Err(failure) => {
            // Cancel whatever request is still running.
            abort_controller(&controller);
            (JsValue::UNDEFINED, Ending::Failed(failure))
        }
    };
    let quiet_until = stalled(&state, reason, &result, &ending);
    let message = emit_end(
        on_event,
        reason,
        result,
        opts.will_retry,
        ending,
        quiet_until,
    );
    attached_state_changed(&state);
    match outcome {
        Ok(result) => Ok(result.unwrap_or(JsValue::UNDEFINED)),
        Err(Failure::Aborted(e)) => Err(e),
        Err(Failure::Cancelled) => Err(js_sys::Error::new(CANCELLED).into()),
        Err(Failure::Failed(_)) => {
            // The summarizer's own error (its `status`, a network
            // failure's `cause`) as the cause, when it rejected.
            let error = js_sys::Error::new(&message.unwrap_or_default());
            if let Some(cause) = rejected.take() {
                error.set_cause(&cause);
            }
            Err(error.into())
        }
        // The event's text (the reason's prefix, then the index and field).
        Err(Failure::Input(e)) => Err(bad_input(&message.unwrap_or_default(), e.is_range())),
    }
}

/// `attach`'s `onStateChange` hears of every compaction's start and end,
/// whoever started it (the app's own `compact` too).
fn attached_state_changed(state: &RefCell<State>) {
    let attached = state.try_borrow().ok().and_then(|s| s.attached.clone());
    if let Some(a) = attached {
        a.state_changed();
    }
}

/// Tells the stall rule how a compaction ended; `Some`: the threshold is
/// quiet until the context exceeds that many tokens.
fn stalled(
    state: &Rc<RefCell<State>>,
    reason: Reason,
    result: &JsValue,
    ending: &Ending<'_, JsValue>,
) -> Option<f64> {
    let mut s = state.try_borrow_mut().ok()?;
    let tracker = &mut s.tracked.tracker;
    let number = |key| prop(result, key).as_f64().unwrap_or_default();
    let tokens = (number("tokensBefore"), number("tokensAfter"));
    // The context as the compaction measured it.
    let now = tracker.index().context_tokens().tokens;
    tracker.compaction_ended(reason, Ended::of(ending, tokens, now))
}

async fn compact_job(
    state: &Rc<RefCell<State>>,
    messages: &JsValue,
    opts: &CompactOptions,
    conversation: Option<Conversation<Opt>>,
    controller: &JsValue,
    background: bool,
    rejected: &RefCell<Option<JsValue>>,
) -> Result<Option<JsValue>, JsFailure> {
    check_not_aborted(controller)?;
    let input = Failure::Input;
    // The cheap tier first (threshold compactions): clearing old tool
    // output, when that alone brings the context to the threshold. The tier
    // reads the messages with no borrow held, and the index is synced again
    // after it.
    let tier = {
        let mut s = state
            .try_borrow_mut()
            .map_err(|_| Failure::Failed(BUSY.into()))?;
        let s = &mut *s;
        if tries_clearing(opts.reason, &s.clearing) {
            let array = s.tracked.sync(messages).map_err(input)?;
            let mut source = s.tracked.source(&array);
            let tier = s
                .tracked
                .tracker
                .clearing_tier(&s.settings, s.context_window, &s.clearing, &mut source)
                .map_err(input)?;
            Some((array, tier))
        } else {
            None
        }
    };
    if let Some((array, tier)) = tier {
        let cleared = crate::clearing::clear_tier(&array, &tier).map_err(input)?;
        if let Some(result) = cleared {
            return Ok(Some(result));
        }
        check_not_aborted(controller)?;
    }
    // Prepare, from the index (only new messages are read).
    let job = {
        let mut s = state
            .try_borrow_mut()
            .map_err(|_| Failure::Failed(BUSY.into()))?;
        let s = &mut *s;
        let array = s.tracked.sync(messages).map_err(input)?;
        let (offered, noted) = (s.history_offered, &s.noted);
        let mut source = s.tracked.source(&array);
        let tracker = &mut s.tracked.tracker;
        // The kept part is measured in the provider's tokens: with the
        // calibrated estimate scaled by the ratio, so is what is kept.
        let ratio = tracker.fill_context(&mut source).map_err(input)?;
        let facts = tracker.index().facts().to_vec();
        let settings = s.settings;
        let mut keep = settings.keep_recent_tokens as f64;
        if background {
            let threshold = threshold(&settings, s.context_window);
            let context = tracker.index().context_tokens().tokens;
            keep = background::keep_recent(keep, threshold, context);
        }
        let keep = keep / ratio;
        let prepared = prepare(
            &array,
            &facts,
            keep,
            tracker.estimator(),
            s.one_request,
            opts.after_failed_attempt(),
        )
        .map_err(input)?;
        // What it summarizes, checked as the summarizer is shown it, so that
        // a bad field names the caller's index (the flow reads slices).
        if let Some(p) = &prepared {
            let plan = &p.plan;
            let shown: Vec<usize> = plan
                .history
                .clone()
                .chain(plan.turn_prefix.clone())
                .collect();
            crate::branch::conversation_of(&array, &facts, &shown).map_err(input)?;
        }
        let Some(mut prepared) = prepared else {
            // The context's messages as the preparation measured them.
            let start = tracker.index().context_start().min(facts.len());
            let context = facts[start..].iter().map(|f| f64::from(f.tokens)).sum();
            let last_summary = tracker.ends_with_summary();
            return match nothing_to_do(opts.reason, last_summary, context, keep) {
                NothingToDo::Resolve => Ok(None),
                NothingToDo::Reject(message) => Err(Failure::Failed(message.into())),
            };
        };
        // What the model is sent now, as `contextTokens` counts it (the
        // pinned messages re-sent, what clearing freed), and what the kept
        // outputs a kept marker clears will be sent below their estimates.
        prepared.plan.tokens_before = tracker.context_tokens(&mut source).map_err(input)?.tokens;
        let kept_cleared = tracker
            .kept_cleared_after_cut(prepared.plan.first_kept_index, &mut source)
            .map_err(input)?;
        // The pinned messages re-sent after the new summary count after.
        let survivors = tracker
            .survivors(
                prepared.plan.first_kept_index,
                settings.keep_recent_tokens,
                &mut source,
                |i| crate::pinned::request_text(&array, i),
            )
            .map_err(input)?;

        let view_tokens = tracker.index().context_tokens().tokens;
        let window = s.summarizer_window.unwrap_or(s.context_window as u64);
        let room = prefix_room(
            s.cache_friendly,
            conversation.is_some(),
            opts.reason,
            view_tokens.ceil() as u64,
            settings.reserve_tokens,
            window,
        );
        let prefix = conversation.zip(room).and_then(|(conversation, room)| {
            let (summary, resent) = view_head(tracker);
            let bounds = (prepared.plan).view_bounds(array.len() as usize, summary, resent)?;
            let view = match summary {
                Some(summary) => {
                    let view = crate::pinned::view(&array, summary, resent).ok()?;
                    noted_view(offered, noted, &view);
                    view
                }
                None => array.as_array().clone(),
            };
            crate::compaction::prefix_job(&view, bounds, room, conversation)
        });
        let covered = s.one_request.then(|| {
            let hidden = &prepared.messages_to_summarize;
            match prepared.plan.previous_summary_index {
                Some(i) => Array::of1(&array.as_array().get(i as u32)).concat(hidden),
                None => hidden.clone(),
            }
            .into()
        });
        Job {
            survivors,
            reason: opts.reason,
            custom_instructions: opts.custom_instructions.clone(),
            will_retry: opts.will_retry,
            summarize: s.summarize.clone(),
            fallback_extractive: s.fallback_extractive,
            before_compact: s.before_compact.clone(),
            summarizer_window: s.summarizer_window,
            timeout_ms: s.timeout_ms,
            settings,
            controller: controller.clone(),
            messages: array,
            facts,
            kept_cleared,
            summary_note: tracker.summary_note(),
            estimator: tracker.estimator(),
            ratio,
            rejected: RefCell::new(None),
            covered,
            prepared,
            prefix,
        }
    };
    let out = crate::compaction::run(&job, messages).await.map(Some);
    if out.is_err() {
        rejected.replace(job.rejected.take());
    }
    out
}

/// How a checkpoint goes (`compactIfNeeded`'s options, or the adapter's).
pub(crate) struct Checkpoint {
    /// The background start, as a fraction of the threshold.
    pub fraction: Option<f64>,
    /// `compact`'s `conversation`.
    pub conversation: JsValue,
    /// After an overflow: `Some(will_retry)`.
    pub overflow: Option<bool>,
    pub course: background::Checkpoint,
    /// The signal of the one the checkpoint runs for (`attach`: the
    /// agent's run): it cancels the compaction the checkpoint runs now and
    /// ends its wait for one in the background.
    pub stop: Option<JsValue>,
    /// The signal that cancels a compaction it starts in the background.
    pub background_signal: Option<JsValue>,
}

/// Whether `signal` (an `AbortSignal`, or none) is aborted.
fn is_aborted(signal: &Option<JsValue>) -> bool {
    signal
        .as_ref()
        .is_some_and(|s| prop(s, "aborted").is_truthy())
}

impl Compactor {
    /// One checkpoint (`compactIfNeeded`, `attach`'s, the AI SDK
    /// conversation's): the core's [`background::Checkpoint`] carried out
    /// on `messages`. The result that changed them, else `undefined`.
    /// `ended` is called when a compaction this started in the background
    /// has ended.
    pub(crate) async fn checkpoint(
        self,
        messages: JsValue,
        mut how: Checkpoint,
        ended: Option<Box<dyn FnOnce()>>,
    ) -> Result<JsValue, JsValue> {
        let reason = if how.overflow.is_some() {
            "overflow"
        } else {
            "threshold"
        };
        let options = |signal: &Option<JsValue>| {
            object(&[
                ("reason", reason.into()),
                ("willRetry", how.overflow.unwrap_or(false).into()),
                ("conversation", how.conversation.clone()),
                ("signal", signal.clone().unwrap_or_default()),
            ])
        };
        if is_aborted(&how.stop) {
            how.course.stop();
        }
        loop {
            // The messages are checked (and indexed) either way.
            let (job, next) = self.next(&messages, how.fraction)?;
            let next = match how.overflow {
                Some(_) => background::Next::after_overflow(job),
                None => next,
            };
            match how.course.step(next) {
                background::Act::Done => return Ok(JsValue::UNDEFINED),
                background::Act::Start => {
                    let options = options(&how.background_signal);
                    let running = self.compact_in_background(messages, options);
                    let waited = self.wait_for_background();
                    crate::js::values::spawn_detached(async move {
                        let _ = wasm_bindgen_futures::JsFuture::from(running).await;
                        let _ = wasm_bindgen_futures::JsFuture::from(waited).await;
                        if let Some(ended) = ended {
                            ended();
                        }
                    });
                    return Ok(JsValue::UNDEFINED);
                }
                background::Act::Take { wait } => {
                    if wait && !how.course.waited(self.wait_unless(&how.stop).await) {
                        continue;
                    }
                    let taken = self.take_background(messages.clone()).unwrap_or_default();
                    if taken.is_object() {
                        return Ok(taken);
                    }
                }
                background::Act::Compact => {
                    // A failure was reported (`compaction_end`) and changes nothing.
                    let options = options(&how.stop);
                    let result =
                        wasm_bindgen_futures::JsFuture::from(self.compact(messages, options)).await;
                    return Ok(result.ok().filter(JsValue::is_object).unwrap_or_default());
                }
            }
        }
    }

    /// Waits for the background compaction to end, unless `stop` aborts
    /// first. Meanwhile the compaction is one a request waits for
    /// (`isCompactingInBackground` false, `attach`'s `isCompacting` true).
    async fn wait_unless(&self, stop: &Option<JsValue>) -> background::Waited {
        let (counted, cancelled) = match self.state.try_borrow_mut() {
            Ok(mut s) => {
                s.waiting += 1;
                (true, s.background.as_ref().map(|b| b.cancelled.clone()))
            }
            Err(_) => (false, None),
        };
        attached_state_changed(&self.state);
        let waited = self.wait_for_background();
        let signal = stop.clone().unwrap_or_default();
        let ended = wasm_bindgen_futures::JsFuture::from(settled_unless(&waited, &signal))
            .await
            .is_ok_and(|v| v.is_truthy());
        let still_running = match self.state.try_borrow_mut() {
            Ok(mut s) => {
                s.waiting -= usize::from(counted);
                s.running.is_some() && s.job() == background::Job::Running
            }
            Err(_) => false,
        };
        if still_running {
            attached_state_changed(&self.state);
        }
        let cancelled = cancelled.is_some_and(|c| c.get());
        match (ended, cancelled) {
            (false, _) => background::Waited::Stopped,
            (true, true) => background::Waited::Aborted,
            (true, false) => background::Waited::Ended,
        }
    }
}
