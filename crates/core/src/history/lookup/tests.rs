use super::*;
use crate::conversation::view::Step;

fn texts(role: Role) -> MessageTexts<'static> {
    MessageTexts {
        role: Some(role),
        ..MessageTexts::default()
    }
}

#[test]
fn hidden_is_what_the_summary_left_out_and_the_placeholders() {
    // [a, b, pinned, c, summary, d, result (placeholder), marker]
    let steps = [
        Step::Send(4),
        Step::Send(2),
        Step::Send(5),
        Step::Placeholder {
            result: 6,
            marker: 7,
        },
        Step::Send(7),
    ];
    assert_eq!(hidden(8, Some(4), &[2], &steps), [0, 1, 3, 6]);
    // No summary: nothing but the placeholders.
    assert_eq!(
        hidden(3, None, &[], &[Step::Send(0), Step::Send(1), Step::Send(2)]),
        [] as [usize; 0]
    );
    let cleared = [
        Step::Send(0),
        Step::Placeholder {
            result: 1,
            marker: 2,
        },
        Step::Send(2),
    ];
    assert_eq!(hidden(3, None, &[], &cleared), [1]);
    // A step past the array (never made by the view) changes nothing.
    assert_eq!(
        hidden(2, Some(1), &[], &[Step::Send(1), Step::Send(9)]),
        [0]
    );
    assert_eq!(
        hidden(
            1,
            None,
            &[],
            &[Step::Placeholder {
                result: 9,
                marker: 0
            }]
        ),
        [] as [usize; 0]
    );
}

#[test]
fn a_failed_attempt_is_in_the_history_only_if_a_summary_left_it_out() {
    // [a, failed, summary, b, failed, c]: the view leaves out both failed
    // attempts; the history holds the one before the summary only.
    let steps = [Step::Send(2), Step::Send(3), Step::Send(5)];
    assert_eq!(hidden(6, Some(2), &[], &steps), [0, 1]);
    assert_eq!(hidden(6, Some(2), &[], &steps), hidden_before(0, 2, &[]));
    // Before any summary, a failed attempt is not a hit: nothing is.
    assert_eq!(
        hidden(3, None, &[], &[Step::Send(0), Step::Send(2)]),
        [] as [usize; 0]
    );
    // A pinned failed attempt before the summary (re-sent, then left out
    // as a failed attempt) is pinned: not in the history, as in a store.
    let steps = [Step::Send(2), Step::Send(3)];
    assert_eq!(hidden(4, Some(2), &[1], &steps), [0]);
    assert_eq!(hidden_before(0, 2, &[1]), [0]);
}

#[test]
fn a_store_indexes_what_a_summary_hides_but_the_pinned_messages_it_re_sends() {
    // [pinned, a, b, pinned, c, summary, pinned (after it: not looked at)]
    let pinned = [0, 3, 6];
    assert_eq!(hidden_before(0, 5, &pinned), [1, 2, 4]);
    // A later summary extends the index from where it stopped.
    assert_eq!(hidden_before(2, 5, &pinned), [2, 4]);
    assert_eq!(hidden_before(5, 8, &pinned), [5, 7]);
    // No summary, nothing hidden; nothing pinned, everything before it.
    assert_eq!(hidden_before(0, 0, &pinned), [] as [usize; 0]);
    assert_eq!(hidden_before(0, 3, &[]), [0, 1, 2]);
}

