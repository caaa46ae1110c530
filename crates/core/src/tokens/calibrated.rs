//! The calibrated token estimate: text counted by kind (Latin words split at
//! camelCase humps, digit groups, punctuation runs, whitespace, CJK by
//! character, other scripts, emoji by grapheme cluster, base64 and hex runs)
//! and weighted by per-kind constants fitted against the o200k_base BPE
//! tokenizer (tests/node/estimator.test.mjs checks every class of its corpus
//! within ±15 %). pi's chars/4 is off by 0.7× to 3.7× depending on the kind of
//! text; this is what the `Compactor` decides with by default.
//!
//! Text is read as UTF-8 bytes: the boundary encodes the engine's strings
//! with `TextEncoder.encodeInto`, by far the cheapest way to hand a string's
//! content to wasm (copying UTF-16 code units one `charCodeAt` at a time
//! cost several times the classification itself). The encoder turns a lone
//! surrogate into U+FFFD, which counts as a symbol, as the surrogate would;
//! a malformed byte counts as a symbol too, never a panic. Every count is
//! per character (code point), so the estimate is the same whichever
//! encoding carried the text; only the length bound
//! [`MAX_TOKENS_PER_UNIT`] is per UTF-16 code unit, the length JavaScript
//! reports.
//!
//! [`Features`] are plain counts (what the classifier found); [`WEIGHTS`]
//! turn them into tokens. Separate so that the classifier's branches are
//! tested on counts and the weights are refitted without touching it.

/// What the classifier counts in a text.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Features {
    /// Latin words, split at camelCase humps: pieces and their letters.
    pub word_pieces: u64,
    pub word_letters: u64,
    /// Digit runs counted in groups of up to three (BPE vocabularies hold
    /// numbers up to three digits).
    pub digit_groups: u64,
    /// Runs of ASCII punctuation and symbols, and their characters.
    pub punct_runs: u64,
    pub punct_chars: u64,
    /// Runs of two or more spaces/tabs (a single space joins the next word).
    pub space_runs: u64,
    /// Whitespace runs holding a line break (with the indentation after it).
    pub newline_runs: u64,
    /// Han ideographs, kana, Hangul syllables, CJK and fullwidth punctuation.
    pub han: u64,
    pub kana: u64,
    pub hangul: u64,
    pub cjk_punct: u64,
    /// Letters of other scripts (Greek, Cyrillic, Arabic, Devanagari, ...):
    /// runs and characters.
    pub other_runs: u64,
    pub other_chars: u64,
    /// Emoji grapheme clusters (ZWJ sequences, flags, keycaps, skin tones as
    /// one each) and the code points they hold.
    pub emoji_clusters: u64,
    pub emoji_code_points: u64,
    /// Characters of base64-like runs (random mixed-case alphanumerics: ids,
    /// keys, encoded data) and of hex runs (hashes, UUIDs).
    pub base64_chars: u64,
    pub hex_chars: u64,
    /// Anything else: non-ASCII symbols and punctuation, controls, lone
    /// surrogates.
    pub symbols: u64,
    /// Units of word pieces, punctuation, whitespace and other-script runs
    /// beyond the first [`LONG_RUN`] of each: a long run (a rule of `=`, a
    /// padded column, a word of repeated letters) is several tokens.
    pub long_run_units: u64,
}

/// Runs up to this long cost what their kind costs; longer, each unit more
/// adds [`Weights::long_run_unit`].
pub const LONG_RUN: u64 = 16;

/// Per-feature weights (tokens per unit counted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub word_piece: f64,
    pub word_letter: f64,
    pub digit_group: f64,
    pub punct_run: f64,
    pub punct_char: f64,
    pub space_run: f64,
    pub newline_run: f64,
    pub han: f64,
    pub kana: f64,
    pub hangul: f64,
    pub cjk_punct: f64,
    pub other_run: f64,
    pub other_char: f64,
    pub emoji_cluster: f64,
    pub emoji_code_point: f64,
    pub base64_char: f64,
    pub hex_char: f64,
    pub symbol: f64,
    pub long_run_unit: f64,
}

