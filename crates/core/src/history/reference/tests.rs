//! Native tests of references and paged reads.

use super::*;

fn reference(text: &str, passage: u32) -> Reference {
    Reference {
        key: 12,
        passage,
        fingerprint: fingerprint(text),
    }
}

#[test]
fn references_print_short_and_parse_back() {
    let r = Reference {
        key: 12,
        passage: 3,
        fingerprint: 0,
    };
    assert_eq!(r.to_string(), "h12.3-0000");
    let r = Reference {
        key: u32::MAX,
        passage: 0,
        fingerprint: FINGERPRINTS - 1,
    };
    assert_eq!(r.to_string(), "h4294967295.0-zzzz");
    for text in ["", "hello", "a longer message\nwith lines"] {
        let r = reference(text, 1);
        assert!(r.fingerprint < FINGERPRINTS);
        let printed = r.to_string();
        assert!(printed.is_ascii() && printed.len() <= 22, "{printed}");
        assert_eq!(Reference::parse(&printed), Ok(r));
        for copied in [
            format!("  {} ", printed.to_uppercase()),
            format!("`{printed}`"),
            format!("[{printed}]"),
            format!("\"{printed}\"\n"),
        ] {
            assert_eq!(Reference::parse(&copied), Ok(r), "{copied}");
        }
    }
}

#[test]
fn bad_references_are_refused_with_the_reason() {
    for (text, why) in [
        ("", "it does not start with h"),
        ("x12.3-0000", "it does not start with h"),
        ("h12.3", "it lacks the - before its fingerprint"),
        ("h12-0000", "it lacks the . between message and passage"),
        ("h.3-0000", "a message or passage number is not digits"),
        ("h1a.3-0000", "a message or passage number is not digits"),
        ("h+1.3-0000", "a message or passage number is not digits"),
        ("h1.-0000", "a message or passage number is not digits"),
        ("h4294967296.0-0000", "a number is too large"),
        ("h1.2-000", "its fingerprint is not 4 characters"),
        ("h1.2-00000", "its fingerprint is not 4 characters"),
        ("h1.2-00_0", "its fingerprint is not letters and digits"),
        ("h1.2-00é", "its fingerprint is not letters and digits"),
    ] {
        match Reference::parse(text) {
            Err(HistoryError::BadReference {
                reference,
                why: got,
            }) => {
                assert_eq!(got, why, "{text}");
                assert_eq!(reference, text);
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    // A long input is quoted in part.
    let long = "y".repeat(500);
    let Err(HistoryError::BadReference { reference, .. }) = Reference::parse(&long) else {
        panic!()
    };
    assert_eq!(reference.len(), 40);
}

/// The text of every page from `offset` on, following `next`.
fn pages(text: &str, r: &Reference, max_chars: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = read(text, r, Some(at), max_chars).unwrap();
        assert_eq!(page.start, at);
        let body = &text[page.start..page.start + page.len];
        assert!(body.chars().count() <= max_chars);
        out.push(body.to_string());
        offset = page.next;
    }
    out
}

#[test]
fn paging_covers_the_text_exactly_once() {
    let mut text = String::new();
    for i in 0..150 {
        text.push_str(&format!("line {i}: 東京 café {}\n", "x".repeat(i % 37)));
    }
    text.push_str(&"é".repeat(3000));
    let r = reference(&text, 0);
    for max in [7, 100, DEFAULT_PAGE_CHARS, MAX_PAGE_CHARS] {
        let got = pages(&text, &r, max);
        assert_eq!(got.concat(), text, "{max}");
        assert!(got.iter().all(|p| !p.is_empty()));
    }
    let short = "ab\nç東🎉";
    let by_char = pages(short, &reference(short, 0), 1);
    assert_eq!(by_char, ["a", "b", "\n", "ç", "東", "🎉"]);
    // A page ends at a line end in its second half.
    let page = read(&text, &r, None, 100).unwrap();
    assert!(text[..page.start + page.len].ends_with('\n'));
    assert!(text[page.start..page.start + page.len].chars().count() >= 50);
}

#[test]
fn a_read_starts_at_its_passage() {
    let text = format!("{}\n{}", "a ".repeat(600), "b ".repeat(600));
    let ranges = passages(&text);
    assert_eq!(ranges.len(), 3);
    let page = read(&text, &reference(&text, 1), None, 10).unwrap();
    assert_eq!(page.start, ranges[1].0);
    assert_eq!(page.next, Some(page.start + page.len));
    let last = read(&text, &reference(&text, 2), Some(text.len()), 10).unwrap();
    assert_eq!((last.len, last.next), (0, None));
}

#[test]
fn bad_reads_are_refused() {
    let text = "héllo\nworld";
    let r = reference(text, 0);
    assert_eq!(
        read("hello\nworld", &r, None, 10),
        Err(HistoryError::Changed { key: 12 })
    );
    assert_eq!(
        read(text, &reference(text, 1), None, 10),
        Err(HistoryError::UnknownPassage {
            key: 12,
            passage: 1,
            count: 1
        })
    );
    for offset in [2, 99] {
        assert_eq!(
            read(text, &r, Some(offset), 10),
            Err(HistoryError::BadOffset {
                key: 12,
                offset,
                len: text.len()
            })
        );
    }
    for size in [0, MAX_PAGE_CHARS + 1] {
        assert_eq!(
            read(text, &r, None, size),
            Err(HistoryError::PageSize {
                got: size,
                max: MAX_PAGE_CHARS
            })
        );
    }
}