proptest::proptest! {
    /// The messages a store indexes up to the last summary are the ones
    /// the `Compactor`'s history holds, the tool outputs it sends as
    /// placeholders aside, for any array (messages, failed attempts, tool
    /// results, clearing markers), pinned messages and summary; and the
    /// `Compactor`'s are what the model view does not send as it is but
    /// the failed attempts no summary left out (after it, or pinned).
    #[test]
    fn a_store_hides_what_the_compactor_hides(
        kinds in proptest::collection::vec((0u8..4, 0u32..4, proptest::bool::ANY), 1..40),
        at in 0usize..48,
    ) {
        use crate::conversation::view::{model_steps, Fact};
        let len = kinds.len();
        // Now and then no summary.
        let summary = (at < 40).then_some(at % len);
        let facts: Vec<Fact<u32>> = kinds
            .iter()
            .enumerate()
            .map(|(i, &(kind, id, _))| match kind {
                _ if Some(i) == summary => Fact::Message,
                0 => Fact::Message,
                1 => Fact::Failed,
                2 => Fact::ToolResult(Some(id)),
                _ => Fact::Marker(vec![id]),
            })
            .collect();
        let pinned: Vec<usize> =
            (0..len).filter(|&i| kinds[i].2 && Some(i) != summary).collect();
        let resent: Vec<usize> = match summary {
            Some(s) => pinned.iter().copied().filter(|&i| i < s).collect(),
            None => Vec::new(),
        };
        let steps = model_steps(len, summary, &resent, |i| &facts[i]);
        let compactor = hidden(len, summary, &pinned, &steps);

        let placeholders: Vec<usize> = steps
            .iter()
            .filter_map(|s| match *s {
                Step::Placeholder { result, .. } => Some(result),
                Step::Send(_) => None,
            })
            .collect();
        let store = summary.map_or_else(Vec::new, |s| hidden_before(0, s, &pinned));
        let mut without: Vec<usize> = compactor.clone();
        without.retain(|i| !placeholders.contains(i));
        let mut store_without = store.clone();
        store_without.retain(|i| !placeholders.contains(i));
        proptest::prop_assert_eq!(&without, &store_without);
        for i in &store {
            proptest::prop_assert!(compactor.contains(i), "{} is hidden by the summary", i);
        }

        let sent: Vec<usize> = steps
            .iter()
            .filter_map(|s| match *s {
                Step::Send(i) => Some(i),
                Step::Placeholder { .. } => None,
            })
            .collect();
        let not_left_out = |i: usize| match summary {
            Some(s) => i > s || resent.contains(&i),
            None => true,
        };
        let expected: Vec<usize> = (0..len)
            .filter(|&i| !sent.contains(&i))
            .filter(|&i| !(matches!(facts[i], Fact::Failed) && not_left_out(i)))
            .collect();
        proptest::prop_assert_eq!(compactor, expected);
    }
}

