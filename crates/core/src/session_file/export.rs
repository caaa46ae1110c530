//! The flat message array → a version-3 pi session file.
//!
//! Every message becomes one entry, in array order, each the child of the
//! one before: a straight branch whose last entry is pi's leaf.
//!
//! - A `compactionSummary` becomes a `compaction` entry right where the
//!   summary is, with `firstKeptEntryId` naming the entry after it. pi looks
//!   for the first kept entry *before* the compaction, does not find it, and
//!   so builds the context from the summary and the entries after it: what
//!   `transformContext` gives. (pi's own files put the compaction entry
//!   later, after the kept messages, and point back; which messages were
//!   kept rather than added after the compaction is not recorded in the
//!   flat array, and both layouts give pi the same context.) pi's next
//!   compaction starts summarizing at that first kept entry, as this
//!   library's does. A summary at the very end has no first kept entry and
//!   the field is left out.
//! - A `branchSummary` becomes a `branch_summary` entry and a `custom`
//!   message a `custom_message` entry, unless its timestamp cannot be an ISO
//!   date (not a whole number of milliseconds in `Date`'s range), or a
//!   branch summary's stored text would be empty (pi skips those), or a
//!   custom message has fields of its own beyond pi's (pi's
//!   `createCustomMessage` would drop them): then it is stored as a
//!   `message` entry, which pi passes through unchanged.
//! - A `toolOutputCleared` marker (the clearing tier's) becomes a `custom`
//!   entry holding it ([`super::cleared`]), unless its timestamp cannot be
//!   an ISO date (then a `message` entry).
//! - A summary's fields that its entry type has no place for (an app's
//!   own) go into the entry's `messageFields` object, which pi ignores.
//! - Every other message, whatever its role, is a `message` entry carrying
//!   the message as it is; pi keeps unknown roles in the context, and its
//!   `convertToLlm` drops them as this library's does.
//!
//! Summary texts get pi's file tags and branch preamble back
//! ([`super::summary_text`]), unless the summary is `verbatim` (a pi text
//! kept whole): then its text is written as it is, and the mark goes into
//! `messageFields` with a summary's other fields of its own.

use super::fields::{self, MESSAGE_FIELDS};
use super::js_semantics::{describe, trim_units};
use super::summary_text::{is_verbatim, to_stored, Kind as TextKind};
use crate::error::{FieldPath, InputError};
use crate::js::iso_time::{format_iso, is_exact_time, parse_iso, time_clip};
use crate::js::json::{stringify, Json, JsonObject};
use crate::js::number::number_to_string;
use crate::js::string::{push_hex, JsStr};
use crate::message::file_lists::VERBATIM;

/// What the caller's environment supplies when the options do not.
#[derive(Clone, Debug)]
pub struct ExportDefaults {
    /// A fresh session id (pi uses UUIDv7).
    pub session_id: JsStr,
    /// The current time, for a header when no message has a usable timestamp.
    pub now_ms: f64,
}

/// The options of an export, read from the caller's object.
#[derive(Clone, Debug, Default, PartialEq)]
struct Options {
    id: Option<JsStr>,
    cwd: Option<JsStr>,
    timestamp: Option<f64>,
    parent_session: Option<JsStr>,
    title: Option<JsStr>,
    model: Option<(JsStr, JsStr)>,
    thinking_level: Option<JsStr>,
}

fn option_path(name: &'static str) -> FieldPath {
    FieldPath::argument("options").field(name)
}

fn wrong(path: FieldPath, expected: &'static str, got: Option<&Json>) -> InputError {
    InputError::WrongType {
        path,
        expected,
        got: describe(got),
    }
}

/// An optional string option (`undefined` and `null` mean "not given").
fn string_option(o: &JsonObject, name: &'static str) -> Result<Option<JsStr>, InputError> {
    match o.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        other => Err(wrong(option_path(name), "a string or undefined", other)),
    }
}

