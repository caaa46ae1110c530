//! A pi session file → the flat message array.
//!
//! The active branch is walked as pi's `buildSessionContext` walks it, and
//! every entry that yields a message there yields the same message here, in
//! path order. Each compaction on the branch becomes a `compactionSummary`
//! placed at its cut: just before the entry its `firstKeptEntryId` names,
//! when pi finds that entry before the compaction on the branch; otherwise
//! where the compaction entry itself is (pi then keeps nothing from before
//! it). A summary is never placed after a later compaction's summary (it is
//! moved back to that one's cut if it would be), so the last summary of the
//! array is the last compaction of the branch, and `transformContext` of the
//! array yields what pi's context holds. A summary whose compaction entry
//! comes after its kept messages (pi's own layout) gets `keptMessages`:
//! how many they are (their usage is stale, `tokens::context_tokens::Stale`).

use super::entries::{active_path, load, Entry, Kind};
use super::error::SessionFileError;
use super::fields;
use super::js_semantics::{describe, quote_for_error, trim_units, truthy};
use super::summary_text::{from_stored, is_verbatim, Kind as TextKind, Summary};
use crate::js::iso_time::{date_value, is_exact_time, parse_iso};
use crate::js::json::{Json, JsonObject};
use crate::js::string::JsStr;
use crate::message::file_lists::VERBATIM;

/// What a session file holds besides its messages.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The header's id.
    pub id: JsStr,
    /// The format version pi read the file as, before migrating it.
    pub version: f64,
    /// The header's fields, when they are strings.
    pub timestamp: Option<JsStr>,
    pub cwd: Option<JsStr>,
    pub parent_session: Option<JsStr>,
    /// A version-1 header's model.
    pub provider: Option<JsStr>,
    pub model_id: Option<JsStr>,
    /// pi's session name: the latest `session_info` entry's, trimmed.
    pub title: Option<JsStr>,
    /// The model pi's `buildSessionContext` reports: the last
    /// `model_change` or assistant message on the active branch
    /// (`provider`, `modelId`), passing over one whose fields are not
    /// both strings.
    pub model: Option<(Option<Json>, Option<Json>)>,
    /// pi's thinking level for the branch ("off" unless a change says otherwise).
    pub thinking_level: Option<Json>,
    /// Lines that are not valid JSON, which pi skips too.
    pub skipped_lines: Vec<usize>,
}

/// A session file as the flat array and its metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedSession {
    pub messages: Vec<Json>,
    pub session: SessionInfo,
}

impl ImportedSession {
    /// `{ messages, session }` as one JSON value.
    pub fn into_json(self) -> Json {
        let s = self.session;
        let mut info = JsonObject::new();
        let mut put = |key: &str, value: Option<Json>| {
            if let Some(value) = value {
                info.insert(JsStr::from(key), value);
            }
        };
        put("id", Some(Json::String(s.id)));
        put("version", Some(Json::Number(s.version)));
        put("timestamp", s.timestamp.map(Json::String));
        put("cwd", s.cwd.map(Json::String));
        put("parentSession", s.parent_session.map(Json::String));
        put("provider", s.provider.map(Json::String));
        put("modelId", s.model_id.map(Json::String));
        put("title", s.title.map(Json::String));
        put(
            "model",
            s.model.map(|(provider, model_id)| {
                let mut m = JsonObject::new();
                if let Some(p) = provider {
                    m.insert(JsStr::from("provider"), p);
                }
                if let Some(id) = model_id {
                    m.insert(JsStr::from("modelId"), id);
                }
                Json::Object(m)
            }),
        );
        put("thinkingLevel", s.thinking_level);
        put(
            "skippedLines",
            Some(Json::Array(
                s.skipped_lines
                    .into_iter()
                    .map(|l| Json::Number(l as f64))
                    .collect(),
            )),
        );
        let mut out = JsonObject::new();
        out.insert(JsStr::from("messages"), Json::Array(self.messages));
        out.insert(JsStr::from("session"), Json::Object(info));
        Json::Object(out)
    }
}

