//! Native tests of the tokenizer.

use super::*;

fn texts(text: &str) -> Vec<String> {
    terms(text).into_iter().map(|t| t.text).collect()
}

fn of_kind(text: &str, kind: Kind) -> Vec<String> {
    terms(text)
        .into_iter()
        .filter(|t| t.kind == kind)
        .map(|t| t.text)
        .collect()
}

#[test]
fn words_are_lowercased_with_their_byte_ranges() {
    let t = terms("Fix the BUG, now!");
    let got: Vec<(&str, usize, usize, Kind)> = t
        .iter()
        .map(|t| (t.text.as_str(), t.start, t.end, t.kind))
        .collect();
    assert_eq!(
        got,
        [
            ("fix", 0, 3, Kind::Word),
            ("th", 4, 7, Kind::Word),
            ("bug", 8, 11, Kind::Word),
            ("now", 13, 16, Kind::Word),
        ]
    );
}

#[test]
fn identifiers_give_their_camel_and_snake_parts() {
    assert_eq!(
        texts("parseConfigFile"),
        ["parseconfigfile", "pars", "config", "fil"]
    );
    assert_eq!(
        of_kind("ERR_MODULE_NOT_FOUND", Kind::Part),
        ["err", "modul", "not", "found"]
    );
    assert_eq!(
        of_kind("ERR_MODULE_NOT_FOUND", Kind::Word),
        ["err_module_not_found"]
    );
    assert_eq!(
        of_kind("HTTPServer utf8Decoder", Kind::Part),
        ["http", "server", "utf8", "decoder"]
    );
    assert_eq!(of_kind("_private", Kind::Part), ["privat"]);
    // A plural of capitals is not an identifier; a capitalized word neither.
    assert_eq!(texts("APIs Tests"), ["apis", "test"]);
    // The part ranges point at the parts.
    let t = terms("getX_y");
    let ranges: Vec<(usize, usize)> = t.iter().map(|t| (t.start, t.end)).collect();
    assert_eq!(ranges, [(0, 6), (0, 3), (3, 4), (5, 6)]);
}

#[test]
fn paths_versions_and_qualified_names_are_whole_terms_too() {
    assert_eq!(
        texts("see src/lib/foo.ts."),
        ["see", "src", "lib", "foo", "ts", "src/lib/foo.ts"]
    );
    assert_eq!(of_kind("v1.2.3, E0502", Kind::Joined), ["v1.2.3"]);
    assert_eq!(
        of_kind("v1.2.3, E0502", Kind::Word),
        ["v1", "2", "3", "e0502"]
    );
    assert_eq!(
        of_kind("std::fs::read and /usr/bin/env", Kind::Joined),
        ["std::fs::read", "usr/bin/env"]
    );
    assert_eq!(
        of_kind("@mariozechner/pi-agent-core", Kind::Joined),
        ["mariozechner/pi-agent-core"]
    );
    // Joiners at the ends, or between spaces, join nothing.
    assert!(of_kind("- item. end: / next", Kind::Joined).is_empty());
    // A joined term keeps its words as written: no folding.
    assert_eq!(
        of_kind("tests/decided.rs", Kind::Joined),
        ["tests/decided.rs"]
    );
}

#[test]
fn numbers_are_words() {
    assert_eq!(
        texts("took 1500 ms, 3.14"),
        ["took", "1500", "ms", "3", "14", "3.14"]
    );
}

#[test]
fn cjk_text_gives_overlapping_pairs_and_lone_characters() {
    assert_eq!(texts("東京都"), ["東京", "京都"]);
    assert_eq!(texts("猫"), ["猫"]);
    assert_eq!(
        texts("Rustの設定ファイル"),
        ["rust", "の設", "設定", "定フ", "ファ", "ァイ", "イル"]
    );
    assert_eq!(texts("한국어 문서"), ["한국", "국어", "문서"]);
    // Byte ranges cover the pair.
    let t = terms("a 東京");
    assert_eq!((t[1].start, t[1].end), (2, 8));
    // CJK punctuation separates.
    assert_eq!(texts("東。京"), ["東", "京"]);
}

