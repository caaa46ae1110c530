//! Native tests of the summarizers' decisions, with a tiny JSON value
//! standing in for the engine's parsed reply.

use super::*;

/// A parsed reply: what the engine's JSON.parse would give.
#[derive(Clone, Debug)]
enum V {
    Missing,
    Null,
    Num(f64),
    Str(String),
    Arr(Vec<V>),
    Obj(Vec<(&'static str, V)>),
}

impl Json for V {
    type Text = String;
    fn get(&self, key: &str) -> V {
        match self {
            V::Obj(fields) => fields
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(V::Missing, |(_, v)| v.clone()),
            _ => V::Missing,
        }
    }
    fn items(&self) -> Vec<V> {
        match self {
            V::Arr(items) => items.clone(),
            _ => Vec::new(),
        }
    }
    fn number(&self) -> Option<f64> {
        match self {
            V::Num(n) => Some(*n),
            _ => None,
        }
    }
    fn text(&self) -> Option<String> {
        self.string()
    }
    fn string(&self) -> Option<String> {
        match self {
            V::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn is_object(&self) -> bool {
        matches!(self, V::Obj(_) | V::Arr(_))
    }
    fn is_present(&self) -> bool {
        !matches!(self, V::Missing | V::Null)
    }
    fn join(joined: String, separator: &str, next: String) -> String {
        joined + separator + &next
    }
    fn is_blank(text: &String) -> bool {
        text.trim().is_empty()
    }
}

fn s(text: &str) -> V {
    V::Str(text.into())
}

fn url(provider: Provider, base: Option<&str>) -> String {
    endpoint_url(provider, base.map(JsStr::from).as_ref()).to_string_lossy()
}

#[test]
fn endpoint_urls_drop_trailing_slashes_and_add_the_path() {
    use Provider::*;
    assert_eq!(
        url(OpenAi, Some("https://api.openai.com/v1")),
        "https://api.openai.com/v1/chat/completions"
    );
    assert_eq!(
        url(OpenAi, Some("http://127.0.0.1:8080/v1///")),
        "http://127.0.0.1:8080/v1/chat/completions"
    );
    assert_eq!(url(OpenAi, Some("/llm/v1/")), "/llm/v1/chat/completions");
    assert_eq!(url(OpenAi, Some("/")), "/chat/completions");
    assert_eq!(
        url(Anthropic, None),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        url(Anthropic, Some("https://proxy.example/anthropic/")),
        "https://proxy.example/anthropic/v1/messages"
    );
    // Code units pass through untouched, lone surrogates included.
    let odd = JsStr::from_units(vec![0x68, 0xD800, 0x2F]);
    let joined = endpoint_url(OpenAi, Some(&odd));
    assert_eq!(&joined.as_units()[..2], &[0x68, 0xD800]);
    assert_eq!(joined.len(), 2 + "/chat/completions".len());
}

fn field(given: Option<&str>, base: &str) -> Result<&'static str, &'static str> {
    MaxTokensField::for_open_ai(given.map(JsStr::from).as_ref(), &JsStr::from(base))
        .map(MaxTokensField::name)
}

#[test]
fn the_token_limit_field_follows_the_host_unless_given() {
    let completion = Ok("max_completion_tokens");
    let plain = Ok("max_tokens");
    assert_eq!(field(None, "https://api.openai.com/v1"), completion);
    assert_eq!(field(None, "HTTPS://API.OpenAI.com/v1"), completion);
    assert_eq!(
        field(None, "https://user:pw@api.openai.com:443/v1"),
        completion
    );
    assert_eq!(
        field(None, "https://my-res.openai.azure.com/openai/deployments/x"),
        completion
    );
    for azure in [
        "https://my-res.cognitiveservices.azure.com/openai/deployments/x",
        "https://my-res.services.ai.azure.com/openai/v1",
    ] {
        assert_eq!(field(None, azure), completion, "{azure}");
    }
    assert_eq!(
        field(None, "https://cognitiveservices.azure.com.example/v1"),
        plain
    );
    assert_eq!(field(None, "http://127.0.0.1:8080/v1"), plain);
    assert_eq!(field(None, "https://api.openai.com.evil.example/v1"), plain);
    assert_eq!(
        field(None, "https://proxy.example/api.openai.com/v1"),
        plain
    );
    assert_eq!(field(None, "https://openai.azure.com.example/v1"), plain);
    assert_eq!(field(None, "/llm/v1"), plain);
    assert_eq!(
        field(Some("max_tokens"), "https://api.openai.com/v1"),
        plain
    );
    assert_eq!(field(Some("max_completion_tokens"), "/llm"), completion);
    assert_eq!(
        field(Some("maxTokens"), "/llm"),
        Err("\"max_tokens\" or \"max_completion_tokens\"")
    );
}

#[test]
fn anthropic_needs_a_key_or_a_proxy() {
    assert_eq!(anthropic_key_check(true, false), Ok(()));
    assert_eq!(anthropic_key_check(false, true), Ok(()));
    assert_eq!(anthropic_key_check(true, true), Ok(()));
    assert_eq!(
        anthropic_key_check(false, false),
        Err(ANTHROPIC_KEY_EXPECTED)
    );
}

#[test]
fn default_headers_per_provider() {
    use HeaderValue::*;
    assert_eq!(
        default_headers(Provider::OpenAi, true),
        vec![
            ("content-type", Fixed("application/json")),
            ("authorization", ApiKey { prefix: "Bearer " }),
        ]
    );
    assert_eq!(
        default_headers(Provider::OpenAi, false),
        vec![("content-type", Fixed("application/json"))]
    );
    assert_eq!(
        default_headers(Provider::Anthropic, true),
        vec![
            ("content-type", Fixed("application/json")),
            ("anthropic-version", Fixed("2023-06-01")),
            ("anthropic-dangerous-direct-browser-access", Fixed("true")),
            ("x-api-key", ApiKey { prefix: "" }),
        ]
    );
    assert_eq!(default_headers(Provider::Anthropic, false).len(), 3);
}

#[test]
fn body_shapes() {
    use BodyValue::*;
    assert_eq!(
        body_fields(Provider::OpenAi, MaxTokensField::MaxCompletionTokens, true),
        vec![
            ("model", Model),
            ("messages", Messages),
            ("max_completion_tokens", MaxTokens),
            ("stream", Bool(false)),
        ]
    );
    assert_eq!(
        body_fields(Provider::Anthropic, MaxTokensField::MaxTokens, true),
        vec![
            ("model", Model),
            ("max_tokens", MaxTokens),
            ("system", SystemPrompt),
            ("messages", Messages),
        ]
    );
    assert_eq!(
        body_fields(Provider::Anthropic, MaxTokensField::MaxTokens, false),
        vec![
            ("model", Model),
            ("max_tokens", MaxTokens),
            ("messages", Messages)
        ]
    );
    use MessageText::Prompt;
    assert_eq!(
        messages(Provider::OpenAi, true),
        vec![("system", MessageText::SystemPrompt), ("user", Prompt)]
    );
    assert_eq!(messages(Provider::OpenAi, false), vec![("user", Prompt)]);
    // Anthropic's system prompt is a body field, not a message.
    assert_eq!(messages(Provider::Anthropic, true), vec![("user", Prompt)]);
}

#[test]
fn max_tokens_rounds_down_and_refuses_less_than_one() {
    let none = || "undefined".to_owned();
    assert_eq!(max_tokens(Some(1024.9), none).unwrap(), 1024.0);
    assert_eq!(max_tokens(Some(1.0), none).unwrap(), 1.0);
    let e = max_tokens(Some(0.5), none).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request.maxTokens must be a number ≥ 1, got 0.5"
    );
    assert!(max_tokens(Some(f64::INFINITY), none).is_err());
    assert!(max_tokens(Some(f64::NAN), none).is_err());
    let e = max_tokens(None, || "a string".to_owned()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request.maxTokens must be a number ≥ 1, got a string"
    );
}

fn reply(
    provider: Provider,
    status: f64,
    parsed: Option<V>,
    body: &str,
) -> Result<Reply<String>, Failure> {
    read_reply(
        provider,
        false,
        status,
        parsed,
        || body.to_owned(),
        || Some("Too Many".into()),
    )
}

#[test]
fn open_ai_text_and_usage() {
    let body = V::Obj(vec![
        (
            "choices",
            V::Arr(vec![V::Obj(vec![
                ("message", V::Obj(vec![("content", s("The summary"))])),
                ("finish_reason", s("stop")),
            ])]),
        ),
        (
            "usage",
            V::Obj(vec![
                ("prompt_tokens", V::Num(1000.0)),
                ("completion_tokens", V::Num(200.0)),
                ("total_tokens", V::Num(1200.0)),
                (
                    "prompt_tokens_details",
                    V::Obj(vec![
                        ("cached_tokens", V::Num(300.0)),
                        ("cache_write_tokens", V::Num(100.0)),
                    ]),
                ),
            ]),
        ),
    ]);
    let r = reply(Provider::OpenAi, 200.0, Some(body), "").unwrap();
    assert_eq!(r.text, "The summary");
    let u = r.usage.unwrap();
    // cacheRead = cached − writes; input excludes both.
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (700.0, 200.0, 200.0, 100.0, 1200.0)
    );
    assert_eq!(u.cost, Default::default());
}

#[test]
fn open_ai_usage_variants() {
    // DeepSeek's hits; total missing → the sum; junk counts are 0.
    let u = map_usage(
        Provider::OpenAi,
        &V::Obj(vec![
            ("prompt_tokens", V::Num(50.0)),
            ("prompt_cache_hit_tokens", V::Num(20.0)),
            ("completion_tokens", s("7")),
            ("total_tokens", V::Num(0.0)),
        ]),
    );
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (30.0, 0.0, 20.0, 0.0, 50.0)
    );
    // More writes than cached: never negative.
    let u = map_usage(
        Provider::OpenAi,
        &V::Obj(vec![
            ("prompt_tokens", V::Num(10.0)),
            (
                "prompt_tokens_details",
                V::Obj(vec![
                    ("cached_tokens", V::Num(5.0)),
                    ("cache_write_tokens", V::Num(20.0)),
                ]),
            ),
        ]),
    );
    assert_eq!((u.input, u.cache_read, u.cache_write), (0.0, 0.0, 20.0));
}

#[test]
fn open_ai_content_parts_are_joined() {
    let parts = V::Arr(vec![
        V::Obj(vec![("type", s("text")), ("text", s("a"))]),
        V::Obj(vec![("type", s("image")), ("text", s("x"))]),
        V::Obj(vec![("type", s("text")), ("text", s("b"))]),
    ]);
    let body = V::Obj(vec![(
        "choices",
        V::Arr(vec![V::Obj(vec![(
            "message",
            V::Obj(vec![("content", parts)]),
        )])]),
    )]);
    let r = reply(Provider::OpenAi, 200.0, Some(body), "").unwrap();
    assert_eq!(r.text, "ab");
    assert!(r.usage.is_none());
}

#[test]
fn anthropic_text_blocks_joined_by_newline_and_usage() {
    let body = V::Obj(vec![
        (
            "content",
            V::Arr(vec![
                V::Obj(vec![("type", s("thinking")), ("thinking", s("hm"))]),
                V::Obj(vec![("type", s("text")), ("text", s("one"))]),
                V::Obj(vec![("type", s("text")), ("text", s("two"))]),
            ]),
        ),
        (
            "usage",
            V::Obj(vec![
                ("input_tokens", V::Num(10.0)),
                ("output_tokens", V::Num(5.0)),
                ("cache_read_input_tokens", V::Num(100.0)),
                ("cache_creation_input_tokens", V::Num(7.0)),
            ]),
        ),
    ]);
    let r = reply(Provider::Anthropic, 200.0, Some(body), "").unwrap();
    assert_eq!(r.text, "one\ntwo");
    let u = r.usage.unwrap();
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (10.0, 5.0, 100.0, 7.0, 122.0)
    );
}