fn read_options(options: Option<&Json>) -> Result<Options, InputError> {
    let o = match options {
        None | Some(Json::Null) => return Ok(Options::default()),
        Some(Json::Object(o)) => o,
        other => {
            return Err(wrong(
                FieldPath::argument("options"),
                "an object or undefined",
                other,
            ))
        }
    };
    let timestamp =
        match o.get("timestamp") {
            None | Some(Json::Null) => None,
            Some(Json::Number(ms)) => Some(time_clip(*ms).ok_or_else(|| {
                wrong(
                    option_path("timestamp"),
                    "a time in milliseconds that a Date can hold",
                    o.get("timestamp"),
                )
            })?),
            Some(Json::String(text)) => Some(parse_iso(&text.to_string_lossy()).ok_or_else(
                || InputError::WrongType {
                    path: option_path("timestamp"),
                    expected: "milliseconds or an ISO 8601 date with a zone",
                    got: text.quoted(),
                },
            )?),
            other => {
                return Err(wrong(
                    option_path("timestamp"),
                    "milliseconds or an ISO 8601 date string",
                    other,
                ))
            }
        };
    Ok(Options {
        id: string_option(o, "id")?,
        cwd: string_option(o, "cwd")?,
        timestamp,
        parent_session: string_option(o, "parentSession")?,
        title: string_option(o, "title")?,
        model: model_option(o.get("model"))?,
        thinking_level: string_option(o, "thinkingLevel")?,
    })
}

/// `"provider/modelId"`, `{ provider, modelId }` or a pi-ai `Model` (`{ provider, id }`).
fn model_option(value: Option<&Json>) -> Result<Option<(JsStr, JsStr)>, InputError> {
    const EXPECTED: &str =
        "a \"provider/modelId\" string or an object with string provider and modelId (or id)";
    let model = match value {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::String(key)) => split_model_key(key),
        Some(Json::Object(o)) => {
            let id = o.get("modelId").or_else(|| o.get("id"));
            match (o.get("provider"), id) {
                (Some(Json::String(p)), Some(Json::String(m))) => Some((p.clone(), m.clone())),
                _ => None,
            }
        }
        Some(_) => None,
    };
    match model {
        Some(m) => Ok(Some(m)),
        None => Err(wrong(option_path("model"), EXPECTED, value)),
    }
}

/// A `"provider/modelId"` key split at its first `/`, when both parts are
/// non-empty: the model a `model_change` entry can name.
pub fn split_model_key(key: &JsStr) -> Option<(JsStr, JsStr)> {
    let units = key.as_units();
    let at = units.iter().position(|&u| u == u16::from(b'/'))?;
    let provider = units.get(..at)?;
    let model_id = units.get(at + 1..)?;
    (!provider.is_empty() && !model_id.is_empty()).then(|| {
        (
            JsStr::from_units(provider.to_vec()),
            JsStr::from_units(model_id.to_vec()),
        )
    })
}

/// A message's timestamp, when it survives a trip through an ISO date.
fn exact_timestamp(message: &JsonObject) -> Option<f64> {
    message
        .get("timestamp")
        .and_then(Json::as_f64)
        .filter(|&t| is_exact_time(t))
}

fn iso(ms: f64) -> Json {
    // Every time written is clipped first, so this always formats.
    Json::from(format_iso(ms).unwrap_or_default().as_str())
}

/// Entry ids: eight hex digits, like pi's, counting up from 1.
fn entry_id(n: usize) -> Json {
    let mut id = String::with_capacity(8);
    push_hex(&mut id, n as u64, 8);
    Json::from(id.as_str())
}

/// Builds entries one after the other, each the child of the previous one.
struct Writer {
    text: JsStr,
    count: usize,
    last_ms: f64,
}

impl Writer {
    /// An entry with pi's leading fields: type, id, parentId, timestamp.
    fn entry(&mut self, entry_type: &str, ms: f64) -> JsonObject {
        let mut e = JsonObject::new();
        e.insert(JsStr::from("type"), Json::from(entry_type));
        self.link(&mut e, ms);
        e
    }

    /// Sets id, parentId and timestamp, in that order.
    fn link(&mut self, e: &mut JsonObject, ms: f64) {
        self.count += 1;
        let parent = match self.count {
            1 => Json::Null,
            n => entry_id(n - 1),
        };
        e.insert(JsStr::from("id"), entry_id(self.count));
        e.insert(JsStr::from("parentId"), parent);
        e.insert(JsStr::from("timestamp"), iso(ms));
        self.last_ms = ms;
    }

    fn write(&mut self, value: JsonObject) {
        stringify(&Json::Object(value), &mut self.text);
        self.text.push_str("\n");
    }

