//! The `Compactor`: per-turn context accounting and the agent hooks.
//!
//! The compactor keeps an index of the messages it has seen (a few numbers
//! each, `core::context_index`) and its own copy of the array, so that each
//! turn costs only the new messages: `contextTokens`, `needsCompaction` and
//! the hooks cross the wasm boundary a fixed number of times plus once per
//! new range, and slice with the engine's own `Array.prototype.slice`.

use crate::clearing::cleared_outputs;
use crate::compaction::{check_not_aborted, link_abort, new_abort_controller, Job, JsFailure};
use crate::estimate::context_tokens_object;
use crate::js::errors::thrown_message;
use crate::js::errors::type_error;
use crate::js::message_access::{message_and_role, message_at, messages_array, role_at, JsArray};
use crate::js::message_facts::{gather, gather_lazy, tight_bounds, EstimateChunks, Estimator};
use crate::js::values::{object, read_options, shape, Opt};
use crate::message::convert_message;
use crate::prepare::prepare;
use crate::settings::{model_from_js, ModelInfo};
use agent_compaction_core::compaction::clearing::{
    resolve_all, tries_clearing, ClearedOutputs, ClearingSettings,
};
use agent_compaction_core::compaction::flow::{
    end_event, nothing_to_do, Ending, Failure, NothingToDo, Reason, CANCELLED,
};
use agent_compaction_core::compaction::last_request::{
    budget_chars, summarized_request, Survivors,
};
use agent_compaction_core::compaction::options::{self, EstimatorChoice};
use agent_compaction_core::compaction::settings::CompactionSettings;
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::conversation::edit::{self, Change, Edit, IdentityFacts};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::json::Json;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::context_index::ContextIndex;
use agent_compaction_core::tokens::context_tokens::ContextTokens;
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::{Array, Function, Promise};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = syncLlm, catch)]
    fn sync_llm(known: &Array, messages: &Array, scan_from: u32) -> Result<f64, JsValue>;
    #[wasm_bindgen(js_name = rebaseOut)]
    fn rebase_out(out: &Array, dropped: u32, first: &JsValue);
    #[wasm_bindgen(js_name = syncKnown, catch)]
    fn sync_known(
        known: &Array,
        messages: &Array,
        context_start: u32,
        scan_from: u32,
    ) -> Result<f64, JsValue>;
    #[wasm_bindgen(js_name = takeSync)]
    fn take_sync() -> Array;
}

/// A stream of arrays the compactor keeps in step with: its own copy of the
/// messages it has indexed, and their facts.
#[derive(Default)]
struct Tracked {
    known: Array,
    index: ContextIndex,
    /// The array last brought in line, and its length then: passed again
    /// unchanged (the same turn's next call), it is not checked again.
    synced: Option<(JsValue, u32)>,
    /// Counts the changes other than appends that syncs have found.
    generation: u32,
    /// The estimate the index holds and decisions are made with.
    estimator: Estimator,
}

/// The `convertToLlm` hook's cache: outputs for the inputs seen so far.
#[derive(Default)]
struct LlmCache {
    known: Array,
    out: Array,
    /// `out.length` after converting input `i`.
    out_len_at: Vec<u32>,
    /// The tracked generation its `known` was last in line with, when that
    /// array was the context `transformContext` returned (see `trusted`).
    generation: Option<u32>,
    /// The tool outputs the `toolOutputCleared` markers of `known` clear.
    cleared: ClearedOutputs<Vec<u16>>,
}

struct State {
    /// The summarizer and its options (SPEC §3).
    summarize: Option<Function>,
    fallback_extractive: bool,
    before_compact: Option<Function>,
    summarizer_window: Option<u64>,
    timeout_ms: f64,
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
    /// Brings the index in line with `messages` and returns the array.
    fn sync(&mut self, messages: &JsValue) -> Result<JsArray, InputError> {
        let array = messages_array(messages)?;
        let result = self.sync_array(&array);
        if result.is_err() {
            // Start over next time rather than trust a half-updated index
            // (nor let the LLM cache trust what it last converted).
            self.known.set_length(0);
            self.index = Self::new_index(self.estimator);
            self.generation = self.generation.wrapping_add(1);
        }
        result.map(|()| array)
    }

    /// An empty index for `estimator`: the calibrated one corrects itself
    /// by the provider's reported usage; pi's keeps pi's numbers.
    fn new_index(estimator: Estimator) -> ContextIndex {
        match estimator {
            Estimator::Calibrated => ContextIndex::self_correcting(),
            Estimator::Pi => ContextIndex::default(),
        }
    }

