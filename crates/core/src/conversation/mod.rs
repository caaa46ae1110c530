//! One engine per conversation: what changed in the flat array, what the
//! model sees of it, what to do after a run, and what the user sees,
//! answered once here (no I/O) so that every adapter — the Compactor's
//! hooks, `attach`, the AI SDK binding, the store — asks the same rules
//! instead of keeping books of its own.
//!
//! - [`edit`]: what changed between the array an adapter last saw and the
//!   one it is handed (appended, one inserted, some removed, or replaced
//!   from some index on), from the identity facts the binding gathers; the
//!   `Compactor`'s index and the store's save both apply that one answer.
//! - [`tracker`]: the per-turn index of the array ([`tracker::Tracker`]):
//!   how each edit updates it, which estimate it holds, whether the context
//!   is over the threshold, what survives a compaction.
//! - [`llm`]: the books of what `convertToLlm` produced
//!   ([`llm::LlmBooks`]): which outputs a change keeps, which inputs are
//!   converted again.
//! - [`view`]: the model's view as steps an adapter follows (send a
//!   message, or send a cleared tool result as its placeholder).
//! - [`after_run`](crate::compaction::agent_flow::after_run) and
//!   [`RetryGuard`](crate::compaction::agent_flow::RetryGuard): the
//!   after-run rule (re-exported here).
//! - [`display_action`](crate::message::display::display_action): the
//!   display outcome of one message (re-exported here).

pub mod edit;
pub mod llm;
pub mod tracker;
pub mod view;

pub use crate::compaction::agent_flow::{
    after_run, Flow, FlowCompaction, RetryGuard, RunEnd, RECOVERY_FAILED,
};
pub use crate::message::display::{display_action, DisplayAction};
