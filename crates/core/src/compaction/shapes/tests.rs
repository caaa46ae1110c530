//! The objects' fields, their order and which are left out.

use super::*;
use crate::compaction::clearing::ClearedOutput;
use crate::compaction::cut_point::CutPoint;
use crate::compaction::flow::CostTotals;

type S = Shape<&'static str>;

fn insert(
    details: Option<&'static str>,
    usage: Option<UsageOut<&'static str>>,
) -> Insert<&'static str, &'static str, &'static str> {
    Insert {
        text: "the summary",
        details,
        usage,
        from_hook: false,
        timestamp: 5.0,
        tokens_before: 1000.0,
        kept_messages: 4,
        tokens_after: 200.0,
        summarized_by: SummarizedBy::Summarizer,
        fallback_reason: None,
    }
}

#[test]
fn a_summary_has_the_files_unless_the_hook_gave_details_and_usage_only_when_there_is_one() {
    let (s, outcome): (S, _) = compaction_summary(insert(None, None), || ("R", "M"));
    assert_eq!(
        s.keys(),
        [
            "role",
            "summary",
            "timestamp",
            "tokensBefore",
            "keptMessages",
            "details"
        ]
    );
    assert_eq!(s.get("keptMessages"), Some(&Number(4.0)));
    assert_eq!(s.get("role"), Some(&Str("compactionSummary")));
    assert_eq!(s.get("details"), Some(&Object(file_details("R", "M"))));
    assert_eq!(outcome.tokens_after, 200.0);

    let mut from_hook = insert(Some("D"), Some(UsageOut::One("U")));
    from_hook.from_hook = true;
    let (s, _): (S, _) = compaction_summary(from_hook, || panic!("the files are not read"));
    assert_eq!(
        s.keys(),
        [
            "role",
            "summary",
            "timestamp",
            "tokensBefore",
            "keptMessages",
            "details",
            "usage",
            "fromHook"
        ]
    );
    assert_eq!(s.get("details"), Some(&Value("D")));
    assert_eq!(s.get("usage"), Some(&Value("U")));
    assert_eq!(s.get("fromHook"), Some(&Bool(true)));

    let totals = UsageTotals {
        input: 1.0,
        output: 2.0,
        cost: CostTotals {
            total: 0.5,
            ..CostTotals::default()
        },
        ..UsageTotals::default()
    };
    let (s, _): (S, _) =
        compaction_summary(insert(None, Some(UsageOut::Sum(totals))), || ("R", "M"));
    let Some(Object(u)) = s.get("usage") else {
        panic!("no usage object")
    };
    assert_eq!(
        u.keys(),
        [
            "input",
            "output",
            "cacheRead",
            "cacheWrite",
            "totalTokens",
            "cost"
        ]
    );
    assert_eq!(u.get("output"), Some(&Number(2.0)));
    let Some(Object(c)) = u.get("cost") else {
        panic!("no cost")
    };
    assert_eq!(
        c.keys(),
        ["input", "output", "cacheRead", "cacheWrite", "total"]
    );
    assert_eq!(c.get("total"), Some(&Number(0.5)));
}

#[test]
fn a_compaction_result_names_its_tier_and_a_fallback_reason_only_when_there_is_one() {
    let (_, outcome) = compaction_summary::<&str, _>(insert(None, None), || ("R", "M"));
    let r: S = compaction_result("msgs", "sum", outcome, 7);
    assert_eq!(
        r.keys(),
        [
            "messages",
            "summary",
            "tokensBefore",
            "tokensAfter",
            "firstKeptIndex",
            "summarizedBy",
            "tier"
        ]
    );
    assert_eq!(r.get("firstKeptIndex"), Some(&Number(7.0)));
    assert_eq!(r.get("summarizedBy"), Some(&Str("summarizer")));
    assert_eq!(r.get("tier"), Some(&Str("summarize")));
    let mut fell_back = insert(None, None);
    fell_back.summarized_by = SummarizedBy::Extractive;
    fell_back.fallback_reason = Some("timed out".into());
    let (_, outcome) = compaction_summary::<&str, _>(fell_back, || ("R", "M"));
    let r: S = compaction_result("msgs", "sum", outcome, 7);
    assert_eq!(r.get("summarizedBy"), Some(&Str("extractive")));
    assert_eq!(
        r.get("fallbackReason"),
        Some(&Field::String("timed out".into()))
    );
}

