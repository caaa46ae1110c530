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
//! The factories check the options at once and hand what they read, as a
//! plain object, to the returned function.
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
//! - An abort propagates fetch's own rejection (an `AbortError`, or the
//!   signal's reason) unchanged: the compactor must see a cancellation, not a
//!   failure.

use crate::js::errors::describe;
use crate::js::errors::thrown_message;
use crate::js::message_access::get;
use crate::js::message_access::JsArray;
use crate::js::strings::to_js_str;
use crate::js::strings::to_js_string;
use crate::js::values::object;
use crate::js::values::read_options;
use crate::js::values::{read_fields, shape, Opt};
use agent_compaction_core::compaction::providers::HeaderValue;
use agent_compaction_core::compaction::providers::Json;
use agent_compaction_core::compaction::providers::{self as core, MaxTokensField, Provider};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::string::JsStr;
use js_sys::Promise;
use js_sys::{Array, Function, JsString, Reflect};
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

/// Everything a call needs, fixed when the summarizer is created.
struct Endpoint {
    provider: Provider,
    url: JsString,
    /// The URL as the core's string, for error messages.
    url_str: JsStr,
    model: JsValue,
    /// `[name, value]` pairs, already merged and checked by `Headers`.
    headers: Array,
    max_tokens_field: MaxTokensField,
}

/// The endpoint as the factory hands it to the call: a plain object.
fn endpoint_object(
    provider: Provider,
    base_url: Option<&JsString>,
    model: JsString,
    headers: Array,
    max_tokens_field: MaxTokensField,
) -> JsValue {
    let url = core::endpoint_url(provider, base_url.map(to_js_str).as_ref());
    let provider = match provider {
        Provider::OpenAi => 0,
        Provider::Anthropic => 1,
    };
    let field = match max_tokens_field {
        MaxTokensField::MaxTokens => 0,
        MaxTokensField::MaxCompletionTokens => 1,
    };
    object(&[
        ("provider", provider.into()),
        ("url", to_js_string(&url).into()),
        ("model", model.into()),
        ("headers", headers.into()),
        ("maxTokensField", field.into()),
    ])
}

impl Endpoint {
    /// What `endpoint_object` wrote.
    fn read(endpoint: &JsValue) -> Endpoint {
        let field = |key: &str| prop(endpoint, key);
        let url: JsString = field("url").unchecked_into();
        Endpoint {
            provider: match field("provider").as_f64() {
                Some(1.0) => Provider::Anthropic,
                _ => Provider::OpenAi,
            },
            url_str: to_js_str(&url),
            url,
            model: field("model"),
            headers: field("headers").unchecked_into(),
            max_tokens_field: match field("maxTokensField").as_f64() {
                Some(1.0) => MaxTokensField::MaxCompletionTokens,
                _ => MaxTokensField::MaxTokens,
            },
        }
    }
}

#[wasm_bindgen(js_name = openAiSummarizer, skip_typescript)]
pub fn open_ai_summarizer(options: JsValue) -> Result<Function, JsValue> {
    factory(Provider::OpenAi, options)
}

#[wasm_bindgen(js_name = anthropicSummarizer, skip_typescript)]
pub fn anthropic_summarizer(options: JsValue) -> Result<Function, JsValue> {
    factory(Provider::Anthropic, options)
}

/// A factory: the options checked (the core reads them), the headers
/// merged, the summarizer made.
fn factory(provider: Provider, options: JsValue) -> Result<Function, JsValue> {
    let o = read_options(&options, |options, r| {
        core::factory_options(provider, options, r, to_js_str)
    })
    .map_err(|e| type_error(provider, e))?;
    let headers = Options {
        provider,
        value: options,
    }
    .headers(o.api_key.as_ref())?;
    let (url, model) = (o.base_url.as_ref(), o.model);
    Ok(summarizer(endpoint_object(
        provider,
        url,
        model,
        headers,
        o.max_tokens_field,
    )))
}

/// The JavaScript function: each call returns a Promise.
fn summarizer(endpoint: JsValue) -> Function {
    let call = Closure::<dyn Fn(JsValue) -> Promise>::new(move |request: JsValue| {
        fetch_summarize(&endpoint, request)
    });
    call.into_js_value().unchecked_into()
}

/// One call of a fetch summarizer: `endpoint` is what its factory read.
pub fn fetch_summarize(endpoint: &JsValue, request: JsValue) -> Promise {
    future_to_promise(summarize(Endpoint::read(endpoint), request))
}

/// The `options` argument of a factory, for reading with errors that name
/// the factory and the field.
struct Options {
    provider: Provider,
    value: JsValue,
}

impl Options {
    fn field(&self, key: &'static str) -> Result<JsValue, JsValue> {
        get(&self.value, key, || core::option_path(key)).map_err(|e| type_error(self.provider, e))
    }

    fn wrong(&self, key: &'static str, expected: &'static str, got: String) -> JsValue {
        let path = core::option_path(key);
        type_error(
            self.provider,
            InputError::WrongType {
                path,
                expected,
                got,
            },
        )
    }

