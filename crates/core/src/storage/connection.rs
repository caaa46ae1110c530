//! The store's connection to IndexedDB when the browser takes it away or
//! never gives it: which failures mean a lost connection, whether a call
//! reopens the database and runs again, how a write tells on its second
//! attempt whether its first one committed, and why opening failed. (How
//! durable each write is: `save_plan::durability`.)
//!
//! Engines close connections on their own: WebKit's "Connection to Indexed
//! Database server lost" (its storage process went away), an
//! `InvalidStateError` "The database connection is closing" once the
//! browser closed it (the `close` event), storage cleared under the page.
//! The data is not lost, only the connection: a call that fails so is run
//! once more on a reopened connection. Every write is one transaction,
//! which either committed or not; when the first attempt may have committed
//! (the connection went while it was committing), the second reads what is
//! stored before writing, holding the session's lock the whole time, so
//! that nothing is written twice ([`save_landed`], [`whole_landed`],
//! [`delete_landed`]).
//!
//! The host (the package's `SessionStore`) only detects, reopens and
//! re-runs; every branch it takes is one of these answers.

use super::error::StoreError;
use super::meta::SaveFields;
use crate::js::string::contains_str;

/// How many times a call runs at most: once, and once more on a reopened
/// connection.
pub const ATTEMPTS: u32 = 2;

/// Whether an IndexedDB failure (a `DOMException`'s `name` and `message`)
/// means the connection to the database went away rather than the request
/// being wrong: any `InvalidStateError` (this store's requests are only
/// invalid on a closed connection), and WebKit's and Chromium's messages
/// of a lost or closing connection whatever their name (`UnknownError`,
/// `AbortError`).
pub fn is_connection_lost(dom_name: &str, message: &str) -> bool {
    if dom_name == "InvalidStateError" {
        return true;
    }
    let m = message.to_ascii_lowercase();
    let has = |s| contains_str(&m, s);
    has("server lost") || (has("connection") && (has("lost") || has("clos")))
}

/// What the binding knows when a call's attempt failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The attempt that failed: 1, then 2.
    pub attempt: u32,
    /// The failure was a lost connection (`StoreError::ConnectionLost`,
    /// from [`is_connection_lost`]), or the database's `close` event came
    /// while it ran.
    pub lost: bool,
    /// The store was closed by the app, or the database was deleted or
    /// upgraded by another connection (its `versionchange`): the
    /// connection went because it was meant to.
    pub closed: bool,
}

/// What happens after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Reopen the database and run the call again.
    Retry,
    /// The call fails with this error, as it is.
    Fail,
    /// The call fails with a lost connection that tried again
    /// (`ConnectionLost { retried: true }`).
    FailRetried,
    /// The call fails as the store's closing says (`StoreError::Closed`):
    /// the connection went because the store or the database is gone,
    /// and reopening it would undo that (recreate a deleted database,
    /// block another tab's upgrade).
    Closed,
}

pub fn after_failure(f: Failure) -> Next {
    if !f.lost {
        Next::Fail
    } else if f.closed {
        Next::Closed
    } else if f.attempt < ATTEMPTS {
        Next::Retry
    } else {
        Next::FailRetried
    }
}

/// What a store knows of its connection beyond the handle (which the host
/// holds): whether it is closed for good and why, how many connections it
/// adopted and how many the browser closed, and why the last one went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Link {
    /// Why the store is closed for good: `close()`, or the database deleted
    /// or upgraded by another connection. Never reopened then.
    lost: Option<String>,
    /// Increases with every connection adopted: a call drops the handle it
    /// failed on, not a newer one another call opened meanwhile.
    generation: u32,
    /// How many times the browser closed the connection (`close` events).
    drops: u32,
    /// Why the browser's last close or lost connection happened.
    detail: Option<String>,
}

/// A [`Link`] as an attempt started: compared after it fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    generation: u32,
    drops: u32,
}

/// After a failed attempt: what the call does next, and whether the host
/// closes and drops its handle first (the attempt's own connection,
/// closed under it without a close event, so its requests throw).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfterFailure {
    pub next: Next,
    pub drop_handle: bool,
}

