//! The flat array of messages: their roles, the model's context (the last
//! summary on), how each message is shown to the model, and what the user
//! sees.

pub mod chunks;
pub mod context;
pub mod display;
pub mod file_lists;
pub mod llm;
pub mod pinned;
pub mod role;
