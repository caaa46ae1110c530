//! The ready-made summarizer callbacks, `openAiSummarizer` and
//! `anthropicSummarizer`: each returns a `summarize(request)` function that
//! calls a provider with the page's own global `fetch` (windows, workers,
//! Node ≥ 18), so the app's network stack, proxies and CORS rules apply.
//!
//! Everything is read through `Reflect` (no web-sys features needed), and
//! the prompts and the summary are never copied into wasm memory: they go
//! from the request object into the JSON body, and from the parsed reply
//! into the result, as the engine's own strings.
//!
//! Provider choices, documented in the TypeScript declarations below:
//! - OpenAI-compatible: the token limit is sent as `max_completion_tokens` to
//!   OpenAI itself (`api.openai.com`, `*.openai.azure.com`: its reasoning
//!   models refuse `max_tokens`) and as `max_tokens` to every other server
//!   (local servers such as llama.cpp, Ollama, LM Studio and older vLLM only
//!   know that one); `maxTokensField` overrides the guess, e.g. for a proxy in
//!   front of OpenAI.
//! - Usage follows pi-ai: `input` excludes cached prompt tokens, which are
//!   `cacheRead`; cost is zero (the package knows no prices).
//! - Anthropic's text is its `text` blocks joined with "\n", as pi joins them.
//! - An abort propagates fetch's own rejection (an `AbortError`, or the
//!   signal's reason) unchanged: the compactor must see a cancellation, not a
//!   failure.

use crate::js::errors::{describe, thrown_message};
use crate::js::message_access::{get, JsArray};
use agent_compaction_core::error::{FieldPath, InputError};
use js_sys::{Array, Function, JsString, Promise, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn json_parse(text: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = JSON, js_name = stringify, catch)]
    fn json_stringify(value: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = Object, js_name = entries, catch)]
    fn object_entries(value: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_namespace = Array, js_name = from, catch)]
    fn array_from(value: &JsValue) -> Result<Array, JsValue>;
}

#[wasm_bindgen(typescript_custom_section)]
const FETCH_SUMMARIZERS_TS: &'static str = r#"
export type SummarizeKind = "history" | "turnPrefix" | "branch";
export type CompactionReason = "manual" | "threshold" | "overflow";
/** What the compactor asks the summarizer callback for. */
export interface SummarizeRequest {
  kind: SummarizeKind;
  systemPrompt: string;
  prompt: string;
  /** The summary's token budget. */
  maxTokens: number;
  /** Aborted when the compaction is cancelled or times out: pass it to `fetch`. */
  signal: AbortSignal;
  reason: CompactionReason;
}
/** The summary text, with what the call cost when the provider says. */
export type SummarizeResult = string | { text: string; usage?: Usage };
/** The app's summarizer callback: `Compactor`'s `summarize` option. */
export type Summarizer = (request: SummarizeRequest) => SummarizeResult | Promise<SummarizeResult>;
/**
 * A summarizer made by `openAiSummarizer` or `anthropicSummarizer`. It
 * rejects with an `Error` carrying the provider's message and the HTTP
 * `status` (e.g. `"OpenAI-compatible summarizer: HTTP 429: Rate limit
 * reached…"`), with an `Error` whose `cause` is fetch's error on a network
 * failure, with an `Error` when the reply has no text, and with fetch's own
 * `AbortError` (never wrapped) when `request.signal` aborts.
 */