    /// The request headers: the core's defaults, then `options.headers`,
    /// which replace defaults of the same name (case-insensitively). The
    /// engine's `Headers` checks names and values now, so a bad header is an
    /// error at creation rather than at the first call. Error messages never
    /// quote a header's value: it may be a key.
    fn headers(&self, api_key: Option<&JsString>) -> Result<Array, JsValue> {
        let provider = self.provider;
        let constructor = Reflect::get(&js_sys::global(), &JsValue::from_str("Headers"))
            .ok()
            .and_then(|c| c.dyn_into::<Function>().ok())
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
        let given = self.field("headers")?;
        if !(given.is_undefined() || given.is_null()) {
            for (name, value) in self.header_entries(&given)? {
                set.call2(&headers, &name, &value).map_err(|_| {
                    js_sys::TypeError::new(&core::bad_header(provider, &string_of(&name)))
                })?;
            }
        }
        array_from(&headers)
    }

    /// `[name, value]` pairs from a plain object of strings, or from an
    /// iterable of pairs (a `Headers`, a `Map`, an array of pairs).
    fn header_entries(&self, given: &JsValue) -> Result<Vec<(JsValue, JsValue)>, JsValue> {
        let provider = self.provider;
        let unreadable = |thrown: JsValue| {
            type_error(
                provider,
                InputError::Unreadable {
                    path: core::option_path("headers"),
                    reason: thrown_message(&thrown),
                },
            )
        };
        let wrong = || self.wrong("headers", core::HEADERS_EXPECTED, describe(given));
        if !given.is_object() {
            return Err(wrong());
        }
        let iterator = Reflect::get(given, &js_sys::Symbol::iterator()).map_err(unreadable)?;
        if iterator.is_function() {
            let entries = array_from(given).map_err(unreadable)?;
            let mut out = Vec::with_capacity(entries.length() as usize);
            for (i, entry) in entries.iter().enumerate() {
                out.push(
                    string_pair(&entry).ok_or_else(|| {
                        js_sys::TypeError::new(&core::header_not_pair(provider, i))
                    })?,
                );
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
                let message =
                    core::header_not_string(provider, &string_of(&name), &describe(&value));
                return Err(js_sys::TypeError::new(&message).into());
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

fn type_error(provider: Provider, error: InputError) -> JsValue {
    js_sys::TypeError::new(&core::factory_error(provider, &error)).into()
}

fn no_fetch(provider: Provider) -> JsValue {
    js_sys::Error::new(&core::no_fetch(provider.label())).into()
}

fn string_of(value: &JsValue) -> String {
    value.as_string().unwrap_or_default()
}

async fn summarize(endpoint: Endpoint, request: JsValue) -> Result<JsValue, JsValue> {
    let provider = endpoint.provider;
    let label = provider.label();
    let request = read_fields("request", &request, core::read_request)
        .map_err(|e| JsValue::from(js_sys::TypeError::new(&core::call_error(provider, &e))))?;
    let body = json_stringify(&request_body(&endpoint, &request))?;
    let signal = &request.signal.0;

    let global = js_sys::global();
    let fetch = Reflect::get(&global, &JsValue::from_str("fetch"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| no_fetch(provider))?;
    let init = shape(core::fetch_init(
        endpoint.headers.slice(0, endpoint.headers.length()).into(),
        body,
        (!(signal.is_undefined() || signal.is_null())).then(|| signal.clone()),
    ));

    let failed = |thrown: JsValue| -> JsValue {
        let name = prop(&thrown, "name").as_string();
        if core::is_abort(prop(signal, "aborted").is_truthy(), name.as_deref()) {
            return thrown;
        }
        let inner = Reply(prop(&thrown, "cause")).get("message").string();
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
    let parsed = json_parse(&text).ok().map(Reply);
    let reply = core::read_reply(
        provider,
        status,
        parsed,
        || text.as_string().unwrap_or_default(),
        || prop(&response, "statusText").as_string(),
    )
    .map_err(|failure| {
        let error = js_sys::Error::new(&failure.message);
        if let Some(status) = failure.status {
            let _ = Reflect::set(&error, &JsValue::from_str("status"), &status.into());
        }
        JsValue::from(error)
    })?;
    Ok(shape(core::result_shape(core::Reply {
        text: reply.text.into(),
        usage: reply.usage,
    })))
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

/// `value[key]`, or `undefined` when it cannot be read (a primitive, a
/// throwing getter): for parsed JSON and fetch's own objects.
fn prop(value: &JsValue, key: &str) -> JsValue {
    if !value.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A parsed reply (or a thrown error) as the core reads it, in place.
struct Reply(JsValue);

impl Json for Reply {
    type Text = JsString;
    fn get(&self, key: &str) -> Reply {
        Reply(prop(&self.0, key))
    }
    fn items(&self) -> Vec<Reply> {
        if Array::is_array(&self.0) {
            self.0.unchecked_ref::<Array>().iter().map(Reply).collect()
        } else {
            Vec::new()
        }
    }
    fn number(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn text(&self) -> Option<JsString> {
        self.0.dyn_ref::<JsString>().cloned()
    }
    fn string(&self) -> Option<String> {
        self.0.as_string()
    }
    fn is_object(&self) -> bool {
        self.0.is_object()
    }
    fn is_present(&self) -> bool {
        !(self.0.is_undefined() || self.0.is_null())
    }
    fn join(joined: JsString, separator: &str, next: JsString) -> JsString {
        joined.concat(&JsString::from(separator)).concat(&next)
    }
    fn is_blank(text: &JsString) -> bool {
        text.trim().length() == 0
    }
}
