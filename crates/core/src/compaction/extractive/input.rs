//! The messages the extractive summarizer reads, from the JSON text the
//! package's JavaScript writes of them (`extractFacts` in the binding's shim:
//! `[{ r: role, t: text, n: toolName, e: isError, c: [[tool, argument], …] }]`).
//! The summarizer is a wasm module of its own in the package, so what it
//! reads crosses as one string.

use super::{ExtractMessage, ExtractRole};
use crate::js::json::{self, Json};

/// Why the facts could not be read.
pub const UNREADABLE_FACTS: &str = "could not read the messages to summarize";

/// The messages of `text`, or [`UNREADABLE_FACTS`] when it is not a JSON
/// array. Fields of the wrong type read as absent: a missing role is
/// [`ExtractRole::Other`], a missing text empty.
pub fn messages_from_facts(text: &str) -> Result<Vec<ExtractMessage>, &'static str> {
    let items = match json::parse(text) {
        Ok(Json::Array(items)) => items,
        _ => return Err(UNREADABLE_FACTS),
    };
    let lossy = |v: Option<&Json>| v.and_then(|j| j.as_str()).map(|s| s.to_string_lossy());
    Ok(items
        .iter()
        .map(|m| ExtractMessage {
            role: match lossy(m.get("r")).as_deref() {
                Some("user") => ExtractRole::User,
                Some("assistant") => ExtractRole::Assistant,
                Some("toolResult") | Some("bashExecution") => ExtractRole::ToolResult,
                _ => ExtractRole::Other,
            },
            text: lossy(m.get("t")).unwrap_or_default(),
            tool_name: lossy(m.get("n")),
            tool_calls: m
                .get("c")
                .and_then(|c| c.as_array())
                .unwrap_or(&[])
                .iter()
                .filter_map(|pair| {
                    let pair = pair.as_array()?;
                    Some((lossy(pair.first())?, lossy(pair.get(1)).unwrap_or_default()))
                })
                .collect(),
            is_error: m.get("e").and_then(|e| e.as_bool()).unwrap_or(false),
        })
        .collect())
}