export type FetchSummarizer = (request: SummarizeRequest) => Promise<{ text: string; usage?: Usage }>;
export interface OpenAiSummarizerOptions {
  /**
   * The API root, without `/chat/completions`: `"https://api.openai.com/v1"`,
   * a local server's `"http://127.0.0.1:8080/v1"`, or the app's own proxy
   * (`"/llm/v1"` in a page), which keeps the API key out of the page.
   */
  baseUrl: string;
  /** Sent as `authorization: Bearer <apiKey>`; omit it behind a proxy. */
  apiKey?: string;
  model: string;
  /** Extra request headers; they replace the defaults of the same name. */
  headers?: Record<string, string> | Headers | [string, string][];
  /**
   * The body field for `maxTokens`. By default `max_completion_tokens` for
   * api.openai.com and Azure OpenAI (their reasoning models refuse
   * `max_tokens`) and `max_tokens` for any other server (what local
   * OpenAI-compatible servers understand). Set it when a proxy hides which.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
}
/**
 * `apiKey` is sent as `x-api-key`. `baseUrl` (default
 * `"https://api.anthropic.com"`, without `/v1/messages`) may point at the
 * app's own proxy, which adds the key: then `apiKey` may be left out, so that
 * no key sits in the page. `headers` (e.g. `anthropic-beta`) replace the
 * defaults of the same name.
 */
export type AnthropicSummarizerOptions = {
  model: string;
  headers?: Record<string, string> | Headers | [string, string][];
} & ({ apiKey: string; baseUrl?: string } | { apiKey?: string; baseUrl: string });
/**
 * A summarizer that POSTs to `${baseUrl}/chat/completions` (OpenAI Chat
 * Completions, `stream: false`): the system prompt as a system message, the
 * prompt as a user message. The text is `choices[0].message.content`.
 * @throws TypeError on bad options, naming the field.
 */
export function openAiSummarizer(options: OpenAiSummarizerOptions): FetchSummarizer;
/**
 * A summarizer that POSTs to `${baseUrl ?? "https://api.anthropic.com"}/v1/messages`
 * with `anthropic-version: 2023-06-01` and
 * `anthropic-dangerous-direct-browser-access: true` (Anthropic requires it
 * from a browser). The text is the reply's `text` blocks, joined by "\n".
 * @throws TypeError on bad options, naming the field.
 */
export function anthropicSummarizer(options: AnthropicSummarizerOptions): FetchSummarizer;
"#;

const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// How much of a non-JSON body an error message quotes.
const QUOTED_BODY_CHARS: usize = 300;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    /// The prefix of the errors the summarizer rejects with.
    fn label(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI-compatible summarizer",
            Provider::Anthropic => "Anthropic summarizer",
        }
    }

    /// The prefix of the errors its factory throws.
    fn factory(self) -> &'static str {
        match self {
            Provider::OpenAi => "openAiSummarizer",
            Provider::Anthropic => "anthropicSummarizer",
        }
    }
}

/// Everything a call needs, fixed when the summarizer is created.
struct Endpoint {
    provider: Provider,
    url: JsString,
    model: JsValue,
    /// `[name, value]` pairs, already merged and checked by `Headers`.
    headers: Array,
    max_tokens_field: &'static str,
}

#[wasm_bindgen(js_name = openAiSummarizer, skip_typescript)]
pub fn open_ai_summarizer(options: JsValue) -> Result<Function, JsValue> {
    let provider = Provider::OpenAi;
    let options = Options::read(provider, options)?;
    let base_url = options.required("baseUrl", "a non-empty string")?;
    let model = options.required("model", "a non-empty string")?;
    let api_key = options.string("apiKey")?;
    let max_tokens_field = match options.string("maxTokensField")? {
        None => default_max_tokens_field(&base_url),
        Some(field) => match String::from(&field).as_str() {
            "max_tokens" => "max_tokens",
            "max_completion_tokens" => "max_completion_tokens",
            _ => {
                return Err(options.wrong(
                    "maxTokensField",
                    "\"max_tokens\" or \"max_completion_tokens\"",
                    quoted(&field),
                ))
            }
        },
    };
    let mut defaults = vec![("content-type", JsString::from("application/json"))];
    if let Some(key) = api_key {
        defaults.push(("authorization", JsString::from("Bearer ").concat(&key)));
    }
    let headers = options.headers(&defaults)?;
    Ok(summarizer(Endpoint {
        provider,
        url: join_url(&base_url, "/chat/completions"),
        model: model.into(),
        headers,
        max_tokens_field,
    }))
}

