//! The in-memory index: each message's passages (see [`passage`](super::passage),
//! the documents the ranking scores and a reference points at), and for
//! every term the passages that have it.
//!
//! It is built message by message: [`Index::add`] when a message falls
//! behind a summary (or every such message at the first search), so that a
//! turn costs what it did. Passage numbers only grow, so a known term's
//! postings take a new passage at their end. The postings of terms the
//! index does not have yet wait in a buffer and are merged into the sorted
//! terms in one pass at the next search, or when the buffer grows as large
//! as the index (one merge for many new terms, rather than a sorted
//! insertion each).
//!
//! Memory is bounded by a cap on [`Index::bytes`]: past it the messages
//! added first are dropped, oldest first, to 90% of the cap, and counted
//! in [`Index::dropped`] so that a search can say that older messages are
//! no longer searchable. The newest messages are the ones a conversation
//! most likely returns to, so they are the ones kept rather than refused.
//! The measurement test finds ~0.9 bytes per indexed character (10,000
//! synthetic messages, 19 million characters, with ids and hashes among
//! the words), so the default cap of 32 MiB holds some 35 million
//! characters.
//!
//! The passages' places are not stored: they follow from a message's text
//! ([`passages`]), which the caller holds, and a reference checks the text
//! has not changed before a read relies on them.

use super::excerpt::{excerpt, Excerpt};
use super::passage::passages;
use super::postings::{Doc, Postings, Stats};
use super::rank::{check_limit, query, rank, QueryTerm};
use super::reference::{fingerprint, read, Page, Reference};
use super::words::terms;
use super::HistoryError;
use crate::sorted::{sort_by, SortedMap};
use std::cmp::Ordering;

/// The cap on [`Index::bytes`] unless [`Index::with_cap`] sets another.
pub const DEFAULT_CAP_BYTES: usize = 32 << 20;

/// A search result.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub key: u32,
    pub passage: u32,
    pub score: f64,
    /// Where in the message's text the excerpt is.
    pub excerpt: Excerpt,
    /// What reads the passage.
    pub reference: Reference,
}

/// A message's passages: the first one's number and how many.
#[derive(Clone, Copy, Debug)]
struct Span {
    first: u32,
    count: u32,
}

/// A posting waiting to be merged: its term's place in the buffer's text.
#[derive(Clone, Copy, Debug)]
struct Pending {
    term: (u32, u32),
    doc: u32,
    tf: u32,
}

/// The terms of indexed messages and their passages.
#[derive(Debug)]
pub struct Index {
    terms: SortedMap<Box<str>, Postings>,
    stats: Stats,
    messages: SortedMap<u32, Span>,
    pending: Vec<Pending>,
    pending_text: String,
    /// Postings in `terms`.
    merged: usize,
    /// The bytes `terms` holds (see [`Index::bytes`]).
    term_bytes: usize,
    next_doc: u32,
    cap: usize,
    dropped: usize,
}

impl Default for Index {
    fn default() -> Self {
        Index::with_cap(DEFAULT_CAP_BYTES)
    }
}

impl Index {
    pub fn new() -> Self {
        Index::default()
    }

    /// An index that keeps [`Index::bytes`] under `cap`.
    pub fn with_cap(cap: usize) -> Self {
        Index {
            terms: SortedMap::new(),
            stats: Stats::default(),
            messages: SortedMap::new(),
            pending: Vec::new(),
            pending_text: String::new(),
            merged: 0,
            term_bytes: 0,
            next_doc: 0,
            cap,
            dropped: 0,
        }
    }

    /// Indexes message `key`'s `text`, in place of any text it had (after
    /// an error the message is not indexed at all).
    pub fn add(&mut self, key: u32, text: &str) -> Result<(), HistoryError> {
        self.remove(key);
        let ranges = passages(text);
        let count = u32::try_from(ranges.len()).map_err(|_| HistoryError::Full)?;
        let first = self.next_doc;
        self.next_doc = first.checked_add(count).ok_or(HistoryError::Full)?;
        for ((start, end), (passage, doc)) in ranges.into_iter().zip((0u32..).zip(first..)) {
            let mut words: Vec<String> = Vec::new();
            for term in terms(text.get(start..end).unwrap_or("")) {
                words.push(term.text);
            }
            let length = u32::try_from(words.len()).unwrap_or(u32::MAX);
            sort_by(&mut words, String::cmp);
            let mut at = 0;
            while let Some(word) = words.get(at) {
                let mut n = 1;
                while words.get(at.saturating_add(n)) == Some(word) {
                    n += 1;
                }
                let tf = u32::try_from(n).unwrap_or(u32::MAX);
                at = at.saturating_add(n);
                // A known term's postings take the passage at their end; a
                // new term waits for the merge.
                if let Some(postings) = self.terms.get_mut(word.as_str()) {
                    let before = postings.heap_bytes();
                    postings.push(doc, tf);
                    let grown = postings.heap_bytes().saturating_sub(before);
                    self.term_bytes = self.term_bytes.saturating_add(grown);
                    self.merged = self.merged.saturating_add(1);
                    continue;
                }
                let term_start = u32::try_from(self.pending_text.len()).unwrap_or(u32::MAX);
                self.pending_text.push_str(word);
                self.pending.push(Pending {
                    term: (term_start, u32::try_from(word.len()).unwrap_or(0)),
                    doc,
                    tf,
                });
            }
            self.stats.push(
                doc,
                Doc {
                    key,
                    passage,
                    length,
                },
            );
        }
        self.messages.insert(key, Span { first, count });
        if self.pending.len() > self.merged.max(1 << 16)
            || self.pending_text.len() > (u32::MAX >> 1) as usize
            || self.bytes() > self.cap
        {
            self.merge();
        }
        Ok(())
    }