impl Link {
    /// The app's `close()`: the first reason to close stays.
    pub fn close(&mut self) {
        self.lost
            .get_or_insert_with(|| "the SessionStore is closed".into());
    }

    /// Another connection deletes or upgrades database `db`.
    pub fn version_changed(&mut self, db: &str) {
        self.lost = Some(format!(
            "the database \"{db}\" was deleted or upgraded by another connection; open the store again"
        ));
    }

    /// Whether the store is closed for good.
    pub fn is_closed(&self) -> bool {
        self.lost.is_some()
    }

    /// The error of a call of `action` on a store closed for good.
    pub fn closed_error(&self, action: &'static str) -> StoreError {
        let reason = self.lost.clone();
        StoreError::Closed {
            action,
            reason: reason.unwrap_or_else(|| "the SessionStore is closed".into()),
        }
    }

    /// The browser closed the connection (its `close` event).
    pub fn browser_closed(&mut self) {
        self.drops += 1;
        self.detail = Some("the browser closed the connection (its close event)".into());
    }

    /// A connection was opened and made the store's.
    pub fn adopted(&mut self) {
        self.generation += 1;
    }

    /// Reopening the database failed (`why`): the call fails as lost.
    pub fn reopen_failed(&mut self, action: &'static str, why: &str) -> StoreError {
        self.detail = Some(format!("reopening it failed: {why}"));
        self.lost_error(action, false, false)
    }

    /// A lost connection as the error a call of `action` fails with.
    fn lost_error(&self, action: &'static str, retried: bool, writes: bool) -> StoreError {
        let detail = self.detail.clone();
        StoreError::ConnectionLost {
            action,
            detail: detail.unwrap_or_else(|| "the connection went away".into()),
            retried,
            writes,
        }
    }

    /// Taken as an attempt starts.
    pub fn mark(&self) -> Mark {
        Mark {
            generation: self.generation,
            drops: self.drops,
        }
    }

    /// Attempt `attempt` of a call of `action` (which `writes` or not),
    /// started at `mark`, failed: with a lost connection (`lost`, with the
    /// browser's `words` for it where they are new), or otherwise. `Err`:
    /// the error the call fails with instead of the attempt's own.
    pub fn after_failure(
        &mut self,
        mark: Mark,
        attempt: u32,
        (lost, words): (bool, Option<String>),
        (action, writes): (&'static str, bool),
    ) -> Result<AfterFailure, StoreError> {
        if words.is_some() {
            self.detail = words;
        }
        let next = after_failure(Failure {
            attempt,
            lost: lost || self.drops != mark.drops,
            closed: self.is_closed(),
        });
        match next {
            Next::Closed => Err(self.closed_error(action)),
            Next::FailRetried => Err(self.lost_error(action, true, writes)),
            next => Ok(AfterFailure {
                next,
                drop_handle: next == Next::Retry && self.generation == mark.generation,
            }),
        }
    }
}

/// Whether the first attempt of a write committed, as its second attempt
/// finds out, holding the session's lock since before the first (a lock
/// that keeps out only this page where Web Locks are missing: then another
/// page or worker may write between the attempts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landed {
    /// Nothing of it is stored: write it now.
    No,
    /// It committed: report it done, write nothing.
    Yes,
    /// What is stored is neither: the usual error of the call (a
    /// `ConflictError` for a save, `SessionExistsError` for an id taken).
    Other,
}

/// A save from revision `seen`, on its second attempt, finds the session
/// record at revision `stored`, holding the save's fields `found` (`None`
/// where one is missing or of another type). `first`: the fields its first
/// attempt wrote over the record, if it got as far as committing. That
/// attempt committed only if the record holds those very fields: a stored
/// revision `seen + 1` alone does not tell, since where the session's lock
/// keeps out only this page (no Web Locks), another page or worker may
/// have saved revision `seen + 1` between the two attempts; its save is
/// not this one.
pub fn save_landed(
    seen: f64,
    stored: f64,
    found: Option<&SaveFields>,
    first: Option<&SaveFields>,
) -> Landed {
    if stored == seen {
        Landed::No
    } else if first.is_some_and(|wrote| stored == seen + 1.0 && found == Some(wrote)) {
        Landed::Yes
    } else {
        Landed::Other
    }
}

