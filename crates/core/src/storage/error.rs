//! The one error type of the SessionStore: every way a store call can fail
//! other than bad arguments (those stay `TypeError`s and `RangeError`s).
//!
//! Each variant has a stable [`StoreError::name`], which JavaScript sees as
//! the error's `name` (`ConflictError` stays an instance of the exported
//! class), and a message that says what happened and what to do. Which
//! variant an IndexedDB failure is, is decided here too
//! ([`StoreError::from_dom`]), so that the binding only converts.

use crate::js::number::number_to_string;
use crate::js::string::contains_str;
use std::fmt;

/// Why a save would drop stored messages without `{ replace: true }`.
#[derive(Clone, Debug, PartialEq)]
pub enum DropRefusal {
    /// The array was read with `loadContext`: it starts `offset` stored
    /// messages in.
    BeforeContext { offset: u32 },
    /// `count` removals, the first at stored index `first`, are not all
    /// trailing failed attempts.
    NotFailedAttempts { count: usize, first: usize },
}

impl fmt::Display for DropRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropRefusal::BeforeContext { offset } => write!(
                f,
                "the array starts at the session's last summary (as loadContext returned it): \
                 saving it would drop the {offset} messages before it"
            ),
            DropRefusal::NotFailedAttempts { count, first } => write!(
                f,
                "it would drop {count} stored message(s), the first at index {first}, and only \
                 trailing failed attempts (an assistant error, or a length stop with no output) \
                 are dropped without it"
            ),
        }
    }
}

/// A failed SessionStore call. `action` is the method, e.g. `SessionStore.save`.
#[derive(Clone, Debug, PartialEq)]
pub enum StoreError {
    /// Another store saved the session after this one read it.
    Conflict {
        action: &'static str,
        id: String,
        stored: f64,
        seen: f64,
    },
    /// The session this store read was deleted since (by this store or
    /// another); a session of that id stored now is another one. A
    /// `ConflictError` too.
    Recreated {
        action: &'static str,
        id: String,
    },
    /// The browser refused the write for lack of room; nothing was written.
    QuotaExceeded {
        action: &'static str,
        detail: String,
    },
    SessionNotFound {
        action: &'static str,
        id: String,
    },
    SessionExists {
        action: &'static str,
        id: String,
    },
    /// The save would drop stored messages and `replace` was not given.
    RefusedDrop {
        action: &'static str,
        why: DropRefusal,
    },
    /// Another connection of an older version keeps the upgrade from running.
    UpgradeBlocked {
        database: String,
        version: u32,
    },
    /// The database could not be opened (a newer version on disk, an
    /// upgrade step that failed, storage disabled).
    OpenFailed {
        database: String,
        reason: String,
    },
    /// The store was closed, or the database was deleted or upgraded by
    /// another connection.
    Closed {
        action: &'static str,
        reason: String,
    },
    /// Any other IndexedDB failure, with the browser's name and message.
    Storage {
        action: &'static str,
        dom_name: String,
        message: String,
    },
    /// The session's lock did not come within `waited_ms` (another context
    /// holds it: a long `withSessionLock` callback, a page kept in the
    /// back/forward cache, a worker kept across a reload). The call did
    /// nothing.
    LockTimeout {
        action: &'static str,
        id: String,
        waited_ms: f64,
    },
    /// The browser closed the connection to the database under the call
    /// ("Connection to Indexed Database server lost", "The database
    /// connection is closing"). A call gets this error only when it failed
    /// so again on a reopened connection (`retried`), see
    /// [`super::connection`]; `writes` says whether the call writes.
    ConnectionLost {
        action: &'static str,
        detail: String,
        retried: bool,
        writes: bool,
    },
}

/// Every [`StoreError::name`], for documentation and tests.
pub const NAMES: [&str; 11] = [
    "ConflictError",
    "QuotaExceededError",
    "SessionNotFoundError",
    "SessionExistsError",
    "RefusedDropError",
    "UpgradeBlockedError",
    "OpenFailedError",
    "StoreClosedError",
    "StorageError",
    "LockTimeoutError",
    "ConnectionLostError",
];

impl StoreError {
    /// The stable `name` of the JavaScript error.
    pub fn name(&self) -> &'static str {
        NAMES[match self {
            StoreError::Conflict { .. } | StoreError::Recreated { .. } => 0,
            StoreError::QuotaExceeded { .. } => 1,
            StoreError::SessionNotFound { .. } => 2,
            StoreError::SessionExists { .. } => 3,
            StoreError::RefusedDrop { .. } => 4,
            StoreError::UpgradeBlocked { .. } => 5,
            StoreError::OpenFailed { .. } => 6,
            StoreError::Closed { .. } => 7,
            StoreError::Storage { .. } => 8,
            StoreError::LockTimeout { .. } => 9,
            StoreError::ConnectionLost { .. } => 10,
        }]
    }

    /// An IndexedDB failure (a `DOMException`'s `name` and `message`, either
    /// possibly empty) during `action`, as the variant it is.
    pub fn from_dom(action: &'static str, dom_name: &str, message: &str) -> StoreError {
        if dom_name == "QuotaExceededError" || contains_str(message, "QuotaExceeded") {
            StoreError::QuotaExceeded {
                action,
                detail: message.to_owned(),
            }
        } else if super::connection::is_connection_lost(dom_name, message) {
            // Whether the store or the browser closed it is decided by the
            // caller (`connection::after_failure`), which knows.
            StoreError::ConnectionLost {
                action,
                detail: match dom_name.is_empty() {
                    true => message.to_owned(),
                    false => format!("{dom_name}: {message}"),
                },
                retried: false,
                writes: false,
            }
        } else {
            StoreError::Storage {
                action,
                dom_name: dom_name.to_owned(),
                message: message.to_owned(),
            }
        }
    }
}