/// Reads a pi session file (any version pi 0.73 reads) into the flat array.
pub fn import_session(text: &str) -> Result<ImportedSession, SessionFileError> {
    let file = load(text)?;
    let entries = &file.entries;
    let path = active_path(entries)?;
    let on_path = |p: usize| path.get(p).and_then(|&i| entries.get(i));

    // Settings along the branch, as buildSessionContext collects them.
    let mut thinking_level = Some(Json::from("off"));
    let mut model = None;
    let mut compactions: Vec<usize> = Vec::new(); // positions on the path
    for (p, entry) in path.iter().filter_map(|&i| entries.get(i)).enumerate() {
        match entry.kind {
            // Only what the session's declared types can hold: a change
            // whose level, provider or model is not a string says nothing
            // this package could write back (messagesToPiSession refuses
            // it), and is passed over.
            Kind::ThinkingLevelChange => {
                if let Some(level @ Json::String(_)) = entry.get("thinkingLevel") {
                    thinking_level = Some(level.clone());
                }
            }
            Kind::ModelChange => {
                model = named_model(entry.get("provider"), entry.get("modelId")).or(model)
            }
            Kind::Message => {
                let message = message_of(entry)?;
                if matches!(message.get("role"), Some(Json::String(r)) if r.eq_str("assistant")) {
                    model = named_model(message.get("provider"), message.get("model")).or(model);
                }
            }
            Kind::Compaction => compactions.push(p),
            _ => {}
        }
    }

    // Where each summary goes: its cut, clamped so that no summary comes
    // after a later compaction's.
    let mut slots: Vec<usize> = compactions
        .iter()
        .map(|&p| {
            let first_kept = on_path(p).map(|c| &c.first_kept);
            (0..p)
                .find(|&q| on_path(q).map(|e| &e.id) == first_kept)
                .unwrap_or(p)
        })
        .collect();
    let mut limit = usize::MAX;
    for slot in slots.iter_mut().rev() {
        *slot = (*slot).min(limit);
        limit = *slot;
    }

    let mut messages = Vec::with_capacity(path.len() + compactions.len());
    let mut next = 0; // the next compaction to place
    let mut placed: Vec<Option<usize>> = vec![None; compactions.len()];
    for (p, entry) in path.iter().filter_map(|&i| entries.get(i)).enumerate() {
        while slots.get(next) == Some(&p) {
            if let Some(c) = compactions.get(next).and_then(|&cp| on_path(cp)) {
                placed[next] = Some(messages.len());
                messages.push(compaction_summary(c)?);
            }
            next += 1;
        }
        // At the compaction entry itself: the messages between its summary
        // and here are the ones it kept (pi's files put the entry after
        // them), unless the summary says so itself. A summary right before
        // its entry (as this package exports it) tells nothing.
        // (`compactions` is in path order: a binary search finds its entry.)
        if let Ok(k) = compactions.binary_search(&p) {
            if let Some(at) = placed[k].filter(|&at| at + 1 < messages.len()) {
                let kept = messages.len() - at - 1;
                if let Some(Json::Object(summary)) = messages.get_mut(at) {
                    if summary.get_js(&JsStr::from("keptMessages")).is_none() {
                        summary.insert(JsStr::from("keptMessages"), Json::Number(kept as f64));
                    }
                }
            }
        }
        if let Some(message) = message_from(entry)? {
            messages.push(message);
        }
    }

    let header = entries.first().map(|h| &h.value);
    let header_string = |key: &str| {
        header
            .and_then(|h| h.get(key))
            .and_then(Json::as_str)
            .cloned()
    };
    let version = if file.version.is_finite() {
        file.version
    } else if file.version < 2.0 {
        1.0
    } else {
        3.0 // NaN or +Infinity: pi migrates nothing
    };
    Ok(ImportedSession {
        messages,
        session: SessionInfo {
            id: header_string("id").unwrap_or_default(),
            version,
            // A header time this package could not write back is left out.
            timestamp: header_string("timestamp")
                .filter(|t| parse_iso(&t.to_string_lossy()).is_some()),
            cwd: header_string("cwd"),
            parent_session: header_string("parentSession"),
            provider: header_string("provider"),
            model_id: header_string("modelId"),
            title: title(entries),
            model,
            thinking_level,
            skipped_lines: file.skipped_lines,
        },
    })
}

