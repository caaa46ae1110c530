//! The latest user request reaches the model verbatim after every
//! compaction. When the newest `user` message of the array lies in the part
//! a compaction summarizes (typically a split turn: the cut falls inside the
//! latest turn), the inserted summary carries it, quoted in a final section
//! headed [`SECTION_HEADING`], whoever wrote the summary (the app's
//! summarizer, `beforeCompact`, the extractive summary). When that message
//! is kept, nothing is added.
//!
//! The quote is the message's text (a string content, or its `text` parts
//! joined by newlines: image parts are left out). It is whole when it fits
//! the budget ([`budget_chars`]: as many UTF-16 code units as
//! `keepRecentTokens`, a quarter of `keepRecentTokens` in pi's 4-characters
//! token estimate; 20,000 characters with the default settings); a longer
//! request keeps its first `budget` code units, followed by a marker that
//! says how many characters were left out.
//!
//! A summary carries one such section at most: the previous summary's is
//! taken out before it is passed to the next summarizer (update prompt, the
//! extractive summary), and any section a summary already has (a hook that
//! copied the previous summary) is replaced, so a stale quote never
//! accumulates. The section is found by its heading line; the first
//! occurrence starts it (the quote itself may contain anything).

use crate::compaction::text_ops::TextOps;
use crate::message::llm::TextSink;
use crate::message::role::Role;
use crate::tokens::estimate::MessageFacts;

/// The heading of the section, as it appears in the summary's text (after
/// the summary, a blank line between).
pub const SECTION_HEADING: &str = "\n\n## Latest user request (verbatim)\n\n";

/// What the model and the app should know about a quote cut to its budget.
fn left_out_marker(left_out: usize, budget: usize) -> String {
    format!(
        "\n\n[... {left_out} more characters of this request were left out: \
         the verbatim quote keeps the first {budget}]"
    )
}

/// The verbatim budget in UTF-16 code units for a `keepRecentTokens`.
pub fn budget_chars(keep_recent_tokens: u64) -> usize {
    usize::try_from(keep_recent_tokens).unwrap_or(usize::MAX)
}

/// The newest `user` message of `facts`, when it lies before `first_kept`
/// (in the summarized part) and is not pinned (a pinned message reaches the
/// model verbatim anyway, re-sent after the summary); `None` when it is
/// kept, pinned, or there is none. Walks back from the end to that message
/// only.
pub fn summarized_request(facts: &[MessageFacts], first_kept: usize) -> Option<usize> {
    facts
        .iter()
        .rposition(|f| f.role == Role::User)
        .filter(|&i| i < first_kept && !facts[i].pinned())
}

/// What must survive a compaction beside the summary: the latest request to
/// quote, and the pinned messages the model is sent after the summary.
#[derive(Clone, Debug)]
pub struct Survivors<T> {
    /// The text of the newest user request, when it is summarized.
    pub latest_request: Option<T>,
    /// The quote's budget in UTF-16 code units ([`budget_chars`]).
    pub budget_chars: usize,
    /// The facts of the pinned messages before the cut, which the model is
    /// sent right after the new summary (they count in `tokensAfter`).
    pub resent: Vec<MessageFacts>,
}

impl<T> Default for Survivors<T> {
    fn default() -> Self {
        Survivors {
            latest_request: None,
            budget_chars: 0,
            resent: Vec::new(),
        }
    }
}

/// `summary` without its verbatim section (everything from the first
/// [`SECTION_HEADING`] on), or unchanged when it has none.
pub fn without_section<X: TextOps>(summary: X::Text) -> X::Text {
    match X::find(&summary, SECTION_HEADING) {
        Some(at) => X::prefix(&summary, at),
        None => summary,
    }
}

