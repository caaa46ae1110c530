//! The history index as a store keeps it beside a session's records, so
//! that a stored session is searched and read without being loaded.
//!
//! It covers the session's first messages, up to its last summary at the
//! time of its last *fill*, but the pinned ones, which the model is sent
//! again after the summary (`history::lookup::hidden_before`, the
//! `Compactor`'s rule): each fill indexes the messages hidden since the
//! one before (a compaction's save writes one in its own transaction) and
//! writes, under its number, the statistics of its passages, its terms'
//! postings in [`BUCKETS`] records (a term's bucket is a hash of it, so
//! that a search reads a few small records and a fill writes at most
//! that many), and the searched text of each message (read back by
//! reference, and for the hits' excerpts). A [`Meta`] record says how far
//! the fills go. Passage numbers run on from fill to fill, so a term's
//! records, read in fill order, are its postings in passage order.
//!
//! A save that changes or removes a message before the summary the index
//! reached (pinning or unpinning one is a change), or makes one visible
//! again (an undo), drops the whole index in its transaction; the next
//! search rebuilds it from the records. So the index never points at
//! messages that are not there, nor at ones the model is sent.

use crate::history::index::Index;
use crate::history::lookup::{query_terms, role_name};
use crate::history::postings::{put, Postings, Reader, Stats, VERSION};
use crate::history::rank::{check_limit, rank, QueryTerm, Ranked};
use crate::history::HistoryError;
use crate::message::role::Role;
use std::borrow::Cow;

/// How far a session's index goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// How far the index goes: the hidden messages among places
    /// `0..count` of the session are covered.
    pub count: u32,
    /// How many of them have text (the messages a search searches).
    pub messages: u32,
    /// The next passage number.
    pub docs: u32,
    /// The next fill's number.
    pub fills: u32,
}

impl Meta {
    /// The record: the format version, then the four numbers.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        for n in [self.count, self.messages, self.docs, self.fills] {
            put(&mut out, u64::from(n));
        }
        out
    }

    /// The meta of a record [`Meta::encode`] wrote.
    pub fn decode(record: &[u8]) -> Result<Meta, HistoryError> {
        let mut r = Reader::open(record, "history index")?;
        let meta = Meta {
            count: r.u32()?,
            messages: r.u32()?,
            docs: r.u32()?,
            fills: r.u32()?,
        };
        r.end()?;
        Ok(meta)
    }
}

/// A message's searched text, by its place in the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    pub key: u32,
    pub role: Role,
    pub text: String,
}

/// What one fill writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fill {
    /// Its number (part of its records' keys).
    pub number: u32,
    /// The meta record after it.
    pub meta: Meta,
    /// Its passages' statistics record.
    pub stats: Vec<u8>,
    /// Its terms' postings, by bucket: `(bucket, record)`, ascending.
    pub buckets: Vec<(u32, Vec<u8>)>,
    /// The texts of its messages that have one.
    pub texts: Vec<Text>,
}

/// The fill after `meta` (none: the first of a new index) for the
/// messages up to place `to`, of which `texts` are the hidden ones with a
/// text (ascending, each at or after `meta.count`).
pub fn fill(meta: Option<&Meta>, to: u32, texts: Vec<Text>) -> Result<Fill, HistoryError> {
    let meta = meta.copied().unwrap_or_default();
    let mut index = Index::with_cap(usize::MAX);
    for t in &texts {
        index.add(t.key, &t.text)?;
    }
    index.merge();
    let base = meta.docs;
    let mut stats = Stats::default();
    if !stats.append(index.stats(), base) {
        return Err(HistoryError::Full);
    }
    let mut buckets: Vec<(u32, Vec<u8>)> = Vec::new();
    for (term, postings) in index.terms() {
        let mut shifted = Postings::default();
        if !shifted.append(postings, base) {
            return Err(HistoryError::Full);
        }
        let b = bucket(term);
        let at = match buckets.binary_search_by_key(&b, |(k, _)| *k) {
            Ok(at) => at,
            Err(at) => {
                buckets.insert(at, (b, vec![VERSION]));
                at
            }
        };
        if let Some((_, record)) = buckets.get_mut(at) {
            let postings = shifted.encode();
            put(record, term.len() as u64);
            record.extend_from_slice(term.as_bytes());
            put(record, postings.len() as u64);
            record.extend_from_slice(&postings);
        }
    }
    let added = u32::try_from(stats.count()).map_err(|_| HistoryError::Full)?;
    let messages = u32::try_from(index.messages()).map_err(|_| HistoryError::Full)?;
    let next = |a: u32, b: u32| a.checked_add(b).ok_or(HistoryError::Full);
    Ok(Fill {
        number: meta.fills,
        meta: Meta {
            count: to.max(meta.count),
            messages: next(meta.messages, messages)?,
            docs: next(base, added)?,
            fills: next(meta.fills, 1)?,
        },
        stats: stats.encode(),
        buckets,
        texts,
    })
}