/// A call that writes a new session whole (`createSession`, `fork`,
/// `importJsonl`), on its second attempt, finds its id: free (`None`), or
/// taken by a record that is (`Some(true)`) or is not (`Some(false)`) the
/// one its first attempt wrote, property by property. Another page that
/// wrote under the id between the attempts (possible without Web Locks,
/// and for `createSession`, which takes no lock, always) wrote its own
/// `createdAt` and `lastModified`: not the same record.
pub fn whole_landed(found: Option<bool>, retry: bool) -> Landed {
    match found {
        None => Landed::No,
        Some(true) if retry => Landed::Yes,
        Some(_) => Landed::Other,
    }
}

/// `delete` finds the session (`found`) or not: gone on the second attempt
/// means the first one deleted it, or another page did between the
/// attempts (without Web Locks); either way what the call asked for is
/// done, and nothing else was removed.
pub fn delete_landed(found: bool, retry: bool) -> Landed {
    match (found, retry) {
        (true, _) => Landed::No,
        (false, true) => Landed::Yes,
        (false, false) => Landed::Other,
    }
}

/// Why `SessionStore.open` could not open the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenFailure {
    /// No `indexedDB` in this realm (deleted by a privacy setting or an
    /// extension, not a browser, or a private mode without storage).
    NoIndexedDb,
    /// `indexedDB.open` threw (`SecurityError` where storage is refused:
    /// an opaque origin, third-party storage blocked, Firefox's private
    /// mode before version 115 threw `InvalidStateError`).
    Threw { name: String, message: String },
    /// The open request failed with this error (`UnknownError` where the
    /// browser cannot use its disk, `VersionError` for a newer database).
    Request { name: String, message: String },
    /// A step of the schema upgrade threw.
    Upgrade { why: String, version: u32 },
}

