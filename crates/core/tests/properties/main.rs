//! Invariants of compaction on random valid sessions, natively
//! against the core:
//!
//! - a cut never lands on a tool result, and never separates a tool result
//!   from its call;
//! - compacting inserts exactly one summary and changes nothing the user
//!   sees;
//! - the cut is pi's: the first valid cut point at or after the place where
//!   the newest `keepRecentTokens` begin (checked against a reference
//!   written here from that sentence);
//! - a session that keeps growing and compacting summarizes every message
//!   exactly once or still has it in the model's context;
//! - pi session files: importing an exported session gives it back.
//!
//! Sessions come from `generator.rs`, the twin of the conformance
//! generator. Each property prints nothing on success; the number of cases
//! is in its `ProptestConfig`.
// Native only: proptest and the fuzz checks are not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod facts;
mod generator;
mod reference;

use agent_compaction_core::compaction::cut_point::find_cut_point;
use agent_compaction_core::compaction::prepare::{prepare_compaction, Preparation};
use agent_compaction_core::js::json::Json;
use agent_compaction_core::js::string::JsStr;
use agent_compaction_core::message::context::last_compaction_index;
use agent_compaction_core::message::display::{display_action, DisplayAction};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::session_file::{export_session, import_session, ExportDefaults};
use agent_compaction_core::tokens::context_index::ContextIndex;
use agent_compaction_core::tokens::context_tokens::should_compact;
use agent_compaction_core::tokens::estimate::MessageFacts;
use facts::{facts_of, role, roles_of};
use generator::{generate_session, num, object, string, Options, Rng};
use proptest::prelude::*;
use reference::reference_cut;
use std::convert::Infallible;

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// A session: a seed and a cap on its size (which shrinks towards small
/// sessions when a case fails).
fn arb_session() -> impl Strategy<Value = (u64, usize)> {
    (any::<u64>(), 0usize..=400)
}

fn session(seed: u64, max_messages: usize) -> Vec<Json> {
    generate_session(
        seed,
        Options {
            max_messages: Some(max_messages),
            ..Options::default()
        },
    )
}

/// `keepRecentTokens`: tiny, typical and large next to the sessions.
fn arb_keep() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => (0u64..=8).prop_map(|k| k as f64),
        4 => (0u64..=3_000).prop_map(|k| k as f64),
        3 => (0u64..=30_000).prop_map(|k| k as f64),
        1 => (0u64..=2_000_000).prop_map(|k| k as f64),
    ]
}

/// A range `[start, end)` of a session of `len` messages, from two numbers.
fn range_of(len: usize, a: usize, b: usize) -> (usize, usize) {
    let (a, b) = (a % (len + 1), b % (len + 1));
    (a.min(b), a.max(b))
}

// ---------------------------------------------------------------------------
// Helpers for the properties
// ---------------------------------------------------------------------------

/// `(assistant index, tool result index)` for every tool result whose call
/// is in an earlier assistant message.
fn tool_pairs(messages: &[Json]) -> Vec<(usize, usize)> {
    let mut calls: Vec<(JsStr, usize)> = Vec::new();
    let mut pairs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match role(m) {
            Role::Assistant => {
                for block in m.get("content").and_then(Json::as_array).unwrap_or(&[]) {
                    let is_call = block
                        .get("type")
                        .and_then(Json::as_str)
                        .is_some_and(|t| t.eq_str("toolCall"));
                    if let (true, Some(id)) = (is_call, block.get("id").and_then(Json::as_str)) {
                        calls.push((id.clone(), i));
                    }
                }
            }
            Role::ToolResult => {
                let id = m.get("toolCallId").and_then(Json::as_str);
                if let Some(&(_, a)) = calls.iter().rev().find(|(c, _)| Some(c) == id) {
                    pairs.push((a, i));
                }
            }
            _ => {}
        }
    }
    pairs
}

fn separated(pairs: &[(usize, usize)], at: usize) -> Option<(usize, usize)> {
    pairs
        .iter()
        .copied()
        .find(|&(call, result)| (call < at) != (result < at))
}

fn summary_message(timestamp: f64, text: &str) -> Json {
    object(vec![
        ("role", Some(string("compactionSummary"))),
        ("summary", Some(string(text))),
        ("tokensBefore", Some(num(1234))),
        ("timestamp", Some(num(timestamp))),
    ])
}

