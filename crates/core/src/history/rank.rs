//! BM25 ranking (k1 = 1.2, b = 0.75) of passages for a query, from the
//! query's terms' postings and the passages' statistics alone, so that a
//! store that reads only those records ranks as the in-memory index does.
//!
//! A query is read by the same tokenizer as the texts, each term counted
//! once, a whole word also in its other form (found whatever its case).
//! Terms weigh by what they are: a whole path or dotted name
//! (`src/lib/foo.ts`) counts more than the words it is made of, and an
//! identifier's parts less than the identifier. Equal scores go to the
//! later message first.

use super::postings::{Iter, Postings, Stats};
use super::words::{other_form, terms, Kind};
use super::HistoryError;
use std::cmp::Ordering;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The most results a search returns.
pub const MAX_LIMIT: usize = 100;

/// A query's terms beyond this many are left out.
pub const MAX_QUERY_TERMS: usize = 64;

/// A query's term and its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryTerm {
    pub text: String,
    pub weight: f64,
}

fn weight(kind: Kind) -> f64 {
    match kind {
        Kind::Joined => 1.5,
        Kind::Word | Kind::Cjk => 1.0,
        Kind::Part => 0.5,
    }
}

/// The distinct terms of `text`, at most [`MAX_QUERY_TERMS`], in their
/// order, each whole word with its other form ([`other_form`]: found
/// whatever its case); a term that comes as two kinds takes the larger
/// weight.
pub fn query(text: &str) -> Result<Vec<QueryTerm>, HistoryError> {
    if text.trim().is_empty() {
        return Err(HistoryError::EmptyQuery);
    }
    let mut out: Vec<QueryTerm> = Vec::new();
    for term in terms(text) {
        let w = weight(term.kind);
        let other = other_form(text, &term);
        for form in std::iter::once(term.text).chain(other) {
            if let Some(q) = out.iter_mut().find(|q| q.text == form) {
                q.weight = q.weight.max(w);
            } else if out.len() < MAX_QUERY_TERMS {
                out.push(QueryTerm {
                    text: form,
                    weight: w,
                });
            }
        }
    }
    if out.is_empty() {
        return Err(HistoryError::NoTerms);
    }
    Ok(out)
}

/// `limit` if it is from 1 to [`MAX_LIMIT`].
pub fn check_limit(limit: usize) -> Result<(), HistoryError> {
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(())
    } else {
        Err(HistoryError::Limit {
            got: limit,
            max: MAX_LIMIT,
        })
    }
}

/// A ranked passage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranked {
    pub doc: u32,
    pub key: u32,
    pub passage: u32,
    pub score: f64,
}

/// Better first: the higher score, then the later message, then its
/// earlier passage.
fn order(a: &Ranked, b: &Ranked) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then(b.key.cmp(&a.key))
        .then(a.passage.cmp(&b.passage))
}

/// A query term's weighted idf, its postings left and the first of them.
type List<'a> = (f64, Iter<'a>, Option<(u32, u32)>);

/// The `limit` best passages for the query's terms, each given with its
/// postings (none: no passage has it), best first. Passages missing from
/// `stats` are skipped.
pub fn rank(stats: &Stats, terms: &[(&QueryTerm, Option<&Postings>)], limit: usize) -> Vec<Ranked> {
    let n = stats.count() as f64;
    if n == 0.0 || limit == 0 {
        return Vec::new();
    }
    let average = (stats.total_length() as f64 / n).max(1.0);
    // The terms' postings, read side by side in passage order.
    let mut lists: Vec<List<'_>> = Vec::with_capacity(terms.len());
    for &(term, postings) in terms {
        let Some(postings) = postings.filter(|p| !p.is_empty()) else {
            continue;
        };
        let df = postings.len() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0);
        let mut iter = postings.iter();
        let head = iter.next();
        lists.push((term.weight * idf, iter, head));
    }
    let mut best: Vec<Ranked> = Vec::with_capacity(limit.saturating_add(1));
    loop {
        let mut next: Option<u32> = None;
        for &(_, _, head) in &lists {
            if let Some((doc, _)) = head {
                next = Some(next.map_or(doc, |n| n.min(doc)));
            }
        }
        let Some(doc) = next else { break };
        let info = stats.get(doc);
        let mut score = 0.0;
        for (idf, list, head) in &mut lists {
            let Some((at, tf)) = *head else { continue };
            if at != doc {
                continue;
            }
            *head = list.next();
            if let Some(info) = info {
                let tf = f64::from(tf);
                let norm = 1.0 - B + B * f64::from(info.length) / average;
                score += *idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let Some(info) = info else { continue };
        let hit = Ranked {
            doc,
            key: info.key,
            passage: info.passage,
            score,
        };
        let at = best.partition_point(|r| order(r, &hit) != Ordering::Greater);
        if at < limit {
            best.insert(at, hit);
            best.truncate(limit);
        }
    }
    best
}
