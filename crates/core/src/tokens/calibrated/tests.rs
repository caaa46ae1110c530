//! Tests of the calibrated estimate's classifier: each kind of text, the
//! boundaries between runs, emoji grapheme clusters, lone surrogates.

use super::*;
use proptest::strategy::Strategy as _;

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
fn letters_of_every_script_and_ascii_digits_make_words() {
    for c in [
        'a', 'Z', 'é', 'ß', 'Ж', 'λ', 'ש', 'ع', 'क', '中', 'か', '한',
    ] {
        assert!(is_letter(c) && is_word_char(c), "{c:?} is a letter");
    }
    for c in ['0', '7'] {
        assert!(!is_letter(c) && is_word_char(c), "{c:?} is a digit");
    }
    for c in [
        ' ', '\n', '-', '_', '.', '\'', '×', '…', '€', '😀', '\u{301}', '\u{200D}', '、',
    ] {
        assert!(!is_word_char(c), "{c:?} is neither");
    }
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

/// Times the classifier against the oracle ([`super::reference`]) on a dump
/// of texts (u32 little-endian length, then the UTF-8 bytes, repeated; e.g.
/// every text of the pi fixtures), alternating the two in one process, and
/// prints ns per byte (the median and the least of the rounds). A
/// measuring tool, not a test: run it in release mode (the package's
/// profile), e.g. `CLASSIFY_TEXTS=texts.bin cargo test --release -p
/// agent-compaction-core time_the_classifier -- --ignored --nocapture`.
#[test]
#[ignore = "a tool: CLASSIFY_TEXTS=path cargo test --release -p agent-compaction-core time_the_classifier -- --ignored --nocapture"]
fn time_the_classifier() {
    let Ok(path) = std::env::var("CLASSIFY_TEXTS") else {
        return;
    };
    let bytes = std::fs::read(path).expect("the texts dump");
    let mut texts = Vec::new();
    let mut i = 0;
    while i + 4 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
        texts.push(&bytes[i + 4..i + 4 + len]);
        i += 4 + len;
    }
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let big: Vec<&[u8]> = texts
        .iter()
        .copied()
        .filter(|t| t.len() >= 20_000)
        .collect();
    let big_total: usize = big.iter().map(|t| t.len()).sum();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let time = |set: &[&[u8]], f: fn(&[u8]) -> Features| {
        let start = std::time::Instant::now();
        let mut sum = 0u64;
        for t in set {
            sum = sum.wrapping_add(std::hint::black_box(f(std::hint::black_box(t))).word_pieces);
        }
        std::hint::black_box(sum);
        start.elapsed().as_nanos() as f64
    };
    for (name, set, n) in [
        ("all texts", &texts, total),
        ("texts >= 20k", &big, big_total),
    ] {
        let (mut new, mut old) = (Vec::new(), Vec::new());
        // CLASSIFY_SIDE=new or oracle times one side only (for counting
        // instructions under valgrind, the other side's count then 0).
        let side = std::env::var("CLASSIFY_SIDE").unwrap_or_default();
        for _ in 0..rounds {
            new.push(if side == "oracle" {
                0.0
            } else {
                time(set, classify) / n as f64
            });
            old.push(if side == "new" {
                0.0
            } else {
                time(set, super::reference::classify) / n as f64
            });
        }
        new.sort_by(f64::total_cmp);
        old.sort_by(f64::total_cmp);
        println!(
            "{name} ({} texts, {n} bytes): ns/byte new {:.3} (least {:.3}), oracle {:.3} (least {:.3}), new/oracle {:.2}",
            set.len(),
            new[rounds / 2],
            new[0],
            old[rounds / 2],
            old[0],
            new[rounds / 2] / old[rounds / 2]
        );
    }
}

/// The fast classifier counts exactly what the character-by-character
/// oracle ([`super::reference`], the classifier as it was) counts: every
/// feature, so every estimate, unchanged.
fn same_as_the_oracle(bytes: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
    let (fast, oracle) = (classify(bytes), super::reference::classify(bytes));
    proptest::prop_assert_eq!(fast, oracle, "{:?}", String::from_utf8_lossy(bytes));
    proptest::prop_assert_eq!(
        fast.tokens(&WEIGHTS).to_bits(),
        oracle.tokens(&WEIGHTS).to_bits()
    );
    Ok(())
}