#[test]
fn error_texts() {
    let fail = |r: Result<Reply<String>, Failure>| r.err().unwrap();
    // The provider's error.message, with the status.
    let body = V::Obj(vec![(
        "error",
        V::Obj(vec![("message", s("Rate limit reached"))]),
    )]);
    assert_eq!(
        fail(reply(Provider::OpenAi, 429.0, Some(body), "{…}")),
        Failure {
            message: "OpenAI-compatible summarizer: HTTP 429: Rate limit reached".into(),
            status: Some(429.0)
        }
    );
    // A bare error string (Ollama), even with status 200.
    let body = V::Obj(vec![("error", s("model not found"))]);
    assert_eq!(
        fail(reply(Provider::OpenAi, 200.0, Some(body), "")).message,
        "OpenAI-compatible summarizer: HTTP 200: model not found"
    );
    // vLLM's message, FastAPI's detail, else the body.
    let body = V::Obj(vec![("message", s("bad model"))]);
    assert!(fail(reply(Provider::Anthropic, 400.0, Some(body), ""))
        .message
        .ends_with("HTTP 400: bad model"));
    let body = V::Obj(vec![("detail", s("nope"))]);
    assert!(fail(reply(Provider::Anthropic, 422.0, Some(body), ""))
        .message
        .ends_with("HTTP 422: nope"));
    let body = V::Obj(vec![("error", V::Obj(vec![]))]);
    assert_eq!(
        fail(reply(
            Provider::Anthropic,
            500.0,
            Some(body),
            "  {\"error\":{}} "
        ))
        .message,
        "Anthropic summarizer: HTTP 500: {\"error\":{}}"
    );
    // Not JSON: quoted body; an empty body: the status text.
    assert_eq!(
        fail(reply(Provider::OpenAi, 200.0, None, "<html>")).message,
        "OpenAI-compatible summarizer: HTTP 200: the response is not a JSON object: <html>"
    );
    // JSON, but no object (`null`, a string): said so, not "not JSON".
    assert_eq!(
        fail(reply(Provider::OpenAi, 200.0, Some(V::Null), "null")).message,
        "OpenAI-compatible summarizer: HTTP 200: the response is not a JSON object: null"
    );
    assert_eq!(
        fail(reply(Provider::OpenAi, 502.0, None, "Bad gateway")).message,
        "OpenAI-compatible summarizer: HTTP 502: Bad gateway"
    );
    assert_eq!(
        fail(reply(Provider::OpenAi, 429.0, None, "  ")).message,
        "OpenAI-compatible summarizer: HTTP 429: Too Many"
    );
    let r = read_reply::<V>(
        Provider::OpenAi,
        false,
        503.0,
        Some(s("x")),
        String::new,
        || None,
    );
    assert_eq!(
        r.err().unwrap().message,
        "OpenAI-compatible summarizer: HTTP 503: no error message"
    );
    // No text: the stop reason, no status.
    let body = V::Obj(vec![(
        "choices",
        V::Arr(vec![V::Obj(vec![
            ("message", V::Obj(vec![("content", V::Null)])),
            ("finish_reason", s("length")),
        ])]),
    )]);
    assert_eq!(
        fail(reply(Provider::OpenAi, 200.0, Some(body), "")),
        Failure {
            message:
                "OpenAI-compatible summarizer: no text in the response (finish_reason: \"length\")"
                    .into(),
            status: None
        }
    );
    let body = V::Obj(vec![(
        "content",
        V::Arr(vec![V::Obj(vec![("type", s("text")), ("text", s(" \n"))])]),
    )]);
    assert_eq!(
        fail(reply(Provider::Anthropic, 200.0, Some(body), "")).message,
        "Anthropic summarizer: no text in the response"
    );
}

