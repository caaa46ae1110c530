//! The embedded summarizer: a deterministic, extractive summary built from
//! the messages themselves, for when the app has no summarizer callback or
//! the callback failed (`fallback: "extractive"`).
//!
//! It writes the same structured format the LLM summarizer is asked for
//! (Goal, Constraints & Preferences, Progress with Done / In Progress /
//! Blocked, Key Decisions, Next Steps, Critical Context) and stays within the
//! same budget, measured in UTF-16 code units as JavaScript counts.
//!
//! # How the budget is met
//!
//! Every piece of content is an `Item` with one or more renderings, from
//! full to short. Each item carries a plan: at which importance tier it is
//! shortened and at which tier it is dropped. Starting from everything at
//! full length, the steps of all plans are applied in tier order (least
//! important first, oldest first within a tier) until the document fits.
//! The length is kept up to date arithmetically, so fitting costs one pass.
//! Every modified file path and the last five user requests are dropped only
//! after everything else; a list that lost entries says so in a marker line.
//!
//! Nothing here can panic on any input: no slicing by byte index except at
//! positions that come from `char_indices`/`find`, and through `get`.
//!
//! # Layout
//!
//! - `facts`: one pass over the messages (requests, replies, tool
//!   operations, constraints, decisions);
//! - `previous`: the previous summary, parsed by section;
//! - `focus`: the words of the custom instructions;
//! - `goal`, `progress`, `outlook`: the sections (Goal and Constraints;
//!   Done, In Progress and Blocked; Key Decisions, Next Steps and Critical
//!   Context);
//! - `budget`: the items, tiers and the fitting pass;
//! - `text`, `phrases`: text shaping and the phrase markers;
//! - `input`: the messages, from the JSON text the package's JavaScript
//!   writes of them.

mod budget;
mod facts;
mod focus;
mod goal;
mod input;
mod outlook;
mod phrases;
mod previous;
mod progress;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
mod text;

use budget::Builder;
use facts::Facts;
use focus::Focus;
use goal::{build_constraints, build_goal};
pub use input::{messages_from_facts, UNREADABLE_FACTS};
use outlook::{build_critical, build_decisions, build_next_steps};
use previous::Previous;
use progress::{build_blocked, build_done, build_in_progress};

/// What the summarizer reads. The boundary fills it from JavaScript.
#[derive(Clone, Debug)]
pub struct ExtractInput<'a> {
    pub messages: &'a [ExtractMessage],
    pub previous_summary: Option<&'a str>,
    /// Files only read, sorted.
    pub read_files: &'a [String],
    /// Files written or edited, sorted.
    pub modified_files: &'a [String],
    /// The caller's "Additional focus".
    pub custom_instructions: Option<&'a str>,
    /// The budget in UTF-16 code units (maxTokens × 4).
    pub max_chars: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtractRole {
    User,
    Assistant,
    ToolResult,
    Other,
}

#[derive(Clone, Debug)]
pub struct ExtractMessage {
    pub role: ExtractRole,
    /// User: the text content; assistant: its text blocks joined with "\n";
    /// tool result: its text blocks joined.
    pub text: String,
    /// Tool results: the tool's name.
    pub tool_name: Option<String>,
    /// Assistant: (tool name, short argument summary such as a path or a
    /// command).
    pub tool_calls: Vec<(String, String)>,
    /// Tool results reported with `isError`.
    pub is_error: bool,
}

/// The summary of `input.messages` (folding in `input.previous_summary`),
/// never longer than `input.max_chars` UTF-16 code units.
pub fn extractive_summary(input: &ExtractInput) -> String {
    let facts = Facts::gather(input);
    let previous = input
        .previous_summary
        .map(|text| Previous::parse(text, input));
    let focus = Focus::new(input.custom_instructions);
    let mut builder = Builder::new(focus);
    build_goal(&mut builder, &facts, previous.as_ref());
    build_constraints(&mut builder, &facts, previous.as_ref());
    build_done(&mut builder, &facts, previous.as_ref(), input);
    build_in_progress(&mut builder, &facts);
    build_blocked(&mut builder, &facts);
    build_decisions(&mut builder, &facts, previous.as_ref());
    build_next_steps(&mut builder, &facts);
    build_critical(&mut builder, &facts, previous.as_ref(), input);
    builder.fit(input.max_chars)
}
