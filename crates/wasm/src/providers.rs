//! The ready-made summarizer callbacks, `openAiSummarizer`,
//! `anthropicSummarizer`, `anthropicCompaction` and
//! `openAiResponsesCompaction`: each returns a `summarize(request)` function that
//! calls a provider with the page's own global `fetch` (windows, workers,
//! Node ≥ 18), so the app's network stack, proxies and CORS rules apply.
//!
//! Everything is read through `Reflect` (no web-sys features needed), and
//! the prompts and the summary are never copied into wasm memory: they go
//! from the request object into the JSON body, and from the parsed reply
//! into the result, as the engine's own strings.
//!
//! The factories check the options at once; the returned function keeps
//! what they read.
//!
//! Every choice (URL, token-limit field, headers, body shape, where the
//! reply's text is, usage, error texts) is made by the core's
//! `compaction::providers`; this file converts, calls `fetch`, awaits it and
//! passes aborts on. The choices (package/summarizers.d.ts documents them):
//! - OpenAI-compatible: the token limit is sent as `max_completion_tokens` to
//!   OpenAI itself (`api.openai.com`, `*.openai.azure.com`: its reasoning
//!   models refuse `max_tokens`) and as `max_tokens` to every other server
//!   (local servers such as llama.cpp, Ollama, LM Studio and older vLLM only
//!   know that one); `maxTokensField` overrides the guess, e.g. for a proxy in
//!   front of OpenAI.
//! - Usage follows pi-ai: `input` excludes cached prompt tokens, which are
//!   `cacheRead`; cost is zero (the package knows no prices).
//! - Anthropic's text is its `text` blocks joined with "\n", as pi joins them.
//! - With `request.context` and `request.instruction`, the request repeats
//!   the conversation as pi-ai sent it, so that the provider serves it from
//!   its prompt cache (the core's `providers::prefix`); a reply to it
//!   without a summary is asked again in the serialized form.
//! - An abort propagates fetch's own rejection (an `AbortError`, or the
//!   signal's reason) unchanged: the compactor must see a cancellation, not a
//!   failure.

use crate::js::errors::thrown_message;
use crate::js::errors::{bad_input, describe, unreadable, wrong_type};
use crate::js::message_access::get;
use crate::js::message_access::JsArray;
use crate::js::strings::to_js_str;
use crate::js::strings::to_js_string;
use crate::js::values::read_options;
use crate::js::values::{prop, read_fields, shape, JsJson, Opt};
use crate::message::convert_to_llm;
use agent_compaction_core::compaction::providers::prefix::{self, Source};
use agent_compaction_core::compaction::providers::responses;
use agent_compaction_core::compaction::providers::Json;
use agent_compaction_core::compaction::providers::{self as core, MaxTokensField, Provider};
use agent_compaction_core::compaction::providers::{HeaderEntry, HeaderValue};
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::string::JsStr;
use js_sys::Promise;
use js_sys::{Array, Function, JsString, Reflect};
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

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = sanitizeSurrogates)]
    fn sanitize_surrogates(text: &JsString) -> JsString;
}

/// Everything a call needs, fixed when the summarizer is created.
struct Endpoint {
    provider: Provider,
    url: JsString,
    /// The URL as the core's string, for error messages.
    url_str: JsStr,
    model: JsValue,
    /// The model's name, to tell its own messages in a context.
    model_id: String,
    /// `[name, value]` pairs, already merged and checked by `Headers`.
    headers: Array,
    max_tokens_field: MaxTokensField,
    /// `openAiResponsesCompaction`'s summarizer for requests without
    /// `covered`.
    readable: Option<Function>,
}

#[wasm_bindgen(js_name = openAiSummarizer, skip_typescript)]
pub fn open_ai_summarizer(options: JsValue) -> Result<Function, JsValue> {
    factory(Provider::OpenAi, options)
}

#[wasm_bindgen(js_name = anthropicSummarizer, skip_typescript)]
pub fn anthropic_summarizer(options: JsValue) -> Result<Function, JsValue> {
    factory(Provider::Anthropic, options)
}

/// A summarizer that asks Anthropic's on-demand compaction for the summary:
/// the block comes back as the summary's text, and as its `provider` part.
#[wasm_bindgen(js_name = anthropicCompaction, skip_typescript)]
pub fn anthropic_compaction(options: JsValue) -> Result<Function, JsValue> {
    factory(Provider::AnthropicCompaction, options)
}

/// A summarizer that asks OpenAI's `/responses/compact` to compact what a
/// compaction hides: the encrypted item comes back as the summary's
/// `provider` record, with a note as its text.
#[wasm_bindgen(js_name = openAiResponsesCompaction, skip_typescript)]
pub fn open_ai_responses_compaction(options: JsValue) -> Result<Function, JsValue> {
    factory(Provider::OpenAiResponsesCompaction, options)
}

