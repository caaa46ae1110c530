//! JavaScript strings: sequences of UTF-16 code units, lone surrogates allowed.
//!
//! Lengths, slicing and ordering must match JavaScript exactly (pi truncates
//! by `.length` and sorts with the default comparator), so the core keeps
//! strings as code units rather than as Rust `String`s.

use std::fmt;

/// A JavaScript string. `Ord` compares code unit by code unit, which is the
/// order of JavaScript's default `Array.prototype.sort` and of `<` on strings.
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct JsStr(Vec<u16>);

impl JsStr {
    pub fn new() -> Self {
        JsStr(Vec::new())
    }

    pub fn with_capacity(units: usize) -> Self {
        JsStr(Vec::with_capacity(units))
    }

    pub fn from_units(units: Vec<u16>) -> Self {
        JsStr(units)
    }

    pub fn as_units(&self) -> &[u16] {
        &self.0
    }

    pub fn into_units(self) -> Vec<u16> {
        self.0
    }

    /// JavaScript's `.length`: the number of UTF-16 code units.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether this string equals `s`, without allocating.
    pub fn eq_str(&self, s: &str) -> bool {
        s.encode_utf16().eq(self.0.iter().copied())
    }

    /// The string as UTF-8, with each lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf16_lossy(&self.0)
    }

    /// `String.prototype.slice(start, end)` over code units: negative
    /// positions count from the end, positions are clamped to the string,
    /// and `start >= end` gives the empty string. It may split a surrogate
    /// pair, leaving a lone surrogate, exactly as JavaScript does.
    pub fn slice(&self, start: isize, end: isize) -> JsStr {
        let len = self.0.len();
        let clamp = |i: isize| -> usize {
            if i < 0 {
                len.saturating_sub(i.unsigned_abs())
            } else {
                i.unsigned_abs().min(len)
            }
        };
        let (from, to) = (clamp(start), clamp(end));
        JsStr(self.0.get(from..to).unwrap_or_default().to_vec())
    }

    pub fn push_str(&mut self, s: &str) {
        self.0.extend(s.encode_utf16());
    }

    /// Appends ASCII text, one code unit per byte.
    pub fn push_ascii(&mut self, s: &[u8]) {
        self.0.extend(s.iter().map(|&b| u16::from(b)));
    }

    pub fn push_js(&mut self, s: &JsStr) {
        self.0.extend_from_slice(&s.0);
    }

    pub fn push_unit(&mut self, unit: u16) {
        self.0.push(unit);
    }

    pub fn push_units(&mut self, units: &[u16]) {
        self.0.extend_from_slice(units);
    }

    /// Characters of the string; a lone surrogate comes out as `Err(unit)`.
    fn chars(&self) -> impl Iterator<Item = Result<char, u16>> + '_ {
        char::decode_utf16(self.0.iter().copied()).map(|r| r.map_err(|e| e.unpaired_surrogate()))
    }
}

impl From<&str> for JsStr {
    fn from(s: &str) -> Self {
        JsStr(s.encode_utf16().collect())
    }
}

impl From<&String> for JsStr {
    fn from(s: &String) -> Self {
        JsStr::from(s.as_str())
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> Self {
        JsStr::from(s.as_str())
    }
}

/// Lossy: a lone surrogate shows as U+FFFD.
impl fmt::Display for JsStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for c in self.chars() {
            f.write_char(c.unwrap_or(char::REPLACEMENT_CHARACTER))?;
        }
        Ok(())
    }
}

/// `units` as a Rust string when every unit is ASCII, else `None`: for
/// text that only ASCII can make valid (numbers, ISO dates), so anything
/// else is turned away before it is parsed.
pub fn ascii_string(units: &[u16]) -> Option<String> {
    let mut out = String::with_capacity(units.len());
    for &u in units {
        out.push(char::from(u8::try_from(u).ok().filter(u8::is_ascii)?));
    }
    Some(out)
}

