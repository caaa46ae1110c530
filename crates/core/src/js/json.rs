//! JSON values with JavaScript's semantics: what `JSON.parse` accepts
//! (including lone surrogate escapes), the key order of JavaScript objects,
//! and the exact text of `JSON.stringify(value)`.
//!
//! Parsing and printing use explicit stacks, never recursion, and parsing
//! refuses nesting deeper than [`MAX_DEPTH`] so that the derived `Drop`,
//! `Clone` and `PartialEq` (which do recurse) stay shallow.

use crate::js::number::{format_number, parse_decimal};
use crate::js::string::{quote_char, JsStr};
use crate::sorted::sort_by;

/// The deepest nesting of arrays and objects [`parse`] accepts (JavaScript's
/// own `JSON.parse` has no limit). The derived `Clone` and `PartialEq` of a
/// value recurse and, in a release build, overflow a 1 MB stack (wasm's
/// default) at about 5,000 levels, `Drop` at about 12,000; 1,000 leaves room.
/// Code that builds deeper values by other means must bound them itself.
pub const MAX_DEPTH: usize = 1000;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(JsStr),
    Array(Vec<Json>),
    Object(JsonObject),
}

impl Json {
    /// The value with every object's keys sorted: for comparing values key
    /// order aside (tests and fuzzing; nothing in the `.wasm` calls it).
    pub fn canonical(&self) -> Json {
        match self {
            Json::Array(items) => Json::Array(items.iter().map(Json::canonical).collect()),
            Json::Object(o) => {
                let mut entries: Vec<(JsStr, Json)> =
                    o.iter().map(|(k, v)| (k.clone(), v.canonical())).collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Json::Object(JsonObject::from_entries(entries))
            }
            other => other.clone(),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(x) => Some(*x),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&JsStr> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&JsonObject> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// A property of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object()?.get(key)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::String(JsStr::from(s))
    }
}

impl From<JsStr> for Json {
    fn from(s: JsStr) -> Self {
        Json::String(s)
    }
}

impl From<f64> for Json {
    fn from(x: f64) -> Self {
        Json::Number(x)
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

/// A JavaScript object's own properties in its enumeration order: keys that
/// are array indices first, in ascending numeric order, then the other keys
/// in the order they were first set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonObject {
    entries: Vec<(JsStr, Json)>,
}

/// The value of `key` if it is an array index: the canonical decimal text of
/// an integer in `0..=2^32 - 2` ("0", "7"; not "01", "-1" or "4294967295").
fn array_index(key: &[u16]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.first() == Some(&0x30)) {
        return None;
    }
    let mut value: u64 = 0;
    for &u in key {
        if !(0x30..=0x39).contains(&u) {
            return None;
        }
        value = value * 10 + u64::from(u - 0x30);
    }
    u32::try_from(value).ok().filter(|&v| v != u32::MAX)
}

/// Sort key of the enumeration order: indices before other keys.
fn order_key(key: &JsStr) -> (bool, u32) {
    match array_index(key.as_units()) {
        Some(i) => (false, i),
        None => (true, 0),
    }
}

impl JsonObject {
    pub fn new() -> Self {
        JsonObject::default()
    }

    /// An object with properties set in the given order, as `JSON.parse`
    /// does: a repeated key keeps its first position and its last value.
    pub fn from_entries(entries: Vec<(JsStr, Json)>) -> Self {
        // Small objects: repeated insert is quadratic but cheapest.
        if entries.len() <= 16 {
            let mut obj = JsonObject {
                entries: Vec::with_capacity(entries.len()),
            };
            entries.into_iter().for_each(|(k, v)| obj.insert(k, v));
            return obj;
        }
        // Sorting rather than hashing: no hasher to seed and less code in the wasm.
        // Stable sorts keep equal keys, and then the other keys, in source order.
        let mut tagged: Vec<(usize, JsStr, Json)> = entries
            .into_iter()
            .enumerate()
            .map(|(i, (k, v))| (i, k, v))
            .collect();
        sort_by(&mut tagged, |a, b| a.1.cmp(&b.1));
        let mut kept: Vec<(usize, JsStr, Json)> = Vec::with_capacity(tagged.len());
        for (i, key, value) in tagged {
            match kept.last_mut() {
                // A repeated key: the last value wins, the first position stays.
                Some(last) if last.1 == key => last.2 = value,
                _ => kept.push((i, key, value)),
            }
        }
        sort_by(&mut kept, |a, b| {
            (order_key(&a.1), a.0).cmp(&(order_key(&b.1), b.0))
        });
        let kept = kept.into_iter().map(|(_, k, v)| (k, v)).collect();
        JsonObject { entries: kept }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        self.entries
            .iter()
            .find(|(k, _)| k.eq_str(key))
            .map(|(_, v)| v)
    }

