//! The save flow driven as the binding drives it, over a fake host: each
//! step from each event, for every branch.

use super::*;
use crate::conversation::edit::scan;
use crate::storage::error::DropRefusal;
use crate::storage::history::OnSave;
use crate::storage::packing::{KeyOf, PackPut};
use crate::storage::save_plan::Durability;
use crate::tokens::estimate::UsageNumbers;
use crate::tokens::overflow::StopReason;

/// A message: `id` is its object's identity, `value` what it holds.
#[derive(Clone, Debug)]
struct Msg {
    id: u32,
    value: u32,
    role: Role,
    failed: bool,
    bad: bool,
    pinned: bool,
    usage: Option<UsageNumbers>,
}

fn msg(id: u32, role: Role) -> Msg {
    Msg {
        id,
        value: id,
        role,
        failed: false,
        bad: false,
        pinned: false,
        usage: None,
    }
}

fn user(id: u32) -> Msg {
    msg(id, Role::User)
}

#[derive(Default)]
struct Fake {
    base: Vec<Msg>,
    new: New,
    /// Each base message's key position.
    positions: Vec<Position>,
    adopted: usize,
}

impl Fake {
    /// A base of `old` (keyed `[0]`, `[1]`, …) and a new array.
    fn new(old: &[Msg], new: &[Msg]) -> Fake {
        Fake {
            base: old.to_vec(),
            new: New(new.to_vec()),
            positions: (0..old.len()).map(|k| vec![k as f64]).collect(),
            adopted: 0,
        }
    }

    fn base(&self, revision: f64) -> Base {
        Base {
            view: View {
                revision,
                ..View::default()
            },
            len: self.base.len(),
            keys: self.base.len(),
            last_modified: Some(100.0),
        }
    }
}

/// The array being saved.
#[derive(Default)]
struct New(Vec<Msg>);

impl Messages for New {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn facts(&mut self, from: usize, to: usize) -> Result<Vec<RawFacts>, InputError> {
        Ok(self.0[from..to].iter().map(raw).collect())
    }

    fn role(&mut self, j: usize) -> Result<Role, InputError> {
        Ok(self.0[j].role)
    }

    fn last_summary(&mut self) -> Option<usize> {
        (self.0.iter()).rposition(|m| m.role == Role::CompactionSummary)
    }

    fn mark_words(&mut self, from: usize, to: usize) -> Vec<u32> {
        (from..to)
            .filter(|&j| self.0[j].pinned)
            .flat_map(|j| [j as u32, self.0[j].role as u32, 1])
            .collect()
    }

    fn first_user_text(&mut self) -> Option<Vec<u16>> {
        self.0.iter().find(|m| m.role == Role::User)?;
        Some("  hello   there ".encode_utf16().collect())
    }
}

fn raw(m: &Msg) -> RawFacts {
    RawFacts {
        role: Some(m.role),
        text: 40,
        stop_reason: m.failed.then_some(StopReason::Error),
        usage: m.usage,
        ..RawFacts::default()
    }
}

impl SaveHost for Fake {
    type Messages = New;

    fn messages(&mut self) -> &mut New {
        &mut self.new
    }

    fn identity_words(&mut self) -> Vec<i32> {
        let ids = |v: &[Msg]| v.iter().map(|m| m.id).collect::<Vec<_>>();
        let f = scan::facts(&ids(&self.base), &ids(&self.new.0));
        let mut words = vec![f.prefix as i32];
        words.extend(f.known_class);
        words.extend(f.new_class);
        words
    }

    fn adopt_equal(&mut self) {
        self.adopted += 1;
        let mut i = 0;
        for m in &self.new.0 {
            if i < self.base.len() && self.base[i].value == m.value {
                self.base[i] = m.clone();
                i += 1;
            }
        }
    }

    fn old_facts(&mut self, k: usize) -> Option<RawFacts> {
        self.base.get(k).map(raw)
    }

    fn unstorable(&mut self, indices: &[usize]) -> Option<(usize, String, String)> {
        let bad = indices.iter().find(|&&j| self.new.0[j].bad)?;
        Some((*bad, ".details".into(), "is a function".into()))
    }

