//! The `Compactor`: per-turn context accounting and the agent hooks.
//!
//! The compactor keeps an index of the messages it has seen (a few numbers
//! each, `core::context_index`) and its own copy of the array, so that each
//! turn costs only the new messages: `contextTokens`, `needsCompaction` and
//! the hooks cross the wasm boundary a fixed number of times plus once per
//! new range, and slice with the engine's own `Array.prototype.slice`.

use super::errors::thrown_message;
use super::estimates::context_tokens_object;
use super::flat_array::convert_message;
use super::js_values::object;
use super::message_access::{get, message_at, messages_array, role_at, JsArray};
use super::message_facts::gather;
use super::settings_input::{model_from_js, resolve_from_js, ModelInfo};
use crate::core::context_index::ContextIndex;
use crate::core::error::{FieldPath, InputError};
use crate::core::estimate::MessageFacts;
use crate::core::json::Json;
use crate::core::settings::CompactionSettings;
use js_sys::{Array, Function, Promise};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/wasm/message_shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = syncKnown, catch)]
    fn sync_known(known: &Array, messages: &Array, context_start: u32) -> Result<u32, JsValue>;
}

#[wasm_bindgen(typescript_custom_section)]
const COMPACTOR_TS: &'static str = r#"
/** A pi-ai `Model` as far as the compactor reads it. */
export interface ModelLike {
  provider: string;
  id: string;
  contextWindow?: number;
}
/** What the compactor reports. */
export type CompactorEvent =
  | { type: "hook_error"; hook: "transformContext" | "convertToLlm"; error: Error };
export interface CompactorOptions {
  /** The model's context window in tokens (default: `model.contextWindow`). */
  contextWindow?: number;
  /** A `"provider/modelId"` key (for `settings.modelOverrides`) or a pi-ai Model. */
  model?: string | ModelLike;
  settings?: CompactionSettingsInput;
  onEvent?: (event: CompactorEvent) => void;
}
/** The hooks pi-agent-core's `Agent` takes: `new Agent({ ...compactor.agentHooks() })`. */
export interface AgentHooks {
  transformContext: <M extends AnyMessage>(messages: M[], signal?: AbortSignal) => Promise<M[]>;
  convertToLlm: (messages: AnyMessage[]) => Promise<Message[]>;
}
export class Compactor {
  constructor(options: CompactorOptions);
  free(): void;
  /** The resolved settings now in force. */
  readonly settings: Required<Omit<CompactionSettingsInput, "modelOverrides">>;
  readonly contextWindow: number;
  /**
   * Estimated tokens of the LLM context of `messages`: the last fresh usage
   * plus estimates after it; usage from at or before the last summary is
   * ignored (stale). Costs only the messages new since the last call.
   */
  contextTokens(messages: readonly AnyMessage[]): number;
  /** The same, with pi's breakdown. */
  contextTokenEstimate(messages: readonly AnyMessage[]): ContextTokenEstimate;
  /** `enabled && contextTokens > contextWindow - reserveTokens`. */
  needsCompaction(messages: readonly AnyMessage[]): boolean;
  /** `{ transformContext, convertToLlm }` for pi-agent-core's `Agent`. Never reject. */
  agentHooks(): AgentHooks;
  /** Switch model (and window) for later checks. */
  setModel(model: string | ModelLike, contextWindow?: number): void;
}
"#;

/// A stream of arrays the compactor keeps in step with: its own copy of the
/// messages it has indexed, and their facts.
#[derive(Default)]
struct Tracked {
    known: Array,
    index: ContextIndex,
}

/// The `convertToLlm` hook's cache: outputs for the inputs seen so far.
#[derive(Default)]
struct LlmCache {
    known: Array,
    out: Array,
    /// `out.length` after converting input `i`.
    out_len_at: Vec<u32>,
}

