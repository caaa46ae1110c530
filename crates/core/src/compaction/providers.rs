//! What the ready-made summarizers (`openAiSummarizer`, `anthropicSummarizer`,
//! `anthropicCompaction`, which asks Anthropic's on-demand compaction for
//! the summary, and `openAiResponsesCompaction`, which asks OpenAI's
//! `/responses/compact`) decide, apart from the network: the endpoint URL, the token-limit field,
//! the request headers and body shape, where the reply's text is, pi-ai's
//! usage mapping, option checks and every error text.
//!
//! The binding calls `fetch`, awaits it and propagates aborts; it builds the
//! body from [`body_fields`] and [`messages`], plugging in the prompts as the
//! engine's own strings, and reads the reply through [`Json`], so neither the
//! prompts nor the summary are ever copied into wasm memory. Only small
//! metadata (URLs, model-independent names, error bodies) is seen here.

use crate::compaction::flow::{CostTotals, UsageTotals};
use crate::error::{FieldPath, InputError};
use crate::js::number::number_to_string;
use crate::js::options::{expect_object, Reader, Value};
use crate::js::shape::{Field, Shape};
use crate::js::string::{quote_str, JsStr};

pub mod prefix;
pub mod responses;

/// OpenAI's API root, when `openAiResponsesCompaction`'s `baseUrl` is not
/// given.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Anthropic's API root, when `baseUrl` is not given.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The beta of Anthropic's on-demand compaction (`compaction: { type:
/// "summarize" }`), "Compaction on demand" in Anthropic's documentation.
pub const COMPACTION_BETA: &str = "compact-2026-09-04";
/// The stop reason of a compaction request that compacted.
pub const COMPACTION_STOP: &str = "compaction";
/// How much of a non-JSON body an error message quotes.
pub const QUOTED_BODY_CHARS: usize = 300;

/// `expected` texts of the option checks.
pub const NON_EMPTY_STRING: &str = "a non-empty string";
pub const AN_OBJECT: &str = "an object";
pub const MAX_TOKENS_FIELD_EXPECTED: &str = "\"max_tokens\" or \"max_completion_tokens\"";
pub const HEADERS_EXPECTED: &str =
    "an object of strings, a Headers or an array of [name, value] pairs";
pub const ANTHROPIC_KEY_EXPECTED: &str =
    "a non-empty string (or give a baseUrl: your own proxy, which adds the key)";
pub const MAX_TOKENS_EXPECTED: &str = "a number ≥ 1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    /// Anthropic's Messages API asked to compact (`anthropicCompaction`).
    AnthropicCompaction,
    /// OpenAI's `/responses/compact` (`openAiResponsesCompaction`).
    OpenAiResponsesCompaction,
}

impl Provider {
    /// The prefix of the errors the summarizer rejects with.
    pub fn label(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI-compatible summarizer",
            Provider::Anthropic => "Anthropic summarizer",
            Provider::AnthropicCompaction => "Anthropic compaction",
            Provider::OpenAiResponsesCompaction => "OpenAI compaction",
        }
    }

    /// The prefix of the errors its factory throws.
    pub fn factory(self) -> &'static str {
        match self {
            Provider::OpenAi => "openAiSummarizer",
            Provider::Anthropic => "anthropicSummarizer",
            Provider::AnthropicCompaction => "anthropicCompaction",
            Provider::OpenAiResponsesCompaction => "openAiResponsesCompaction",
        }
    }

    /// pi-ai's name of the API (an assistant message's `api`).
    pub fn api(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai-completions",
            Provider::Anthropic | Provider::AnthropicCompaction => "anthropic-messages",
            Provider::OpenAiResponsesCompaction => "openai-responses",
        }
    }

    /// The path appended to `baseUrl`.
    fn endpoint_path(self) -> &'static str {
        match self {
            Provider::OpenAi => "/chat/completions",
            Provider::Anthropic | Provider::AnthropicCompaction => "/v1/messages",
            Provider::OpenAiResponsesCompaction => "/responses/compact",
        }
    }
}

/// Whether the provider's summarizer has its provider compact the
/// conversation: it is asked once for everything a compaction hides
/// (`oneRequest`), a split turn's prefix included.
pub fn asks_once(provider: Provider) -> bool {
    matches!(
        provider,
        Provider::AnthropicCompaction | Provider::OpenAiResponsesCompaction
    )
}