    /// The facts the index keeps of a gathered message, by estimator.
    fn facts_of(&self, raw: &agent_compaction_core::tokens::estimate::RawFacts) -> MessageFacts {
        match self.estimator {
            Estimator::Pi => MessageFacts::compactor_pi(raw),
            Estimator::Calibrated => MessageFacts::calibrated_pending(raw),
        }
    }

    fn sync_array(&mut self, array: &JsArray) -> Result<(), InputError> {
        let current: &JsValue = array.as_array();
        let same = |(v, len): &(JsValue, u32)| v == current && *len == array.len();
        if self.synced.as_ref().is_some_and(same) {
            return Ok(());
        }
        self.synced = None;
        let context_start = self.index.context_start() as u32;
        let mut chunks = EstimateChunks::with(array, self.estimator);
        let change = sync(&self.known, array, context_start, context_start)?;
        if !matches!(change, Synced::Appended(_)) {
            self.generation = self.generation.wrapping_add(1);
        }
        let from = match change {
            Synced::Appended(from) => {
                self.index.truncate_bounded(from);
                from
            }
            Synced::Edited { edit, known_len } => match edit.change(known_len) {
                Change::Appended { from } => {
                    self.index.truncate_bounded(from);
                    from
                }
                Change::Inserted { at, from } => {
                    // One message's facts (`at` is below the array's length).
                    for raw in gather(array, at as u32, at as u32 + 1)? {
                        self.index.insert_bounded(at, self.facts_of(&raw));
                    }
                    from
                }
                Change::Removed { removed, from } => {
                    for &at in removed.iter().rev() {
                        self.index.remove_bounded(at);
                    }
                    from
                }
                Change::Replaced { at } => {
                    self.index.truncate_bounded(at);
                    at
                }
            },
        };
        for raw in gather_lazy(array, from as u32, array.len())? {
            match self.estimator {
                Estimator::Pi => self
                    .index
                    .push_with(MessageFacts::compactor_pi(&raw), |i| chunks.get(i))?,
                // Its text is read only if a decision needs it.
                Estimator::Calibrated => self
                    .index
                    .push_deferred(MessageFacts::calibrated_pending(&raw)),
            }
        }
        self.synced = Some((array.as_array().into(), array.len()));
        Ok(())
    }

    /// The context tokens of `array` (just synced), every estimate that
    /// counts measured.
    fn context_tokens(&mut self, array: &JsArray) -> Result<ContextTokens, InputError> {
        let mut chunks = EstimateChunks::with(array, self.estimator);
        self.index.context_tokens_exact(|i| chunks.get(i))
    }

    /// What must survive a compaction that keeps messages from
    /// `first_kept` on: the pinned messages before it (measured), the latest
    /// request's text when it lies before it, the quote's budget.
    fn survivors(
        &mut self,
        array: &JsArray,
        first_kept: usize,
        keep_recent_tokens: u64,
    ) -> Result<Survivors<js_sys::JsString>, InputError> {
        let mut chunks = EstimateChunks::with(array, self.estimator);
        let pinned = self.index.pinned_before(first_kept).to_vec();
        let mut resent = Vec::with_capacity(pinned.len());
        for i in pinned {
            self.index.measure(i, |j| chunks.get(j))?;
            resent.push(self.index.facts()[i]);
        }
        let latest_request = match summarized_request(self.index.facts(), first_kept) {
            Some(i) => Some(crate::pinned::request_text(array, i)?),
            None => None,
        };
        Ok(Survivors {
            latest_request,
            budget_chars: budget_chars(keep_recent_tokens),
            resent,
        })
    }

    /// The estimates of the pinned messages the current context re-sends,
    /// while they count.
    fn resent_tokens(&mut self, array: &JsArray) -> Result<u64, InputError> {
        let mut chunks = EstimateChunks::with(array, self.estimator);
        self.index.resent_tokens(|i| chunks.get(i))
    }

    /// Makes every estimate after the last summary real (before a cut point
    /// is searched there), and learns from them how the provider's reported
    /// usage compares with the calibrated estimate (pi's: always 1); returns
    /// the ratio the estimates are scaled by.
    pub fn fill_context(&mut self, array: &JsArray) -> Result<f64, InputError> {
        let start = self.index.context_start();
        let len = self.index.len();
        let mut chunks = EstimateChunks::with(array, self.estimator);
        self.index.fill_pending(start..len, |i| chunks.get(i))?;
        self.index.learn_ratio(|i| chunks.get(i))
    }
}

