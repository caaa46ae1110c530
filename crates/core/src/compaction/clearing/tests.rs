//! Native tests of the clearing tier's decisions.

use super::*;
use crate::js::json::parse;
use Role::*;

fn out(name: &str) -> ToolOutput<String> {
    ToolOutput {
        has_id: true,
        tool_name: Some(name.to_string()),
        pinned: false,
        already_cleared: false,
    }
}

/// Plans over `roles`/`tokens` with every tool result named `read`, except
/// those `special` says otherwise; returns the plan and the indices read.
fn plan_with(
    roles: &[Role],
    tokens: &[u64],
    context: f64,
    threshold: f64,
    settings: &ClearingSettings,
    special: impl Fn(usize) -> Option<ToolOutput<String>>,
) -> (ClearingPlan, Vec<usize>) {
    let mut read = Vec::new();
    let plan = plan_clearing::<String, usize, ()>(
        0,
        &[],
        roles,
        tokens,
        1.0,
        context,
        threshold,
        settings,
        |i| {
            read.push(i);
            Ok(special(i).unwrap_or_else(|| out("read")))
        },
        |i| Ok(Some(i)),
        |n| settings.never_clear.iter().any(|s| s.eq_str(n)),
        |n| n.map_or(0, |n| n.encode_utf16().count()),
    )
    .unwrap();
    (plan, read)
}

/// A session: per turn a user message, an assistant call and a tool result
/// of `size` tokens.
fn turns(sizes: &[u64]) -> (Vec<Role>, Vec<u64>) {
    let mut roles = Vec::new();
    let mut tokens = Vec::new();
    for &size in sizes {
        roles.extend([User, Assistant, ToolResult]);
        tokens.extend([10, 20, size]);
    }
    (roles, tokens)
}

#[test]
fn settings_default_to_the_anchors() {
    let s = resolve_clearing(None).unwrap();
    assert_eq!(s, ClearingSettings::default());
    assert!(s.enabled);
    assert_eq!(
        (s.protect_tokens, s.min_freed_tokens, s.protect_turns),
        (40_000, 20_000, 2)
    );
    let json = parse(r#"{"reserveTokens": 5, "toolOutputClearing": null}"#).unwrap();
    assert_eq!(resolve_clearing(Some(&json)).unwrap(), s);
}

#[test]
fn settings_are_read_and_checked() {
    let json = parse(
        r#"{"toolOutputClearing": {"enabled": false, "protectTokens": 1000,
            "minFreedTokens": 0, "protectTurns": 3, "neverClear": ["read", "plan"], "x": 1}}"#,
    )
    .unwrap();
    let s = resolve_clearing(Some(&json)).unwrap();
    assert!(!s.enabled);
    assert_eq!(
        (s.protect_tokens, s.min_freed_tokens, s.protect_turns),
        (1000, 0, 3)
    );
    let names: Vec<String> = s.never_clear.iter().map(JsStr::to_string_lossy).collect();
    assert_eq!(names, ["read", "plan"]);
    let off = parse(r#"{"toolOutputClearing": false}"#).unwrap();
    assert!(!resolve_clearing(Some(&off)).unwrap().enabled);
    for (text, message) in [
        (
            r#"{"toolOutputClearing": 3}"#,
            "settings.toolOutputClearing must be an object or a boolean, got a number",
        ),
        (
            r#"{"toolOutputClearing": {"enabled": "yes"}}"#,
            "settings.toolOutputClearing.enabled must be a boolean, got a string",
        ),
        (
            r#"{"toolOutputClearing": {"protectTokens": -1}}"#,
            "settings.toolOutputClearing.protectTokens must be a non-negative safe integer, got -1",
        ),
        (
            r#"{"toolOutputClearing": {"minFreedTokens": "1"}}"#,
            "settings.toolOutputClearing.minFreedTokens must be a non-negative safe integer, got a string",
        ),
        (
            r#"{"toolOutputClearing": {"neverClear": "read"}}"#,
            "settings.toolOutputClearing.neverClear must be an array of tool names, got a string",
        ),
        (
            r#"{"toolOutputClearing": {"neverClear": ["read", 2]}}"#,
            "settings.toolOutputClearing.neverClear[1] must be a string, got a number",
        ),
    ] {
        let json = parse(text).unwrap();
        assert_eq!(resolve_clearing(Some(&json)).unwrap_err().to_string(), message);
    }
}

