//! OpenAI's compaction endpoint, `POST /responses/compact` ("Compaction" in
//! OpenAI's API guide, developers.openai.com/api/docs/guides/compaction, and
//! `responses.compact` in its API reference): the request's `input` is the
//! conversation to compact, as Responses input items; the reply's `output`
//! is every user message of it, word for word, then one compaction item
//! whose content is encrypted. Only OpenAI reads that item, so the summary's
//! text is a note saying so, and the item travels as the summary's
//! `provider` record, the part `@ai-sdk/openai` carries
//! (`{ type: "custom", kind: "openai.compaction" }`), with the user messages
//! to send before it.

use super::prefix::{
    clean, data_url, message, object, pick, result_text, text, text_at, transform, value_at, Block,
    Msg, Source, F, SEE_IMAGE, TEXT, TYPES,
};
use super::{on_demand_record, Failure, Json, Provider};
use crate::js::shape::{Field, Shape};

/// The provider id of OpenAI's Responses models in the AI SDK.
pub const PROVIDER: &str = "openai.responses";
/// Its provider options key.
pub const NAME: &str = "openai";
/// The AI SDK's kind of the compaction part.
pub const PART_KIND: &str = "openai.compaction";

/// What the summary says when only `provider` can read it (the AI SDK
/// adapter writes the same note for a compaction item it receives).
pub fn sealed_note(provider: &str) -> String {
    format!(
        "[The conversation before this point was compacted by {provider}; its summary is encrypted and only {provider} can read it.]"
    )
}

/// A request without `covered` (a branch summary) and no `readable`
/// summarizer to ask.
pub const NOT_COVERED: &str = "OpenAI compaction: the request has no `covered` messages (a branch summary, or a call from outside a Compactor): OpenAI's compaction has no readable text; give openAiResponsesCompaction a `readable` summarizer for these requests";
/// Nothing of `covered` can be sent.
pub const NOTHING_TO_COMPACT: &str =
    "OpenAI compaction: the messages to compact give no Responses input";

/// A previous summary that is OpenAI's compaction: the items sent in its
/// place (its user messages, as received, then the item).
pub struct Sealed<J> {
    pub input: Vec<J>,
    pub id: J,
    pub encrypted: J,
}

/// `m` as OpenAI's compaction, when it is a compactionSummary whose
/// `provider` record holds an `openai.compaction` part with its item id and
/// encrypted content.
pub fn sealed<J: Source>(m: &J) -> Option<Sealed<J>> {
    if m.get("role").string().as_deref() != Some("compactionSummary") {
        return None;
    }
    let record = m.get("provider");
    let name = record.get("name").string()?;
    let part = record.get("part");
    if part.get("kind").string().as_deref() != Some(PART_KIND) {
        return None;
    }
    let options = part.get("providerOptions").get(&name);
    let (id, encrypted) = (options.get("itemId"), options.get("encryptedContent"));
    (id.text().is_some() && encrypted.text().is_some()).then(|| Sealed {
        input: record.get("input").list().unwrap_or_default(),
        id,
        encrypted,
    })
}

/// The request body: `model`, and as `input` the `covered` messages
/// (pi-ai messages, as `convertToLlm` gives them; a previous summary that
/// is OpenAI's compaction comes as its compactionSummary message) as
/// Responses input items, in the form `@ai-sdk/openai` sends them: user
/// messages with `input_text` and `input_image` parts, an assistant's
/// texts as assistant messages, tool calls as `function_call` items and
/// results as `function_call_output` items (their text; a result of images
/// only, or a call never answered, pi-ai's stand-in text); thinking is not
/// sent. `None` when the messages cannot be read or give no item.
pub fn body<J: Source>(model: (J::Value, &str), covered: &J) -> Option<Shape<J::Value>> {
    let mut input = Vec::new();
    let mut run = Vec::new();
    for m in covered.list()? {
        match sealed(&m) {
            Some(s) => {
                items(model.1, std::mem::take(&mut run), &mut input)?;
                input.extend(s.input.into_iter().map(|i| Field::Value(i.value())));
                input.push(object(vec![
                    ("type", Field::Str("compaction")),
                    ("id", Field::Value(s.id.value())),
                    ("encrypted_content", Field::Value(s.encrypted.value())),
                ]));
            }
            None => run.push(m),
        }
    }
    items(model.1, run, &mut input)?;
    if input.is_empty() {
        return None;
    }
    Some(Shape(vec![
        ("model", Field::Value(model.0)),
        ("input", Field::List(input)),
    ]))
}