struct State {
    context_window: f64,
    model_key: Option<crate::core::js_string::JsStr>,
    settings_input: Option<Json>,
    settings: CompactionSettings,
    on_event: Option<Function>,
    tracked: Tracked,
    llm: LlmCache,
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
            // Start over next time rather than trust a half-updated index.
            self.known.set_length(0);
            self.index = ContextIndex::default();
        }
        result.map(|()| array)
    }

    fn sync_array(&mut self, array: &JsArray) -> Result<(), InputError> {
        let context_start = self.index.context_start() as u32;
        let from = sync_known(&self.known, array.as_array(), context_start).map_err(|thrown| {
            InputError::Unreadable {
                path: FieldPath::argument("messages"),
                reason: thrown_message(&thrown),
            }
        })?;
        self.index.truncate(from as usize);
        for raw in gather(array, from, array.len())? {
            self.index.push(MessageFacts::from_raw(&raw));
        }
        Ok(())
    }
}

impl LlmCache {
    fn convert(&mut self, messages: &JsValue) -> Result<Array, InputError> {
        let array = messages_array(messages)?;
        let result = self.convert_array(&array);
        if result.is_err() {
            self.known.set_length(0);
            self.out.set_length(0);
            self.out_len_at.clear();
        }
        result
    }

    fn convert_array(&mut self, array: &JsArray) -> Result<Array, InputError> {
        let from = sync_known(&self.known, array.as_array(), 0).map_err(|thrown| {
            InputError::Unreadable {
                path: FieldPath::argument("messages"),
                reason: thrown_message(&thrown),
            }
        })? as usize;
        self.out_len_at.truncate(from);
        self.out
            .set_length(self.out_len_at.last().copied().unwrap_or(0));
        for i in from..array.len() as usize {
            let role = role_at(array, i)?;
            if let Some(converted) = convert_message(&message_at(array, i)?, i, role)? {
                self.out.push(&converted);
            }
            self.out_len_at.push(self.out.length());
        }
        Ok(self.out.slice(0, self.out.length()))
    }
}

impl State {
    fn threshold_exceeded(&self) -> bool {
        let tokens = self.tracked.index.context_tokens().tokens;
        self.settings.enabled && tokens > self.context_window - self.settings.reserve_tokens as f64
    }

    fn resolve(&mut self, model: ModelInfo, context_window: Option<f64>) -> Result<(), JsValue> {
        let window = context_window.or(model.context_window).ok_or_else(|| {
            JsValue::from(js_sys::TypeError::new(
                "contextWindow is required: give options.contextWindow or a model with a contextWindow",
            ))
        })?;
        self.settings = resolve_from_js(
            self.settings_input.as_ref(),
            model.key.as_ref(),
            Some(window),
        )?;
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

fn hook_error(state: &Rc<RefCell<State>>, hook: &str, error: JsValue) {
    let on_event = state.try_borrow().ok().and_then(|s| s.on_event.clone());
    emit(
        on_event,
        object(&[
            ("type", "hook_error".into()),
            ("hook", hook.into()),
            ("error", error),
        ]),
    );
}

#[wasm_bindgen]
impl Compactor {
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Compactor, JsValue> {
        let path = || FieldPath::argument("options");
        if !options.is_object() {
            return Err(InputError::WrongType {
                path: path(),
                expected: "an object",
                got: super::errors::describe(&options),
            }
            .into());
        }
        let on_event = get(&options, "onEvent", || path().field("onEvent"))?;
        let on_event = match on_event.dyn_into::<Function>() {
            Ok(f) => Some(f),
            Err(v) if v.is_undefined() || v.is_null() => None,
            Err(v) => {
                return Err(InputError::WrongType {
                    path: path().field("onEvent"),
                    expected: "a function",
                    got: super::errors::describe(&v),
                }
                .into())
            }
        };
        let settings_input =
            super::settings_input::settings_json(&get(&options, "settings", || {
                path().field("settings")
            })?)?;
        let model = model_from_js(
            &get(&options, "model", || path().field("model"))?,
            "options.model",
        )?;
        let window = super::js_values::optional_number(
            &get(&options, "contextWindow", || path().field("contextWindow"))?,
            || path().field("contextWindow"),
        )?;
        let mut state = State {
            context_window: 0.0,
            model_key: None,
            settings_input,
            settings: CompactionSettings::default(),
            on_event,
            tracked: Tracked::default(),
            llm: LlmCache::default(),
        };
        state.resolve(model, window)?;
        Ok(Compactor {
            state: Rc::new(RefCell::new(state)),
            hooks: RefCell::new(None),
        })
    }

    #[wasm_bindgen(getter)]
    pub fn settings(&self) -> Result<JsValue, JsValue> {
        let s = self.state.try_borrow().map_err(|_| busy())?;
        Ok(object(&[
            ("enabled", s.settings.enabled.into()),
            ("reserveTokens", (s.settings.reserve_tokens as f64).into()),
            (
                "keepRecentTokens",
                (s.settings.keep_recent_tokens as f64).into(),
            ),
        ]))
    }

    #[wasm_bindgen(getter, js_name = contextWindow)]
    pub fn context_window(&self) -> Result<f64, JsValue> {
        Ok(self.state.try_borrow().map_err(|_| busy())?.context_window)
    }

    #[wasm_bindgen(js_name = contextTokens)]
    pub fn context_tokens(&self, messages: JsValue) -> Result<f64, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        s.tracked.sync(&messages)?;
        Ok(s.tracked.index.context_tokens().tokens)
    }

    #[wasm_bindgen(js_name = contextTokenEstimate)]
    pub fn context_token_estimate(&self, messages: JsValue) -> Result<JsValue, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        s.tracked.sync(&messages)?;
        Ok(context_tokens_object(&s.tracked.index.context_tokens()))
    }

