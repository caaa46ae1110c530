//! The JavaScript boundary: converts, calls the core, returns the caller's
//! own objects wherever nothing changes.

mod errors;
mod flat_array;
mod js_text;
mod message_access;
mod types;
