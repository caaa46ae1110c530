//! A search of what the model no longer sees: the messages before the last
//! summary and the tool outputs replaced by placeholders, searched by words
//! and read back by reference.
//!
//! - [`words`]: the terms of a text (identifiers, paths, numbers and CJK
//!   text are searchable);
//! - [`passage`]: a message's passages, the documents of the search;
//! - [`index`]: for every term the passages that have it, built message by
//!   message within a memory cap;
//! - [`postings`]: one term's postings and the passages' statistics, each
//!   encodable to bytes on its own, so that a store keyed by term reads
//!   only a query's terms (`storage::history` keeps them in records beside
//!   a session's);
//! - [`rank`]: BM25 over a query's terms, from postings and statistics
//!   alone;
//! - [`excerpt`]: the short window of a passage that shows most of the
//!   query;
//! - [`reference`](mod@reference): the short reference a model copies to read the
//!   original text, page by page, refused once the message has changed;
//! - [`lookup`]: what an adapter asks for one conversation: which messages
//!   are hidden, which text of each is searched, what brings an index in
//!   step, and a search in two steps (ranking, then hits from the few
//!   texts ranked);
//! - [`tool`]: the two tools a model calls, `search_history` and
//!   `read_history`: definitions, arguments and answers.

pub mod excerpt;
pub mod index;
pub mod lookup;
pub mod passage;
pub mod postings;
pub mod rank;
pub mod reference;
pub mod tool;
pub mod words;

/// Why a search, a read or a stored record was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("the query is empty")]
    EmptyQuery,
    #[error("the query has no words to search for (letters or digits), only spaces, punctuation or symbols such as emoji")]
    NoTerms,
    #[error("limit must be from 1 to {max}, got {got}")]
    Limit { got: usize, max: usize },
    #[error("{reference:?} is not a history reference ({why}); a reference looks like h12.3-0k7f")]
    BadReference {
        reference: String,
        why: &'static str,
    },
    #[error(
        "message {key} is not in the history index (it may be in your context again, or the \
         reference is not from this conversation): search again for a current reference"
    )]
    UnknownMessage { key: u32 },
    #[error("message {key} has {count} passage(s), so no passage {passage}")]
    UnknownPassage {
        key: u32,
        passage: u32,
        count: usize,
    },
    #[error("message {key} has changed since it was found: search again for a current reference")]
    Changed { key: u32 },
    /// `offset` and `len` in UTF-16 code units.
    #[error(
        "offset {offset} is past the end of message {key}, whose text is {len} characters \
         long: pass the offset a page gave as next"
    )]
    BadOffset { key: u32, offset: usize, len: usize },
    #[error("maxChars must be from 1 to {max}, got {got}")]
    PageSize { got: usize, max: usize },
    #[error("the history index holds as many passages as it can number: rebuild it")]
    Full,
    #[error("the stored {what} has format version {got}, this build reads version {expected}")]
    Version {
        what: &'static str,
        got: u8,
        expected: u8,
    },
    #[error("the stored {what} is damaged: {why}")]
    Corrupt {
        what: &'static str,
        why: &'static str,
    },
}