/// Fitted to o200k_base by scripts/fit-estimator.mjs on the corpus of
/// tests/node/estimator-corpus.mjs (seed 15); Hangul, other scripts and
/// symbols, which that corpus does not hold, set by hand from o200k's counts
/// of a few sentences.
pub const WEIGHTS: Weights = Weights {
    word_piece: 1.005,
    word_letter: 0.0,
    digit_group: 0.671,
    punct_run: 0.828,
    punct_char: 0.0,
    space_run: 0.448,
    newline_run: 1.114,
    han: 0.602,
    kana: 0.679,
    hangul: 0.5,
    cjk_punct: 0.652,
    other_run: 0.6,
    other_char: 0.22,
    emoji_cluster: 0.84,
    emoji_code_point: 1.177,
    base64_char: 0.681,
    hex_char: 0.712,
    symbol: 0.7,
    long_run_unit: 0.25,
};

/// The most tokens any one UTF-16 code unit can add under [`WEIGHTS`]: an
/// upper bound of the estimate from a text's length alone.
pub const MAX_TOKENS_PER_UNIT: f64 = 2.1;

/// The most tokens any one UTF-8 byte can add under [`WEIGHTS`] (with a
/// little margin for rounding): an upper bound of the estimate from a text's
/// UTF-8 length, about half the length bound on ASCII text, and known as
/// soon as a text is encoded (`TextEncoder.encodeInto`, some 30 times
/// cheaper than classifying it).
///
/// Why it holds: every count belongs to a run or a character, and none
/// costs more than 1.114 per byte it covers. A line-break run costs 1.114
/// (the most: one `\n` byte); a word 1.005 per piece, a new piece needing a
/// letter of its own after the first (a lower→upper hump: at most one per
/// two letters); a punctuation run 0.828; a digit group 0.671 per up to three
/// digits; a space run 0.448 over at least two; a long run's extra unit 0.25
/// per character beyond [`LONG_RUN`]; base64 and hex 0.712 at most per byte;
/// an ASCII control or a malformed byte 0.7. Everything else is at least two
/// bytes long: CJK 0.679, other scripts 0.82 for a run's first letter, a
/// symbol or stray mark 0.7, an emoji's first code point 0.84 + 1.177 over
/// three or four bytes and each further one 1.177 over two or more (a
/// keycap's ASCII base included: 3.19 over four bytes). `tests.rs` checks
/// it on worst-case and random texts and bytes.
pub const MAX_TOKENS_PER_BYTE: f64 = 1.115;

impl Features {
    /// The estimate these counts make under `w`.
    pub fn tokens(&self, w: &Weights) -> f64 {
        let pairs = [
            (self.word_pieces, w.word_piece),
            (self.word_letters, w.word_letter),
            (self.digit_groups, w.digit_group),
            (self.punct_runs, w.punct_run),
            (self.punct_chars, w.punct_char),
            (self.space_runs, w.space_run),
            (self.newline_runs, w.newline_run),
            (self.han, w.han),
            (self.kana, w.kana),
            (self.hangul, w.hangul),
            (self.cjk_punct, w.cjk_punct),
            (self.other_runs, w.other_run),
            (self.other_chars, w.other_char),
            (self.emoji_clusters, w.emoji_cluster),
            (self.emoji_code_points, w.emoji_code_point),
            (self.base64_chars, w.base64_char),
            (self.hex_chars, w.hex_char),
            (self.symbols, w.symbol),
            (self.long_run_units, w.long_run_unit),
        ];
        pairs.iter().map(|&(n, k)| n as f64 * k).sum()
    }