#[test]
fn only_threshold_compactions_try_clearing() {
    let on = ClearingSettings::default();
    assert!(tries_clearing(Reason::Threshold, &on));
    assert!(!tries_clearing(Reason::Manual, &on));
    assert!(!tries_clearing(Reason::Overflow, &on));
    let off = ClearingSettings {
        enabled: false,
        ..on
    };
    assert!(!tries_clearing(Reason::Threshold, &off));
}

#[test]
fn old_outputs_beyond_the_protected_tokens_are_cleared_oldest_first() {
    // Six turns of 30k outputs: the last two turns protected, then 40k of
    // output kept (the 4th turn whole, the 3rd crossing the line), the rest
    // cleared.
    let (roles, tokens) = turns(&[30_000; 6]);
    let total: u64 = tokens.iter().sum();
    let s = ClearingSettings::default();
    let (plan, read) = plan_with(&roles, &tokens, total as f64, 150_000.0, &s, |_| None);
    let indices: Vec<usize> = plan.cleared.iter().map(|c| c.index).collect();
    assert_eq!(indices, [2, 5, 8]);
    // Read newest first, never inside the protected turns.
    assert_eq!(read, [11, 8, 5, 2]);
    let placeholder = placeholder_tokens(4, Some(30_000));
    assert_eq!(
        placeholder,
        "[Output of read cleared to save context: ~30,000 tokens]"
            .len()
            .div_ceil(4) as u64
    );
    assert_eq!(plan.cleared[0].freed, 30_000 - placeholder);
    assert_eq!(plan.tokens_freed, 3 * (30_000 - placeholder));
    // The marker goes at the end of the array, not after the output.
    assert_eq!(plan.insert_at, roles.len());
    assert_eq!(plan.tokens_after, total as f64 - plan.tokens_freed as f64);
    assert!(plan.worth_it);
    assert!(plan.enough);
}

#[test]
fn not_enough_to_get_under_the_threshold_means_summarizing() {
    let (roles, tokens) = turns(&[30_000; 6]);
    let total: u64 = tokens.iter().sum();
    let s = ClearingSettings::default();
    let (plan, _) = plan_with(&roles, &tokens, total as f64, 50_000.0, &s, |_| None);
    assert!(plan.worth_it);
    assert!(!plan.enough);
    // At the threshold exactly is enough (`shouldCompact` is strictly over).
    let (plan, _) = plan_with(&roles, &tokens, total as f64, 0.0, &s, |_| None);
    let (at, _) = plan_with(&roles, &tokens, total as f64, plan.tokens_after, &s, |_| {
        None
    });
    assert!(at.enough);
}

#[test]
fn too_little_to_free_is_not_worth_it() {
    let (roles, tokens) = turns(&[5_000; 20]);
    let s = ClearingSettings::default();
    // 18 outputs before the protected turns, 8 of them kept (40k).
    let (plan, _) = plan_with(&roles, &tokens, 1e6, 1e9, &s, |_| None);
    assert_eq!(plan.cleared.len(), 10);
    assert!(plan.tokens_freed < 50_000 && plan.tokens_freed > 49_000);
    let s = ClearingSettings {
        min_freed_tokens: 50_000,
        ..ClearingSettings::default()
    };
    let (plan, _) = plan_with(&roles, &tokens, 1e6, 1e9, &s, |_| None);
    assert!(!plan.worth_it);
    assert!(!plan.enough);
    // Nothing to clear at all.
    let (roles, tokens) = turns(&[100; 3]);
    let (plan, _) = plan_with(
        &roles,
        &tokens,
        1e6,
        0.0,
        &ClearingSettings::default(),
        |_| None,
    );
    assert!(plan.cleared.is_empty());
    assert!(!plan.worth_it && !plan.enough);
    assert_eq!(plan.insert_at, roles.len());
}