impl StoreError {
    /// A failed `add` of session `id`'s record: a `ConstraintError` means
    /// the id is taken.
    pub fn from_add(action: &'static str, id: &str, dom_name: &str, message: &str) -> StoreError {
        match dom_name {
            "ConstraintError" => StoreError::SessionExists {
                action,
                id: id.to_owned(),
            },
            _ => StoreError::from_dom(action, dom_name, message),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Conflict {
                action,
                id,
                stored,
                seen,
            } => write!(
                f,
                "{action}: session \"{id}\" was saved elsewhere (now at revision {}) since this \
                 store read it at revision {}; load it again, reapply the change and save",
                number_to_string(*stored),
                number_to_string(*seen)
            ),
            StoreError::Recreated { action, id } => write!(
                f,
                "{action}: session \"{id}\" was deleted since this store read it, and the \
                 session stored under that id now is another one; load it again, reapply the \
                 change and save"
            ),
            StoreError::QuotaExceeded { action, detail } => write!(
                f,
                "{action}: the browser's storage quota is exceeded; nothing of this change was \
                 written and nothing stored before was lost ({detail})"
            ),
            StoreError::SessionNotFound { action, id } => {
                write!(f, "{action}: there is no session \"{id}\" in this store")
            }
            StoreError::SessionExists { action, id } => {
                write!(f, "{action}: a session with id \"{id}\" already exists")
            }
            StoreError::RefusedDrop { action, why } => write!(
                f,
                "{action}: refused because {why}; pass {{ replace: true }} to replace the stored \
                 session"
            ),
            StoreError::UpgradeBlocked { database, version } => write!(
                f,
                "SessionStore.open: the upgrade of database \"{database}\" to version {version} \
                 is blocked by another open connection (another tab still uses an older \
                 version); close it and open the store again"
            ),
            StoreError::OpenFailed { database, reason } => write!(
                f,
                "SessionStore.open: could not open database \"{database}\": {reason}"
            ),
            StoreError::Closed { action, reason } => write!(f, "{action}: {reason}"),
            StoreError::LockTimeout {
                action,
                id,
                waited_ms,
            } => write!(
                f,
                "{action}: the lock of session \"{id}\" did not come within {} ms, so nothing \
                 was done (another tab or worker holds it: a long withSessionLock callback, or a \
                 page kept in the back/forward cache); try again, or open the store with a \
                 larger lockTimeoutMs",
                number_to_string(*waited_ms)
            ),
            StoreError::ConnectionLost {
                action,
                detail,
                retried,
                writes,
            } => {
                write!(
                    f,
                    "{action}: the browser closed the connection to the database"
                )?;
                if *retried {
                    write!(f, ", and again on a reopened one")?;
                }
                write!(f, " ({detail}); ")?;
                match writes {
                    true => write!(
                        f,
                        "each write is one all-or-nothing transaction, so the stored sessions \
                         are whole: the change was either stored completely or not at all \
                         (load the session to see which), and nothing was written twice"
                    ),
                    false => write!(f, "nothing was changed; try again"),
                }
            }
            StoreError::Storage {
                action,
                dom_name,
                message,
            } => match dom_name.is_empty() {
                true => write!(f, "{action}: {message}"),
                false => write!(f, "{action}: {dom_name}: {message}"),
            },
        }
    }
}

impl std::error::Error for StoreError {}

/// How a store call fails: a [`StoreError`] (a JavaScript `Error` with a
/// stable `name`), or bad arguments (a `TypeError` or a `RangeError` with
/// this message). The store's flows (`save_flow`, `arguments`) return it;
/// the binding only turns it into the JavaScript error.
#[derive(Clone, Debug, PartialEq)]
pub enum CallError {
    Store(StoreError),
    Type(String),
    Range(String),
}

