//! The roles a message in the flat array can have.

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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

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