/// How `messages` differs from the compactor's copy (see `syncKnown`),
/// which is now equal to it.
enum Synced {
    /// The same messages, and new ones from this index (the old length) on:
    /// the shim's fast path, with no facts.
    Appended(usize),
    /// Anything else, as the core classifies it from the shim's identity
    /// facts, with the copy's old length.
    Edited { edit: Edit, known_len: usize },
}

fn sync_error(thrown: JsValue) -> InputError {
    InputError::Unreadable {
        path: FieldPath::argument("messages"),
        reason: thrown_message(&thrown),
    }
}

fn sync(
    known: &Array,
    array: &JsArray,
    context_start: u32,
    scan_from: u32,
) -> Result<Synced, InputError> {
    let result =
        sync_known(known, array.as_array(), context_start, scan_from).map_err(sync_error)?;
    Ok(synced(result, array)?.0)
}

/// The change a sync's result describes (its identity facts read from
/// `takeSync()` only when it was not an append, and classified by the core),
/// and where the LLM cache's rebase cut `known` (0: not rebased).
fn synced(result: f64, array: &JsArray) -> Result<(Synced, usize), InputError> {
    if result >= 0.0 {
        return Ok((Synced::Appended(result as usize), 0));
    }
    let parts = take_sync();
    let known_len = parts.get(0).as_f64().unwrap_or_default() as usize;
    let rebased = parts.get(2).as_f64().unwrap_or_default() as usize;
    let facts = parts.get(1);
    let Some(words) = facts.dyn_ref::<js_sys::Int32Array>() else {
        return Ok((Synced::Appended(known_len), rebased));
    };
    let facts = IdentityFacts::from_words(&words.to_vec(), known_len, array.len() as usize);
    let edit = edit::edit(&facts).map_err(|e| InputError::Unreadable {
        path: FieldPath::argument("messages"),
        reason: e.to_string(),
    })?;
    Ok((Synced::Edited { edit, known_len }, rebased))
}

impl LlmCache {
    /// `trusted(array)`: `messages` is the context `transformContext` just
    /// returned and only appends were found since this cache was last in
    /// line with such a context, so its known part needs no identity scan.
    fn convert(
        &mut self,
        messages: &JsValue,
        trusted: impl FnOnce(&JsArray) -> bool,
    ) -> Result<Array, InputError> {
        let result = messages_array(messages).and_then(|array| {
            let trusted = trusted(&array);
            self.convert_array(&array, trusted)
        });
        if result.is_err() {
            self.known.set_length(0);
            self.out.set_length(0);
            self.out_len_at.clear();
            self.cleared = ClearedOutputs::default();
        }
        result
    }

    fn convert_array(&mut self, array: &JsArray, trusted: bool) -> Result<Array, InputError> {
        // Outputs follow inputs one to one up to the first change: found by
        // checking every known input, unless trusted (the shim then checks
        // from the known length on: `Math.min`). `known` follows a context
        // that moved to a new summary, then is brought in line with `array`,
        // in one crossing.
        let scan_from = if trusted { u32::MAX } else { 0 };
        let result = sync_llm(&self.known, array.as_array(), scan_from).map_err(sync_error)?;
        let (change, rebased) = synced(result, array)?;
        let moved = rebased >= 1;
        if moved {
            self.follow_moved_context(array, rebased)?;
        }
        // Anything but an append may have taken a marker out (a cut back
        // past one, too).
        // Outputs are kept only up to the first message the edit touches.
        let (mut from, edited) = match change {
            Synced::Appended(from) => (from, false),
            Synced::Edited { edit, known_len } => (edit.kept_prefix(known_len), true),
        };
        let len = array.len() as usize;
        // The new messages and their roles, each read once.
        let mut fresh = Vec::with_capacity(len - from);
        for i in from..len {
            fresh.push(message_and_role(array, i)?);
        }
        // A marker added, or one perhaps taken out or moved: outputs before
        // it may change, so everything is converted again (rare: once per
        // clearing or undo).
        if fresh.iter().any(|(_, r)| *r == Role::ToolOutputCleared)
            || ((edited || moved) && !self.cleared.is_empty())
        {
            let all = crate::js::message_access::roles(array)?;
            self.cleared = cleared_outputs(array, &all)?;
            fresh = Vec::with_capacity(len);
            for (i, role) in all.into_iter().enumerate() {
                fresh.push((message_at(array, i)?, role));
            }
            from = 0;
        }
        // `out` holds the outputs of known[..out_len_at.len()]: cut back
        // only when something before the end changed.
        if from < self.out_len_at.len() {
            self.out_len_at.truncate(from);
            self.out
                .set_length(self.out_len_at.last().copied().unwrap_or(0));
        }
        let mut out_len = self.out_len_at.last().copied().unwrap_or(0);
        for (i, (message, role)) in (from..).zip(fresh) {
            if let Some(converted) = convert_message(&message, i, role, &self.cleared)? {
                out_len = self.out.push(&converted);
            }
            self.out_len_at.push(out_len);
        }
        Ok(self.out.slice(0, out_len))
    }

