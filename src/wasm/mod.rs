//! The JavaScript boundary: converts, calls the core, returns the caller's
//! own objects wherever nothing changes.

pub mod errors;
pub mod flat_array;
pub mod js_text;
pub mod message_access;
pub mod types;