/// A reply with `text` and the stop reason `reason` under `key`.
fn stopped(provider: Provider, text: &str, reason: &str) -> V {
    match provider {
        Provider::OpenAi => V::Obj(vec![(
            "choices",
            V::Arr(vec![V::Obj(vec![
                ("message", V::Obj(vec![("content", s(text))])),
                ("finish_reason", s(reason)),
            ])]),
        )]),
        _ => V::Obj(vec![
            (
                "content",
                V::Arr(vec![V::Obj(vec![("type", s("text")), ("text", s(text))])]),
            ),
            ("stop_reason", s(reason)),
        ]),
    }
}

#[test]
fn text_refused_or_ended_in_an_error_is_no_summary_and_text_cut_at_the_limit_is_one() {
    let cases = [
        (
            Provider::OpenAi,
            "content_filter",
            "OpenAI-compatible summarizer: the model refused to summarize (finish_reason: \"content_filter\")",
        ),
        (
            Provider::OpenAi,
            "error",
            "OpenAI-compatible summarizer: the reply ended in an error (finish_reason: \"error\")",
        ),
        (
            Provider::OpenAi,
            "network_error",
            "OpenAI-compatible summarizer: the reply ended in an error (finish_reason: \"network_error\")",
        ),
        (
            Provider::Anthropic,
            "refusal",
            "Anthropic summarizer: the model refused to summarize (stop_reason: \"refusal\")",
        ),
        (
            Provider::Anthropic,
            "sensitive",
            "Anthropic summarizer: the model refused to summarize (stop_reason: \"sensitive\")",
        ),
    ];
    for (provider, reason, message) in cases {
        let body = stopped(provider, "## Goal\nFix the par", reason);
        let failure = reply(provider, 200.0, Some(body), "").err().unwrap();
        assert_eq!(
            failure,
            Failure {
                message: message.into(),
                status: None
            }
        );
        // In the prefix form, a failure without a status: asked again serialized.
        assert!(prefix::retry_serialized(&failure));
    }
    // A finished reply, or one whose reason is unknown or missing, is the
    // summary; so is text cut at the token limit, as pi takes it (its
    // `generateSummary` fails only on an error): the flow cuts an
    // over-long summary itself, and a compaction that failed on every
    // verbose summary would leave the context growing.
    let finished = [
        (Provider::OpenAi, "length"),
        (Provider::Anthropic, "max_tokens"),
        (Provider::Anthropic, "model_context_window_exceeded"),
        (Provider::OpenAi, "stop"),
        (Provider::OpenAi, "eos"),
        (Provider::Anthropic, "end_turn"),
        (Provider::Anthropic, "stop_sequence"),
        (Provider::Anthropic, "pause_turn"),
    ];
    for (provider, reason) in finished {
        let body = stopped(provider, "## Goal\nFix the parser", reason);
        assert_eq!(
            reply(provider, 200.0, Some(body), "").ok().unwrap().text,
            "## Goal\nFix the parser"
        );
    }
    // Without text, still "no text" with the reason.
    let body = stopped(Provider::Anthropic, " ", "max_tokens");
    assert_eq!(
        reply(Provider::Anthropic, 200.0, Some(body), "")
            .err()
            .unwrap()
            .message,
        "Anthropic summarizer: no text in the response (stop_reason: \"max_tokens\")"
    );
}

