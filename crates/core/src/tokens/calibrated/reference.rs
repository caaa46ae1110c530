//! The classifier as it was before the fast one, kept verbatim
//! as the test oracle: `tests.rs` checks that [`super::classify`]
//! counts exactly what this counts, on random and worst-case texts of every
//! kind, so that making the classifier faster changes no estimate.
//! Test-only: not built into the package.

use super::{Features, LONG_RUN};

/// What kind of character a code point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lower,
    Upper,
    Digit,
    Space,
    Newline,
    Punct,
    Han,
    Kana,
    Hangul,
    CjkPunct,
    OtherLetter,
    /// Combining marks, variation selectors, tags: belong to what precedes.
    Mark,
    Pictographic,
    Regional,
    Zwj,
    Symbol,
}

const fn kind(cp: u32) -> Kind {
    match cp {
        0x61..=0x7A => Kind::Lower,
        0x41..=0x5A => Kind::Upper,
        0x30..=0x39 => Kind::Digit,
        0x20 | 0x09 | 0x0B | 0x0C | 0xA0 | 0x2000..=0x200A | 0x202F | 0x205F => Kind::Space,
        0x0A | 0x0D | 0x2028 | 0x2029 => Kind::Newline,
        0x21..=0x2F | 0x3A..=0x40 | 0x5B..=0x60 | 0x7B..=0x7E => Kind::Punct,
        0xA9 | 0xAE | 0x203C | 0x2049 | 0x2122 | 0x2139 | 0x2194..=0x2199 | 0x21A9 | 0x21AA => {
            Kind::Pictographic
        }
        0xD7 | 0xF7 => Kind::Symbol,
        0xC0..=0x24F | 0x1E00..=0x1EFF => Kind::Lower,
        0x300..=0x36F | 0x1AB0..=0x1AFF | 0x20D0..=0x20FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F => {
            Kind::Mark
        }
        0xE0000..=0xE007F | 0xE0100..=0xE01EF | 0x1F3FB..=0x1F3FF => Kind::Mark,
        0x200D => Kind::Zwj,
        0x200B | 0x200C | 0x2060..=0x2064 | 0xFEFF => Kind::Mark,
        0x370..=0x10FF | 0x1200..=0x1DFF | 0x1F00..=0x1FFF => Kind::OtherLetter,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => Kind::Hangul,
        0x231A
        | 0x231B
        | 0x2328
        | 0x23CF
        | 0x23E9..=0x23FA
        | 0x24C2
        | 0x25AA
        | 0x25AB
        | 0x25B6
        | 0x25C0
        | 0x25FB..=0x25FE
        | 0x2600..=0x27BF
        | 0x2934
        | 0x2935
        | 0x2B05..=0x2B07
        | 0x2B1B
        | 0x2B1C
        | 0x2B50
        | 0x2B55
        | 0x3030
        | 0x303D
        | 0x3297
        | 0x3299 => Kind::Pictographic,
        0x1F1E6..=0x1F1FF => Kind::Regional,
        0x1F000..=0x1F1E5 | 0x1F200..=0x1F3FA | 0x1F400..=0x1FAFF => Kind::Pictographic,
        0x3000..=0x303F | 0xFF00..=0xFFEF | 0xFE30..=0xFE4F => Kind::CjkPunct,
        0x3040..=0x30FF | 0x31F0..=0x31FF => Kind::Kana,
        0x2E80..=0x2FDF
        | 0x3100..=0x312F
        | 0x3190..=0x31EF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF
        | 0x20000..=0x3FFFF => Kind::Han,
        0xA000..=0xABFF | 0x10000..=0x1EFFF => Kind::OtherLetter,
        _ => Kind::Symbol,
    }
}

/// [`kind`] of every ASCII byte, looked up rather than matched: most text
/// is ASCII, and this is the classifier's innermost step.
const ASCII_KINDS: [Kind; 128] = {
    let mut table = [Kind::Symbol; 128];
    let mut u = 0;
    while u < 128 {
        table[u] = kind(u as u32);
        u += 1;
    }
    table
};