#[test]
fn tool_call_arguments_are_searched_as_written_not_as_json_escapes() {
    // `JSON.stringify` writes a newline in an argument as `\n`: read as
    // text, the word after it would become `nnpm`.
    let mut assistant = texts(Role::Assistant);
    let call = br#"bash{"command":"cd src\nnpm test\t--watch","note":"say \"hi\" \\ \u00e9t\u00e9 \ud83d\ude00 \ud800x"}"#;
    assistant.tool_calls = vec![call.as_slice()];
    let text = message_text(&assistant).unwrap();
    assert_eq!(
        text,
        "bash{\"command\":\"cd src\nnpm test\t--watch\",\"note\":\"say \"hi\" \\ été 😀 \u{fffd}x\"}"
    );
    let mut index = Index::new();
    index.add(0, &text).unwrap();
    for query in ["npm", "watch", "été"] {
        let (_, best) = ranked(&mut index, query, 5).unwrap();
        assert_eq!(best.len(), 1, "{query}");
    }
    // An escape that is not JSON's is left as it is.
    assistant.tool_calls = vec![br#"run{"path":"C:\q \u12"}"#.as_slice()];
    assert_eq!(
        message_text(&assistant).as_deref(),
        Some(r#"run{"path":"C:\q \u12"}"#)
    );
}

#[test]
fn a_word_is_found_whatever_its_case_identifier_or_not() {
    let texts = [
        "we call parseConfigFile at startup",
        "PARSECONFIGFILE is the name in the logs",
        "the useState hook",
    ];
    let mut index = Index::new();
    for (k, t) in texts.iter().enumerate() {
        index.add(k as u32, t).unwrap();
    }
    for query in [
        "parseConfigFile",
        "parseconfigfile",
        "PARSECONFIGFILE",
        "ParseConfigFile",
    ] {
        let (_, best) = ranked(&mut index, query, 5).unwrap();
        let mut keys: Vec<u32> = best.iter().map(|r| r.key).collect();
        keys.sort_unstable();
        assert_eq!(keys, [0, 1], "{query}");
    }
    for query in ["usestate", "USESTATE"] {
        let (_, best) = ranked(&mut index, query, 5).unwrap();
        assert_eq!(best.first().map(|r| r.key), Some(2), "{query}");
    }
}

#[test]
fn the_text_searched_depends_on_the_role() {
    let mut user = texts(Role::User);
    user.content_string = Some(b"never touch vendor/");
    assert_eq!(message_text(&user).as_deref(), Some("never touch vendor/"));

    let mut assistant = texts(Role::Assistant);
    assistant.text = vec![b"Reading it.".as_slice()];
    assistant.thinking = vec![b"private".as_slice()];
    assistant.tool_calls = vec![br#"read{"path":"src/a.ts"}"#.as_slice()];
    assert_eq!(
        message_text(&assistant).as_deref(),
        Some("Reading it.\nread{\"path\":\"src/a.ts\"}")
    );

    let mut result = texts(Role::ToolResult);
    result.text = vec![
        b"error E0502".as_slice(),
        b"".as_slice(),
        b"at line 3".as_slice(),
    ];
    assert_eq!(
        message_text(&result).as_deref(),
        Some("error E0502\nat line 3")
    );

    let mut bash = texts(Role::BashExecution);
    bash.command = b"npm test";
    bash.output = b"1 failing";
    assert_eq!(message_text(&bash).as_deref(), Some("npm test\n1 failing"));

    let mut branch = texts(Role::BranchSummary);
    branch.summary = b"tried the cache";
    assert_eq!(message_text(&branch).as_deref(), Some("tried the cache"));

    let mut summary = texts(Role::CompactionSummary);
    summary.summary = b"## Goal";
    assert_eq!(message_text(&summary), None);
    assert_eq!(message_text(&texts(Role::ToolOutputCleared)), None);
    assert_eq!(message_text(&MessageTexts::default()), None);
    let mut blank = texts(Role::User);
    blank.content_string = Some(b"  \n ");
    assert_eq!(message_text(&blank), None);
    // Bytes that are not UTF-8 (never sent by the boundary) do not panic.
    let mut odd = texts(Role::User);
    odd.content_string = Some(b"caf\xe9");
    assert_eq!(message_text(&odd).as_deref(), Some("caf\u{fffd}"));
}

#[test]
fn sync_takes_out_what_is_no_longer_hidden_or_changed_and_adds_the_rest() {
    // Indexed 0, 1, 2, 5; hidden now 0, 1, 2, 3 (an undo made 5 visible
    // again; a compaction hid 3); 1 was replaced at its place.
    let s = sync(&[0, 1, 2, 5], &[0, 1, 2, 3], &[1]);
    assert_eq!(s.remove, [1, 5]);
    assert_eq!(s.add, [1, 3]);
    assert_eq!(
        sync(&[], &[0, 1], &[0, 1]),
        Sync {
            remove: vec![],
            add: vec![0, 1]
        }
    );
    assert_eq!(sync(&[0, 1], &[0, 1], &[]), Sync::default());
    assert_eq!(
        sync(&[0, 1], &[], &[]),
        Sync {
            remove: vec![0, 1],
            add: vec![]
        }
    );
}

#[test]
fn a_search_ranks_then_makes_hits_from_the_texts_it_asks_for() {
    let texts = [
        "we agreed to never modify files under vendor/",
        "the parser module got faster",
        "error E0502: cannot borrow `cache` as mutable",
    ];
    let mut index = Index::new();
    for (k, t) in texts.iter().enumerate() {
        index.add(k as u32, t).unwrap();
    }
    let (terms, best) = ranked(&mut index, "E0502 borrow", 5).unwrap();
    assert_eq!(best.first().map(|r| r.key), Some(2));
    let h = hit(&best[0], texts[2], &terms).unwrap();
    assert_eq!(h.excerpt.render(texts[2]), texts[2]);
    assert_eq!(h.reference.key, 2);
    assert_eq!(h.reference.fingerprint, fingerprint(texts[2]));
    // A passage the text no longer has gives no hit.
    let far = Ranked {
        passage: 4,
        ..best[0]
    };
    assert!(hit(&far, texts[2], &terms).is_none());
    assert_eq!(
        ranked(&mut index, "  ", 5).unwrap_err(),
        HistoryError::EmptyQuery
    );
    assert!(matches!(
        ranked(&mut index, "vendor", 0),
        Err(HistoryError::Limit { .. })
    ));
    let (_, none) = ranked(&mut index, "nothing-like-this", 5).unwrap();
    assert!(none.is_empty());
}

#[test]
fn results_are_laid_out_for_javascript() {
    let text = "error E7: tsc failed on src/a.ts";
    let mut index = Index::new();
    index.add(4, text).unwrap();
    let (terms, best) = ranked(&mut index, "E7", 1).unwrap();
    let h = hit(&best[0], text, &terms).unwrap();
    let reference = h.reference;
    let shape: Shape<()> = search_result(&[(h, Role::ToolResult, text)], 1);
    assert_eq!(shape.keys(), ["hits", "searched"]);
    assert_eq!(shape.get("searched"), Some(&Field::Number(1.0)));
    let Some(Field::List(hits)) = shape.get("hits") else {
        panic!("no hits list");
    };
    let Field::Object(first) = &hits[0] else {
        panic!("a hit is not an object");
    };
    assert_eq!(first.keys(), ["ref", "index", "role", "excerpt", "score"]);
    assert_eq!(
        first.get("ref"),
        Some(&Field::String(reference.to_string()))
    );
    assert_eq!(first.get("index"), Some(&Field::Number(4.0)));
    assert_eq!(first.get("role"), Some(&Field::Str("toolResult")));
    assert_eq!(first.get("excerpt"), Some(&Field::String(text.to_string())));

    let page = Page {
        start: 10,
        len: 3,
        next: Some(13),
    };
    let read: Shape<()> = read_result(&reference, Role::ToolResult, text, &page);
    assert_eq!(read.keys(), ["ref", "index", "role", "text", "next"]);
    assert_eq!(read.get("text"), Some(&Field::String("tsc".into())));
    assert_eq!(read.get("next"), Some(&Field::Number(13.0)));
    let end = Page { next: None, ..page };
    let read: Shape<()> = read_result(&reference, Role::ToolResult, text, &end);
    assert_eq!(read.get("next"), Some(&Field::Null));
    assert_eq!(role_name(Role::BashExecution), "bashExecution");
}

#[test]
fn options_are_read_with_defaults_and_clear_errors() {
    use crate::js::options::tests::{Fields, Js};
    let with = |fields: Vec<(&'static str, Js)>, options: Js| {
        let o = Fields::new(fields);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        (
            search_limit(&options, &r).map_err(|e| e.to_string()),
            read_options(&options, &r).map_err(|e| e.to_string()),
        )
    };
    assert_eq!(
        with(vec![], Js::Undefined),
        (Ok(DEFAULT_LIMIT), Ok((None, DEFAULT_PAGE_CHARS)))
    );
    assert_eq!(
        with(vec![], Js::Null),
        (Ok(DEFAULT_LIMIT), Ok((None, DEFAULT_PAGE_CHARS)))
    );
    let (limit, read) = with(
        vec![
            ("limit", Js::Num(3.0)),
            ("offset", Js::Num(12.0)),
            ("maxChars", Js::Num(500.0)),
        ],
        Js::Obj,
    );
    assert_eq!((limit, read), (Ok(3), Ok((Some(12), 500))));
    let (limit, read) = with(
        vec![("limit", Js::Num(101.0)), ("maxChars", Js::Num(0.0))],
        Js::Obj,
    );
    assert_eq!(
        limit,
        Err("options.limit must be a whole number from 1 to 100, got 101".into())
    );
    assert_eq!(
        read,
        Err("options.maxChars must be a whole number from 1 to 16000, got 0".into())
    );
    let (limit, _) = with(vec![], Js::Num(5.0));
    assert_eq!(limit, Err("options must be an object, got a number".into()));
}

#[test]
fn a_read_of_a_changed_message_says_so_before_anything_else() {
    let long = "word ".repeat(1_000);
    let mut index = Index::new();
    index.add(0, &long).unwrap();
    let reference = Reference {
        key: 0,
        passage: 3,
        fingerprint: fingerprint(&long),
    };
    let page = read(&index, &reference, Some(&long), None, 100).unwrap();
    assert!(page.len > 0);
    // Replaced by a short message (re-indexed with one passage).
    index.remove(0);
    index.add(0, "short").unwrap();
    assert_eq!(
        read(&index, &reference, Some("short"), None, 100),
        Err(HistoryError::Changed { key: 0 })
    );
    assert_eq!(
        read(
            &index,
            &Reference {
                key: 9,
                ..reference
            },
            None,
            None,
            100
        ),
        Err(HistoryError::UnknownMessage { key: 9 })
    );
}

#[test]
fn words_written_apart_find_the_identifier_that_joins_them() {
    let texts = [
        "export function cacheStep0(input) { return input; }",
        "export function authStep0(input) { return input; }",
        "export function authStep1(input) { return input; }",
    ];
    let mut index = Index::new();
    for (k, t) in texts.iter().enumerate() {
        index.add(k as u32, t).unwrap();
    }
    let (terms, best) = ranked(&mut index, "auth step 0 function", 3).unwrap();
    assert_eq!(best.first().map(|r| r.key), Some(1));
    for joined in ["authstep", "step0", "authstep0"] {
        assert!(terms.iter().any(|t| t.text == joined), "{joined}");
    }
    // Words as written, not as folded: "metrics" stays "metrics".
    let (terms, _) = ranked(&mut index, "metrics step 9", 3).unwrap();
    assert!(terms.iter().any(|t| t.text == "metricsstep9"));
    assert!(!terms
        .iter()
        .any(|t| t.text.ends_with("auth") && t.text.len() > 4));
}
