//! Tests of the calibrated estimate's classifier: each kind of text, the
//! boundaries between runs, emoji grapheme clusters, lone surrogates.

use super::*;

/// What the boundary hands the classifier for JavaScript's UTF-16 `units`:
/// `TextEncoder`'s UTF-8, a lone surrogate made U+FFFD.
fn encoded(units: &[u16]) -> Vec<u8> {
    String::from_utf16_lossy(units).into_bytes()
}

fn features(s: &str) -> Features {
    classify(s.as_bytes())
}

/// Prints the features of a corpus dump (rows of u32 class, o200k, cl100k,
/// length, then the UTF-16 units, little-endian) written by
/// scripts/fit-estimator.mjs, for refitting [`WEIGHTS`].
#[test]
#[ignore = "a tool: ESTIMATOR_CORPUS=path cargo test -p agent-compaction-core print_corpus_features -- --ignored --nocapture"]
fn print_corpus_features() {
    let Ok(path) = std::env::var("ESTIMATOR_CORPUS") else {
        return;
    };
    let bytes = std::fs::read(path).expect("the corpus dump");
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let mut i = 0;
    while i < bytes.len() {
        let (class, o200k, cl100k, len) = (u32_at(i), u32_at(i + 4), u32_at(i + 8), u32_at(i + 12));
        i += 16;
        let text: Vec<u16> = (0..len as usize)
            .map(|k| u16::from_le_bytes([bytes[i + 2 * k], bytes[i + 2 * k + 1]]))
            .collect();
        i += 2 * len as usize;
        let row = classify(&encoded(&text))
            .to_row()
            .map(|n| n.to_string())
            .join(",");
        println!("ROW,{class},{o200k},{cl100k},{len},{row}");
    }
}

#[test]
fn latin_words_split_at_camel_case_humps() {
    let f = features("hello world");
    assert_eq!((f.word_pieces, f.word_letters), (2, 10));
    // A single space joins the next word: no whitespace run counted.
    assert_eq!((f.space_runs, f.newline_runs), (0, 0));
    let f = features("getElementById");
    assert_eq!((f.word_pieces, f.word_letters), (4, 14));
    // Accented Latin letters are letters; an all-caps word is one piece.
    assert_eq!(features("café HTML").word_pieces, 2);
    assert_eq!(features("cafe\u{301}").word_pieces, 1);
}

#[test]
fn long_runs_cost_per_unit_beyond_their_start() {
    let f = features(&"x".repeat(40));
    assert_eq!((f.word_pieces, f.long_run_units), (1, 24));
    let f = features(&"=".repeat(16));
    assert_eq!((f.punct_runs, f.long_run_units), (1, 0));
    let f = features(&format!("a{}b", " ".repeat(20)));
    assert_eq!((f.space_runs, f.long_run_units), (1, 4));
    // Digits already count per group of three.
    assert_eq!(features(&"7".repeat(30)).long_run_units, 0);
}

#[test]
fn digits_count_in_groups_of_three() {
    assert_eq!(features("1").digit_groups, 1);
    assert_eq!(features("123").digit_groups, 1);
    assert_eq!(features("1234").digit_groups, 2);
    assert_eq!(features("1234567").digit_groups, 3);
    let f = features("3.14");
    assert_eq!((f.digit_groups, f.punct_runs, f.punct_chars), (2, 1, 1));
}

#[test]
fn punctuation_runs_and_whitespace() {
    let f = features("a(); => b");
    assert_eq!((f.punct_runs, f.punct_chars), (2, 5));
    let f = features("a    b\tc");
    assert_eq!(f.space_runs, 1);
    // A line break takes the indentation after it into one run.
    let f = features("a\n    b\n\n\nc\r\nd");
    assert_eq!((f.newline_runs, f.space_runs), (3, 0));
}

#[test]
fn cjk_counts_by_character() {
    let f = features("我们的系统。");
    assert_eq!((f.han, f.cjk_punct), (5, 1));
    let f = features("ファイルを確認します、");
    assert_eq!((f.kana, f.han, f.cjk_punct), (8, 2, 1));
    assert_eq!(features("안녕하세요").hangul, 5);
    assert_eq!(features("全角，？").cjk_punct, 2);
    // An ideograph outside the BMP (a surrogate pair) is one.
    assert_eq!(features("\u{20B9F}").han, 1);
}