    fn old_position(&mut self, k: usize) -> Position {
        self.positions[k].clone()
    }
}

fn record(revision: f64) -> Event {
    Event::Record {
        revision: Some(revision),
        last_modified: Some(100.0),
        fields: None,
    }
}

/// The session record as a save that wrote `fields` left it.
fn written(fields: &SaveFields) -> Event {
    Event::Record {
        revision: Some(fields.revision),
        last_modified: Some(fields.last_modified),
        fields: Some(fields.clone()),
    }
}

fn start(flow: &mut SaveFlow, host: &mut Fake, cached: Option<Base>, first_same: bool) -> Step {
    flow.step(host, Event::Start { cached, first_same })
}

fn write_plan(step: Step) -> WritePlan {
    match step {
        Step::Write(plan) => *plan,
        other => panic!("expected a write, got {other:?}"),
    }
}

fn store_failure(step: Step) -> (StoreError, Option<Seen>) {
    match step {
        Step::Fail(SaveFailure::Store { error, stale }) => (error, stale),
        other => panic!("expected a store failure, got {other:?}"),
    }
}

#[test]
fn an_append_to_a_cached_copy_writes_the_new_record_and_commits() {
    let old = [user(1), msg(2, Role::Assistant)];
    let mut host = Fake::new(&old, &[user(1), msg(2, Role::Assistant), user(3)]);
    let mut flow = SaveFlow::new("s", 3, false, None, 200.0);
    let cached = Some(host.base(4.0));
    let plan = write_plan(start(&mut flow, &mut host, cached, true));
    assert_eq!(flow.edit().inserted, vec![2]);
    assert_eq!(host.adopted, 0, "a cached copy is diffed by identity");
    assert_eq!(plan.added, vec![vec![2.0]]);
    assert_eq!(plan.key_runs, vec![0, 0, 2, 1, 0, 1]);
    assert_eq!(plan.writes.layout.singles, vec![2]);
    assert_eq!(plan.writes.fields.revision, 5.0);
    assert_eq!(plan.writes.fields.message_count, 3);
    assert_eq!(plan.writes.fields.preview, "hello there");
    assert_eq!(plan.writes.fields.last_modified, 200.0);
    assert!(plan.writes.fields.context_tokens > 0.0);
    assert_eq!(plan.writes.durability, Durability::Default);
    assert_eq!((plan.context, plan.pinned.clone()), (None, vec![]));
    assert_eq!(
        plan.history,
        OnSave::Keep,
        "a turn leaves the history index as it is"
    );
    assert_eq!(flow.step(&mut host, record(4.0)), Step::Commit(None));
    let Step::Saved(view) = flow.step(&mut host, Event::Committed) else {
        panic!("expected the saved view");
    };
    assert_eq!(
        (view.revision, view.offset, view.last_summary),
        (5.0, 0, None)
    );
}

#[test]
fn without_a_usable_copy_the_records_are_read_and_matched_by_value() {
    let mut host = Fake::new(&[], &[user(1), user(2)]);
    let mut flow = SaveFlow::new("s", 2, false, None, 200.0);
    assert_eq!(start(&mut flow, &mut host, None, false), Step::ReadStored);
    // A loadContext copy the array does not start with: read too.
    let mut context = host.base(3.0);
    context.view.offset = 5;
    assert_eq!(
        start(&mut flow, &mut host, Some(context), false),
        Step::ReadStored
    );
    // The stored records hold equal messages under other objects.
    let stored = [
        Msg {
            value: 1,
            ..user(10)
        },
        Msg {
            value: 2,
            ..user(20)
        },
    ];
    host.base = stored.to_vec();
    let mut base = host.base(3.0);
    base.view.offset = 4;
    let step = flow.step(&mut host, Event::Stored { base, seen: None });
    assert_eq!(host.adopted, 1);
    // Nothing changed once matched: only the revision is checked.
    assert_eq!(step, Step::ReadRecord);
    assert_eq!(flow.step(&mut host, record(3.0)), Step::Unchanged);
}

