//! Native tests of the passage split.

use super::*;
use proptest::prelude::*;

#[test]
fn passages_cover_the_text_at_line_ends() {
    assert!(passages("").is_empty());
    assert_eq!(passages("one line"), [(0, 8)]);
    let lines: String = (0..300).map(|i| format!("line number {i}\n")).collect();
    let ranges = passages(&lines);
    assert!(ranges.len() > 1);
    let mut at = 0;
    for &(start, end) in &ranges {
        assert_eq!(start, at);
        let chars = lines[start..end].chars().count();
        assert!(chars <= PASSAGE_CHARS && (end == lines.len() || chars >= PASSAGE_CHARS / 2));
        assert!(lines[..end].ends_with('\n'));
        at = end;
    }
    assert_eq!(at, lines.len());
    // One long line: at spaces; no spaces: at characters, whole ones.
    let words = "word ".repeat(500);
    assert!(passages(&words)
        .iter()
        .all(|&(_, e)| words[..e].ends_with(' ')));
    let wide = "東".repeat(2500);
    assert_eq!(passages(&wide), [(0, 3000), (3000, 6000), (6000, 7500)]);
    // A line end early in the passage gives way to a later space.
    let early = format!("title\n{}", "word ".repeat(300));
    assert!(passages(&early)[0].1 > 900);
}

proptest! {
    #[test]
    fn passages_cover_any_text_on_character_boundaries(text in "(?s)[a-z 東\n.é]{0,3000}") {
        let mut at = 0;
        for (start, end) in passages(&text) {
            prop_assert_eq!(start, at);
            prop_assert!(end > start && text.is_char_boundary(end));
            prop_assert!(text[start..end].chars().count() <= PASSAGE_CHARS);
            at = end;
        }
        prop_assert_eq!(at, text.len());
    }
}