#[test]
fn long_bodies_are_cut_at_300_characters() {
    let long = "é".repeat(400);
    let quoted = quote_body(&long);
    assert_eq!(quoted.chars().count(), 301);
    assert!(quoted.ends_with("é…"));
    assert_eq!(quote_body(&"x".repeat(300)), "x".repeat(300));
}

#[test]
fn aborts_and_network_and_factory_texts() {
    assert!(is_abort(true, None));
    assert!(is_abort(false, Some("AbortError")));
    assert!(!is_abort(false, Some("TypeError")));
    assert_eq!(
        network_error(
            "Anthropic summarizer",
            &JsStr::from("http://x/v1/messages"),
            "fetch failed",
            Some("connect ECONNREFUSED")
        ),
        "Anthropic summarizer: POST http://x/v1/messages failed: fetch failed (connect ECONNREFUSED)"
    );
    assert_eq!(
        network_error("L", &JsStr::from("/u"), "Failed to fetch", None),
        "L: POST /u failed: Failed to fetch"
    );
    let e = InputError::WrongType {
        path: option_path("model"),
        expected: NON_EMPTY_STRING,
        got: "\"\"".into(),
    };
    assert_eq!(
        factory_error(Provider::OpenAi, &e),
        "openAiSummarizer: options.model must be a non-empty string, got \"\""
    );
    assert_eq!(
        bad_key_header(Provider::Anthropic, "x-api-key"),
        "anthropicSummarizer: options.apiKey cannot be sent in the x-api-key header: it holds characters HTTP headers do not allow"
    );
    assert!(bad_header(Provider::OpenAi, "bad name")
        .starts_with("openAiSummarizer: options.headers[\"bad name\"] is not a valid header"));
    assert_eq!(describe_option(true, || unreachable!()), "\"\"");
    assert_eq!(describe_option(false, || "a string".into()), "a string");
    assert!(no_fetch("L").starts_with("L: this environment has no global fetch"));
}

