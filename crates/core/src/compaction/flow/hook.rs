//! What the `beforeCompact` hook's answer means. Its fields are read one by
//! one, in the order JavaScript reads them (a getter may throw, and a field
//! after the deciding one is never read), through closures the binding
//! passes; the meaning of each answer is decided here.

use super::HookAnswer;

/// The answer's `summary` field as read.
pub enum SummaryField<T> {
    Text(T),
    Undefined,
    /// Anything else; what it is, described.
    Other(String),
}

impl<T, U, D> HookAnswer<T, U, D> {
    /// Anything but an object (`undefined`, say) is no answer. Of an
    /// object, `cancel` is read first (truthy: cancel); then `summary`: a
    /// string is the summary, with the `details` and `usage` that `extras`
    /// reads (each kept when it is an object); `undefined` is no answer;
    /// anything else is refused. A read that throws makes the hook's answer
    /// a failure.
    pub fn read(
        is_object: bool,
        cancel: impl FnOnce() -> Result<bool, String>,
        summary: impl FnOnce() -> Result<SummaryField<T>, String>,
        extras: impl FnOnce() -> Result<(Option<D>, Option<U>), String>,
    ) -> Self {
        if !is_object {
            return HookAnswer::Nothing;
        }
        let read = || -> Result<Self, String> {
            if cancel()? {
                return Ok(HookAnswer::Cancel);
            }
            Ok(match summary()? {
                SummaryField::Text(text) => {
                    let (details, usage) = extras()?;
                    HookAnswer::Summary {
                        text,
                        details,
                        usage,
                    }
                }
                SummaryField::Undefined => HookAnswer::Nothing,
                SummaryField::Other(got) => HookAnswer::SummaryNotText { got },
            })
        };
        read().unwrap_or_else(HookAnswer::Threw)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    type Answer = HookAnswer<&'static str, &'static str, &'static str>;

    fn unread<T>() -> Result<T, String> {
        panic!("a field after the deciding one was read")
    }

    fn name(a: &Answer) -> String {
        match a {
            HookAnswer::Nothing => "nothing".into(),
            HookAnswer::Cancel => "cancel".into(),
            HookAnswer::Summary {
                text,
                details,
                usage,
            } => format!("summary {text} {details:?} {usage:?}"),
            HookAnswer::SummaryNotText { got } => format!("not text: {got}"),
            HookAnswer::Threw(m) => format!("threw: {m}"),
        }
    }

    #[test]
    fn not_an_object_is_no_answer_and_nothing_is_read() {
        let a: Answer = HookAnswer::read(false, unread, unread, unread);
        assert_eq!(name(&a), "nothing");
    }

    #[test]
    fn cancel_wins_and_the_summary_is_not_read() {
        let a: Answer = HookAnswer::read(true, || Ok(true), unread, unread);
        assert_eq!(name(&a), "cancel");
    }

    #[test]
    fn a_string_summary_comes_with_its_details_and_usage() {
        let a: Answer = HookAnswer::read(
            true,
            || Ok(false),
            || Ok(SummaryField::Text("S")),
            || Ok((Some("d"), None)),
        );
        assert_eq!(name(&a), "summary S Some(\"d\") None");
    }

    #[test]
    fn an_undefined_summary_is_no_answer_and_any_other_is_refused() {
        let a: Answer =
            HookAnswer::read(true, || Ok(false), || Ok(SummaryField::Undefined), unread);
        assert_eq!(name(&a), "nothing");
        let a: Answer = HookAnswer::read(
            true,
            || Ok(false),
            || Ok(SummaryField::Other("a number".into())),
            unread,
        );
        assert_eq!(name(&a), "not text: a number");
    }

    #[test]
    fn a_read_that_throws_is_the_hooks_failure() {
        let threw = || Err::<bool, _>("cancel getter".to_string());
        let a: Answer = HookAnswer::read(true, threw, unread, unread);
        assert_eq!(name(&a), "threw: cancel getter");
        let a: Answer = HookAnswer::read(
            true,
            || Ok(false),
            || Ok(SummaryField::Text("S")),
            || Err("usage getter".into()),
        );
        assert_eq!(name(&a), "threw: usage getter");
    }
}