#[wasm_bindgen(js_name = anthropicSummarizer, skip_typescript)]
pub fn anthropic_summarizer(options: JsValue) -> Result<Function, JsValue> {
    let provider = Provider::Anthropic;
    let options = Options::read(provider, options)?;
    let base_url = options.string("baseUrl")?;
    let model = options.required("model", "a non-empty string")?;
    let api_key = match (options.string("apiKey")?, &base_url) {
        // Behind the app's own proxy, the proxy adds the key.
        (None, Some(_)) => None,
        (None, None) => Some(options.required(
            "apiKey",
            "a non-empty string (or give a baseUrl: your own proxy, which adds the key)",
        )?),
        (key, _) => key,
    };
    let mut defaults = vec![
        ("content-type", JsString::from("application/json")),
        ("anthropic-version", JsString::from(ANTHROPIC_VERSION)),
        (
            "anthropic-dangerous-direct-browser-access",
            JsString::from("true"),
        ),
    ];
    if let Some(key) = api_key {
        defaults.push(("x-api-key", key));
    }
    let headers = options.headers(&defaults)?;
    let base_url = base_url.unwrap_or_else(|| JsString::from(ANTHROPIC_BASE_URL));
    Ok(summarizer(Endpoint {
        provider,
        url: join_url(&base_url, "/v1/messages"),
        model: model.into(),
        headers,
        max_tokens_field: "max_tokens",
    }))
}

/// The JavaScript function: each call returns a Promise. The endpoint is
/// never mutated, so no borrow exists to be held across an await.
fn summarizer(endpoint: Endpoint) -> Function {
    let endpoint = Rc::new(endpoint);
    let call = Closure::<dyn Fn(JsValue) -> Promise>::new(move |request: JsValue| {
        future_to_promise(summarize(endpoint.clone(), request))
    });
    call.into_js_value().unchecked_into()
}

/// The `options` argument of a factory, for reading with errors that name
/// the factory and the field.
struct Options {
    provider: Provider,
    value: JsValue,
}

impl Options {
    fn read(provider: Provider, value: JsValue) -> Result<Options, JsValue> {
        if !value.is_object() {
            return Err(type_error(
                provider.factory(),
                InputError::WrongType {
                    path: FieldPath::argument("options"),
                    expected: "an object",
                    got: describe(&value),
                },
            ));
        }
        Ok(Options { provider, value })
    }

    fn path(key: &'static str) -> FieldPath {
        FieldPath::argument("options").field(key)
    }

    fn field(&self, key: &'static str) -> Result<JsValue, JsValue> {
        get(&self.value, key, || Self::path(key))
            .map_err(|e| type_error(self.provider.factory(), e))
    }

    fn wrong(&self, key: &'static str, expected: &'static str, got: String) -> JsValue {
        type_error(
            self.provider.factory(),
            InputError::WrongType {
                path: Self::path(key),
                expected,
                got,
            },
        )
    }

    /// A string option that must be given and not be empty.
    fn required(&self, key: &'static str, expected: &'static str) -> Result<JsString, JsValue> {
        let (raw, value) = self.read_string(key, expected)?;
        value.ok_or_else(|| self.wrong(key, expected, describe_for_error(&raw)))
    }

    /// An optional string option: `None` when `undefined`, `null` or empty.
    fn string(&self, key: &'static str) -> Result<Option<JsString>, JsValue> {
        Ok(self.read_string(key, "a string")?.1)
    }

    /// The option as given, and as a non-empty string.
    fn read_string(
        &self,
        key: &'static str,
        expected: &'static str,
    ) -> Result<(JsValue, Option<JsString>), JsValue> {
        let value = self.field(key)?;
        if value.is_undefined() || value.is_null() {
            return Ok((value, None));
        }
        match value.dyn_ref::<JsString>().cloned() {
            Some(s) if s.length() == 0 => Ok((value, None)),
            Some(s) => Ok((value, Some(s))),
            None => Err(self.wrong(key, expected, describe_for_error(&value))),
        }
    }