#[test]
fn events_leave_out_what_they_do_not_have() {
    let e: S = compaction_end_event("manual", "R", false, true, None, None, None);
    assert_eq!(
        e.keys(),
        ["type", "reason", "result", "aborted", "willRetry"]
    );
    let e: S = compaction_end_event(
        "threshold",
        "R",
        true,
        false,
        Some("boom"),
        Some("clear".into()),
        Some(9_450.0),
    );
    assert_eq!(
        e.keys(),
        [
            "type",
            "reason",
            "result",
            "aborted",
            "willRetry",
            "errorMessage",
            "tier",
            "quietUntil"
        ]
    );
    assert_eq!(e.get("errorMessage"), Some(&Field::String("boom".into())));
    assert_eq!(e.get("tier"), Some(&Field::String("clear".into())));
    assert_eq!(e.get("quietUntil"), Some(&Field::Number(9_450.0)));
    let e: S = hook_error_event("transformContext", "E");
    assert_eq!(
        e.0,
        vec![
            ("type", Str("hook_error")),
            ("hook", Str("transformContext")),
            ("error", Value("E"))
        ]
    );
    let e: S = compaction_start_event("overflow", false);
    assert_eq!(
        e.0,
        vec![
            ("type", Str("compaction_start")),
            ("reason", Str("overflow"))
        ]
    );
    let e: S = compaction_start_event("threshold", true);
    assert_eq!(e.get("background"), Some(&Bool(true)));
    let e: S = save_error_event("E");
    assert_eq!(
        e.0,
        vec![("type", Str("save_error")), ("error", Value("E"))]
    );
}

#[test]
fn a_preparation_keeps_previous_summary_as_undefined_and_cut_points_count_from_the_range() {
    let plan = Preparation {
        first_kept_index: 4,
        history: 0..3,
        turn_prefix: 3..4,
        is_split_turn: true,
        tokens_before: 99.0,
        previous_summary_index: None,
        cut: CutPoint {
            first_kept_index: 4,
            turn_start_index: Some(3),
            is_split_turn: true,
        },
    };
    let values = |previous| PreparedValues {
        messages_to_summarize: "H",
        turn_prefix_messages: "T",
        previous_summary: previous,
        file_ops: ["r", "w", "e"],
    };
    let p: S = preparation(&plan, values(None), Value("settings"));
    assert_eq!(
        p.keys(),
        [
            "firstKeptIndex",
            "messagesToSummarize",
            "turnPrefixMessages",
            "isSplitTurn",
            "tokensBefore",
            "previousSummary",
            "fileOps",
            "settings"
        ]
    );
    assert_eq!(p.get("previousSummary"), Some(&Field::Undefined));
    let Some(Object(ops)) = p.get("fileOps") else {
        panic!("no fileOps")
    };
    assert_eq!(
        ops.0,
        vec![
            ("read", Value("r")),
            ("written", Value("w")),
            ("edited", Value("e"))
        ]
    );
    let p: S = preparation(&plan, values(Some("prev")), Value("settings"));
    assert_eq!(p.get("previousSummary"), Some(&Value("prev")));

    let c: S = cut_point(2, Some(1), true, 10);
    assert_eq!(
        c.0,
        vec![
            ("firstKeptIndex", Number(12.0)),
            ("turnStartIndex", Number(11.0)),
            ("isSplitTurn", Bool(true))
        ]
    );
    let c: S = cut_point(2, None, false, 10);
    assert_eq!(c.get("turnStartIndex"), Some(&Number(-1.0)));

    let s: S = settings(&CompactionSettings {
        enabled: true,
        reserve_tokens: 16384,
        keep_recent_tokens: 20000,
    });
    assert_eq!(
        s.0,
        vec![
            ("enabled", Bool(true)),
            ("reserveTokens", Number(16384.0)),
            ("keepRecentTokens", Number(20000.0))
        ]
    );
}

#[test]
fn the_summarizer_request_and_the_hook_event_have_every_field() {
    let request = Request {
        kind: crate::compaction::prompts::SummaryKind::TurnPrefix,
        system_prompt: "sys",
        prompt: "p",
        max_tokens: 512,
        instruction: None,
    };
    let r: S = summarizer_request(request.clone(), "signal", "threshold", Some("C"), None);
    assert_eq!(
        r.0,
        vec![
            ("kind", Str("turnPrefix")),
            ("systemPrompt", Str("sys")),
            ("prompt", Value("p")),
            ("maxTokens", Number(512.0)),
            ("signal", Value("signal")),
            ("reason", Str("threshold")),
        ]
    );
    // The prefix form adds the conversation and the instruction.
    let prefix = Request {
        instruction: Some("summarize"),
        ..request
    };
    let r: S = summarizer_request(prefix.clone(), "signal", "threshold", Some("C"), None);
    assert_eq!(r.get("context"), Some(&Value("C")));
    assert_eq!(r.get("instruction"), Some(&Value("summarize")));
    // Without a context the instruction alone is not sent.
    let r: S = summarizer_request(prefix, "signal", "threshold", None, None);
    assert_eq!(r.keys().len(), 6);
    let c: S = summary_context(None, "M", Some("T"));
    assert_eq!(c.0, vec![("messages", Value("M")), ("tools", Value("T"))]);
    let c: S = summary_context(Some("sys"), "M", None);
    assert_eq!(c.keys(), ["systemPrompt", "messages"]);
    let e: S = before_compact_event(Shape::of([]), "M", "manual", None, false, "signal");
    assert_eq!(
        e.keys(),
        [
            "preparation",
            "messages",
            "reason",
            "customInstructions",
            "willRetry",
            "signal"
        ]
    );
    assert_eq!(e.get("customInstructions"), Some(&Field::Undefined));
}