/// The URL to POST to: `base` (or the provider's default) without its
/// trailing slashes, then the provider's path.
pub fn endpoint_url(provider: Provider, base: Option<&JsStr>) -> JsStr {
    let mut url = match (base, provider) {
        (Some(base), _) => {
            let units = base.as_units();
            let end = units.len() - units.iter().rev().take_while(|&&u| u == 0x2F).count();
            JsStr::from_units(units[..end].to_vec())
        }
        (None, Provider::Anthropic | Provider::AnthropicCompaction) => {
            JsStr::from(ANTHROPIC_BASE_URL)
        }
        (None, Provider::OpenAiResponsesCompaction) => JsStr::from(OPENAI_BASE_URL),
        // openAiSummarizer requires a baseUrl; a bare path is what it would mean.
        (None, Provider::OpenAi) => JsStr::new(),
    };
    url.push_str(provider.endpoint_path());
    url
}

/// The body field that carries the token limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

impl MaxTokensField {
    pub fn name(self) -> &'static str {
        match self {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// OpenAI's field: `given` (`options.maxTokensField`) when set, else the
    /// guess from the URL. `Err` for an unknown name, with the `expected`
    /// text.
    pub fn for_open_ai(given: Option<&JsStr>, base_url: &JsStr) -> Result<Self, &'static str> {
        match given {
            None => Ok(Self::guess(base_url)),
            Some(f) if f.eq_str("max_tokens") => Ok(MaxTokensField::MaxTokens),
            Some(f) if f.eq_str("max_completion_tokens") => Ok(MaxTokensField::MaxCompletionTokens),
            Some(_) => Err(MAX_TOKENS_FIELD_EXPECTED),
        }
    }

    /// OpenAI's own API refuses `max_tokens` for its reasoning models, and
    /// so does Azure OpenAI under each of its resource hosts
    /// (`*.openai.azure.com`, and the AI Foundry's
    /// `*.cognitiveservices.azure.com` and `*.services.ai.azure.com`); every
    /// other OpenAI-compatible server knows `max_tokens`, and not all of
    /// them know `max_completion_tokens`.
    fn guess(base_url: &JsStr) -> Self {
        let url = base_url.to_string_lossy().to_ascii_lowercase();
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"));
        let Some(rest) = rest else {
            // A relative URL: the page's own proxy, which could be anything.
            return MaxTokensField::MaxTokens;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit('@').next().unwrap_or_default();
        let host = host_port.split(':').next().unwrap_or_default();
        const AZURE: [&str; 3] = [
            ".openai.azure.com",
            ".cognitiveservices.azure.com",
            ".services.ai.azure.com",
        ];
        if host == "api.openai.com" || AZURE.iter().any(|suffix| host.ends_with(suffix)) {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        }
    }
}

/// Anthropic's key rule: without `apiKey`, a `baseUrl` (the app's proxy,
/// which adds the key) is needed. `Err` holds the `expected` text.
pub fn anthropic_key_check(has_key: bool, has_base_url: bool) -> Result<(), &'static str> {
    if has_key || has_base_url {
        Ok(())
    } else {
        Err(ANTHROPIC_KEY_EXPECTED)
    }
}

/// A default header's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderValue {
    Fixed(&'static str),
    /// The API key after `prefix` (the key stays the engine's string).
    ApiKey {
        prefix: &'static str,
    },
}

/// The default headers, in order; `options.headers` then replace those of
/// the same name.
pub fn default_headers(provider: Provider, has_key: bool) -> Vec<(&'static str, HeaderValue)> {
    let mut headers = vec![("content-type", HeaderValue::Fixed("application/json"))];
    let key = match provider {
        Provider::OpenAi | Provider::OpenAiResponsesCompaction => {
            ("authorization", HeaderValue::ApiKey { prefix: "Bearer " })
        }
        Provider::Anthropic | Provider::AnthropicCompaction => {
            headers.push(("anthropic-version", HeaderValue::Fixed(ANTHROPIC_VERSION)));
            headers.push((
                "anthropic-dangerous-direct-browser-access",
                HeaderValue::Fixed("true"),
            ));
            if provider == Provider::AnthropicCompaction {
                headers.push(("anthropic-beta", HeaderValue::Fixed(COMPACTION_BETA)));
            }
            ("x-api-key", HeaderValue::ApiKey { prefix: "" })
        }
    };
    if has_key {
        headers.push(key);
    }
    headers
}

/// A body field's value; the binding supplies the strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyValue {
    Model,
    Messages,
    MaxTokens,
    SystemPrompt,
    Bool(bool),
    /// `{ type: "summarize" }`.
    Summarize,
}