#[test]
fn the_last_turns_are_never_cleared() {
    let (roles, tokens) = turns(&[100_000; 3]);
    let s = ClearingSettings {
        protect_tokens: 0,
        ..ClearingSettings::default()
    };
    let (plan, read) = plan_with(&roles, &tokens, 1e6, 0.0, &s, |_| None);
    assert_eq!(read, [2]);
    assert_eq!(plan.cleared.len(), 1);
    // Three protected turns out of three: nothing at all.
    let s3 = ClearingSettings {
        protect_turns: 3,
        ..s.clone()
    };
    let (plan, read) = plan_with(&roles, &tokens, 1e6, 0.0, &s3, |_| None);
    assert!(read.is_empty() && plan.cleared.is_empty());
    // Fewer user turns than protected: nothing either.
    let s9 = ClearingSettings {
        protect_turns: 9,
        ..s.clone()
    };
    assert!(plan_with(&roles, &tokens, 1e6, 0.0, &s9, |_| None)
        .0
        .cleared
        .is_empty());
    // No protected turns: the newest output too.
    let s0 = ClearingSettings {
        protect_turns: 0,
        ..s
    };
    assert_eq!(
        plan_with(&roles, &tokens, 1e6, 0.0, &s0, |_| None)
            .0
            .cleared
            .len(),
        3
    );
}

#[test]
fn pinned_never_cleared_already_cleared_and_idless_outputs_stay_and_count_nothing() {
    let (roles, tokens) = turns(&[30_000; 8]);
    let s = ClearingSettings {
        never_clear: vec![JsStr::from("plan")],
        ..ClearingSettings::default()
    };
    let special = |i: usize| match i {
        2 => Some(ToolOutput {
            pinned: true,
            ..out("read")
        }),
        5 => Some(out("plan")),
        8 => Some(ToolOutput {
            already_cleared: true,
            ..out("read")
        }),
        11 => Some(ToolOutput {
            has_id: false,
            ..out("read")
        }),
        _ => None,
    };
    let (plan, _) = plan_with(&roles, &tokens, 1e6, 0.0, &s, special);
    // Outputs 17 and 14 are kept (40k crossed at 14), the four special ones
    // skip without counting: nothing else is left.
    let indices: Vec<usize> = plan.cleared.iter().map(|c| c.index).collect();
    assert_eq!(indices, [14]);
    // Without the specials, 14, 11, 8, 5 and 2 would all be cleared.
    let (plain, _) = plan_with(&roles, &tokens, 1e6, 0.0, &s, |_| None);
    assert_eq!(plain.cleared.len(), 5);
}

#[test]
fn estimates_are_scaled_by_the_ratio_and_the_start_offsets_indices() {
    let (roles, tokens) = turns(&[30_000; 4]);
    let s = ClearingSettings {
        protect_tokens: 0,
        ..ClearingSettings::default()
    };
    let plan = plan_clearing::<String, usize, ()>(
        100,
        &[],
        &roles,
        &tokens,
        1.5,
        1e6,
        0.0,
        &s,
        |i| {
            assert!(i >= 100);
            Ok(out("read"))
        },
        |i| Ok(Some(i)),
        |_| false,
        |_| 4,
    )
    .unwrap();
    assert_eq!(plan.cleared[0].index, 102);
    assert_eq!(plan.cleared[0].tokens, 45_000);
    assert_eq!(plan.insert_at, 100 + roles.len());
}

#[test]
fn an_unreadable_tool_result_stops_the_plan() {
    let (roles, tokens) = turns(&[30_000; 4]);
    let r = plan_clearing::<String, usize, usize>(
        0,
        &[],
        &roles,
        &tokens,
        1.0,
        1e6,
        0.0,
        &ClearingSettings::default(),
        Err,
        |i| Ok(Some(i)),
        |_| false,
        |_| 0,
    );
    assert_eq!(r.unwrap_err(), 5);
}

