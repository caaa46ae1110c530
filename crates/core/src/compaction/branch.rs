//! Summarizing a branch the conversation leaves (pi's `prepareBranchEntries`
//! on the flat array): which of the abandoned messages fit the budget,
//! newest first, tool results left out; then `summarizeBranch` as a flow
//! its host drives, as it drives the compaction flow:
//! nothing to summarize, no summarizer, the prompt, the answer checked, the
//! fallback, a late abort and every error text are decided here.

use super::flow::{accept, branch_failed_message, fall_back, Answer, Failure, Request, TextOps};
use super::prompts::{branch_prompt, SummaryKind, BRANCH_MAX_TOKENS, SYSTEM_PROMPT};
use super::settings::CompactionSettings;
use crate::message::role::Role;
use crate::tokens::estimate::MessageFacts;
use std::ops::Range;

/// The messages of a branch to summarize: `included` are their indices in
/// order (oldest first); `visited` is the range whose tool calls count for
/// the file lists (pi reads the file operations of the message that stops
/// the walk too); `stopped` is the message that ended the walk because it
/// did not fit (its index and tokens), and `token_budget` the budget walked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchSelection {
    pub included: Vec<usize>,
    pub visited: Range<usize>,
    pub total_tokens: u64,
    pub stopped: Option<(usize, u64)>,
    pub token_budget: u64,
}

/// A branch summary's token budget with a compactor's window and settings:
/// what the window leaves after the reserve, at least 1 (0 would mean no
/// limit).
pub fn budget_tokens(context_window: f64, settings: &CompactionSettings) -> u64 {
    (context_window - settings.reserve_tokens as f64).max(1.0) as u64
}

/// pi's walk: from the newest message back, skipping tool results (and
/// roles pi makes no message of), adding messages while they fit
/// `token_budget` (0 = no limit). A summary that does not fit is still
/// taken when less than 90% of the budget is used.
pub fn select_branch(facts: &[MessageFacts], token_budget: u64) -> BranchSelection {
    let mut included = Vec::new();
    let mut total: u64 = 0;
    let mut first_visited = facts.len();
    let mut stopped = None;
    for i in (0..facts.len()).rev() {
        let f = &facts[i];
        if matches!(f.role, Role::ToolResult) {
            continue;
        }
        first_visited = i;
        let tokens = u64::from(f.tokens);
        if token_budget > 0 && total + tokens > token_budget {
            let is_summary = matches!(f.role, Role::CompactionSummary | Role::BranchSummary);
            if is_summary && (total as f64) < token_budget as f64 * 0.9 {
                included.push(i);
                total += tokens;
            } else {
                stopped = Some((i, tokens));
            }
            break;
        }
        included.push(i);
        total += tokens;
    }
    included.reverse();
    BranchSelection {
        included,
        visited: first_visited..facts.len(),
        total_tokens: total,
        stopped,
        token_budget,
    }
}

/// What `summarizeBranch` rejects with when the walk found nothing.
pub const NOTHING_IN_BRANCH: &str =
    "Nothing to summarize: the branch has no messages besides tool results";

/// What `summarizeBranch` rejects with when the walk selected nothing: the
/// branch holds only tool results, or its newest other message alone is
/// over the budget (pi's walk stops there too).
pub fn nothing_selected(selection: &BranchSelection) -> String {
    match selection.stopped {
        Some((i, tokens)) if selection.included.is_empty() => format!(
            "Nothing to summarize: the branch's newest message besides tool results \
             (messages[{i}], {tokens} tokens) is over the branch summary's budget of \
             {} tokens (contextWindow - reserveTokens)",
            selection.token_budget
        ),
        _ => NOTHING_IN_BRANCH.to_string(),
    }
}

/// The text type of a branch host.
pub type BranchText<H> = <<H as BranchHost>::Ops as TextOps>::Text;

/// What the binding does for a branch summary synchronously.
pub trait BranchHost {
    /// How its texts are composed and measured.
    type Ops: TextOps;
    /// The app's usage object, passed through untouched.
    type Usage;
    /// What an abort rejects with.
    type AbortError;
    /// The serialized conversation of the selected messages.
    fn conversation(&mut self) -> Result<BranchText<Self>, String>;
    /// Starts the summarizer call (it runs until [`BranchStep::Await`]).
    fn start_call(&mut self, request: Request<BranchText<Self>>) -> Result<(), String>;
    /// Whether the caller cancelled meanwhile (a passed deadline is not).
    fn aborted(&mut self) -> Option<Self::AbortError>;
}

/// What the binding feeds a [`BranchFlow`].
pub enum BranchEvent<H: BranchHost> {
    Start,
    /// The answer of the call [`BranchStep::Await`] waits for.
    Answer(Answer<BranchText<H>, H::Usage, H::AbortError>),
    /// The extractive summary [`BranchStep::Extract`] asked for.
    Extracted(Result<BranchText<H>, String>),
}

/// How `summarizeBranch` rejects.
#[derive(Debug, PartialEq)]
pub enum BranchFailure<A> {
    /// With what the abort rejected with.
    Aborted(A),
    /// With an `Error` of this message.
    Error(String),
}

