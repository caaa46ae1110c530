//! Text shaping for the extractive summary: lengths in UTF-16 code units
//! (as JavaScript counts), cutting at word boundaries, blocks, case folding
//! for matching, sentence splitting and telling prose from pasted text.
//!
//! Text is cut into lines with `split('\n')` (the splitter the rest of the
//! package uses too) and each line is trimmed where it is read, which drops
//! the `\r` of a Windows line end as `str::lines` would.

use crate::js::engine::to_lowercase;
use crate::js::string::find_str;
use crate::tokens::calibrated::{is_letter, is_word_char};

pub(super) fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// All whitespace runs (newlines included) collapsed to one space.
pub(super) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `s` cut to at most `max` units, ending in "…" when cut; the cut moves back
/// to a word boundary when one is close.
pub(super) fn cut(s: &str, max: usize) -> String {
    if units(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let room = max - 1;
    let mut used = 0;
    let mut end = 0;
    let mut last_space: Option<(usize, usize)> = None;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if used + w > room {
            break;
        }
        if c.is_whitespace() {
            last_space = Some((i, used));
        }
        used += w;
        end = i + c.len_utf8();
    }
    let mut at = end;
    if let Some((i, before)) = last_space {
        if before * 10 >= room * 7 {
            at = i;
        }
    }
    let mut out = s.get(..at).unwrap_or("").trim_end().to_string();
    out.push('…');
    out
}

/// A multi-line text as an indented block: blank lines dropped, each line
/// trimmed at its end, the whole cut to `max` units before indenting.
pub(super) fn block(s: &str, max: usize, indent: &str) -> String {
    // Joined by hand: `[&str]::join` would be one more instantiation of
    // `join` in the `.wasm` (the one on `[String]` is used elsewhere).
    let mut joined = String::with_capacity(s.len());
    for line in s
        .split('\n')
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
    {
        if !joined.is_empty() {
            joined.push('\n');
        }
        joined.push_str(line);
    }
    let joined = cut(&joined, max);
    let mut out = String::new();
    for line in joined.split('\n').filter(|l| !l.is_empty()) {
        out.push_str(indent);
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The start of `s`, at most `max` bytes, ending at a char boundary.
pub(super) fn head(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}

/// Lowercase, with typographic apostrophes made plain, for matching only.
pub(super) fn fold(s: &str) -> String {
    to_lowercase(s).replace('\u{2019}', "'")
}

/// Whether `marker` occurs in `hay` as whole words.
pub(super) fn has_words(hay: &str, marker: &str) -> bool {
    let mut from = 0;
    while let Some(at) = find_str(hay, marker, from) {
        let end = at + marker.len();
        let before = hay.get(..at).and_then(|h| h.chars().next_back());
        let after = hay.get(end..).and_then(|h| h.chars().next());
        let boundary = |c: Option<char>| c.is_none_or(|c| !is_word_char(c));
        if boundary(before) && boundary(after) {
            return true;
        }
        from = at + marker.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Sentences: split at line ends and at `.`, `!`, `?` followed by space.
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = c == '\n'
            || (matches!(c, '.' | '!' | '?')
                && chars.peek().is_none_or(|&(_, next)| next.is_whitespace()));
        if ends {
            let end = i + c.len_utf8();
            if let Some(s) = text.get(start..end) {
                let s = s.trim();
                if !s.is_empty() {
                    out.push(s);
                }
            }
            start = end;
        }
    }
    if let Some(s) = text.get(start..) {
        let s = s.trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// Prose rather than a pasted log or code: mostly letters and spaces.
pub(super) fn is_prose(s: &str) -> bool {
    if s.split_whitespace().count() < 3 {
        return false;
    }
    let (mut total, mut plain) = (0, 0);
    for c in s.chars() {
        total += 1;
        if is_letter(c) || c == ' ' || c == '\'' || c == ',' {
            plain += 1;
        }
    }
    plain * 10 >= total * 7
}
