//! Native tests of excerpts.

use super::*;
use crate::history::rank::query;

fn cut(text: &str, q: &str) -> (Excerpt, String) {
    let e = excerpt(text, (0, text.len()), &query(q).unwrap());
    (e, e.render(text))
}

#[test]
fn a_short_passage_is_its_own_excerpt() {
    let (e, shown) = cut("  Short text about parsing.\n", "parse");
    assert_eq!(shown, "Short text about parsing.");
    assert!(!e.cut_before && !e.cut_after);
}

#[test]
fn the_window_with_the_most_distinct_terms_wins() {
    let filler = |w: &str, n: usize| format!("{w} ").repeat(n);
    // "alpha" alone early (many times), "alpha" with "beta" later.
    let text = format!(
        "{}{}{}alpha beta{}",
        filler("alpha", 20),
        filler("lorem", 200),
        filler("ipsum", 3),
        filler(" dolor", 200)
    );
    let (e, shown) = cut(&text, "alpha beta");
    assert!(shown.contains("alpha beta"), "{shown}");
    assert!(e.cut_before && e.cut_after);
    assert!(shown.starts_with('…') && shown.ends_with('…'));
    let chars = shown.chars().count();
    assert!(
        (EXCERPT_CHARS - 20..=EXCERPT_CHARS + 2).contains(&chars),
        "{chars}"
    );
    // At word boundaries: whole words only.
    let inner = shown.trim_matches('…');
    assert!(
        inner
            .split_whitespace()
            .all(|w| ["lorem", "ipsum", "alpha", "beta", "dolor"].contains(&w)),
        "{inner}"
    );
}

#[test]
fn excerpts_stay_in_their_passage_and_on_char_boundaries() {
    let text = format!("{}\n{}", "é".repeat(800), "東京 ".repeat(400));
    let second = (text.find('\n').unwrap() + 1, text.len());
    let q = query("京").unwrap();
    let e = excerpt(&text, second, &q);
    assert!(e.start >= second.0 && e.start + e.len <= second.1);
    assert!(text.is_char_boundary(e.start) && text.is_char_boundary(e.start + e.len));
    assert!(e.cut_before);
    // A text without spaces is cut by characters.
    let (e, shown) = cut(&"字".repeat(1000), "字");
    assert_eq!(shown.chars().count(), EXCERPT_CHARS + 1);
    assert!(!e.cut_before && e.cut_after);
}

#[test]
fn without_a_match_the_excerpt_starts_the_passage() {
    let text = "word ".repeat(200);
    let (e, shown) = cut(&text, "absent");
    assert_eq!(e.start, 0);
    assert!(!e.cut_before && e.cut_after);
    assert!(shown.ends_with("word…"));
}

proptest::proptest! {
    #[test]
    fn any_excerpt_is_inside_its_passage(text in "(?s)[a-c 東\n.é]{0,1500}", q in "[a-c東]{1,3}( [a-c]{1,3})?") {
        let Ok(q) = query(&q) else { return Ok(()) };
        for range in crate::history::passage::passages(&text) {
            let e = excerpt(&text, range, &q);
            proptest::prop_assert!(e.start >= range.0 && e.start + e.len <= range.1);
            proptest::prop_assert!(text.is_char_boundary(e.start) && text.is_char_boundary(e.start + e.len));
            proptest::prop_assert!(text[e.start..e.start + e.len].chars().count() <= EXCERPT_CHARS);
        }
    }
}