/// What the binding does next.
pub enum BranchStep<H: BranchHost> {
    /// Await the summarizer call and feed [`BranchEvent::Answer`].
    Await,
    /// Build the extractive summary of the selected messages within
    /// `max_chars` (UTF-16 code units) and feed [`BranchEvent::Extracted`].
    Extract {
        max_chars: usize,
    },
    /// The `branchSummary`'s text, and the usage of the call that wrote it.
    Done {
        text: BranchText<H>,
        usage: Option<H::Usage>,
    },
    Fail(BranchFailure<H::AbortError>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BranchPhase {
    Start,
    Awaiting,
    Extracting,
    Done,
}

/// One `summarizeBranch` call, from the selection to the summary's text.
pub struct BranchFlow<T> {
    has_summarizer: bool,
    fallback_extractive: bool,
    custom_instructions: Option<T>,
    replace_instructions: bool,
    phase: BranchPhase,
}

impl<T> BranchFlow<T> {
    /// The flow for `selection`; `Err` with the rejection's message when it
    /// holds nothing to summarize.
    pub fn new(
        selection: &BranchSelection,
        has_summarizer: bool,
        fallback_extractive: bool,
        custom_instructions: Option<T>,
        replace_instructions: bool,
    ) -> Result<Self, String> {
        if selection.included.is_empty() {
            return Err(nothing_selected(selection));
        }
        Ok(BranchFlow {
            has_summarizer,
            fallback_extractive,
            custom_instructions,
            replace_instructions,
            phase: BranchPhase::Start,
        })
    }

    /// The next step after `event`.
    pub fn step<H>(&mut self, host: &mut H, event: BranchEvent<H>) -> BranchStep<H>
    where
        H: BranchHost<Ops: TextOps<Text = T>>,
    {
        match (std::mem::replace(&mut self.phase, BranchPhase::Done), event) {
            (BranchPhase::Start, BranchEvent::Start) if !self.has_summarizer => self.extract(),
            (BranchPhase::Start, BranchEvent::Start) => match self.start(host) {
                Ok(Ok(())) => {
                    self.phase = BranchPhase::Awaiting;
                    BranchStep::Await
                }
                // The call did not start: a failure like any answer's.
                Ok(Err(message)) => self.failed(Failure::Failed(message)),
                // The selection could not be serialized: no fallback.
                Err(message) => BranchStep::Fail(branch_failure(Failure::Failed(message))),
            },
            (BranchPhase::Awaiting, BranchEvent::Answer(answer)) => {
                match accept::<H::Ops, _, _>(answer, BRANCH_MAX_TOKENS) {
                    Ok((text, usage)) => done(host, text, usage),
                    Err(failure) => self.failed(failure),
                }
            }
            (BranchPhase::Extracting, BranchEvent::Extracted(Ok(text))) => done(host, text, None),
            (BranchPhase::Extracting, BranchEvent::Extracted(Err(message))) => {
                BranchStep::Fail(branch_failure(Failure::Failed(message)))
            }
            _ => BranchStep::Fail(branch_failure(Failure::Failed(
                "internal error: an event out of order".into(),
            ))),
        }
    }

    /// Serializes the selection (the outer `Err`) and starts the one
    /// summarizer call (the inner one).
    fn start<H>(&self, host: &mut H) -> Result<Result<(), String>, String>
    where
        H: BranchHost<Ops: TextOps<Text = T>>,
    {
        let conversation = host.conversation()?;
        let custom = self.custom_instructions.as_ref().map(H::Ops::borrow);
        let prompt = H::Ops::compose(|out| {
            branch_prompt(
                out,
                H::Ops::borrow(&conversation),
                custom,
                self.replace_instructions,
            )
        });
        Ok(host.start_call(Request {
            kind: SummaryKind::Branch,
            system_prompt: SYSTEM_PROMPT,
            prompt,
            max_tokens: BRANCH_MAX_TOKENS,
            instruction: None,
        }))
    }

    /// A failure falls back to the extractive summary when allowed; an
    /// abort never does.
    fn failed<H: BranchHost>(&mut self, failure: Failure<H::AbortError>) -> BranchStep<H> {
        match fall_back(failure, self.fallback_extractive) {
            Ok(_) => self.extract(),
            Err(failure) => BranchStep::Fail(branch_failure(failure)),
        }
    }

    fn extract<H: BranchHost>(&mut self) -> BranchStep<H> {
        self.phase = BranchPhase::Extracting;
        BranchStep::Extract {
            max_chars: (BRANCH_MAX_TOKENS as usize) * 4,
        }
    }
}

/// How a failure rejects: an abort with its own value, anything else with
/// an `Error` whose message says the branch summary failed and why.
pub fn branch_failure<A>(failure: Failure<A>) -> BranchFailure<A> {
    match failure {
        Failure::Aborted(a) => BranchFailure::Aborted(a),
        Failure::Cancelled => BranchFailure::Error(super::flow::CANCELLED.into()),
        Failure::Failed(m) => BranchFailure::Error(branch_failed_message(&m)),
        Failure::Input(e) => BranchFailure::Error(branch_failed_message(&e.to_string())),
    }
}

/// The summary stands unless the caller aborted meanwhile.
fn done<H: BranchHost>(
    host: &mut H,
    text: BranchText<H>,
    usage: Option<H::Usage>,
) -> BranchStep<H> {
    match host.aborted() {
        Some(a) => BranchStep::Fail(BranchFailure::Aborted(a)),
        None => BranchStep::Done { text, usage },
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
