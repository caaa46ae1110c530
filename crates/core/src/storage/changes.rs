//! The notices the stores on one database send each other (a
//! BroadcastChannel per database): which change, to which session, at which
//! revision; and what a store does on hearing one (`known`). The app's
//! `onChange` listeners get the same objects (`SessionChangeEvent`).

use super::known::{Known, Sessions};
use serde::Serialize;

/// A change committed through a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Created,
    Saved,
    Renamed,
    Deleted,
    Imported,
    Forked,
}

/// A notice as posted: `{ type, sessionId, revision?, sourceId? }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice<'a> {
    #[serde(rename = "type")]
    pub change: Change,
    pub session_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<f64>,
    /// A fork's source session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_id: Option<&'a str>,
}

/// The channel the stores of database `db` share.
pub fn channel_name(db: &str) -> String {
    format!("agent-compaction:{db}")
}

/// Another store changed session `id` (`kind` as posted; `revision` when
/// it says): a deleted session is forgotten; any other change outdates
/// this store's copy unless it is at that revision.
pub fn heard<T: Known>(sessions: &mut Sessions<T>, kind: &str, id: &str, revision: Option<f64>) {
    match kind {
        "deleted" => sessions.forget(id),
        _ => sessions.outdated(id, revision),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::storage::known::View;

    #[derive(Clone)]
    struct Copy(View);

    impl Known for Copy {
        fn view(&self) -> &View {
            &self.0
        }
    }

    #[test]
    fn notices_serialize_as_the_app_sees_them() {
        let saved = Notice {
            change: Change::Saved,
            session_id: "s",
            revision: Some(3.0),
            source_id: None,
        };
        assert_eq!(
            serde_json::to_string(&saved).unwrap(),
            r#"{"type":"saved","sessionId":"s","revision":3.0}"#
        );
        let forked = Notice {
            change: Change::Forked,
            session_id: "f",
            revision: Some(1.0),
            source_id: Some("s"),
        };
        assert_eq!(
            serde_json::to_string(&forked).unwrap(),
            r#"{"type":"forked","sessionId":"f","revision":1.0,"sourceId":"s"}"#
        );
        let deleted = Notice {
            change: Change::Deleted,
            session_id: "s",
            revision: None,
            source_id: None,
        };
        assert_eq!(
            serde_json::to_string(&deleted).unwrap(),
            r#"{"type":"deleted","sessionId":"s"}"#
        );
        assert_eq!(channel_name("db"), "agent-compaction:db");
    }

    #[test]
    fn a_heard_change_forgets_or_outdates_the_copy() {
        let at = |revision| {
            Copy(View {
                revision,
                ..View::default()
            })
        };
        let mut s = Sessions::default();
        s.remember("a", at(2.0));
        s.remember("b", at(2.0));
        heard(&mut s, "saved", "a", Some(2.0));
        assert!(s.get("a").is_some());
        heard(&mut s, "renamed", "a", Some(3.0));
        assert!(s.get("a").is_none());
        assert_eq!(s.outdated_revision("a"), Some(2.0));
        heard(&mut s, "deleted", "b", None);
        assert!(s.get("b").is_none());
        assert_eq!(s.outdated_revision("b"), None);
    }
}