/// The request body's fields, in order. An empty system prompt is left out
/// (providers refuse empty text blocks).
pub fn body_fields(
    provider: Provider,
    field: MaxTokensField,
    has_system: bool,
) -> Vec<(&'static str, BodyValue)> {
    match provider {
        Provider::OpenAi => vec![
            ("model", BodyValue::Model),
            ("messages", BodyValue::Messages),
            (field.name(), BodyValue::MaxTokens),
            ("stream", BodyValue::Bool(false)),
        ],
        Provider::Anthropic => {
            let mut body = vec![
                ("model", BodyValue::Model),
                ("max_tokens", BodyValue::MaxTokens),
            ];
            if has_system {
                body.push(("system", BodyValue::SystemPrompt));
            }
            body.push(("messages", BodyValue::Messages));
            body
        }
        // The transcript to compact as the one user message; the
        // summarizer's system prompt is not the conversation's, so none.
        Provider::AnthropicCompaction => vec![
            ("model", BodyValue::Model),
            ("max_tokens", BodyValue::MaxTokens),
            ("messages", BodyValue::Messages),
            ("compaction", BodyValue::Summarize),
        ],
        // Its `input` is the conversation itself ([`responses::body`]).
        Provider::OpenAiResponsesCompaction => vec![("model", BodyValue::Model)],
    }
}

/// Which prompt a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageText {
    SystemPrompt,
    Prompt,
}

/// The `messages` array: `{ role, content }` objects, in order.
pub fn messages(provider: Provider, has_system: bool) -> Vec<(&'static str, MessageText)> {
    let mut out = Vec::with_capacity(2);
    if provider == Provider::OpenAi && has_system {
        out.push(("system", MessageText::SystemPrompt));
    }
    out.push(("user", MessageText::Prompt));
    out
}

/// The request body as an object: [`body_fields`] with the engine's values
/// plugged in, the messages as `{ role, content }` objects ([`messages`]).
pub fn body_shape<V: Clone>(
    provider: Provider,
    field: MaxTokensField,
    has_system: bool,
    model: V,
    system_prompt: V,
    prompt: V,
    max_tokens: f64,
) -> Shape<V> {
    let text = |which: MessageText| match which {
        MessageText::SystemPrompt => Field::Value(system_prompt.clone()),
        MessageText::Prompt => Field::Value(prompt.clone()),
    };
    let message = |(role, which)| {
        Field::Object(Shape(vec![
            ("role", Field::Str(role)),
            ("content", text(which)),
        ]))
    };
    let fields = body_fields(provider, field, has_system)
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                BodyValue::Model => Field::Value(model.clone()),
                BodyValue::Messages => Field::List(
                    messages(provider, has_system)
                        .into_iter()
                        .map(message)
                        .collect(),
                ),
                BodyValue::MaxTokens => Field::Number(max_tokens),
                BodyValue::SystemPrompt => text(MessageText::SystemPrompt),
                BodyValue::Bool(b) => Field::Bool(b),
                BodyValue::Summarize => Field::Object(summarize()),
            };
            (name, value)
        });
    Shape(fields.collect())
}

/// The `compaction` field of an on-demand compaction request.
pub fn summarize<V>() -> Shape<V> {
    Shape(vec![("type", Field::Str("summarize"))])
}

/// `fetch`'s options: a POST of `body` with `headers`, and the request's
/// `signal` when it has one.
pub fn fetch_init<V>(headers: V, body: V, signal: Option<V>) -> Shape<V> {
    let mut s = Shape(vec![
        ("method", Field::Str("POST")),
        ("headers", Field::Value(headers)),
        ("body", Field::Value(body)),
    ]);
    s.push_some("signal", signal.map(Field::Value));
    s
}

/// What a fetch summarizer resolves to: the text, and `usage` when the
/// provider reported it.
pub fn result_shape<V: Clone>(provider: Provider, reply: Reply<V>, model: V) -> Shape<V> {
    let mut s = Shape(vec![("text", Field::Value(reply.text.clone()))]);
    if provider == Provider::AnthropicCompaction {
        s.push(
            "provider",
            Field::Object(compaction_part(reply.text.clone(), reply.signature, model)),
        );
    }
    s.push_some(
        "usage",
        reply
            .usage
            .map(|u| Field::Object(crate::compaction::shapes::usage(&u))),
    );
    s
}

