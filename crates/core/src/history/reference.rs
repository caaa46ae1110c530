//! References to passages and the paged read of a message's original text.
//!
//! A reference is short ASCII a model can copy: `h12.3-0k7f` is passage 3
//! of message 12, and `0k7f` a fingerprint of the message's text when it
//! was found (20 bits in base 36), so that a read after the message has
//! changed is refused rather than showing other text at the same place.

use super::passage::passages;
use super::HistoryError;
use crate::js::number::integer_to_string;
use std::fmt::{self, Write};

/// A page's size unless the caller asks for another.
pub const DEFAULT_PAGE_CHARS: usize = 4000;

/// The largest page a read returns.
pub const MAX_PAGE_CHARS: usize = 16_000;

const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const FINGERPRINT_DIGITS: usize = 4;
/// `36^4`: the fingerprints' range.
const FINGERPRINTS: u32 = 36 * 36 * 36 * 36;

/// A passage of a message, as the message's text was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    pub key: u32,
    pub passage: u32,
    /// [`fingerprint`] of the message's text.
    pub fingerprint: u32,
}

/// A short hash of `text`: FNV-1a, reduced to 36^4 values (four base-36
/// digits).
pub fn fingerprint(text: &str) -> u32 {
    let hash = text.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    hash % FINGERPRINTS
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut digits = [b'0'; FINGERPRINT_DIGITS];
        let mut rest = self.fingerprint;
        for d in digits.iter_mut().rev() {
            *d = DIGITS.get((rest % 36) as usize).copied().unwrap_or(b'0');
            rest /= 36;
        }
        let key = integer_to_string(u64::from(self.key));
        let passage = integer_to_string(u64::from(self.passage));
        for piece in ["h", &key, ".", &passage, "-"] {
            f.write_str(piece)?;
        }
        digits.iter().try_for_each(|&d| f.write_char(char::from(d)))
    }
}

impl Reference {
    /// The reference `text` writes (case, surrounding spaces and the
    /// quotes or brackets a model may copy with it aside).
    pub fn parse(text: &str) -> Result<Reference, HistoryError> {
        let bad = |why| bad_reference(text, why);
        // Quotes, brackets and spaces around it are not part of it.
        let strip = |b: &u8| b.is_ascii_whitespace() || b"`'\"[]()<>".contains(b);
        let bytes = text.as_bytes();
        let start = bytes.iter().position(|b| !strip(b)).unwrap_or(bytes.len());
        let end = bytes
            .iter()
            .rposition(|b| !strip(b))
            .map_or(start, |e| e + 1);
        let lower = text.get(start..end).unwrap_or("").to_ascii_lowercase();
        let body = lower
            .strip_prefix('h')
            .ok_or_else(|| bad("it does not start with h"))?;
        let (place, fp) = body
            .split_once('-')
            .ok_or_else(|| bad("it lacks the - before its fingerprint"))?;
        let (key, passage) = place
            .split_once('.')
            .ok_or_else(|| bad("it lacks the . between message and passage"))?;
        let number = |digits: &str| -> Result<u32, HistoryError> {
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("a message or passage number is not digits"));
            }
            digits.parse().map_err(|_| bad("a number is too large"))
        };
        if fp.len() != FINGERPRINT_DIGITS {
            return Err(bad("its fingerprint is not 4 characters"));
        }
        let fingerprint = fp.bytes().try_fold(0u32, |acc, b| {
            let d = DIGITS.iter().position(|&x| x == b)?;
            Some(acc * 36 + d as u32)
        });
        Ok(Reference {
            key: number(key)?,
            passage: number(passage)?,
            fingerprint: fingerprint
                .ok_or_else(|| bad("its fingerprint is not letters and digits"))?,
        })
    }
}

/// The error for `text`, named by its first 40 characters.
fn bad_reference(text: &str, why: &'static str) -> HistoryError {
    let end = text.char_indices().nth(40).map_or(text.len(), |(i, _)| i);
    HistoryError::BadReference {
        reference: text.get(..end).unwrap_or(text).to_owned(),
        why,
    }
}

/// A page of a message's text.
///
/// Offsets a caller sees (`offset`, `next`) count UTF-16 code units, as
/// JavaScript's `.length` and `slice` do; the page's own range is in bytes
/// of the core's UTF-8 text, to cut it with. A lone surrogate of the
/// original reaches the core as U+FFFD, one unit as well, so the units are
/// those of the JavaScript string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    /// Its byte range in the text.
    pub start: usize,
    pub len: usize,
    /// Where the next page starts, in UTF-16 code units (the `offset` to
    /// read it with); none at the text's end.
    pub next: Option<usize>,
}

/// The page of `text` (message `reference.key`'s) from the start of the
/// referenced passage, or from `offset` UTF-16 code units in (a page's
/// `next`), of at most `max_chars` UTF-16 code units, ending at a line end
/// in its second half if it has one.
///
/// A surrogate pair (an emoji, say) is never cut: a page that would end
/// inside one ends before it, one unit short of `max_chars`, and an
/// `offset` inside one reads from its start. A page holds at least one
/// character, so that reading on always moves: with a `max_chars` of 1, a
/// page at a pair holds its two units.
pub fn read(
    text: &str,
    reference: &Reference,
    offset: Option<usize>,
    max_chars: usize,
) -> Result<Page, HistoryError> {
    let key = reference.key;
    if fingerprint(text) != reference.fingerprint {
        return Err(HistoryError::Changed { key });
    }
    if !(1..=MAX_PAGE_CHARS).contains(&max_chars) {
        return Err(HistoryError::PageSize {
            got: max_chars,
            max: MAX_PAGE_CHARS,
        });
    }
    // The page's start in bytes, and in units.
    let (start, units) = match offset {
        Some(offset) => byte_at(text, offset).ok_or_else(|| HistoryError::BadOffset {
            key,
            offset,
            len: units_in(text),
        })?,
        None => {
            let ranges = passages(text);
            let passage = ranges.get(reference.passage as usize);
            let start = passage
                .ok_or(HistoryError::UnknownPassage {
                    key,
                    passage: reference.passage,
                    count: ranges.len(),
                })?
                .0;
            (start, units_in(text.get(..start).unwrap_or("")))
        }
    };
    let rest = text.get(start..).unwrap_or("");
    // The page's end in bytes and in units from its start (the text's end
    // unless found); a line end in its second half, likewise.
    let mut end = None;
    let mut line = None;
    let mut n = 0;
    for (i, c) in rest.char_indices() {
        let width = c.len_utf16();
        if n + width > max_chars && i > 0 {
            end = Some(line.unwrap_or((i, n)));
            break;
        }
        n += width;
        if c == '\n' && n > max_chars / 2 {
            line = Some((i + 1, n));
        }
    }
    let (len, page_units) = end.unwrap_or((rest.len(), n));
    Ok(Page {
        start,
        len,
        next: (start + len < text.len()).then_some(units + page_units),
    })
}

/// The length of `text` in UTF-16 code units (JavaScript's `.length`).
fn units_in(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// The byte at which `text` is `offset` UTF-16 code units in, and the
/// units before it: the start of a surrogate pair when `offset` falls
/// inside one; none past the text's end.
fn byte_at(text: &str, offset: usize) -> Option<(usize, usize)> {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        let after = units + c.len_utf16();
        if after > offset {
            return Some((i, units));
        }
        units = after;
    }
    (units == offset).then_some((text.len(), units))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
