//! The lock lease policy: when a session's Web Lock, kept after a call, is
//! reused, how long it is kept, and what a failed lock request falls back to.
//!
//! Asking the browser for a lock is a round trip to its lock manager
//! (~0.3–0.5 ms), as long as a one-turn save's own work. So a page keeps a
//! lock it was granted for [`LINGER_MS`] after its last call (a *lease*),
//! and the calls made meanwhile (the next messages of a turn) run under it.
//! Exclusion is unchanged: the lock is held the whole time and its calls run
//! one at a time. Others are not kept waiting: a context that finds the lock
//! taken says so on a channel, and a lease told so, or whose page is hidden
//! (timers are throttled there), takes no new calls and lets the lock go as
//! soon as its current ones end.
//!
//! The host holds the leases (Web Locks) and asks these functions at
//! each point where the policy decides, with the facts as [`LeaseFacts`].
//!
//! No call waits for a lock forever: a lock can stay taken for good (Safari
//! keeps the locks of a page in its back/forward cache, and of a worker
//! across reloads), and where `navigator.locks` is missing a queue in the
//! page stands in, which a hung call would block. A call whose lock does
//! not come within the store's lock timeout ([`lock_timeout`], default
//! [`DEFAULT_LOCK_TIMEOUT_MS`]) gives up its place in the queue and fails
//! with `StoreError::LockTimeout`, having done nothing.

/// How long a granted lock is kept after its last call ends.
pub const LINGER_MS: f64 = 100.0;

/// The BroadcastChannel on which a context says it wants a lock.
pub const LOCK_CHANNEL: &str = "agent-compaction-locks";

/// How long a call waits for its session's lock by default: longer than
/// any call of the store holds it (milliseconds for a save), and than most
/// `withSessionLock` callbacks (a compaction's LLM call), short enough for
/// a page to say something is wrong while the user still waits.
pub const DEFAULT_LOCK_TIMEOUT_MS: f64 = 30_000.0;

/// The longest lock timeout: the largest delay a JavaScript timer takes.
pub const MAX_LOCK_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// Why a `lockTimeoutMs` option is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeoutOptionError {
    /// Not a number (a `TypeError`).
    NotANumber,
    /// Not in 1..=[`MAX_LOCK_TIMEOUT_MS`] (a `RangeError`), as printed.
    OutOfRange,
}

/// The store's lock timeout from its `lockTimeoutMs` option: absent is the
/// default; a number must be from 1 to [`MAX_LOCK_TIMEOUT_MS`] (there is
/// no "forever", which is what this bounds). `Some(None)`: not a number.
pub fn lock_timeout(option: Option<Option<f64>>) -> Result<f64, TimeoutOptionError> {
    match option {
        None => Ok(DEFAULT_LOCK_TIMEOUT_MS),
        Some(None) => Err(TimeoutOptionError::NotANumber),
        Some(Some(ms)) if (1.0..=MAX_LOCK_TIMEOUT_MS).contains(&ms) => Ok(ms),
        Some(Some(_)) => Err(TimeoutOptionError::OutOfRange),
    }
}

impl TimeoutOptionError {
    /// The error a bad `lockTimeoutMs` is, `got` describing the value.
    pub fn call_error(self, got: &str) -> super::error::CallError {
        use super::error::CallError;
        match self {
            TimeoutOptionError::NotANumber => CallError::Type(format!(
                "options.lockTimeoutMs must be a number of milliseconds, got {got}"
            )),
            TimeoutOptionError::OutOfRange => CallError::Range(format!(
                "options.lockTimeoutMs must be from 1 to {} milliseconds, got {got}",
                crate::js::number::number_to_string(MAX_LOCK_TIMEOUT_MS)
            )),
        }
    }
}

/// The Web Lock of session `id` of database `db`; every lock of the
/// database starts with [`lock_prefix`] (released together on `close`).
pub fn lock_name(db: &str, id: &str) -> String {
    format!("{}{id}", lock_prefix(db))
}

pub fn lock_prefix(db: &str) -> String {
    format!("agent-compaction:{db}:")
}

/// What the shim knows of a lease when it asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseFacts {
    /// Calls running or queued under it.
    pub calls: u32,
    /// The browser granted the lock.
    pub granted: bool,
    /// Someone else wants the lock, or the page went away: no new calls.
    pub giving_up: bool,
    /// The lock request failed.
    pub failed: bool,
    /// The page is hidden.
    pub hidden: bool,
}

impl LeaseFacts {
    /// Bits of the flags as the shim packs them: granted 1, giving up 2,
    /// failed 4, hidden 8.
    pub fn from_bits(calls: u32, bits: u32) -> LeaseFacts {
        LeaseFacts {
            calls,
            granted: bits & 1 != 0,
            giving_up: bits & 2 != 0,
            failed: bits & 4 != 0,
            hidden: bits & 8 != 0,
        }
    }
}

/// Whether a call may run under the kept lock at once, without queueing
/// (`takeLease`): the lock is granted, idle, and still taking calls.
pub fn may_take(f: LeaseFacts) -> bool {
    f.calls == 0 && f.granted && !f.giving_up && !f.failed
}

/// What happens to a lease whose last call ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Idle {
    /// Let the lock go now.
    Release,
    /// Keep it this many milliseconds for the next call.
    Linger(f64),
}

pub fn when_idle(f: LeaseFacts) -> Idle {
    if f.giving_up || f.failed || f.hidden {
        Idle::Release
    } else {
        Idle::Linger(LINGER_MS)
    }
}

/// What a call does when the lock request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// Web Locks are refused here (an opaque origin): a queue in this realm
    /// gives the same exclusion within the page.
    RealmQueue,
    /// Any other failure is the call's.
    Reject,
}