    /// The counts in a row, in [`Weights`] field order (for fitting).
    pub fn to_row(&self) -> [u64; 19] {
        [
            self.word_pieces,
            self.word_letters,
            self.digit_groups,
            self.punct_runs,
            self.punct_chars,
            self.space_runs,
            self.newline_runs,
            self.han,
            self.kana,
            self.hangul,
            self.cjk_punct,
            self.other_runs,
            self.other_chars,
            self.emoji_clusters,
            self.emoji_code_points,
            self.base64_chars,
            self.hex_chars,
            self.symbols,
            self.long_run_units,
        ]
    }
}

/// The calibrated estimate of one text (UTF-8), in tokens (not rounded).
pub fn estimate_text(text: &[u8]) -> f64 {
    classify(text).tokens(&WEIGHTS)
}

/// The calibrated estimate of several texts (a message's fields, UTF-8),
/// rounded up once.
pub fn estimate_texts<'a>(texts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut total = Features::default();
    for t in texts {
        classify_into(t, &mut total);
    }
    total.tokens(&WEIGHTS).ceil() as u64
}

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

/// Whether `c` is a letter of any script, as the estimate classifies
/// characters (Latin, other scripts, Han, kana, Hangul). The extractive
/// summarizer tells words and prose with it too, so the package carries
/// one character table instead of a second one from std.
pub(crate) fn is_letter(c: char) -> bool {
    matches!(
        kind(c as u32),
        Kind::Lower | Kind::Upper | Kind::OtherLetter | Kind::Han | Kind::Kana | Kind::Hangul
    )
}

/// Whether `c` is Han, kana or Hangul, as the estimate classifies
/// characters (the history search cuts such text into pairs).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(kind(c as u32), Kind::Han | Kind::Kana | Kind::Hangul)
}

/// A letter ([`is_letter`]) or an ASCII digit: what words are made of.
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_digit() || is_letter(c)
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

// What a byte is, for the classifier's ASCII paths: one lookup in
// [`BYTES`] instead of decoding and matching [`kind`]. One bit per class,
// so that a run's classes are OR-ed together as it is found; `L`..`BP`
// (the low four bits) are the bytes base64 and hex runs are made of
// ("blob" bytes); 0 is any byte of a non-ASCII character.
/// ASCII lowercase, uppercase, digit ([`kind`]'s `Lower`, `Upper`, `Digit`).
const L: u8 = 0x01;
const U: u8 = 0x02;
const D: u8 = 0x04;
/// The punctuation base64 and hex runs hold: `+ / = _ -`.
const BP: u8 = 0x08;
const BLOB: u8 = L | U | D | BP;
/// Other ASCII punctuation and symbols.
const P: u8 = 0x10;
/// Spaces and tabs; line breaks.
const S: u8 = 0x20;
const N: u8 = 0x40;
/// ASCII controls (symbols).
const C: u8 = 0x80;

/// The class of every byte, made from [`kind`] so the two cannot disagree.
const BYTES: [u8; 256] = {
    let mut table = [0; 256];
    let mut u = 0;
    while u < 128 {
        table[u] = match kind(u as u32) {
            Kind::Lower => L,
            Kind::Upper => U,
            Kind::Digit => D,
            Kind::Punct if matches!(u as u8, b'+' | b'/' | b'=' | b'_' | b'-') => BP,
            Kind::Punct => P,
            Kind::Space => S,
            Kind::Newline => N,
            _ => C,
        };
        u += 1;
    }
    table
};

#[inline(always)]
fn class(b: u8) -> u8 {
    BYTES[usize::from(b)]
}

/// Runs this short are never base64 or hex.
const MIN_BASE64: usize = 16;
const MIN_HEX: usize = 8;

enum Blob {
    Base64,
    Hex,
}