#[test]
fn records_read_after_another_stores_change_are_a_conflict_that_keeps_the_revision_seen() {
    let mut host = Fake::new(&[], &[user(1)]);
    let mut flow = SaveFlow::new("s", 1, false, None, 200.0);
    start(&mut flow, &mut host, None, false);
    let base = host.base(6.0);
    let (error, stale) = store_failure(flow.step(
        &mut host,
        Event::Stored {
            base,
            seen: Some(Seen::Revision(5.0)),
        },
    ));
    assert_eq!(error.name(), "ConflictError");
    assert_eq!(stale, Some(Seen::Revision(5.0)));
}

#[test]
fn a_cached_copy_whose_diff_drops_messages_is_matched_by_value_first() {
    // The caller kept copies of the stored messages (other objects).
    let old = [user(1), user(2)];
    let new = [
        Msg {
            value: 1,
            ..user(11)
        },
        Msg {
            value: 2,
            ..user(12)
        },
        user(3),
    ];
    let mut host = Fake::new(&old, &new);
    let mut flow = SaveFlow::new("s", 3, false, None, 200.0);
    let cached = Some(host.base(1.0));
    let plan = write_plan(start(&mut flow, &mut host, cached, false));
    assert_eq!(host.adopted, 1);
    assert_eq!(flow.edit().inserted, vec![2]);
    assert!(flow.edit().removed.is_empty());
    assert_eq!(plan.writes.layout.singles, vec![2]);
}

#[test]
fn drops_need_replace_except_trailing_failed_attempts() {
    let failed = Msg {
        failed: true,
        ..msg(2, Role::Assistant)
    };
    // A trailing failed attempt goes without replace.
    let mut host = Fake::new(&[user(1), failed], &[user(1)]);
    let mut flow = SaveFlow::new("s", 1, false, None, 200.0);
    let cached = Some(host.base(1.0));
    let plan = write_plan(start(&mut flow, &mut host, cached, true));
    assert_eq!(plan.writes.layout.deletes, vec![1]);
    // Any other drop is refused, and the copy is kept.
    let mut host = Fake::new(&[user(1), user(2)], &[user(1)]);
    let mut flow = SaveFlow::new("s", 1, false, None, 200.0);
    let cached = Some(host.base(1.0));
    let (error, stale) = store_failure(start(&mut flow, &mut host, cached, true));
    assert_eq!(
        error,
        StoreError::RefusedDrop {
            action: ACTION,
            why: DropRefusal::NotFailedAttempts { count: 1, first: 1 }
        }
    );
    assert_eq!(stale, None);
    // With replace it is written.
    let mut host = Fake::new(&[user(1), user(2)], &[user(1)]);
    let mut flow = SaveFlow::new("s", 1, true, None, 200.0);
    let cached = Some(host.base(1.0));
    let plan = write_plan(start(&mut flow, &mut host, cached, true));
    assert_eq!(plan.writes.deletes, 1);
}

#[test]
fn a_context_copy_saved_with_replace_deletes_the_records_before_it() {
    let mut host = Fake::new(&[user(1)], &[user(1), user(2)]);
    let mut flow = SaveFlow::new("s", 2, true, None, 200.0);
    let mut cached = host.base(1.0);
    cached.view.offset = 3;
    let plan = write_plan(start(&mut flow, &mut host, Some(cached.clone()), true));
    assert!(plan.writes.delete_before);
    assert_eq!((plan.history, plan.offset), (OnSave::Drop, 3));
    // Without replace: refused.
    let mut flow = SaveFlow::new("s", 2, false, None, 200.0);
    let (error, _) = store_failure(start(&mut flow, &mut host, Some(cached), true));
    assert_eq!(
        error,
        StoreError::RefusedDrop {
            action: ACTION,
            why: DropRefusal::BeforeContext { offset: 3 }
        }
    );
}

