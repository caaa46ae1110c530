//! One term's postings (the passages that have it, with how often) and the
//! passages' statistics, with their byte encodings.
//!
//! Each is a record of its own, so that a store can keep one record per
//! term and read, for a search, only the records of the query's terms plus
//! the statistics. Both encodings start with a format version byte, then
//! unsigned LEB128 varints: a postings record is the count, then for each
//! passage the gap from the previous one (minus one; the first as is) and
//! the frequency minus one; a statistics record is the count, the total
//! length, then for each passage the gap and its message key, passage
//! number and length. In memory the postings stay in that compact form
//! (a few bytes a passage) and are decoded as they are read.

use super::HistoryError;

/// The format version of both records.
pub const VERSION: u8 = 1;

/// The passages that have a term, in increasing passage (document) number,
/// each with the term's frequency in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Postings {
    count: u32,
    last: u32,
    bytes: Vec<u8>,
}

impl Postings {
    /// Adds passage `doc` with frequency `tf` (at least 1); false, and
    /// nothing added, unless `doc` comes after every passage already there.
    pub fn push(&mut self, doc: u32, tf: u32) -> bool {
        let gap = if self.count == 0 {
            doc
        } else if doc > self.last {
            doc - self.last - 1
        } else {
            return false;
        };
        put(&mut self.bytes, u64::from(gap));
        put(&mut self.bytes, u64::from(tf.max(1) - 1));
        self.count = self.count.saturating_add(1);
        self.last = doc;
        true
    }

    /// How many passages have the term.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// `(passage, frequency)`, in increasing passage number.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes,
            left: self.count,
            doc: None,
        }
    }

    /// The postings of the passages `keep` accepts.
    pub fn retain(&self, keep: impl Fn(u32) -> bool) -> Postings {
        let mut kept = Postings::default();
        for (doc, tf) in self.iter().filter(|&(doc, _)| keep(doc)) {
            kept.push(doc, tf);
        }
        kept
    }

    /// The bytes it holds beyond its own size.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Adds `other`'s passages, each with `base` added to its number;
    /// false, and nothing more added, at the first that does not come
    /// after every passage already there.
    pub fn append(&mut self, other: &Postings, base: u32) -> bool {
        other
            .iter()
            .all(|(doc, tf)| doc.checked_add(base).is_some_and(|d| self.push(d, tf)))
    }

    /// The record: version, count, then the gaps and frequencies.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len().saturating_add(6));
        out.push(VERSION);
        put(&mut out, u64::from(self.count));
        out.extend_from_slice(&self.bytes);
        out
    }

    /// The postings of a record [`Postings::encode`] wrote.
    pub fn decode(record: &[u8]) -> Result<Postings, HistoryError> {
        const WHAT: &str = "postings";
        let mut r = Reader::open(record, WHAT)?;
        let count = r.u32()?;
        let mut postings = Postings::default();
        for _ in 0..count {
            let gap = r.u32()?;
            let doc = if postings.count == 0 {
                Some(gap)
            } else {
                postings
                    .last
                    .checked_add(gap)
                    .and_then(|d| d.checked_add(1))
            };
            let tf = r.u32()?.checked_add(1);
            let (Some(doc), Some(tf)) = (doc, tf) else {
                return Err(corrupt(WHAT, "a number is out of range"));
            };
            postings.push(doc, tf);
        }
        r.end()?;
        Ok(postings)
    }
}

/// The passages of [`Postings`], decoded.
pub struct Iter<'a> {
    bytes: &'a [u8],
    left: u32,
    doc: Option<u32>,
}

impl Iterator for Iter<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        self.left = self.left.checked_sub(1)?;
        let gap = u32::try_from(take(&mut self.bytes)?).ok()?;
        let tf = u32::try_from(take(&mut self.bytes)?)
            .ok()?
            .saturating_add(1);
        let doc = match self.doc {
            None => gap,
            Some(prev) => prev.saturating_add(gap).saturating_add(1),
        };
        self.doc = Some(doc);
        Some((doc, tf))
    }
}

/// What the ranking knows of a passage (a document).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Doc {
    /// The message it is part of.
    pub key: u32,
    /// Its number within the message, from 0.
    pub passage: u32,
    /// How many terms it has.
    pub length: u32,
}

/// The passages' statistics: each passage's message, number and length,
/// by increasing passage (document) number, and their total length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    docs: Vec<(u32, Doc)>,
    total: u64,
}

impl Stats {
    /// Adds passage `doc`; false, and nothing added, unless it comes after
    /// every passage already there.
    pub fn push(&mut self, doc: u32, info: Doc) -> bool {
        if self.docs.last().is_some_and(|&(last, _)| last >= doc) {
            return false;
        }
        self.docs.push((doc, info));
        self.total = self.total.saturating_add(u64::from(info.length));
        true
    }

    pub fn get(&self, doc: u32) -> Option<&Doc> {
        let at = self.docs.binary_search_by(|(d, _)| d.cmp(&doc)).ok()?;
        self.docs.get(at).map(|(_, info)| info)
    }