    /// The request headers: `defaults`, then `options.headers`, which
    /// replace defaults of the same name (case-insensitively). The engine's
    /// `Headers` checks names and values now, so a bad header is an error at
    /// creation rather than at the first call. Error messages never quote a
    /// header's value: it may be a key.
    fn headers(&self, defaults: &[(&str, JsString)]) -> Result<Array, JsValue> {
        let factory = self.provider.factory();
        let constructor = Reflect::get(&js_sys::global(), &JsValue::from_str("Headers"))
            .ok()
            .and_then(|c| c.dyn_into::<Function>().ok())
            .ok_or_else(|| no_fetch(factory))?;
        let headers = Reflect::construct(&constructor, &Array::new())?;
        let set = Reflect::get(&headers, &JsValue::from_str("set"))?.dyn_into::<Function>()?;
        for (name, value) in defaults {
            // Only the key can be refused: a line break, a non-Latin-1 letter.
            set.call2(&headers, &JsValue::from_str(name), value)
                .map_err(|_| {
                    js_sys::TypeError::new(&format!(
                        "{factory}: options.apiKey cannot be sent in the {name} header: it holds characters HTTP headers do not allow"
                    ))
                })?;
        }
        let given = self.field("headers")?;
        if !(given.is_undefined() || given.is_null()) {
            for (name, value) in self.header_entries(&given)? {
                set.call2(&headers, &name, &value).map_err(|_| {
                    js_sys::TypeError::new(&format!(
                        "{factory}: options.headers[{}] is not a valid header: a name is a token without spaces, and a value has no line breaks and only Latin-1 characters",
                        quoted(&name),
                    ))
                })?;
            }
        }
        array_from(&headers)
    }

    /// `[name, value]` pairs from a plain object of strings, or from an
    /// iterable of pairs (a `Headers`, a `Map`, an array of pairs).
    fn header_entries(&self, given: &JsValue) -> Result<Vec<(JsValue, JsValue)>, JsValue> {
        let factory = self.provider.factory();
        let unreadable = |thrown: JsValue| {
            type_error(
                factory,
                InputError::Unreadable {
                    path: Self::path("headers"),
                    reason: thrown_message(&thrown),
                },
            )
        };
        let wrong = || {
            self.wrong(
                "headers",
                "an object of strings, a Headers or an array of [name, value] pairs",
                describe(given),
            )
        };
        if !given.is_object() {
            return Err(wrong());
        }
        let iterator = Reflect::get(given, &js_sys::Symbol::iterator()).map_err(unreadable)?;
        if iterator.is_function() {
            let entries = array_from(given).map_err(unreadable)?;
            let mut out = Vec::with_capacity(entries.length() as usize);
            for (i, entry) in entries.iter().enumerate() {
                out.push(string_pair(&entry).ok_or_else(|| {
                    js_sys::TypeError::new(&format!(
                        "{factory}: options.headers[{i}] must be a [name, value] pair of strings"
                    ))
                })?);
            }
            return Ok(out);
        }
        let entries = object_entries(given).map_err(unreadable)?;
        let mut out = Vec::with_capacity(entries.length() as usize);
        for entry in entries.iter() {
            // Object.entries gives fresh [string, value] arrays.
            let name = Reflect::get_u32(&entry, 0)?;
            let value = Reflect::get_u32(&entry, 1)?;
            if !value.is_string() {
                return Err(js_sys::TypeError::new(&format!(
                    "{factory}: options.headers[{}] must be a string, got {}",
                    quoted(&name),
                    describe(&value)
                ))
                .into());
            }
            out.push((name, value));
        }
        if out.is_empty() && !is_plain_object(given) {
            // Not a record of headers, and nothing to read from it.
            return Err(wrong());
        }
        Ok(out)
    }
}

