//! What every binding module shares: reading messages and their facts
//! across the boundary (`message_access`, `message_facts`,
//! `message_source`, the `shim/` JavaScript modules), JavaScript values, strings and
//! errors, and the engine hooks the core is linked with (`engine`). The
//! extractive summarizer's module needs only the engine hooks.

pub mod engine;
#[cfg(any(feature = "compactor", feature = "store", feature = "run"))]
pub mod errors;
#[cfg(any(feature = "compactor", feature = "store", feature = "run"))]
pub mod message_access;
#[cfg(any(feature = "compactor", feature = "store"))]
pub mod message_facts;
#[cfg(any(feature = "compactor", feature = "store"))]
pub mod message_source;
#[cfg(any(feature = "compactor", feature = "store", feature = "run"))]
pub mod strings;
#[cfg(any(feature = "compactor", feature = "store"))]
pub mod text;
#[cfg(any(feature = "compactor", feature = "store", feature = "run"))]
pub mod values;