#[test]
fn an_unchanged_save_checks_the_revision_and_writes_nothing() {
    let old = [user(1)];
    let mut host = Fake::new(&old, &old);
    let mut flow = SaveFlow::new("s", 1, false, None, 200.0);
    let cached = Some(host.base(2.0));
    assert_eq!(start(&mut flow, &mut host, cached, true), Step::ReadRecord);
    let (error, stale) = store_failure(flow.step(&mut host, record(3.0)));
    assert_eq!(error.name(), "ConflictError");
    assert_eq!(stale, Some(Seen::Revision(2.0)));
    // A second attempt of a save that writes nothing cannot have landed.
    let fields = SaveFields {
        last_modified: 100.0,
        message_count: 1,
        context_tokens: 1.0,
        preview: String::new(),
        revision: 3.0,
        context_slot: 0,
    };
    let mut flow = SaveFlow::new("s", 1, false, Some(fields.clone()), 200.0);
    let cached = Some(host.base(2.0));
    start(&mut flow, &mut host, cached, true);
    let (error, _) = store_failure(flow.step(&mut host, written(&fields)));
    assert_eq!(error.name(), "ConflictError");
    // A deleted session.
    let mut flow = SaveFlow::new("s", 1, false, None, 200.0);
    let cached = Some(host.base(2.0));
    start(&mut flow, &mut host, cached, true);
    let gone = Event::Record {
        revision: None,
        last_modified: None,
        fields: None,
    };
    let (error, stale) = store_failure(flow.step(&mut host, gone));
    assert_eq!(error.name(), "SessionNotFoundError");
    assert_eq!(stale, Some(Seen::Deleted));
}

#[test]
fn unstorable_messages_are_refused_before_anything_is_written() {
    let bad = Msg {
        bad: true,
        ..user(2)
    };
    let mut host = Fake::new(&[user(1)], &[user(1), bad]);
    let mut flow = SaveFlow::new("s", 2, false, None, 200.0);
    let cached = Some(host.base(1.0));
    assert_eq!(
        start(&mut flow, &mut host, cached, true),
        Step::Fail(SaveFailure::Type(
            "messages[1].details is a function: a message must be plain data to be stored".into()
        ))
    );
}

/// The first attempt of a save appending one message to revision 4: the
/// fields it writes over the session record as it commits (`lastModified`
/// at `now`).
fn first_attempt(host: &mut Fake, now: f64) -> SaveFields {
    let mut flow = SaveFlow::new("s", 2, false, None, now);
    let cached = Some(host.base(4.0));
    write_plan(start(&mut flow, host, cached, true));
    assert_eq!(flow.writing(), None, "nothing written before the commit");
    assert!(matches!(flow.step(host, record(4.0)), Step::Commit(_)));
    flow.writing().cloned().expect("what the commit writes")
}

/// The second attempt of the same save, its first having written `first`
/// (`None`: it never got to its commit), finding `stored`.
fn second_attempt(host: &mut Fake, first: Option<SaveFields>, stored: Event) -> Step {
    let mut flow = SaveFlow::new("s", 2, false, first, 300.0);
    let cached = Some(host.base(4.0));
    write_plan(start(&mut flow, host, cached, true));
    flow.step(host, stored)
}

#[test]
fn a_retry_finds_the_first_attempts_commit() {
    let mut host = Fake::new(&[user(1)], &[user(1), user(2)]);
    let wrote = first_attempt(&mut host, 200.0);
    assert_eq!((wrote.revision, wrote.last_modified), (5.0, 200.0));
    let Step::Landed(view) = second_attempt(&mut host, Some(wrote.clone()), written(&wrote)) else {
        panic!("expected the landed save");
    };
    assert_eq!(view.revision, 5.0);
    // Not committed: written now.
    let step = second_attempt(&mut host, Some(wrote.clone()), record(4.0));
    assert!(matches!(step, Step::Commit(_)), "{step:?}");
    // Another revision is a conflict.
    let (error, stale) = store_failure(second_attempt(&mut host, Some(wrote), record(7.0)));
    assert_eq!(error.name(), "ConflictError");
    assert_eq!(stale, Some(Seen::Revision(4.0)));
}