/// `text` in double quotes for an error message, escaped like `str`'s
/// Debug for any text a message shows (`\"`, `\\`, `\n`, `\r`, `\t`,
/// `\0`, and `\u{…}` for other control and invisible formatting
/// characters), without the Unicode printability tables Debug links into
/// the wasm. A lone surrogate of a [`JsStr`] shows as `\u{d800}`.
pub fn quote_str(text: &str) -> String {
    quote(text.chars().map(Ok), '"')
}

/// A character in single quotes, escaped as [`quote_str`] does.
pub fn quote_char(c: char) -> String {
    quote([Ok(c)].into_iter(), '\'')
}

impl JsStr {
    /// This string in double quotes, escaped as [`quote_str`] does.
    pub fn quoted(&self) -> String {
        quote(self.chars(), '"')
    }
}

fn quote(chars: impl Iterator<Item = Result<char, u16>>, mark: char) -> String {
    let mut out = String::new();
    out.push(mark);
    for c in chars {
        let c = match c {
            Ok(c) => c,
            Err(unit) => {
                push_hex_escape(&mut out, u32::from(unit));
                continue;
            }
        };
        match c {
            '\0' => out.push_str("\\0"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if c == mark => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || is_invisible_format(c) => {
                push_hex_escape(&mut out, u32::from(c))
            }
            c => out.push(c),
        }
    }
    out.push(mark);
    out
}

/// The format characters a reader would not see: zero-width and
/// direction marks, the line and paragraph separators, the word joiner
/// family and the byte-order mark.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

fn push_hex_escape(out: &mut String, code: u32) {
    out.push_str("\\u{");
    push_hex(out, code.into(), 1);
    out.push('}');
}

/// `value` in lowercase hex digits, zero-padded to at least `min_digits`.
/// Where `needle` first occurs in `hay` at or after byte `from` (a byte
/// offset of `hay`). The standard library's `str::find` with a `&str`
/// pattern brings its two-way searcher (several KB of the `.wasm`); the
/// texts searched here are short, so a plain scan does.
pub fn find_str(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() {
        return (from <= h.len()).then_some(from);
    }
    let rest = h.get(from..)?;
    rest.windows(n.len())
        .position(|w| w == n)
        .map(|at| at.saturating_add(from))
}

/// Whether `hay` contains `needle` ([`find_str`]).
pub fn contains_str(hay: &str, needle: &str) -> bool {
    find_str(hay, needle, 0).is_some()
}

/// The pieces of `hay` between occurrences of `sep` (a non-empty
/// separator), as `str::split` gives them.
pub fn split_str<'a>(hay: &'a str, sep: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(at) = find_str(hay, sep, start).filter(|_| !sep.is_empty()) {
        out.push(hay.get(start..at).unwrap_or(""));
        start = at.saturating_add(sep.len());
    }
    out.push(hay.get(start..).unwrap_or(""));
    out
}

pub fn push_hex(out: &mut String, value: u64, min_digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = (64 - value.leading_zeros()).div_ceil(4).max(min_digits);
    for k in (0..digits).rev() {
        let nibble = value.checked_shr(4 * k).unwrap_or(0) & 15;
        out.push(char::from(HEX[nibble as usize]));
    }
}

