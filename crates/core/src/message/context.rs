//! What the model sees of the flat array: the last `compactionSummary` and
//! everything after it.

use crate::message::role::Role;

/// The index of the last `compactionSummary`, found by walking back from the
/// end, so the cost is the distance from the end to that summary. Messages
/// before it are never looked at.
pub fn last_compaction_index<E>(
    len: usize,
    mut role_at: impl FnMut(usize) -> Result<Role, E>,
) -> Result<Option<usize>, E> {
    for i in (0..len).rev() {
        if role_at(i)? == Role::CompactionSummary {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use Role::*;

    fn find(roles: &[Role]) -> (Option<usize>, Vec<usize>) {
        let mut read = Vec::new();
        let found = last_compaction_index::<()>(roles.len(), |i| {
            read.push(i);
            Ok(roles[i])
        })
        .unwrap();
        (found, read)
    }

    #[test]
    fn finds_the_last_summary_reading_only_what_follows_it() {
        let roles = [
            User,
            Assistant,
            CompactionSummary,
            User,
            CompactionSummary,
            User,
            ToolResult,
        ];
        assert_eq!(find(&roles), (Some(4), vec![6, 5, 4]));
    }

    #[test]
    fn no_summary_reads_everything_and_finds_none() {
        assert_eq!(find(&[User, Assistant]), (None, vec![1, 0]));
        assert_eq!(find(&[]), (None, vec![]));
        assert_eq!(find(&[BranchSummary, Other]).0, None);
    }

    #[test]
    fn an_unreadable_message_stops_the_walk() {
        let roles = [CompactionSummary, User, User];
        let r = last_compaction_index(roles.len(), |i| if i == 1 { Err(i) } else { Ok(roles[i]) });
        assert_eq!(r, Err(1));
    }
}