#[test]
fn letters_of_other_scripts_belong_to_words() {
    assert_eq!(texts("ÉCOLE Straße café"), ["école", "straße", "café"]);
    assert_eq!(texts("Привет мир"), ["привет", "мир"]);
    assert_eq!(texts("ΟΔΟΣ"), ["οδος"]);
    // Symbols, typographic punctuation and emoji separate.
    assert_eq!(texts("a→b «c» d—e 🎉f"), ["a", "b", "c", "d", "e", "f"]);
    assert_eq!(texts("µs ºC"), ["µs", "ºc"]);
}

#[test]
fn long_terms_are_cut_at_a_character_boundary() {
    let long = "x".repeat(200);
    assert_eq!(texts(&long), ["x".repeat(MAX_TERM_BYTES)]);
    let wide = "é".repeat(100);
    let t = texts(&wide);
    assert_eq!(t[0].chars().count(), MAX_TERM_BYTES / 2);
    let odd = format!("a{}", "é".repeat(100));
    assert_eq!(texts(&odd)[0].len(), MAX_TERM_BYTES - 1);
}

#[test]
fn a_text_gives_at_most_max_terms() {
    let text = "word ".repeat(MAX_TERMS * 2);
    assert_eq!(terms(&text).len(), MAX_TERMS);
}

#[test]
fn empty_and_punctuation_only_texts_have_no_terms() {
    assert!(terms("").is_empty());
    assert!(terms("  ... --- !!! \n").is_empty());
}

#[test]
fn english_forms_meet() {
    for group in [
        &["decide", "decided", "decides", "decision", "decisions"][..],
        &["test", "tests", "tested", "testing"],
        &["create", "created", "creating", "creation"],
        &["match", "matches", "matched", "matching"],
        &["copy", "copies", "copied", "copying"],
        &["stop", "stopped", "stopping", "stops"],
        &["commit", "commits", "committed"],
        &["need", "needs", "needed"],
        &["express", "expression"],
        &["extend", "extension"],
        &["call", "called", "calls"],
    ] {
        let stems: Vec<String> = group.iter().map(|w| fold(w)).collect();
        assert!(stems.iter().all(|s| *s == stems[0]), "{group:?}: {stems:?}");
    }
    // Left alone: short words, -ss, -us, -is.
    for word in ["is", "a", "process", "status", "this", "add", "see", "free"] {
        assert_eq!(fold(word), word);
    }
}

#[test]
fn folding_skips_identifiers_with_digits_and_non_ascii_words() {
    assert_eq!(
        texts("tests2 testing_utils cafés"),
        ["tests2", "testing_utils", "test", "util", "cafés"]
    );
}

proptest::proptest! {
    #[test]
    fn any_text_gives_terms_on_character_boundaries(text in "(?s).{0,300}", cjk in "[a-z東京都/. ]{0,60}") {
        for text in [text.as_str(), cjk.as_str()] {
            for t in terms(text) {
                proptest::prop_assert!(t.start < t.end && t.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
                proptest::prop_assert!(!t.text.is_empty() && t.text.len() <= MAX_TERM_BYTES);
            }
        }
    }
}

#[test]
fn a_query_word_has_the_other_form_its_case_would_give() {
    let other = |text: &str| {
        let terms = terms(text);
        other_form(text, &terms[0])
    };
    // A plain word is folded; the identifier written so is not.
    assert_eq!(other("getfiles").as_deref(), Some("getfiles"));
    assert_eq!(texts("getfiles"), ["getfil"]);
    assert_eq!(other("GETFILES").as_deref(), Some("getfiles"));
    assert_eq!(other("getFiles").as_deref(), Some("getfil"));
    // None when both are the same, or the word is not plain letters.
    assert_eq!(other("parser"), None);
    assert_eq!(other("tests2"), None);
    assert_eq!(other("cafés"), None);
    assert_eq!(other("err_module"), None);
    assert_eq!(other("src/lib"), None);
}