/// What the user sees, by index: `agentMessagesToChatMessages` on the core's
/// display rule (`true` entries are dividers).
fn display_view(messages: &[Json], divider: bool) -> Vec<(usize, bool)> {
    let mut view = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let displayed = || Ok::<_, Infallible>(matches!(m.get("display"), Some(Json::Bool(true))));
        let Ok(action) = display_action(role(m), divider, displayed);
        match action {
            DisplayAction::Show => view.push((i, false)),
            DisplayAction::Divider | DisplayAction::ClearedDivider => view.push((i, true)),
            DisplayAction::Hide => {}
        }
    }
    view
}

fn no_fill(i: usize) -> Result<u64, String> {
    Err(format!(
        "estimate of message {i} asked for, but none is pending"
    ))
}

fn index_of(facts: &[MessageFacts]) -> ContextIndex {
    let mut ix = ContextIndex::default();
    for f in facts {
        ix.push(*f);
    }
    ix
}

/// Checks a preparation's ranges against the array it was made from.
fn check_preparation(p: &Preparation, roles: &[Role]) -> Result<(), TestCaseError> {
    let boundary = p.previous_summary_index.map_or(0, |i| i + 1);
    prop_assert_eq!(
        p.previous_summary_index,
        roles.iter().rposition(|&r| r == Role::CompactionSummary)
    );
    prop_assert_eq!(p.history.start, boundary);
    prop_assert!(p.history.end <= p.first_kept_index);
    prop_assert!(p.first_kept_index < roles.len());
    if p.is_split_turn {
        prop_assert_eq!(p.turn_prefix.start, p.history.end);
        prop_assert_eq!(p.turn_prefix.end, p.first_kept_index);
    } else {
        prop_assert!(p.turn_prefix.is_empty());
        prop_assert_eq!(p.history.end, p.first_kept_index);
    }
    prop_assert!(!p.history.is_empty() || !p.turn_prefix.is_empty());
    Ok(())
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The cut (and, for a split turn, the start of the turn prefix) never
    /// lands on a tool result nor between a tool call and its result.
    #[test]
    fn a_cut_never_separates_a_tool_result_from_its_call(
        (seed, max) in arb_session(),
        keep in arb_keep(),
        (a, b) in (any::<usize>(), any::<usize>()),
    ) {
        let messages = session(seed, max);
        let facts = facts_of(&messages);
        let roles = roles_of(&facts);
        let pairs = tool_pairs(&messages);

        if let Some(p) = prepare_compaction(&facts, keep) {
            check_preparation(&p, &roles)?;
            prop_assert_ne!(roles[p.first_kept_index], Role::ToolResult);
            prop_assert_eq!(separated(&pairs, p.first_kept_index), None);
            prop_assert_eq!(separated(&pairs, p.history.end), None);
        }

        let (start, end) = range_of(messages.len(), a, b);
        let cut = find_cut_point(&facts, start, end, keep);
        prop_assert!((start..=end).contains(&cut.first_kept_index));
        let has_cut_point = roles[start..end]
            .iter()
            .any(|r| !matches!(r, Role::ToolResult | Role::CompactionSummary | Role::Other));
        if has_cut_point {
            prop_assert_ne!(roles[cut.first_kept_index], Role::ToolResult);
        }
        let inside: Vec<_> = pairs
            .iter()
            .copied()
            .filter(|&(c, r)| c >= start && r < end)
            .collect();
        prop_assert_eq!(separated(&inside, cut.first_kept_index), None);
        if let Some(turn_start) = cut.turn_start_index {
            prop_assert_eq!(separated(&inside, turn_start), None);
        }
    }

    /// Inserting the summary where the preparation says changes nothing the
    /// user sees (the same messages, by index, with or without a divider
    /// for the new summary) and makes the new summary the start of the
    /// model's context, followed by exactly the kept messages.
    #[test]
    fn compacting_inserts_one_summary_and_changes_nothing_else(
        (seed, max) in arb_session(),
        keep in arb_keep(),
    ) {
        let before = session(seed, max);
        let facts = facts_of(&before);
        let Some(p) = prepare_compaction(&facts, keep) else {
            return Ok(());
        };
        let at = p.first_kept_index;
        let ts = facts.iter().map(|f| f.timestamp).fold(0.0, f64::max) + 1.0;
        let mut after = before.clone();
        after.insert(at, summary_message(ts, "summary"));
        // Where each message of `after` was in `before` (None: the summary).
        let origin = |i: usize| match i.cmp(&at) {
            std::cmp::Ordering::Less => Some(i),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(i - 1),
        };

        // Without dividers: the same view.
        let view_before = display_view(&before, false);
        let view_after: Vec<_> = display_view(&after, false)
            .into_iter()
            .map(|(i, d)| (origin(i), d))
            .collect();
        let expected: Vec<_> = view_before.iter().map(|&(i, d)| (Some(i), d)).collect();
        prop_assert_eq!(&view_after, &expected);

        // With dividers: the same view and one divider where the summary is.
        let view_before = display_view(&before, true);
        let mut expected: Vec<_> = view_before.iter().map(|&(i, d)| (Some(i), d)).collect();
        let slot = view_before.iter().filter(|&&(i, _)| i < at).count();
        expected.insert(slot, (None, true));
        let view_after: Vec<_> = display_view(&after, true)
            .into_iter()
            .map(|(i, d)| (origin(i), d))
            .collect();
        prop_assert_eq!(view_after, expected);

        // The model's context: the new summary, then the kept messages.
        let after_roles: Vec<Role> = after.iter().map(role).collect();
        let start = last_compaction_index::<Infallible>(after.len(), |i| Ok(after_roles[i]));
        prop_assert_eq!(start, Ok(Some(at)));
        prop_assert_eq!(&after[at + 1..], &before[at..]);

        // The compactor's incremental index agrees with one built afresh.
        let mut ix = index_of(&facts);
        let summary_facts = facts_of(&after[at..=at])[0];
        ix.insert(at, summary_facts, no_fill).map_err(TestCaseError::fail)?;
        let fresh = index_of(&facts_of(&after));
        prop_assert_eq!(ix.context_start(), at);
        prop_assert_eq!(ix.context_tokens(), fresh.context_tokens());
    }

    /// `findCutPoint` on any range of a session, and the cut of
    /// `prepareCompaction`, equal the reference.
    #[test]
    fn the_cut_is_the_first_valid_cut_point_after_the_kept_tokens_begin(
        (seed, max) in arb_session(),
        keep in arb_keep(),
        (a, b) in (any::<usize>(), any::<usize>()),
    ) {
        let messages = session(seed, max);
        let facts = facts_of(&messages);
        let roles = roles_of(&facts);
        let tokens: Vec<u64> = facts.iter().map(|f| u64::from(f.tokens)).collect();
        let (start, end) = range_of(messages.len(), a, b);
        prop_assert_eq!(
            find_cut_point(&facts, start, end, keep),
            reference_cut(&roles, &tokens, start, end, keep)
        );
        if let Some(p) = prepare_compaction(&facts, keep) {
            let boundary = p.previous_summary_index.map_or(0, |i| i + 1);
            prop_assert_eq!(p.cut, reference_cut(&roles, &tokens, boundary, roles.len(), keep));
        }
    }

    /// The same on arbitrary role sequences, with many zero-token and
    /// equal-token messages (ties at the budget).
    #[test]
    fn the_cut_matches_the_reference_on_any_roles(
        items in proptest::collection::vec((0u8..8, prop_oneof![Just(0u64), 0u64..5, 0u64..500]), 0..60),
        keep in prop_oneof![(0u64..20).prop_map(|k| k as f64), (0u64..3000).prop_map(|k| k as f64)],
        (a, b) in (any::<usize>(), any::<usize>()),
    ) {
        let facts: Vec<MessageFacts> = items
            .iter()
            .map(|&(code, tokens)| {
                MessageFacts::new(Role::from_code(code).unwrap_or(Role::Other), tokens, None, 0.0)
            })
            .collect();
        let roles = roles_of(&facts);
        let tokens: Vec<u64> = items.iter().map(|&(_, t)| t).collect();
        let (start, end) = range_of(facts.len(), a, b);
        prop_assert_eq!(
            find_cut_point(&facts, start, end, keep),
            reference_cut(&roles, &tokens, start, end, keep)
        );
        if let Some(p) = prepare_compaction(&facts, keep) {
            check_preparation(&p, &roles)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A session grows message by message; whenever the context passes the
    /// threshold (or, now and then, by hand) it is compacted as the
    /// Compactor does: prepare, then insert the summary at the cut. In the
    /// end every message is either in the model's context or in exactly one
    /// summary's input (its history plus its turn prefix).
    #[test]
    fn repeated_compaction_summarizes_every_message_exactly_once(
        (seed, max) in arb_session(),
        window_log in 7.0f64..12.3,
        reserve_share in 0.0f64..0.5,
        keep_share in 0.0f64..1.0,
        by_hand in prop_oneof![Just(0.0), 0.0f64..0.3],
    ) {
        // Context windows of about 1,000 to 200,000 tokens, log-uniform.
        let window = window_log.exp().round() as u64;
        let stream = generate_session(seed, Options { max_messages: Some(max), no_summaries: true });
        let reserve = (window as f64 * reserve_share).floor();
        let keep = ((window as f64 - reserve - 1.0) * keep_share).floor();
        let mut rng = Rng::new(seed ^ 0xC0FFEE);

        #[derive(Clone, Copy, Debug, PartialEq)]
        enum Id {
            Message(usize),
            Summary(usize),
        }
        let mut ids: Vec<Id> = Vec::new();
        let mut ix = ContextIndex::default();
        let mut inputs: Vec<Vec<usize>> = Vec::new();

        for (n, message) in stream.iter().enumerate() {
            let f = facts_of(std::slice::from_ref(message))[0];
            ids.push(Id::Message(n));
            ix.push(f);
            let tokens = ix.context_tokens().tokens;
            if !(should_compact(tokens, window as f64, true, reserve) || rng.chance(by_hand)) {
                continue;
            }
            let Some(p) = prepare_compaction(ix.facts(), keep) else {
                continue;
            };
            check_preparation(&p, &roles_of(ix.facts()))?;
            let mut input = Vec::new();
            for i in p.history.clone().chain(p.turn_prefix.clone()) {
                match ids[i] {
                    Id::Message(m) => input.push(m),
                    Id::Summary(k) => {
                        return Err(TestCaseError::fail(format!("summary {k} summarized again")))
                    }
                }
            }
            let at = p.first_kept_index;
            let ts = ix.facts().iter().map(|f| f.timestamp).fold(0.0, f64::max) + 1.0;
            let summary = MessageFacts::new(Role::CompactionSummary, rng.int(0, 3000) as u64, None, ts);
            ix.insert(at, summary, no_fill).map_err(TestCaseError::fail)?;
            ids.insert(at, Id::Summary(inputs.len()));
            inputs.push(input);
            prop_assert_eq!(ix.last_summary(), Some(at));
        }

        let context_start = ix.context_start();
        for m in 0..stream.len() {
            let in_context = ids[context_start..].contains(&Id::Message(m));
            let summaries: Vec<usize> = (0..inputs.len()).filter(|&k| inputs[k].contains(&m)).collect();
            prop_assert_eq!(
                usize::from(in_context) + summaries.len(),
                1,
                "message {} (context {}, summaries {:?}, {} compactions)",
                m, in_context, summaries, inputs.len()
            );
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Exporting a session as a pi session file and importing the file gives
    /// back the same messages, field for field. Messages stored as pi
    /// `message` entries come back exactly, key order included; summaries
    /// and custom messages are rebuilt from their entries, with pi's key
    /// order.
    #[test]
    fn import_of_export_is_the_session((seed, max) in arb_session()) {
        let messages = session(seed, max);
        let defaults = ExportDefaults {
            session_id: JsStr::from("session"),
            now_ms: 1_700_000_000_000.0,
        };
        let text = export_session(&Json::Array(messages.clone()), None, &defaults)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = import_session(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back.messages.len(), messages.len());
        for (i, (got, want)) in back.messages.iter().zip(&messages).enumerate() {
            if matches!(role(want), Role::Custom | Role::BranchSummary | Role::CompactionSummary) {
                prop_assert_eq!(got.canonical(), want.canonical(), "message {}", i);
            } else {
                prop_assert_eq!(got, want, "message {}", i);
            }
        }
        // And the file written again is the same file.
        let again = export_session(&Json::Array(back.messages), None, &defaults)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again, text);
    }
}