#[test]
fn other_scripts_count_runs_and_letters() {
    let f = features("Привет мир");
    assert_eq!((f.other_runs, f.other_chars), (2, 9));
    // Switching script mid-word starts a new run.
    let f = features("abcЖ");
    assert_eq!((f.word_pieces, f.other_runs), (1, 1));
}

#[test]
fn emoji_count_by_grapheme_cluster() {
    let one = |s: &str| {
        let f = features(s);
        assert_eq!(f.emoji_clusters, 1, "{s:?}: {f:?}");
        f
    };
    assert_eq!(one("😀").emoji_code_points, 1);
    // ZWJ sequences: family, astronaut, rainbow flag (with VS16).
    assert_eq!(one("👨‍👩‍👧‍👦").emoji_code_points, 7);
    assert_eq!(one("🧑‍🚀").emoji_code_points, 3);
    assert_eq!(one("🏳️‍🌈").emoji_code_points, 4);
    // Skin tone, keycap, a flag, a subdivision flag (tags).
    assert_eq!(one("👍🏽").emoji_code_points, 2);
    assert_eq!(one("1️⃣").emoji_code_points, 3);
    assert_eq!(one("🇫🇷").emoji_code_points, 2);
    assert_eq!(
        one("\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}").emoji_code_points,
        7
    );
    // BMP pictographs with a variation selector.
    assert_eq!(one("⚠️").emoji_code_points, 2);
    // Two flags are two clusters; three regional indicators, two.
    assert_eq!(features("🇫🇷🇯🇵").emoji_clusters, 2);
    assert_eq!(features("🇫🇷🇯").emoji_clusters, 2);
    // Emoji between words end the runs around them.
    let f = features("ship 🚀 it");
    assert_eq!((f.word_pieces, f.emoji_clusters), (2, 1));
    // A digit without the keycap mark stays a digit.
    assert_eq!(features("1\u{FE0F}").emoji_clusters, 0);
}

#[test]
fn base64_and_hex_runs() {
    let b64 = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk=";
    let f = features(b64);
    assert_eq!(f.base64_chars, b64.len() as u64);
    assert_eq!(f.word_pieces, 0);
    let id = "call_8fK2pQz7XmA91bLwT3sYc0Rd";
    assert_eq!(features(id).base64_chars, id.len() as u64);
    let hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b";
    assert_eq!(features(hash).hex_chars, 40);
    let uuid = "77c84e67-7c32-82ef-8a1d-49f4f2e3f60a";
    assert_eq!(features(uuid).hex_chars, 36);
    // Words, camelCase identifiers, paths and plain numbers are not blobs.
    for s in [
        "internationalization",
        "getElementByIdAndRemoveIt",
        "src/components/ButtonGroup",
        "12345678901234567890",
        "deadbeefcafe",
        "a1b2c3",
    ] {
        let f = features(s);
        assert_eq!((f.base64_chars, f.hex_chars), (0, 0), "{s}");
    }
    // A blob's boundaries: the text around it is counted as usual.
    let f = features("sha: 9f86d081884c7d65, ok");
    assert_eq!((f.hex_chars, f.word_pieces), (16, 2));
}

#[test]
fn lone_surrogates_and_odd_units_never_panic() {
    for u in [
        vec![0xD800],
        vec![0xDC00],
        vec![0xDC00, 0xD800],
        vec![0x61, 0xD83D],
        vec![0xD83D, 0x200D],
        vec![0x200D, 0xFE0F, 0x20E3],
        vec![0x31, 0xFE0F],
        vec![0xD83C, 0xDDE6, 0xD83C],
        vec![],
    ] {
        let f = classify(&encoded(&u));
        assert!(f.tokens(&WEIGHTS) <= MAX_TOKENS_PER_UNIT * u.len() as f64);
    }
    assert_eq!(classify(&encoded(&[0xD800])).symbols, 1);
    assert_eq!(classify(&encoded(&[0x61, 0xDFFF, 0x62])).word_pieces, 2);
    assert_eq!(estimate_texts([&[][..]]), 0);
}

#[test]
fn malformed_utf8_counts_as_symbols_never_a_panic() {
    for bytes in [
        &[0xFF][..],
        &[0xC3],
        &[0xE2, 0x82],
        &[0xF0, 0x9F, 0x98],
        &[0x80, 0x80, 0x61],
        &[0xEF, 0xB8],
        &[0x31, 0xEF, 0xB8, 0x8F],
    ] {
        let f = classify(bytes);
        assert!(f.tokens(&WEIGHTS) <= MAX_TOKENS_PER_UNIT * bytes.len() as f64);
    }
    assert_eq!(classify(&[0xFF]).symbols, 1);
    assert_eq!(classify(&[0x61, 0xC3, 0x62]).word_pieces, 2);
}