/// What a save does to the index, decided before its transaction from the
/// places (in the stored session) of the last summary before and after it
/// (none: no summary, nothing hidden), the first place it changes (a
/// message removed or one inserted before it; none: it only appends), and
/// whether it rewrites the session from scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnSave {
    /// The covered messages stay as they are.
    Keep,
    /// The index is dropped (rebuilt at the next search).
    Drop,
    /// The messages `from..to` are now hidden too.
    Fill { from: u32, to: u32 },
}

pub fn on_save(
    old_summary: Option<usize>,
    new_summary: Option<usize>,
    first_change: Option<usize>,
    rewrites: bool,
) -> OnSave {
    let (old, new) = (old_summary.unwrap_or(0), new_summary.unwrap_or(0));
    if rewrites || first_change.is_some_and(|f| f < old) || new < old {
        return OnSave::Drop;
    }
    match (u32::try_from(old), u32::try_from(new)) {
        (Ok(from), Ok(to)) if to > from => OnSave::Fill { from, to },
        (Ok(_), Ok(_)) => OnSave::Keep,
        _ => OnSave::Drop,
    }
}

/// What the save's transaction does once it has read the meta record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveStep {
    Nothing,
    Drop,
    /// Writes the fill of `from..to` after the meta read.
    Fill {
        from: u32,
        to: u32,
    },
}

/// [`SaveStep`] for the meta record read (none: no index, which the next
/// search builds; an error: one this version does not read); `with_fill`
/// is false for a save made again without its fill.
pub fn save_step(
    on_save: OnSave,
    stored: Option<&Result<Meta, HistoryError>>,
    with_fill: bool,
) -> SaveStep {
    let meta = match stored {
        None => None,
        Some(Ok(meta)) => Some(meta),
        // Not an index this version reads: dropped, to be rebuilt.
        Some(Err(_)) => return SaveStep::Drop,
    };
    let step = match (on_save, meta) {
        (OnSave::Drop, Some(_)) => SaveStep::Drop,
        (OnSave::Fill { from, to }, Some(m)) if m.count == from => SaveStep::Fill { from, to },
        // No index, and nothing was hidden before: this fill is all of it.
        (OnSave::Fill { from: 0, to }, None) => SaveStep::Fill { from: 0, to },
        // Covering other messages than those before the summary: not this
        // library's index (or one a failure left behind).
        (OnSave::Fill { .. }, Some(_)) => SaveStep::Drop,
        _ => SaveStep::Nothing,
    };
    match step {
        // The save made again without its fill ([`retry_without_index`]).
        SaveStep::Fill { .. } if !with_fill => SaveStep::Drop,
        step => step,
    }
}

/// The kinds of history record: the part of a record's key after the
/// session id, `[id, kind, ...]`, so that a session's index is one key
/// range, deleted with the session. `[id, META]` says how far the index
/// goes, `[id, STATS, fill]` holds a fill's passage statistics, `[id,
/// BUCKET, bucket, fill]` its postings of the terms in one bucket, and
/// `[id, TEXT, place]` a message's searched text.
pub const META: u32 = 0;
pub const STATS: u32 = 1;
pub const BUCKET: u32 = 2;
pub const TEXT: u32 = 3;

/// A history record's value: bytes, or a message's searched text, stored
/// as `[role name, text]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Bytes(Cow<'a, [u8]>),
    Text(&'static str, &'a str),
}