/// `[name, value]`, both strings; `None` for anything else.
fn string_pair(entry: &JsValue) -> Option<(JsValue, JsValue)> {
    let path = || FieldPath::argument("headers");
    let pair = JsArray::new(entry, path).ok()??;
    if pair.len() != 2 {
        return None;
    }
    let name = pair.get(0, path).ok()?;
    let value = pair.get(1, path).ok()?;
    (name.is_string() && value.is_string()).then_some((name, value))
}

/// An object literal (or `Object.create(null)`), not an instance of a class.
fn is_plain_object(value: &JsValue) -> bool {
    match Reflect::get_prototype_of(value) {
        Ok(prototype) => {
            prototype.is_null() || Reflect::get_prototype_of(&prototype).is_ok_and(|p| p.is_null())
        }
        Err(_) => false,
    }
}

fn type_error(factory: &str, error: InputError) -> JsValue {
    js_sys::TypeError::new(&format!("{factory}: {error}")).into()
}

fn no_fetch(label: &str) -> JsValue {
    js_sys::Error::new(&format!(
        "{label}: this environment has no global fetch and Headers (browsers, workers and Node ≥ 18 have them)"
    ))
    .into()
}

/// `describe`, but an empty string is `""`. Other strings are not quoted:
/// an option in the wrong place may hold a key.
fn describe_for_error(value: &JsValue) -> String {
    match value.as_string() {
        Some(s) if s.is_empty() => "\"\"".to_owned(),
        _ => describe(value),
    }
}

fn quoted(value: &JsValue) -> String {
    quoted_str(&value.as_string().unwrap_or_default())
}

fn quoted_str(s: &str) -> String {
    agent_compaction_core::js::string::quote_str(s)
}

/// `base` without its trailing slashes, then `path`.
fn join_url(base: &JsString, path: &str) -> JsString {
    let mut end = base.length();
    while end > 0 && base.char_code_at(end - 1) == f64::from(b'/') {
        end -= 1;
    }
    base.slice(0, end).concat(&JsString::from(path))
}

/// OpenAI's own API refuses `max_tokens` for its reasoning models; every
/// other OpenAI-compatible server knows `max_tokens`, and not all of them
/// know `max_completion_tokens`.
fn default_max_tokens_field(base_url: &JsString) -> &'static str {
    let url = String::from(base_url).to_ascii_lowercase();
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let Some(rest) = rest else {
        // A relative URL: the page's own proxy, which could be anything.
        return "max_tokens";
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = host_port.split(':').next().unwrap_or_default();
    if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// What a call reads from the request.
struct Request {
    system_prompt: JsString,
    prompt: JsString,
    max_tokens: f64,
    signal: JsValue,
}

impl Request {
    fn read(provider: Provider, request: &JsValue) -> Result<Request, JsValue> {
        let label = provider.label();
        let path = |key: &'static str| FieldPath::argument("request").field(key);
        let fail = |e: InputError| type_error(label, e);
        if !request.is_object() {
            return Err(fail(InputError::WrongType {
                path: FieldPath::argument("request"),
                expected: "an object",
                got: describe(request),
            }));
        }
        let string = |key: &'static str| -> Result<JsString, JsValue> {
            get(request, key, || path(key))
                .map_err(fail)?
                .dyn_into::<JsString>()
                .map_err(|v| {
                    fail(InputError::WrongType {
                        path: path(key),
                        expected: "a string",
                        got: describe(&v),
                    })
                })
        };
        let system_prompt = string("systemPrompt")?;
        let prompt = string("prompt")?;
        let max_tokens = get(request, "maxTokens", || path("maxTokens")).map_err(fail)?;
        // Providers want an integer; the budget is a ceiling, so round down.
        let max_tokens = match max_tokens.as_f64().map(f64::floor) {
            Some(n) if n.is_finite() && n >= 1.0 => n,
            _ => {
                return Err(fail(InputError::WrongType {
                    path: path("maxTokens"),
                    expected: "a number ≥ 1",
                    got: match max_tokens.as_f64() {
                        Some(n) => agent_compaction_core::js::number::number_to_string(n),
                        None => describe(&max_tokens),
                    },
                }))
            }
        };
        let signal = get(request, "signal", || path("signal")).map_err(fail)?;
        Ok(Request {
            system_prompt,
            prompt,
            max_tokens,
            signal,
        })
    }
}

