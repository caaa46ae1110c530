//! What an adapter asks of the history search for one conversation: which
//! messages the model no longer sees, which text of a message is searched,
//! what an index must drop and add to be in step with the array, and a
//! search in two steps — the ranking, then the hits made from the texts of
//! the few messages ranked (an adapter reads those texts only, not every
//! message's).

use super::excerpt::excerpt;
use super::index::{Hit, Index};
use super::passage::passages;
use super::rank::{check_limit, query, rank, QueryTerm, Ranked, MAX_LIMIT};
use super::reference::{fingerprint, Page, Reference, DEFAULT_PAGE_CHARS, MAX_PAGE_CHARS};
use super::HistoryError;
use crate::conversation::view::Step;
use crate::error::InputError;
use crate::js::options::{expect_object, Reader, Value};
use crate::js::shape::{Field, Shape};
use crate::message::pinned::model_view;
use crate::message::role::Role;
use crate::tokens::estimate::MessageTexts;

/// The messages the history holds for an array of `len` whose last
/// summary is at `summary` (none: no summary yet), `pinned` its pinned
/// messages (ascending; those at or after the summary are not looked at)
/// and `steps` its model view: what the summary left out
/// ([`hidden_before`]: every message before it but the pinned ones, which
/// the model is sent again after it) and the tool results the view sends
/// as placeholders; ascending. A message after the summary that the view
/// leaves out (a failed attempt) is not in it: no summary left it out, and
/// a store, which keeps no view, indexes up to its last summary only. Which
/// of them have text to search is [`message_text`]'s answer.
pub fn hidden(len: usize, summary: Option<usize>, pinned: &[usize], steps: &[Step]) -> Vec<usize> {
    let mut held = vec![false; len];
    if let Some(s) = summary {
        for i in hidden_before(0, s.min(len), pinned) {
            held[i] = true;
        }
    }
    for step in steps {
        if let Step::Placeholder { result, .. } = *step {
            if let Some(h) = held.get_mut(result) {
                *h = true;
            }
        }
    }
    (0..len).filter(|&i| held[i]).collect()
}

/// The messages of `from..summary` that are hidden while the summary at
/// `summary` is the last: those its model view does not send, so every one
/// of them but the pinned ones (`pinned`, ascending; those at or after
/// `summary` are not looked at), which the model is sent again after it.
/// The `Compactor`'s history is these ([`hidden`], with `from` 0) and the
/// cleared tool outputs; a store indexes these when a save or a search
/// makes its index reach that summary, from the pinned messages it keeps
/// track of rather than a view it builds.
pub fn hidden_before(from: usize, summary: usize, pinned: &[usize]) -> Vec<usize> {
    let resent = &pinned[..pinned.partition_point(|&i| i < summary)];
    let mut sent = vec![false; summary];
    for i in model_view(summary.saturating_add(1), Some(summary), resent) {
        if let Some(s) = sent.get_mut(i) {
            *s = true;
        }
    }
    (from..summary).filter(|&i| !sent[i]).collect()
}

/// The text of a message that the history holds, from its texts as the
/// boundary gathers them: what the user wrote, the assistant's text and
/// tool calls (name and arguments, their JSON's escapes read: see
/// [`unescape_json`]), a tool's output, a command and its output, a branch
/// summary. None for a compaction summary and a clearing marker (they
/// stand for the text the history keeps), for thinking, and for a message
/// with no text.
pub fn message_text(m: &MessageTexts) -> Option<String> {
    // The second list holds a tool call's JSON for an assistant.
    let (first, more, json): (&[&[u8]], &[&[u8]], bool) = match m.role? {
        Role::User | Role::ToolResult | Role::Custom | Role::Other => {
            (m.content_string.as_slice(), &m.text, false)
        }
        Role::Assistant => (&m.text, &m.tool_calls, true),
        Role::BashExecution => (
            std::slice::from_ref(&m.command),
            std::slice::from_ref(&m.output),
            false,
        ),
        Role::BranchSummary => (std::slice::from_ref(&m.summary), &[], false),
        Role::CompactionSummary | Role::ToolOutputCleared => return None,
    };
    let mut text = String::new();
    let parts = (first.iter().map(|p| (p, false))).chain(more.iter().map(|p| (p, json)));
    for (part, json) in parts {
        if part.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        let part = String::from_utf8_lossy(part);
        if json {
            text.push_str(&unescape_json(&part));
        } else {
            text.push_str(&part);
        }
    }
    (!text.trim().is_empty()).then_some(text)
}