#[test]
fn a_call_reads_its_request_in_order() {
    use crate::js::options::tests::{Fields, Js};
    use crate::js::options::Reader;
    let o = Fields::new(vec![
        ("systemPrompt", Js::Str("")),
        ("prompt", Js::Str("p")),
        ("maxTokens", Js::Num(99.9)),
        ("signal", Js::Obj),
    ]);
    let get = |k| o.get(k);
    let r = Reader {
        root: "request",
        get: &get,
    };
    let got = read_request(&Js::Obj, &r).unwrap();
    assert_eq!((got.system_prompt, got.prompt), ("", "p"));
    assert_eq!((got.max_tokens, got.signal), (99.0, Js::Obj));
    assert_eq!(
        *o.reads.borrow(),
        [
            "systemPrompt",
            "prompt",
            "maxTokens",
            "signal",
            "context",
            "instruction",
            "covered"
        ]
    );
    let error = |fields, request: Js| {
        let o = Fields::new(fields);
        let get = |k| o.get(k);
        let r = Reader {
            root: "request",
            get: &get,
        };
        call_error(Provider::OpenAi, &read_request(&request, &r).err().unwrap())
    };
    assert_eq!(
        error(vec![], Js::Str("x")),
        "OpenAI-compatible summarizer: request must be an object, got a string"
    );
    assert_eq!(
        error(vec![("systemPrompt", Js::Num(1.0))], Js::Obj),
        "OpenAI-compatible summarizer: request.systemPrompt must be a string, got a number"
    );
    assert_eq!(
        error(
            vec![
                ("systemPrompt", Js::Str("s")),
                ("prompt", Js::Str("p")),
                ("maxTokens", Js::Null)
            ],
            Js::Obj
        ),
        "OpenAI-compatible summarizer: request.maxTokens must be a number ≥ 1, got null"
    );
}

