//! The oracles of the fuzz targets. Each function takes an input the core
//! accepts (text, JSON messages, facts), runs the core on it and panics
//! when the result breaks an invariant; none of them may panic otherwise.
//!
//! Included by the fuzz crate (`fuzz/src/lib.rs`) and by the native test
//! `tests/fuzz_regressions.rs`, both of which have the `facts` and
//! `reference` modules (from `tests/properties/`) at their crate root.
#![allow(dead_code)]

use crate::facts::{facts_of, role, roles_of};
use crate::reference::reference_cut;
use agent_compaction_core::compaction::cut_point::find_cut_point;
use agent_compaction_core::compaction::prepare::prepare_compaction;
use agent_compaction_core::compaction::serialize::serialize_conversation;
use agent_compaction_core::js::json::{parse, stringified, stringify_len, Json, JsonObject};
use agent_compaction_core::js::string::JsStr;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::session_file::{export_session, import_session, ExportDefaults};
use agent_compaction_core::tokens::context_index::ContextIndex;
use agent_compaction_core::tokens::context_tokens::ContextTokens;
use agent_compaction_core::tokens::estimate::MessageFacts;

fn defaults() -> ExportDefaults {
    ExportDefaults {
        session_id: JsStr::from("fuzz-session"),
        now_ms: 1_700_000_000_000.0,
    }
}

/// `JSON.parse(JSON.stringify(value))`: what a value is once written as
/// JSON and read back. `JSON.parse` reads `1e999` as Infinity, which
/// `JSON.stringify` writes as `null`.
pub fn as_stored(value: &Json) -> Json {
    match value {
        Json::Number(x) if !x.is_finite() => Json::Null,
        Json::Array(items) => Json::Array(items.iter().map(as_stored).collect()),
        Json::Object(o) => Json::Object(JsonObject::from_entries(
            o.iter().map(|(k, v)| (k.clone(), as_stored(v))).collect(),
        )),
        other => other.clone(),
    }
}

/// A pi session file. Import never panics; a file that imports exports,
/// and that export imports back to the same messages (as JSON stores them,
/// [`as_stored`]; summaries and custom messages key order aside) and exports
/// to the same text again; the cut points of the imported session are pi's.
pub fn session_text(text: &str) {
    let Ok(first) = import_session(text) else {
        return;
    };
    let messages = first.messages.clone();
    let _ = first.into_json();
    let again = export_session(&Json::Array(messages.clone()), None, &defaults())
        .unwrap_or_else(|e| panic!("an imported session does not export: {e}"));
    let second =
        import_session(&again).unwrap_or_else(|e| panic!("an export does not import: {e}"));
    assert_eq!(second.messages.len(), messages.len());
    for (got, want) in second.messages.iter().zip(&messages) {
        let want = as_stored(want);
        if matches!(
            role(&want),
            Role::Custom | Role::BranchSummary | Role::CompactionSummary
        ) {
            // Rebuilt from their entries, in pi's key order.
            assert_eq!(
                got.canonical(),
                want.canonical(),
                "import(export(import(file)))"
            );
        } else {
            assert_eq!(got, &want, "import(export(import(file)))");
        }
    }
    let third = export_session(&Json::Array(second.messages), None, &defaults())
        .unwrap_or_else(|e| panic!("a re-imported session does not export: {e}"));
    assert_eq!(third, again, "export is not stable");
    cut_points_of(&messages);
}

/// Any JSON text. What parses prints as `JSON.stringify` does and parses
/// back to the same value (non-finite numbers aside, see [`as_stored`]).
/// As messages (an array, or one value) they
/// serialize without panicking, export and import back unchanged (key
/// order aside), and their cut points are pi's.
pub fn json_text(text: &str) {
    let Ok(value) = parse(text) else {
        return;
    };
    let printed = stringified(&value);
    assert_eq!(stringify_len(&value), printed.len(), "stringify_len");
    let printed = String::from_utf16(printed.as_units())
        .expect("JSON.stringify output is well-formed (lone surrogates are escaped)");
    let reparsed =
        parse(&printed).unwrap_or_else(|e| panic!("stringify output does not parse: {e}"));
    assert_eq!(reparsed, as_stored(&value), "parse(stringify(value))");

    let messages = match value {
        Json::Array(items) => items,
        other => vec![other],
    };
    let half = messages.len() / 2;
    serialize_prefix(&messages, half);
    messages_round_trip(&messages);
    cut_points_of(&messages);
}

/// Messages that export as a session file import back as the same
/// messages, key order aside (summaries and custom messages are rebuilt
/// from their entries in pi's key order) and as JSON stores them
/// ([`as_stored`]).
pub fn messages_round_trip(messages: &[Json]) {
    let Ok(text) = export_session(&Json::Array(messages.to_vec()), None, &defaults()) else {
        return;
    };
    let back = import_session(&text).unwrap_or_else(|e| panic!("an export does not import: {e}"));
    let want: Vec<Json> = messages.iter().map(|m| as_stored(m).canonical()).collect();
    let got: Vec<Json> = back.messages.iter().map(Json::canonical).collect();
    assert_eq!(got, want, "import(export(messages))");
}