/// A tool call's `name` + `JSON.stringify(arguments)` with its strings'
/// escapes read, as the arguments were written: `\n` a line end, `\t` a
/// tab, `\"` a quote, `\u00e9` an é (a lone surrogate U+FFFD). Read as
/// text, `"cd src\nnpm test"` would hold the word `nnpm`, not `npm`. A
/// backslash that starts no JSON escape is kept as it is.
pub fn unescape_json(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains('\\') {
        return json.into();
    }
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(at) = rest.find('\\') {
        out.push_str(rest.get(..at).unwrap_or(""));
        rest = rest.get(at..).unwrap_or("");
        let (c, len) = match rest.as_bytes().get(1) {
            Some(b'"') => ('"', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'/') => ('/', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'u') => unicode_escape(rest).unwrap_or(('\\', 1)),
            _ => ('\\', 1),
        };
        out.push(c);
        rest = rest.get(len..).unwrap_or("");
    }
    out.push_str(rest);
    out.into()
}

/// The character of the `\uXXXX` escape `text` starts with (with the low
/// half of a surrogate pair when one follows) and its length in bytes;
/// none if it is not one.
fn unicode_escape(text: &str) -> Option<(char, usize)> {
    let unit = |at: usize| -> Option<u32> {
        let hex = text.get(at..at.checked_add(6)?)?;
        let digits = hex.strip_prefix("\\u")?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    };
    let high = unit(0)?;
    if (0xD800..0xDC00).contains(&high) {
        if let Some(low) = unit(6).filter(|low| (0xDC00..0xE000).contains(low)) {
            let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return Some((char::from_u32(c).unwrap_or('\u{fffd}'), 12));
        }
    }
    Some((char::from_u32(high).unwrap_or('\u{fffd}'), 6))
}

/// What brings an index in step with the array: the messages to take out
/// (no longer hidden, or changed since they were indexed) and those to
/// index (hidden and changed, or not indexed yet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sync {
    pub remove: Vec<u32>,
    pub add: Vec<u32>,
}

/// [`Sync`] for an index holding `indexed` (ascending), with `hidden` the
/// messages hidden now (ascending) and `changed` those among them whose
/// message is not the one indexed at that place (ascending).
pub fn sync(indexed: &[u32], hidden: &[usize], changed: &[usize]) -> Sync {
    let is_hidden = |k: u32| hidden.binary_search(&(k as usize)).is_ok();
    let is_changed = |k: u32| changed.binary_search(&(k as usize)).is_ok();
    let mut remove = Vec::new();
    for &k in indexed {
        if !is_hidden(k) || is_changed(k) {
            remove.push(k);
        }
    }
    let mut add = Vec::new();
    for &i in hidden {
        let Ok(k) = u32::try_from(i) else { continue };
        if is_changed(k) || indexed.binary_search(&k).is_err() {
            add.push(k);
        }
    }
    Sync { remove, add }
}

/// The first step of a search: the query's terms and the `limit` best
/// passages of `index`, best first.
pub fn ranked(
    index: &mut Index,
    query_text: &str,
    limit: usize,
) -> Result<(Vec<QueryTerm>, Vec<Ranked>), HistoryError> {
    let terms = query_terms(query_text)?;
    check_limit(limit)?;
    index.merge();
    let mut lists = Vec::with_capacity(terms.len());
    for t in &terms {
        lists.push((t, index.postings(&t.text)));
    }
    let best = rank(index.stats(), &lists, limit);
    Ok((terms, best))
}

/// The terms a search looks up for `query_text`: its own and those of
/// its words joined ([`with_joins`]).
pub fn query_terms(query_text: &str) -> Result<Vec<QueryTerm>, HistoryError> {
    Ok(with_joins(query(query_text)?, query_text))
}

/// The query's terms and, for two or three of its words in a row (as
/// written, before any folding), the word an identifier writes them as:
/// "auth step 0" also searches `authstep` and `step0` at half a word's
/// weight, and `authstep0` (`authStep0`'s whole term) at a joined term's.
fn with_joins(mut terms: Vec<QueryTerm>, text: &str) -> Vec<QueryTerm> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    for (i, first) in words.iter().enumerate() {
        let mut joined = first.clone();
        for (n, next) in words.iter().skip(i + 1).take(2).enumerate() {
            joined.push_str(next);
            if terms.len() < super::rank::MAX_QUERY_TERMS * 2
                && !terms.iter().any(|t| t.text == joined)
            {
                terms.push(QueryTerm {
                    text: joined.clone(),
                    weight: if n == 0 { 0.5 } else { 1.5 },
                });
            }
        }
    }
    terms
}

/// The second step: the hit for a ranked passage, from its message's
/// current text (none when the text no longer has that passage).
pub fn hit(ranked: &Ranked, text: &str, terms: &[QueryTerm]) -> Option<Hit> {
    let &range = passages(text).get(ranked.passage as usize)?;
    Some(Hit {
        key: ranked.key,
        passage: ranked.passage,
        score: ranked.score,
        excerpt: excerpt(text, range, terms),
        reference: Reference {
            key: ranked.key,
            passage: ranked.passage,
            fingerprint: fingerprint(text),
        },
    })
}

