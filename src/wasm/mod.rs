//! The JavaScript boundary: converts, calls the core, returns the caller's
//! own objects wherever nothing changes.

pub mod attach;
pub mod branch_summary;
pub mod compaction;
pub mod compactor;
pub mod engine;
pub mod errors;
pub mod estimates;
pub mod fetch_summarizers;
pub mod flat_array;
pub mod js_message_source;
pub mod js_strings;
pub mod js_text;
pub mod js_values;
pub mod message_access;
pub mod message_facts;
pub mod preparation;
pub mod serialization;
pub mod session_files;
pub mod settings_input;
pub mod store;
pub mod types;
pub mod undo;