/// The summary to insert: `summary` without any section it had, then the
/// latest request's section when there is one to quote (a blank request
/// adds nothing).
pub fn with_latest_request<X: TextOps>(summary: X::Text, s: &Survivors<X::Text>) -> X::Text {
    let summary = without_section::<X>(summary);
    let Some(request) = s.latest_request.as_ref().filter(|r| !X::is_blank(r)) else {
        return summary;
    };
    let len = X::len(request);
    X::compose(|t| {
        t.text(X::borrow(&summary));
        t.literal(SECTION_HEADING);
        if len <= s.budget_chars {
            t.text(X::borrow(request));
        } else {
            let kept = X::prefix(request, s.budget_chars);
            t.text(X::borrow(&kept));
            t.literal(&left_out_marker(len - s.budget_chars, s.budget_chars));
        }
    })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// Rust strings measured in UTF-16 code units, as the flow's tests do.
    struct Plain;

    impl TextOps for Plain {
        type Text = String;
        type Sink = String;
        fn borrow(text: &String) -> &str {
            text
        }
        fn finish(sink: String) -> String {
            sink
        }
        fn len(text: &String) -> usize {
            text.encode_utf16().count()
        }
        fn is_blank(text: &String) -> bool {
            text.trim().is_empty()
        }
        fn prefix(text: &String, units: usize) -> String {
            let units: Vec<u16> = text.encode_utf16().take(units).collect();
            String::from_utf16_lossy(&units)
        }
        fn find(text: &String, needle: &str) -> Option<usize> {
            text.find(needle).map(|b| text[..b].encode_utf16().count())
        }
    }

    fn facts(roles: &[Role]) -> Vec<MessageFacts> {
        roles
            .iter()
            .map(|&r| MessageFacts::new(r, 10, None, 0.0))
            .collect()
    }

    #[test]
    fn the_newest_user_message_is_quoted_only_when_it_is_summarized() {
        use Role::*;
        let split_turn = facts(&[User, Assistant, User, Assistant, ToolResult, Assistant]);
        // The cut inside the last turn (its user message at 2).
        assert_eq!(summarized_request(&split_turn, 4), Some(2));
        // The cut at the last turn's start: the request is kept.
        assert_eq!(summarized_request(&split_turn, 2), None);
        assert_eq!(summarized_request(&split_turn, 0), None);
        // Only `user` messages are requests.
        let custom_last = facts(&[User, Assistant, Custom, BashExecution]);
        assert_eq!(summarized_request(&custom_last, 4), Some(0));
        assert_eq!(summarized_request(&facts(&[Assistant, Custom]), 2), None);
        assert_eq!(summarized_request(&[], 0), None);
        // A pinned request is re-sent whole after the summary: not quoted too.
        let mut pinned = split_turn.clone();
        pinned[2].set_pinned(true);
        assert_eq!(summarized_request(&pinned, 4), None);
    }

    #[test]
    fn budget_is_keep_recent_tokens_in_characters() {
        assert_eq!(budget_chars(20_000), 20_000);
        assert_eq!(budget_chars(0), 0);
    }

    fn survivors(request: Option<&str>, budget: usize) -> Survivors<String> {
        Survivors {
            latest_request: request.map(String::from),
            budget_chars: budget,
            resent: Vec::new(),
        }
    }

    #[test]
    fn a_request_within_the_budget_is_quoted_whole() {
        let s = with_latest_request::<Plain>(
            "## Goal\nship".into(),
            &survivors(Some("Fix the parser."), 100),
        );
        assert_eq!(
            s,
            "## Goal\nship\n\n## Latest user request (verbatim)\n\nFix the parser."
        );
        // Exactly the budget: still whole.
        let s = with_latest_request::<Plain>("S".into(), &survivors(Some("12345"), 5));
        assert!(s.ends_with("(verbatim)\n\n12345"));
    }

    #[test]
    fn a_longer_request_keeps_the_budget_and_says_what_was_left_out() {
        let s = with_latest_request::<Plain>("S".into(), &survivors(Some("abcdefghij"), 4));
        assert_eq!(
            s,
            "S\n\n## Latest user request (verbatim)\n\nabcd\n\n[... 6 more characters of this \
             request were left out: the verbatim quote keeps the first 4]"
        );
        // Counted in UTF-16 code units.
        let s = with_latest_request::<Plain>("S".into(), &survivors(Some("日本語のテキスト"), 3));
        assert!(s.contains("\n\n日本語\n\n[... 5 more characters"));
    }

    #[test]
    fn nothing_to_quote_adds_nothing_and_a_stale_section_never_stays() {
        assert_eq!(
            with_latest_request::<Plain>("S".into(), &survivors(None, 100)),
            "S"
        );
        assert_eq!(
            with_latest_request::<Plain>("S".into(), &survivors(Some(" \n"), 100)),
            "S"
        );
        // A summary that carries an old section (a hook copied the previous
        // summary): replaced by the new request, or dropped when it is kept.
        let old = with_latest_request::<Plain>("OLD".into(), &survivors(Some("first"), 100));
        let copied = format!("{old}\n\nmore");
        let new = with_latest_request::<Plain>(copied.clone(), &survivors(Some("second"), 100));
        assert_eq!(new, "OLD\n\n## Latest user request (verbatim)\n\nsecond");
        assert_eq!(new.matches("(verbatim)").count(), 1);
        assert_eq!(
            with_latest_request::<Plain>(copied, &survivors(None, 100)),
            "OLD"
        );
        // The quote may contain the heading: the first occurrence starts
        // the section, so stripping removes the whole quote.
        let tricky = with_latest_request::<Plain>(
            "S".into(),
            &survivors(Some("x\n\n## Latest user request (verbatim)\n\ny"), 100),
        );
        assert_eq!(without_section::<Plain>(tricky), "S");
        assert_eq!(without_section::<Plain>("plain".into()), "plain");
    }
}