/// A page of message `reference.key`, whose current text is `text` (none:
/// the array no longer has it): refused as changed when the text is not
/// the one the reference was made from, whatever else changed with it.
pub fn read(
    index: &Index,
    reference: &Reference,
    text: Option<&str>,
    offset: Option<usize>,
    max_chars: usize,
) -> Result<Page, HistoryError> {
    if let Some(text) = text {
        if index.contains(reference.key) && fingerprint(text) != reference.fingerprint {
            return Err(HistoryError::Changed { key: reference.key });
        }
    }
    index.read(reference, offset, max_chars, |_| text)
}

/// Results a search gives unless asked for another number.
pub const DEFAULT_LIMIT: usize = 10;

/// `options.limit` of a search: a whole number from 1 to
/// [`super::rank::MAX_LIMIT`], [`DEFAULT_LIMIT`] when not given.
pub fn search_limit<V: Value>(options: &V, r: &Reader<V>) -> Result<usize, InputError> {
    if options.is_nullish() {
        return Ok(DEFAULT_LIMIT);
    }
    expect_object(r.root, options, "an object")?;
    whole(r, "limit", 1, MAX_LIMIT, "a whole number from 1 to 100")
        .map(|n| n.unwrap_or(DEFAULT_LIMIT))
}

/// The largest `offset` a read takes (a UTF-16 offset fits in 32 bits: no
/// engine holds a longer string).
pub const MAX_OFFSET: usize = u32::MAX as usize;
/// What an `offset` must be, in its error: the bound named, so that a whole
/// number over it is not told it is not one.
pub const OFFSET_EXPECTED: &str = "a whole number from 0 to 4294967295";

/// `options.offset` and `options.maxChars` of a read: a page's `next`, and
/// a page size from 1 to [`MAX_PAGE_CHARS`] ([`DEFAULT_PAGE_CHARS`] when not
/// given).
pub fn read_options<V: Value>(
    options: &V,
    r: &Reader<V>,
) -> Result<(Option<usize>, usize), InputError> {
    if options.is_nullish() {
        return Ok((None, DEFAULT_PAGE_CHARS));
    }
    expect_object(r.root, options, "an object")?;
    let offset = whole(r, "offset", 0, MAX_OFFSET, OFFSET_EXPECTED)?;
    let max = whole(
        r,
        "maxChars",
        1,
        MAX_PAGE_CHARS,
        "a whole number from 1 to 16000",
    )?;
    Ok((offset, max.unwrap_or(DEFAULT_PAGE_CHARS)))
}

/// An optional whole-number field from `min` to `max`.
pub(crate) fn whole<V: Value>(
    r: &Reader<V>,
    key: &'static str,
    min: usize,
    max: usize,
    expected: &'static str,
) -> Result<Option<usize>, InputError> {
    let value = r.field(key)?;
    if value.is_nullish() {
        return Ok(None);
    }
    match value.number() {
        Some(n) if n.fract() == 0.0 && (min as f64..=max as f64).contains(&n) => {
            Ok(Some(n as usize))
        }
        _ => Err(r.wrong_number(key, expected, &value)),
    }
}

/// How a result names a message's role: pi's role names.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::ToolResult => "toolResult",
        Role::BashExecution => "bashExecution",
        Role::Custom => "custom",
        Role::BranchSummary => "branchSummary",
        Role::CompactionSummary => "compactionSummary",
        Role::ToolOutputCleared => "toolOutputCleared",
        Role::Other => "other",
    }
}

/// What a search answers (`searchHistory`): `{ hits, searched }`, each hit
/// `{ ref, index, role, excerpt, score }` (`index`: the message's place in
/// the array), best first; `searched`: how many hidden messages were
/// searched.
pub fn search_result<V, S: AsRef<str>>(found: &[(Hit, Role, S)], searched: usize) -> Shape<V> {
    let mut hits = Vec::with_capacity(found.len());
    for (hit, role, text) in found {
        hits.push(Field::Object(Shape::of([
            ("ref", Field::String(hit.reference.to_string())),
            ("index", Field::Number(f64::from(hit.key))),
            ("role", Field::Str(role_name(*role))),
            ("excerpt", Field::String(hit.excerpt.render(text.as_ref()))),
            ("score", Field::Number(hit.score)),
        ])));
    }
    Shape::of([
        ("hits", Field::List(hits)),
        ("searched", Field::Number(searched as f64)),
    ])
}

/// What a read answers (`readHistory`): `{ ref, index, role, text, next }`,
/// `next` the offset of the next page, or `null` at the end.
pub fn read_result<V>(reference: &Reference, role: Role, text: &str, page: &Page) -> Shape<V> {
    let body = text
        .get(page.start..page.start.saturating_add(page.len))
        .unwrap_or("");
    Shape::of([
        ("ref", Field::String(reference.to_string())),
        ("index", Field::Number(f64::from(reference.key))),
        ("role", Field::Str(role_name(role))),
        ("text", Field::String(body.to_string())),
        (
            "next",
            page.next.map_or(Field::Null, |n| Field::Number(n as f64)),
        ),
    ])
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