#[test]
fn a_retry_finding_another_pages_save_of_the_next_revision_is_a_conflict() {
    // Without Web Locks the lock keeps out only this page: another page
    // saved revision 5 from revision 4 between the two attempts (here the
    // same append, a millisecond later), after a first attempt that did
    // not commit, or never got to its commit.
    let mut host = Fake::new(&[user(1)], &[user(1), user(2)]);
    let wrote = first_attempt(&mut host, 200.0);
    let theirs = first_attempt(&mut host, 201.0);
    assert_eq!(theirs.revision, wrote.revision);
    for first in [Some(wrote.clone()), None] {
        let (error, stale) = store_failure(second_attempt(&mut host, first, written(&theirs)));
        assert_eq!(error.name(), "ConflictError");
        assert_eq!(stale, Some(Seen::Revision(4.0)));
    }
    // A record whose fields cannot all be read (`fields: None`) is not the
    // one the first attempt wrote either.
    let (error, _) = store_failure(second_attempt(&mut host, Some(wrote), record(5.0)));
    assert_eq!(error.name(), "ConflictError");
}

#[test]
fn the_fields_are_refreshed_when_the_stored_record_is_newer() {
    let mut host = Fake::new(&[user(1)], &[user(1), user(2)]);
    let mut flow = SaveFlow::new("s", 2, false, None, 200.0);
    let cached = Some(host.base(4.0));
    let plan = write_plan(start(&mut flow, &mut host, cached, true));
    let newer = Event::Record {
        revision: Some(4.0),
        last_modified: Some(500.0),
        fields: None,
    };
    let Step::Commit(Some(fields)) = flow.step(&mut host, newer) else {
        panic!("expected refreshed fields");
    };
    assert_eq!(fields.last_modified, 500.0);
    // What a second attempt looks for: the fields as committed.
    assert_eq!(flow.writing(), Some(&fields));
    assert_eq!(
        SaveFields {
            last_modified: 200.0,
            ..fields
        },
        plan.writes.fields
    );
}

#[test]
fn a_failed_commit_is_repaired_only_where_worth_it_and_the_copy_whole() {
    let old: Vec<Msg> = (0..3).map(user).collect();
    let new = [user(0), user(1)];
    let run = |name: &str, offset: u32| {
        let mut host = Fake::new(&old, &new);
        let mut flow = SaveFlow::new("s", 2, true, None, 200.0);
        let mut cached = host.base(1.0);
        cached.view.offset = offset;
        start(&mut flow, &mut host, Some(cached), true);
        flow.step(&mut host, record(1.0));
        let failed = Event::CommitFailed {
            dom_name: name.into(),
        };
        flow.step(&mut host, failed)
    };
    assert_eq!(run("QuotaExceededError", 0), Step::Repair(vec![2]));
    assert_eq!(run("AbortError", 0), Step::CommitError);
}

#[test]
fn an_inserted_summary_starts_the_context_and_makes_the_write_strict() {
    let pinned = Msg {
        pinned: true,
        ..user(2)
    };
    let old = [user(1), pinned.clone(), user(3)];
    let new = [
        user(1),
        pinned,
        user(3),
        msg(9, Role::CompactionSummary),
        user(4),
    ];
    let mut host = Fake::new(&old, &new);
    let mut flow = SaveFlow::new("s", 5, false, None, 200.0);
    let mut cached = host.base(1.0);
    cached.view.marks = Rc::new(Marks {
        pinned: vec![1],
        markers: vec![],
    });
    let plan = write_plan(start(&mut flow, &mut host, Some(cached), true));
    assert_eq!(plan.context, Some(3));
    assert_eq!(plan.pinned, vec![(1, 0)]);
    assert_eq!(plan.writes.durability, Durability::Strict);
    assert_eq!(
        plan.history,
        OnSave::Fill { from: 0, to: 3 },
        "what the summary hides is indexed in the save"
    );
    flow.step(&mut host, record(1.0));
    let Step::Saved(view) = flow.step(&mut host, Event::Committed) else {
        panic!("expected the saved view");
    };
    assert_eq!(view.last_summary, Some(3));
    assert_eq!(view.marks.pinned, vec![1]);
}