/// A factory: the options checked (the core reads them), the headers
/// merged, the summarizer made.
fn factory(provider: Provider, options: JsValue) -> Result<Function, JsValue> {
    let o = read_options(&options, |options, r| {
        core::factory_options(provider, options, r, to_js_str)
    })
    .map_err(|e| option_error(provider, e))?;
    let headers = headers(provider, &options, o.api_key.as_ref())?;
    let url = core::endpoint_url(provider, o.base_url.as_ref().map(to_js_str).as_ref());
    let endpoint = Rc::new(Endpoint {
        provider,
        url: to_js_string(&url),
        url_str: url,
        model_id: o.model.as_string().unwrap_or_default(),
        model: o.model.into(),
        headers,
        max_tokens_field: o.max_tokens_field,
        readable: o.readable,
    });
    // The JavaScript function: each call returns a Promise.
    let call = Closure::<dyn Fn(JsValue) -> Promise>::new(move |request: JsValue| {
        future_to_promise(summarize(endpoint.clone(), request))
    });
    let call: Function = call.into_js_value().unchecked_into();
    if core::asks_once(provider) {
        Reflect::set(&call, &JsValue::from_str("oneRequest"), &JsValue::TRUE)?;
    }
    Ok(call)
}

/// The request headers: the core's defaults, then `options.headers`,
/// which replace defaults of the same name (case-insensitively). The
/// engine's `Headers` checks names and values now, so a bad header is an
/// error at creation rather than at the first call. Error messages never
/// quote a header's value: it may be a key.
fn headers(
    provider: Provider,
    options: &JsValue,
    api_key: Option<&JsString>,
) -> Result<Array, JsValue> {
    let constructor = prop(&js_sys::global(), "Headers")
        .dyn_into::<Function>()
        .ok()
        .ok_or_else(|| no_fetch(provider))?;
    let headers = Reflect::construct(&constructor, &Array::new())?;
    let set = Reflect::get(&headers, &JsValue::from_str("set"))?.dyn_into::<Function>()?;
    for (name, value) in core::default_headers(provider, api_key.is_some()) {
        let value = match (value, api_key) {
            (HeaderValue::Fixed(text), _) => JsString::from(text),
            (HeaderValue::ApiKey { prefix }, Some(key)) => JsString::from(prefix).concat(key),
            (HeaderValue::ApiKey { .. }, None) => continue,
        };
        // Only the key can be refused: a line break, a non-Latin-1 letter.
        set.call2(&headers, &JsValue::from_str(name), &value)
            .map_err(|_| js_sys::TypeError::new(&core::bad_key_header(provider, name)))?;
    }
    let given = get(options, "headers", || core::option_path("headers"))
        .map_err(|e| option_error(provider, e))?;
    if !(given.is_undefined() || given.is_null()) {
        for (name, value) in header_entries(provider, &given)? {
            set.call2(&headers, &name, &value).map_err(|_| {
                js_sys::TypeError::new(&core::bad_header(provider, &string_of(&name)))
            })?;
        }
    }
    array_from(&headers)
}

