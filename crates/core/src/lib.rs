//! agent-compaction's pure core: everything the package decides, with no
//! `wasm_bindgen`, `js_sys` or `web_sys` (this crate does not depend on
//! them), tested with plain `cargo test`.
//!
//! - [`js`]: JavaScript's exact semantics (numbers, UTF-16 strings, JSON,
//!   dates) and the engine hooks the binding may supply;
//! - [`conversation`]: the conversation engine, what every adapter asks
//!   about the flat array (what changed since it last looked);
//! - [`message`]: the flat array seen as roles, the model's context, what
//!   the model is shown and what the user is shown;
//! - [`tokens`]: estimates, usage, context fullness, overflow detection and
//!   the compactor's per-message index;
//! - [`compaction`]: settings, cut points, preparation, serialization,
//!   prompts, chunking, the extractive summarizer, branch summaries and
//!   the agent-loop decisions;
//! - [`history`]: the search and read of what the model no longer sees
//!   (the messages behind the last summary, cleared tool outputs);
//! - [`storage`]: how a session's messages are laid out in IndexedDB
//!   records and what a save writes;
//! - [`session_file`]: pi's JSONL session files, in and out.

pub mod compaction;
pub mod conversation;
pub mod error;
pub mod history;
pub mod js;
pub mod message;
pub mod session_file;
pub mod sorted;
pub mod storage;
pub mod tokens;