    /// Takes message `key` out of the index; false if it was not in it.
    /// This rewrites the postings of every term, as a merge does: the app
    /// removes messages rarely (an undone compaction, an edit).
    pub fn remove(&mut self, key: u32) -> bool {
        let Some(span) = self.messages.remove(&key) else {
            return false;
        };
        self.merge();
        self.drop_docs(span.first, span.first.saturating_add(span.count));
        true
    }

    /// How many messages the index holds.
    pub fn messages(&self) -> usize {
        self.messages.len()
    }

    /// Whether message `key` is indexed.
    pub fn contains(&self, key: u32) -> bool {
        self.messages.get(&key).is_some()
    }

    /// How many messages were dropped to keep under the cap.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The statistics of every added message's passages.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The postings of `term` (of a term new since the last [`Index::merge`],
    /// none yet).
    pub fn postings(&self, term: &str) -> Option<&Postings> {
        let entries = self.terms.entries();
        let at = entries.binary_search_by(|(t, _)| (**t).cmp(term)).ok()?;
        entries.get(at).map(|(_, p)| p)
    }

    /// `(term, postings)` by term, as of the last [`Index::merge`]: what a
    /// store keyed by term writes.
    pub fn terms(&self) -> impl Iterator<Item = (&str, &Postings)> {
        self.terms.entries().iter().map(|(t, p)| (&**t, p))
    }

    /// The memory the index holds: its terms, postings, statistics and
    /// waiting postings (allocations' own overhead aside). Kept up to date
    /// as it changes, so that every [`Index::add`] checks the cap.
    pub fn bytes(&self) -> usize {
        let messages = self
            .messages
            .len()
            .saturating_mul(std::mem::size_of::<(u32, Span)>());
        let pending = self
            .pending
            .capacity()
            .saturating_mul(std::mem::size_of::<Pending>())
            .saturating_add(self.pending_text.capacity());
        [self.term_bytes, messages, pending, self.stats.heap_bytes()]
            .into_iter()
            .fold(0, usize::saturating_add)
    }

    /// Merges the waiting postings into the terms, then drops the oldest
    /// messages if the index is over its cap.
    pub fn merge(&mut self) {
        if !self.pending.is_empty() {
            self.merge_pending();
        }
        if self.bytes() > self.cap {
            self.shrink();
        }
    }

    fn merge_pending(&mut self) {
        let text = std::mem::take(&mut self.pending_text);
        let mut pending = std::mem::take(&mut self.pending);
        let term = |p: &Pending| {
            let (start, len) = (p.term.0 as usize, p.term.1 as usize);
            text.get(start..start.saturating_add(len)).unwrap_or("")
        };
        sort_by(&mut pending, |a, b| {
            term(a).cmp(term(b)).then(a.doc.cmp(&b.doc))
        });
        let old = std::mem::take(&mut self.terms).into_entries();
        let mut merged: Vec<(Box<str>, Postings)> = Vec::with_capacity(old.len());
        let mut old = old.into_iter();
        let mut next_old = old.next();
        let mut at = 0;
        while let Some(first) = pending.get(at) {
            let word = term(first);
            let mut entry = None;
            // The terms before `word` as they are, then `word`'s if known.
            while let Some((name, postings)) = next_old.take() {
                let order = (*name).cmp(word);
                if order == Ordering::Greater {
                    next_old = Some((name, postings));
                    break;
                }
                next_old = old.next();
                if order == Ordering::Equal {
                    entry = Some((name, postings));
                    break;
                }
                merged.push((name, postings));
            }
            let (name, mut postings) = entry.unwrap_or_else(|| (word.into(), Postings::default()));
            while let Some(p) = pending.get(at).filter(|p| term(p) == word) {
                postings.push(p.doc, p.tf);
                at += 1;
            }
            merged.push((name, postings));
        }
        while let Some(entry) = next_old.take().or_else(|| old.next()) {
            merged.push(entry);
        }
        self.set_terms(merged);
    }