/// `[name, value]` pairs from a plain object of strings, or from an
/// iterable of pairs (a `Headers`, a `Map`, an array of pairs).
fn header_entries(provider: Provider, given: &JsValue) -> Result<Vec<(JsValue, JsValue)>, JsValue> {
    let path = || core::option_path("headers");
    let unreadable = |thrown: JsValue| option_error(provider, unreadable(path(), &thrown));
    if !given.is_object() {
        return Err(option_error(
            provider,
            wrong_type(path(), core::HEADERS_EXPECTED, given),
        ));
    }
    let iterator = Reflect::get(given, &js_sys::Symbol::iterator()).map_err(unreadable)?;
    let iterable = iterator.is_function();
    let entries = if iterable {
        array_from(given)
    } else {
        object_entries(given)
    };
    let mut read = Vec::new();
    for entry in entries.map_err(unreadable)?.iter() {
        read.push(if iterable {
            string_pair(&entry).map_or(HeaderEntry::NotPair, |(n, v)| HeaderEntry::Pair(n, v))
        } else {
            // Object.entries gives fresh [string, value] arrays.
            let (name, value) = (Reflect::get_u32(&entry, 0)?, Reflect::get_u32(&entry, 1)?);
            match value.is_string() {
                true => HeaderEntry::Pair(name, value),
                false => HeaderEntry::NotString {
                    name: string_of(&name),
                    got: describe(&value),
                },
            }
        });
    }
    let iterable_or_plain = iterable || is_plain_object(given);
    core::header_pairs(provider, read, iterable_or_plain, || describe(given))
        .map_err(|message| js_sys::TypeError::new(&message).into())
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

fn option_error(provider: Provider, error: InputError) -> JsValue {
    bad_input(&core::factory_error(provider, &error), error.is_range())
}

/// A call's bad request as the error its promise rejects with.
fn call_error(provider: Provider, error: &InputError) -> JsValue {
    bad_input(&core::call_error(provider, error), error.is_range())
}

fn no_fetch(provider: Provider) -> JsValue {
    js_sys::Error::new(&core::no_fetch(provider.label())).into()
}

fn string_of(value: &JsValue) -> String {
    value.as_string().unwrap_or_default()
}

async fn summarize(endpoint: Rc<Endpoint>, raw: JsValue) -> Result<JsValue, JsValue> {
    let provider = endpoint.provider;
    let request =
        read_fields("request", &raw, core::read_request).map_err(|e| call_error(provider, &e))?;
    let fetch = prop(&js_sys::global(), "fetch")
        .dyn_into::<Function>()
        .ok()
        .ok_or_else(|| no_fetch(provider))?;
    let signal = &request.signal.0;
    if provider == Provider::OpenAiResponsesCompaction {
        return compact(&endpoint, &fetch, &request, raw).await;
    }
    let prefix = prefix::body(
        provider,
        endpoint.max_tokens_field,
        (endpoint.model.clone(), &endpoint.model_id),
        request.max_tokens,
        &JsJson(request.context.0.clone()),
        &JsJson(request.instruction.0.clone()),
    );
    if let Some(body) = prefix {
        match post(&endpoint, &fetch, shape(body), signal, true).await {
            Err(None) => {}
            answer => return answer.map_err(Option::unwrap_or_default),
        }
    }
    post(
        &endpoint,
        &fetch,
        request_body(&endpoint, &request),
        signal,
        false,
    )
    .await
    .map_err(Option::unwrap_or_default)
}

/// OpenAI's compaction of `covered` (pi-ai messages, as `convertToLlm`
/// gives them, except a previous summary that is OpenAI's compaction); a
/// request without it (a branch summary) goes to `readable`.
async fn compact(
    endpoint: &Endpoint,
    fetch: &Function,
    request: &core::SummarizeRequest<Opt>,
    raw: JsValue,
) -> Result<JsValue, JsValue> {
    let covered = &request.covered.0;
    if covered.is_undefined() || covered.is_null() {
        return match &endpoint.readable {
            Some(readable) => {
                let answer = readable.call1(&JsValue::UNDEFINED, &raw)?;
                JsFuture::from(Promise::resolve(&answer)).await
            }
            None => Err(js_sys::Error::new(responses::NOT_COVERED).into()),
        };
    }
    let path = || FieldPath::argument("request").field("covered");
    let covered = JsArray::new(covered, path)
        .and_then(|a| a.ok_or_else(|| wrong_type(path(), "an array", covered)))
        .and_then(|a| a.slice(0, a.len()))
        .map_err(|e| call_error(endpoint.provider, &e))?;
    // The messages as the model reads them; the previous summary, which
    // comes first, as it is when it is OpenAI's compaction.
    let first = covered.get(0);
    let sealed = !first.is_undefined() && responses::sealed(&JsJson(first.clone())).is_some();
    let rest = convert_to_llm(covered.slice(u32::from(sealed), covered.length()).into())?;
    let list = match sealed {
        true => Array::of1(&first).concat(&rest),
        false => rest,
    };
    let body = responses::body(
        (endpoint.model.clone(), &endpoint.model_id),
        &JsJson(list.into()),
    )
    .ok_or_else(|| JsValue::from(js_sys::Error::new(responses::NOTHING_TO_COMPACT)))?;
    let signal = &request.signal.0;
    let (status, text, response) = send(endpoint, fetch, shape(body), signal).await?;
    let parsed = json_parse(&text).ok().map(JsJson);
    let answer = core::checked(
        endpoint.provider,
        status,
        parsed,
        || text.as_string().unwrap_or_default(),
        || prop(&response, "statusText").as_string(),
    )
    .and_then(|parsed| {
        let usage = parsed.get("usage");
        let usage = usage
            .is_object()
            .then(|| shapes::usage(&core::map_usage(endpoint.provider, &usage)));
        Ok((responses::read(&parsed)?, usage))
    })
    .map_err(failure_error)?;
    let (compacted, usage) = answer;
    let compacted = responses::Compacted {
        input: compacted.input.into_iter().map(|j| j.0).collect(),
        id: compacted.id.0,
        encrypted: compacted.encrypted.0,
    };
    Ok(shape(responses::result_shape(
        compacted,
        endpoint.model.clone(),
        usage,
    )))
}

/// An `Error` with the failure's message, and its HTTP `status` when it has one.
fn failure_error(failure: core::Failure) -> JsValue {
    let error = js_sys::Error::new(&failure.message);
    if let Some(status) = failure.status {
        let _ = Reflect::set(&error, &JsValue::from_str("status"), &status.into());
    }
    error.into()
}

/// One POST of `body`: the status, the body's text and the response.
async fn send(
    endpoint: &Endpoint,
    fetch: &Function,
    body: JsValue,
    signal: &JsValue,
) -> Result<(f64, JsValue, JsValue), JsValue> {
    let label = endpoint.provider.label();
    let init = shape(core::fetch_init(
        endpoint.headers.slice(0, endpoint.headers.length()).into(),
        json_stringify(&body)?,
        (!(signal.is_undefined() || signal.is_null())).then(|| signal.clone()),
    ));

    let failed = |thrown: JsValue| -> JsValue {
        let name = prop(&thrown, "name").as_string();
        if core::is_abort(prop(signal, "aborted").is_truthy(), name.as_deref()) {
            return thrown;
        }
        let inner = JsJson(prop(&thrown, "cause")).get("message").string();
        let message = core::network_error(
            label,
            &endpoint.url_str,
            &thrown_message(&thrown),
            inner.as_deref(),
        );
        let error = js_sys::Error::new(&message);
        error.set_cause(&thrown);
        error.into()
    };
    // `Promise.resolve` also takes a polyfill's thenable.
    let response = fetch
        .call2(&js_sys::global(), &endpoint.url, &init)
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
    Ok((status, text, response))
}

/// One POST of `body` and its reply read; `Err(None)` when a reply to the
/// prefix form has no summary and is to be asked again serialized.
async fn post(
    endpoint: &Endpoint,
    fetch: &Function,
    body: JsValue,
    signal: &JsValue,
    prefix: bool,
) -> Result<JsValue, Option<JsValue>> {
    let provider = endpoint.provider;
    let (status, text, response) = send(endpoint, fetch, body, signal).await?;
    let parsed = json_parse(&text).ok().map(JsJson);
    let reply = core::read_reply(
        provider,
        prefix,
        status,
        parsed,
        || text.as_string().unwrap_or_default(),
        || prop(&response, "statusText").as_string(),
    )
    .map_err(|failure| {
        if prefix && prefix::retry_serialized(&failure) {
            return None;
        }
        Some(failure_error(failure))
    })?;
    let reply = core::Reply {
        text: reply.text.into(),
        usage: reply.usage,
        signature: reply.signature.map(JsValue::from),
    };
    Ok(shape(core::result_shape(
        provider,
        reply,
        endpoint.model.clone(),
    )))
}

/// The body in the core's shape, with the engine's strings plugged in.
fn request_body(endpoint: &Endpoint, request: &core::SummarizeRequest<Opt>) -> JsValue {
    shape(core::body_shape(
        endpoint.provider,
        endpoint.max_tokens_field,
        request.system_prompt.length() > 0,
        endpoint.model.clone(),
        request.system_prompt.clone().into(),
        request.prompt.clone().into(),
        request.max_tokens,
    ))
}

/// The request's `context` as the prefix form reads it.
impl Source for JsJson {
    type Value = JsValue;
    fn value(self) -> JsValue {
        self.0
    }
    fn into_text(self) -> Option<JsString> {
        self.0.dyn_into().ok()
    }
    fn text_value(text: JsString) -> JsValue {
        text.into()
    }
    fn list(&self) -> Option<Vec<JsJson>> {
        // The engine's slice: a proxy's throwing trap is caught there.
        let path = || FieldPath::argument("request").field("context");
        let array = JsArray::new(&self.0, path).ok()??;
        let items = array.slice(0, array.len()).ok()?;
        Some(items.iter().map(JsJson).collect())
    }
    fn is_truthy(&self) -> bool {
        self.0.is_truthy()
    }
    fn is_empty(text: &JsString) -> bool {
        text.length() == 0
    }
    fn text_of(text: &str) -> JsString {
        text.into()
    }
    fn sanitized(text: &JsString) -> JsString {
        sanitize_surrogates(text)
    }
    fn stringified(&self) -> Option<JsValue> {
        json_stringify(&self.0).ok()
    }
    fn parsed(text: &JsString) -> Option<JsJson> {
        json_parse(text).ok().map(JsJson)
    }
}
