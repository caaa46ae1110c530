//! How a session lives in IndexedDB: which records a save writes (keys,
//! the diff, drops a save may make), which messages share a record, what
//! the session record holds, the lock lease policy, and the store's errors.

pub mod diff;
pub mod error;
pub mod lease;
pub mod packing;
pub mod save_plan;
pub mod session_meta;