/// Whether `run` (blob bytes only, of the classes OR-ed in `classes`) reads
/// as random data rather than words: hex (hex digits with both digits and
/// letters), or base64 (the class among lower/upper/digit changes often, as
/// random text does and words and camelCase identifiers do not).
#[inline(always)]
fn blob_kind(run: &[u8], classes: u8) -> Option<Blob> {
    // Both need a digit, or base64 two capitals in a row: most runs (words,
    // identifiers, paths) are over here, unread.
    let maybe_hex = run.len() >= MIN_HEX && classes & D != 0;
    let maybe_base64 = run.len() >= MIN_BASE64 && classes & (D | U) != 0;
    if !(maybe_hex || maybe_base64) {
        return None;
    }
    blob_kind_read(run)
}

/// [`blob_kind`] once the classes leave it open: one pass over the run,
/// eight bytes at a time.
#[inline(never)]
fn blob_kind_read(run: &[u8]) -> Option<Blob> {
    let mut s = BlobStats::default();
    let mut i = 0;
    while i < run.len() {
        // (Not `copy_from_slice`, which the package's size-optimized build
        // leaves a call.) The last bytes with the lanes after them 0, a byte
        // that counts as nothing: neither a letter, a digit nor a dash.
        let x = match <[u8; 8]>::try_from(run.get(i..i + 8).unwrap_or_default()) {
            Ok(eight) => u64::from_le_bytes(eight),
            Err(_) => run[i..].iter().rev().fold(0, |x, &b| x << 8 | u64::from(b)),
        };
        s.eight(x);
        i += 8;
    }
    s.kind(run.len())
}

/// What [`blob_kind_read`] counts in a run of blob bytes.
#[derive(Default)]
struct BlobStats {
    /// Class changes between consecutive letters and digits (`+/=_-`
    /// skipped), letters and digits, digits, capitals after a capital (a
    /// `+/=_-` between them skipped too), hex digits, hex digits and dashes.
    changes: usize,
    alnum: usize,
    digits: usize,
    upper_pairs: usize,
    hex_digits: usize,
    hex_or_dash: usize,
    /// The class of the last letter or digit ([`L`], [`U`] or [`D`]; 0:
    /// none yet).
    prev: u8,
}

/// A byte in every lane of a `u64`, and every lane's high bit.
const LANES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = LANES * 0x80;

/// The high bit of each lane of `x` (bytes below 0x80) that is in
/// `lo..=hi`: `b + 0x80 - lo` reaches 0x80 when `b >= lo`, `b + 0x7F - hi`
/// when `b > hi`, and neither sum carries into the next lane.
#[inline(always)]
fn within(x: u64, lo: u8, hi: u8) -> u64 {
    let from = x.wrapping_add(LANES * u64::from(0x80 - lo));
    let above = x.wrapping_add(LANES * u64::from(0x7F - hi));
    from & !above & HIGH
}

/// The high bit of each lane of `x` (bytes below 0x80) that is not 0.
#[inline(always)]
fn nonzero(x: u64) -> u64 {
    x.wrapping_add(LANES * 0x7F) & HIGH
}

/// Each lane of `x` (values below 8) that is 0 takes the value of the
/// nearest lane below it that is not (or stays 0): three doubling steps
/// reach the seven lanes below.
#[inline(always)]
fn fill_up(x: u64) -> u64 {
    let step = |x: u64, shift: u32| x | (x << shift) & (((HIGH & !nonzero(x)) >> 7) * 0xFF);
    step(step(step(x, 8), 16), 32)
}

#[inline(always)]
fn count(mask: u64) -> usize {
    mask.count_ones() as usize
}

impl BlobStats {
    /// Counts the eight bytes of `x` (the first in the low lane) as one
    /// pass a byte at a time would: each lane's class against that of the
    /// last letter or digit before it, found for all lanes at once.
    #[inline(always)]
    fn eight(&mut self, x: u64) {
        let digit = within(x, b'0', b'9');
        let upper = within(x, b'A', b'Z');
        let lower = within(x, b'a', b'z');
        let alnum = digit | upper | lower;
        let hex = digit | within(x | (LANES * 0x20), b'a', b'f');
        let dash = HIGH & !nonzero(x ^ (LANES * u64::from(b'-')));
        self.hex_digits += count(hex);
        self.hex_or_dash += count(hex | dash);
        self.digits += count(digit);
        self.alnum += count(alnum);
        // Each lane's class (D, U or L; 0 for the rest), and the class of
        // the last letter or digit before it.
        let class = digit >> 5 | upper >> 6 | lower >> 7;
        let before = fill_up(class << 8 | u64::from(self.prev));
        self.changes += count(alnum & nonzero(before) & nonzero(class ^ before));
        self.upper_pairs += count(upper & before << 6);
        // The last lane's class, or the one before it.
        self.prev = match (class >> 56) as u8 {
            0 => (before >> 56) as u8,
            last => last,
        };
    }

