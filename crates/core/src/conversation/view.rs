//! The model's view of the flat array, as data an adapter follows: the last
//! `compactionSummary`, then the pinned messages before it (in order), then
//! every message after it (`message::pinned::model_view`); in that view a
//! tool result that a later `toolOutputCleared` marker of the view lists
//! goes as the core's placeholder, and a failed attempt (an assistant
//! message whose `stopReason` is `error` or `aborted`) is left out: pi-ai
//! skips it at the provider, other SDKs must not be sent it.
//!
//! [`ModelView`] keeps the last view between calls: while the array only
//! grows by messages that are no clearing marker (and the last summary
//! stays), the next view is the last one plus the new messages, so a step
//! costs what is new, and an adapter holding the last view converts only
//! the messages added to it.

use crate::compaction::clearing::ClearedOutputs;
use crate::error::{FieldPath, InputError};
use crate::js::options::{expect_object, Value};
use crate::message::pinned::model_view;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

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

/// A piece of the view as an adapter assembles it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// These messages of the flat array, as they are.
    Slice(Range<usize>),
    /// One placeholder ([`Step::Placeholder`]).
    Placeholder(Step),
}

/// `steps` as runs of consecutive messages sent as they are (slices of the
/// caller's array) and the placeholders between them: a few pieces per
/// view rather than one per message.
pub fn parts(steps: &[Step]) -> Vec<Part> {
    let mut parts = Vec::new();
    for step in steps {
        match (*step, parts.last_mut()) {
            (Step::Send(i), Some(Part::Slice(run))) if run.end == i => run.end = i + 1,
            (Step::Send(i), _) => parts.push(Part::Slice(i..i + 1)),
            (placeholder, _) => parts.push(Part::Placeholder(placeholder)),
        }
    }
    parts
}

/// What a caller holds of an earlier view (`modelContextChange`'s
/// `since`): `None` when `undefined`; otherwise an object whose `view` and
/// `length` (`fields` reads them, in that order) are whole numbers.
pub fn held<V: Value>(
    since: &V,
    fields: impl FnOnce() -> Result<[V; 2], InputError>,
) -> Result<Option<(u32, usize)>, InputError> {
    if since.is_undefined() {
        return Ok(None);
    }
    let expected = "undefined or { view, length } from an earlier answer";
    expect_object("since", since, expected)?;
    let [view, length] = fields()?;
    let whole = |value: &V, key| match value.number() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) => Ok(n as u32),
        _ => Err(InputError::WrongType {
            path: FieldPath::argument("since").field(key),
            expected: "a whole number",
            got: value.describe(),
        }),
    };
    Ok(Some((
        whole(&view, "view")?,
        whole(&length, "length")? as usize,
    )))
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

/// How the view changed in [`ModelView::update`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The last view's steps stay; the steps from `from` on are new.
    Grew { from: usize },
    /// The view was made anew (a view of its own, with a new id).
    Rebuilt,
}

/// The model's view of one array, kept between calls; `K` is the tool call
/// id as the caller reads it.
#[derive(Debug, Default)]
pub struct ModelView<K> {
    /// The facts read so far, by array index.
    facts: Vec<Option<Fact<K>>>,
    steps: Vec<Step>,
    /// The array length, last summary and number of re-sent pinned
    /// messages the steps were made for.
    made_for: Option<(usize, Option<usize>, usize)>,
    id: u32,
}

/// Ids of views, distinct across every `ModelView` of the program, so that
/// what a caller holds of one view is never taken for another's.
static VIEW_IDS: AtomicU32 = AtomicU32::new(0);

impl<K: Ord + Clone> ModelView<K> {
    /// Forgets everything: the array changed otherwise than by growing.
    pub fn reset(&mut self) {
        self.facts.clear();
        self.steps.clear();
        self.made_for = None;
    }

    /// The view of the array as it is now (`len` messages, the last
    /// summary at `summary`, `pinned_before` the pinned messages before
    /// it, ascending): the last steps plus the new messages when the array
    /// only grew by messages that are no clearing marker and the summary
    /// is the same (a marker clears only what comes before it, a summary
    /// moves the view's start), made anew otherwise. `read` is asked once
    /// for each message of the view until the next `reset`; its error ends
    /// the update (the view then is made anew on the next call).
    pub fn update<E>(
        &mut self,
        len: usize,
        summary: Option<usize>,
        pinned_before: &[usize],
        mut read: impl FnMut(usize) -> Result<Fact<K>, E>,
    ) -> Result<Change, E> {
        if len < self.facts.len() {
            self.reset();
        }
        self.facts.resize(len, None);
        let shape = (summary, pinned_before.len());
        let made_for = self.made_for.take();
        let mut fill = |facts: &mut [Option<Fact<K>>], i: usize| -> Result<(), E> {
            if facts[i].is_none() {
                facts[i] = Some(read(i)?);
            }
            Ok(())
        };
        if let Some((from, s, r)) = made_for.filter(|m| (m.1, m.2) == shape) {
            for i in from..len {
                fill(&mut self.facts, i)?;
            }
            let new = &self.facts[from..len];
            if !new.iter().any(|f| matches!(f, Some(Fact::Marker(_)))) {
                let kept = self.steps.len();
                let sent = (from..len).filter(|&i| !matches!(self.facts[i], Some(Fact::Failed)));
                self.steps.extend(sent.map(Step::Send));
                self.made_for = Some((len, s, r));
                return Ok(Change::Grew { from: kept });
            }
        }
        for i in model_view(len, summary, pinned_before) {
            fill(&mut self.facts, i)?;
        }
        let facts = &self.facts;
        self.steps = model_steps(len, summary, pinned_before, |i| {
            facts[i].as_ref().unwrap_or(&Fact::Message)
        });
        self.made_for = Some((len, summary, pinned_before.len()));
        self.id = VIEW_IDS.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        Ok(Change::Rebuilt)
    }

    /// The view's steps (as of the last `update`).
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The view's id: the same while its steps only grow.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// How many of the view's steps a caller still has when it holds the
    /// first `held` steps of the view `id`: all of them while it is the
    /// same view, none otherwise.
    pub fn kept(&self, id: u32, held: usize) -> usize {
        if id == self.id && self.made_for.is_some() && held <= self.steps.len() {
            held
        } else {
            0
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