    /// After a compaction the context starts at the new summary and goes
    /// on with messages this cache has converted already (`known`, rebased
    /// by the shim, dropped its first `p`): keep their outputs (drop the
    /// ones before them, put the summary's in front) instead of converting
    /// the whole context again.
    fn follow_moved_context(&mut self, array: &JsArray, p: usize) -> Result<(), InputError> {
        let dropped = self.out_len_at.get(p - 1).copied().unwrap_or(0);
        let first = convert_message(&message_at(array, 0)?, 0, role_at(array, 0)?, &self.cleared)?;
        let added = u32::from(first.is_some());
        rebase_out(&self.out, dropped, &first.unwrap_or(JsValue::UNDEFINED));
        let mut lens = Vec::with_capacity(self.out_len_at.len() + 1 - p);
        lens.push(added);
        lens.extend(self.out_len_at[p..].iter().map(|&n| n - dropped + added));
        self.out_len_at = lens;
        Ok(())
    }
}

impl State {
    /// `shouldCompact` on the context of `array` (just synced).
    fn threshold_exceeded(&mut self, array: &JsArray) -> Result<bool, InputError> {
        if !self.settings.enabled {
            return Ok(false);
        }
        let threshold = self.context_window - self.settings.reserve_tokens as f64;
        // Kept messages whose usage an edit made stale are left unmeasured
        // by sync (their bounds known): measured only if the answer needs.
        // The calibrated estimate's bounds are tightened from the texts'
        // UTF-8 lengths before any text is classified, a batch per crossing.
        let estimator = self.tracked.estimator;
        let mut chunks = EstimateChunks::with(array, estimator);
        self.tracked.index.exceeds_tightening_batched(
            threshold,
            |at| tight_bounds(array, estimator, at),
            |i| chunks.get(i),
        )
    }

    fn resolve(&mut self, model: ModelInfo, context_window: Option<f64>) -> Result<(), JsValue> {
        let window = context_window.or(model.context_window).ok_or_else(|| {
            JsValue::from(js_sys::TypeError::new(
                "contextWindow is required: give options.contextWindow or a model with a contextWindow",
            ))
        })?;
        (self.settings, self.clearing) = resolve_all(
            self.settings_input.as_ref(),
            model.key.as_ref(),
            Some(window),
        )
        .map_err(crate::settings::settings_error)?;
        self.context_window = window;
        self.model_key = model.key;
        Ok(())
    }
}

/// Calls the app's `onEvent` with no borrow held; an exception in it is
/// the app's, and does not disturb the compactor.
fn emit(on_event: Option<Function>, event: JsValue) {
    if let Some(f) = on_event {
        let _ = f.call1(&JsValue::UNDEFINED, &event);
    }
}

fn hook_error(state: &Rc<RefCell<State>>, hook: &'static str, error: JsValue) {
    let on_event = state.try_borrow().ok().and_then(|s| s.on_event.clone());
    emit(on_event, hook_error_event(hook, error));
}

// The events `onEvent` receives (`CompactorEvent`): laid out by the core
// (`core::compaction::shapes`); the values the app gave or gets (results,
// errors) are passed through as they are. Built as plain objects rather
// than through serde-wasm-bindgen, whose serializer and static-string cache
// cost the module loaded at import about 2 KB gzipped.

/// A `hook_error` event.
fn hook_error_event(hook: &'static str, error: JsValue) -> JsValue {
    shape(shapes::hook_error_event(hook, error))
}