/// The kind of the character at `i` and how many bytes it takes.
#[inline(always)]
fn kind_at(text: &[u8], i: usize) -> (Kind, usize) {
    let b = text[i];
    if b < 0x80 {
        (ASCII_KINDS[usize::from(b)], 1)
    } else {
        let (cp, width) = decode(text, i);
        (kind(cp), width)
    }
}

/// The code point at `i` of UTF-8 `text` and how many bytes it takes; a
/// malformed or cut sequence is U+FFFD, one byte.
#[inline(always)]
fn decode(text: &[u8], i: usize) -> (u32, usize) {
    let b0 = text[i];
    if b0 < 0x80 {
        return (u32::from(b0), 1);
    }
    let cont = |k: usize| match text.get(i + k) {
        Some(&b) if b & 0xC0 == 0x80 => Some(u32::from(b & 0x3F)),
        _ => None,
    };
    let lead = u32::from(b0);
    match b0 {
        0xC2..=0xDF => {
            if let Some(c1) = cont(1) {
                return (((lead & 0x1F) << 6) | c1, 2);
            }
        }
        0xE0..=0xEF => {
            if let (Some(c1), Some(c2)) = (cont(1), cont(2)) {
                return (((lead & 0x0F) << 12) | (c1 << 6) | c2, 3);
            }
        }
        0xF0..=0xF4 => {
            if let (Some(c1), Some(c2), Some(c3)) = (cont(1), cont(2), cont(3)) {
                return (((lead & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3, 4);
            }
        }
        _ => {}
    }
    (0xFFFD, 1)
}

/// Characters a base64 or hex run is made of.
#[inline(always)]
fn is_blob_unit(u: u8) -> bool {
    BLOB_UNITS[usize::from(u)]
}

/// [`is_blob_unit`] of every byte, looked up: it is asked of every
/// character of a run's start and of every character of a run.
const BLOB_UNITS: [bool; 256] = {
    let mut table = [false; 256];
    let mut u = 0;
    while u < 256 {
        table[u] = matches!(u as u8, 0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A | 0x2B | 0x2F | 0x3D | 0x5F | 0x2D);
        u += 1;
    }
    table
};

/// Runs this short are never base64 or hex.
const MIN_BASE64: usize = 16;
const MIN_HEX: usize = 8;

enum Blob {
    Base64,
    Hex,
}

/// Whether `run` (blob characters only) reads as random data rather than
/// words: hex (hex digits with both digits and letters), or base64 (the
/// class among lower/upper/digit changes often, as random text does and
/// words and camelCase identifiers do not).
fn blob_kind(run: &[u8]) -> Option<Blob> {
    if run.len() < MIN_HEX {
        return None;
    }
    let is_hex_digit = |u: u8| matches!(u, 0x30..=0x39 | 0x41..=0x46 | 0x61..=0x66);
    // Hex needs a digit: most long runs (words, paths) have none, and are
    // over after one pass.
    if run.iter().any(|u| matches!(u, 0x30..=0x39))
        && run.iter().any(|u| matches!(u, 0x41..=0x5A | 0x61..=0x7A))
        && run.iter().all(|&u| is_hex_digit(u) || u == 0x2D)
        && run.iter().filter(|&&u| is_hex_digit(u)).count() >= MIN_HEX
    {
        return Some(Blob::Hex);
    }
    if run.len() < MIN_BASE64 {
        return None;
    }
    let class = |u: u8| match u {
        0x61..=0x7A => 1u8,
        0x41..=0x5A => 2,
        0x30..=0x39 => 3,
        _ => 0,
    };
    let (mut changes, mut alnum, mut prev) = (0usize, 0usize, 0u8);
    let (mut digits, mut upper_pairs) = (0usize, 0usize);
    for &u in run {
        let c = class(u);
        if c == 0 {
            continue;
        }
        if prev != 0 && c != prev {
            changes += 1;
        }
        digits += usize::from(c == 3);
        upper_pairs += usize::from(c == 2 && prev == 2);
        prev = c;
        alnum += 1;
    }
    // camelCase changes class often too, but has neither digits nor two
    // capitals in a row; random text of this length almost always has one.
    let random = digits > 0 || upper_pairs > 0;
    (alnum >= MIN_BASE64 && changes * 10 >= alnum * 3 && random).then_some(Blob::Base64)
}

/// The run being built, flushed into the counts when the kind changes.
#[derive(Default)]
struct Run {
    kind: Option<Kind>,
    len: u64,
    /// Latin words: camelCase pieces so far.
    pieces: u64,
    prev_lower: bool,
}

impl Run {
    #[inline(always)]
    fn flush(&mut self, f: &mut Features) {
        if !matches!(self.kind, Some(Kind::Digit) | None) {
            f.long_run_units += self.len.saturating_sub(LONG_RUN);
        }
        match self.kind {
            Some(Kind::Lower | Kind::Upper) => {
                f.word_pieces += self.pieces;
                f.word_letters += self.len;
            }
            Some(Kind::Digit) => f.digit_groups += self.len.div_ceil(3),
            Some(Kind::Punct) => {
                f.punct_runs += 1;
                f.punct_chars += self.len;
            }
            Some(Kind::Space) if self.len >= 2 => f.space_runs += 1,
            Some(Kind::Newline) => f.newline_runs += 1,
            Some(Kind::OtherLetter) => {
                f.other_runs += 1;
                f.other_chars += self.len;
            }
            _ => {}
        }
        *self = Run::default();
    }

    /// Adds one character of `kind` (a run-building kind).
    #[inline(always)]
    fn push(&mut self, kind: Kind, f: &mut Features) {
        let word = |k: Kind| matches!(k, Kind::Lower | Kind::Upper);
        let same = match (self.kind, kind) {
            (Some(a), b) if word(a) && word(b) => true,
            // Indentation after a line break joins it.
            (Some(Kind::Newline), Kind::Space | Kind::Newline) => true,
            (Some(a), b) => a == b,
            (None, _) => false,
        };
        if !same {
            self.flush(f);
            self.kind = Some(kind);
        }
        if word(kind) {
            // A new piece at the start and at each lower→upper hump.
            if self.len == 0 || (kind == Kind::Upper && self.prev_lower) {
                self.pieces += 1;
            }
            self.prev_lower = kind == Kind::Lower;
        }
        self.len += 1;
    }
}

/// Counts the kinds of text in `units` (UTF-8).
pub fn classify(units: &[u8]) -> Features {
    let mut f = Features::default();
    let mut run = Run::default();
    // Blob runs already examined up to here (and found to be words).
    let mut checked_until = 0;
    let mut i = 0;
    while i < units.len() {
        if i >= checked_until && is_blob_unit(units[i]) {
            let end = units[i..]
                .iter()
                .position(|&u| !is_blob_unit(u))
                .map_or(units.len(), |k| i + k);
            match blob_kind(&units[i..end]) {
                Some(blob) => {
                    run.flush(&mut f);
                    let n = (end - i) as u64;
                    match blob {
                        Blob::Base64 => f.base64_chars += n,
                        Blob::Hex => f.hex_chars += n,
                    }
                    i = end;
                    continue;
                }
                None => checked_until = end,
            }
        }
        let (k, width) = kind_at(units, i);
        match k {
            Kind::Pictographic | Kind::Regional => {
                run.flush(&mut f);
                i = emoji_cluster(units, i, &mut f);
                continue;
            }
            Kind::Digit | Kind::Punct if is_keycap(units, i + width) => {
                run.flush(&mut f);
                i = emoji_cluster(units, i, &mut f);
                continue;
            }
            Kind::Han | Kind::Kana | Kind::Hangul | Kind::CjkPunct | Kind::Symbol => {
                run.flush(&mut f);
                match k {
                    Kind::Han => f.han += 1,
                    Kind::Kana => f.kana += 1,
                    Kind::Hangul => f.hangul += 1,
                    Kind::CjkPunct => f.cjk_punct += 1,
                    _ => f.symbols += 1,
                }
            }
            // A mark or joiner belongs to what precedes it: free, unless it
            // starts the text or follows a break.
            Kind::Mark | Kind::Zwj => {
                if run.kind.is_none() {
                    f.symbols += 1;
                }
            }
            Kind::Lower | Kind::Upper => {
                run.push(k, &mut f);
                i += width;
                // The rest of an ASCII word in one tight loop: its letters
                // lie inside the blob run already examined (so no check is
                // skipped), and only humps matter.
                while i < checked_until {
                    let u = units[i];
                    let lower = matches!(u, 0x61..=0x7A);
                    let upper = matches!(u, 0x41..=0x5A);
                    if !(lower || upper) {
                        break;
                    }
                    if upper && run.prev_lower {
                        run.pieces += 1;
                    }
                    run.prev_lower = lower;
                    run.len += 1;
                    i += 1;
                }
                continue;
            }
            Kind::Space | Kind::Newline => {
                run.push(k, &mut f);
                i += width;
                // The rest of an ASCII whitespace run: spaces and tabs join
                // any whitespace run, line breaks only a line-break run.
                let newline = run.kind == Some(Kind::Newline);
                while let Some(&u) = units.get(i) {
                    match u {
                        0x20 | 0x09 | 0x0B | 0x0C => {}
                        0x0A | 0x0D if newline => {}
                        _ => break,
                    }
                    run.len += 1;
                    i += 1;
                }
                continue;
            }
            _ => run.push(k, &mut f),
        }
        i += width;
    }
    run.flush(&mut f);
    f
}

/// `units[at..]` starts with U+FE0F U+20E3 or U+20E3 (a keycap).
#[inline(always)]
fn is_keycap(units: &[u8], at: usize) -> bool {
    const KEYCAP: &[u8] = "\u{20E3}".as_bytes();
    const SELECTOR: &[u8] = "\u{FE0F}".as_bytes();
    // Both start with a byte of 0xE2 or more: most characters are over at
    // the first comparison.
    if units.get(at).is_none_or(|&b| b < 0xE2) {
        return false;
    }
    let rest = &units[at..];
    rest.starts_with(KEYCAP) || (rest.starts_with(SELECTOR) && rest[3..].starts_with(KEYCAP))
}

/// Counts the emoji grapheme cluster starting at `start`; returns where it
/// ends. A cluster is a base (pictograph, keycap base, or a pair of
/// regional indicators: a flag) followed by modifiers, variation
/// selectors, tags, keycap marks, and ZWJ-joined pictographs.
#[inline(never)]
fn emoji_cluster(units: &[u8], start: usize, f: &mut Features) -> usize {
    let (cp, width) = decode(units, start);
    let mut i = start + width;
    let mut code_points = 1;
    if kind(cp) == Kind::Regional {
        if let Some((next, w)) = (i < units.len()).then(|| decode(units, i)) {
            if kind(next) == Kind::Regional {
                i += w;
                code_points += 1;
            }
        }
    }
    while i < units.len() {
        let (next, w) = decode(units, i);
        match kind(next) {
            Kind::Mark => {}
            _ if next == 0x20E3 => {}
            Kind::Zwj => {
                let after = i + w;
                if after < units.len() && kind(decode(units, after).0) == Kind::Pictographic {
                    let (_, w2) = decode(units, after);
                    i = after + w2;
                    code_points += 2;
                    continue;
                }
                // A trailing joiner still belongs to the cluster.
            }
            _ => break,
        }
        i += w;
        code_points += 1;
    }
    f.emoji_clusters += 1;
    f.emoji_code_points += code_points;
    i
}