#[test]
fn placeholders_name_the_tool_and_the_size() {
    let mut s = String::new();
    placeholder_text(&mut s, Some("read"), Some(12_400));
    assert_eq!(
        s,
        "[Output of read cleared to save context: ~12,400 tokens]"
    );
    let mut s = String::new();
    placeholder_text(&mut s, None, None);
    assert_eq!(s, "[Output of a tool cleared to save context]");
    assert_eq!(
        placeholder_tokens(4, Some(12_400)),
        "[Output of read cleared to save context: ~12,400 tokens]"
            .len()
            .div_ceil(4) as u64
    );
    assert_eq!(
        placeholder_tokens(6, None),
        "[Output of a tool cleared to save context]"
            .len()
            .div_ceil(4) as u64
    );
    for (n, text) in [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (1_234_567, "1,234,567"),
        (100_000, "100,000"),
    ] {
        assert_eq!(thousands(n), text);
    }
}

#[test]
fn cleared_outputs_are_those_a_later_marker_lists() {
    let mut c = ClearedOutputs::<&str>::default();
    assert!(c.is_empty());
    c.add_marker(5, vec!["a", "b"], Some(vec![Some(100), None]));
    c.add_marker(9, vec!["c"], None);
    // Sizes of another length are ignored.
    c.add_marker(12, vec!["d", "e"], Some(vec![Some(1)]));
    assert_eq!(c.cleared(&"a", 1), Some(Some(100)));
    assert_eq!(c.cleared(&"b", 2), Some(None));
    assert_eq!(c.cleared(&"c", 7), Some(None));
    assert_eq!(c.cleared(&"d", 10), Some(None));
    // After its marker, or not listed: sent as it is.
    assert_eq!(c.cleared(&"a", 6), None);
    assert_eq!(c.cleared(&"z", 0), None);
    // An id a later marker lists again (a provider that reuses ids): each
    // result keeps the size of the first marker after it, the one that
    // cleared it, so its placeholder never changes.
    c.add_marker(20, vec!["a"], Some(vec![Some(7)]));
    assert_eq!(c.cleared(&"a", 15), Some(Some(7)));
    assert_eq!(c.cleared(&"a", 1), Some(Some(100)));
    assert_eq!(c.clearing_marker(&"a", 1), Some(5));
    assert_eq!(c.clearing_marker(&"a", 15), Some(20));
    c.add_marker(3, vec!["a"], Some(vec![Some(1)]));
    assert_eq!(c.cleared(&"a", 15), Some(Some(7)));
    assert_eq!(c.cleared(&"a", 1), Some(Some(1)));
    assert_eq!(c.cleared(&"a", 20), None);
}

#[test]
fn an_output_whose_id_an_output_that_stays_shares_is_not_cleared() {
    // A provider that numbers its calls per turn: every output has id 0 but
    // two (ids 7 and 8), and the last two turns are protected. A marker
    // listing 0 would clear the protected outputs 0 too: nothing with id 0
    // is cleared, and the pinned output before the summary (index 100,
    // id 7) keeps the candidate with its id whole too.
    let (roles, tokens) = turns(&[30_000; 8]);
    let s = ClearingSettings {
        protect_tokens: 0,
        ..ClearingSettings::default()
    };
    let id = |i: usize| match i {
        2 => 7,
        5 => 8,
        100 => 7,
        _ => 0,
    };
    let mut asked = Vec::new();
    let plan = plan_clearing::<String, usize, ()>(
        0,
        &[100],
        &roles,
        &tokens,
        1.0,
        1e6,
        0.0,
        &s,
        |_| Ok(out("read")),
        |i| {
            asked.push(i);
            Ok(Some(id(i)))
        },
        |_| false,
        |_| 4,
    )
    .unwrap();
    let indices: Vec<usize> = plan.cleared.iter().map(|c| c.index).collect();
    assert_eq!(indices, [5]);
    assert_eq!(plan.tokens_freed, plan.cleared[0].freed);
    // Every tool result the model is sent was asked, in order.
    assert_eq!(asked, [100, 2, 5, 8, 11, 14, 17, 20, 23]);
    // An output cleared already (no id when asked) does not stay whole:
    // the new marker may list its id again.
    let plan = plan_clearing::<String, usize, ()>(
        0,
        &[],
        &roles,
        &tokens,
        1.0,
        1e6,
        0.0,
        &s,
        |_| Ok(out("read")),
        |i| Ok((i != 20 && i != 23).then(|| id(i))),
        |_| false,
        |_| 4,
    )
    .unwrap();
    let indices: Vec<usize> = plan.cleared.iter().map(|c| c.index).collect();
    assert_eq!(indices, [2, 5, 8, 11, 14, 17]);
    // Nothing to clear: nothing is asked.
    let mut asked = 0;
    plan_clearing::<String, usize, ()>(
        0,
        &[],
        &roles[..6],
        &tokens[..6],
        1.0,
        1e6,
        0.0,
        &s,
        |_| Ok(out("read")),
        |_| {
            asked += 1;
            Ok(None)
        },
        |_| false,
        |_| 4,
    )
    .unwrap();
    assert_eq!(asked, 0);
}

