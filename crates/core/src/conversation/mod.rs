//! One engine per conversation: what the model sees of the flat array, what
//! to do after a run, and what the user sees, answered once here (no I/O)
//! so that every adapter — the Compactor's hooks, `attach`, the AI SDK
//! binding, the store — asks the same rules instead of keeping books of
//! its own.
//!
//! - [`view`]: the model's view as steps an adapter follows (send a
//!   message, or send a cleared tool result as its placeholder).
//! - [`after_run`](crate::compaction::agent_flow::after_run) and
//!   [`RetryGuard`](crate::compaction::agent_flow::RetryGuard): the
//!   after-run rule (re-exported here).
//! - [`display_action`](crate::message::display::display_action): the
//!   display outcome of one message (re-exported here).

pub mod view;

pub use crate::compaction::agent_flow::{after_run, Flow, RetryGuard, RunEnd, RECOVERY_FAILED};
pub use crate::message::display::{display_action, DisplayAction};