/// Quoted like `str`'s Debug; a lone surrogate shows as `\u{d800}`.
impl fmt::Debug for JsStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        f.write_char('"')?;
        for c in self.chars() {
            match c {
                Ok(c) => {
                    for e in c.escape_debug() {
                        f.write_char(e)?;
                    }
                }
                Err(unit) => write!(f, "\\u{{{unit:x}}}")?,
            }
        }
        f.write_char('"')
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    #[test]
    fn find_contains_and_split_match_the_standard_library() {
        let texts = [
            "",
            "a",
            "aaa",
            "a && b && c",
            "x (y) (z",
            "日本語 && ok",
            "&&",
            "&&&&",
        ];
        let needles = ["", "a", "aa", "&&", " (", "語", "zzz"];
        for hay in texts {
            for needle in needles {
                assert_eq!(
                    contains_str(hay, needle),
                    hay.contains(needle),
                    "{hay:?} {needle:?}"
                );
                assert_eq!(
                    find_str(hay, needle, 0),
                    hay.find(needle),
                    "{hay:?} {needle:?}"
                );
                if !needle.is_empty() {
                    let std: Vec<&str> = hay.split(needle).collect();
                    assert_eq!(split_str(hay, needle), std, "{hay:?} {needle:?}");
                }
            }
        }
        assert_eq!(find_str("abab", "ab", 1), Some(2));
        assert_eq!(find_str("ab", "b", 9), None);
    }

    use super::{ascii_string, push_hex};

    #[test]
    fn hex_digits_are_zero_padded_to_the_minimum() {
        let hex = |value: u64, min: u32| {
            let mut out = String::new();
            push_hex(&mut out, value, min);
            out
        };
        assert_eq!(hex(0, 1), "0");
        assert_eq!(hex(0xabc, 1), "abc");
        assert_eq!(hex(5, 8), "00000005");
        assert_eq!(hex(0x1_2345_6789, 8), "123456789");
        assert_eq!(hex(u64::MAX, 2), "ffffffffffffffff");
        assert_eq!(hex(u64::MAX, 20), "0000ffffffffffffffff");
    }

    #[test]
    fn ascii_string_takes_ascii_units_only() {
        let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        assert_eq!(
            ascii_string(&units("2024-01-02T03:04:05.678Z")).as_deref(),
            Some("2024-01-02T03:04:05.678Z")
        );
        assert_eq!(ascii_string(&[]).as_deref(), Some(""));
        // Not a byte's worth: never cut down to one (U+0131 is not "1").
        for odd in [
            &units("1é")[..],
            &units("１")[..],
            &[0x31, 0x0131],
            &[0xD800],
            &[0x80],
        ] {
            assert_eq!(ascii_string(odd), None, "{odd:?}");
        }
    }

    #[test]
    fn quoting_for_messages_reads_as_debug_does_for_text_a_message_shows() {
        let samples = [
            "",
            "plain ascii 123 !?#",
            "quote \" and backslash \\ and 'single'",
            "tab\tnew\nline\rnul\0bell\u{7}del\u{7f}c1\u{85}",
            "é日本語 😀 €, ß, Ω",
            "zero\u{200b}width\u{200d}bom\u{feff}ls\u{2028}ps\u{2029}rlo\u{202e}wj\u{2060}shy\u{ad}",
        ];
        for text in samples {
            assert_eq!(quote_str(text), format!("{text:?}"), "{text:?}");
            assert_eq!(JsStr::from(text).quoted(), quote_str(text));
            for c in text.chars() {
                assert_eq!(quote_char(c), format!("{c:?}"), "{c:?}");
            }
        }
        let lone = JsStr::from_units(vec![0x61, 0xd800, 0x62, 0xdfff]);
        assert_eq!(lone.quoted(), "\"a\\u{d800}b\\u{dfff}\"");
        assert_eq!(lone.quoted(), format!("{lone:?}"));
    }
    use super::*;
    use proptest::prelude::*;

    fn js(s: &str) -> JsStr {
        JsStr::from(s)
    }

    #[test]
    fn length_counts_utf16_units() {
        assert_eq!(js("").len(), 0);
        assert!(js("").is_empty());
        assert_eq!(js("abc").len(), 3);
        assert_eq!(js("é").len(), 1);
        assert_eq!(js("日本語").len(), 3);
        assert_eq!(js("😀").len(), 2);
        assert_eq!(js("a😀b").len(), 4);
        assert_eq!(JsStr::from_units(vec![0xD800]).len(), 1);
    }

    #[test]
    fn order_is_by_code_units_like_js_sort() {
        assert!(js("Z") < js("a"));
        assert!(js("B") < js("a"));
        assert!(js("a") < js("ab"));
        assert!(js("") < js("a"));
        // U+FFFF is one unit 0xFFFF; U+1F600 starts with 0xD83D, so in
        // JavaScript "\u{FFFF}" > "\u{1F600}" although its code point is lower.
        assert!(js("\u{FFFF}") > js("\u{1F600}"));
        assert!("\u{FFFF}" < "\u{1F600}"); // Rust's str order differs
        let mut v = [js("b"), js("😀"), js("\u{FFFF}"), js("B"), js("a")];
        v.sort();
        let got: Vec<String> = v.iter().map(|s| s.to_string_lossy()).collect();
        assert_eq!(got, ["B", "a", "b", "😀", "\u{FFFF}"]);
    }

    #[test]
    fn eq_str_compares_content() {
        assert!(js("héllo 😀").eq_str("héllo 😀"));
        assert!(!js("héllo").eq_str("hello"));
        assert!(!js("ab").eq_str("abc"));
        assert!(!js("abc").eq_str("ab"));
        assert!(JsStr::new().eq_str(""));
        assert!(!JsStr::from_units(vec![0xFFFD]).eq_str("\u{D7FF}"));
        assert!(!JsStr::from_units(vec![0xD800]).eq_str("\u{FFFD}"));
    }

    #[test]
    fn slice_follows_string_prototype_slice() {
        let s = js("hello");
        let sl = |a, b| s.slice(a, b).to_string_lossy();
        assert_eq!(sl(0, 2), "he");
        assert_eq!(sl(1, 100), "ello");
        assert_eq!(sl(-3, 5), "llo");
        assert_eq!(sl(-3, -1), "ll");
        assert_eq!(sl(-100, 2), "he");
        assert_eq!(sl(3, 1), "");
        assert_eq!(sl(5, 5), "");
        assert_eq!(sl(7, 9), "");
        assert_eq!(sl(isize::MIN, isize::MAX), "hello");
        // Splitting a surrogate pair leaves a lone high surrogate.
        let e = js("a😀b");
        assert_eq!(e.slice(0, 2).as_units(), &[0x61, 0xD83D]);
        assert_eq!(e.slice(2, 4).as_units(), &[0xDE00, 0x62]);
    }

    #[test]
    fn push_builds_strings() {
        let mut s = JsStr::new();
        s.push_str("a😀");
        s.push_js(&js("日"));
        s.push_unit(0xDC00);
        s.push_units(&[0x41]);
        assert_eq!(s.as_units(), &[0x61, 0xD83D, 0xDE00, 0x65E5, 0xDC00, 0x41]);
    }

    #[test]
    fn lossy_display_and_debug() {
        let s = JsStr::from_units(vec![0x61, 0xD800, 0x22, 0xD83D, 0xDE00]);
        assert_eq!(s.to_string_lossy(), "a\u{FFFD}\"😀");
        assert_eq!(s.to_string(), "a\u{FFFD}\"😀");
        assert_eq!(format!("{s:?}"), "\"a\\u{d800}\\\"😀\"");
    }

    proptest! {
        #[test]
        fn ord_matches_unit_slices(a in proptest::collection::vec(any::<u16>(), 0..6),
                                   b in proptest::collection::vec(any::<u16>(), 0..6)) {
            let (x, y) = (JsStr::from_units(a.clone()), JsStr::from_units(b.clone()));
            prop_assert_eq!(x.cmp(&y), a.as_slice().cmp(b.as_slice()));
        }

        #[test]
        fn slice_matches_a_model(units in proptest::collection::vec(any::<u16>(), 0..10),
                                 start in -12isize..12, end in -12isize..12) {
            let len = units.len() as isize;
            let norm = |i: isize| if i < 0 { (len + i).max(0) } else { i.min(len) };
            let (from, to) = (norm(start), norm(end));
            let want: Vec<u16> = if from < to { units[from as usize..to as usize].to_vec() } else { vec![] };
            prop_assert_eq!(JsStr::from_units(units).slice(start, end).into_units(), want);
        }

        #[test]
        fn str_round_trips(s in ".*") {
            let j = JsStr::from(s.as_str());
            prop_assert!(j.eq_str(&s));
            prop_assert_eq!(j.to_string_lossy(), s.clone());
            prop_assert_eq!(j.len(), s.encode_utf16().count());
        }
    }
}
