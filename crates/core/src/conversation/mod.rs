//! The conversation engine: what the flat array of messages (SPEC §1) is
//! now, answered once for every adapter. `edit` says what changed between
//! the array an adapter last saw and the one it is handed (messages
//! appended, one inserted, some removed, or replaced from some index on),
//! from the identity facts the binding gathers; the `Compactor`'s index and
//! the store's save both apply that one answer.

pub mod edit;
