//! The notices the stores on one database send each other (a
//! BroadcastChannel per database): which change, to which session, at which
//! revision; and what a store does on hearing one (`known`). The app's
//! `onChange` listeners get the same objects (`SessionChangeEvent`).

use super::known::{Known, Sessions};
use crate::js::options::Value;
use crate::js::shape::{Field, Shape};

/// A change committed through a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Created,
    Saved,
    Renamed,
    Deleted,
    Imported,
    Forked,
}

impl Change {
    /// Its `type` as posted.
    pub fn name(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Saved => "saved",
            Change::Renamed => "renamed",
            Change::Deleted => "deleted",
            Change::Imported => "imported",
            Change::Forked => "forked",
        }
    }
}

/// A notice as posted: `{ type, sessionId, revision?, sourceId? }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice<'a> {
    pub change: Change,
    pub session_id: &'a str,
    pub revision: Option<f64>,
    /// A fork's source session.
    pub source_id: Option<&'a str>,
}

impl Notice<'_> {
    pub fn shape<V>(&self) -> Shape<V> {
        let mut n = Shape::of([
            ("type", Field::Str(self.change.name())),
            ("sessionId", Field::String(self.session_id.to_owned())),
        ]);
        n.push_some("revision", self.revision.map(Field::Number));
        n.push_some(
            "sourceId",
            self.source_id.map(|s| Field::String(s.to_owned())),
        );
        n
    }
}

/// The channel the stores of database `db` share.
pub fn channel_name(db: &str) -> String {
    format!("agent-compaction:{db}")
}

/// A notice as another store posted it: its `type`, `sessionId` and
/// `revision` where it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct Posted {
    pub kind: String,
    pub id: String,
    pub revision: Option<f64>,
}

impl Posted {
    /// Reads a posted notice, `field(key)` giving each of its fields;
    /// `None` when it is not one (no string `type` or `sessionId`: nothing
    /// this store posts).
    pub fn read<V: Value>(field: impl Fn(&'static str) -> V) -> Option<Posted> {
        Some(Posted {
            kind: field("type").name()?,
            id: field("sessionId").name()?,
            revision: field("revision").number(),
        })
    }
}

/// Another store changed session `id` (`kind` as posted; `revision` when
/// it says): a deleted session stays deleted for the copies this store
/// handed out, even once its id is created again; any other change
/// outdates this store's copy unless it is at that revision.
pub fn heard<T: Known>(sessions: &mut Sessions<T>, kind: &str, id: &str, revision: Option<f64>) {
    match kind {
        "deleted" => sessions.deleted(id),
        _ => sessions.outdated(id, revision),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::js::shape::text;
    use crate::storage::known::{Seen, View};

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
            text(&saved.shape()),
            r#"{"type":"saved","sessionId":"s","revision":3}"#
        );
        let forked = Notice {
            change: Change::Forked,
            session_id: "f",
            revision: Some(1.0),
            source_id: Some("s"),
        };
        assert_eq!(
            text(&forked.shape()),
            r#"{"type":"forked","sessionId":"f","revision":1,"sourceId":"s"}"#
        );
        let deleted = Notice {
            change: Change::Deleted,
            session_id: "s",
            revision: None,
            source_id: None,
        };
        assert_eq!(
            text(&deleted.shape()),
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
        assert_eq!(s.seen("a"), Some(Seen::Revision(2.0)));
        heard(&mut s, "deleted", "b", None);
        assert!(s.get("b").is_none());
        assert_eq!(s.seen("b"), Some(Seen::Deleted));
        // Its id created again: a copy of the deleted one is no base for it.
        heard(&mut s, "created", "b", Some(0.0));
        assert_eq!(s.seen("b"), Some(Seen::Deleted));
    }

    #[test]
    fn a_posted_notice_is_read_or_ignored() {
        use crate::js::options::tests::{Fields, Js};
        let read = |fields| {
            let o = Fields::new(fields);
            Posted::read(|k| o.get(k).unwrap())
        };
        let saved = vec![
            ("type", Js::Str("saved")),
            ("sessionId", Js::Str("a")),
            ("revision", Js::Num(2.0)),
        ];
        let posted = Posted {
            kind: "saved".into(),
            id: "a".into(),
            revision: Some(2.0),
        };
        assert_eq!(read(saved), Some(posted));
        let deleted = vec![("type", Js::Str("deleted")), ("sessionId", Js::Str("b"))];
        assert_eq!(read(deleted).unwrap().revision, None);
        assert_eq!(read(vec![("type", Js::Str("saved"))]), None);
        assert_eq!(read(vec![("sessionId", Js::Num(1.0))]), None);
    }
}
