//! The model's view of the flat array, as data an adapter follows: the last
//! `compactionSummary`, then the pinned messages before it (in order), then
//! every message after it (`message::pinned::model_view`); in that view a
//! tool result that a later `toolOutputCleared` marker of the view lists
//! goes as the core's placeholder, and a failed attempt (an assistant
//! message whose `stopReason` is `error` or `aborted`) is left out: pi-ai
//! skips it at the provider, other SDKs must not be sent it.

use crate::compaction::clearing::ClearedOutputs;
use crate::message::pinned::model_view;

/// What the view needs to know of one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact<K> {
    /// Any message sent as it is.
    Message,
    /// An assistant message with stop reason `error` or `aborted`.
    Failed,
    /// A tool result and its `toolCallId` (`None`: not a string).
    ToolResult(Option<K>),
    /// A `toolOutputCleared` marker and the tool call ids it lists.
    Marker(Vec<K>),
}

/// One message of the model's view, by its index in the flat array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send the message at this index as it is.
    Send(usize),
    /// Send the tool result at `result` as the placeholder the marker at
    /// `marker` gives it.
    Placeholder { result: usize, marker: usize },
}

/// Is an assistant message with this stop reason a failed attempt?
pub fn is_failed_attempt(stop_reason: &str) -> bool {
    matches!(stop_reason, "error" | "aborted")
}

/// The model's view of an array of `len` messages whose last summary is at
/// `summary`, with `pinned_before` the pinned messages before it
/// (ascending); `fact` is asked once for each message of the view.
pub fn model_steps<'a, K: Ord + Clone + 'a>(
    len: usize,
    summary: Option<usize>,
    pinned_before: &[usize],
    mut fact: impl FnMut(usize) -> &'a Fact<K>,
) -> Vec<Step> {
    let order: Vec<usize> = model_view(len, summary, pinned_before).collect();
    let facts: Vec<&Fact<K>> = order.iter().map(|&i| fact(i)).collect();
    // Markers by their position in the view: a marker clears the results
    // that come before it in what the model is sent.
    let mut cleared = ClearedOutputs::default();
    for (pos, f) in facts.iter().enumerate() {
        if let Fact::Marker(ids) = f {
            cleared.add_marker(pos, ids.clone(), None);
        }
    }
    let mut steps = Vec::with_capacity(order.len());
    for (pos, (f, &i)) in facts.iter().zip(&order).enumerate() {
        match f {
            Fact::Failed => {}
            Fact::ToolResult(Some(id)) if !cleared.is_empty() => {
                match cleared.clearing_marker(id, pos) {
                    Some(m) => steps.push(Step::Placeholder {
                        result: i,
                        marker: order[m],
                    }),
                    None => steps.push(Step::Send(i)),
                }
            }
            _ => steps.push(Step::Send(i)),
        }
    }
    steps
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
