//! The roles a message in the flat array can have.

use crate::error::{FieldPath, InputError};

/// A message's role, as far as this library treats roles differently.
///
/// The discriminants are the codes a host's fact-gathering returns for
/// each role (the package's binding checks its table against these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Role {
    User = 0,
    Assistant = 1,
    ToolResult = 2,
    BashExecution = 3,
    Custom = 4,
    BranchSummary = 5,
    CompactionSummary = 6,
    /// A marker saying which older tool outputs were cleared
    /// (`toolOutputCleared`, see `compaction::clearing`): never sent to the
    /// model, shown as a divider.
    ToolOutputCleared = 7,
    /// Any other role string: kept, shown, never sent to the model.
    Other = 8,
}

impl Role {
    pub fn from_name(name: &str) -> Role {
        match name {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "bashExecution" => Role::BashExecution,
            "custom" => Role::Custom,
            "branchSummary" => Role::BranchSummary,
            "compactionSummary" => Role::CompactionSummary,
            "toolOutputCleared" => Role::ToolOutputCleared,
            _ => Role::Other,
        }
    }

    pub fn from_code(code: u8) -> Option<Role> {
        Some(match code {
            0 => Role::User,
            1 => Role::Assistant,
            2 => Role::ToolResult,
            3 => Role::BashExecution,
            4 => Role::Custom,
            5 => Role::BranchSummary,
            6 => Role::CompactionSummary,
            7 => Role::ToolOutputCleared,
            8 => Role::Other,
            _ => return None,
        })
    }
}

/// The code a host's fact-gathering gives a value that is no object.
pub const NOT_AN_OBJECT: u8 = 9;
/// The code for a message whose `role` is not a string.
pub const ROLE_NOT_A_STRING: u8 = 10;

/// The error for a message (at `path`) whose role `code` names no role:
/// no object (`message` describes it), a `role` that is not a string, or
/// one that could not be read. `role` reads the role again: its
/// description, or what reading it threw.
pub fn role_error(
    code: u8,
    path: FieldPath,
    message: impl FnOnce() -> String,
    role: impl FnOnce() -> Result<String, InputError>,
) -> InputError {
    let wrong = |path, expected, got| InputError::WrongType {
        path,
        expected,
        got,
    };
    match (code, role) {
        (NOT_AN_OBJECT, _) => wrong(path, "a message object", message()),
        (ROLE_NOT_A_STRING, role) => match role() {
            Ok(got) => wrong(path.field("role"), "a string", got),
            Err(e) => e,
        },
        // The role getter threw: read again, it says what it threw.
        (_, role) => match role() {
            Err(e) => e,
            Ok(_) => InputError::Unreadable {
                path: path.field("role"),
                reason: "reading it threw".into(),
            },
        },
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_code_that_names_no_role_is_the_error_naming_the_field() {
        let path = || FieldPath::element("messages", 2);
        let threw = || InputError::Unreadable {
            path: path().field("role"),
            reason: "getter".into(),
        };
        let text = |code, role: Result<String, InputError>| {
            role_error(code, path(), || "a number".into(), || role).to_string()
        };
        assert_eq!(
            text(NOT_AN_OBJECT, Ok("unread".into())),
            "messages[2] must be a message object, got a number"
        );
        assert_eq!(
            text(ROLE_NOT_A_STRING, Ok("null".into())),
            "messages[2].role must be a string, got null"
        );
        assert_eq!(
            text(ROLE_NOT_A_STRING, Err(threw())),
            "messages[2].role could not be read: getter"
        );
        assert_eq!(
            text(11, Err(threw())),
            "messages[2].role could not be read: getter"
        );
        assert_eq!(
            text(11, Ok("a string".into())),
            "messages[2].role could not be read: reading it threw"
        );
    }

    #[test]
    fn names_and_codes_round_trip() {
        for name in [
            "user",
            "assistant",
            "toolResult",
            "bashExecution",
            "custom",
            "branchSummary",
            "compactionSummary",
            "toolOutputCleared",
        ] {
            let role = Role::from_name(name);
            assert_ne!(role, Role::Other, "{name}");
            assert_eq!(Role::from_code(role as u8), Some(role));
        }
        assert_eq!(Role::from_name("User"), Role::Other);
        assert_eq!(Role::from_name("system"), Role::Other);
        assert_eq!(Role::from_code(8), Some(Role::Other));
        assert_eq!(Role::from_code(9), None);
    }
}