/// A `compaction_end` event (also `attach`'s recovery failure): the
/// result's `tier`, when it has one, is named.
pub(crate) fn compaction_end_event(
    reason: &'static str,
    result: JsValue,
    aborted: bool,
    will_retry: bool,
    error_message: Option<&str>,
) -> JsValue {
    let tier = result
        .is_object()
        .then(|| js_sys::Reflect::get(&result, &"tier".into()).ok())
        .flatten()
        .and_then(|t| t.as_string());
    shape(shapes::compaction_end_event(
        reason,
        result,
        aborted,
        will_retry,
        error_message,
        tier,
    ))
}

/// A `save_error` event (`attach` with a store).
pub(crate) fn save_error_event(error: JsValue) -> JsValue {
    shape(shapes::save_error_event(error))
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
        .map_err(type_error)?;
        let estimator = match o.estimator {
            EstimatorChoice::Calibrated => Estimator::Calibrated,
            EstimatorChoice::Pi => Estimator::Pi,
        };
        let mut state = State {
            summarize: o.summarize,
            fallback_extractive: o.fallback_extractive,
            before_compact: o.before_compact,
            summarizer_window: o.summarizer_window,
            timeout_ms: o.timeout_ms,
            running: None,
            context_window: 0.0,
            model_key: None,
            settings_input: o.settings.map_err(crate::settings::settings_error)?,
            settings: CompactionSettings::default(),
            clearing: ClearingSettings::default(),
            on_event: o.on_event,
            tracked: Tracked {
                estimator,
                index: Tracked::new_index(estimator),
                ..Tracked::default()
            },
            last_context: None,
            llm: LlmCache::default(),
            view: Default::default(),
            attached: None,
        };
        state.resolve(o.model, o.context_window)?;
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
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let array = s.tracked.sync(&messages).map_err(type_error)?;
        Ok(s.tracked.context_tokens(&array).map_err(type_error)?.tokens)
    }

    #[wasm_bindgen(js_name = contextTokenEstimate)]
    pub fn context_token_estimate(&self, messages: JsValue) -> Result<JsValue, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let array = s.tracked.sync(&messages).map_err(type_error)?;
        let tokens = s.tracked.context_tokens(&array).map_err(type_error)?;
        Ok(context_tokens_object(&tokens))
    }

    #[wasm_bindgen(js_name = needsCompaction)]
    pub fn needs_compaction(&self, messages: JsValue) -> Result<bool, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let array = s.tracked.sync(&messages).map_err(type_error)?;
        s.threshold_exceeded(&array).map_err(type_error)
    }

    #[wasm_bindgen(js_name = setModel)]
    pub fn set_model(&self, model: JsValue, context_window: JsValue) -> Result<(), JsValue> {
        let model = model_from_js(&model, "model").map_err(type_error)?;
        let window = crate::js::values::optional_number(&context_window, || {
            FieldPath::argument("contextWindow")
        })
        .map_err(type_error)?;
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let (old_window, old_key, old_settings) =
            (s.context_window, s.model_key.clone(), s.settings);
        // The window given, else the model's own, else the current one.
        let window = window.or(model.context_window).or(Some(old_window));
        if let Err(e) = s.resolve(model, window) {
            s.context_window = old_window;
            s.model_key = old_key;
            s.settings = old_settings;
            return Err(e);
        }
        Ok(())
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
        // Options are checked and the compactor claimed right away, so
        // `isCompacting` is true as soon as `compact` returns.
        let claimed = read_options(&options, options::compact_options)
            .map_err(type_error)
            .and_then(|opts| {
                let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
                if s.running.is_some() {
                    return Err(js_sys::Error::new(
                        "a compaction is already running: wait for it to end, or abort() it",
                    )
                    .into());
                }
                let controller = new_abort_controller();
                s.running = Some(controller.clone());
                Ok((opts, controller))
            });
        match claimed {
            Ok((opts, controller)) => {
                let state = self.state.clone();
                wasm_bindgen_futures::future_to_promise(run_compact(
                    state, messages, opts, controller,
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
                budget_tokens: (s.context_window - s.settings.reserve_tokens as f64).max(1.0)
                    as u64,
            },
            Err(_) => return Promise::reject(&busy()),
        };
        wasm_bindgen_futures::future_to_promise(crate::branch::summarize_branch(
            job, messages, options,
        ))
    }

    /// The same hooks object on every call.
    #[wasm_bindgen(js_name = agentHooks)]
    pub fn agent_hooks(&self) -> JsValue {
        if let Some(h) = self.hooks.borrow().as_ref() {
            return h.clone();
        }
        let state = self.state.clone();
        let transform = Closure::<dyn Fn(JsValue) -> Promise>::new(move |messages: JsValue| {
            let attached = state.try_borrow().ok().and_then(|s| s.attached.clone());
            if let Some(promise) = attached.and_then(|a| a.transform(&messages)) {
                return promise;
            }
            let result = context_of(&state, &messages);
            Promise::resolve(&match result {
                Ok(context) => context,
                Err(error) => {
                    hook_error(&state, "transformContext", error);
                    unchanged(messages)
                }
            })
        });
        let state = self.state.clone();
        let convert = Closure::<dyn Fn(JsValue) -> Promise>::new(move |messages: JsValue| {
            let result = match state.try_borrow_mut() {
                Ok(mut s) => {
                    let s = &mut *s;
                    let generation = s.tracked.generation;
                    let mut is_context = false;
                    let (llm, last_context) = (&mut s.llm, &s.last_context);
                    let was_in_line = llm.generation == Some(generation);
                    let result = llm.convert(&messages, |array| {
                        is_context = last_context.as_ref().is_some_and(|(c, len, g)| {
                            *c == messages && *g == generation && array.len() == *len
                        });
                        is_context && was_in_line
                    });
                    llm.generation = (is_context && result.is_ok()).then_some(generation);
                    result.map(JsValue::from).map_err(type_error)
                }
                Err(_) => Err(busy()),
            };
            Promise::resolve(&match result {
                Ok(llm) => llm,
                Err(error) => {
                    hook_error(&state, "convertToLlm", error);
                    unchanged(messages)
                }
            })
        });
        let hooks = object(&[
            ("transformContext", transform.into_js_value()),
            ("convertToLlm", convert.into_js_value()),
        ]);
        *self.hooks.borrow_mut() = Some(hooks.clone());
        hooks
    }
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
    let array = s.tracked.sync(messages).map_err(type_error)?;
    let (context, len): (JsValue, u32) = match s.tracked.index.last_summary() {
        None => (messages.clone(), array.len()),
        Some(start) => {
            // The summary, the pinned messages before it, then the rest.
            let resent = s.tracked.index.resent();
            let context = crate::pinned::view(&array, start, resent).map_err(type_error)?;
            (
                context.into(),
                array.len() - start as u32 + resent.len() as u32,
            )
        }
    };
    s.last_context = Some((context.clone(), len, s.tracked.generation));
    Ok(context)
}

/// What `attach` uses of the compactor (a second handle on the same state).
impl Compactor {
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

    /// The last summary of `messages` and the pinned messages re-sent after
    /// it (the start of its model view), from the index.
    pub(super) fn context_head(&self, messages: &JsValue) -> Option<Array> {
        let mut s = self.state.try_borrow_mut().ok()?;
        let array = s.tracked.sync(messages).ok()?;
        let start = s.tracked.index.last_summary()?;
        let resent = s.tracked.index.resent().to_vec();
        let head = crate::pinned::view(&array, start, &resent).ok()?;
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
        let array = s.tracked.sync(messages).map_err(type_error)?;
        let summary = s.tracked.index.last_summary();
        let resent: &[usize] = match summary {
            Some(_) => s.tracked.index.resent(),
            None => &[],
        };
        s.view.keep(s.tracked.generation, array.len() as usize);
        Ok(f(&array, summary, resent, &mut s.view))
    }

    /// Where the last `compactionSummary` in `messages` is.
    pub(super) fn last_summary_index(&self, messages: &JsValue) -> Option<usize> {
        let mut s = self.state.try_borrow_mut().ok()?;
        s.tracked.sync(messages).ok()?;
        s.tracked.index.last_summary()
    }
}

fn abort_controller(controller: &JsValue) {
    if let Ok(abort) = js_sys::Reflect::get(controller, &"abort".into()) {
        if let Some(f) = abort.dyn_ref::<Function>() {
            let _ = f.call0(controller);
        }
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
        ),
    );
    end.error_message
}

