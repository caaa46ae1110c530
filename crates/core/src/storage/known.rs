//! What a `SessionStore` remembers of the sessions it loaded or saved, and
//! when it must forget: the bookkeeping behind "a save writes only what
//! changed since this store last saw the session" and "a save made from a
//! copy another store changed since is a conflict".
//!
//! [`Sessions`] is generic over what the binding keeps per session (its
//! JavaScript arrays of messages and keys, the session record), so that the
//! rules — one entry per session, an entry outdated by another store's
//! change keeps only what its callers saw (a revision, or a session since
//! deleted) until the session is loaded again, a lock held by a
//! `withSessionLock` callback once per nesting level — are tested natively.
//! Lists searched in order, not maps: a page opens a few sessions, and a
//! `HashMap` brought hashbrown and SipHash into the `.wasm`.

use super::marks::Marks;
use super::packing::Pack;
use std::rc::Rc;

/// The facts the core decides a save or a load with, of what this store
/// last loaded or saved of a session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    pub revision: f64,
    /// Which of the messages share a pack record (`packing`).
    pub packs: Rc<Vec<Pack>>,
    /// Messages of the first record that come before the first message
    /// (when `loadContext` started inside a pack).
    pub lead: u32,
    /// The last `compactionSummary` among the messages.
    pub last_summary: Option<usize>,
    /// Stored messages before the first one (after `loadContext`).
    pub offset: u32,
    /// The pinned messages and clearing markers among the messages.
    pub marks: Rc<Marks>,
}

impl View {
    /// A session just created: nothing stored yet.
    pub fn empty() -> View {
        View::default()
    }

    /// Whether this is the whole session from its first record on: only
    /// then can a failed save's records be put back (`repair`), since the
    /// store holds every record to compare with.
    pub fn whole(&self) -> bool {
        self.offset == 0 && self.lead == 0
    }
}

/// What this store's callers last saw of a session whose copy it dropped
/// because what is stored is no longer that copy: every save made from it
/// is checked against this until the session is loaded again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Seen {
    /// The session at this revision.
    Revision(f64),
    /// A session deleted since: whatever is stored under its id now is
    /// another session, whatever its revision.
    Deleted,
}

/// What the binding keeps per session: its own value, with a [`View`].
pub trait Known: Clone {
    fn view(&self) -> &View;
}

/// The sessions a store knows, the ones another store changed since, and
/// the locks its `withSessionLock` callbacks hold.
#[derive(Debug)]
pub struct Sessions<T> {
    known: Vec<(String, T)>,
    /// Sessions changed elsewhere after this store read them, or whose save
    /// found them changed, with what this store's callers last saw: a save
    /// made from that view reads the records again and is checked against
    /// it, however often it is tried, until a load or a save succeeds.
    outdated: Vec<(String, Seen)>,
    /// Sessions whose lock a callback of this store holds, once per
    /// nesting level.
    held: Vec<String>,
}

impl<T> Default for Sessions<T> {
    fn default() -> Self {
        Sessions {
            known: Vec::new(),
            outdated: Vec::new(),
            held: Vec::new(),
        }
    }
}

