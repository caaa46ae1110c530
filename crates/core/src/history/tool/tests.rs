use super::*;
use crate::history::excerpt::Excerpt;
use crate::js::json::{parse, Json};
use crate::js::options::tests::{Fields, Js};

fn read(tool: Tool, fields: Vec<(&'static str, Js)>) -> Result<Call, String> {
    let o = Fields::new(fields);
    let get = |k| o.get(k);
    let r = Reader {
        root: "arguments",
        get: &get,
    };
    call(tool, &Js::Obj, &r).map_err(|e| e.to_string())
}

#[test]
fn the_definitions_are_json_schemas_of_objects_with_required_fields() {
    for (d, required) in DEFINITIONS.iter().zip(["query", "ref"]) {
        let Ok(Json::Object(schema)) = parse(d.parameters) else {
            panic!("{} parameters are not a JSON object", d.name);
        };
        assert_eq!(
            schema
                .get("type")
                .and_then(Json::as_str)
                .map(|s| s.to_string_lossy()),
            Some("object".into())
        );
        let req = schema.get("required").and_then(Json::as_array).unwrap();
        assert_eq!(req.len(), 1);
        assert_eq!(
            req[0].as_str().map(|s| s.to_string_lossy()),
            Some(required.into())
        );
        assert!(!d.description.is_empty());
        assert!(Tool::named(d.name).is_some());
    }
    assert_eq!(Tool::named("search_history"), Some(Tool::Search));
    assert_eq!(Tool::named("read_history"), Some(Tool::Read));
    assert_eq!(Tool::named("history"), None);
}

#[test]
fn arguments_are_read_with_defaults_and_clear_errors() {
    assert_eq!(
        read(Tool::Search, vec![("query", Js::Str("vendor rule"))]),
        Ok(Call::Search {
            query: "vendor rule".into(),
            limit: DEFAULT_RESULTS
        })
    );
    assert_eq!(
        read(
            Tool::Search,
            vec![("query", Js::Str("x")), ("limit", Js::Num(20.0))]
        ),
        Ok(Call::Search {
            query: "x".into(),
            limit: 20
        })
    );
    assert_eq!(
        read(Tool::Search, vec![("query", Js::Num(3.0))]),
        Err("arguments.query must be a string, got a number".into())
    );
    assert_eq!(
        read(Tool::Search, vec![]),
        Err("arguments.query must be a string, got undefined".into())
    );
    for bad in [0.0, 21.0, 2.5, f64::NAN] {
        assert_eq!(
            read(
                Tool::Search,
                vec![("query", Js::Str("x")), ("limit", Js::Num(bad))]
            )
            .unwrap_err(),
            format!(
                "arguments.limit must be a whole number from 1 to 20, got {}",
                crate::js::number::number_to_string(bad)
            )
        );
    }
    assert_eq!(
        read(
            Tool::Read,
            vec![("ref", Js::Str("h1.0-0000")), ("offset", Js::Num(42.0))]
        ),
        Ok(Call::Read {
            reference: "h1.0-0000".into(),
            offset: Some(42)
        })
    );
    assert_eq!(
        read(
            Tool::Read,
            vec![("ref", Js::Str("h1.0-0000")), ("offset", Js::Null)]
        ),
        Ok(Call::Read {
            reference: "h1.0-0000".into(),
            offset: None
        })
    );
    assert!(read(
        Tool::Read,
        vec![("ref", Js::Str("h1.0-0000")), ("offset", Js::Num(-1.0))]
    )
    .unwrap_err()
    .starts_with("arguments.offset must be a whole number from 0 to 4294967295, got -1"));
    // A whole number past the largest offset names the bound it is over.
    assert_eq!(
        read(
            Tool::Read,
            vec![("ref", Js::Str("h1.0-0000")), ("offset", Js::Num(1e12))]
        ),
        Err(
            "arguments.offset must be a whole number from 0 to 4294967295, got 1000000000000"
                .into()
        )
    );
    let o = Fields::new(vec![]);
    let get = |k| o.get(k);
    let r = Reader {
        root: "arguments",
        get: &get,
    };
    assert_eq!(
        call(Tool::Search, &Js::Null, &r).unwrap_err().to_string(),
        "arguments must be an object, got null"
    );
}

fn hit(key: u32, text: &str) -> Hit {
    Hit {
        key,
        passage: 0,
        score: 1.0,
        excerpt: Excerpt {
            start: 0,
            len: text.len(),
            cut_before: false,
            cut_after: true,
        },
        reference: Reference {
            key,
            passage: 0,
            fingerprint: 7,
        },
    }
}

#[test]
fn a_search_answer_is_marked_as_quoted_history_and_names_each_ref() {
    let a = "Constraint K1: never modify files under vendor/";
    let b = "error E7: tsc failed";
    let found = [(hit(3, a), Role::User, a), (hit(9, b), Role::ToolResult, b)];
    let answer = search_answer("vendor", &found, 120);
    assert_eq!(
        answer,
        format!(
            "{QUOTED}\n2 results for \"vendor\" (120 messages searched):\n\n\
             1. ref h3.0-0007 (user message)\n{a}…\n\n\
             2. ref h9.0-0007 (tool result)\n{b}…"
        )
    );
    let one = search_answer("vendor", &found[..1], 1);
    assert!(
        one.contains("\n1 result for \"vendor\" (1 message searched):"),
        "{one}"
    );
    let nothing: &[(Hit, Role, &str)] = &[];
    let none = search_answer("zebra", nothing, 120);
    assert_eq!(
        none,
        format!("{QUOTED}\nNo earlier message matches \"zebra\" (120 searched). Try other words: a name, a path, an error code.")
    );
    assert!(search_answer("zebra", nothing, 0)
        .contains("Nothing of this conversation is outside your context yet"));
    let long = "q".repeat(300);
    assert!(search_answer(&long, nothing, 5).contains(&format!("\"{}…\"", "q".repeat(200))));
}

#[test]
fn a_read_answer_gives_the_page_and_how_to_go_on() {
    let text = "line one\nline two";
    let r = Reference {
        key: 4,
        passage: 0,
        fingerprint: 0,
    };
    let first = Page {
        start: 0,
        len: 9,
        next: Some(9),
    };
    assert_eq!(
        read_answer(&r, Role::BashExecution, text, &first),
        format!("{QUOTED}\nref h4.0-0000 (command and its output):\nline one\n\n[The message goes on: read_history with ref h4.0-0000 and offset 9.]")
    );
    let last = Page {
        start: 9,
        len: 8,
        next: None,
    };
    assert_eq!(
        read_answer(&r, Role::Assistant, text, &last),
        format!("{QUOTED}\nref h4.0-0000 (assistant message):\nline two")
    );
}

#[test]
fn a_read_answer_names_the_next_offset_in_utf16_units() {
    use crate::history::reference::{fingerprint, read as page, DEFAULT_PAGE_CHARS};
    // "x" and 4,000 emoji (8,001 units): a page of 4,000 units ends after
    // 1,999 emoji, as the next would be cut, so the next page starts at
    // unit 3,999 (not at the 2,000th character, nor at a byte).
    let text = format!("x{}", "😀".repeat(4000));
    let r = Reference {
        key: 7,
        passage: 0,
        fingerprint: fingerprint(&text),
    };
    let first = page(&text, &r, Some(0), DEFAULT_PAGE_CHARS).unwrap();
    let answer = read_answer(&r, Role::User, &text, &first);
    let body = &text[..first.len];
    assert_eq!(body.encode_utf16().count(), 3_999);
    assert!(answer.ends_with(&format!(
        "{body}\n[The message goes on: read_history with ref {r} and offset 3999.]"
    )));
    let last = page(&text, &r, Some(3_999), DEFAULT_PAGE_CHARS).unwrap();
    assert_eq!(last.next, Some(7_999));
    let end = page(&text, &r, Some(7_999), DEFAULT_PAGE_CHARS).unwrap();
    assert_eq!(end.next, None);
    assert_eq!(&text[end.start..end.start + end.len], "😀");
}