    fn kind(&self, len: usize) -> Option<Blob> {
        // Hex needs both digits and letters, and nothing but hex digits and
        // dashes.
        if len >= MIN_HEX
            && self.digits > 0
            && self.alnum > self.digits
            && self.hex_or_dash == len
            && self.hex_digits >= MIN_HEX
        {
            return Some(Blob::Hex);
        }
        // camelCase changes class often too, but has neither digits nor two
        // capitals in a row; random text of this length almost always has
        // one.
        let random = self.digits > 0 || self.upper_pairs > 0;
        (len >= MIN_BASE64
            && self.alnum >= MIN_BASE64
            && self.changes * 10 >= self.alnum * 3
            && random)
            .then_some(Blob::Base64)
    }
}

// The kinds of run the classifier builds (a run's kind; 0: none open).
const NO_RUN: u8 = 0;
/// Latin letters, split at camelCase humps into pieces.
const WORD: u8 = 1;
const DIGITS: u8 = 2;
const PUNCT: u8 = 3;
const SPACES: u8 = 4;
/// A line break with the whitespace after it.
const BREAK: u8 = 5;
/// Letters of other scripts.
const OTHER: u8 = 6;

/// The run being built, flushed into the counts when the kind changes.
struct Run {
    kind: u8,
    len: u64,
    /// Words: the last letter was lowercase (the next capital is a hump).
    prev_lower: bool,
}

impl Run {
    /// Counts the run and closes it. Not inlined: called from every
    /// path, it would be copied into each (the package's size).
    #[inline(never)]
    fn flush(&mut self, f: &mut Features) {
        let len = self.len;
        let long = len.saturating_sub(LONG_RUN);
        match self.kind {
            WORD => {
                f.word_letters += len;
                f.long_run_units += long;
            }
            DIGITS => f.digit_groups += len.div_ceil(3),
            PUNCT => {
                f.punct_runs += 1;
                f.punct_chars += len;
                f.long_run_units += long;
            }
            SPACES => {
                f.space_runs += u64::from(len >= 2);
                f.long_run_units += long;
            }
            BREAK => {
                f.newline_runs += 1;
                f.long_run_units += long;
            }
            OTHER => {
                f.other_runs += 1;
                f.other_chars += len;
                f.long_run_units += long;
            }
            _ => {}
        }
        self.kind = NO_RUN;
        self.len = 0;
        self.prev_lower = false;
    }

    /// Adds one character of run kind `kind` (not [`WORD`]: [`Run::letter`]).
    #[inline(always)]
    fn push(&mut self, kind: u8, f: &mut Features) {
        // Indentation after a line break joins it.
        if kind != self.kind && !(self.kind == BREAK && kind == SPACES) {
            self.flush(f);
            self.kind = kind;
        }
        self.len += 1;
    }

    /// Adds one Latin letter: a new piece at a word's start and at each
    /// lower→upper hump (pieces are counted as they start).
    #[inline(always)]
    fn letter(&mut self, upper: bool, f: &mut Features) {
        if self.kind != WORD {
            self.flush(f);
            self.kind = WORD;
            f.word_pieces += 1;
        } else if upper && self.prev_lower {
            f.word_pieces += 1;
        }
        self.prev_lower = !upper;
        self.len += 1;
    }
}

