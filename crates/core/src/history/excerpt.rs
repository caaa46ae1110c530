//! The excerpt of a search result: the window of about [`EXCERPT_CHARS`]
//! characters of a passage that holds the most distinct query terms (the
//! first such window), widened around them to the window's size, cut at
//! spaces rather than inside words where it can be.

use super::rank::QueryTerm;
use super::words::terms;
use crate::sorted::sort_by;

/// An excerpt's size in characters.
pub const EXCERPT_CHARS: usize = 300;

/// Where an excerpt is in a message's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Excerpt {
    /// Its byte range.
    pub start: usize,
    pub len: usize,
    /// Whether the text goes on before it, or after it.
    pub cut_before: bool,
    pub cut_after: bool,
}

impl Excerpt {
    /// Its text from `text`, with `…` where the text goes on.
    pub fn render(&self, text: &str) -> String {
        let body = text
            .get(self.start..self.start.saturating_add(self.len))
            .unwrap_or("");
        let mut out = String::with_capacity(body.len().saturating_add(6));
        if self.cut_before {
            out.push('…');
        }
        out.push_str(body);
        if self.cut_after {
            out.push('…');
        }
        out
    }
}

/// The excerpt of the passage at bytes `range` of `text` for `query`.
pub fn excerpt(text: &str, range: (usize, usize), query: &[QueryTerm]) -> Excerpt {
    let (from, to) = range;
    let passage = text.get(from..to).unwrap_or("");
    let chars: Vec<(usize, char)> = passage.char_indices().collect();
    let (mut first, mut last) = (0, chars.len());
    if chars.len() > EXCERPT_CHARS {
        let char_at = |byte: usize| chars.partition_point(|&(i, _)| i < byte);
        // Each query term's places, as character ranges, with its bit.
        let mut found: Vec<(usize, usize, u64)> = Vec::new();
        for t in terms(passage) {
            if let Some(q) = query.iter().position(|q| q.text == t.text) {
                found.push((char_at(t.start), char_at(t.end), 1u64 << (q % 64)));
            }
        }
        sort_by(&mut found, |a, b| a.0.cmp(&b.0));
        let mut best: (u32, usize, usize) = (0, 0, 0);
        for (i, &(start, _, _)) in found.iter().enumerate() {
            let (mut mask, mut end) = (0u64, start);
            for &(_, e, bit) in found.get(i..).unwrap_or(&[]) {
                if e.saturating_sub(start) > EXCERPT_CHARS {
                    break;
                }
                mask |= bit;
                end = end.max(e);
            }
            if mask.count_ones() > best.0 {
                best = (mask.count_ones(), start, end);
            }
        }
        let (_, start, end) = best;
        let pad = EXCERPT_CHARS.saturating_sub(end.saturating_sub(start)) / 2;
        last = start
            .saturating_sub(pad)
            .saturating_add(EXCERPT_CHARS)
            .min(chars.len());
        first = last.saturating_sub(EXCERPT_CHARS);
        let space = |k: usize| chars.get(k).is_some_and(|&(_, c)| c.is_whitespace());
        // Start after a space and end at one, keeping the terms found.
        if first > 0 && !space(first.saturating_sub(1)) {
            if let Some(k) = (first..start).find(|&k| space(k)) {
                first = k.saturating_add(1);
            }
        }
        if last < chars.len() && !space(last) {
            if let Some(k) = (end..last).rev().find(|&k| space(k)) {
                last = k;
            }
        }
    }
    let byte = |k: usize| chars.get(k).map_or(passage.len(), |&(i, _)| i);
    let body = passage.get(byte(first)..byte(last)).unwrap_or("");
    let trimmed = body.trim_start();
    let start = from
        .saturating_add(byte(first))
        .saturating_add(body.len() - trimmed.len());
    let len = trimmed.trim_end().len();
    let end = start.saturating_add(len);
    Excerpt {
        start,
        len,
        cut_before: !text.get(..start).unwrap_or("").trim().is_empty(),
        cut_after: !text.get(end..).unwrap_or("").trim().is_empty(),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