/// A model as `{ provider, modelId }`, when both are strings.
fn named_model(
    provider: Option<&Json>,
    model_id: Option<&Json>,
) -> Option<(Option<Json>, Option<Json>)> {
    match (provider, model_id) {
        (Some(p @ Json::String(_)), Some(id @ Json::String(_))) => {
            Some((Some(p.clone()), Some(id.clone())))
        }
        _ => None,
    }
}

/// pi's `getSessionName`: the latest `session_info` entry decides.
fn title(entries: &[Entry]) -> Option<JsStr> {
    let info = entries.iter().rev().find(|e| e.kind == Kind::SessionInfo)?;
    let name = info.get("name")?.as_str()?;
    let trimmed = trim_units(name.as_units());
    (!trimmed.is_empty()).then(|| JsStr::from_units(trimmed.to_vec()))
}

/// A `message` entry's message; pi reads its role, so it must be an object
/// here (pi crashes on a missing one and keeps an odd one in the context,
/// where this library's functions would reject it).
fn message_of(entry: &Entry) -> Result<&JsonObject, SessionFileError> {
    let message = entry.get("message");
    let Some(Json::Object(object)) = message else {
        return Err(SessionFileError::NotAMessage {
            line: entry.line,
            got: describe(message),
        });
    };
    match object.get("role") {
        Some(Json::String(role)) => {
            check_summary_message(entry.line, object, role)?;
            Ok(object)
        }
        role => Err(SessionFileError::BadRole {
            line: entry.line,
            got: describe(role),
        }),
    }
}

/// A summary carried by a `message` entry (pi writes summaries as entries of
/// their own, but passes any message through) must be one this library can
/// use and write back: a string summary and, for a compaction summary, a
/// timestamp an ISO date carries. Otherwise it is refused, as an odd role
/// is, rather than imported into an array that `convertToLlm` and
/// `transformContext` reject or that [`super::export_session`] cannot write.
fn check_summary_message(
    line: usize,
    message: &JsonObject,
    role: &JsStr,
) -> Result<(), SessionFileError> {
    let role = if role.eq_str("compactionSummary") {
        "compactionSummary"
    } else if role.eq_str("branchSummary") {
        "branchSummary"
    } else {
        return Ok(());
    };
    let summary = message.get("summary");
    if !matches!(summary, Some(Json::String(_))) {
        return Err(SessionFileError::BadSummaryMessage {
            line,
            role,
            problem: format!("summary is {}, not a string", describe(summary)),
        });
    }
    let timestamp = message.get("timestamp");
    if role == "compactionSummary" && !timestamp.and_then(Json::as_f64).is_some_and(is_exact_time) {
        return Err(SessionFileError::BadSummaryMessage {
            line,
            role,
            problem: format!(
                "timestamp is {}, not a whole number of milliseconds that a Date can hold \
                 (pi stores a compaction's time as an ISO date)",
                timestamp.map_or("undefined".to_owned(), quote_for_error)
            ),
        });
    }
    Ok(())
}

