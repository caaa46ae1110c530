//! Compacting a conversation: settings, where to cut, what to summarize,
//! the text and prompts the summarizer gets, chunking long histories, the
//! extractive summarizer used offline, branch summaries, and what to do
//! after an agent run.

pub mod agent_flow;
pub mod background;
pub mod branch;
pub mod chunking;
pub mod clearing;
pub mod cut_point;
pub mod extractive;
pub mod file_ops;
pub mod flow;
pub mod last_request;
pub mod options;
pub mod prepare;
pub mod prompts;
pub mod providers;
pub mod reason;
pub mod serialize;
pub mod settings;
pub mod shapes;
pub mod stall;
pub mod text_ops;