    /// How many passages there are.
    pub fn count(&self) -> usize {
        self.docs.len()
    }

    /// The sum of the passages' lengths.
    pub fn total_length(&self) -> u64 {
        self.total
    }

    /// `(passage number, passage)`, by increasing number.
    pub fn docs(&self) -> &[(u32, Doc)] {
        &self.docs
    }

    /// Adds `other`'s passages, each with `base` added to its number;
    /// false, and nothing more added, at the first that does not come
    /// after every passage already there.
    pub fn append(&mut self, other: &Stats, base: u32) -> bool {
        (other.docs.iter())
            .all(|&(doc, info)| doc.checked_add(base).is_some_and(|d| self.push(d, info)))
    }

    /// Keeps the passages `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        let mut kept = Vec::new();
        let mut total = 0u64;
        for &(doc, info) in &self.docs {
            if keep(doc) {
                kept.push((doc, info));
                total = total.saturating_add(u64::from(info.length));
            }
        }
        kept.shrink_to_fit();
        self.docs = kept;
        self.total = total;
    }

    /// The bytes it holds beyond its own size.
    pub fn heap_bytes(&self) -> usize {
        self.docs
            .capacity()
            .saturating_mul(std::mem::size_of::<(u32, Doc)>())
    }

    /// The record: version, count, total length, then each passage's gap,
    /// message key, number and length.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.docs.len().saturating_mul(6).saturating_add(12));
        out.push(VERSION);
        put(&mut out, self.docs.len() as u64);
        put(&mut out, self.total);
        let mut prev: Option<u32> = None;
        for &(doc, info) in &self.docs {
            let gap = prev.map_or(doc, |p| doc.saturating_sub(p).saturating_sub(1));
            prev = Some(doc);
            for n in [gap, info.key, info.passage, info.length] {
                put(&mut out, u64::from(n));
            }
        }
        out
    }

    /// The statistics of a record [`Stats::encode`] wrote.
    pub fn decode(record: &[u8]) -> Result<Stats, HistoryError> {
        const WHAT: &str = "statistics";
        let mut r = Reader::open(record, WHAT)?;
        let count = r.u32()?;
        let total = r.u64()?;
        let mut stats = Stats::default();
        let mut prev: Option<u32> = None;
        for _ in 0..count {
            let gap = r.u32()?;
            let doc = match prev {
                None => Some(gap),
                Some(p) => p.checked_add(gap).and_then(|d| d.checked_add(1)),
            };
            let Some(doc) = doc else {
                return Err(corrupt(WHAT, "a number is out of range"));
            };
            let info = Doc {
                key: r.u32()?,
                passage: r.u32()?,
                length: r.u32()?,
            };
            stats.push(doc, info);
            prev = Some(doc);
        }
        r.end()?;
        if stats.total != total {
            return Err(corrupt(
                WHAT,
                "the total length is not the sum of the lengths",
            ));
        }
        Ok(stats)
    }
}

fn corrupt(what: &'static str, why: &'static str) -> HistoryError {
    HistoryError::Corrupt { what, why }
}

/// Appends `n` as an unsigned LEB128 varint.
pub(crate) fn put(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The varint at the start of `bytes`, which then starts after it; none if
/// it is cut short or longer than a `u64`.
fn take(bytes: &mut &[u8]) -> Option<u64> {
    let mut n: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        let low = u64::from(b & 0x7F);
        let shift = 7 * i as u32;
        if shift == 63 && low > 1 {
            return None;
        }
        n |= low << shift;
        if b & 0x80 == 0 {
            *bytes = bytes.get(i + 1..).unwrap_or(&[]);
            return Some(n);
        }
    }
    None
}

/// Reads a record's varints, each failure a [`HistoryError`].
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn open(record: &'a [u8], what: &'static str) -> Result<Self, HistoryError> {
        match record.split_first() {
            None => Err(corrupt(what, "it is empty")),
            Some((&VERSION, rest)) => Ok(Reader { bytes: rest, what }),
            Some((&got, _)) => Err(HistoryError::Version {
                what,
                got,
                expected: VERSION,
            }),
        }
    }

    fn u64(&mut self) -> Result<u64, HistoryError> {
        take(&mut self.bytes).ok_or(corrupt(self.what, "it ends in the middle of a number"))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, HistoryError> {
        u32::try_from(self.u64()?).map_err(|_| corrupt(self.what, "a number is out of range"))
    }

    /// Whether every byte is read.
    pub(crate) fn is_done(&self) -> bool {
        self.bytes.is_empty()
    }

    /// A length, then that many bytes.
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], HistoryError> {
        let len = usize::try_from(self.u64()?).unwrap_or(usize::MAX);
        if len > self.bytes.len() {
            return Err(corrupt(self.what, "it ends in the middle of a term"));
        }
        let (taken, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(taken)
    }

    pub(crate) fn end(&self) -> Result<(), HistoryError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(corrupt(self.what, "it has bytes after its end"))
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