/// pi-ai messages as Responses items, appended to `out`.
fn items<J: Source>(model: &str, messages: Vec<J>, out: &mut Vec<F<J>>) -> Option<()> {
    if messages.is_empty() {
        return Some(());
    }
    for m in transform(Provider::OpenAiResponsesCompaction, model, messages)? {
        match m {
            Msg::User(user) => {
                let content = user.get("content");
                let parts = match content.text() {
                    Some(t) => vec![input_text::<J>(&t)],
                    None => {
                        let mut parts = Vec::new();
                        for part in content.list()? {
                            parts.push(match pick(&part, "type", &TYPES) {
                                TEXT => input_text::<J>(&text_at(&part, "text")?),
                                _ => input_image(&part)?,
                            });
                        }
                        parts
                    }
                };
                if !parts.is_empty() {
                    out.push(Field::Object(message("user", Field::List(parts))));
                }
            }
            Msg::Assistant(blocks) => {
                for block in blocks {
                    match block {
                        Block::Text(t) if !J::is_blank(&t) => {
                            out.push(Field::Object(message("assistant", clean::<J>(&t))))
                        }
                        Block::Text(_) | Block::Thinking(_) => {}
                        Block::Call(call, id, _) => out.push(object(vec![
                            ("type", Field::Str("function_call")),
                            ("call_id", call_id(&id.text)),
                            ("name", value_at(&call, "name")),
                            (
                                "arguments",
                                Field::Value(call.get("arguments").stringified()?),
                            ),
                        ])),
                    }
                }
            }
            Msg::Tool(result, id) => {
                let mut images = 0;
                let joined = result_text(result, |_| {
                    images += 1;
                    Some(())
                })?;
                let output = joined.filter(|t| !J::is_empty(t));
                let output = match (output, images) {
                    (Some(t), _) => t,
                    (None, 0) => J::text_of(""),
                    (None, _) => J::text_of(SEE_IMAGE),
                };
                out.push(object(vec![
                    ("type", Field::Str("function_call_output")),
                    ("call_id", call_id(&id.text)),
                    ("output", clean::<J>(&output)),
                ]));
            }
        }
    }
    Some(())
}

/// A Responses call id: pi-ai keeps `call|item` for its own calls.
fn call_id<V>(id: &str) -> Field<V> {
    Field::String(id.split('|').next().unwrap_or(id).to_owned())
}

fn input_text<J: Source>(t: &J::Text) -> F<J> {
    object(vec![
        ("type", Field::Str("input_text")),
        ("text", clean::<J>(t)),
    ])
}

/// An image as a data URL.
fn input_image<J: Source>(image: &J) -> Option<F<J>> {
    Some(object(vec![
        ("type", Field::Str("input_image")),
        ("detail", Field::Str("auto")),
        ("image_url", text::<J>(data_url(image)?)),
    ]))
}

/// A compaction's answer: the user messages OpenAI returned, as they came,
/// and its item.
pub struct Compacted<J> {
    pub input: Vec<J>,
    pub id: J,
    pub encrypted: J,
}

/// The answer in a checked reply's body ([`super::checked`]): `output`'s
/// last compaction item (an id and encrypted content, both strings), and
/// the user messages before it; a reply without one is a failure.
pub fn read<J: Json>(parsed: &J) -> Result<Compacted<J>, Failure> {
    let output = parsed.get("output").items();
    let is_item = |i: &J| {
        i.get("type").string().as_deref() == Some("compaction")
            && i.get("id").text().is_some()
            && i.get("encrypted_content").text().is_some()
    };
    let Some(at) = output.iter().rposition(is_item) else {
        return Err(Failure {
            message: format!(
                "{}: no compaction in the response",
                Provider::OpenAiResponsesCompaction.label()
            ),
            status: None,
        });
    };
    let mut output = output;
    let item = output.swap_remove(at);
    output.truncate(at);
    let input = output
        .into_iter()
        .filter(|i| i.get("role").string().as_deref() == Some("user"))
        .collect();
    Ok(Compacted {
        input,
        id: item.get("id"),
        encrypted: item.get("encrypted_content"),
    })
}

/// What the summarizer resolves to: the note as `text`, the `provider`
/// record (the part as `@ai-sdk/openai` carries the item, the user
/// messages to send before it as `input`), and `usage` when given.
pub fn result_shape<V>(answer: Compacted<V>, model: V, usage: Option<Shape<V>>) -> Shape<V> {
    let options = Shape(vec![
        ("type", Field::Str("compaction")),
        ("itemId", Field::Value(answer.id)),
        ("encryptedContent", Field::Value(answer.encrypted)),
    ]);
    let part = Shape(vec![
        ("type", Field::Str("custom")),
        ("kind", Field::Str(PART_KIND)),
        (
            "providerOptions",
            Field::Object(Shape(vec![(NAME, Field::Object(options))])),
        ),
    ]);
    let mut record = on_demand_record((NAME, PROVIDER), model, part);
    record.push(
        "input",
        Field::List(answer.input.into_iter().map(Field::Value).collect()),
    );
    let mut s = Shape(vec![
        ("text", Field::String(sealed_note(PROVIDER))),
        ("provider", Field::Object(record)),
    ]);
    s.push_some("usage", usage.map(Field::Object));
    s
}