/// Where an on-demand compaction came from and its block, as the AI SDK
/// carries it (`@ai-sdk/anthropic`: a text part whose provider options
/// say `type: "compaction"`, with the block's signature): the summary's
/// `provider`, sent back unchanged to Anthropic models.
fn compaction_part<V>(text: V, signature: Option<V>, model: V) -> Shape<V> {
    let mut options = Shape(vec![("type", Field::Str("compaction"))]);
    options.push_some("signature", signature.map(Field::Value));
    let part = Shape(vec![
        ("type", Field::Str("text")),
        ("text", Field::Value(text)),
        (
            "providerOptions",
            Field::Object(Shape(vec![("anthropic", Field::Object(options))])),
        ),
    ]);
    on_demand_record(("anthropic", "anthropic.messages"), model, part)
}

/// A summary's `provider` record for a compaction a summarizer asked the
/// provider for: `name` (the part's provider options key) and the model's
/// provider id, the model, the part, and `onDemand` (the AI SDK
/// conversation's threshold stays on after it).
pub fn on_demand_record<V>(
    (name, provider): (&'static str, &'static str),
    model: V,
    part: Shape<V>,
) -> Shape<V> {
    Shape(vec![
        ("name", Field::Str(name)),
        ("provider", Field::Str(provider)),
        ("model", Field::Value(model)),
        ("part", Field::Object(part)),
        ("onDemand", Field::Bool(true)),
    ])
}

/// The path of a `request` field, for errors.
pub fn request_path(key: &'static str) -> FieldPath {
    FieldPath::argument("request").field(key)
}

/// What a summarizer's call reads from its `request`, in this order.
pub struct SummarizeRequest<V: Value> {
    pub system_prompt: V::Text,
    pub prompt: V::Text,
    pub max_tokens: f64,
    pub signal: V,
    /// The prefix form's conversation and last message ([`prefix::body`]).
    pub context: V,
    pub instruction: V,
    /// What a summarizer asked once covers ([`responses::body`]).
    pub covered: V,
}

/// Reads a call's `request` (an object; the prompts strings, even empty;
/// `maxTokens` as [`max_tokens`] takes it; `signal`, `context` and
/// `instruction` as given).
pub fn read_request<V: Value>(
    request: &V,
    r: &Reader<V>,
) -> Result<SummarizeRequest<V>, InputError> {
    expect_object(r.root, request, AN_OBJECT)?;
    let system_prompt = r.string("systemPrompt")?;
    let prompt = r.string("prompt")?;
    let given = r.field("maxTokens")?;
    let max_tokens = max_tokens(given.number(), || given.describe())?;
    Ok(SummarizeRequest {
        system_prompt,
        prompt,
        max_tokens,
        signal: r.field("signal")?,
        context: r.field("context")?,
        instruction: r.field("instruction")?,
        covered: r.field("covered")?,
    })
}

/// A call's error message (its request was bad): a `RangeError`'s when
/// `error.is_range()`, a `TypeError`'s else.
pub fn call_error(provider: Provider, error: &InputError) -> String {
    format!("{}: {error}", provider.label())
}

/// `request.maxTokens` as the integer sent: rounded down (the budget is a
/// ceiling), at least 1. `describe` names a value that is not a number.
pub fn max_tokens(
    value: Option<f64>,
    describe: impl FnOnce() -> String,
) -> Result<f64, InputError> {
    match value {
        Some(n) if n.floor().is_finite() && n.floor() >= 1.0 => Ok(n.floor()),
        Some(n) => Err(crate::js::options::out_of_range(
            request_path("maxTokens"),
            MAX_TOKENS_EXPECTED,
            n,
        )),
        None => Err(InputError::WrongType {
            path: request_path("maxTokens"),
            expected: MAX_TOKENS_EXPECTED,
            got: describe(),
        }),
    }
}

/// A parsed JSON reply, read where it is (the engine's objects). Reading
/// what is not there gives a value for which every query answers "none".
pub trait Json: Sized {
    /// An engine string, never copied.
    type Text;
    fn get(&self, key: &str) -> Self;
    fn items(&self) -> Vec<Self>;
    fn number(&self) -> Option<f64>;
    fn text(&self) -> Option<Self::Text>;
    /// A short string copied out (a reason, an error message).
    fn string(&self) -> Option<String>;
    fn is_object(&self) -> bool;
    /// Neither missing, `undefined` nor `null`.
    fn is_present(&self) -> bool;
    fn join(joined: Self::Text, separator: &str, next: Self::Text) -> Self::Text;
    /// Only white space.
    fn is_blank(text: &Self::Text) -> bool;
}