/// Counts the kinds of text in `units` (UTF-8).
///
/// ASCII, most of any text, is read a run at a time through [`BYTES`]:
/// a run of blob bytes (letters, digits, `+/=_-`) is found whole with its
/// classes, tested for base64 or hex only when those classes leave it open,
/// and otherwise counted as its words (a lowercase one at once), digit runs
/// and punctuation in tight loops; whitespace and other punctuation
/// likewise. Only non-ASCII characters are decoded and matched with
/// [`kind`]. The counts are those of the character-by-character definition
/// (the test oracle in `reference.rs`; `tests.rs` checks them equal).
pub fn classify(units: &[u8]) -> Features {
    let mut f = Features::default();
    classify_into(units, &mut f);
    f
}

/// [`classify`], the counts added to `f` (several texts counted together).
fn classify_into(units: &[u8], f: &mut Features) {
    let mut run = Run {
        kind: NO_RUN,
        len: 0,
        prev_lower: false,
    };
    let mut i = 0;
    while let Some(&b) = units.get(i) {
        let c = class(b);
        if c & BLOB != 0 {
            i = blob_bytes(units, i, &mut run, f);
        } else if c & (S | N) != 0 {
            run.push(if c == S { SPACES } else { BREAK }, f);
            i = whitespace_rest(units, i + 1, &mut run);
        } else if c == P {
            if is_keycap(units, i + 1) {
                run.flush(f);
                i = emoji_cluster(units, i, f);
                continue;
            }
            run.push(PUNCT, f);
            i += 1;
            // The rest of the punctuation run (up to a keycap's base).
            while let Some(&u) = units.get(i) {
                if class(u) != P || is_keycap(units, i + 1) {
                    break;
                }
                run.len += 1;
                i += 1;
            }
        } else if c == C {
            run.flush(f);
            f.symbols += 1;
            i += 1;
        } else {
            i = non_ascii(units, i, &mut run, f);
        }
    }
    run.flush(f);
}

/// The whitespace run `run` holds goes on with the ASCII whitespace from
/// `i`: spaces and tabs join any whitespace run, line breaks only a
/// line-break run. Returns where it ends.
#[inline]
fn whitespace_rest(units: &[u8], mut i: usize, run: &mut Run) -> usize {
    let joins = if run.kind == BREAK { S | N } else { S };
    let start = i;
    while let Some(&u) = units.get(i) {
        if class(u) & joins == 0 {
            break;
        }
        i += 1;
    }
    run.len += (i - start) as u64;
    i
}