/// The whole compaction. Borrows of the state are short and never held
/// across an await, so event handlers and callbacks may call back into the
/// compactor.
async fn run_compact(
    state: Rc<RefCell<State>>,
    messages: JsValue,
    opts: CompactOptions,
    controller: JsValue,
) -> Result<JsValue, JsValue> {
    let reason = opts.reason;
    let on_event = state.try_borrow().ok().and_then(|s| s.on_event.clone());
    let signal = opts.signal.clone().map(|s| s.0).unwrap_or_default();
    let unlink = link_abort(&signal, &controller);
    emit(
        on_event.clone(),
        shape(shapes::compaction_start_event(reason.name())),
    );
    let outcome = compact_job(&state, &messages, &opts, &controller).await;
    let _ = unlink.call0(&JsValue::UNDEFINED);
    if let Ok(mut s) = state.try_borrow_mut() {
        s.running = None;
    }
    match outcome {
        Ok(Some(result)) => {
            emit_end(
                on_event,
                reason,
                result.clone(),
                opts.will_retry,
                Ending::Compacted,
            );
            Ok(result)
        }
        Ok(None) => {
            emit_end(
                on_event,
                reason,
                JsValue::UNDEFINED,
                opts.will_retry,
                Ending::NothingToDo,
            );
            Ok(JsValue::UNDEFINED)
        }
        Err(failure) => {
            // Cancel whatever request is still running.
            abort_controller(&controller);
            let message = emit_end(
                on_event,
                reason,
                JsValue::UNDEFINED,
                opts.will_retry,
                Ending::Failed(&failure),
            );
            Err(match (failure, message) {
                (Failure::Aborted(e), _) => e,
                (Failure::Cancelled, _) => js_sys::Error::new(CANCELLED).into(),
                (Failure::Failed(_), message) => {
                    js_sys::Error::new(&message.unwrap_or_default()).into()
                }
            })
        }
    }
}