/// The numbers of a pi-ai `Usage` object the app's summarizer returned
/// (`input`, `output`, `cacheRead`, `cacheWrite`, `totalTokens` and the
/// same in `cost`, with `total`): each 0 when missing or not a number.
pub fn usage_totals<J: Json>(usage: &J) -> UsageTotals {
    let n = |of: &J, key| of.get(key).number().unwrap_or(0.0);
    let cost = usage.get("cost");
    UsageTotals {
        input: n(usage, "input"),
        output: n(usage, "output"),
        cache_read: n(usage, "cacheRead"),
        cache_write: n(usage, "cacheWrite"),
        total_tokens: n(usage, "totalTokens"),
        cost: CostTotals {
            input: n(&cost, "input"),
            output: n(&cost, "output"),
            cache_read: n(&cost, "cacheRead"),
            cache_write: n(&cost, "cacheWrite"),
            total: n(&cost, "total"),
        },
    }
}

/// A successful reply: the summary text and, when given, the usage; of a
/// compaction, the block's signature too (`None`: it had none).
pub struct Reply<T> {
    pub text: T,
    pub usage: Option<UsageTotals>,
    pub signature: Option<T>,
}

/// Why a reply was refused: the error message, and the HTTP status to set
/// on the error (none when the reply was fine but had no text).
#[derive(Debug, PartialEq)]
pub struct Failure {
    pub message: String,
    pub status: Option<f64>,
}

/// The reply's text and usage, or the error ([`checked`]). A reply to the
/// prefix form (`prefix`) that calls a tool has no summary: it counts as no
/// text. Text whose stop reason says it is no summary ([`unfinished`])
/// is a failure without a status (the prefix form is asked again
/// serialized).
pub fn read_reply<J: Json>(
    provider: Provider,
    prefix: bool,
    status: f64,
    parsed: Option<J>,
    body: impl Fn() -> String,
    status_text: impl FnOnce() -> Option<String>,
) -> Result<Reply<J::Text>, Failure> {
    let label = provider.label();
    let parsed = checked(provider, status, parsed, body, status_text)?;
    let mut signature = None;
    let (text, stop, called) = match provider {
        Provider::OpenAi => {
            let choice = parsed.get("choices").items().into_iter().next();
            let stop = choice
                .as_ref()
                .and_then(|c| c.get("finish_reason").string())
                .map(|r| ("finish_reason", r));
            let message = choice.map(|c| c.get("message"));
            let called = prefix
                && (message.as_ref()).is_some_and(|m| !m.get("tool_calls").items().is_empty());
            let content = message.map(|m| m.get("content"));
            // Some servers send content parts: [{ type: "text", text }].
            let text = content.and_then(|c| c.text().or_else(|| join_text_blocks(&c, "")));
            (text, stop, called)
        }
        Provider::Anthropic => {
            let stop = parsed
                .get("stop_reason")
                .string()
                .map(|r| ("stop_reason", r));
            let content = parsed.get("content");
            let called = prefix
                && (content.items().iter())
                    .any(|b| b.get("type").string().as_deref() == Some("tool_use"));
            (join_text_blocks(&content, "\n"), stop, called)
        }
        Provider::AnthropicCompaction => {
            let reason = parsed.get("stop_reason").string();
            // Compacted: one `compaction` block; any other stop reason
            // (max_tokens, refusal, ...) is a request that did not.
            let block = (reason.as_deref() == Some(COMPACTION_STOP))
                .then(|| parsed.get("content").items())
                .and_then(|blocks| {
                    blocks
                        .into_iter()
                        .find(|b| b.get("type").string().as_deref() == Some("compaction"))
                });
            signature = block.as_ref().and_then(|b| b.get("signature").text());
            let text = block.and_then(|b| b.get("content").text());
            (text, reason.map(|r| ("stop_reason", r)), false)
        }
        // Its reply has no text: [`responses::read`] reads it.
        Provider::OpenAiResponsesCompaction => (None, None, false),
    };
    // Text that is no summary: a refusal, or a reply that ended in an
    // error, would replace the history.
    let text = text.filter(|t| !called && !J::is_blank(t));
    if let (Some(_), Some((key, value))) = (&text, &stop) {
        if let Some(why) = unfinished(provider, value) {
            return Err(Failure {
                message: format!("{label}: {} ({key}: {})", why.text(), quote_str(value)),
                status: None,
            });
        }
    }
    let Some(text) = text else {
        let what = match provider {
            Provider::AnthropicCompaction | Provider::OpenAiResponsesCompaction => "no compaction",
            _ => "no text",
        };
        let mut message = format!("{label}: {what} in the response");
        if let Some((key, value)) = stop {
            message.push_str(&format!(" ({key}: {})", quote_str(&value)));
        }
        return Err(Failure {
            message,
            status: None,
        });
    };
    let usage = parsed.get("usage");
    let usage = usage.is_object().then(|| map_usage(provider, &usage));
    Ok(Reply {
        text,
        usage,
        signature,
    })
}