/// `error_name`: the failed request's error's `name`.
pub fn on_lock_failure(error_name: &str) -> OnFailure {
    match error_name {
        "SecurityError" => OnFailure::RealmQueue,
        _ => OnFailure::Reject,
    }
}

/// The questions the shim asks, as numbers, and the answers as one number:
/// the binding's policy function is `(question, calls, bits) -> number`.
pub mod question {
    /// [`super::may_take`]: 1 or 0.
    pub const TAKE: u32 = 0;
    /// [`super::when_idle`]: the linger in ms, or -1 to release now.
    pub const IDLE: u32 = 1;
    /// [`super::on_lock_failure`] with `bits` 1 for a `SecurityError`: 1 for
    /// the realm queue, 0 to reject.
    pub const FAILED: u32 = 2;
}

/// The answer to `question` (see [`question`]); an unknown question is
/// answered as safely as can be: no reuse, release, reject.
pub fn answer(question: u32, calls: u32, bits: u32) -> f64 {
    let facts = LeaseFacts::from_bits(calls, bits);
    match question {
        question::TAKE => f64::from(u8::from(may_take(facts))),
        question::IDLE => match when_idle(facts) {
            Idle::Release => -1.0,
            Idle::Linger(ms) => ms,
        },
        question::FAILED => {
            let name = if bits & 1 != 0 { "SecurityError" } else { "" };
            match on_lock_failure(name) {
                OnFailure::RealmQueue => 1.0,
                OnFailure::Reject => 0.0,
            }
        }
        _ => -1.0,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn lock_names_and_timeout_errors() {
        assert_eq!(lock_name("db", "s1"), "agent-compaction:db:s1");
        assert!(lock_name("db", "s1").starts_with(&lock_prefix("db")));
        use super::super::error::CallError;
        assert_eq!(
            TimeoutOptionError::NotANumber.call_error("a string"),
            CallError::Type(
                "options.lockTimeoutMs must be a number of milliseconds, got a string".into()
            )
        );
        assert_eq!(
            TimeoutOptionError::OutOfRange.call_error("0"),
            CallError::Range(
                "options.lockTimeoutMs must be from 1 to 2147483647 milliseconds, got 0".into()
            )
        );
    }

    const GRANTED: LeaseFacts = LeaseFacts {
        calls: 0,
        granted: true,
        giving_up: false,
        failed: false,
        hidden: false,
    };

    #[test]
    fn an_idle_granted_lease_is_reused() {
        assert!(may_take(GRANTED));
        assert!(!may_take(LeaseFacts {
            calls: 1,
            ..GRANTED
        }));
        assert!(!may_take(LeaseFacts {
            granted: false,
            ..GRANTED
        }));
        assert!(!may_take(LeaseFacts {
            giving_up: true,
            ..GRANTED
        }));
        assert!(!may_take(LeaseFacts {
            failed: true,
            ..GRANTED
        }));
    }

    #[test]
    fn kept_for_the_linger_unless_wanted_failed_or_hidden() {
        assert_eq!(when_idle(GRANTED), Idle::Linger(LINGER_MS));
        for f in [
            LeaseFacts {
                giving_up: true,
                ..GRANTED
            },
            LeaseFacts {
                failed: true,
                ..GRANTED
            },
            LeaseFacts {
                hidden: true,
                ..GRANTED
            },
        ] {
            assert_eq!(when_idle(f), Idle::Release);
        }
    }

    #[test]
    fn only_a_refusal_falls_back_to_the_realm_queue() {
        assert_eq!(on_lock_failure("SecurityError"), OnFailure::RealmQueue);
        assert_eq!(on_lock_failure("AbortError"), OnFailure::Reject);
    }

    #[test]
    fn the_lock_timeout_is_bounded() {
        assert_eq!(lock_timeout(None), Ok(DEFAULT_LOCK_TIMEOUT_MS));
        assert_eq!(lock_timeout(Some(Some(250.0))), Ok(250.0));
        assert_eq!(
            lock_timeout(Some(Some(0.5))),
            Err(TimeoutOptionError::OutOfRange)
        );
        assert_eq!(lock_timeout(Some(Some(1.0))), Ok(1.0));
        assert_eq!(
            lock_timeout(Some(Some(MAX_LOCK_TIMEOUT_MS))),
            Ok(MAX_LOCK_TIMEOUT_MS)
        );
        for bad in [
            0.0,
            -5.0,
            f64::NAN,
            f64::INFINITY,
            MAX_LOCK_TIMEOUT_MS + 1.0,
        ] {
            assert_eq!(
                lock_timeout(Some(Some(bad))),
                Err(TimeoutOptionError::OutOfRange),
                "{bad}"
            );
        }
        assert_eq!(
            lock_timeout(Some(None)),
            Err(TimeoutOptionError::NotANumber)
        );
        // Longer than a lease is kept, so a kept lock never times a call out.
        const { assert!(DEFAULT_LOCK_TIMEOUT_MS > LINGER_MS * 10.0) };
    }

    #[test]
    fn answers_as_numbers() {
        assert_eq!(answer(question::TAKE, 0, 1), 1.0);
        assert_eq!(answer(question::TAKE, 0, 1 | 2), 0.0);
        assert_eq!(answer(question::IDLE, 0, 1), LINGER_MS);
        assert_eq!(answer(question::IDLE, 0, 1 | 8), -1.0);
        assert_eq!(answer(question::FAILED, 0, 1), 1.0);
        assert_eq!(answer(question::FAILED, 0, 0), 0.0);
        assert_eq!(answer(99, 0, 1), -1.0);
        assert_eq!(
            LeaseFacts::from_bits(3, 15),
            LeaseFacts {
                calls: 3,
                granted: true,
                giving_up: true,
                failed: true,
                hidden: true
            }
        );
    }
}