#[test]
fn a_removed_last_summary_is_looked_for_in_the_new_array() {
    let old = [
        msg(1, Role::CompactionSummary),
        user(2),
        msg(3, Role::CompactionSummary),
    ];
    let new = [msg(1, Role::CompactionSummary), user(2)];
    let mut host = Fake::new(&old, &new);
    let mut flow = SaveFlow::new("s", 2, true, None, 200.0);
    let mut cached = host.base(1.0);
    cached.view.last_summary = Some(2);
    let plan = write_plan(start(&mut flow, &mut host, Some(cached), true));
    assert_eq!(plan.context, Some(0));
    assert_eq!(
        plan.history,
        OnSave::Drop,
        "an undo drops the history index"
    );
}

#[test]
fn a_split_pack_is_keyed_between_its_first_part_and_the_next_record() {
    // Old: a pack of 32 messages [0], then loose messages [32] … [39]; a
    // summary inserted at 10 splits the pack where the context starts.
    let old: Vec<Msg> = (0..40).map(user).collect();
    let mut new = old.clone();
    new.insert(10, msg(99, Role::CompactionSummary));
    let mut host = Fake::new(&old, &new);
    host.positions = (0..40)
        .map(|k| vec![if k < 32 { 0.0 } else { k as f64 }])
        .collect();
    let mut flow = SaveFlow::new("s", 41, false, None, 200.0);
    let mut cached = host.base(1.0);
    cached.view.packs = Rc::new(vec![(0, 32)]);
    let plan = write_plan(start(&mut flow, &mut host, Some(cached), true));
    let puts = &plan.writes.layout.pack_puts;
    assert_eq!(
        puts[0],
        PackPut {
            start: 0,
            len: 10,
            key: KeyOf::Old(0)
        }
    );
    assert_eq!(puts[1].key, KeyOf::Split);
    assert_eq!(plan.pack_keys[0], NewKey::Old(0));
    // Between [0] (the first part's key) and [32] (old message 32, now 33).
    assert_eq!(plan.pack_keys[1], NewKey::Fresh(vec![1.0]));
    assert_eq!(plan.context, Some(10));
}

#[test]
fn a_pack_of_inserted_messages_takes_the_first_ones_key() {
    // A first save of a long array lays it out in packs keyed by their
    // first inserted message.
    let new: Vec<Msg> = (0..300).map(user).collect();
    let mut host = Fake::new(&[], &new);
    let mut flow = SaveFlow::new("s", 300, false, None, 200.0);
    let cached = Some(host.base(0.0));
    let plan = write_plan(start(&mut flow, &mut host, cached, true));
    let puts = &plan.writes.layout.pack_puts;
    assert!(!puts.is_empty());
    for (p, key) in puts.iter().zip(&plan.pack_keys) {
        assert_eq!(p.key, KeyOf::Inserted(p.start));
        assert_eq!(key, &NewKey::Added(p.start));
        assert_eq!(plan.added[p.start], vec![p.start as f64]);
    }
}

#[test]
fn events_out_of_order_fail_without_panicking() {
    let mut host = Fake::new(&[], &[]);
    let mut flow = SaveFlow::new("s", 0, false, None, 200.0);
    assert!(matches!(
        flow.step(&mut host, record(1.0)),
        Step::Fail(SaveFailure::Internal(_))
    ));
    assert!(matches!(
        flow.step(&mut host, Event::Committed),
        Step::Fail(SaveFailure::Internal(_))
    ));
}

#[test]
fn a_clone_failure_names_the_first_inserted_message_of_the_record() {
    let mut host = Fake::new(&[user(1)], &[user(1), user(2), user(3)]);
    let mut flow = SaveFlow::new("s", 3, false, None, 200.0);
    let cached = Some(host.base(1.0));
    start(&mut flow, &mut host, cached, true);
    assert_eq!(
        flow.put_failure("DataCloneError", "no", 2).as_deref(),
        Some("messages[2] cannot be stored: no")
    );
    assert_eq!(flow.put_failure("UnknownError", "no", 2), None);
}