/// Why a reply's stop reason says its text is no summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unfinished {
    /// Refused, or stopped by the provider's safety filter.
    Refused,
    /// Ended by an error (OpenRouter's `error`, pi-ai's `network_error`).
    Error,
}

impl Unfinished {
    fn text(self) -> &'static str {
        match self {
            Unfinished::Refused => "the model refused to summarize",
            Unfinished::Error => "the reply ended in an error",
        }
    }
}

/// The stop reasons after which a reply's text is no summary: those pi-ai
/// maps to `error` (a refusal, a content filter, an error), which pi's
/// `generateSummary` refuses (pi-ai also reads an unknown reason as an
/// error; here it is a finished reply: compatible servers have their own).
/// Text cut at the token limit (`length`, `max_tokens`) is a summary, as
/// pi takes it; the flow cuts an over-long one itself. Any other reason,
/// or none, is a finished reply.
pub fn unfinished(provider: Provider, reason: &str) -> Option<Unfinished> {
    match (provider, reason) {
        (Provider::OpenAi, "content_filter") => Some(Unfinished::Refused),
        (Provider::OpenAi, "error" | "network_error") => Some(Unfinished::Error),
        (Provider::Anthropic, "refusal" | "sensitive") => Some(Unfinished::Refused),
        _ => None,
    }
}

/// The body of a reply as JSON, or the error: an HTTP error status, a body
/// that is not a JSON object, or one with an `error`. `parsed` is the body
/// as JSON (`None` when it is not); `body` gives the raw body and
/// `status_text` the HTTP status text, both read only for an error.
pub fn checked<J: Json>(
    provider: Provider,
    status: f64,
    parsed: Option<J>,
    body: impl Fn() -> String,
    status_text: impl FnOnce() -> Option<String>,
) -> Result<J, Failure> {
    let label = provider.label();
    let http = |message: &str| Failure {
        message: format!("{label}: HTTP {}: {message}", number_to_string(status)),
        status: Some(status),
    };
    let ok = (200.0..300.0).contains(&status);
    let Some(parsed) = parsed.filter(J::is_object) else {
        let quoted = quote_body(&body());
        return Err(if ok {
            http(&format!("the response is not a JSON object: {quoted}"))
        } else if quoted.is_empty() {
            http(status_text().as_deref().unwrap_or("no error message"))
        } else {
            http(&quoted)
        });
    };
    if !ok || parsed.get("error").is_present() {
        return Err(http(&provider_message(&parsed, &body)));
    }
    Ok(parsed)
}

/// The `text` of the `type: "text"` blocks, joined; `None` when there are none.
fn join_text_blocks<J: Json>(content: &J, separator: &str) -> Option<J::Text> {
    let mut joined: Option<J::Text> = None;
    for block in content.items() {
        if block.get("type").string().as_deref() == Some("text") {
            if let Some(text) = block.get("text").text() {
                joined = Some(match joined {
                    None => text,
                    Some(j) => J::join(j, separator, text),
                });
            }
        }
    }
    joined
}

/// A token count: anything but a finite number is 0.
fn count<J: Json>(value: &J, key: &str) -> f64 {
    value
        .get(key)
        .number()
        .filter(|n| n.is_finite())
        .unwrap_or(0.0)
}