async fn compact_job(
    state: &Rc<RefCell<State>>,
    messages: &JsValue,
    opts: &CompactOptions,
    controller: &JsValue,
) -> Result<Option<JsValue>, JsFailure> {
    check_not_aborted(controller)?;
    let input = |e: InputError| Failure::Failed(e.to_string());
    // The cheap tier first (threshold compactions): clearing old tool
    // output, when that alone brings the context to the threshold. The tier
    // is awaited with no borrow held, and the index is synced again after
    // it.
    let tier = {
        let mut s = state
            .try_borrow_mut()
            .map_err(|_| Failure::Failed(BUSY.into()))?;
        if tries_clearing(opts.reason, &s.clearing) {
            let array = s.tracked.sync(messages).map_err(input)?;
            s.tracked.fill_context(&array).map_err(input)?;
            let tokens = s.tracked.context_tokens(&array).map_err(input)?.tokens;
            let threshold = s.context_window - s.settings.reserve_tokens as f64;
            let tier =
                crate::clearing::tier_input(&s.tracked.index, tokens, threshold, &s.clearing);
            Some((array, tier))
        } else {
            None
        }
    };
    if let Some((array, tier)) = tier {
        let cleared = crate::clearing::clear_tier(&array, &tier)
            .await
            .map_err(Failure::Failed)?;
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
        let array = s.tracked.sync(messages).map_err(input)?;
        // The kept part is measured in the provider's tokens: with the
        // calibrated estimate scaled by the ratio, so is what is kept.
        let ratio = s.tracked.fill_context(&array).map_err(input)?;
        let facts = s.tracked.index.facts().to_vec();
        let settings = s.settings;
        let prepared = prepare(
            &array,
            &facts,
            settings.keep_recent_tokens as f64 / ratio,
            s.tracked.estimator,
        )
        .map_err(input)?;
        let Some(mut prepared) = prepared else {
            let ends_with_summary = facts.last().is_some_and(|f| {
                f.role == agent_compaction_core::message::role::Role::CompactionSummary
            });
            return match nothing_to_do(opts.reason, ends_with_summary) {
                NothingToDo::Resolve => Ok(None),
                NothingToDo::Reject(message) => Err(Failure::Failed(message.into())),
            };
        };
        // The pinned messages the old context re-sent count before, as the
        // ones re-sent after the new summary count after.
        let survivors = s
            .tracked
            .survivors(
                &array,
                prepared.plan.first_kept_index,
                settings.keep_recent_tokens,
            )
            .map_err(input)?;
        prepared.plan.tokens_before += s.tracked.resent_tokens(&array).map_err(input)? as f64;
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
            prepared,
        }
    };
    crate::compaction::run(&job, messages).await.map(Some)
}