#[test]
fn factories_read_their_options_in_order_and_name_the_bad_one() {
    use crate::js::options::tests::{Fields, Js};
    use crate::js::options::Reader;
    let read = |provider, fields: Vec<(&'static str, Js)>| {
        let o = Fields::new(fields);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let got = factory_options(provider, &Js::Obj, &r, |t: &&str| JsStr::from(*t));
        let reads = o.reads.borrow().clone();
        (got.map_err(|e| factory_error(provider, &e)), reads)
    };
    let (got, reads) = read(
        Provider::OpenAi,
        vec![
            ("baseUrl", Js::Str("https://api.openai.com/v1")),
            ("model", Js::Str("m")),
        ],
    );
    let got = got.unwrap();
    assert_eq!(
        (got.base_url, got.model, got.api_key),
        (Some("https://api.openai.com/v1"), "m", None)
    );
    assert_eq!(got.max_tokens_field, MaxTokensField::MaxCompletionTokens);
    assert_eq!(reads, ["baseUrl", "model", "apiKey", "maxTokensField"]);
    let (got, _) = read(
        Provider::OpenAi,
        vec![
            ("baseUrl", Js::Str("http://localhost:8080/v1")),
            ("model", Js::Str("m")),
            ("apiKey", Js::Str("")),
            ("maxTokensField", Js::Str("max_completion_tokens")),
        ],
    );
    let got = got.unwrap();
    assert_eq!(got.api_key, None);
    assert_eq!(got.max_tokens_field, MaxTokensField::MaxCompletionTokens);
    let error = |provider, fields| read(provider, fields).0.err().unwrap();
    assert_eq!(
        error(Provider::OpenAi, vec![("baseUrl", Js::Str(""))]),
        "openAiSummarizer: options.baseUrl must be a non-empty string, got \"\""
    );
    assert_eq!(
        error(
            Provider::OpenAi,
            vec![("baseUrl", Js::Str("/v1")), ("model", Js::Num(1.0))]
        ),
        "openAiSummarizer: options.model must be a non-empty string, got a number"
    );
    assert_eq!(
        error(
            Provider::OpenAi,
            vec![
                ("baseUrl", Js::Str("/v1")),
                ("model", Js::Str("m")),
                ("apiKey", Js::Obj)
            ]
        ),
        "openAiSummarizer: options.apiKey must be a string, got an object"
    );
    assert_eq!(
        error(
            Provider::OpenAi,
            vec![
                ("baseUrl", Js::Str("/v1")),
                ("model", Js::Str("m")),
                ("maxTokensField", Js::Str("tokens"))
            ]
        ),
        "openAiSummarizer: options.maxTokensField must be \"max_tokens\" or \"max_completion_tokens\", got \"tokens\""
    );
    // Anthropic: the default URL, and a key or a proxy.
    let (got, reads) = read(
        Provider::Anthropic,
        vec![("model", Js::Str("c")), ("apiKey", Js::Str("k"))],
    );
    let got = got.unwrap();
    assert_eq!((got.base_url, got.api_key), (None, Some("k")));
    assert_eq!(got.max_tokens_field, MaxTokensField::MaxTokens);
    assert_eq!(reads, ["baseUrl", "model", "apiKey"]);
    let (got, _) = read(
        Provider::Anthropic,
        vec![("model", Js::Str("c")), ("baseUrl", Js::Str("/llm"))],
    );
    assert_eq!(got.unwrap().api_key, None);
    let (got, reads) = read(
        Provider::Anthropic,
        vec![("model", Js::Str("c")), ("apiKey", Js::Null)],
    );
    assert_eq!(
        got.err().unwrap(),
        "anthropicSummarizer: options.apiKey must be a non-empty string (or give a baseUrl: your own proxy, which adds the key), got null"
    );
    assert_eq!(reads, ["baseUrl", "model", "apiKey", "apiKey"]);
    let o = Fields::new(vec![]);
    let get = |k| o.get(k);
    let r = Reader {
        root: "options",
        get: &get,
    };
    let e = factory_options(Provider::Anthropic, &Js::Null, &r, |t: &&str| {
        JsStr::from(*t)
    });
    assert_eq!(
        factory_error(Provider::Anthropic, &e.err().unwrap()),
        "anthropicSummarizer: options must be an object, got null"
    );
}