impl<T: Known> Sessions<T> {
    /// What this store last loaded or saved of session `id`.
    pub fn get(&self, id: &str) -> Option<T> {
        self.known
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, k)| k.clone())
    }

    /// After a load or a save: `known` is the session now; whatever another
    /// store did before is in it.
    pub fn remember(&mut self, id: &str, known: T) {
        match self.known.iter_mut().find(|(k, _)| k == id) {
            Some(slot) => slot.1 = known,
            None => self.known.push((id.to_owned(), known)),
        }
        self.outdated.retain(|(o, _)| o != id);
    }

    /// This store wrote session `id` anew (`fork`, `importJsonl`): no copy,
    /// and nothing seen of an earlier session of that id applies.
    pub fn forget(&mut self, id: &str) {
        self.known.retain(|(k, _)| k != id);
        self.outdated.retain(|(o, _)| o != id);
    }

    /// A save of `id` found what is stored is not what its callers saw
    /// (`seen`: a conflict, or the session gone): drop the copy and keep
    /// what they saw, so that the same save tried again is refused again.
    /// A mark already there stays: it is older.
    pub fn stale(&mut self, id: &str, seen: Seen) {
        self.known.retain(|(k, _)| k != id);
        if self.seen(id).is_none() {
            self.outdated.push((id.to_owned(), seen));
        }
    }

    /// Session `id` was deleted (by this store or another): a copy or a
    /// mark this store had becomes [`Seen::Deleted`], so that no save made
    /// from it lands in a session created again under the same id. A
    /// session this store never saw is not marked.
    pub fn deleted(&mut self, id: &str) {
        let had = self.known.iter().any(|(k, _)| k == id) || self.seen(id).is_some();
        self.known.retain(|(k, _)| k != id);
        self.outdated.retain(|(o, _)| o != id);
        if had {
            self.outdated.push((id.to_owned(), Seen::Deleted));
        }
    }

    /// Another store changed session `id` (now at `revision`, when said;
    /// `None` also when what is stored is unknown after a failure): unless
    /// this store's copy is at that revision, drop it and keep only the
    /// revision its callers saw.
    pub fn outdated(&mut self, id: &str, revision: Option<f64>) {
        if let Some(at) = self.known.iter().position(|(k, _)| k == id) {
            let seen = self.known[at].1.view().revision;
            if Some(seen) != revision {
                self.known.remove(at);
                self.outdated.push((id.to_owned(), Seen::Revision(seen)));
            }
        }
    }

    /// What a save of `id` must start from, when its copy was dropped
    /// ([`Sessions::outdated`], [`Sessions::stale`], [`Sessions::deleted`]).
    pub fn seen(&self, id: &str) -> Option<Seen> {
        self.outdated.iter().find(|(o, _)| o == id).map(|&(_, r)| r)
    }

    /// What this store's callers last saw of session `id`: its copy's
    /// revision, else the mark left when the copy was dropped; `None` when
    /// this store has not read it (or wrote it anew).
    pub fn viewed(&self, id: &str) -> Option<Seen> {
        match self.known.iter().find(|(k, _)| k == id) {
            Some((_, copy)) => Some(Seen::Revision(copy.view().revision)),
            None => self.seen(id),
        }
    }

    /// Everything, when the store closes.
    pub fn clear(&mut self) {
        self.known.clear();
        self.outdated.clear();
    }

    /// Whether a callback of this store holds session `id`'s lock.
    pub fn holds(&self, id: &str) -> bool {
        self.held.iter().any(|h| h == id)
    }

    /// A callback took session `id`'s lock (one more nesting level).
    pub fn hold(&mut self, id: &str) {
        self.held.push(id.to_owned());
    }

    /// A callback let session `id`'s lock go (one nesting level).
    pub fn release(&mut self, id: &str) {
        if let Some(at) = self.held.iter().position(|h| h == id) {
            self.held.remove(at);
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Copy(View, &'static str);

    impl Known for Copy {
        fn view(&self) -> &View {
            &self.0
        }
    }

    fn at(revision: f64, tag: &'static str) -> Copy {
        Copy(
            View {
                revision,
                ..View::empty()
            },
            tag,
        )
    }

    #[test]
    fn remember_replaces_the_one_entry_of_a_session() {
        let mut s = Sessions::default();
        s.remember("a", at(1.0, "first"));
        s.remember("b", at(4.0, "other"));
        s.remember("a", at(2.0, "second"));
        assert_eq!(s.get("a"), Some(at(2.0, "second")));
        assert_eq!(s.get("b"), Some(at(4.0, "other")));
        assert_eq!(s.get("c"), None);
        s.forget("a");
        assert_eq!(s.get("a"), None);
        assert_eq!(s.get("b"), Some(at(4.0, "other")));
    }

    #[test]
    fn another_stores_change_drops_the_copy_but_keeps_the_revision_seen() {
        let mut s = Sessions::default();
        s.remember("a", at(3.0, "x"));
        // The change this store made itself, announced back: kept.
        s.outdated("a", Some(3.0));
        assert_eq!(s.get("a"), Some(at(3.0, "x")));
        assert_eq!(s.seen("a"), None);
        // Another store's save.
        s.outdated("a", Some(4.0));
        assert_eq!(s.get("a"), None);
        assert_eq!(s.seen("a"), Some(Seen::Revision(3.0)));
        // A second change keeps the revision this store's callers saw.
        s.outdated("a", Some(5.0));
        assert_eq!(s.seen("a"), Some(Seen::Revision(3.0)));
        // Loading again starts afresh.
        s.remember("a", at(5.0, "y"));
        assert_eq!(s.seen("a"), None);
        // A session this store never saw is not marked.
        s.outdated("z", Some(1.0));
        assert_eq!(s.seen("z"), None);
    }

    #[test]
    fn a_stale_save_keeps_what_its_callers_saw_until_the_session_is_loaded_again() {
        let mut s = Sessions::default();
        s.remember("a", at(1.0, "x"));
        // The save found revision 2: refused, the copy dropped.
        s.stale("a", Seen::Revision(1.0));
        assert_eq!((s.get("a"), s.seen("a")), (None, Some(Seen::Revision(1.0))));
        // Tried again (it reads the records, at revision 2): still revision 1.
        s.stale("a", Seen::Revision(2.0));
        assert_eq!(s.seen("a"), Some(Seen::Revision(1.0)));
        // Only a load or a save of the session now clears it.
        s.remember("a", at(2.0, "y"));
        assert_eq!(s.seen("a"), None);
        // The same for a mark another store's change left.
        s.outdated("a", Some(3.0));
        s.stale("a", Seen::Revision(3.0));
        assert_eq!(s.seen("a"), Some(Seen::Revision(2.0)));
        // A session gone when the save wrote.
        s.stale("b", Seen::Deleted);
        assert_eq!(s.seen("b"), Some(Seen::Deleted));
    }

    #[test]
    fn a_deleted_session_stays_deleted_for_its_copies_until_loaded_or_created_again() {
        let mut s = Sessions::default();
        s.remember("a", at(4.0, "x"));
        s.deleted("a");
        assert_eq!((s.get("a"), s.seen("a")), (None, Some(Seen::Deleted)));
        // Its id created again elsewhere ("created", revision 0): still deleted.
        s.outdated("a", Some(0.0));
        assert_eq!(s.seen("a"), Some(Seen::Deleted));
        // A mark of another change becomes a deletion too.
        s.remember("b", at(1.0, "x"));
        s.outdated("b", Some(2.0));
        s.deleted("b");
        assert_eq!(s.seen("b"), Some(Seen::Deleted));
        // Created (or loaded) by this store: a copy again.
        s.remember("a", at(0.0, "new"));
        assert_eq!(s.seen("a"), None);
        // A session this store never saw is not marked.
        s.deleted("z");
        assert_eq!(s.seen("z"), None);
    }

    #[test]
    fn viewed_is_the_copys_revision_else_the_mark() {
        let mut s = Sessions::default();
        assert_eq!(s.viewed("a"), None);
        s.remember("a", at(2.0, "x"));
        assert_eq!(s.viewed("a"), Some(Seen::Revision(2.0)));
        // Another store's save: the revision the callers saw stays.
        s.outdated("a", Some(3.0));
        assert_eq!(s.viewed("a"), Some(Seen::Revision(2.0)));
        s.deleted("a");
        assert_eq!(s.viewed("a"), Some(Seen::Deleted));
        // Loaded again.
        s.remember("a", at(0.0, "new"));
        assert_eq!(s.viewed("a"), Some(Seen::Revision(0.0)));
        s.forget("a");
        assert_eq!(s.viewed("a"), None);
    }

    #[test]
    fn a_session_written_anew_and_clear_drop_the_marks() {
        let mut s = Sessions::default();
        s.remember("a", at(1.0, "x"));
        s.deleted("a");
        // importJsonl or fork wrote a session under that id.
        s.forget("a");
        assert_eq!((s.get("a"), s.seen("a")), (None, None));
        s.remember("b", at(1.0, "x"));
        s.outdated("b", None);
        s.remember("c", at(1.0, "x"));
        s.clear();
        assert_eq!((s.get("c"), s.seen("b")), (None, None));
    }

    #[test]
    fn held_locks_count_nesting_levels() {
        let mut s: Sessions<Copy> = Sessions::default();
        assert!(!s.holds("a"));
        s.hold("a");
        s.hold("a");
        s.release("a");
        assert!(s.holds("a"));
        s.release("a");
        assert!(!s.holds("a"));
        s.release("a");
        assert!(!s.holds("a"));
    }

    #[test]
    fn only_a_whole_view_can_be_put_back() {
        assert!(View::empty().whole());
        let context = View {
            offset: 3,
            ..View::empty()
        };
        let inside_a_pack = View {
            lead: 2,
            ..View::empty()
        };
        assert!(!context.whole() && !inside_a_pack.whole());
    }
}