    #[wasm_bindgen(js_name = needsCompaction)]
    pub fn needs_compaction(&self, messages: JsValue) -> Result<bool, JsValue> {
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        s.tracked.sync(&messages)?;
        Ok(s.threshold_exceeded())
    }

    #[wasm_bindgen(js_name = setModel)]
    pub fn set_model(&self, model: JsValue, context_window: JsValue) -> Result<(), JsValue> {
        let model = model_from_js(&model, "model")?;
        let window = super::js_values::optional_number(&context_window, || {
            FieldPath::argument("contextWindow")
        })?;
        let mut s = self.state.try_borrow_mut().map_err(|_| busy())?;
        let (old_window, old_key, old_settings) =
            (s.context_window, s.model_key.clone(), s.settings);
        if let Err(e) = s.resolve(model, window.or(Some(old_window))) {
            s.context_window = old_window;
            s.model_key = old_key;
            s.settings = old_settings;
            return Err(e);
        }
        Ok(())
    }

    /// The same hooks object on every call.
    #[wasm_bindgen(js_name = agentHooks)]
    pub fn agent_hooks(&self) -> JsValue {
        if let Some(h) = self.hooks.borrow().as_ref() {
            return h.clone();
        }
        let state = self.state.clone();
        let transform = Closure::<dyn Fn(JsValue) -> Promise>::new(move |messages: JsValue| {
            let result = match state.try_borrow_mut() {
                Ok(mut s) => s
                    .tracked
                    .sync(&messages)
                    .map_err(JsValue::from)
                    .and_then(|array| {
                        let start = s.tracked.index.context_start() as u32;
                        if s.tracked.index.last_summary().is_none() {
                            Ok(messages.clone())
                        } else {
                            array
                                .slice(start, array.len())
                                .map(JsValue::from)
                                .map_err(JsValue::from)
                        }
                    }),
                Err(_) => Err(busy()),
            };
            Promise::resolve(&match result {
                Ok(context) => context,
                Err(error) => {
                    hook_error(&state, "transformContext", error);
                    messages
                }
            })
        });
        let state = self.state.clone();
        let convert = Closure::<dyn Fn(JsValue) -> Promise>::new(move |messages: JsValue| {
            let result = match state.try_borrow_mut() {
                Ok(mut s) => s
                    .llm
                    .convert(&messages)
                    .map(JsValue::from)
                    .map_err(JsValue::from),
                Err(_) => Err(busy()),
            };
            Promise::resolve(&match result {
                Ok(llm) => llm,
                Err(error) => {
                    hook_error(&state, "convertToLlm", error);
                    messages
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