/// Pieces of every kind of text the classifier tells apart, to be strung
/// together (their boundaries are where runs merge, split, or turn out to
/// be base64 or hex).
fn piece() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        // Words, camelCase and ALL CAPS, accented, long.
        "[a-z]{1,12}",
        "([A-Z][a-z]{0,6}){1,4}",
        "[A-Z]{2,8}",
        "[a-zA-Z]{14,40}",
        "[a-zàéîõüÀÉß]{1,10}",
        // Digits, numbers, punctuation, the blob punctuation.
        "[0-9]{1,12}",
        "-?[0-9]{1,5}\\.[0-9]{1,4}",
        "[!-/:-@\\[-`{-~]{1,6}",
        "[+/=_-]{1,4}",
        "[=#*-]{14,30}",
        // Whitespace and line breaks, indentation, Unicode spaces and breaks.
        "[ \\t]{1,20}",
        "(\\r?\\n[ \\t]{0,8}){1,4}",
        "[\u{A0}\u{2000}-\u{200A}\u{202F}\u{205F}\u{2028}\u{2029}\\x0B\\x0C]{1,3}",
        // Base64, hex, UUIDs, ids, near misses.
        "[A-Za-z0-9+/]{8,64}={0,2}",
        "[0-9a-f]{6,48}",
        "[0-9A-F]{8,40}",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "call_[A-Za-z0-9]{10,30}",
        "[a-f0-9-]{8,20}",
        "[a-z0-9_-]{6,30}",
        // CJK, other scripts, symbols, controls.
        "[一-龥ぁ-んァ-ン가-힣。、，！？（）「」]{1,12}",
        "[Α-ωА-я\u{5D0}-\u{5EA}\u{627}-\u{64A}\u{915}-\u{939}]{1,12}",
        "[×÷€£¥©®™→←↔§¶•…\u{1}-\u{8}\u{E}-\u{1F}\u{7F}]{1,4}",
        // Emoji: ZWJ sequences, skin tones, flags, tags, keycaps, marks.
        "(👨\u{200D}👩\u{200D}👧|🧑\u{200D}🚀|🏳\u{FE0F}\u{200D}🌈|👍🏽|🇫🇷|🇯|⚠\u{FE0F}|😀|©|\u{2122}){1,3}",
        "[0-9#*+/=_-]\u{FE0F}?\u{20E3}",
        "\u{1F3F4}[\u{E0061}-\u{E007A}]{0,5}\u{E007F}?",
        "[\u{300}-\u{36F}\u{FE0F}\u{200D}\u{200B}\u{FEFF}\u{20E3}\u{1F3FB}]{1,3}",
        "\u{20B9F}|\u{1D518}{1,20}|\u{10000}|\u{E01EF}",
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

    /// Texts strung together from pieces of every kind.
    #[test]
    fn counts_as_the_oracle_on_mixed_text(parts in proptest::collection::vec(piece(), 0..24)) {
        same_as_the_oracle(parts.concat().as_bytes())?;
    }

    /// Any UTF-16 (lone surrogates included), as the boundary encodes it.
    #[test]
    fn counts_as_the_oracle_on_any_utf16(u in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..160)) {
        same_as_the_oracle(&encoded(&u))?;
    }

    /// Any bytes, malformed UTF-8 included.
    #[test]
    fn counts_as_the_oracle_on_any_bytes(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..160)) {
        same_as_the_oracle(&b)?;
    }

    /// ASCII-heavy text: every ASCII byte, now and then something else.
    #[test]
    fn counts_as_the_oracle_on_ascii_heavy_text(s in "([\\x00-\\x7F]{1,30}|é|中|😀|\u{20E3}|\u{FE0F}\u{20E3}|\u{200D}|\u{301}){0,20}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// Code: identifiers, calls, numbers, strings, indentation.
    #[test]
    fn counts_as_the_oracle_on_code(s in "((fn|let|const|return|if|pub) |[a-z][a-zA-Z0-9_]{0,20}|[A-Z][A-Za-z]{0,12}|[0-9]{1,6}|\\(|\\)|\\{|\\}|\\[|\\]|;|,|\\.|::|->|=>|==|&&|\"[a-z ]{0,10}\"|//[ a-z]{0,20}|\\n {0,12}| ){0,60}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// JSON as tool-call arguments are: keys, strings with escapes, numbers.
    #[test]
    fn counts_as_the_oracle_on_json(s in "(\\{|\\}|\\[|\\]|,|:|\"[a-z_]{1,10}\":|\"([a-zA-Z0-9 ./_-]|\\\\n|\\\\\"|\\\\u00e9|é|中){0,24}\"|-?[0-9]{1,8}(\\.[0-9]{1,4})?|true|false|null){0,50}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// CJK with Latin, digits and punctuation between.
    #[test]
    fn counts_as_the_oracle_on_cjk(s in "[一-龥ぁ-んァ-ン가-힣ㄱ-ㆎ。、，！？ａ-ｚ　a-z0-9 \\n.,]{0,80}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// Emoji, joiners, selectors, skin tones, flags, tags and keycaps in
    /// any order (broken sequences included).
    #[test]
    fn counts_as_the_oracle_on_emoji(s in "[😀👨👩👧🚀🌈🏳⚠©®™↔🇫🇷🇯🇵\u{200D}\u{FE0F}\u{20E3}\u{1F3FB}-\u{1F3FF}\u{E0067}\u{E007F}0-9#*a+= \\n]{0,48}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// Base64 and hex runs, and near misses, between other text.
    #[test]
    fn counts_as_the_oracle_on_blobs(s in "([A-Za-z0-9+/=_-]{1,70}|[0-9a-fA-F-]{1,48}|[a-z]{1,20}|[A-Z0-9]{1,20}| |\\n|é|\u{20E3}|\\.|:|\"){0,16}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// Runs of line breaks, spaces and tabs of every length and mix.
    #[test]
    fn counts_as_the_oracle_on_line_breaks(s in "([\\n\\r \\t\\x0B\\x0C]{1,24}|[a-z]{1,5}|\u{2028}|\u{2029}|\u{A0}|\u{3000}|\u{2003}|-{1,3}|#){0,30}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// The byte bound's worst-case pieces (`the_byte_bound_holds_for_worst_case_text`).
    #[test]
    fn counts_as_the_oracle_on_worst_case_text(s in "([\\n\\r]|aA|A|a|[.#]|1\u{20E3}|1\u{FE0F}\u{20E3}|😀|🇫|\u{FE0F}|\u{200D}|中|é|\\x01| |  |[0-9a-f]{8}){0,40}") {
        same_as_the_oracle(s.as_bytes())?;
    }

    /// Mixed text cut at any byte (a character cut in two included).
    #[test]
    fn counts_as_the_oracle_on_cut_text(parts in proptest::collection::vec(piece(), 1..12), cut in 0usize..400, from in 0usize..40) {
        let s = parts.concat();
        let b = s.as_bytes();
        let end = cut.min(b.len());
        same_as_the_oracle(&b[from.min(end)..end])?;
    }
}

/// Every text of the pi fixtures (the benchmark's replays' texts: code,
/// tool output, JSON arguments, prose), whole and cut at arbitrary bytes.
#[test]
fn counts_as_the_oracle_on_the_fixtures_texts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut texts = 0;
    for name in ["pi-before-compaction.jsonl", "pi-large-session.jsonl"] {
        let file = std::fs::read_to_string(dir.join(name)).expect("the fixture");
        for line in file.lines().filter(|l| !l.is_empty()) {
            let entry: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let mut strings = Vec::new();
            collect_strings(&entry, &mut strings);
            for s in strings {
                let b = s.as_bytes();
                same_as_the_oracle(b).unwrap();
                for cut in [b.len() / 3, b.len() / 2 + 1, b.len().saturating_sub(2)] {
                    same_as_the_oracle(&b[cut.min(b.len())..]).unwrap();
                    same_as_the_oracle(&b[..cut.min(b.len())]).unwrap();
                }
                texts += 1;
            }
        }
        // Arguments as the boundary hands them: JSON.stringify'd.
    }
    assert!(texts > 3000, "{texts}");
}

/// Every string in `v` (and every object's JSON, as tool-call arguments
/// reach the classifier).
fn collect_strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => {
            out.push(v.to_string());
            o.values().for_each(|x| collect_strings(x, out));
        }
        _ => {}
    }
}

/// Overlong encodings of ASCII characters (malformed UTF-8 that decodes to
/// a letter, digit, punctuation or whitespace) count as those characters,
/// as they always did: a keycap on an overlong digit included.
#[test]
fn overlong_encodings_count_as_the_oracle_counts() {
    for b in [
        &[0xE0, 0x80, 0xA1][..],
        &[0xE0, 0x80, 0xB1, 0xE2, 0x83, 0xA3],
        &[0xE0, 0x80, 0xA3, 0xEF, 0xB8, 0x8F, 0xE2, 0x83, 0xA3],
        &[0xF0, 0x80, 0x80, 0xB1, b'2', b'3'],
        &[b'a', 0xE0, 0x81, 0x81, b'b'],
        &[0xE0, 0x80, 0xA0, 0xE0, 0x80, 0xA0, b'x'],
        &[b'\n', 0xE0, 0x80, 0x8A, b' '],
        &[b'=', 0xE0, 0x80, 0xBD, b'-', b'-'],
    ] {
        same_as_the_oracle(b).unwrap();
    }
    assert_eq!(classify(&[0xE0, 0x80, 0xA1]).punct_runs, 1);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

    /// Malformed UTF-8 of every shape: any lead byte (overlong and
    /// out-of-range ones included) with zero to three continuation bytes,
    /// between ASCII.
    #[test]
    fn counts_as_the_oracle_on_malformed_utf8(parts in proptest::collection::vec(proptest::prop_oneof![
        (0u8..0x80).prop_map(|b| vec![b]),
        (0xC0u8..=0xFF, proptest::collection::vec(0x80u8..0xC0, 0..4)).prop_map(|(lead, rest)| [vec![lead], rest].concat()),
    ], 0..40)) {
        same_as_the_oracle(&parts.concat())?;
    }
}

/// Runs of blob bytes are tested for base64 and hex eight bytes at a time
/// (`blob_kind_read`): every run length from 8 to 40, a `+/=_-` (or two) at
/// every place in it (and runs of them, up to nine long), the letters and
/// digits around them changing class at every place, count as the oracle
/// counts, base64, hex or words.
#[test]
fn blob_runs_count_as_the_oracle_at_every_lane() {
    let alnum = [
        "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0",
        "d9964aa40a9cfda93fa00ce59812881150180a3b",
        "ABCDEFGHijklmnopQRSTUVWXyz0123456789abcd",
        "0123456789ABCDEF0123456789abcdef01234567",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1111",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1",
        // No digit: base64 only with two capitals in a row.
        "aBcDeFghIjKlMnOpqRsTuVwXyZaBcDeFgHiJkLmN",
        "abcDEfghIJklmnOPqrsTUvwxYZabcdEFghijKLmn",
    ];
    for base in alnum {
        for len in 8..=base.len() {
            let run = &base.as_bytes()[..len];
            same_as_the_oracle(run).unwrap();
            for at in 0..len {
                for punct in [b'+', b'/', b'=', b'_', b'-'] {
                    let mut one = run.to_vec();
                    one[at] = punct;
                    same_as_the_oracle(&one).unwrap();
                    let mut two = one.clone();
                    two[len - 1 - at] = b'-';
                    same_as_the_oracle(&two).unwrap();
                    // After other text, and before more.
                    let framed = [b"x.".as_slice(), &two, b"\n"].concat();
                    same_as_the_oracle(&framed).unwrap();
                }
                // A run of them, up to a whole lane's width and beyond.
                for width in 2..=9.min(len - at) {
                    let mut many = run.to_vec();
                    many[at..at + width].fill(b"+/=_-"[width % 5]);
                    same_as_the_oracle(&many).unwrap();
                }
            }
        }
    }
}