impl Fill {
    /// What a store writes for this fill, as `(key after the session id,
    /// value)`, in the order it queues them: the statistics, the buckets'
    /// postings, the texts, and the meta record last.
    pub fn records(&self) -> Vec<(Vec<u32>, Value<'_>)> {
        let mut out = vec![(
            vec![STATS, self.number],
            Value::Bytes(Cow::from(&self.stats[..])),
        )];
        for (b, postings) in &self.buckets {
            out.push((
                vec![BUCKET, *b, self.number],
                Value::Bytes(Cow::from(&postings[..])),
            ));
        }
        for t in &self.texts {
            out.push((vec![TEXT, t.key], Value::Text(role_name(t.role), &t.text)));
        }
        out.push((vec![META], Value::Bytes(Cow::from(self.meta.encode()))));
        out
    }
}

/// The meta record as read: none when there is none (`None`), else its
/// meta, or why it cannot be read; `bytes` is `None` when the record is
/// not bytes.
pub fn read_meta(found: bool, bytes: Option<&[u8]>) -> Option<Result<Meta, HistoryError>> {
    found.then(|| match bytes {
        Some(b) => Meta::decode(b),
        None => Err(HistoryError::Corrupt {
            what: "history index",
            why: "its meta record is not bytes",
        }),
    })
}

/// A text record's role and text, read back (`None`: not a text record).
pub fn read_text(role: Option<String>, text: Option<String>) -> Option<(Role, String)> {
    Some((Role::from_name(&role?), text?))
}

/// How many times a search builds a missing index before it gives up:
/// each time, a save that came in between (the session's revision moved)
/// makes it read the session again.
pub const BUILD_ATTEMPTS: usize = 3;

/// How many records a fill's postings are spread over.
pub const BUCKETS: u32 = 256;

/// The record a term's postings are in (FNV-1a of its bytes).
pub fn bucket(term: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in term.as_bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h % BUCKETS
}

/// `term`'s postings record in a bucket record (none: not there).
fn find_term<'r>(record: &'r [u8], term: &str) -> Result<Option<&'r [u8]>, HistoryError> {
    let mut r = Reader::open(record, "history index")?;
    while !r.is_done() {
        let name = r.bytes()?;
        let postings = r.bytes()?;
        if name == term.as_bytes() {
            return Ok(Some(postings));
        }
    }
    Ok(None)
}

/// Whether a save whose commit failed is made again without the index:
/// when the storage quota refused it and it wrote a fill. The index is an
/// aid to search: it never costs a save (the next search rebuilds it,
/// and says so if there is no room for it either).
pub fn retry_without_index(quota_exceeded: bool, wrote_fill: bool) -> bool {
    quota_exceeded && wrote_fill
}

/// The first step of a search of a stored index: the terms to look up,
/// each with the bucket whose records to read, after checking the limit.
pub fn search_terms(query_text: &str, limit: usize) -> Result<Vec<QueryTerm>, HistoryError> {
    let terms = query_terms(query_text)?;
    check_limit(limit)?;
    Ok(terms)
}

/// The second: the `limit` best passages, from the fills' statistics
/// records and, for each of `terms`, its bucket's records (in fill order).
pub fn ranked(
    stats_records: &[Vec<u8>],
    terms: &[QueryTerm],
    postings_records: &[Vec<Vec<u8>>],
    limit: usize,
) -> Result<Vec<Ranked>, HistoryError> {
    let mut stats = Stats::default();
    for record in stats_records {
        if !stats.append(&Stats::decode(record)?, 0) {
            return Err(out_of_order());
        }
    }
    let mut lists = Vec::with_capacity(terms.len());
    for (term, records) in terms.iter().zip(postings_records) {
        let mut postings = Postings::default();
        for record in records {
            let Some(found) = find_term(record, &term.text)? else {
                continue;
            };
            if !postings.append(&Postings::decode(found)?, 0) {
                return Err(out_of_order());
            }
        }
        lists.push(postings);
    }
    let pairs: Vec<(&QueryTerm, Option<&Postings>)> =
        terms.iter().zip(lists.iter().map(Some)).collect();
    Ok(rank(&stats, &pairs, limit))
}

fn out_of_order() -> HistoryError {
    HistoryError::Corrupt {
        what: "history index",
        why: "its records' passages are out of order",
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