#[test]
fn a_session_written_whole_holds_its_context_pins_and_preview() {
    let pinned = Msg {
        pinned: true,
        ..user(2)
    };
    let mut messages = New(vec![
        user(1),
        pinned,
        msg(3, Role::CompactionSummary),
        user(4),
    ]);
    let c = contents(&mut messages).unwrap();
    assert_eq!(c.message_count, 4);
    assert_eq!(c.last_summary, Some(2));
    assert_eq!(c.pinned, vec![1]);
    assert_eq!(c.preview, "hello there");
    assert_eq!(preview_of(&mut messages, 4), "hel…");
    let marks = Marks {
        pinned: vec![1],
        markers: vec![],
    };
    let expected = context_tokens(4, Some(2), &marks, |from, to| {
        Ok::<_, InputError>(
            messages.0[from..to]
                .iter()
                .map(|m| MessageFacts::from_raw(&raw(m)))
                .collect(),
        )
    });
    assert_eq!(c.context_tokens, expected.unwrap());
    assert!(c.context_tokens > 0.0);
}

#[test]
fn a_reply_that_reports_no_usage_is_estimated_in_the_sessions_context_as_the_compactor_does() {
    // pi-ai leaves zeros in the usage of a provider that reports none: the
    // session's contextTokens is then the estimate of its messages, as the
    // Compactor's, not 0.
    let reply = |id, input: f64| Msg {
        usage: Some(UsageNumbers {
            input,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total_tokens: input,
        }),
        ..msg(id, Role::Assistant)
    };
    let estimated = contents(&mut New(vec![user(1), msg(2, Role::Assistant)]))
        .unwrap()
        .context_tokens;
    assert!(estimated > 0.0);
    let zeros = contents(&mut New(vec![user(1), reply(2, 0.0)])).unwrap();
    assert_eq!(zeros.context_tokens, estimated);
    // A usage that is reported counts, as before.
    let reported = contents(&mut New(vec![user(1), reply(2, 5_000.0), user(3)])).unwrap();
    assert_eq!(reported.context_tokens, 5_000.0 + estimated / 2.0);
}

/// The store's books (`known::Sessions`) as the binding keeps them, a copy
/// being the base a save would diff against.
#[derive(Clone, Debug, PartialEq)]
struct Copy(Base);

impl crate::storage::known::Known for Copy {
    fn view(&self) -> &View {
        &self.0.view
    }
}

type Books = crate::storage::known::Sessions<Copy>;

/// One save of `host.new` to session "s" as `storage/save.rs` drives it,
/// the session stored at revision `stored` (`None`: no session) with
/// `host.base`'s messages when the records are read; the books kept as
/// the binding keeps them. The step the save ends with.
fn save_through(books: &mut Books, host: &mut Fake, stored: Option<f64>, replace: bool) -> Step {
    let mut flow = SaveFlow::new("s", host.new.0.len(), replace, None, 200.0);
    let cached = books.get("s").map(|c| c.0);
    let mut step = start(&mut flow, host, cached, true);
    if step == Step::ReadStored {
        let Some(revision) = stored else {
            // Reading the records finds no session: SessionNotFoundError.
            return step;
        };
        let seen = books.seen("s");
        let base = host.base(revision);
        step = flow.step(host, Event::Stored { base, seen });
    }
    if matches!(step, Step::Write(_) | Step::ReadRecord) {
        let read = Event::Record {
            revision: stored,
            last_modified: Some(100.0),
            fields: None,
        };
        step = flow.step(host, read);
    }
    if let Step::Commit(_) = step {
        step = flow.step(host, Event::Committed);
    }
    match &step {
        Step::Saved(view) => {
            let len = host.new.0.len();
            let base = Base {
                view: view.clone(),
                len,
                keys: len,
                last_modified: Some(200.0),
            };
            books.remember("s", Copy(base));
        }
        Step::Fail(SaveFailure::Store {
            stale: Some(seen), ..
        }) => books.stale("s", *seen),
        _ => {}
    }
    step
}