/// The message an entry of the path contributes, as pi's `appendMessage`
/// decides (compactions are placed separately).
fn message_from(entry: &Entry) -> Result<Option<Json>, SessionFileError> {
    Ok(Some(match entry.kind {
        Kind::Message => Json::Object(message_of(entry)?.clone()),
        Kind::CustomMessage => {
            let mut m = fields::start("custom");
            fields::copy(
                &mut m,
                entry,
                &["customType", "content", "display", "details"],
            );
            m.insert(
                JsStr::from("timestamp"),
                timestamp(entry, "custom_message")?,
            );
            Json::Object(m)
        }
        Kind::BranchSummary if truthy(entry.get("summary")) => {
            let kind = TextKind::Branch {
                from_hook: entry.get("fromHook"),
            };
            let text = summary_text(entry, "branch_summary", kind)?;
            let mut m = fields::start("branchSummary");
            m.insert(JsStr::from("summary"), Json::String(text.text));
            fields::copy(&mut m, entry, &["fromId"]);
            m.insert(
                JsStr::from("timestamp"),
                timestamp(entry, "branch_summary")?,
            );
            fields::copy(&mut m, entry, &["details", "usage", "fromHook"]);
            mark_verbatim(&mut m, text.verbatim);
            fields::extras(&mut m, entry, fields::BRANCH_SUMMARY);
            Json::Object(m)
        }
        // A clearing's marker, as export writes it.
        Kind::Other => match super::cleared::marker_of(entry) {
            Some(marker) => marker,
            None => return Ok(None),
        },
        _ => return Ok(None),
    }))
}

fn compaction_summary(entry: &Entry) -> Result<Json, SessionFileError> {
    let text = summary_text(entry, "compaction", TextKind::Compaction)?;
    let mut m = fields::start("compactionSummary");
    m.insert(JsStr::from("summary"), Json::String(text.text));
    fields::copy(&mut m, entry, &["tokensBefore"]);
    m.insert(JsStr::from("timestamp"), timestamp(entry, "compaction")?);
    fields::copy(&mut m, entry, &["details", "usage", "fromHook"]);
    mark_verbatim(&mut m, text.verbatim);
    fields::extras(&mut m, entry, fields::COMPACTION_SUMMARY);
    Ok(Json::Object(m))
}

/// A summary entry's text as the flat array keeps it
/// ([`super::summary_text`]): an exported `verbatim` summary says so in
/// its message fields. `verbatim` in the result: the mark is to be added.
fn summary_text(
    entry: &Entry,
    entry_type: &'static str,
    kind: TextKind<'_>,
) -> Result<Summary, SessionFileError> {
    let stored = summary(entry, entry_type)?;
    let marked = match entry.get(fields::MESSAGE_FIELDS) {
        Some(Json::Object(extra)) => is_verbatim(extra.get(VERBATIM)),
        _ => false,
    };
    let mut text = from_stored(kind, stored, entry.get("details"), marked);
    // An export's mark comes back with the other message fields, in place.
    text.verbatim &= !marked;
    Ok(text)
}

/// Marks a summary whose text import keeps whole.
fn mark_verbatim(message: &mut JsonObject, verbatim: bool) {
    if verbatim {
        message.insert(JsStr::from(VERBATIM), Json::Bool(true));
    }
}

fn summary<'a>(entry: &'a Entry, entry_type: &'static str) -> Result<&'a JsStr, SessionFileError> {
    let value = entry.get("summary");
    value
        .and_then(Json::as_str)
        .ok_or_else(|| SessionFileError::BadSummary {
            line: entry.line,
            entry_type,
            got: describe(value),
        })
}

/// `new Date(entry.timestamp).getTime()`, which pi gives these messages.
fn timestamp(entry: &Entry, entry_type: &'static str) -> Result<Json, SessionFileError> {
    let value = entry.get("timestamp");
    date_value(value)
        .map(Json::Number)
        .ok_or_else(|| SessionFileError::BadTimestamp {
            line: entry.line,
            entry_type,
            problem: match value {
                None => "has no timestamp".to_owned(),
                Some(v) => format!("has timestamp {}, which is not a date", quote_for_error(v)),
            },
        })
}
