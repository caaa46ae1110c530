use super::*;
use crate::js::json::{parse, stringified, stringify, Json, JsonObject};
use crate::js::string::JsStr;
use crate::message::context::last_compaction_index;
use crate::message::role::Role;
use proptest::prelude::*;

fn js(s: &str) -> JsStr {
    JsStr::from(s)
}

fn json(text: &str) -> Json {
    parse(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn role(message: &Json) -> Role {
    Role::from_name(
        &message
            .get("role")
            .and_then(Json::as_str)
            .map(|r| r.to_string_lossy())
            .unwrap_or_default(),
    )
}

/// `transformContext`: the last compaction summary and what follows it.
fn transform_context(messages: &[Json]) -> &[Json] {
    let start = last_compaction_index::<()>(messages.len(), |i| Ok(role(&messages[i])))
        .unwrap()
        .unwrap_or(0);
    &messages[start..]
}

fn import(text: &str) -> ImportedSession {
    import_session(text).unwrap_or_else(|e| panic!("{e}"))
}

fn messages(text: &str) -> Vec<Json> {
    import(text).messages
}

fn text_of(message: &Json) -> String {
    match message.get("content") {
        Some(Json::String(s)) => s.to_string_lossy(),
        Some(Json::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Json::as_str))
            .map(|s| s.to_string_lossy())
            .collect(),
        _ => message
            .get("summary")
            .and_then(Json::as_str)
            .map(|s| s.to_string_lossy())
            .unwrap_or_default(),
    }
}

fn texts(messages: &[Json]) -> Vec<String> {
    messages.iter().map(text_of).collect()
}

const DEFAULTS: fn() -> ExportDefaults = || ExportDefaults {
    session_id: js("default-session"),
    now_ms: 1_700_000_000_000.0,
};

fn export(messages: &[Json], options: Option<&str>) -> String {
    let options = options.map(json);
    export_session(
        &Json::Array(messages.to_vec()),
        options.as_ref(),
        &DEFAULTS(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

const HEADER_V3: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn user(id: &str, parent: &str, text: &str) -> String {
    let parent = if parent.is_empty() {
        "null".to_owned()
    } else {
        format!("\"{parent}\"")
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn file(lines: &[&str]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

// ---------------------------------------------------------------------------
// The fixtures (pi-mono's test sessions, version 1)
// ---------------------------------------------------------------------------

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn large_session_fixture() {
    let text = fixture("pi-large-session.jsonl");
    let s = import(&text);
    assert_eq!(s.messages.len(), 914);
    let count = |r: Role| s.messages.iter().filter(|m| role(m) == r).count();
    assert_eq!(count(Role::User), 88);
    assert_eq!(count(Role::Assistant), 453);
    assert_eq!(count(Role::ToolResult), 373);
    assert_eq!(transform_context(&s.messages).len(), 914);
    assert_eq!(s.session.id, js("d703a1a9-1b7b-4fb1-b512-c9738b1fe617"));
    assert_eq!(s.session.version, 1.0);
    assert_eq!(
        s.session.cwd,
        Some(js("/Users/badlogic/workspaces/pi-mono"))
    );
    assert_eq!(s.session.provider, Some(js("anthropic")));
    assert_eq!(s.session.model_id, Some(js("claude-sonnet-4-5")));
    assert!(s.session.skipped_lines.is_empty());
    // The messages are the file's, untouched.
    let first_line = text.lines().nth(1).unwrap();
    assert_eq!(
        stringified(&s.messages[0]),
        stringified(json(first_line).get("message").unwrap())
    );
}

#[test]
fn before_compaction_fixture() {
    let text = fixture("pi-before-compaction.jsonl");
    let s = import(&text);
    assert_eq!(s.messages.len(), 992);
    let summaries: Vec<usize> = (0..s.messages.len())
        .filter(|&i| role(&s.messages[i]) == Role::CompactionSummary)
        .collect();
    assert_eq!(summaries.len(), 2);
    let context = transform_context(&s.messages);
    assert_eq!(context.len(), 446);
    assert_eq!(role(&context[0]), Role::CompactionSummary);
    assert_eq!(
        context[0].get("tokensBefore"),
        Some(&Json::Number(185014.0))
    );
    assert_eq!(
        context[0].get("timestamp"),
        Some(&Json::Number(1765238061502.0)) // 2025-12-08T23:54:21.502Z
    );
    // Each summary stands just before the line its firstKeptEntryIndex
    // named (indices count the header): 293 and 551 are message lines.
    let lines: Vec<Json> = text.lines().map(json).collect();
    for (at, index) in summaries.iter().zip([293, 551]) {
        let kept = lines[index].get("message").unwrap();
        assert_eq!(stringified(&s.messages[at + 1]), stringified(kept));
    }
    // Round trip through a version-3 file.
    let again = messages(&export(&s.messages, None));
    assert_eq!(again, s.messages);
}

// ---------------------------------------------------------------------------
// Reading files
// ---------------------------------------------------------------------------

#[test]
fn follows_the_branch_of_the_last_entry() {
    // a ← b ← c, then a ← d: pi's leaf is d (the last line), so b and c
    // are on an abandoned branch.
    let text = file(&[
        HEADER_V3,
        &user("a", "", "A"),
        &user("b", "a", "B"),
        &user("c", "b", "C"),
        &user("d", "a", "D"),
    ]);
    assert_eq!(texts(&messages(&text)), ["A", "D"]);
    // A label appended after navigating back keeps pi's leaf on that branch.
    let label = r#"{"type":"label","id":"l","parentId":"c","timestamp":"2025-01-01T00:00:02.000Z","targetId":"a","label":"x"}"#;
    let text = file(&[
        HEADER_V3,
        &user("a", "", "A"),
        &user("b", "a", "B"),
        &user("d", "a", "D"),
        &user("c", "b", "C"),
        label,
    ]);
    assert_eq!(texts(&messages(&text)), ["A", "B", "C"]);
}

#[test]
fn a_later_entry_with_the_same_id_replaces_the_earlier_one() {
    let text = file(&[
        HEADER_V3,
        &user("a", "", "A1"),
        &user("a", "", "A2"),
        &user("b", "a", "B"),
    ]);
    assert_eq!(texts(&messages(&text)), ["A2", "B"]);
}

#[test]
fn unknown_parents_end_the_branch_and_a_null_leaf_empties_it() {
    let text = file(&[HEADER_V3, &user("a", "", "A"), &user("b", "gone", "B")]);
    assert_eq!(texts(&messages(&text)), ["B"]);
    let null_leaf =
        r#"{"type":"label","id":null,"parentId":"a","timestamp":"2025-01-01T00:00:02.000Z"}"#;
    let text = file(&[HEADER_V3, &user("a", "", "A"), null_leaf]);
    assert!(messages(&text).is_empty());
    assert!(messages(&file(&[HEADER_V3])).is_empty());
}

#[test]
fn skips_malformed_and_blank_lines_and_reads_bom_and_crlf() {
    let text = format!(
        "\u{feff}\n{HEADER_V3}\r\n{}\r\n{{\"type\":\"message\", oops\n\n   \n{}\r\n",
        user("a", "", "A"),
        user("b", "a", "B")
    );
    let s = import(&text);
    assert_eq!(texts(&s.messages), ["A", "B"]);
    assert_eq!(s.session.skipped_lines, vec![4]);
}

#[test]
fn keeps_lone_surrogate_escapes() {
    let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x\ud800y","timestamp":1}}"#;
    let m = messages(&file(&[HEADER_V3, line]));
    assert_eq!(
        m[0].get("content")
            .and_then(Json::as_str)
            .unwrap()
            .as_units(),
        &[0x78, 0xD800, 0x79]
    );
    let text = export(&m, None);
    assert!(text.contains(r#""x\ud800y""#));
    assert_eq!(messages(&text), m);
}

#[test]
fn custom_messages_are_built_like_pi_create_custom_message() {
    let line = r#"{"type":"custom_message","customType":"note","content":[{"type":"text","text":"hi"}],"display":false,"details":{"k":1},"id":"c","parentId":null,"timestamp":"2025-01-01T00:00:02.500Z"}"#;
    let m = messages(&file(&[HEADER_V3, line]));
    assert_eq!(
        stringified(&m[0]).to_string_lossy(),
        r#"{"role":"custom","customType":"note","content":[{"type":"text","text":"hi"}],"display":false,"details":{"k":1},"timestamp":1735689602500}"#
    );
    // Missing fields stay missing (pi's are undefined).
    let line = r#"{"type":"custom_message","customType":"n","content":"x","id":"c","parentId":null,"timestamp":"2025-01-01T00:00:00Z"}"#;
    let m = messages(&file(&[HEADER_V3, line]));
    assert_eq!(
        stringified(&m[0]).to_string_lossy(),
        r#"{"role":"custom","customType":"n","content":"x","timestamp":1735689600000}"#
    );
}

#[test]
fn branch_summaries_lose_the_preamble_and_tags_pi_added() {
    let stored = format!(
        "{BRANCH_PREAMBLE}Tried X.\\n\\n<read-files>\\na.ts\\n</read-files>\\n\\n<modified-files>\\nb.ts\\n</modified-files>"
    )
    .replace('\n', "\\n");
    let line = format!(
        r#"{{"type":"branch_summary","id":"s","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","fromId":"z","summary":"{stored}","details":{{"readFiles":["a.ts"],"modifiedFiles":["b.ts"]}},"fromHook":false}}"#
    );
    let m = messages(&file(&[HEADER_V3, &user("a", "", "A"), &line]));
    assert_eq!(
        stringified(&m[1]).to_string_lossy(),
        r#"{"role":"branchSummary","summary":"Tried X.","fromId":"z","timestamp":1735689603000,"details":{"readFiles":["a.ts"],"modifiedFiles":["b.ts"]},"fromHook":false}"#
    );
    // pi's text comes back on export.
    let out = export(&m, None);
    assert!(out.contains(&format!("\"summary\":\"{stored}\"")), "{out}");
    // An extension's summary (fromHook) has no preamble to remove.
    let hook = format!(
        r#"{{"type":"branch_summary","id":"s","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","fromId":"z","summary":"{}Mine","fromHook":true}}"#,
        BRANCH_PREAMBLE.replace('\n', "\\n")
    );
    let m = messages(&file(&[HEADER_V3, &user("a", "", "A"), &hook]));
    assert_eq!(text_of(&m[1]), format!("{BRANCH_PREAMBLE}Mine"),);
    // An empty summary yields no message, as in pi.
    let empty = r#"{"type":"branch_summary","id":"s","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","fromId":"z","summary":""}"#;
    assert_eq!(
        messages(&file(&[HEADER_V3, &user("a", "", "A"), empty])).len(),
        1
    );
}

/// The summary entry of a file with one user message before it.
fn summary_file(entry: &str) -> String {
    let line =
        format!(r#"{{{entry},"id":"s","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z"}}"#);
    file(&[HEADER_V3, &user("a", "", "A"), &line])
}

/// The `summary` of the exported file's last summary entry.
fn stored_summary(exported: &str) -> Json {
    let is_summary = |e: &Json| {
        matches!(
            e.get("type").and_then(Json::as_str),
            Some(t) if t.eq_str("compaction") || t.eq_str("branch_summary")
        )
    };
    exported
        .lines()
        .map(json)
        .rfind(is_summary)
        .and_then(|e| e.get("summary").cloned())
        .unwrap_or(Json::Null)
}

#[test]
fn a_summary_text_export_would_not_write_is_kept_whole_and_written_back() {
    let preamble = BRANCH_PREAMBLE.replace('\n', "\\n");
    for (entry, verbatim) in [
        // An extension's compaction: file lists in details, none in the text.
        (r#""type":"compaction","summary":"hook","firstKeptEntryId":"a","tokensBefore":5,"details":{"readFiles":["r.ts"],"modifiedFiles":["m.ts"]},"fromHook":true"#.to_owned(), true),
        // Tags in the middle, tags that are not the details'.
        (r#""type":"compaction","summary":"i\n\n<read-files>\nr.ts\n</read-files>\n\nmore","tokensBefore":5,"details":{"readFiles":["r.ts"],"modifiedFiles":[]}"#.to_owned(), true),
        (r#""type":"compaction","summary":"t\n\n<read-files>\nr.ts\n</read-files>","tokensBefore":5,"details":{"readFiles":["o.ts"],"modifiedFiles":[]}"#.to_owned(), true),
        // pi's `branchWithSummary` without the preamble, and one with CRLF.
        (r#""type":"branch_summary","fromId":"a","summary":"BS""#.to_owned(), true),
        (format!(r#""type":"branch_summary","fromId":"a","summary":"{}X""#, preamble.replace("\\n", "\\r\\n")), true),
        // An extension's details of another shape: nothing to add or remove.
        (r#""type":"compaction","summary":"ext","tokensBefore":5,"details":{"readFiles":"src/a.ts,src/b.ts","version":2},"fromHook":true"#.to_owned(), false),
        // What pi writes itself.
        (format!(r#""type":"branch_summary","fromId":"a","summary":"{preamble}B\n\n<read-files>\nr.ts\n</read-files>","details":{{"readFiles":["r.ts"],"modifiedFiles":[]}}"#), false),
    ] {
        let text = summary_file(&entry);
        let stored = json(text.lines().nth(2).unwrap()).get("summary").cloned().unwrap();
        let m = messages(&text);
        let summary = m.iter().find(|m| m.get("summary").is_some()).unwrap();
        assert_eq!(
            summary.get("verbatim"),
            verbatim.then_some(&Json::Bool(true)),
            "{entry}"
        );
        if verbatim {
            assert_eq!(summary.get("summary"), Some(&stored), "{entry}");
        }
        // pi gets its text back, and the mark survives the trip.
        let out = export(&m, None);
        assert_eq!(stored_summary(&out), stored, "{entry}");
        assert_eq!(messages(&out), m, "{entry}");
    }
}

#[test]
fn compaction_summaries_lose_the_file_tags_and_sit_at_their_cut() {
    let c = r#"{"type":"compaction","id":"c","parentId":"c3","timestamp":"2025-01-01T00:01:00.000Z","summary":"Sum.\n\n<read-files>\nr.ts\n</read-files>","firstKeptEntryId":"b","tokensBefore":1234,"details":{"readFiles":["r.ts"],"modifiedFiles":[]}}"#;
    let text = file(&[
        HEADER_V3,
        &user("a", "", "A"),
        &user("b", "a", "B"),
        &user("c3", "b", "C"),
        c,
        &user("d", "c", "D"),
    ]);
    let m = messages(&text);
    assert_eq!(texts(&m), ["A", "Sum.", "B", "C", "D"]);
    assert_eq!(
        stringified(&m[1]).to_string_lossy(),
        r#"{"role":"compactionSummary","summary":"Sum.","tokensBefore":1234,"timestamp":1735689660000,"details":{"readFiles":["r.ts"],"modifiedFiles":[]},"keptMessages":2}"#
    );
    // B and C were kept (pi put the compaction entry after them).
    assert_eq!(texts(transform_context(&m)), ["Sum.", "B", "C", "D"]);
}

#[test]
fn a_first_kept_entry_pi_cannot_find_keeps_nothing_before_the_compaction() {
    let c = r#"{"type":"compaction","id":"c","parentId":"b","timestamp":"2025-01-01T00:01:00.000Z","summary":"S","firstKeptEntryId":"nowhere","tokensBefore":1}"#;
    let m = messages(&file(&[
        HEADER_V3,
        &user("a", "", "A"),
        &user("b", "a", "B"),
        c,
        &user("d", "c", "D"),
    ]));
    assert_eq!(texts(&m), ["A", "B", "S", "D"]);
    assert_eq!(texts(transform_context(&m)), ["S", "D"]);
}

#[test]
fn an_earlier_summary_never_follows_a_later_one() {
    // c2 keeps from b, before c1's cut at d: pi's context is S2 b d e f
    // (c1 yields nothing after S2), so S1 moves back to S2's cut.
    let c1 = r#"{"type":"compaction","id":"c1","parentId":"d","timestamp":"2025-01-01T00:01:00.000Z","summary":"S1","firstKeptEntryId":"d","tokensBefore":1}"#;
    let c2 = r#"{"type":"compaction","id":"c2","parentId":"e","timestamp":"2025-01-01T00:02:00.000Z","summary":"S2","firstKeptEntryId":"b","tokensBefore":2}"#;
    let m = messages(&file(&[
        HEADER_V3,
        &user("a", "", "A"),
        &user("b", "a", "B"),
        &user("d", "b", "D"),
        c1,
        &user("e", "c1", "E"),
        c2,
        &user("f", "c2", "F"),
    ]));
    assert_eq!(texts(&m), ["A", "S1", "S2", "B", "D", "E", "F"]);
    assert_eq!(texts(transform_context(&m)), ["S2", "B", "D", "E", "F"]);
}

#[test]
fn version_1_files_are_migrated() {
    // Entries are chained in file order; firstKeptEntryIndex counts lines
    // from the header; hookMessage becomes custom.
    let text = file(&[
        r#"{"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"A","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"h","content":"H","display":true,"timestamp":2}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"B","timestamp":3}}"#,
        r#"{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"S","firstKeptEntryIndex":2,"tokensBefore":9}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"C","timestamp":5}}"#,
    ]);
    let s = import(&text);
    assert_eq!(texts(&s.messages), ["A", "S", "H", "B", "C"]);
    assert_eq!(s.messages[2].get("role"), Some(&Json::from("custom")));
    assert_eq!(s.session.version, 1.0);
    // An index past the compaction names an entry that has no id yet:
    // pi keeps nothing from before the compaction.
    let text = text.replace("\"firstKeptEntryIndex\":2", "\"firstKeptEntryIndex\":5");
    assert_eq!(texts(&messages(&text)), ["A", "H", "B", "S", "C"]);
    // An index out of range, or at the header, is ignored the same way.
    for index in ["99", "0", "-1", "1.5"] {
        let t = text.replace(
            "\"firstKeptEntryIndex\":5",
            &format!("\"firstKeptEntryIndex\":{index}"),
        );
        assert_eq!(texts(&messages(&t)), ["A", "H", "B", "S", "C"], "{index}");
    }
}

#[test]
fn hook_messages_become_custom_before_version_3_only() {
    let hook = r#"{"type":"message","id":"h","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"h","content":"H","display":true,"timestamp":2}}"#;
    for (version, want) in [("2", "custom"), ("\"2\"", "custom"), ("3", "hookMessage")] {
        let header = HEADER_V3.replace("\"version\":3", &format!("\"version\":{version}"));
        let m = messages(&file(&[&header, hook]));
        assert_eq!(m[0].get("role"), Some(&Json::from(want)), "{version}");
    }
}

#[test]
fn session_metadata() {
    let text = file(&[
        HEADER_V3,
        r#"{"type":"session_info","id":"i","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":"  First  "}"#,
        r#"{"type":"model_change","id":"m","parentId":"i","timestamp":"2025-01-01T00:00:00.000Z","provider":"openai","modelId":"gpt-5"}"#,
        r#"{"type":"thinking_level_change","id":"t","parentId":"m","timestamp":"2025-01-01T00:00:00.000Z","thinkingLevel":"high"}"#,
        &user("a", "t", "A"),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude","timestamp":3}}"#,
    ]);
    let s = import(&text).session;
    assert_eq!(s.title, Some(js("First")));
    assert_eq!(
        s.model,
        Some((Some(Json::from("anthropic")), Some(Json::from("claude"))))
    );
    assert_eq!(
        s.thinking_level,
        Some(Json::from("off")).map(|_| Json::from("high"))
    );
    assert_eq!(s.timestamp, Some(js("2025-01-01T00:00:00.000Z")));
    assert_eq!(s.version, 3.0);
    let info = import(&text).into_json();
    assert_eq!(
        stringified(info.get("session").unwrap()).to_string_lossy(),
        r#"{"id":"s1","version":3,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","title":"First","model":{"provider":"anthropic","modelId":"claude"},"thinkingLevel":"high","skippedLines":[]}"#
    );
}

#[test]
fn errors_name_the_line_and_the_problem() {
    let err = |text: &str| import_session(text).unwrap_err().to_string();
    assert_eq!(
        err(""),
        "the session file is empty: a pi session file starts with a session header line"
    );
    assert_eq!(err(" \n\n"), err(""));
    assert!(err("oops\n{bad").contains("none of the 2 non-blank lines"));
    assert_eq!(
        err(&file(&["", &user("a", "", "A")])),
        "line 2: the first entry must be the session header, an object with \"type\": \"session\" and a string \"id\", but its type is \"message\""
    );
    assert!(err(r#"{"type":"session","id":5}"#).ends_with("but its id is a number"));
    assert!(err("[1]").ends_with("but it is an array"));
    assert!(err("null").ends_with("but it is null"));
    assert_eq!(
        err(&file(&[HEADER_V3, "null"])),
        "line 2: the entry is null, which pi cannot load"
    );
    assert!(err(&file(&[r#"{"type":"session","id":"x"}"#, "5"]))
        .starts_with("line 2: every entry of a version-1 session file must be a JSON object"));
    let cycle = file(&[HEADER_V3, &user("a", "b", "A"), &user("b", "a", "B")]);
    assert!(
        err(&cycle).starts_with("line 3: the parentId chain"),
        "{}",
        err(&cycle)
    );
    let self_parent = file(&[HEADER_V3, &user("a", "a", "A")]);
    assert!(err(&self_parent).starts_with("line 2: the parentId chain"));
    let no_message = r#"{"type":"message","id":"a","parentId":null,"timestamp":"x"}"#;
    assert_eq!(
        err(&file(&[HEADER_V3, no_message])),
        "line 2: the message entry's message must be an object, got undefined"
    );
    let no_role = r#"{"type":"message","id":"a","parentId":null,"message":{"content":"x"}}"#;
    assert_eq!(
        err(&file(&[HEADER_V3, no_role])),
        "line 2: the message entry's message.role must be a string, got undefined"
    );
    let bad_time = r#"{"type":"custom_message","customType":"n","content":"x","id":"c","parentId":null,"timestamp":"yesterday"}"#;
    assert_eq!(
        err(&file(&[HEADER_V3, bad_time])),
        "line 2: the custom_message entry has timestamp \"yesterday\", which is not a date; pi writes dates in ISO 8601 with a zone, like \"2025-01-02T03:04:05.678Z\""
    );
    let bad_summary = r#"{"type":"compaction","id":"c","parentId":null,"timestamp":"2025-01-01T00:00:00Z","summary":5}"#;
    assert_eq!(
        err(&file(&[HEADER_V3, bad_summary])),
        "line 2: the compaction entry's summary must be a string, got a number"
    );
    // Off the active branch nothing is checked, as pi reads nothing there.
    let text = file(&[HEADER_V3, no_role, &user("b", "", "B")]);
    assert_eq!(texts(&messages(&text)), ["B"]);
}

/// Found by the `session_import` fuzz target: a `message` entry carrying a
/// branch summary without a summary imported, and the array then could not
/// be exported (nor converted for the model). Summaries in message entries
/// must be usable; the ones that are import and export back.
#[test]
fn summaries_in_message_entries_must_be_usable() {
    let entry = |message: &str| {
        format!(
            r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{message}}}"#
        )
    };
    let err = |message: &str| {
        import_session(&file(&[HEADER_V3, &entry(message)]))
            .unwrap_err()
            .to_string()
    };
    // The fuzzer's input, minimized: a version-1 file.
    let found = "{\"type\":\"session\",\"id\":\"\",\"\":true}\n{\"type\":\"message\",\"end\":\"7.\",\"message\":{\"role\":\"branchSummary\",\"tta\":896}}\n{";
    assert_eq!(
        import_session(found).unwrap_err().to_string(),
        "line 2: the message entry's message is a branchSummary whose summary is undefined, not a string"
    );
    assert_eq!(
        err(r#"{"role":"compactionSummary","summary":null,"timestamp":1}"#),
        "line 2: the message entry's message is a compactionSummary whose summary is null, not a string"
    );
    assert_eq!(
        err(r#"{"role":"compactionSummary","summary":"s","timestamp":1.5}"#),
        "line 2: the message entry's message is a compactionSummary whose timestamp is 1.5, not a whole number of milliseconds that a Date can hold (pi stores a compaction's time as an ISO date)"
    );
    assert!(err(r#"{"role":"compactionSummary","summary":"s"}"#).contains("timestamp is undefined"));
    // Usable ones import, and what imports exports and imports back.
    for message in [
        r#"{"role":"branchSummary","summary":"b","timestamp":"now"}"#,
        r#"{"role":"branchSummary","summary":"","timestamp":1}"#,
        r#"{"role":"compactionSummary","summary":"s","timestamp":1}"#,
    ] {
        let first = messages(&file(&[HEADER_V3, &entry(message)]));
        assert_eq!(first, vec![json(message)]);
        let again = messages(&export(&first, None));
        assert_eq!(
            again.iter().map(Json::canonical).collect::<Vec<_>>(),
            vec![json(message).canonical()]
        );
    }
}

// ---------------------------------------------------------------------------
// Writing files
// ---------------------------------------------------------------------------

#[test]
fn exports_a_version_3_file_like_pi_writes() {
    let m = vec![
        json(r#"{"role":"user","content":"hi","timestamp":1735689600000}"#),
        json(
            r#"{"role":"compactionSummary","summary":"S","tokensBefore":5,"timestamp":1735689601000,"details":{"readFiles":["a"],"modifiedFiles":[]}}"#,
        ),
        json(
            r#"{"role":"custom","customType":"n","content":"c","display":true,"timestamp":1735689602000}"#,
        ),
        json(r#"{"role":"branchSummary","summary":"B","fromId":"x","timestamp":1735689603000}"#),
    ];
    let text = export(
        &m,
        Some(
            r#"{"id":"sid","cwd":"/w","title":" T ","model":"openai/gpt-5","thinkingLevel":"low"}"#,
        ),
    );
    let want = [
        r#"{"type":"session","version":3,"id":"sid","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"session_info","id":"00000001","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":"T"}"#,
        r#"{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1735689600000}}"#,
        r#"{"type":"compaction","id":"00000003","parentId":"00000002","timestamp":"2025-01-01T00:00:01.000Z","summary":"S\n\n<read-files>\na\n</read-files>","firstKeptEntryId":"00000004","tokensBefore":5,"details":{"readFiles":["a"],"modifiedFiles":[]}}"#,
        r#"{"type":"custom_message","customType":"n","content":"c","display":true,"id":"00000004","parentId":"00000003","timestamp":"2025-01-01T00:00:02.000Z"}"#,
        r#"{"type":"branch_summary","id":"00000005","parentId":"00000004","timestamp":"2025-01-01T00:00:03.000Z","fromId":"x","summary":"The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nB"}"#,
        r#"{"type":"model_change","id":"00000006","parentId":"00000005","timestamp":"2025-01-01T00:00:03.000Z","provider":"openai","modelId":"gpt-5"}"#,
        r#"{"type":"thinking_level_change","id":"00000007","parentId":"00000006","timestamp":"2025-01-01T00:00:03.000Z","thinkingLevel":"low"}"#,
    ];
    assert_eq!(text, file(&want));
    let s = import(&text);
    assert_eq!(s.messages, m);
    assert_eq!(s.session.title, Some(js("T")));
    assert_eq!(s.session.id, js("sid"));
    assert_eq!(s.session.thinking_level, Some(Json::from("low")));
    assert_eq!(
        s.session.model,
        Some((Some(Json::from("openai")), Some(Json::from("gpt-5"))))
    );
}

#[test]
fn session_fields_that_could_not_be_written_back_are_passed_over() {
    // A level, model or header time of the wrong type (a hand-edited or
    // foreign file): the session info keeps what its types hold, so that
    // messagesToPiSession takes it back.
    let text = file(&[
        r#"{"type":"session","version":3,"id":"sid","timestamp":"99999-99-99T99:99:99Z","cwd":"/w"}"#,
        r#"{"type":"model_change","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","provider":"openai","modelId":"gpt-5"}"#,
        r#"{"type":"thinking_level_change","id":"t","parentId":"m","timestamp":"2025-01-01T00:00:00.000Z","thinkingLevel":"high"}"#,
        r#"{"type":"model_change","id":"m2","parentId":"t","timestamp":"2025-01-01T00:00:00.000Z","provider":5,"modelId":null}"#,
        r#"{"type":"thinking_level_change","id":"t2","parentId":"m2","timestamp":"2025-01-01T00:00:00.000Z","thinkingLevel":5}"#,
        &user("a", "t2", "A"),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"timestamp":3}}"#,
    ]);
    let s = import(&text).session;
    assert_eq!(
        s.model,
        Some((Some(Json::from("openai")), Some(Json::from("gpt-5"))))
    );
    assert_eq!(s.thinking_level, Some(Json::from("high")));
    assert_eq!(s.timestamp, None);
}

#[test]
fn export_defaults_and_the_session_passed_back() {
    let m = vec![json(
        r#"{"role":"user","content":"hi","timestamp":86400000}"#,
    )];
    let text = export(&m, None);
    assert!(text.starts_with(
        r#"{"type":"session","version":3,"id":"default-session","timestamp":"1970-01-02T00:00:00.000Z"}"#
    ));
    // No message timestamp: the current time.
    let text = export(&[], None);
    assert!(
        text.contains("\"timestamp\":\"2023-11-14T22:13:20.000Z\""),
        "{text}"
    );
    // The session an import returns is a valid options object.
    let first = import(&export(
        &m,
        Some(r#"{"id":"x","cwd":"/c","model":{"provider":"p","id":"m"}}"#),
    ));
    let session = first.clone().into_json();
    let again = export_session(
        &Json::Array(first.messages.clone()),
        session.get("session"),
        &DEFAULTS(),
    )
    .unwrap();
    let second = import(&again);
    assert_eq!(second.messages, first.messages);
    assert_eq!(second.session.id, js("x"));
    assert_eq!(second.session.cwd, Some(js("/c")));
    assert_eq!(second.session.model, first.session.model);
}

#[test]
fn no_message_after_one_that_is_no_object_changes_the_error() {
    let err = |messages: &str, options: Option<&str>| {
        let options = options.map(json);
        export_session(&json(messages), options.as_ref(), &DEFAULTS())
            .unwrap_err()
            .to_string()
    };
    let user = r#"{"role":"user","content":"hi","timestamp":1}"#;
    let items = |text: &str| match json(text) {
        Json::Array(items) => items,
        _ => unreachable!(),
    };
    for (messages, options) in [
        (format!("[{user},null,{user},7]"), None),
        (format!("[{user},{{}},null,{{\"role\":5}}]"), None),
        (format!("[{user},null,{user}]"), Some(r#"{"title":5}"#)),
        (
            format!("[{user},{user},\"x\",{{\"role\":\"user\",\"timestamp\":1.5}}]"),
            None,
        ),
    ] {
        let all = items(&messages);
        let end = all
            .iter()
            .position(ends_messages)
            .expect("one is no object");
        let cut = Json::Array(all[..=end].to_vec());
        let options = options.map(json);
        assert_eq!(
            export_session(&cut, options.as_ref(), &DEFAULTS()).unwrap_err(),
            export_session(&Json::Array(all), options.as_ref(), &DEFAULTS()).unwrap_err(),
            "{messages}"
        );
    }
    assert_eq!(
        err(&format!("[{user},null,{user}]"), None),
        "messages[1] must be a message object, got null"
    );
    assert!(!ends_messages(&json(user)));
    assert!(
        ends_messages(&json("null")) && ends_messages(&json("[]")) && ends_messages(&json("1"))
    );
}

#[test]
fn export_errors_name_the_field() {
    let err = |messages: &str, options: Option<&str>| {
        let options = options.map(json);
        export_session(&json(messages), options.as_ref(), &DEFAULTS())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("{}", None),
        "messages must be an array of messages, got an object"
    );
    assert_eq!(
        err("[null]", None),
        "messages[0] must be a message object, got null"
    );
    assert_eq!(
        err("[{}]", None),
        "messages[0].role must be a string, got undefined"
    );
    assert_eq!(
        err(r#"[{"role":"user"},{"role":"compactionSummary","summary":"s","timestamp":1.5}]"#, None),
        "messages[1].timestamp must be a whole number of milliseconds that a Date can hold (pi stores it as an ISO date), got 1.5"
    );
    assert_eq!(
        err(r#"[{"role":"compactionSummary","summary":"s"}]"#, None),
        "messages[0].timestamp must be a whole number of milliseconds that a Date can hold (pi stores it as an ISO date), got undefined"
    );
    assert_eq!(
        err(
            r#"[{"role":"branchSummary","summary":null,"timestamp":1}]"#,
            None
        ),
        "messages[0].summary must be a string, got null"
    );
    // A pin is a boolean here as in every other reader of the messages.
    for (pinned, got) in [
        (r#""yes""#, "a string"),
        ("1", "a number"),
        ("null", "null"),
    ] {
        assert_eq!(
            err(
                &format!(
                    r#"[{{"role":"user","content":"a"}},{{"role":"user","content":"b","pinned":{pinned}}}]"#
                ),
                None
            ),
            format!("messages[1].pinned must be a boolean, got {got}")
        );
    }
    assert!(export_session(
        &json(r#"[{"role":"user","content":"b","timestamp":1,"pinned":false}]"#),
        None,
        &DEFAULTS()
    )
    .is_ok());
    assert_eq!(
        err("[]", Some("5")),
        "options must be an object or undefined, got a number"
    );
    assert_eq!(
        err("[]", Some(r#"{"id":5}"#)),
        "options.id must be a string or undefined, got a number"
    );
    assert!(err("[]", Some(r#"{"model":"nomodel"}"#)).starts_with("options.model must be"));
    assert!(err("[]", Some(r#"{"timestamp":"soon"}"#)).starts_with("options.timestamp must be"));
}

#[test]
fn messages_pi_could_not_store_as_their_own_entry_go_as_message_entries() {
    let m = vec![
        // Timestamps an ISO date cannot carry.
        json(r#"{"role":"custom","customType":"n","content":"c","display":true,"timestamp":1.5}"#),
        json(r#"{"role":"custom","customType":"n","content":"c","display":true}"#),
        json(r#"{"role":"branchSummary","summary":"s","timestamp":"now"}"#),
        // An extension's empty branch summary: pi would skip the entry.
        json(r#"{"role":"branchSummary","summary":"","fromHook":true,"timestamp":5}"#),
        json(r#"{"role":"myAppNote","text":"kept","timestamp":6}"#),
        json(
            r#"{"role":"hookMessage","customType":"h","content":"H","display":true,"timestamp":7}"#,
        ),
    ];
    let text = export(&m, None);
    assert_eq!(text.matches("\"type\":\"message\"").count(), m.len());
    assert_eq!(messages(&text), m);
}

#[test]
fn app_fields_of_summaries_and_custom_messages_survive() {
    let m = vec![
        json(
            r#"{"role":"compactionSummary","summary":"s","tokensBefore":1,"timestamp":1,"id":"mine","type":"x","messageFields":{"a":1},"usage":{"input":1}}"#,
        ),
        json(
            r#"{"role":"custom","customType":"n","content":"c","display":true,"timestamp":2,"parentId":"p","firstKeptEntryId":"q"}"#,
        ),
        json(r#"{"role":"branchSummary","summary":"b","timestamp":3,"fromId":"f","extra":[1,2]}"#),
    ];
    let text = export(&m, None);
    assert_eq!(
        messages(&text)
            .iter()
            .map(Json::canonical)
            .collect::<Vec<_>>(),
        m.iter().map(Json::canonical).collect::<Vec<_>>()
    );
}

#[test]
fn uuid_v7_layout() {
    let id = uuid_v7(1_700_000_000_000.0, [0xFF; 10]);
    assert_eq!(id, "018bcfe5-6800-7fff-bfff-ffffffffffff");
    assert_eq!(
        uuid_v7(f64::NAN, [0; 10]),
        "00000000-0000-7000-8000-000000000000"
    );
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

fn arb_text() -> impl Strategy<Value = Json> {
    let unit_text = proptest::collection::vec(
        prop_oneof![
            4 => 0x20u16..0x7F,
            1 => Just(0x0Au16),
            1 => 0xD800u16..0xE000,
            1 => any::<u16>(),
        ],
        0..12,
    )
    .prop_map(JsStr::from_units);
    prop_oneof![
        3 => unit_text,
        1 => Just(js(BRANCH_PREAMBLE)),
        1 => Just(js(&format!("{BRANCH_PREAMBLE}x"))),
        1 => Just(js("s\n\n<read-files>\na\n</read-files>")),
        1 => Just(js("")),
    ]
    .prop_map(Json::String)
}

fn arb_value() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        (-5i32..5).prop_map(|n| Json::Number(f64::from(n))),
        arb_text(),
        Just(json(r#"{"k":[1,"v"]}"#)),
    ]
}

fn arb_details() -> impl Strategy<Value = Option<Json>> {
    let files = proptest::collection::vec(
        proptest::sample::select(vec!["a.ts", "b/c.rs", "", "\u{e9}"]).prop_map(Json::from),
        0..3,
    );
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(Json::Null)),
        3 => (files.clone(), files).prop_map(|(r, m)| {
            let mut o = JsonObject::new();
            o.insert(js("readFiles"), Json::Array(r));
            o.insert(js("modifiedFiles"), Json::Array(m));
            Some(Json::Object(o))
        }),
        1 => Just(Some(json(r#"{"readFiles":"a"}"#))),
        1 => Just(Some(json(r#"{"readFiles":["a",1],"modifiedFiles":["b"]}"#))),
        1 => Just(Some(json(r#"{"modifiedFiles":["b"]}"#))),
        1 => Just(Some(json(r#"7"#))),
    ]
}

fn arb_timestamp(exact_only: bool) -> impl Strategy<Value = Option<Json>> {
    let exact = prop_oneof![
        (-8_640_000_000_000_000i64..=8_640_000_000_000_000).prop_map(|t| t as f64),
        (1_600_000_000_000i64..1_800_000_000_000).prop_map(|t| t as f64),
        Just(0.0),
    ]
    .prop_map(|t| Some(Json::Number(t)));
    if exact_only {
        exact.boxed()
    } else {
        prop_oneof![
            4 => exact,
            1 => Just(None),
            1 => Just(Some(Json::Number(1.5))),
            1 => Just(Some(Json::Number(9e15))),
            1 => Just(Some(Json::from("2025-01-01T00:00:00Z"))),
            1 => Just(Some(Json::Null)),
        ]
        .boxed()
    }
}

fn arb_extras() -> impl Strategy<Value = Vec<(JsStr, Json)>> {
    proptest::collection::vec(
        (
            proptest::sample::select(vec![
                "id",
                "parentId",
                "type",
                "messageFields",
                "firstKeptEntryId",
                "appField",
                "0",
                "message",
                "verbatim",
            ])
            .prop_map(js),
            arb_value(),
        ),
        0..3,
    )
}

fn object(fields: Vec<(&str, Option<Json>)>, extras: Vec<(JsStr, Json)>) -> Json {
    let mut o = JsonObject::new();
    for (k, v) in fields {
        if let Some(v) = v {
            o.insert(js(k), v);
        }
    }
    for (k, v) in extras {
        if o.get_js(&k).is_none() {
            o.insert(k, v);
        }
    }
    Json::Object(o)
}

fn arb_message() -> impl Strategy<Value = Json> {
    let optional = |s: BoxedStrategy<Json>| proptest::option::of(s);
    prop_oneof![
        // pi-ai messages and other message-entry roles: carried as they are.
        (
            proptest::sample::select(vec![
                "user",
                "assistant",
                "toolResult",
                "bashExecution",
                "hookMessage",
                "appRole",
                "",
            ]),
            arb_text(),
            arb_timestamp(false),
            arb_extras()
        )
            .prop_map(|(role, text, ts, extras)| object(
                vec![
                    ("role", Some(Json::from(role))),
                    ("content", Some(text)),
                    ("timestamp", ts)
                ],
                extras
            )),
        (
            optional(arb_text().boxed()),
            optional(arb_value().boxed()),
            optional(any::<bool>().prop_map(Json::Bool).boxed()),
            arb_details(),
            arb_timestamp(false),
            arb_extras()
        )
            .prop_map(
                |(custom_type, content, display, details, ts, extras)| object(
                    vec![
                        ("role", Some(Json::from("custom"))),
                        ("customType", custom_type),
                        ("content", content),
                        ("display", display),
                        ("details", details),
                        ("timestamp", ts)
                    ],
                    extras
                )
            ),
        (
            arb_text(),
            optional(arb_value().boxed()),
            arb_timestamp(false),
            arb_details(),
            optional(arb_value().boxed()),
            optional(arb_value().boxed()),
            arb_extras()
        )
            .prop_map(
                |(summary, from_id, ts, details, usage, from_hook, extras)| object(
                    vec![
                        ("role", Some(Json::from("branchSummary"))),
                        ("summary", Some(summary)),
                        ("fromId", from_id),
                        ("timestamp", ts),
                        ("details", details),
                        ("usage", usage),
                        ("fromHook", from_hook)
                    ],
                    extras
                )
            ),
        (
            arb_text(),
            optional(arb_value().boxed()),
            arb_timestamp(true),
            arb_details(),
            optional(arb_value().boxed()),
            optional(arb_value().boxed()),
            arb_extras()
        )
            .prop_map(
                |(summary, tokens, ts, details, usage, from_hook, extras)| object(
                    vec![
                        ("role", Some(Json::from("compactionSummary"))),
                        ("summary", Some(summary)),
                        ("tokensBefore", tokens),
                        ("timestamp", ts),
                        ("details", details),
                        ("usage", usage),
                        ("fromHook", from_hook)
                    ],
                    extras
                )
            ),
    ]
}

/// Lines a session file may have, well-formed or not, over a few ids so
/// that branches, repeated ids, missing parents and cycles all occur.
fn arb_line() -> impl Strategy<Value = String> {
    let id = proptest::sample::select(vec!["\"a\"", "\"b\"", "\"c\"", "null", "1", "\"\"", "{}"]);
    let ts = proptest::sample::select(vec![
        "\"2025-01-01T00:00:00.000Z\"",
        "\"bad\"",
        "5",
        "null",
        "\"+275760-09-13T00:00:00.000Z\"",
    ]);
    let body = proptest::sample::select(vec![
        r#""type":"message","message":{"role":"user","content":"u","timestamp":1}"#,
        r#""type":"message","message":{"role":"hookMessage","content":"h"}"#,
        r#""type":"message","message":{"role":"assistant","provider":"p","model":"m","content":[]}"#,
        r#""type":"message""#,
        r#""type":"message","message":"str""#,
        r#""type":"custom_message","customType":"t","content":"c","display":true"#,
        r#""type":"branch_summary","summary":"The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nb","fromId":"x""#,
        r#""type":"branch_summary","summary":"""#,
        r#""type":"branch_summary","summary":7"#,
        r#""type":"compaction","summary":"s\n\n<read-files>\nf\n</read-files>","details":{"readFiles":["f"]},"firstKeptEntryId":"a","tokensBefore":1"#,
        r#""type":"compaction","summary":"s","firstKeptEntryIndex":1"#,
        r#""type":"compaction","summary":"s","firstKeptEntryIndex":3,"firstKeptEntryId":"b""#,
        r#""type":"model_change","provider":"p","modelId":"m""#,
        r#""type":"thinking_level_change","thinkingLevel":"high""#,
        r#""type":"session_info","name":" n ""#,
        r#""type":"session","id":"again""#,
        r#""type":"label","targetId":"a""#,
    ]);
    prop_oneof![
        8 => (id.clone(), id, ts, body).prop_map(|(id, parent, ts, body)| {
            format!(r#"{{{body},"id":{id},"parentId":{parent},"timestamp":{ts}}}"#)
        }),
        1 => proptest::sample::select(vec![
            "null", "5", "\"text\"", "[]", "[1]", "{", "", "   ", "{\"type\":\"message\"",
            "\u{feff}{}", "{\"type\":\"session\",\"id\":\"x\",\"version\":1}",
        ]).prop_map(str::to_owned),
    ]
}

fn arb_file() -> impl Strategy<Value = String> {
    let header = proptest::sample::select(vec![
        r#"{"type":"session","id":"h","version":3}"#,
        r#"{"type":"session","id":"h","version":2}"#,
        r#"{"type":"session","id":"h"}"#,
        r#"{"type":"session","id":"h","version":"2"}"#,
        r#"{"type":"session","id":"h","version":"x"}"#,
        r#"{"type":"session","id":5}"#,
        "garbage",
    ]);
    (header, proptest::collection::vec(arb_line(), 0..12))
        .prop_map(|(h, lines)| format!("{h}\n{}\n", lines.join("\n")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn import_of_export_is_the_identity(
        messages in proptest::collection::vec(arb_message(), 0..10)
    ) {
        let text = export(&messages, Some(r#"{"id":"p","cwd":"/"}"#));
        let back = import_session(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let want: Vec<Json> = messages.iter().map(Json::canonical).collect();
        let got: Vec<Json> = back.messages.iter().map(Json::canonical).collect();
        prop_assert_eq!(got, want);
        // Exporting what was imported writes the same file again.
        prop_assert_eq!(export(&back.messages, Some(r#"{"id":"p","cwd":"/"}"#)), text);
    }

    #[test]
    fn export_of_import_gives_pi_its_summary_text_back(
        text in arb_text(),
        tags in proptest::sample::select(vec![
            "",
            "\n\n<read-files>\na.ts\n</read-files>",
            "\n\n<modified-files>\nb/c.rs\n</modified-files>",
            "\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb/c.rs\n</modified-files>",
        ]),
        preamble in any::<bool>(),
        details in arb_details(),
        from_hook in proptest::option::of(arb_value()),
        branch in any::<bool>(),
    ) {
        let mut stored = JsStr::new();
        if preamble {
            stored.push_str(BRANCH_PREAMBLE);
        }
        stored.push_js(text.as_str().unwrap());
        stored.push_str(tags);
        if stored.is_empty() {
            stored.push_str("x");
        }
        let mut entry = JsonObject::new();
        let (kind, extra) = if branch {
            ("branch_summary", ("fromId", Json::from("a")))
        } else {
            ("compaction", ("tokensBefore", Json::Number(5.0)))
        };
        entry.insert(js("type"), Json::from(kind));
        entry.insert(js(extra.0), extra.1);
        entry.insert(js("summary"), Json::String(stored.clone()));
        if let Some(d) = details {
            entry.insert(js("details"), d);
        }
        if let Some(h) = from_hook {
            entry.insert(js("fromHook"), h);
        }
        let mut body = JsStr::new();
        stringify(&Json::Object(entry), &mut body);
        let body = body.to_string_lossy();
        let text = summary_file(&body[1..body.len() - 1]);
        let first = import_session(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let out = export(&first.messages, None);
        prop_assert_eq!(stored_summary(&out), Json::String(stored));
    }

    #[test]
    fn import_never_panics_on_text(text in "(?s).{0,200}") {
        let _ = import_session(&text);
    }

    #[test]
    fn import_never_panics_on_session_like_files(text in arb_file()) {
        // And whatever imports, exports and imports back the same.
        if let Ok(first) = import_session(&text) {
            let again = export(&first.messages, None);
            let second = import_session(&again).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(second.messages, first.messages);
        }
    }
}

#[test]
fn a_clearing_marker_is_a_custom_entry_and_comes_back() {
    let messages = vec![
        json(r#"{"role":"user","content":"hi","timestamp":1700000000000}"#),
        json(
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":1700000000001}"#,
        ),
        json(
            r#"{"role":"toolOutputCleared","toolCallIds":["c1"],"outputTokens":[12400],"tokensFreed":12386,"timestamp":1700000000002}"#,
        ),
        json(r#"{"role":"user","content":"next","timestamp":1700000000003}"#),
    ];
    let text = export(&messages, None);
    let line = text.lines().nth(3).unwrap();
    assert_eq!(
        line,
        r#"{"type":"custom","customType":"agent-compaction.toolOutputCleared","data":{"role":"toolOutputCleared","toolCallIds":["c1"],"outputTokens":[12400],"tokensFreed":12386,"timestamp":1700000000002},"id":"00000003","parentId":"00000002","timestamp":"2023-11-14T22:13:20.002Z"}"#
    );
    assert_eq!(import(&text).messages, messages);
    // Another custom entry (an extension's) is still left out.
    let other = line.replace("agent-compaction.toolOutputCleared", "someone.else");
    let lines: Vec<&str> = text.lines().collect();
    let edited = [lines[0], lines[1], lines[2], &other, lines[4]].join("\n");
    assert_eq!(import(&edited).messages.len(), 3);
    // A marker whose timestamp is no ISO date stays a message entry.
    let mut odd = messages.clone();
    odd[2] =
        json(r#"{"role":"toolOutputCleared","toolCallIds":[],"tokensFreed":0,"timestamp":1.5}"#);
    let text = export(&odd, None);
    assert!(text
        .lines()
        .nth(3)
        .unwrap()
        .starts_with(r#"{"type":"message""#));
    assert_eq!(import(&text).messages, odd);
}
