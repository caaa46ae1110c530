//! How a session lives in IndexedDB: which records a save writes (keys,
//! the diff, drops a save may make), which messages share a record, what
//! the session record holds, the lock lease policy and
//! lock timeout, how durable each write is, what a failed write leaves to
//! put back (Firefox), what the store does when the
//! browser closes its connection or refuses storage, the history index's
//! records (`history`), and the store's errors;
//! `save_flow` is a save's decisions in order, `known` what a store remembers
//! of the sessions it saw.

pub mod arguments;
pub mod changes;
pub mod connection;
pub mod diff;
pub mod error;
pub mod history;
pub mod known;
pub mod load_plan;
pub mod locks;
pub mod marks;
pub mod meta;
pub mod packing;
pub mod repair;
pub mod save_flow;
pub mod save_plan;