    /// The id the next entry will get.
    fn next_id(&self) -> Json {
        entry_id(self.count + 1)
    }
}

fn copy_fields(to: &mut JsonObject, from: &JsonObject, keys: &[&str]) {
    for &key in keys {
        if let Some(value) = from.get(key) {
            to.insert(JsStr::from(key), value.clone());
        }
    }
}

fn add_extras(entry: &mut JsonObject, message: &JsonObject, known: &[&str]) {
    if let Some(extra) = fields::extra_fields(message, known) {
        entry.insert(JsStr::from(MESSAGE_FIELDS), Json::Object(extra));
    }
}

fn summary_of(message: &JsonObject, index: usize) -> Result<&JsStr, InputError> {
    let value = message.get("summary");
    value.and_then(Json::as_str).ok_or_else(|| {
        wrong(
            FieldPath::element("messages", index).field("summary"),
            "a string",
            value,
        )
    })
}

/// Whether [`export_session`] reads no message after `item` (one of the
/// messages, in order): an element that is no object is reported, or a
/// message before it. A host that reads the messages a chunk at a time
/// (`message::chunks`) stops after the chunk that holds one, so a sparse
/// array's length is never walked.
pub fn ends_messages(item: &Json) -> bool {
    !matches!(item, Json::Object(_))
}

/// Writes the flat array as a version-3 pi session file (JSONL, one entry
/// per line, ending with a newline). `options` is the caller's object:
/// `id`, `cwd`, `timestamp` (ms or ISO), `parentSession`, `title` (pi's
/// session name), `model` and `thinkingLevel`; other fields are ignored, so
/// the `session` an import returns can be passed back as it is.
pub fn export_session(
    messages: &Json,
    options: Option<&Json>,
    defaults: &ExportDefaults,
) -> Result<String, InputError> {
    let Json::Array(items) = messages else {
        return Err(wrong(
            FieldPath::argument("messages"),
            "an array of messages",
            Some(messages),
        ));
    };
    let options = read_options(options)?;
    let mut list: Vec<(&JsonObject, &JsStr)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Json::Object(message) = item else {
            return Err(wrong(
                FieldPath::element("messages", i),
                "a message object",
                Some(item),
            ));
        };
        let Some(Json::String(role)) = message.get("role") else {
            return Err(wrong(
                FieldPath::element("messages", i).field("role"),
                "a string",
                message.get("role"),
            ));
        };
        // As every other reader of the messages takes it: a pin is a boolean.
        if let Some(pinned) = message
            .get("pinned")
            .filter(|p| !matches!(p, Json::Bool(_)))
        {
            return Err(wrong(
                FieldPath::element("messages", i).field("pinned"),
                "a boolean",
                Some(pinned),
            ));
        }
        list.push((message, role));
    }

    let start_ms = options
        .timestamp
        .or_else(|| list.iter().find_map(|(m, _)| exact_timestamp(m)))
        .or_else(|| time_clip(defaults.now_ms))
        .unwrap_or(0.0);
    let mut w = Writer {
        text: JsStr::new(),
        count: 0,
        last_ms: start_ms,
    };

    let mut header = JsonObject::new();
    header.insert(JsStr::from("type"), Json::from("session"));
    header.insert(JsStr::from("version"), Json::Number(3.0));
    let id = options
        .id
        .clone()
        .unwrap_or_else(|| defaults.session_id.clone());
    header.insert(JsStr::from("id"), Json::String(id));
    header.insert(JsStr::from("timestamp"), iso(start_ms));
    if let Some(cwd) = &options.cwd {
        header.insert(JsStr::from("cwd"), Json::String(cwd.clone()));
    }
    if let Some(parent) = &options.parent_session {
        header.insert(JsStr::from("parentSession"), Json::String(parent.clone()));
    }
    w.write(header);

    if let Some(title) = &options.title {
        let name = trim_units(title.as_units());
        if !name.is_empty() {
            let mut e = w.entry("session_info", start_ms);
            e.insert(
                JsStr::from("name"),
                Json::String(JsStr::from_units(name.to_vec())),
            );
            w.write(e);
        }
    }

    for (i, &(message, role)) in list.iter().enumerate() {
        let ts = exact_timestamp(message);
        let entry = if role.eq_str("compactionSummary") {
            Some(compaction_entry(
                &mut w,
                message,
                i,
                ts,
                i + 1 < list.len(),
            )?)
        } else if role.eq_str("branchSummary") {
            branch_entry(&mut w, message, i, ts)?
        } else if role.eq_str("custom") && fields::extra_fields(message, fields::CUSTOM).is_none() {
            ts.map(|ts| custom_entry(&mut w, message, ts))
        } else if role.eq_str(crate::compaction::clearing::MARKER_ROLE) {
            // A clearing's marker: a `custom` entry pi keeps out of the
            // model's context (super::cleared).
            ts.map(|ts| {
                let mut e = super::cleared::entry_start(message);
                w.link(&mut e, ts);
                e
            })
        } else {
            None
        };
        let entry = match entry {
            Some(e) => e,
            None => {
                let mut e = w.entry("message", ts.unwrap_or(w.last_ms));
                e.insert(JsStr::from("message"), Json::Object(message.clone()));
                e
            }
        };
        w.write(entry);
    }

    if let Some((provider, model_id)) = &options.model {
        let mut e = w.entry("model_change", w.last_ms);
        e.insert(JsStr::from("provider"), Json::String(provider.clone()));
        e.insert(JsStr::from("modelId"), Json::String(model_id.clone()));
        w.write(e);
    }
    if let Some(level) = &options.thinking_level {
        let mut e = w.entry("thinking_level_change", w.last_ms);
        e.insert(JsStr::from("thinkingLevel"), Json::String(level.clone()));
        w.write(e);
    }
    // Stringify escapes lone surrogates, so the text is well-formed UTF-16.
    Ok(w.text.to_string_lossy())
}

