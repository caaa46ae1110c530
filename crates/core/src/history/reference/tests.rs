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

/// JavaScript's `.length` of `text`.
fn units(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The text of every page from offset 0 on, following `next`: each at most
/// `max_chars` UTF-16 units (or one character), starting where the offset
/// says in units.
fn pages(text: &str, r: &Reference, max_chars: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = read(text, r, Some(at), max_chars).unwrap();
        assert_eq!(units(&text[..page.start]), at);
        let body = &text[page.start..page.start + page.len];
        assert!(
            units(body) <= max_chars || body.chars().count() == 1,
            "{max_chars}: {body:?}"
        );
        assert!(!body.is_empty() || page.next.is_none());
        out.push(body.to_string());
        if let Some(next) = page.next {
            assert_eq!(next, at + units(body));
        }
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
fn pages_are_counted_in_utf16_units_and_never_cut_a_pair() {
    // Emoji are two units each, CJK and accented letters one, as
    // JavaScript's `.length` counts them.
    let emoji = "emoji 😀".repeat(3000);
    let r = reference(&emoji, 0);
    let page = read(&emoji, &r, Some(0), MAX_PAGE_CHARS).unwrap();
    let body = &emoji[..page.len];
    assert!(units(body) <= MAX_PAGE_CHARS && units(body) >= MAX_PAGE_CHARS - 1);
    assert_eq!(page.next, Some(units(body)));
    // 16,000 units are 2,000 repeats of 8 units exactly.
    assert_eq!(units(body), MAX_PAGE_CHARS);
    for max in [2, 3, 7, 100, DEFAULT_PAGE_CHARS, MAX_PAGE_CHARS] {
        assert_eq!(pages(&emoji, &r, max).concat(), emoji, "{max}");
    }
    // A page that would end inside a pair ends before it, one unit short.
    // ("emoji 😀": the pair is units 6 and 7.)
    let at = |offset, max| {
        let page = read(&emoji, &r, Some(offset), max).unwrap();
        (&emoji[page.start..page.start + page.len], page.next)
    };
    assert_eq!(at(4, 3), ("i ", Some(6)));
    assert_eq!(at(5, 3), (" 😀", Some(8)));
    assert_eq!(at(5, 4), (" 😀e", Some(9)));
    assert_eq!(at(6, 1), ("😀", Some(8)));

    let cjk = "東京都の天気は晴れ。".repeat(2000);
    let r = reference(&cjk, 0);
    let page = read(&cjk, &r, Some(0), MAX_PAGE_CHARS).unwrap();
    assert_eq!(units(&cjk[..page.len]), MAX_PAGE_CHARS);
    assert_eq!(page.next, Some(MAX_PAGE_CHARS));
    assert_eq!(pages(&cjk, &r, 999).concat(), cjk);

    let mixed = "a😀東\n🎉é𝒳b".repeat(50);
    let r = reference(&mixed, 0);
    for max in [1, 2, 3, 4, 5, 11] {
        assert_eq!(pages(&mixed, &r, max).concat(), mixed, "{max}");
    }
}

#[test]
fn an_offset_inside_a_pair_reads_from_its_start() {
    let text = "a😀b🎉";
    let r = reference(text, 0);
    // "a" is unit 0, 😀 units 1 and 2, "b" 3, 🎉 4 and 5.
    let at = |offset, max| {
        let page = read(text, &r, Some(offset), max).unwrap();
        (&text[page.start..page.start + page.len], page.next)
    };
    assert_eq!(at(1, 2), ("😀", Some(3)));
    assert_eq!(at(2, 2), ("😀", Some(3)));
    assert_eq!(at(2, 3), ("😀b", Some(4)));
    assert_eq!(at(3, 1), ("b", Some(4)));
    assert_eq!(at(5, 16), ("🎉", None));
    assert_eq!(at(6, 16), ("", None));
    // One character at least, so that reading on moves.
    assert_eq!(at(1, 1), ("😀", Some(3)));
    assert_eq!(
        read(text, &r, Some(7), 1),
        Err(HistoryError::BadOffset {
            key: 12,
            offset: 7,
            len: 6
        })
    );
}

#[test]
fn lone_surrogates_count_as_the_one_unit_they_are() {
    // The boundary's text has U+FFFD for a lone surrogate: one unit for
    // one, so offsets stay those of the JavaScript string.
    // (A Rust string cannot hold one: the units are written out.)
    let js: [u16; 7] = [
        u16::from(b'x'),
        0xD800,
        u16::from(b'y'),
        0xD83D,
        0xDE00,
        0xDC00,
        u16::from(b'z'),
    ];
    let text = String::from_utf16_lossy(&js);
    assert_eq!(units(&text), js.len());
    let r = reference(&text, 0);
    let page = read(&text, &r, Some(2), 3).unwrap();
    assert_eq!(&text[page.start..page.start + page.len], "y😀");
    assert_eq!(page.next, Some(5));
    let page = read(&text, &r, Some(5), 3).unwrap();
    assert_eq!(&text[page.start..page.start + page.len], "\u{FFFD}z");
    assert_eq!(page.next, None);
    assert_eq!(pages(&text, &r, 1).concat(), text);
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
    // After text of two units a character, the passage's offset is in units.
    let text = format!("{}\n{}", "😀 ".repeat(400), "b ".repeat(600));
    let ranges = passages(&text);
    let page = read(&text, &reference(&text, ranges.len() as u32 - 1), None, 10).unwrap();
    assert_eq!(page.start, ranges[ranges.len() - 1].0);
    let before = units(&text[..page.start]);
    assert_eq!(page.next, Some(before + 10));
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
    // An offset in units: 2 is a place ("llo…"), 11 the end, 12 past it.
    assert_eq!(read(text, &r, Some(2), 3).map(|p| p.next), Ok(Some(5)));
    assert_eq!(read(text, &r, Some(11), 3).map(|p| p.next), Ok(None));
    for offset in [12, 99] {
        assert_eq!(
            read(text, &r, Some(offset), 10),
            Err(HistoryError::BadOffset {
                key: 12,
                offset,
                len: 11
            })
        );
    }
    assert_eq!(
        HistoryError::BadOffset {
            key: 3,
            offset: 12,
            len: 11
        }
        .to_string(),
        "offset 12 is past the end of message 3, whose text is 11 characters long: \
         pass the offset a page gave as next"
    );
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