    /// Drops the messages added first until the index is within 90% of
    /// its cap: each round drops the oldest passages whose share of the
    /// total length is the share of bytes to free (whole messages).
    fn shrink(&mut self) {
        while self.bytes() > self.cap && self.stats.count() > 0 {
            let bytes = self.bytes() as f64;
            let share = (bytes - self.cap as f64 * 0.9) / bytes;
            let goal = (self.stats.total_length() as f64 * share).ceil() as u64;
            let mut freed = 0u64;
            let mut cutoff = self.next_doc;
            for &(doc, info) in self.stats.docs() {
                if freed >= goal.max(1) {
                    cutoff = doc;
                    break;
                }
                freed = freed.saturating_add(u64::from(info.length.max(1)));
            }
            // Whole messages: a message's passages are numbered together.
            let mut keys = Vec::new();
            for (key, span) in self.messages.entries() {
                if span.first < cutoff {
                    cutoff = cutoff.max(span.first.saturating_add(span.count));
                    keys.push(*key);
                }
            }
            if keys.is_empty() {
                // Only messages without passages are left.
                break;
            }
            self.messages.retain(|_, span| span.first >= cutoff);
            self.dropped = self.dropped.saturating_add(keys.len());
            self.drop_docs(0, cutoff);
        }
    }

    /// Drops the passages `from..to` from the postings and the statistics.
    fn drop_docs(&mut self, from: u32, to: u32) {
        let keep = |doc: u32| !(from..to).contains(&doc);
        let mut kept: Vec<(Box<str>, Postings)> = Vec::new();
        for (term, postings) in std::mem::take(&mut self.terms).into_entries() {
            let postings = if postings.iter().all(|(doc, _)| keep(doc)) {
                postings
            } else {
                postings.retain(keep)
            };
            if !postings.is_empty() {
                kept.push((term, postings));
            }
        }
        kept.shrink_to_fit();
        self.set_terms(kept);
        self.stats.retain(keep);
    }

    /// Takes `entries`, sorted by term, as the terms, with their counts.
    fn set_terms(&mut self, entries: Vec<(Box<str>, Postings)>) {
        let entry = std::mem::size_of::<(Box<str>, Postings)>();
        let (mut merged, mut bytes) = (
            0usize,
            entries
                .capacity()
                .saturating_sub(entries.len())
                .saturating_mul(entry),
        );
        for (term, postings) in &entries {
            merged = merged.saturating_add(postings.len());
            bytes = bytes.saturating_add(
                entry
                    .saturating_add(term.len())
                    .saturating_add(postings.heap_bytes()),
            );
        }
        self.merged = merged;
        self.term_bytes = bytes;
        self.terms = SortedMap::from_sorted(entries);
    }

    /// The `limit` passages that best match `query`, best first, each with
    /// an excerpt and a reference. `text_of` gives a message's current text;
    /// a message it no longer has is left out.
    pub fn search<'t>(
        &mut self,
        query_text: &str,
        limit: usize,
        text_of: impl Fn(u32) -> Option<&'t str>,
    ) -> Result<Vec<Hit>, HistoryError> {
        let query = query(query_text)?;
        check_limit(limit)?;
        self.merge();
        let lists: Vec<(&QueryTerm, Option<&Postings>)> =
            query.iter().map(|t| (t, self.postings(&t.text))).collect();
        let ranked = rank(&self.stats, &lists, limit);
        Ok(ranked
            .into_iter()
            .filter_map(|r| {
                let text = text_of(r.key)?;
                let &range = passages(text).get(r.passage as usize)?;
                Some(Hit {
                    key: r.key,
                    passage: r.passage,
                    score: r.score,
                    excerpt: excerpt(text, range, &query),
                    reference: Reference {
                        key: r.key,
                        passage: r.passage,
                        fingerprint: fingerprint(text),
                    },
                })
            })
            .collect())
    }

    /// A page of the text `reference` points at: from its passage, or from
    /// `offset` (a page's `next`), at most `max_chars` UTF-16 code units
    /// ([`read`]).
    /// `text_of` gives a message's current text.
    pub fn read<'t>(
        &self,
        reference: &Reference,
        offset: Option<usize>,
        max_chars: usize,
        text_of: impl Fn(u32) -> Option<&'t str>,
    ) -> Result<Page, HistoryError> {
        let key = reference.key;
        let unknown = HistoryError::UnknownMessage { key };
        let span = self.messages.get(&key).ok_or(unknown.clone())?;
        if reference.passage >= span.count {
            return Err(HistoryError::UnknownPassage {
                key,
                passage: reference.passage,
                count: span.count as usize,
            });
        }
        read(text_of(key).ok_or(unknown)?, reference, offset, max_chars)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