fn compaction_entry(
    w: &mut Writer,
    message: &JsonObject,
    index: usize,
    ts: Option<f64>,
    has_next: bool,
) -> Result<JsonObject, InputError> {
    let summary = summary_of(message, index)?;
    let Some(ts) = ts else {
        let value = message.get("timestamp");
        return Err(InputError::WrongType {
            path: FieldPath::element("messages", index).field("timestamp"),
            expected:
                "a whole number of milliseconds that a Date can hold (pi stores it as an ISO date)",
            got: match value {
                Some(Json::Number(x)) => number_to_string(*x),
                other => describe(other),
            },
        });
    };
    let mut e = w.entry("compaction", ts);
    let details = message.get("details");
    e.insert(
        JsStr::from("summary"),
        Json::String(to_stored(
            TextKind::Compaction,
            summary,
            details,
            is_verbatim(message.get(VERBATIM)),
        )),
    );
    if has_next {
        e.insert(JsStr::from("firstKeptEntryId"), w.next_id());
    }
    copy_fields(
        &mut e,
        message,
        &["tokensBefore", "details", "fromHook", "usage"],
    );
    add_extras(&mut e, message, fields::COMPACTION_SUMMARY);
    Ok(e)
}

fn branch_entry(
    w: &mut Writer,
    message: &JsonObject,
    index: usize,
    ts: Option<f64>,
) -> Result<Option<JsonObject>, InputError> {
    let summary = summary_of(message, index)?;
    let kind = TextKind::Branch {
        from_hook: message.get("fromHook"),
    };
    let verbatim = is_verbatim(message.get(VERBATIM));
    let stored = to_stored(kind, summary, message.get("details"), verbatim);
    let Some(ts) = ts.filter(|_| !stored.is_empty()) else {
        return Ok(None);
    };
    let mut e = w.entry("branch_summary", ts);
    copy_fields(&mut e, message, &["fromId"]);
    e.insert(JsStr::from("summary"), Json::String(stored));
    copy_fields(&mut e, message, &["details", "fromHook", "usage"]);
    add_extras(&mut e, message, fields::BRANCH_SUMMARY);
    Ok(Some(e))
}

fn custom_entry(w: &mut Writer, message: &JsonObject, ts: f64) -> JsonObject {
    // pi's order: type, customType, content, display, details, id, parentId, timestamp.
    let mut e = JsonObject::new();
    e.insert(JsStr::from("type"), Json::from("custom_message"));
    copy_fields(
        &mut e,
        message,
        &["customType", "content", "display", "details"],
    );
    w.link(&mut e, ts);
    add_extras(&mut e, message, fields::CUSTOM);
    e
}
