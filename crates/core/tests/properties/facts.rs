//! The facts of a JSON message, as the boundary's helper gathers them from
//! a JavaScript one (every length by block type, the usage numbers), for
//! tests that run the core on `core::json` messages. Shared with the fuzz
//! targets (`fuzz/src/lib.rs` includes this file).
#![allow(dead_code)]

use agent_compaction_core::js::json::{stringify_len, Json};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::estimate::{MessageFacts, RawFacts, UsageNumbers};
use agent_compaction_core::tokens::overflow::StopReason;

fn units(value: Option<&Json>) -> u64 {
    value.and_then(Json::as_str).map_or(0, |s| s.len() as u64)
}

pub fn role(message: &Json) -> Role {
    match message.get("role") {
        Some(Json::String(r)) => Role::from_name(&r.to_string_lossy()),
        _ => Role::Other,
    }
}

pub fn raw_facts(message: &Json) -> RawFacts {
    let mut f = RawFacts {
        role: Some(role(message)),
        timestamp: message
            .get("timestamp")
            .and_then(Json::as_f64)
            .unwrap_or(f64::NAN),
        summary: units(message.get("summary")),
        command: units(message.get("command")),
        output: units(message.get("output")),
        stop_reason: message
            .get("stopReason")
            .and_then(Json::as_str)
            .map(|s| StopReason::from_name(&s.to_string_lossy())),
        ..RawFacts::default()
    };
    match message.get("content") {
        Some(Json::String(s)) => f.content_string = Some(s.len() as u64),
        Some(Json::Array(blocks)) => {
            for block in blocks {
                let kind = block.get("type").and_then(Json::as_str);
                let is = |name: &str| kind.is_some_and(|k| k.eq_str(name));
                if is("text") {
                    f.text += units(block.get("text"));
                } else if is("thinking") {
                    f.thinking += units(block.get("thinking"));
                } else if is("toolCall") {
                    f.tool_calls += units(block.get("name"))
                        + block
                            .get("arguments")
                            .map_or(0, |a| stringify_len(a) as u64);
                } else if is("image") {
                    f.images += 1;
                }
            }
        }
        _ => {}
    }
    if let Some(Json::Object(u)) = message.get("usage") {
        let n = |k: &str| u.get(k).and_then(Json::as_f64).unwrap_or(f64::NAN);
        f.usage = Some(UsageNumbers {
            input: n("input"),
            output: n("output"),
            cache_read: n("cacheRead"),
            cache_write: n("cacheWrite"),
            total_tokens: n("totalTokens"),
        });
    }
    f
}

pub fn facts_of(messages: &[Json]) -> Vec<MessageFacts> {
    messages
        .iter()
        .map(|m| MessageFacts::from_raw(&raw_facts(m)))
        .collect()
}

pub fn roles_of(facts: &[MessageFacts]) -> Vec<Role> {
    facts.iter().map(|f| f.role).collect()
}