/// Counts the run of blob bytes starting at `start` (whole: the byte before
/// it is not one): base64 or hex, or else its words (split at humps), digit
/// runs and punctuation, the first joining the run before it as a
/// character at a time would. Returns where it ends.
#[inline(always)]
fn blob_bytes(units: &[u8], start: usize, run: &mut Run, f: &mut Features) -> usize {
    // The run's end and its classes, in one pass.
    let mut classes = 0;
    let mut end = start;
    while let Some(&u) = units.get(end) {
        let c = class(u);
        if c & BLOB == 0 {
            break;
        }
        classes |= c;
        end += 1;
    }
    let len = end - start;
    if classes == L {
        // One lowercase word (or the rest of one): no humps, no blob.
        run.letter(false, f);
        run.len += len as u64 - 1;
        return end;
    }
    if let Some(blob) = blob_kind(units.get(start..end).unwrap_or_default(), classes) {
        run.flush(f);
        match blob {
            Blob::Base64 => f.base64_chars += len as u64,
            Blob::Hex => f.hex_chars += len as u64,
        }
        return end;
    }
    // A digit or `+/=_-` before a keycap mark is the keycap's base: only
    // the run's last byte can be one (the next is not ASCII).
    let keycap =
        classes & (D | BP) != 0 && class(units[end - 1]) & (D | BP) != 0 && is_keycap(units, end);
    let stop = if keycap { end - 1 } else { end };
    // Its words, digit runs and punctuation runs: the first joins the run
    // before it, the last stays open (what follows may join it), those
    // between are counted at once.
    let mut j = start;
    let mut first = true;
    while j < stop {
        let c = class(units[j]);
        let from = j;
        j += 1;
        let word = c & (L | U) != 0;
        let (mut humps, mut prev_lower) = (0, c == L);
        if word {
            while j < stop {
                let c = class(units[j]);
                if c & (L | U) == 0 {
                    break;
                }
                humps += u64::from(prev_lower && c == U);
                prev_lower = c == L;
                j += 1;
            }
        } else {
            while j < stop && class(units[j]) == c {
                j += 1;
            }
        }
        let len = (j - from) as u64;
        if first {
            first = false;
            if word {
                run.letter(c == U, f);
                run.prev_lower = prev_lower;
                f.word_pieces += humps;
            } else {
                run.push(if c == D { DIGITS } else { PUNCT }, f);
            }
            run.len += len - 1;
            if j < stop {
                run.flush(f);
            }
        } else if j < stop {
            if word {
                f.word_pieces += 1 + humps;
                f.word_letters += len;
                f.long_run_units += len.saturating_sub(LONG_RUN);
            } else if c == D {
                f.digit_groups += len.div_ceil(3);
            } else {
                f.punct_runs += 1;
                f.punct_chars += len;
                f.long_run_units += len.saturating_sub(LONG_RUN);
            }
        } else {
            run.kind = if word {
                f.word_pieces += 1 + humps;
                WORD
            } else if c == D {
                DIGITS
            } else {
                PUNCT
            };
            run.len = len;
            run.prev_lower = word && prev_lower;
        }
    }
    if keycap {
        run.flush(f);
        return emoji_cluster(units, end - 1, f);
    }
    end
}

/// Counts the non-ASCII character at `i` (or a malformed byte: a symbol);
/// returns where it ends.
#[inline(never)]
fn non_ascii(units: &[u8], i: usize, run: &mut Run, f: &mut Features) -> usize {
    let (cp, width) = decode(units, i);
    let k = kind(cp);
    match k {
        Kind::Pictographic | Kind::Regional => {
            run.flush(f);
            return emoji_cluster(units, i, f);
        }
        Kind::Han | Kind::Kana | Kind::Hangul | Kind::CjkPunct | Kind::Symbol => {
            run.flush(f);
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
            if run.kind == NO_RUN {
                f.symbols += 1;
            }
        }
        Kind::Space | Kind::Newline => {
            run.push(if k == Kind::Space { SPACES } else { BREAK }, f);
            return whitespace_rest(units, i + width, run);
        }
        // Letters outside ASCII (accented Latin); an overlong encoding of
        // an ASCII character (malformed UTF-8) counts as that character.
        Kind::Lower | Kind::Upper => run.letter(k == Kind::Upper, f),
        Kind::Digit | Kind::Punct if is_keycap(units, i + width) => {
            run.flush(f);
            return emoji_cluster(units, i, f);
        }
        Kind::Digit => run.push(DIGITS, f),
        Kind::Punct => run.push(PUNCT, f),
        _ => run.push(OTHER, f),
    }
    i + width
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
    // What the last code point leaves open: a flag's second regional
    // indicator (right after the first), a pictograph after a joiner.
    let mut regional = kind(cp) == Kind::Regional;
    let mut joined = false;
    while i < units.len() {
        let (next, w) = decode(units, i);
        let k = kind(next);
        let open = (regional && k == Kind::Regional) || (joined && k == Kind::Pictographic);
        regional = false;
        // A joiner belongs to the cluster, followed by a pictograph or not.
        joined = k == Kind::Zwj;
        // (U+20E3, the keycap mark, is a `Mark`.)
        if !(open || joined || k == Kind::Mark) {
            break;
        }
        i += w;
        code_points += 1;
    }
    f.emoji_clusters += 1;
    f.emoji_code_points += code_points;
    i
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod reference;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