/// The reason `StoreError::OpenFailed` gives for `failure`: what happened,
/// and, where storage is unavailable, that it is and why it may be.
pub fn open_failure_reason(failure: &OpenFailure) -> String {
    const UNAVAILABLE: &str = "IndexedDB storage is unavailable here";
    const WHY: &str = "a private browsing mode, storage disabled or blocked for this site, or an \
                       opaque origin such as a sandboxed iframe; the rest of the package works \
                       without a store";
    let dom = |name: &str, message: &str| match (name.is_empty(), message.is_empty()) {
        (true, _) => message.to_owned(),
        (false, true) => name.to_owned(),
        (false, false) => format!("{name}: {message}"),
    };
    match failure {
        OpenFailure::NoIndexedDb => {
            format!("{UNAVAILABLE}: this environment has no indexedDB ({WHY})")
        }
        OpenFailure::Threw { name, message } => format!(
            "{UNAVAILABLE}: the browser refused to open it ({}) ({WHY})",
            dom(name, message)
        ),
        OpenFailure::Request { name, message } if name == "VersionError" => format!(
            "the database on disk was written by a newer version of agent-compaction ({}); \
             open it with that version",
            dom(name, message)
        ),
        OpenFailure::Request { name, message } => format!(
            "{UNAVAILABLE}: the open request failed ({}) ({WHY}, or the browser cannot write \
             to its disk)",
            dom(name, message)
        ),
        OpenFailure::Upgrade { why, version } => {
            format!("the upgrade to version {version} failed: {why}")
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_are_told_from_other_failures() {
        for (name, message) in [
            (
                "UnknownError",
                "Connection to Indexed Database server lost. Refresh the page to try again",
            ),
            (
                "InvalidStateError",
                "Failed to execute 'transaction' on 'IDBDatabase': The database connection is closing.",
            ),
            (
                "InvalidStateError",
                "IDBDatabase.transaction: Can't start a transaction on a closed database",
            ),
            ("AbortError", "The connection was closed."),
            ("", "Connection is closing."),
        ] {
            assert!(is_connection_lost(name, message), "{name}: {message}");
        }
        for (name, message) in [
            ("UnknownError", "Internal error writing to the database"),
            ("DataError", "The data provided does not meet requirements"),
            ("QuotaExceededError", "The quota has been exceeded."),
            ("ConstraintError", "Key already exists in the object store."),
            ("AbortError", "The transaction was aborted"),
        ] {
            assert!(!is_connection_lost(name, message), "{name}: {message}");
        }
    }

    #[test]
    fn a_lost_connection_is_retried_once_unless_the_store_closed() {
        let lost = |attempt, closed| Failure {
            attempt,
            lost: true,
            closed,
        };
        assert_eq!(after_failure(lost(1, false)), Next::Retry);
        assert_eq!(after_failure(lost(2, false)), Next::FailRetried);
        assert_eq!(after_failure(lost(1, true)), Next::Closed);
        assert_eq!(after_failure(lost(2, true)), Next::Closed);
        for attempt in [1, 2] {
            for closed in [false, true] {
                assert_eq!(
                    after_failure(Failure {
                        attempt,
                        lost: false,
                        closed
                    }),
                    Next::Fail
                );
            }
        }
    }

    #[test]
    fn a_retried_write_tells_whether_its_first_attempt_committed() {
        // Save: revision seen+1 is the first attempt's only when the record
        // holds the very fields that attempt wrote.
        let wrote = SaveFields {
            last_modified: 200.0,
            message_count: 3,
            context_tokens: 40.0,
            preview: "hi".into(),
            revision: 5.0,
            context_slot: 0,
        };
        let ours = Some(&wrote);
        assert_eq!(save_landed(4.0, 4.0, None, None), Landed::No);
        assert_eq!(save_landed(4.0, 4.0, None, ours), Landed::No);
        assert_eq!(save_landed(4.0, 5.0, ours, ours), Landed::Yes);
        // Revision 5 on a first attempt, or on a second whose first never
        // got to its commit: another writer's.
        assert_eq!(save_landed(4.0, 5.0, ours, None), Landed::Other);
        assert_eq!(save_landed(4.0, 6.0, ours, ours), Landed::Other);
        assert_eq!(save_landed(4.0, 3.0, ours, ours), Landed::Other);
        // Without Web Locks another page saved revision 5 between the
        // attempts: its record differs in any field the save writes.
        let theirs = |f: fn(&mut SaveFields)| {
            let mut other = wrote.clone();
            f(&mut other);
            save_landed(4.0, 5.0, Some(&other), ours)
        };
        assert_eq!(theirs(|f| f.last_modified = 201.0), Landed::Other);
        assert_eq!(theirs(|f| f.message_count = 4), Landed::Other);
        assert_eq!(theirs(|f| f.context_tokens = 41.0), Landed::Other);
        assert_eq!(theirs(|f| f.preview = "ho".into()), Landed::Other);
        assert_eq!(theirs(|f| f.context_slot = 1), Landed::Other);
        // A record whose fields cannot all be read is not the one written.
        assert_eq!(save_landed(4.0, 5.0, None, ours), Landed::Other);
        // A whole session: the record the first attempt wrote, on a retry.
        assert_eq!(whole_landed(None, true), Landed::No);
        assert_eq!(whole_landed(None, false), Landed::No);
        assert_eq!(whole_landed(Some(true), true), Landed::Yes);
        assert_eq!(whole_landed(Some(true), false), Landed::Other);
        assert_eq!(whole_landed(Some(false), true), Landed::Other);
        // Delete: gone on the retry is the first attempt's doing.
        assert_eq!(delete_landed(true, true), Landed::No);
        assert_eq!(delete_landed(false, true), Landed::Yes);
        assert_eq!(delete_landed(false, false), Landed::Other);
    }

    #[test]
    fn open_failures_say_storage_is_unavailable_and_why() {
        let text = open_failure_reason(&OpenFailure::NoIndexedDb);
        assert!(
            text.starts_with("IndexedDB storage is unavailable here"),
            "{text}"
        );
        assert!(text.contains("no indexedDB"));
        assert!(text.contains("private browsing"));
        assert!(text.contains("works without a store"));
        let text = open_failure_reason(&OpenFailure::Threw {
            name: "SecurityError".into(),
            message: "access to the Indexed Database API is denied in this context".into(),
        });
        assert!(text.contains("unavailable"), "{text}");
        assert!(text.contains("SecurityError: access to the Indexed Database API is denied"));
        let text = open_failure_reason(&OpenFailure::Threw {
            name: "InvalidStateError".into(),
            message: String::new(),
        });
        assert!(
            text.contains("refused to open it (InvalidStateError)"),
            "{text}"
        );
        let text = open_failure_reason(&OpenFailure::Request {
            name: "UnknownError".into(),
            message: "Internal error opening backing store".into(),
        });
        assert!(text.contains("unavailable"), "{text}");
        assert!(text.contains("cannot write to its disk"));
        let text = open_failure_reason(&OpenFailure::Request {
            name: "VersionError".into(),
            message: "The requested version (3) is less than the existing version (99).".into(),
        });
        assert!(text.contains("newer version of agent-compaction"), "{text}");
        assert!(!text.contains("unavailable"));
        assert_eq!(
            open_failure_reason(&OpenFailure::Upgrade {
                why: "boom".into(),
                version: 3
            }),
            "the upgrade to version 3 failed: boom"
        );
    }

    const CALL: (&str, bool) = ("SessionStore.save", true);

    fn lost(detail: &str, retried: bool) -> StoreError {
        StoreError::ConnectionLost {
            action: CALL.0,
            detail: detail.into(),
            retried,
            writes: true,
        }
    }

    #[test]
    fn a_lost_connection_is_retried_once_then_fails_with_its_detail() {
        let mut link = Link::default();
        link.adopted();
        let mark = link.mark();
        let words = (
            true,
            Some("Connection to Indexed Database server lost".to_owned()),
        );
        let again = link.after_failure(mark, 1, words.clone(), CALL);
        let retry = AfterFailure {
            next: Next::Retry,
            drop_handle: true,
        };
        assert_eq!(again, Ok(retry));
        // Another call adopted a reopened connection meanwhile: it stays.
        link.adopted();
        let again = link.after_failure(mark, 1, words.clone(), CALL);
        assert!(!again.unwrap().drop_handle);
        let mark = link.mark();
        let last = link.after_failure(mark, 2, (false, None), CALL);
        // Failed otherwise on the second attempt: its own error.
        let fail = AfterFailure {
            next: Next::Fail,
            drop_handle: false,
        };
        assert_eq!(last, Ok(fail));
        // Lost again, the words kept from the first time.
        let last = link.after_failure(mark, 2, (true, None), CALL);
        assert_eq!(
            last,
            Err(lost("Connection to Indexed Database server lost", true))
        );
    }

    #[test]
    fn a_close_event_during_an_attempt_counts_as_a_lost_connection() {
        let mut link = Link::default();
        let mark = link.mark();
        link.browser_closed();
        let again = link.after_failure(mark, 1, (false, None), CALL);
        assert_eq!(again.unwrap().next, Next::Retry);
        let mark = link.mark();
        link.browser_closed();
        assert_eq!(
            link.after_failure(mark, 2, (false, None), CALL),
            Err(lost(
                "the browser closed the connection (its close event)",
                true
            ))
        );
        assert_eq!(
            link.reopen_failed(CALL.0, "UnknownError"),
            StoreError::ConnectionLost {
                action: CALL.0,
                detail: "reopening it failed: UnknownError".into(),
                retried: false,
                writes: false,
            }
        );
    }

    #[test]
    fn a_store_closed_for_good_says_why_and_is_not_reopened() {
        let mut link = Link::default();
        assert!(!link.is_closed());
        link.version_changed("db");
        link.close();
        assert!(link.is_closed());
        let closed = StoreError::Closed {
            action: CALL.0,
            reason: "the database \"db\" was deleted or upgraded by another connection; open the store again".into(),
        };
        assert_eq!(link.closed_error(CALL.0), closed);
        let mark = link.mark();
        let words = (true, Some("The database connection is closing.".to_owned()));
        assert_eq!(link.after_failure(mark, 1, words, CALL), Err(closed));
        let mut link = Link::default();
        link.close();
        let closed = StoreError::Closed {
            action: CALL.0,
            reason: "the SessionStore is closed".into(),
        };
        assert_eq!(link.closed_error(CALL.0), closed);
    }
}