    pub fn get_js(&self, key: &JsStr) -> Option<&Json> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets a property as JavaScript assignment does: an existing key keeps
    /// its position and takes the new value; a new key goes to its place in
    /// the enumeration order.
    pub fn insert(&mut self, key: JsStr, value: Json) {
        if let Some(slot) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        let at = match array_index(key.as_units()) {
            None => self.entries.len(),
            Some(i) => self
                .entries
                .partition_point(|(k, _)| array_index(k.as_units()).is_some_and(|j| j < i)),
        };
        self.entries.insert(at, (key, value));
    }

    /// Deletes a property, as `delete obj[key]` does.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let at = self.entries.iter().position(|(k, _)| k.eq_str(key))?;
        Some(self.entries.remove(at).1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&JsStr, &Json)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &JsStr> {
        self.entries.iter().map(|(k, _)| k)
    }
}

/// Why [`parse`] failed, and where: `position` counts UTF-16 code units from
/// the start of the text, as JavaScript's error messages do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} in JSON at position {position}")]
pub struct JsonError {
    pub kind: JsonErrorKind,
    pub position: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonErrorKind {
    #[error("unexpected end of input")]
    UnexpectedEnd,
    #[error("unexpected character {}", quote_char(*.0))]
    UnexpectedChar(char),
    #[error("bad escape sequence")]
    BadEscape,
    #[error("unescaped control character in string")]
    ControlCharacter,
    #[error("nesting deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// A container being parsed; for an object, the key awaiting its value.
enum Open {
    Array(Vec<Json>),
    Object(Vec<(JsStr, Json)>, JsStr),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, kind: JsonErrorKind) -> JsonError {
        // Only reached on failure, so the UTF-16 position is computed lazily.
        let position = match self.text.get(..self.at) {
            Some(before) => before.encode_utf16().count(),
            None => self.at,
        };
        JsonError { kind, position }
    }

    /// The error for whatever stands at the current position.
    fn unexpected(&self) -> JsonError {
        match self
            .text
            .get(self.at..)
            .and_then(|rest| rest.chars().next())
        {
            Some(c) => self.error(JsonErrorKind::UnexpectedChar(c)),
            None => self.error(JsonErrorKind::UnexpectedEnd),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips whitespace, then consumes `byte` or fails.
    fn expect(&mut self, byte: u8) -> Result<(), JsonError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, JsonError> {
        for &b in word.as_bytes() {
            if self.peek() != Some(b) {
                return Err(self.unexpected());
            }
            self.at += 1;
        }
        Ok(value)
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.unexpected()),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.unexpected());
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.unexpected());
            }
        }
        // Parsed as JavaScript does (correctly rounded, ±Infinity on
        // overflow); the text is known to be a valid literal by now.
        let x = self.text.get(start..self.at).map(parse_decimal);
        x.map(Json::Number).ok_or_else(|| self.unexpected())
    }

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let mut unit = 0u16;
        for _ in 0..4 {
            let digit = self.peek().and_then(|b| char::from(b).to_digit(16));
            match digit {
                Some(d) => unit = unit << 4 | d as u16,
                None => return Err(self.error(JsonErrorKind::BadEscape)),
            }
            self.at += 1;
        }
        Ok(unit)
    }

    /// A string, the opening quote already consumed.
    fn string(&mut self) -> Result<JsStr, JsonError> {
        let mut out = JsStr::new();
        loop {
            let run_start = self.at;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            // The run ends at an ASCII byte (or the end), so at a char boundary.
            out.push_str(self.text.get(run_start..self.at).unwrap_or_default());
            match self.peek() {
                None => return Err(self.error(JsonErrorKind::UnexpectedEnd)),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let unit = match self.peek() {
                        Some(b'"') => 0x22,
                        Some(b'\\') => 0x5C,
                        Some(b'/') => 0x2F,
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0C,
                        Some(b'n') => 0x0A,
                        Some(b'r') => 0x0D,
                        Some(b't') => 0x09,
                        Some(b'u') => {
                            self.at += 1;
                            out.push_unit(self.hex4()?);
                            continue;
                        }
                        None => return Err(self.error(JsonErrorKind::UnexpectedEnd)),
                        Some(_) => return Err(self.error(JsonErrorKind::BadEscape)),
                    };
                    self.at += 1;
                    out.push_unit(unit);
                }
                Some(_) => return Err(self.error(JsonErrorKind::ControlCharacter)),
            }
        }
    }

    /// An object key and its colon.
    fn key(&mut self) -> Result<JsStr, JsonError> {
        self.expect(b'"')?;
        let key = self.string()?;
        self.expect(b':')?;
        Ok(key)
    }
}

