//! The tokenizer of the history search: the terms of a text, each with its
//! byte range, so that the index counts them and an excerpt finds them.
//!
//! What a developer's conversation is searched for decides what a word is:
//!
//! - runs of letters, digits and `_` are words, numbers included; letters of
//!   any alphabetic script (é, ß, Cyrillic, Greek) belong to words;
//! - an identifier also gives its parts: `parseConfigFile` is `parseconfigfile`,
//!   `parse`, `config` and `file`; `ERR_MODULE_NOT_FOUND` is itself and `err`,
//!   `module`, `not`, `found`;
//! - words joined by `/ . - : \` without a space are also one whole term:
//!   `src/lib/foo.ts`, `1.2.3`, `std::fs::read`, `pi-agent-core`;
//! - Chinese, Japanese and Korean text, written without spaces, gives its
//!   overlapping character pairs (a lone character stands for itself);
//! - plain English words are folded to a rough stem ([`fold`]), so that
//!   "decided", "decision" and "decide" meet; identifiers, numbers and paths
//!   are kept as written (lowercased).
//!
//! Characters are classed by code point ranges rather than Unicode tables
//! (they would cost the `.wasm` kilobytes): the punctuation, symbol and
//! emoji blocks separate words, everything else outside ASCII is a letter.
//! Lowercasing outside ASCII goes to the engine's (see `crate::js::engine`).

use crate::js::engine::to_lowercase;

/// A term longer than this many bytes is cut (at a character boundary),
/// alike in the texts and in the queries.
pub const MAX_TERM_BYTES: usize = 64;

/// The terms of one text beyond this many are not counted: a passage of
/// ~1,000 characters gives a few hundred.
pub const MAX_TERMS: usize = 2048;

/// What a term is, which the ranking weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole word (an identifier, a number, a folded English word).
    Word,
    /// A part of an identifier.
    Part,
    /// Words joined by `/ . - : \` (a path, a version, a qualified name).
    Joined,
    /// A pair of CJK characters, or a lone one.
    Cjk,
}

/// A term and where the text has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// Lowercased, folded if an English word, at most [`MAX_TERM_BYTES`].
    pub text: String,
    /// The byte range of what it stands for in the text.
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Word,
    Joiner,
    Cjk,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() || c == '_' {
            Class::Word
        } else if matches!(c, '/' | '.' | '-' | ':' | '\\') {
            Class::Joiner
        } else {
            Class::Other
        };
    }
    let u = u32::from(c);
    if is_cjk(c, u) {
        Class::Cjk
    } else if is_separator(u) {
        Class::Other
    } else {
        Class::Word
    }
}

/// Han, kana and Hangul as the token estimate classifies them, and
/// half-width katakana (which the estimate counts with CJK punctuation).
fn is_cjk(c: char, u: u32) -> bool {
    crate::tokens::calibrated::is_cjk(c) || (0xFF66..=0xFF9F).contains(&u)
}

/// Spaces, punctuation, symbols, arrows, box drawing, emoji, variation
/// selectors and private use: the blocks that hold no letters (ª, µ and º
/// are letters of Latin-1's symbol block).
fn is_separator(u: u32) -> bool {
    matches!(
        u,
        0x80..=0xA9
            | 0xAB..=0xB4
            | 0xB6..=0xB9
            | 0xBB..=0xBF
            | 0xD7
            | 0xF7
            | 0x2000..=0x2BFF
            | 0x2E00..=0x2E7F
            | 0x3000..=0x303F
            | 0xE000..=0xF8FF
            | 0xFE00..=0xFE0F
            | 0xFE30..=0xFE4F
            | 0xFEFF
            | 0xFF00..=0xFF0F
            | 0xFF1A..=0xFF20
            | 0xFF3B..=0xFF40
            | 0xFF5B..=0xFF65
            | 0xFFF0..=0xFFFF
            | 0x1F000..=0x1FAFF
    )
}

