//! How a session lives in IndexedDB: which records a save writes (keys,
//! the diff, drops a save may make) and which messages share a record.

pub mod packing;
pub mod save_plan;