/// Each character counts once whatever its encoding: the features of a
/// text are the same whether it reaches the classifier as one or in pieces
/// at character boundaries, and the byte lengths of astral characters do
/// not leak into run lengths.
#[test]
fn counts_are_per_character_not_per_byte() {
    let f = features("Привет мир");
    assert_eq!((f.other_runs, f.other_chars), (2, 9));
    let f = features("𝔘𝔫𝔦𝔠𝔬𝔡𝔢𝔘𝔫𝔦𝔠𝔬𝔡𝔢𝔘𝔫𝔦𝔠𝔬𝔡𝔢");
    assert_eq!(f.long_run_units, 21 - LONG_RUN);
    let f = features("élan café");
    assert_eq!((f.word_pieces, f.word_letters), (2, 8));
}

#[test]
fn several_texts_round_up_once() {
    let one = estimate_text(b"hello");
    assert!(one > 1.0 && one < 1.1);
    assert_eq!(estimate_texts([&b"hello"[..], &b"world"[..]]), 3);
}

proptest::proptest! {
    /// The bound a (UTF-16) length gives holds for any text.
    #[test]
    fn the_estimate_never_exceeds_its_length_bound(u in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..64)) {
        proptest::prop_assert!(estimate_text(&encoded(&u)) <= MAX_TOKENS_PER_UNIT * u.len() as f64 + 1e-9);
    }

    #[test]
    fn the_bound_holds_for_emoji_heavy_text(s in "[😀🇫👍🏽\u{200D}\u{FE0F}\u{20E3}1#a ]{0,32}") {
        let n = s.encode_utf16().count();
        proptest::prop_assert!(estimate_text(s.as_bytes()) <= MAX_TOKENS_PER_UNIT * n as f64 + 1e-9);
    }

    /// Any bytes at all: never a panic, and never more than the most a
    /// byte could cost.
    #[test]
    fn any_bytes_are_classified(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
        proptest::prop_assert!(estimate_text(&b) <= MAX_TOKENS_PER_UNIT * b.len() as f64 + 1e-9);
    }

    /// The bound a UTF-8 length gives holds for any text.
    #[test]
    fn the_estimate_never_exceeds_its_byte_bound(u in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..64)) {
        let b = encoded(&u);
        proptest::prop_assert!(estimate_text(&b) <= MAX_TOKENS_PER_BYTE * b.len() as f64);
    }

    /// Texts made of the costliest pieces there are (line breaks, camelCase
    /// humps, lone punctuation, keycaps, emoji, marks after CJK).
    #[test]
    fn the_byte_bound_holds_for_worst_case_text(s in "([\\n\\r]|aA|A|a|[.#]|1\u{20E3}|1\u{FE0F}\u{20E3}|😀|🇫|\u{FE0F}|\u{200D}|中|é|\\x01| |  |[0-9a-f]{8}){0,40}") {
        proptest::prop_assert!(estimate_text(s.as_bytes()) <= MAX_TOKENS_PER_BYTE * s.len() as f64);
    }

    /// Any bytes at all, malformed ones included.
    #[test]
    fn the_byte_bound_holds_for_any_bytes(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
        proptest::prop_assert!(estimate_text(&b) <= MAX_TOKENS_PER_BYTE * b.len() as f64);
    }
}

/// The costliest bytes: a text that is one line break (what sets the
/// bound), and long runs of the other worst cases, stay under it.
#[test]
fn the_byte_bound_is_met_by_the_worst_texts() {
    let worst = estimate_text(b"\n");
    assert!(worst > 1.11 && worst <= MAX_TOKENS_PER_BYTE);
    for s in [
        "\na".repeat(500),
        "aA".repeat(500),
        "a.".repeat(500),
        "\n.".repeat(500),
        "1\u{20E3}".repeat(200),
        "😀".repeat(200),
        "\u{1}\n".repeat(300),
    ] {
        assert!(
            estimate_text(s.as_bytes()) <= MAX_TOKENS_PER_BYTE * s.len() as f64,
            "{s:?}"
        );
    }
}
