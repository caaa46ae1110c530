//! What the user sees of the flat array.

use crate::message::role::Role;

/// What display filtering does with one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisplayAction {
    /// Shown as it is (the same object).
    Show,
    /// Left out of the view.
    Hide,
    /// Replaced by a `compactionDivider` marker.
    Divider,
    /// A `toolOutputCleared` marker replaced by a `toolOutputClearedDivider`.
    ClearedDivider,
}

/// Summaries are never shown as text: they are hidden, or become a divider
/// when the app asks for one. A `custom` message is shown only when its
/// `display` flag is truthy (pi's convention), so `is_displayed_custom` is
/// asked only for custom messages. Every other role, unknown ones included,
/// is shown untouched.
pub fn display_action<E>(
    role: Role,
    divider: bool,
    is_displayed_custom: impl FnOnce() -> Result<bool, E>,
) -> Result<DisplayAction, E> {
    Ok(match role {
        Role::CompactionSummary if divider => DisplayAction::Divider,
        Role::CompactionSummary => DisplayAction::Hide,
        // Clearing old tool output is shown like a compaction: a small
        // divider when the app asks for dividers, else nothing.
        Role::ToolOutputCleared if divider => DisplayAction::ClearedDivider,
        Role::ToolOutputCleared => DisplayAction::Hide,
        Role::Custom if !is_displayed_custom()? => DisplayAction::Hide,
        _ => DisplayAction::Show,
    })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn action(role: Role, divider: bool, displayed: Option<bool>) -> DisplayAction {
        display_action::<()>(role, divider, || {
            Ok(displayed.expect("display flag read for a non-custom role"))
        })
        .unwrap()
    }

    #[test]
    fn summaries_are_hidden_or_become_dividers() {
        assert_eq!(
            action(Role::CompactionSummary, false, None),
            DisplayAction::Hide
        );
        assert_eq!(
            action(Role::CompactionSummary, true, None),
            DisplayAction::Divider
        );
    }

    #[test]
    fn clearing_markers_are_hidden_or_become_dividers() {
        assert_eq!(
            action(Role::ToolOutputCleared, false, None),
            DisplayAction::Hide
        );
        assert_eq!(
            action(Role::ToolOutputCleared, true, None),
            DisplayAction::ClearedDivider
        );
    }

    #[test]
    fn custom_messages_follow_their_display_flag() {
        assert_eq!(
            action(Role::Custom, false, Some(false)),
            DisplayAction::Hide
        );
        assert_eq!(action(Role::Custom, true, Some(true)), DisplayAction::Show);
        assert_eq!(display_action(Role::Custom, false, || Err(7)), Err(7));
    }

    #[test]
    fn conversation_and_unknown_roles_are_shown() {
        for role in [
            Role::User,
            Role::Assistant,
            Role::ToolResult,
            Role::BashExecution,
            Role::BranchSummary,
            Role::Other,
        ] {
            assert_eq!(action(role, true, None), DisplayAction::Show);
            assert_eq!(action(role, false, None), DisplayAction::Show);
        }
    }
}