/// `JSON.parse(text)`, accepting exactly the texts JavaScript accepts (up to
/// [`MAX_DEPTH`] levels of nesting).
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut stack: Vec<Open> = Vec::new();
    loop {
        // Read one value; an opened container pushes a frame and reads on.
        p.skip_whitespace();
        let mut value = match p.peek() {
            Some(open @ (b'[' | b'{')) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(p.error(JsonErrorKind::TooDeep));
                }
                p.at += 1;
                p.skip_whitespace();
                if open == b'[' {
                    if p.peek() == Some(b']') {
                        p.at += 1;
                        Json::Array(Vec::new())
                    } else {
                        stack.push(Open::Array(Vec::new()));
                        continue;
                    }
                } else if p.peek() == Some(b'}') {
                    p.at += 1;
                    Json::Object(JsonObject::new())
                } else {
                    let key = p.key()?;
                    stack.push(Open::Object(Vec::new(), key));
                    continue;
                }
            }
            Some(b'"') => {
                p.at += 1;
                Json::String(p.string()?)
            }
            Some(b't') => p.literal("true", Json::Bool(true))?,
            Some(b'f') => p.literal("false", Json::Bool(false))?,
            Some(b'n') => p.literal("null", Json::Null)?,
            Some(b'-' | b'0'..=b'9') => p.number()?,
            _ => return Err(p.unexpected()),
        };
        // Hand the value to its container, closing containers that end here.
        loop {
            p.skip_whitespace();
            let Some(top) = stack.last_mut() else {
                return match p.peek() {
                    None => Ok(value),
                    Some(_) => Err(p.unexpected()),
                };
            };
            let (close, more) = match top {
                Open::Array(items) => {
                    items.push(value);
                    (b']', p.peek() == Some(b','))
                }
                Open::Object(entries, key) => {
                    entries.push((std::mem::take(key), value));
                    (b'}', p.peek() == Some(b','))
                }
            };
            if more {
                p.at += 1;
                if let Open::Object(_, key) = top {
                    *key = p.key()?;
                }
                break;
            }
            if p.peek() != Some(close) {
                return Err(p.unexpected());
            }
            p.at += 1;
            value = match stack.pop() {
                Some(Open::Array(items)) => Json::Array(items),
                Some(Open::Object(entries, _)) => Json::Object(JsonObject::from_entries(entries)),
                None => Json::Null, // unreachable: `top` was there
            };
        }
    }
}

/// Where printed text goes: a string, or a counter of its length.
trait Sink {
    fn ascii(&mut self, s: &[u8]);
    fn units(&mut self, units: &[u16]);
}