/// The terms of `text`, at most [`MAX_TERMS`], in the text's order (a word
/// before its parts, a chain of joined words after its last word).
pub fn terms(text: &str) -> Vec<Term> {
    let mut out = Terms {
        text,
        terms: Vec::new(),
    };
    // The word being read, the chain of joined words it may continue (its
    // start, end and word count; `joining`: only joiners since its end) and
    // the CJK character just before.
    let mut word: Option<usize> = None;
    let mut chain: Option<(usize, usize, usize)> = None;
    let mut joining = false;
    let mut cjk: Option<(usize, bool)> = None;
    let mut chars = text.char_indices();
    loop {
        // The text's end counts as a separator.
        let (i, c, class) = match chars.next() {
            Some((i, c)) => (i, c, class(c)),
            None => (text.len(), ' ', Class::Other),
        };
        if class == Class::Word {
            word.get_or_insert(i);
            continue;
        }
        if let Some(start) = word.take() {
            out.word(start, i);
            chain = match chain {
                Some((s, _, n)) if joining => Some((s, i, n.saturating_add(1))),
                _ => Some((start, i, 1)),
            };
        }
        if class == Class::Joiner && chain.is_some() {
            joining = true;
        } else {
            joining = false;
            out.chain(chain.take());
        }
        match (class, cjk) {
            (Class::Cjk, Some((prev, _))) => {
                out.push(prev, i.saturating_add(c.len_utf8()), Kind::Cjk, false);
                cjk = Some((i, true));
            }
            (Class::Cjk, None) => cjk = Some((i, false)),
            (_, Some((prev, paired))) => {
                if !paired {
                    out.push(prev, i, Kind::Cjk, false);
                }
                cjk = None;
            }
            (_, None) => {}
        }
        if i == text.len() || out.terms.len() >= MAX_TERMS {
            break;
        }
    }
    out.terms.truncate(MAX_TERMS);
    out.terms
}

struct Terms<'a> {
    text: &'a str,
    terms: Vec<Term>,
}

impl Terms<'_> {
    fn slice(&self, start: usize, end: usize) -> &str {
        self.text.get(start..end).unwrap_or("")
    }

    /// The term of `text[start..end]`, lowercased (CJK has no case: not
    /// sent to the engine), and folded if `folded` and it is a plain
    /// English word.
    fn push(&mut self, start: usize, end: usize, kind: Kind, folded: bool) {
        let lower = match kind {
            Kind::Cjk => self.slice(start, end).to_owned(),
            _ => to_lowercase(self.slice(start, end)),
        };
        let text = if folded && is_plain(&lower) {
            fold(&lower)
        } else {
            lower
        };
        self.terms.push(Term {
            text: capped(text),
            start,
            end,
            kind,
        });
    }

    /// A word and, for an identifier, its parts: a word is folded unless
    /// it is an identifier, parts are.
    fn word(&mut self, start: usize, end: usize) {
        let parts = parts(self.slice(start, end));
        self.push(start, end, Kind::Word, parts.is_empty());
        for (s, e) in parts {
            let (s, e) = (start.saturating_add(s), start.saturating_add(e));
            self.push(s, e, Kind::Part, true);
        }
    }

    fn chain(&mut self, chain: Option<(usize, usize, usize)>) {
        if let Some((start, end, words)) = chain {
            if words >= 2 {
                self.push(start, end, Kind::Joined, false);
            }
        }
    }
}

/// The other form a query's whole word `term` (of `text`) is looked up
/// by, so that its case does not decide what it finds: a word of plain
/// letters is folded as English (`files` → `fil`) while an identifier is
/// kept as written (`getFiles` → `getfiles`), so `getfiles` also looks up
/// the identifier's term and `getFiles` the folded word's. None for a term
/// that is not a word or whose lowercase is not plain letters.
pub fn other_form(text: &str, term: &Term) -> Option<String> {
    if term.kind != Kind::Word {
        return None;
    }
    let lower = to_lowercase(text.get(term.start..term.end)?);
    if !is_plain(&lower) {
        return None;
    }
    let folded = capped(fold(&lower));
    let other = if term.text == folded {
        capped(lower)
    } else {
        folded
    };
    (other != term.text).then_some(other)
}