#[test]
fn undo_takes_out_the_last_compaction_of_either_tier() {
    let find = |roles: &[Role]| last_undoable_index::<()>(roles.len(), |i| Ok(roles[i])).unwrap();
    assert_eq!(
        find(&[User, CompactionSummary, ToolResult, ToolOutputCleared, User]),
        Some(3)
    );
    assert_eq!(find(&[ToolOutputCleared, CompactionSummary, User]), Some(1));
    assert_eq!(find(&[User, Other]), None);
    let r = last_undoable_index(3, |i| if i == 1 { Err(i) } else { Ok(User) });
    assert_eq!(r, Err(1));
}

#[test]
fn one_reader_checks_both_the_compaction_and_the_clearing_settings() {
    let bad = parse(r#"{"toolOutputClearing":{"protectTokens":-1}}"#).unwrap();
    let e = resolve_all(Some(&bad), None, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "settings.toolOutputClearing.protectTokens must be a non-negative safe integer, got -1"
    );
    let good = parse(r#"{"reserveTokens":100,"toolOutputClearing":false}"#).unwrap();
    let (settings, clearing) = resolve_all(Some(&good), None, Some(100_000.0)).unwrap();
    assert_eq!(settings.reserve_tokens, 100);
    assert!(!clearing.enabled);
}

#[test]
fn non_finite_clearing_numbers_are_not_defaults() {
    for (name, x) in [
        ("protectTokens", f64::NAN),
        ("minFreedTokens", f64::INFINITY),
        ("protectTurns", f64::NEG_INFINITY),
    ] {
        let mut o = crate::js::json::JsonObject::new();
        o.insert(name.into(), Json::Number(x));
        let mut settings = crate::js::json::JsonObject::new();
        settings.insert("toolOutputClearing".into(), Json::Object(o));
        let e = resolve_clearing(Some(&Json::Object(settings))).unwrap_err();
        assert!(e.is_range_error());
        assert!(e
            .to_string()
            .starts_with(&format!("{FIELD}.{name} must be")));
    }
}

#[test]
fn a_tier_plans_over_what_it_copied_and_matches_never_clear_by_units() {
    let (roles, tokens) = turns(&[30_000; 6]);
    let total: u64 = tokens.iter().sum();
    let tier = ClearingTier {
        start: 100,
        resent_results: vec![],
        roles: roles.clone(),
        tokens: tokens.clone(),
        ratio: 1.0,
        context_tokens: total as f64,
        threshold: 150_000.0,
        settings: ClearingSettings {
            never_clear: vec![JsStr::from("bash")],
            ..ClearingSettings::default()
        },
    };
    let units = |n: &String| n.encode_utf16().collect::<Vec<u16>>();
    let len = |n: Option<&String>| n.map_or(0, |n| n.encode_utf16().count());
    // Indices are the array's (from `start`).
    let plan = tier
        .plan::<String, usize, ()>(|_| Ok(out("read")), |i| Ok(Some(i)), units, len)
        .unwrap();
    let indices: Vec<usize> = plan.cleared.iter().map(|c| c.index).collect();
    assert_eq!(indices, [102, 105, 108]);
    assert_eq!(plan.insert_at, 100 + roles.len());
    // A tool named in `neverClear` is never cleared.
    let plan = tier
        .plan::<String, usize, ()>(|_| Ok(out("bash")), |i| Ok(Some(i)), units, len)
        .unwrap();
    assert!(plan.cleared.is_empty());
}