impl Sink for JsStr {
    fn ascii(&mut self, s: &[u8]) {
        self.push_ascii(s);
    }
    fn units(&mut self, units: &[u16]) {
        self.push_units(units);
    }
}

struct Counter(usize);

impl Sink for Counter {
    fn ascii(&mut self, s: &[u8]) {
        self.0 += s.len();
    }
    fn units(&mut self, units: &[u16]) {
        self.0 += units.len();
    }
}

/// A string literal as `JSON.stringify` writes it (ES2019 well-formed form).
fn quote(s: &JsStr, out: &mut impl Sink) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.ascii(b"\"");
    let units = s.as_units();
    let mut run_start = 0;
    let mut i = 0;
    while let Some(&u) = units.get(i) {
        let next = units.get(i + 1).copied();
        let paired =
            (0xD800..=0xDBFF).contains(&u) && next.is_some_and(|n| (0xDC00..=0xDFFF).contains(&n));
        let escape: &[u8] = match u {
            0x22 => b"\\\"",
            0x5C => b"\\\\",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0x0A => b"\\n",
            0x0D => b"\\r",
            0x09 => b"\\t",
            0..=0x1F | 0xD800..=0xDFFF if !paired => b"\\u",
            _ => {
                i += if paired { 2 } else { 1 };
                continue;
            }
        };
        out.units(units.get(run_start..i).unwrap_or_default());
        out.ascii(escape);
        if escape == b"\\u" {
            let hex = |shift: u16| u16::from(HEX[usize::from(u >> shift & 0xF)]);
            out.units(&[hex(12), hex(8), hex(4), hex(0)]);
        }
        i += 1;
        run_start = i;
    }
    out.units(units.get(run_start..).unwrap_or_default());
    out.ascii(b"\"");
}

fn write_json(value: &Json, out: &mut impl Sink) {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Json>),
        Object(std::slice::Iter<'a, (JsStr, Json)>),
    }
    let mut stack: Vec<(Frame, bool)> = Vec::new();
    let mut next = Some(value);
    loop {
        match next.take() {
            None => {}
            Some(Json::Null) => out.ascii(b"null"),
            Some(Json::Bool(b)) => out.ascii(if *b { b"true" } else { b"false" }),
            Some(Json::Number(x)) if !x.is_finite() => out.ascii(b"null"),
            Some(Json::Number(x)) => out.ascii(format_number(*x).as_bytes()),
            Some(Json::String(s)) => quote(s, out),
            Some(Json::Array(items)) => {
                out.ascii(b"[");
                stack.push((Frame::Array(items.iter()), true));
            }
            Some(Json::Object(o)) => {
                out.ascii(b"{");
                stack.push((Frame::Object(o.entries.iter()), true));
            }
        }
        let Some((frame, first)) = stack.last_mut() else {
            return;
        };
        let item = match frame {
            Frame::Array(items) => items.next().map(|v| (None, v)),
            Frame::Object(entries) => entries.next().map(|(k, v)| (Some(k), v)),
        };
        match item {
            Some((key, v)) => {
                if !std::mem::replace(first, false) {
                    out.ascii(b",");
                }
                if let Some(key) = key {
                    quote(key, out);
                    out.ascii(b":");
                }
                next = Some(v);
            }
            None => {
                out.ascii(if matches!(frame, Frame::Array(_)) {
                    b"]"
                } else {
                    b"}"
                });
                stack.pop();
            }
        }
    }
}

/// Appends `JSON.stringify(value)` (no indentation) to `out`.
pub fn stringify(value: &Json, out: &mut JsStr) {
    write_json(value, out);
}

/// `JSON.stringify(value)` (no indentation) as a new string.
pub fn stringified(value: &Json) -> JsStr {
    let mut out = JsStr::new();
    write_json(value, &mut out);
    out
}

/// `JSON.stringify(value).length`, without building the string.
pub fn stringify_len(value: &Json) -> usize {
    let mut counter = Counter(0);
    write_json(value, &mut counter);
    counter.0
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