/// `text` cut to [`MAX_TERM_BYTES`] at a character boundary.
fn capped(mut text: String) -> String {
    if text.len() > MAX_TERM_BYTES {
        let mut end = MAX_TERM_BYTES;
        while !text.is_char_boundary(end) {
            end = end.saturating_sub(1);
        }
        text.truncate(end);
    }
    text
}

/// Only ASCII lowercase letters: an English word that [`fold`] may fold.
fn is_plain(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase())
}

/// The byte ranges of an identifier's parts, split at `_` and at ASCII
/// case changes (`parseConfig`, `utf8Decoder`, `HTTPServer`, but not the
/// plural `APIs`); none if `word` is not an identifier (a single part).
fn parts(word: &str) -> Vec<(usize, usize)> {
    let bytes = word.as_bytes();
    let mut parts = Vec::new();
    let mut start: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            if let Some(s) = start.take() {
                parts.push((s, i));
            }
            continue;
        }
        let at = |k: usize| bytes.get(k).copied().unwrap_or(b' ');
        let prev = if i == 0 { b' ' } else { at(i - 1) };
        let boundary = b.is_ascii_uppercase()
            && ((prev.is_ascii_lowercase() || prev.is_ascii_digit())
                || (prev.is_ascii_uppercase()
                    && at(i + 1).is_ascii_lowercase()
                    && at(i + 2).is_ascii_lowercase()));
        match start {
            Some(s) if boundary => {
                parts.push((s, i));
                start = Some(i);
            }
            None => start = Some(i),
            Some(_) => {}
        }
    }
    if let Some(s) = start {
        parts.push((s, bytes.len()));
    }
    let whole = parts.len() == 1 && parts.first() == Some(&(0, bytes.len()));
    if whole {
        parts.clear();
    }
    parts
}

/// A light folding of English suffixes, so that a word's forms meet:
/// plurals (`tests`, `matches`, `copies`), `-ed`, `-ing` (with a doubled
/// consonant undone: `stopped`), `-sion`/`-tion` (`decision` → `decid`,
/// `creation` → `creat`) and a final `e` (`decide` → `decid`, but `see`). Stems need
/// not be words, only the same for a word's forms; `word` is lowercase
/// ASCII letters.
pub fn fold(word: &str) -> String {
    let mut w = word.to_owned();
    if w.len() < 3 {
        return w;
    }
    // The plural.
    if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if w.ends_with("ies") && w.len() > 4 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if ["ches", "shes", "xes", "zes"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 1);
    }
    // One verb or noun ending.
    let n = w.len();
    if w.ends_with("ied") && n > 4 {
        w.truncate(n - 3);
        w.push('y');
    } else if w.ends_with("ing") && n >= 6 {
        w.truncate(n - 3);
        undouble(&mut w);
    } else if w.ends_with("ed") && !w.ends_with("eed") && n >= 4 {
        w.truncate(n - 2);
        undouble(&mut w);
    } else if w.ends_with("ssion") {
        w.truncate(n - 3);
    } else if w.ends_with("sion") && n >= 6 {
        w.truncate(n - 4);
        w.push('d');
    } else if w.ends_with("tion") && n >= 6 {
        w.truncate(n - 3);
    }
    if w.ends_with('e') && !w.ends_with("ee") && w.len() >= 3 {
        w.truncate(w.len() - 1);
    }
    w
}

/// `stopp` → `stop`, `committ` → `commit`; not `ll`, `ss`, `zz` (`call`,
/// `pass`) nor a short stem (`add`).
fn undouble(w: &mut String) {
    let b = w.as_bytes();
    if let [.., x, y] = b {
        if b.len() >= 4 && x == y && !matches!(y, b'l' | b's' | b'z') {
            w.pop();
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
