//! What every binding module shares: reading messages and their facts
//! across the boundary (`message_access`, `message_facts`,
//! `message_source`, the `shim/` JavaScript modules), JavaScript values, strings and
//! errors, and the engine hooks the core is linked with (`engine`).

pub mod engine;
pub mod errors;
pub mod message_access;
pub mod message_facts;
pub mod message_source;
pub mod strings;
pub mod text;
pub mod values;