#[test]
fn a_branch_summary_has_from_id_and_usage_only_when_given() {
    let b: S = branch_summary("t", None, 3.0, file_details("R", "M"), None);
    assert_eq!(b.keys(), ["role", "summary", "timestamp", "details"]);
    let b: S = branch_summary("t", Some("id"), 3.0, file_details("R", "M"), Some("U"));
    assert_eq!(
        b.keys(),
        ["role", "summary", "fromId", "timestamp", "details", "usage"]
    );
    assert_eq!(b.get("role"), Some(&Str("branchSummary")));
}

#[test]
fn clearing_objects() {
    let m: S = clearing_marker("ids", &[120, 40], 150, 9.0);
    assert_eq!(
        m.0,
        vec![
            ("role", Str("toolOutputCleared")),
            ("toolCallIds", Value("ids")),
            (
                "outputTokens",
                Field::List(vec![Number(120.0), Number(40.0)])
            ),
            ("tokensFreed", Number(150.0)),
            ("timestamp", Number(9.0)),
        ]
    );
    let plan = ClearingPlan {
        cleared: vec![ClearedOutput {
            index: 2,
            tokens: 120,
            freed: 110,
        }],
        tokens_freed: 110,
        insert_at: 3,
        tokens_before: 500.0,
        tokens_after: 390.0,
        worth_it: true,
        enough: true,
    };
    let r: S = clearing_result("msgs", "marker", &plan, "ids");
    assert_eq!(
        r.keys(),
        [
            "messages",
            "tier",
            "marker",
            "tokensBefore",
            "tokensAfter",
            "tokensFreed",
            "toolCallIds",
            "markerIndex"
        ]
    );
    assert_eq!(r.get("tier"), Some(&Str("clear")));
    assert_eq!(r.get("markerIndex"), Some(&Number(3.0)));
    assert_eq!(r.get("tokensFreed"), Some(&Number(110.0)));
    let d: S = clearing_divider("freed", 2, "ts");
    assert_eq!(
        d.0,
        vec![
            ("role", Str("toolOutputClearedDivider")),
            ("tokensFreed", Value("freed")),
            ("toolCount", Number(2.0)),
            ("timestamp", Value("ts"))
        ]
    );
    let p: S = cleared_placeholder("id", "read", "[cleared]", false, "ts");
    assert_eq!(
        p.keys(),
        [
            "role",
            "toolCallId",
            "toolName",
            "content",
            "isError",
            "timestamp"
        ]
    );
    assert_eq!(p.get("role"), Some(&Str("toolResult")));
    assert_eq!(
        p.get("content"),
        Some(&Field::List(vec![Object(Shape::of([
            ("type", Str("text")),
            ("text", Value("[cleared]"))
        ]))]))
    );
    assert_eq!(p.get("isError"), Some(&Bool(false)));
}

#[test]
fn the_attach_state_has_the_last_tier_once_there_is_one() {
    let s: S = attach_state(true, false, 12.0, None);
    assert_eq!(
        s.0,
        vec![
            ("isCompacting", Bool(true)),
            ("isCompactingInBackground", Bool(false)),
            ("contextTokens", Number(12.0))
        ]
    );
    let s: S = attach_state(false, false, 12.0, Some("clear"));
    assert_eq!(s.get("lastTier"), Some(&Value("clear")));
}

#[test]
fn a_compaction_in_the_background_is_not_one_the_input_waits_for() {
    let s: S = attach_state(true, true, 12.0, None);
    assert_eq!(s.get("isCompacting"), Some(&Bool(false)));
    assert_eq!(s.get("isCompactingInBackground"), Some(&Bool(true)));
}

#[test]
fn context_tokens_name_the_last_usage_or_null() {
    let mut c = ContextTokens {
        tokens: 120.0,
        usage_tokens: 100.0,
        trailing_tokens: 20.0,
        last_usage_index: Some(3),
    };
    let s: S = context_tokens(&c);
    assert_eq!(
        s.keys(),
        ["tokens", "usageTokens", "trailingTokens", "lastUsageIndex"]
    );
    assert_eq!(s.get("tokens"), Some(&Number(120.0)));
    assert_eq!(s.get("usageTokens"), Some(&Number(100.0)));
    assert_eq!(s.get("trailingTokens"), Some(&Number(20.0)));
    assert_eq!(s.get("lastUsageIndex"), Some(&Number(3.0)));
    c.last_usage_index = None;
    let s: S = context_tokens(&c);
    assert_eq!(s.get("lastUsageIndex"), Some(&Field::Null));
}