#[test]
fn the_body_fetch_options_and_result_as_objects() {
    let msg = |role, content| {
        Field::Object(Shape(vec![
            ("role", Field::Str(role)),
            ("content", Field::Value(content)),
        ]))
    };
    let b = body_shape(
        Provider::OpenAi,
        MaxTokensField::MaxCompletionTokens,
        true,
        "m",
        "sys",
        "p",
        512.0,
    );
    assert_eq!(
        b.0,
        vec![
            ("model", Field::Value("m")),
            (
                "messages",
                Field::List(vec![msg("system", "sys"), msg("user", "p")])
            ),
            ("max_completion_tokens", Field::Number(512.0)),
            ("stream", Field::Bool(false)),
        ]
    );
    let b = body_shape(
        Provider::OpenAi,
        MaxTokensField::MaxTokens,
        false,
        "m",
        "",
        "p",
        512.0,
    );
    assert_eq!(
        b.get("messages"),
        Some(&Field::List(vec![msg("user", "p")]))
    );
    assert_eq!(b.keys(), ["model", "messages", "max_tokens", "stream"]);
    let b = body_shape(
        Provider::Anthropic,
        MaxTokensField::MaxTokens,
        true,
        "m",
        "sys",
        "p",
        100.0,
    );
    assert_eq!(
        b.keys(),
        body_fields(Provider::Anthropic, MaxTokensField::MaxTokens, true)
            .iter()
            .map(|f| f.0)
            .collect::<Vec<_>>()
    );
    assert_eq!(b.get("system"), Some(&Field::Value("sys")));
    assert_eq!(
        b.get("messages"),
        Some(&Field::List(vec![msg("user", "p")]))
    );
    let b = body_shape(
        Provider::Anthropic,
        MaxTokensField::MaxTokens,
        false,
        "m",
        "",
        "p",
        100.0,
    );
    assert_eq!(b.get("system"), None);

    let i = fetch_init("H", "B", None);
    assert_eq!(
        i.0,
        vec![
            ("method", Field::Str("POST")),
            ("headers", Field::Value("H")),
            ("body", Field::Value("B"))
        ]
    );
    assert_eq!(
        fetch_init("H", "B", Some("S")).get("signal"),
        Some(&Field::Value("S"))
    );

    let r = result_shape(
        Provider::Anthropic,
        Reply {
            text: "t",
            usage: None,
            signature: None,
        },
        "m",
    );
    assert_eq!(r.0, vec![("text", Field::Value("t"))]);
    let r = result_shape(
        Provider::OpenAi,
        Reply {
            text: "t",
            usage: Some(UsageTotals::default()),
            signature: None,
        },
        "m",
    );
    assert_eq!(r.keys(), ["text", "usage"]);
}

/// An on-demand compaction's answer: one signed `compaction` block,
/// stop reason `compaction`, its cost in `usage.iterations`.
fn compacted(stop: &str, content: V) -> V {
    V::Obj(vec![
        (
            "content",
            V::Arr(vec![V::Obj(vec![
                ("type", s("compaction")),
                ("content", content),
                ("signature", s("sig")),
            ])]),
        ),
        ("stop_reason", s(stop)),
        (
            "usage",
            V::Obj(vec![
                ("input_tokens", V::Num(0.0)),
                ("output_tokens", V::Num(0.0)),
                (
                    "iterations",
                    V::Arr(vec![V::Obj(vec![
                        ("type", s("compaction")),
                        ("input_tokens", V::Num(9000.0)),
                        ("output_tokens", V::Num(400.0)),
                        ("cache_read_input_tokens", V::Num(8000.0)),
                    ])]),
                ),
            ]),
        ),
    ])
}

#[test]
fn an_on_demand_compaction_gives_its_block_text_signature_and_iterations_cost() {
    let r = reply(
        Provider::AnthropicCompaction,
        200.0,
        Some(compacted("compaction", s("The summary"))),
        "",
    )
    .unwrap();
    assert_eq!(
        (r.text.as_str(), r.signature.as_deref()),
        ("The summary", Some("sig"))
    );
    let u = r.usage.unwrap();
    assert_eq!(
        (u.input, u.output, u.cache_read, u.total_tokens),
        (9000.0, 400.0, 8000.0, 17400.0)
    );
    let shape = result_shape(Provider::AnthropicCompaction, r, "claude".to_owned());
    assert_eq!(shape.keys(), ["text", "provider", "usage"]);
    let Some(Field::Object(provider)) = shape.get("provider") else {
        panic!("a provider record");
    };
    assert_eq!(
        provider.keys(),
        ["name", "provider", "model", "part", "onDemand"]
    );
    assert_eq!(provider.get("name"), Some(&Field::Str("anthropic")));
    assert_eq!(provider.get("onDemand"), Some(&Field::Bool(true)));
    let Some(Field::Object(part)) = provider.get("part") else {
        panic!("the part");
    };
    assert_eq!(
        part.get("text"),
        Some(&Field::Value("The summary".to_owned()))
    );
}

