//! The SessionStore's argument rules and their error texts, beyond "must
//! be a string": `fork`'s index and summary, `importJsonl`'s text and
//! dates. The binding reads the values (and describes a bad one with the
//! engine's words, `describeValue`); what is accepted, and what the
//! `TypeError` or `RangeError` says, is decided here.

use super::error::CallError;
use super::save_flow::unstorable;
use crate::js::number::number_to_string;

const FORK: &str = "SessionStore.fork";

/// `fork`'s `atIndex`: a number (`None`: not one, `described` says what it
/// is), whole, from 0 (its upper bound is checked against the stored
/// session by [`fork_within`]).
pub fn fork_index(at: Option<f64>, described: impl FnOnce() -> String) -> Result<u32, CallError> {
    let Some(x) = at else {
        return Err(CallError::Type(format!(
            "{FORK}: atIndex must be a number, got {}",
            described()
        )));
    };
    if x.fract() != 0.0 || x < 0.0 || !x.is_finite() || x > u32::MAX as f64 {
        return Err(CallError::Range(format!(
            "{FORK}: atIndex must be a whole number from 0 to the session's message count, got {}",
            number_to_string(x)
        )));
    }
    Ok(x as u32)
}

/// `atIndex` against session `id`'s `count` messages.
pub fn fork_within(id: &str, at: u32, count: f64) -> Result<(), CallError> {
    if at as f64 <= count {
        return Ok(());
    }
    let count = number_to_string(count);
    Err(CallError::Range(format!(
        "{FORK}: atIndex {at} is past the end of session \"{id}\", which has {count} messages \
         (atIndex must be in 0..={count})"
    )))
}

/// What `fork` reads of `options.summary` (given, neither undefined nor
/// null), each part described only when it is wrong.
pub enum SummaryFacts<'a> {
    /// Not an object: what it is.
    NotObject(&'a str),
    /// An object whose `role` is this string, or not a string (described).
    Role(Result<&'a str, &'a str>),
    /// `role` is "branchSummary"; `summary` is a string, or not (described).
    Summary(Result<(), &'a str>),
}

/// Whether `options.summary` is a `branchSummary` message; whether it is
/// plain data is checked after, with [`fork_summary_unstorable`].
pub fn fork_summary(facts: SummaryFacts) -> Result<(), CallError> {
    let what = match facts {
        SummaryFacts::NotObject(described) => format!("got {described}"),
        SummaryFacts::Role(Ok("branchSummary")) | SummaryFacts::Summary(Ok(())) => return Ok(()),
        SummaryFacts::Role(Ok(role)) => format!("got role \"{role}\""),
        SummaryFacts::Role(Err(described)) => format!("got role {described}"),
        SummaryFacts::Summary(Err(described)) => format!("got summary {described}"),
    };
    Err(CallError::Type(format!(
        "{FORK}: options.summary must be a branchSummary message \
         ({{ role: \"branchSummary\", summary: string, timestamp: number }}), {what}"
    )))
}

/// `options.summary` is not plain data: `path` inside it is `what`.
pub fn fork_summary_unstorable(path: &str, what: &str) -> CallError {
    CallError::Type(unstorable(&format!("{FORK}: options.summary"), path, what))
}

/// `importJsonl`'s text is not a string.
pub fn import_text(described: &str) -> CallError {
    CallError::Type(format!(
        "SessionStore.importJsonl: text must be a string (a pi session file), got {described}"
    ))
}

/// An imported session's `createdAt`: the file's header timestamp when it
/// parses to a date (`parsed`, milliseconds), else now.
pub fn imported_created_at(parsed: Option<f64>, now: f64) -> f64 {
    parsed.filter(|ms| ms.is_finite()).unwrap_or(now)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn text(e: CallError) -> (char, String) {
        match e {
            CallError::Type(m) => ('T', m),
            CallError::Range(m) => ('R', m),
            CallError::Store(e) => ('S', e.to_string()),
        }
    }

    #[test]
    fn the_fork_index_is_a_whole_number_within_the_session() {
        assert_eq!(fork_index(Some(0.0), || unreachable!()), Ok(0));
        assert_eq!(fork_index(Some(12.0), || unreachable!()), Ok(12));
        assert_eq!(
            text(fork_index(None, || "a string".into()).unwrap_err()),
            (
                'T',
                "SessionStore.fork: atIndex must be a number, got a string".into()
            )
        );
        for (x, shown) in [
            (1.5, "1.5"),
            (-1.0, "-1"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (5e9, "5000000000"),
        ] {
            assert_eq!(
                text(fork_index(Some(x), || unreachable!()).unwrap_err()),
                ('R', format!("SessionStore.fork: atIndex must be a whole number from 0 to the session's message count, got {shown}"))
            );
        }
        assert_eq!(fork_within("s", 3, 3.0), Ok(()));
        assert_eq!(
            text(fork_within("s", 4, 3.0).unwrap_err()),
            ('R', "SessionStore.fork: atIndex 4 is past the end of session \"s\", which has 3 messages (atIndex must be in 0..=3)".into())
        );
    }

    #[test]
    fn the_fork_summary_must_be_a_branch_summary_message() {
        assert_eq!(
            fork_summary(SummaryFacts::Role(Ok("branchSummary"))),
            Ok(())
        );
        assert_eq!(fork_summary(SummaryFacts::Summary(Ok(()))), Ok(()));
        let head = "SessionStore.fork: options.summary must be a branchSummary message ({ role: \"branchSummary\", summary: string, timestamp: number }), ";
        for (facts, tail) in [
            (SummaryFacts::NotObject("a number"), "got a number"),
            (SummaryFacts::Role(Ok("user")), "got role \"user\""),
            (SummaryFacts::Role(Err("undefined")), "got role undefined"),
            (SummaryFacts::Summary(Err("null")), "got summary null"),
        ] {
            assert_eq!(
                text(fork_summary(facts).unwrap_err()),
                ('T', format!("{head}{tail}"))
            );
        }
        assert_eq!(
            text(fork_summary_unstorable(".details.f", "is a function")),
            ('T', "SessionStore.fork: options.summary.details.f is a function: a message must be plain data to be stored".into())
        );
    }

    #[test]
    fn import_arguments() {
        assert_eq!(
            text(import_text("a number")),
            (
                'T',
                "SessionStore.importJsonl: text must be a string (a pi session file), got a number"
                    .into()
            )
        );
        assert_eq!(imported_created_at(Some(5.0), 9.0), 5.0);
        assert_eq!(imported_created_at(Some(f64::NAN), 9.0), 9.0);
        assert_eq!(imported_created_at(None, 9.0), 9.0);
    }
}