/// `serializeConversation` of the first `k` messages is a prefix of that of
/// all of them; an error in the first `k` is the error of all of them (pi
/// throws at the first problem it reads).
pub fn serialize_prefix(messages: &[Json], k: usize) {
    let k = k.min(messages.len());
    let full = serialize_conversation(messages);
    let prefix = serialize_conversation(&messages[..k]);
    match (&prefix, &full) {
        (Ok(p), Ok(f)) => assert!(
            f.as_units().starts_with(p.as_units()),
            "the text of a prefix is not a prefix of the text"
        ),
        (Err(p), Err(f)) => assert_eq!(p.to_string(), f.to_string(), "a different error"),
        (Err(p), Ok(_)) => panic!("the first {k} messages fail ({p}) but all of them do not"),
        (Ok(_), Err(_)) => {}
    }
}

/// The cut points of a session for a few budgets, over the range pi
/// searches (after the last summary) and the whole array.
pub fn cut_points_of(messages: &[Json]) {
    let facts = facts_of(messages);
    let boundary = facts
        .iter()
        .rposition(|f| f.role == Role::CompactionSummary)
        .map_or(0, |i| i + 1);
    for keep in [0.0, 1.0, 100.0, 2_000.0, 20_000.0] {
        cut(&facts, boundary, facts.len(), keep);
        cut_range(&facts, 0, facts.len(), keep);
    }
}

fn same_number(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

fn same_tokens(a: &ContextTokens, b: &ContextTokens) -> bool {
    same_number(a.tokens, b.tokens)
        && same_number(a.usage_tokens, b.usage_tokens)
        && same_number(a.trailing_tokens, b.trailing_tokens)
        && a.last_usage_index == b.last_usage_index
}

fn no_fill(i: usize) -> Result<u64, String> {
    Err(format!(
        "estimate of message {i} asked for, but none is pending"
    ))
}

/// [`cut_range`] and [`preparation`].
pub fn cut(facts: &[MessageFacts], start: usize, end: usize, keep: f64) {
    cut_range(facts, start, end, keep);
    preparation(facts, keep);
}

/// `findCutPoint` over `[start, end)` (clamped to the array) equals the
/// reference.
pub fn cut_range(facts: &[MessageFacts], start: usize, end: usize, keep: f64) {
    let end = end.min(facts.len());
    let start = start.min(end);
    let roles = roles_of(facts);
    let tokens: Vec<u64> = facts.iter().map(|f| u64::from(f.tokens)).collect();
    let got = find_cut_point(facts, start, end, keep);
    let want = reference_cut(&roles, &tokens, start, end, keep);
    assert_eq!(
        got, want,
        "findCutPoint({start}, {end}, {keep}) of {roles:?}"
    );
}

/// `prepareCompaction` is consistent with its cut (the reference's, after
/// the last summary), and inserting its summary into the compactor's index
/// gives the index of the new array.
pub fn preparation(facts: &[MessageFacts], keep: f64) {
    let roles = roles_of(facts);
    let tokens: Vec<u64> = facts.iter().map(|f| u64::from(f.tokens)).collect();
    let Some(p) = prepare_compaction(facts, keep) else {
        return;
    };
    let last_summary = roles.iter().rposition(|&r| r == Role::CompactionSummary);
    let boundary = last_summary.map_or(0, |i| i + 1);
    assert_eq!(p.previous_summary_index, last_summary);
    assert_eq!(
        p.cut,
        reference_cut(&roles, &tokens, boundary, roles.len(), keep),
        "prepareCompaction's cut"
    );
    assert_eq!(p.history.start, boundary);
    assert!(p.first_kept_index < roles.len());
    if p.is_split_turn {
        assert_eq!(p.turn_prefix.start, p.history.end);
        assert_eq!(p.turn_prefix.end, p.first_kept_index);
    } else {
        assert!(p.turn_prefix.is_empty());
        assert_eq!(p.history.end, p.first_kept_index);
    }
    assert!(!p.history.is_empty() || !p.turn_prefix.is_empty());

    // The compactor's index, updated in place, equals a fresh one.
    let mut ix = ContextIndex::default();
    for f in facts {
        ix.push(*f);
    }
    let t = facts.iter().map(|f| f.timestamp).fold(0.0, f64::max) + 1.0;
    let summary = MessageFacts::new(Role::CompactionSummary, 100, None, t);
    ix.insert(p.first_kept_index, summary, no_fill)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut after = facts.to_vec();
    after.insert(p.first_kept_index, summary);
    let mut fresh = ContextIndex::default();
    for f in &after {
        fresh.push(*f);
    }
    assert_eq!(ix.context_start(), p.first_kept_index);
    assert!(
        same_tokens(&ix.context_tokens(), &fresh.context_tokens()),
        "{:?} != {:?}",
        ix.context_tokens(),
        fresh.context_tokens()
    );
    assert!(same_tokens(
        &ix.context_tokens(),
        &ix.context_tokens_recomputed()
    ));
}