#[test]
fn an_on_demand_compaction_that_did_not_compact_is_a_failure() {
    // Another stop reason: the block, if any, is not a summary.
    let e = reply(
        Provider::AnthropicCompaction,
        200.0,
        Some(compacted("max_tokens", s("cut"))),
        "",
    )
    .err()
    .unwrap();
    assert_eq!(
        e.message,
        "Anthropic compaction: no compaction in the response (stop_reason: \"max_tokens\")"
    );
    // A failed summary: `content: null`.
    assert!(reply(
        Provider::AnthropicCompaction,
        200.0,
        Some(compacted("compaction", V::Null)),
        ""
    )
    .is_err());
}

#[test]
fn an_on_demand_compaction_request_names_its_beta_and_asks_to_summarize() {
    let headers = default_headers(Provider::AnthropicCompaction, true);
    assert!(headers.contains(&("anthropic-beta", HeaderValue::Fixed(COMPACTION_BETA))));
    assert!(!default_headers(Provider::Anthropic, true)
        .iter()
        .any(|(n, _)| *n == "anthropic-beta"));
    let fields = body_fields(
        Provider::AnthropicCompaction,
        MaxTokensField::MaxTokens,
        true,
    );
    let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["model", "max_tokens", "messages", "compaction"]);
    assert_eq!(
        endpoint_url(Provider::AnthropicCompaction, None).to_string_lossy(),
        "https://api.anthropic.com/v1/messages"
    );
}

#[test]
fn a_usage_object_is_read_as_pi_ai_writes_it_missing_numbers_zero() {
    let usage = V::Obj(vec![
        ("input", V::Num(100.0)),
        ("output", V::Num(20.0)),
        ("cacheRead", s("30")),
        ("totalTokens", V::Num(150.0)),
        (
            "cost",
            V::Obj(vec![
                ("input", V::Num(0.5)),
                ("total", V::Num(0.75)),
                ("output", V::Null),
            ]),
        ),
    ]);
    let u = usage_totals(&usage);
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (100.0, 20.0, 0.0, 0.0)
    );
    assert_eq!(u.total_tokens, 150.0);
    let c = u.cost;
    assert_eq!(
        (c.input, c.output, c.cache_read, c.cache_write, c.total),
        (0.5, 0.0, 0.0, 0.0, 0.75)
    );
    assert_eq!(usage_totals(&V::Missing), UsageTotals::default());
}

#[test]
fn headers_are_pairs_of_strings_from_an_iterable_or_a_record() {
    use HeaderEntry::*;
    let got = || "an object".to_string();
    let pairs = vec![Pair("a", "1"), Pair("b", "2")];
    assert_eq!(
        header_pairs(Provider::OpenAi, pairs, false, || unreachable!()),
        Ok(vec![("a", "1"), ("b", "2")])
    );
    // The first entry that is no pair of strings refuses them all.
    let entries = vec![Pair("a", "1"), Pair("b", "2"), NotPair, NotPair];
    assert_eq!(
        header_pairs(Provider::OpenAi, entries, true, got),
        Err("openAiSummarizer: options.headers[2] must be a [name, value] pair of strings".into())
    );
    let entries = vec![
        Pair("a", "1"),
        NotString {
            name: "x".into(),
            got: "a number".into(),
        },
    ];
    assert_eq!(
        header_pairs(Provider::Anthropic, entries, true, got),
        Err("anthropicSummarizer: options.headers[\"x\"] must be a string, got a number".into())
    );
    // Nothing: fine from an iterable or a plain object, refused otherwise.
    assert_eq!(
        header_pairs::<&str>(Provider::OpenAi, vec![], true, got),
        Ok(vec![])
    );
    assert_eq!(
        header_pairs::<&str>(Provider::OpenAi, vec![], false, got),
        Err(format!(
            "openAiSummarizer: options.headers must be {HEADERS_EXPECTED}, got an object"
        ))
    );
}