async fn summarize(endpoint: Rc<Endpoint>, request: JsValue) -> Result<JsValue, JsValue> {
    let provider = endpoint.provider;
    let label = provider.label();
    let request = Request::read(provider, &request)?;
    let body = json_stringify(&request_body(&endpoint, &request))?;

    let global = js_sys::global();
    let fetch = Reflect::get(&global, &JsValue::from_str("fetch"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| no_fetch(label))?;
    let mut init = vec![
        ("method", JsValue::from_str("POST")),
        (
            "headers",
            endpoint.headers.slice(0, endpoint.headers.length()).into(),
        ),
        ("body", body),
    ];
    if !(request.signal.is_undefined() || request.signal.is_null()) {
        init.push(("signal", request.signal.clone()));
    }
    let init = crate::js::values::object(&init);

    let failed = |thrown: JsValue| -> JsValue {
        if is_abort(&thrown, &request.signal) {
            thrown
        } else {
            network_error(label, &endpoint.url, thrown)
        }
    };
    // `Promise.resolve` also takes a polyfill's thenable.
    let response = fetch
        .call2(&global, &endpoint.url, &init)
        .map(|p| Promise::resolve(&p))
        .map_err(failed)?;
    let response = JsFuture::from(response).await.map_err(failed)?;

    let status = prop(&response, "status").as_f64().unwrap_or(0.0);
    let text = Reflect::get(&response, &JsValue::from_str("text"))
        .and_then(|f| f.dyn_into::<Function>())
        .and_then(|f| f.call0(&response))
        .map(|p| Promise::resolve(&p))
        .map_err(failed)?;
    let text = JsFuture::from(text).await.map_err(failed)?;
    let parsed = json_parse(&text).ok();
    let ok = (200.0..300.0).contains(&status);

    let Some(parsed) = parsed.filter(|p| p.is_object()) else {
        let quoted = quote_body(&text);
        return Err(if ok {
            http_error(
                label,
                status,
                &format!("the response is not JSON: {quoted}"),
            )
        } else if quoted.is_empty() {
            let status_text = prop(&response, "statusText").as_string();
            http_error(
                label,
                status,
                status_text.as_deref().unwrap_or("no error message"),
            )
        } else {
            http_error(label, status, &quoted)
        });
    };
    let error = prop(&parsed, "error");
    if !ok || !(error.is_undefined() || error.is_null()) {
        return Err(http_error(label, status, &provider_message(&parsed, &text)));
    }

    let (text, stop) = match provider {
        Provider::OpenAi => open_ai_text(&parsed),
        Provider::Anthropic => anthropic_text(&parsed),
    };
    let text = text.filter(|t| t.trim().length() > 0).ok_or_else(|| {
        let mut message = format!("{label}: no text in the response");
        if let Some((key, value)) = stop {
            message.push_str(&format!(" ({key}: {})", quoted_str(&value)));
        }
        JsValue::from(js_sys::Error::new(&message))
    })?;
    let usage = prop(&parsed, "usage");
    let mut result = vec![("text", JsValue::from(text))];
    if usage.is_object() {
        result.push(("usage", map_usage(provider, &usage)));
    }
    Ok(crate::js::values::object(&result))
}

fn request_body(endpoint: &Endpoint, request: &Request) -> JsValue {
    use crate::js::values::object;
    let user = object(&[
        ("role", "user".into()),
        ("content", request.prompt.clone().into()),
    ]);
    let has_system = request.system_prompt.length() > 0;
    let max_tokens = JsValue::from_f64(request.max_tokens);
    match endpoint.provider {
        Provider::OpenAi => {
            let messages = Array::new();
            if has_system {
                messages.push(&object(&[
                    ("role", "system".into()),
                    ("content", request.system_prompt.clone().into()),
                ]));
            }
            messages.push(&user);
            object(&[
                ("model", endpoint.model.clone()),
                ("messages", messages.into()),
                (endpoint.max_tokens_field, max_tokens),
                ("stream", false.into()),
            ])
        }
        Provider::Anthropic => {
            let mut body = vec![
                ("model", endpoint.model.clone()),
                ("max_tokens", max_tokens),
            ];
            // Nothing to send; providers refuse empty text blocks.
            if has_system {
                body.push(("system", request.system_prompt.clone().into()));
            }
            body.push(("messages", Array::of1(&user).into()));
            object(&body)
        }
    }
}

/// `value[key]`, or `undefined` when it cannot be read (a primitive, a
/// throwing getter): for parsed JSON and fetch's own objects.
fn prop(value: &JsValue, key: &str) -> JsValue {
    if !value.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn prop_string(value: &JsValue, key: &str) -> Option<JsString> {
    prop(value, key).dyn_into::<JsString>().ok()
}

fn items(value: &JsValue) -> Vec<JsValue> {
    if Array::is_array(value) {
        value.unchecked_ref::<Array>().iter().collect()
    } else {
        Vec::new()
    }
}

/// The reply's text and, for the error message when there is none, why the
/// model stopped.
type Reply = (Option<JsString>, Option<(&'static str, String)>);

fn open_ai_text(body: &JsValue) -> Reply {
    let choice = items(&prop(body, "choices")).into_iter().next();
    let choice = choice.unwrap_or(JsValue::UNDEFINED);
    let stop = prop_string(&choice, "finish_reason").map(|r| ("finish_reason", String::from(&r)));
    let content = prop(&prop(&choice, "message"), "content");
    let text = match content.dyn_into::<JsString>() {
        Ok(text) => Some(text),
        // Some servers send content parts: [{ type: "text", text }].
        Err(content) => join_text_blocks(&content, ""),
    };
    (text, stop)
}

fn anthropic_text(body: &JsValue) -> Reply {
    let stop = prop_string(body, "stop_reason").map(|r| ("stop_reason", String::from(&r)));
    (join_text_blocks(&prop(body, "content"), "\n"), stop)
}

/// The `text` of the `type: "text"` blocks, joined; `None` when there are none.
fn join_text_blocks(content: &JsValue, separator: &str) -> Option<JsString> {
    let mut joined: Option<JsString> = None;
    for block in items(content) {
        if prop_string(&block, "type").is_some_and(|t| t == "text") {
            if let Some(text) = prop_string(&block, "text") {
                joined = Some(match joined {
                    None => text,
                    Some(j) => j.concat(&JsString::from(separator)).concat(&text),
                });
            }
        }
    }
    joined
}

/// A token count from the reply: anything but a finite number is 0.
fn count(value: &JsValue, key: &str) -> f64 {
    prop(value, key)
        .as_f64()
        .filter(|n| n.is_finite())
        .unwrap_or(0.0)
}

/// The provider's usage in pi-ai's `Usage` shape.
fn map_usage(provider: Provider, usage: &JsValue) -> JsValue {
    use crate::js::values::object;
    let (input, output, cache_read, cache_write, total) = match provider {
        Provider::OpenAi => {
            // As pi-ai's openai-completions provider: `prompt_tokens`
            // includes the cached ones; some servers (OpenRouter) count
            // cache writes among `cached_tokens`; DeepSeek reports hits as
            // `prompt_cache_hit_tokens`.
            let details = prop(usage, "prompt_tokens_details");
            let prompt = count(usage, "prompt_tokens");
            let cached = if prop(&details, "cached_tokens").as_f64().is_some() {
                count(&details, "cached_tokens")
            } else {
                count(usage, "prompt_cache_hit_tokens")
            };
            let cache_write = count(&details, "cache_write_tokens");
            let cache_read = (cached - cache_write).max(0.0);
            let input = (prompt - cache_read - cache_write).max(0.0);
            let output = count(usage, "completion_tokens");
            let sum = input + output + cache_read + cache_write;
            let total = match prop(usage, "total_tokens").as_f64() {
                Some(t) if t.is_finite() && t > 0.0 => t,
                _ => sum,
            };
            (input, output, cache_read, cache_write, total)
        }
        Provider::Anthropic => {
            // `input_tokens` already excludes cache reads and writes.
            let input = count(usage, "input_tokens");
            let output = count(usage, "output_tokens");
            let cache_read = count(usage, "cache_read_input_tokens");
            let cache_write = count(usage, "cache_creation_input_tokens");
            let total = input + output + cache_read + cache_write;
            (input, output, cache_read, cache_write, total)
        }
    };
    let zero = || JsValue::from_f64(0.0);
    object(&[
        ("input", input.into()),
        ("output", output.into()),
        ("cacheRead", cache_read.into()),
        ("cacheWrite", cache_write.into()),
        ("totalTokens", total.into()),
        (
            "cost",
            object(&[
                ("input", zero()),
                ("output", zero()),
                ("cacheRead", zero()),
                ("cacheWrite", zero()),
                ("total", zero()),
            ]),
        ),
    ])
}

/// The provider's own error message: OpenAI's and Anthropic's
/// `error.message`, a bare `error` string (Ollama, some proxies), vLLM's
/// top-level `message`, FastAPI's `detail`; else the body itself.
fn provider_message(body: &JsValue, text: &JsValue) -> String {
    let error = prop(body, "error");
    let found = error
        .as_string()
        .or_else(|| prop(&error, "message").as_string())
        .or_else(|| prop(body, "message").as_string())
        .or_else(|| prop(body, "detail").as_string())
        .filter(|m| !m.trim().is_empty());
    found.unwrap_or_else(|| quote_body(text))
}

/// The start of a body, for an error message.
fn quote_body(text: &JsValue) -> String {
    let text = text.as_string().unwrap_or_default();
    let text = text.trim();
    match text.char_indices().nth(QUOTED_BODY_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

fn http_error(label: &str, status: f64, message: &str) -> JsValue {
    let status_text = agent_compaction_core::js::number::number_to_string(status);
    let error = js_sys::Error::new(&format!("{label}: HTTP {status_text}: {message}"));
    let _ = Reflect::set(&error, &JsValue::from_str("status"), &status.into());
    error.into()
}

/// fetch's rejection on a network failure, CORS refusal or bad URL, kept as
/// the `cause`. Node's "fetch failed" hides the reason in its own `cause`.
fn network_error(label: &str, url: &JsString, thrown: JsValue) -> JsValue {
    let mut reason = thrown_message(&thrown);
    if let Some(inner) = prop_string(&prop(&thrown, "cause"), "message") {
        reason.push_str(&format!(" ({})", String::from(&inner)));
    }
    let error = js_sys::Error::new(&format!(
        "{label}: POST {} failed: {reason}",
        String::from(url)
    ));
    error.set_cause(&thrown);
    error.into()
}

/// A cancellation: fetch rejected because the caller's signal aborted (with
/// an `AbortError`, or with the reason given to `abort(reason)`).
fn is_abort(thrown: &JsValue, signal: &JsValue) -> bool {
    prop(signal, "aborted").is_truthy()
        || prop_string(thrown, "name").is_some_and(|name| name == "AbortError")
}