/// The provider's usage in pi-ai's `Usage` shape; cost is zero (no prices
/// are known).
pub fn map_usage<J: Json>(provider: Provider, usage: &J) -> UsageTotals {
    let (input, output, cache_read, cache_write, total) = match provider {
        Provider::OpenAi => {
            // As pi-ai's openai-completions provider: `prompt_tokens`
            // includes the cached ones; some servers (OpenRouter) count
            // cache writes among `cached_tokens`; DeepSeek reports hits as
            // `prompt_cache_hit_tokens`.
            let details = usage.get("prompt_tokens_details");
            let prompt = count(usage, "prompt_tokens");
            let cached = if details.get("cached_tokens").number().is_some() {
                count(&details, "cached_tokens")
            } else {
                count(usage, "prompt_cache_hit_tokens")
            };
            let cache_write = count(&details, "cache_write_tokens");
            let cache_read = (cached - cache_write).max(0.0);
            let input = (prompt - cache_read - cache_write).max(0.0);
            let output = count(usage, "completion_tokens");
            let sum = input + output + cache_read + cache_write;
            let total = match usage.get("total_tokens").number() {
                Some(t) if t.is_finite() && t > 0.0 => t,
                _ => sum,
            };
            (input, output, cache_read, cache_write, total)
        }
        Provider::OpenAiResponsesCompaction => {
            // As pi-ai's openai-responses provider: `input_tokens`
            // includes the cached ones.
            let cached = count(&usage.get("input_tokens_details"), "cached_tokens");
            let input = (count(usage, "input_tokens") - cached).max(0.0);
            let output = count(usage, "output_tokens");
            let total = match usage.get("total_tokens").number() {
                Some(t) if t.is_finite() && t > 0.0 => t,
                _ => input + output + cached,
            };
            (input, output, cached, 0.0, total)
        }
        Provider::Anthropic | Provider::AnthropicCompaction => {
            // `input_tokens` already excludes cache reads and writes. A
            // compacting request is billed as the sum of its
            // `usage.iterations` (its top-level counts leave the
            // compaction out).
            let parts = usage.get("iterations").items();
            let sum = |key| match parts.is_empty() {
                true => count(usage, key),
                false => parts.iter().map(|p| count(p, key)).sum(),
            };
            let input = sum("input_tokens");
            let output = sum("output_tokens");
            let cache_read = sum("cache_read_input_tokens");
            let cache_write = sum("cache_creation_input_tokens");
            let total = input + output + cache_read + cache_write;
            (input, output, cache_read, cache_write, total)
        }
    };
    UsageTotals {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: total,
        cost: Default::default(),
    }
}

/// The provider's own error message: OpenAI's and Anthropic's
/// `error.message`, a bare `error` string (Ollama, some proxies), vLLM's
/// top-level `message`, FastAPI's `detail`; else the body itself.
fn provider_message<J: Json>(parsed: &J, body: impl Fn() -> String) -> String {
    let error = parsed.get("error");
    error
        .string()
        .or_else(|| error.get("message").string())
        .or_else(|| parsed.get("message").string())
        .or_else(|| parsed.get("detail").string())
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| quote_body(&body()))
}

