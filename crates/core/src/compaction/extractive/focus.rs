//! Custom instructions ("Additional focus"): items that mention their words
//! are kept longer when the budget is tight.

use super::text::fold;
use crate::js::string::contains_str;
use crate::sorted::SortedSet;
use crate::tokens::calibrated::is_word_char;

pub(super) struct Focus {
    pub(super) words: Vec<String>,
}

impl Focus {
    pub(super) fn new(instructions: Option<&str>) -> Focus {
        const COMMON: &[&str] = &[
            "about",
            "also",
            "focus",
            "from",
            "include",
            "keep",
            "less",
            "make",
            "more",
            "only",
            "please",
            "should",
            "summary",
            "summarize",
            "that",
            "their",
            "there",
            "these",
            "this",
            "what",
            "when",
            "where",
            "which",
            "with",
            "would",
        ];
        let mut words = SortedSet::new();
        for word in instructions
            .unwrap_or("")
            .split(|c: char| !is_word_char(c) && c != '.' && c != '_' && c != '-')
        {
            let word = fold(word.trim_matches(['.', '-', '_']));
            // Four characters or more.
            if word.chars().nth(3).is_some() && !COMMON.contains(&word.as_str()) {
                words.insert(word);
            }
        }
        let mut words = words.into_vec();
        words.truncate(32);
        Focus { words }
    }

    pub(super) fn matches(&self, text: &str) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let folded = fold(text);
        self.words.iter().any(|w| contains_str(&folded, w))
    }
}