impl From<StoreError> for CallError {
    fn from(e: StoreError) -> CallError {
        CallError::Store(e)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    const SAVE: &str = "SessionStore.save";

    #[test]
    fn names_are_stable_and_distinct() {
        let all = [
            StoreError::Conflict {
                action: SAVE,
                id: "a".into(),
                stored: 3.0,
                seen: 2.0,
            },
            StoreError::from_dom(SAVE, "QuotaExceededError", "full"),
            StoreError::SessionNotFound {
                action: SAVE,
                id: "a".into(),
            },
            StoreError::SessionExists {
                action: SAVE,
                id: "a".into(),
            },
            StoreError::RefusedDrop {
                action: SAVE,
                why: DropRefusal::BeforeContext { offset: 4 },
            },
            StoreError::UpgradeBlocked {
                database: "d".into(),
                version: 3,
            },
            StoreError::OpenFailed {
                database: "d".into(),
                reason: "VersionError".into(),
            },
            StoreError::Closed {
                action: SAVE,
                reason: "the SessionStore is closed".into(),
            },
            StoreError::from_dom(SAVE, "UnknownError", "disk"),
            StoreError::LockTimeout {
                action: SAVE,
                id: "a".into(),
                waited_ms: 30000.0,
            },
            StoreError::from_dom(SAVE, "InvalidStateError", "gone"),
        ];
        let names: Vec<&str> = all.iter().map(StoreError::name).collect();
        assert_eq!(names, NAMES);
        for e in &all {
            assert!(e.to_string().len() > 20, "{e}");
        }
    }

    #[test]
    fn dom_failures_are_classified() {
        // Chromium's quota failure at commit names itself in the message only.
        let e = StoreError::from_dom(SAVE, "AbortError", "QuotaExceededError: no room");
        assert_eq!(e.name(), "QuotaExceededError");
        assert!(e.to_string().contains("storage quota is exceeded"));
        assert!(e.to_string().contains("nothing stored before was lost"));
        // A connection the browser closed: whether to reopen and retry is
        // connection::after_failure's (which turns it into StoreClosedError
        // when the store itself was closed).
        let e = StoreError::from_dom(
            SAVE,
            "InvalidStateError",
            "Failed to execute 'transaction' on 'IDBDatabase': The database connection is closing.",
        );
        assert_eq!(e.name(), "ConnectionLostError");
        let e = StoreError::from_dom(
            SAVE,
            "UnknownError",
            "Connection to Indexed Database server lost. Refresh the page to try again",
        );
        assert_eq!(e.name(), "ConnectionLostError");
        assert!(e.to_string().contains("server lost"), "{e}");
        assert_eq!(
            StoreError::from_dom(SAVE, "UnknownError", "disk").name(),
            "StorageError"
        );
        assert_eq!(
            StoreError::from_add(
                "SessionStore.createSession",
                "x",
                "ConstraintError",
                "taken"
            )
            .name(),
            "SessionExistsError"
        );
        assert_eq!(
            StoreError::from_dom(SAVE, "", "boom").to_string(),
            "SessionStore.save: boom"
        );
        assert_eq!(
            StoreError::from_dom(SAVE, "DataError", "bad key").to_string(),
            "SessionStore.save: DataError: bad key"
        );
    }

    #[test]
    fn messages_say_what_to_do() {
        let e = StoreError::Conflict {
            action: SAVE,
            id: "s".into(),
            stored: 5.0,
            seen: 4.0,
        };
        assert_eq!(
            e.to_string(),
            "SessionStore.save: session \"s\" was saved elsewhere (now at revision 5) since this \
             store read it at revision 4; load it again, reapply the change and save"
        );
        let e = StoreError::Recreated {
            action: SAVE,
            id: "main".into(),
        };
        assert_eq!(e.name(), "ConflictError");
        assert_eq!(
            e.to_string(),
            "SessionStore.save: session \"main\" was deleted since this store read it, and the \
             session stored under that id now is another one; load it again, reapply the change \
             and save"
        );
        let e = StoreError::RefusedDrop {
            action: SAVE,
            why: DropRefusal::NotFailedAttempts { count: 2, first: 7 },
        };
        let text = e.to_string();
        assert!(text.contains("drop 2 stored message(s), the first at index 7"));
        assert!(text.ends_with("pass { replace: true } to replace the stored session"));
        let e = StoreError::SessionNotFound {
            action: "SessionStore.load",
            id: "one".into(),
        };
        assert_eq!(
            e.to_string(),
            "SessionStore.load: there is no session \"one\" in this store"
        );
        let e = StoreError::LockTimeout {
            action: SAVE,
            id: "s".into(),
            waited_ms: 250.0,
        };
        let text = e.to_string();
        assert!(text.starts_with("SessionStore.save: the lock of session \"s\" did not come within 250 ms, so nothing was done"), "{text}");
        assert!(text.contains("lockTimeoutMs"), "{text}");
        let lost = |retried, writes| {
            StoreError::ConnectionLost {
                action: SAVE,
                detail: "UnknownError: Connection to Indexed Database server lost".into(),
                retried,
                writes,
            }
            .to_string()
        };
        assert!(lost(true, true).contains("and again on a reopened one"));
        assert!(lost(true, true).contains("nothing was written twice"));
        assert!(lost(true, true).contains("stored completely or not at all"));
        assert!(!lost(false, false).contains("again on"));
        assert!(lost(true, false).ends_with("nothing was changed; try again"));
    }
}