/// The start of a body, for an error message.
pub fn quote_body(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(QUOTED_BODY_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// fetch's rejection is a cancellation, passed on unchanged, when the
/// caller's signal aborted (fetch rejects with an `AbortError`, or with the
/// reason given to `abort(reason)`).
pub fn is_abort(signal_aborted: bool, thrown_name: Option<&str>) -> bool {
    signal_aborted || thrown_name == Some("AbortError")
}

/// A network failure, CORS refusal or bad URL. Node's "fetch failed" hides
/// the reason in its own `cause`: `inner` is that cause's message.
pub fn network_error(label: &str, url: &JsStr, reason: &str, inner: Option<&str>) -> String {
    let mut message = format!("{label}: POST {url} failed: {reason}");
    if let Some(inner) = inner {
        message.push_str(&format!(" ({inner})"));
    }
    message
}

/// No `fetch`/`Headers` in this environment.
pub fn no_fetch(label: &str) -> String {
    format!(
        "{label}: this environment has no global fetch and Headers (browsers, workers and Node ≥ 18 have them)"
    )
}

/// A factory's options, read and checked in this order: OpenAI's
/// `baseUrl`, `model`, `apiKey`, `maxTokensField`; Anthropic's `baseUrl`,
/// `model`, `apiKey` (read again when the key rule refuses it, for the
/// error). `units` gives a string's code units (for the URL guess).
pub struct FactoryOptions<V: Value> {
    pub base_url: Option<V::Text>,
    pub model: V::Text,
    pub api_key: Option<V::Text>,
    pub max_tokens_field: MaxTokensField,
    /// `openAiResponsesCompaction`'s summarizer for the requests that need
    /// readable text.
    pub readable: Option<V::Function>,
}

pub fn factory_options<V: Value>(
    provider: Provider,
    options: &V,
    r: &Reader<V>,
    units: impl Fn(&V::Text) -> JsStr,
) -> Result<FactoryOptions<V>, InputError> {
    expect_object(r.root, options, AN_OBJECT)?;
    let base_url = match provider {
        Provider::OpenAi => Some(required(r, "baseUrl", NON_EMPTY_STRING)?),
        _ => r.text("baseUrl")?,
    };
    let model = required(r, "model", NON_EMPTY_STRING)?;
    let mut api_key = r.text("apiKey")?;
    let mut max_tokens_field = MaxTokensField::MaxTokens;
    match (provider, &base_url) {
        (Provider::OpenAi, Some(base_url)) => {
            let given = r.text("maxTokensField")?;
            let given = given.as_ref().map(&units);
            max_tokens_field = MaxTokensField::for_open_ai(given.as_ref(), &units(base_url))
                .map_err(|expected| InputError::WrongType {
                    path: r.path("maxTokensField"),
                    expected,
                    got: quote_str(&given.unwrap_or_default().to_string_lossy()),
                })?;
        }
        _ => {
            if let Err(expected) = anthropic_key_check(api_key.is_some(), base_url.is_some()) {
                api_key = Some(required(r, "apiKey", expected)?);
            }
        }
    }
    let readable = match provider {
        Provider::OpenAiResponsesCompaction => r.function("readable")?,
        _ => None,
    };
    Ok(FactoryOptions {
        base_url,
        model,
        api_key,
        max_tokens_field,
        readable,
    })
}

/// A string option that must be given and not be empty; a refusal names
/// the value by [`describe_option`].
fn required<V: Value>(
    r: &Reader<V>,
    key: &'static str,
    expected: &'static str,
) -> Result<V::Text, InputError> {
    let value = r.field(key)?;
    match value.text() {
        Some((text, len)) if len > 0 => Ok(text),
        given => Err(InputError::WrongType {
            path: r.path(key),
            expected,
            got: describe_option(given.is_some(), || value.describe()),
        }),
    }
}

/// A factory's `TypeError` message.
pub fn factory_error(provider: Provider, error: &InputError) -> String {
    format!("{}: {error}", provider.factory())
}

/// How a wrong option is named in an error: `describe`'s text, but an
/// empty string shows as `""`. Other strings are never quoted: an option in
/// the wrong place may hold a key.
pub fn describe_option(empty_string: bool, describe: impl FnOnce() -> String) -> String {
    if empty_string {
        "\"\"".to_owned()
    } else {
        describe()
    }
}

/// The path of an option, for errors.
pub fn option_path(key: &'static str) -> FieldPath {
    FieldPath::argument("options").field(key)
}

/// The API key cannot be a header value (a line break, a non-Latin-1 letter).
pub fn bad_key_header(provider: Provider, name: &str) -> String {
    format!(
        "{}: options.apiKey cannot be sent in the {name} header: it holds characters HTTP headers do not allow",
        provider.factory()
    )
}

/// A header the engine's `Headers` refused; `name` is quoted, the value is
/// never shown (it may be a key).
pub fn bad_header(provider: Provider, name: &str) -> String {
    format!(
        "{}: options.headers[{}] is not a valid header: a name is a token without spaces, and a value has no line breaks and only Latin-1 characters",
        provider.factory(),
        quote_str(name)
    )
}

/// One entry of `options.headers` as the binding finds it.
pub enum HeaderEntry<T> {
    /// A name and a string value.
    Pair(T, T),
    /// An entry of an iterable that is not a `[name, value]` pair of strings.
    NotPair,
    /// A field of a record whose value is not a string (`got` describes it).
    NotString { name: String, got: String },
}

/// The headers `options.headers` gives (an object): the entries of an
/// iterable (a `Headers`, a `Map`, an array of pairs) or the fields of a
/// record, in order. The first entry that is not a pair of strings refuses
/// them all; so does a non-iterable object that is not a plain object and
/// has no fields (not a record of headers: `got` describes it). `Err` is
/// the `TypeError`'s text.
pub fn header_pairs<T>(
    provider: Provider,
    entries: Vec<HeaderEntry<T>>,
    iterable_or_plain: bool,
    got: impl FnOnce() -> String,
) -> Result<Vec<(T, T)>, String> {
    if entries.is_empty() && !iterable_or_plain {
        let e = InputError::WrongType {
            path: option_path("headers"),
            expected: HEADERS_EXPECTED,
            got: got(),
        };
        return Err(factory_error(provider, &e));
    }
    let pair = |(i, entry)| match entry {
        HeaderEntry::Pair(name, value) => Ok((name, value)),
        HeaderEntry::NotPair => Err(header_not_pair(provider, i)),
        HeaderEntry::NotString { name, got } => Err(header_not_string(provider, &name, &got)),
    };
    entries.into_iter().enumerate().map(pair).collect()
}

/// An entry of an iterable `headers` that is not a pair of strings.
fn header_not_pair(provider: Provider, index: usize) -> String {
    format!(
        "{}: options.headers[{index}] must be a [name, value] pair of strings",
        provider.factory()
    )
}

/// A record's header value that is not a string.
fn header_not_string(provider: Provider, name: &str, got: &str) -> String {
    format!(
        "{}: options.headers[{}] must be a string, got {got}",
        provider.factory(),
        quote_str(name)
    )
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