fn failure_name(step: &Step) -> &'static str {
    match step {
        Step::Fail(SaveFailure::Store { error, .. }) => error.name(),
        Step::Saved(_) => "saved",
        _ => "other",
    }
}

#[test]
fn a_save_from_a_stale_copy_is_refused_however_often_it_is_tried_until_loaded_again() {
    // This store loaded [1, 2, 3] at revision 1; another saved revision 2
    // (a fourth message) without this store hearing of it yet.
    let loaded = [user(1), user(2), user(3)];
    let stored_now = [user(11), user(12), user(13), user(14)];
    for replace in [true, false] {
        let mut books = Books::default();
        let mut host = Fake::new(&loaded, &[]);
        books.remember("s", Copy(host.base(1.0)));
        // With replace: an undo made from the stale copy; without: a turn.
        host.new = New(match replace {
            true => vec![user(1), user(2)],
            false => vec![user(1), user(2), user(3), user(5)],
        });
        let first = save_through(&mut books, &mut host, Some(2.0), replace);
        assert_eq!(failure_name(&first), "ConflictError");
        // Tried again with the same array: the records are read (equal by
        // value to the array's start), and it is still from revision 1.
        host.base = stored_now.to_vec();
        for _ in 0..3 {
            let again = save_through(&mut books, &mut host, Some(2.0), replace);
            assert_eq!(failure_name(&again), "ConflictError", "replace: {replace}");
        }
        // Loaded again: a save from the new copy lands.
        let mut host = Fake::new(&stored_now, &[]);
        books.remember("s", Copy(host.base(2.0)));
        host.new = New([&stored_now[..], &[user(5)]].concat());
        let saved = save_through(&mut books, &mut host, Some(2.0), replace);
        assert_eq!(failure_name(&saved), "saved");
    }
}

#[test]
fn a_copy_of_a_deleted_session_is_no_base_for_a_session_created_again_under_its_id() {
    use crate::storage::changes::heard;
    let loaded = [user(1), user(2), user(3)];
    let mut books = Books::default();
    let mut host = Fake::new(&loaded, &[]);
    books.remember("s", Copy(host.base(1.0)));
    // Another store deletes it and creates "s" again: empty, revision 0.
    heard(&mut books, "deleted", "s", None);
    heard(&mut books, "created", "s", Some(0.0));
    host.base = Vec::new();
    host.new = New(vec![user(1), user(2), user(3), user(4)]);
    for _ in 0..2 {
        let step = save_through(&mut books, &mut host, Some(0.0), false);
        let (error, _) = store_failure(step);
        assert_eq!(error.name(), "ConflictError");
        assert!(error.to_string().contains("was deleted since"), "{error}");
    }
    // Nor once the new session reached the copy's revision.
    let step = save_through(&mut books, &mut host, Some(1.0), true);
    assert_eq!(failure_name(&step), "ConflictError");
    // This store's own createSession (or a load) of the id: saves land.
    let mut host = Fake::new(&[], &[user(7)]);
    books.remember("s", Copy(host.base(0.0)));
    let step = save_through(&mut books, &mut host, Some(0.0), false);
    assert_eq!(failure_name(&step), "saved");
}

#[test]
fn a_save_that_finds_its_session_gone_leaves_it_deleted_for_its_copy() {
    // Deleted elsewhere before this store heard of it.
    let mut books = Books::default();
    let mut host = Fake::new(&[user(1)], &[user(1), user(2)]);
    books.remember("s", Copy(host.base(3.0)));
    let step = save_through(&mut books, &mut host, None, false);
    assert_eq!(failure_name(&step), "SessionNotFoundError");
    assert_eq!(books.seen("s"), Some(Seen::Deleted));
    // Created again elsewhere, at any revision: the copy is refused.
    host.base = Vec::new();
    let step = save_through(&mut books, &mut host, Some(3.0), false);
    assert_eq!(failure_name(&step), "ConflictError");
}
