//! Tests of the save flow's decisions: the base, conflicts, refused drops,
//! the no-op save, what a save writes, a retry's landed commit, the repair's
//! touched records and the error texts.

use super::*;
use crate::message::role::Role;
use crate::storage::packing::{PackPut, SMALL};
use std::rc::Rc;

fn edit(inserted: &[usize], removed: &[usize]) -> Edit {
    Edit {
        inserted: inserted.to_vec(),
        removed: removed.to_vec(),
    }
}

fn view(revision: f64, offset: u32) -> View {
    View {
        revision,
        offset,
        ..View::default()
    }
}

fn saving(len: usize, last_summary: Option<usize>) -> Saving {
    Saving {
        len,
        last_summary,
        inserts_summary: false,
        context_tokens: 12.0,
        preview: "hi".into(),
        last_modified: Some(100.0),
        now: 200.0,
    }
}

#[test]
fn the_cached_copy_is_the_base_unless_a_context_copy_does_not_start_the_array() {
    assert!(use_cached(0, 0, false));
    assert!(use_cached(0, 5, false));
    // A loadContext copy: only when the array starts with its first object.
    assert!(use_cached(3, 5, true));
    assert!(!use_cached(3, 5, false));
    assert!(!use_cached(3, 0, true));
}

#[test]
fn reading_the_records_after_another_stores_change_is_a_conflict_unless_unchanged() {
    let at = |r| Some(Seen::Revision(r));
    assert_eq!(check_outdated("s", 4.0, None), Ok(()));
    assert_eq!(check_outdated("s", 4.0, at(4.0)), Ok(()));
    let e = check_outdated("s", 5.0, at(4.0)).unwrap_err();
    assert_eq!(e, conflict("s", 5.0, 4.0));
    assert_eq!(e.name(), "ConflictError");
    assert!(e.to_string().starts_with(
        "SessionStore.save: session \"s\" was saved elsewhere (now at revision 5) since this store read it at revision 4"
    ));
    // A session deleted since: whatever is stored under its id, at any
    // revision, is another session.
    for stored in [0.0, 4.0] {
        let e = check_outdated("s", stored, Some(Seen::Deleted)).unwrap_err();
        assert_eq!(e.name(), "ConflictError");
    }
    // What a refused save leaves for the next try.
    let gone = after_read("s", 3.0, None, None).unwrap_err();
    assert_eq!(stale_seen(&gone, 3.0), Seen::Deleted);
    assert_eq!(
        stale_seen(&conflict("s", 5.0, 3.0), 3.0),
        Seen::Revision(3.0)
    );
}

#[test]
fn a_fork_from_a_view_another_store_changed_since_is_a_conflict() {
    const FORK: &str = "SessionStore.fork";
    // Never read by this store, or read at the stored revision: the fork goes on.
    assert_eq!(check_seen(FORK, "s", 4.0, None), Ok(()));
    assert_eq!(
        check_seen(FORK, "s", 4.0, Some(Seen::Revision(4.0))),
        Ok(())
    );
    // Another tab compacted since (revision 5): its atIndex would count
    // other messages.
    let e = check_seen(FORK, "s", 5.0, Some(Seen::Revision(4.0))).unwrap_err();
    assert_eq!(e.name(), "ConflictError");
    assert!(e.to_string().starts_with(
        "SessionStore.fork: session \"s\" was saved elsewhere (now at revision 5) since this store read it at revision 4"
    ));
    let e = check_seen(FORK, "s", 0.0, Some(Seen::Deleted)).unwrap_err();
    assert_eq!(e.name(), "ConflictError");
    assert!(e
        .to_string()
        .starts_with("SessionStore.fork: session \"s\" was deleted"));
}

#[test]
fn only_trailing_failed_attempts_are_removals_allowed_without_replace() {
    let failed = |k: usize| k >= 3;
    assert!(removals_allowed(&edit(&[5], &[]), 5, |_| false));
    assert!(removals_allowed(&edit(&[], &[3, 4]), 5, failed));
    // Not trailing, or not failed.
    assert!(!removals_allowed(&edit(&[], &[2]), 5, failed));
    assert!(!removals_allowed(&edit(&[], &[4]), 5, |_| false));
}

#[test]
fn compare_by_value_only_for_a_whole_cached_copy_with_a_refused_removal() {
    assert!(compare_by_value(true, &view(1.0, 0), false));
    assert!(!compare_by_value(true, &view(1.0, 0), true));
    assert!(!compare_by_value(false, &view(1.0, 0), false));
    assert!(!compare_by_value(true, &view(1.0, 2), false));
}

#[test]
fn drops_are_refused_without_replace() {
    let none = |_: usize| false;
    // Appends and replace pass.
    assert_eq!(
        refuse_drops(false, &view(1.0, 0), &edit(&[3], &[]), 3, none),
        Ok(())
    );
    assert_eq!(
        refuse_drops(true, &view(1.0, 0), &edit(&[], &[0, 1]), 3, none),
        Ok(())
    );
    assert_eq!(
        refuse_drops(true, &view(1.0, 7), &edit(&[], &[]), 3, none),
        Ok(())
    );
    // Trailing failed attempts pass.
    assert_eq!(
        refuse_drops(false, &view(1.0, 0), &edit(&[], &[2]), 3, |k| k == 2),
        Ok(())
    );
    // A loadContext array: whatever the edit.
    let e = refuse_drops(false, &view(1.0, 7), &edit(&[3], &[]), 3, none).unwrap_err();
    assert_eq!(e.name(), "RefusedDropError");
    assert_eq!(
        e,
        StoreError::RefusedDrop {
            action: ACTION,
            why: DropRefusal::BeforeContext { offset: 7 }
        }
    );
    assert!(e
        .to_string()
        .contains("would drop the 7 messages before it"));
    // Not failed attempts: the count and the first.
    let e = refuse_drops(false, &view(1.0, 0), &edit(&[], &[1, 2]), 3, none).unwrap_err();
    assert_eq!(
        e,
        StoreError::RefusedDrop {
            action: ACTION,
            why: DropRefusal::NotFailedAttempts { count: 2, first: 1 }
        }
    );
    assert!(e.to_string().contains("pass { replace: true }"));
}

#[test]
fn the_same_messages_of_a_whole_copy_write_nothing() {
    assert!(unchanged(&edit(&[], &[]), &view(1.0, 0)));
    assert!(!unchanged(&edit(&[2], &[]), &view(1.0, 0)));
    assert!(!unchanged(&edit(&[], &[0]), &view(1.0, 0)));
    // A loadContext copy saved as is still goes on (to be refused or to
    // delete what is before it with replace).
    assert!(!unchanged(&edit(&[], &[]), &view(1.0, 2)));
}

#[test]
fn after_read_writes_reports_a_landed_retry_or_fails() {
    let wrote = SaveFields {
        last_modified: 200.0,
        message_count: 2,
        context_tokens: 12.0,
        preview: "hi".into(),
        revision: 4.0,
        context_slot: 0,
    };
    let ours = Some(&wrote);
    assert_eq!(
        after_read("s", 3.0, Some((3.0, None)), None),
        Ok(Landed::No)
    );
    assert_eq!(
        after_read("s", 3.0, Some((3.0, None)), ours),
        Ok(Landed::No)
    );
    assert_eq!(
        after_read("s", 3.0, Some((4.0, ours)), ours),
        Ok(Landed::Yes)
    );
    // One ahead on a first attempt is someone else's save.
    assert_eq!(
        after_read("s", 3.0, Some((4.0, ours)), None),
        Err(conflict("s", 4.0, 3.0))
    );
    // And so on a second one, where it is not what the first one wrote
    // (another page's save, without Web Locks).
    let theirs = SaveFields {
        last_modified: 201.0,
        ..wrote.clone()
    };
    assert_eq!(
        after_read("s", 3.0, Some((4.0, Some(&theirs))), ours),
        Err(conflict("s", 4.0, 3.0))
    );
    assert_eq!(
        after_read("s", 3.0, Some((6.0, None)), ours),
        Err(conflict("s", 6.0, 3.0))
    );
    let gone = after_read("s", 3.0, None, ours).unwrap_err();
    assert_eq!(gone.name(), "SessionNotFoundError");
    assert_eq!(
        gone.to_string(),
        "SessionStore.save: there is no session \"s\" in this store"
    );
}

#[test]
fn unstorable_messages_are_named_with_the_path() {
    assert_eq!(
        unstorable("messages[3]", ".details.f", "is a function"),
        "messages[3].details.f is a function: a message must be plain data to be stored"
    );
    assert_eq!(
        unstorable("SessionStore.fork: options.summary", "", "is an array, not a message object"),
        "SessionStore.fork: options.summary is an array, not a message object: a message must be plain data to be stored"
    );
}

#[test]
fn an_append_writes_the_new_records_and_the_fields() {
    let w = plan_writes(&view(4.0, 0), 3, 3, &edit(&[3, 4], &[]), saving(5, None));
    assert_eq!(w.layout.singles, vec![3, 4]);
    assert_eq!((w.puts, w.deletes), (2, 0));
    assert!(w.touched.is_empty() && !w.delete_before);
    assert_eq!(w.durability, Durability::Default);
    assert_eq!(
        w.fields,
        SaveFields {
            last_modified: 200.0,
            message_count: 5,
            context_tokens: 12.0,
            preview: "hi".into(),
            revision: 5.0,
            context_slot: 0,
        }
    );
    // lastModified never goes back.
    let mut s = saving(5, None);
    s.last_modified = Some(900.0);
    assert_eq!(
        plan_writes(&view(4.0, 0), 3, 3, &edit(&[3, 4], &[]), s)
            .fields
            .last_modified,
        900.0
    );
}

#[test]
fn a_summary_makes_the_transaction_strict_and_sets_the_context_slot() {
    let mut s = saving(6, Some(2));
    s.inserts_summary = true;
    let w = plan_writes(&view(0.0, 0), 5, 5, &edit(&[2], &[]), s);
    assert_eq!(w.durability, Durability::Strict);
    assert_eq!(w.fields.context_slot, 0);
    assert_eq!(w.fields.revision, 1.0);
}

#[test]
fn a_pack_rewritten_under_its_key_is_touched_for_the_repair() {
    // 40 messages: one small pack then loose ones; a summary inserted
    // inside the pack rewrites it (split where the context starts).
    let v = View {
        revision: 2.0,
        packs: Rc::new(vec![(0, SMALL)]),
        ..View::default()
    };
    let w = plan_writes(&v, 40, 40, &edit(&[10], &[]), saving(41, Some(10)));
    assert!(w
        .layout
        .pack_puts
        .iter()
        .any(|p: &PackPut| p.key == KeyOf::Old(0)));
    assert!(w.touched.contains(&0));
    assert_eq!(w.puts, w.layout.pack_puts.len() + w.layout.singles.len());
    // Where the context starts begins a record.
    assert_eq!(w.fields.context_slot, 0);
}

#[test]
fn removals_touch_the_deleted_records_and_ranges() {
    let w = plan_writes(&view(2.0, 0), 5, 5, &edit(&[], &[3, 4]), saving(3, None));
    let mut touched = w.touched.clone();
    touched.sort();
    assert_eq!(touched, vec![3, 4]);
    assert_eq!(w.deletes, 2);
    // A context copy saved with replace deletes what is before it.
    let w = plan_writes(&view(2.0, 4), 2, 2, &edit(&[2], &[]), saving(3, None));
    assert!(w.delete_before);
    let w = plan_writes(&view(2.0, 4), 0, 0, &edit(&[0], &[]), saving(1, None));
    assert!(!w.delete_before);
}

#[test]
fn folding_loose_messages_into_a_pack_touches_each_of_them() {
    // SMALL + LOOSE - 1 loose messages, one more: the oldest SMALL fold.
    let n = SMALL + packing::LOOSE - 1;
    let w = plan_writes(&view(1.0, 0), n, n, &edit(&[n], &[]), saving(n + 1, None));
    let mut touched = w.touched.clone();
    touched.sort();
    touched.dedup();
    assert_eq!(touched, (0..SMALL).collect::<Vec<_>>());
}

#[test]
fn the_fields_are_refreshed_only_when_the_stored_record_moved_ahead() {
    let f = plan_writes(&view(1.0, 0), 0, 0, &edit(&[0], &[]), saving(1, None)).fields;
    assert_eq!(refreshed(&f, Some(150.0), 200.0), None);
    assert_eq!(refreshed(&f, None, 200.0), None);
    let r = refreshed(&f, Some(500.0), 200.0).unwrap();
    assert_eq!(r.last_modified, 500.0);
    assert_eq!(
        SaveFields {
            last_modified: 200.0,
            ..r
        },
        f
    );
}

#[test]
fn a_clone_failure_names_the_first_new_message_of_the_record() {
    assert_eq!(
        put_failure("DataCloneError", "could not be cloned", &[2, 5, 9], 4).as_deref(),
        Some("messages[5] cannot be stored: could not be cloned")
    );
    // None inserted from there: the record's first message.
    assert_eq!(
        put_failure("DataCloneError", "x", &[2], 4).as_deref(),
        Some("messages[4] cannot be stored: x")
    );
    assert_eq!(put_failure("QuotaExceededError", "full", &[2], 0), None);
    assert_eq!(
        whole_put_failure("SessionStore.fork", 3, "DataCloneError", "no").as_deref(),
        Some("SessionStore.fork: message 3 cannot be stored: no")
    );
    assert_eq!(
        whole_put_failure("SessionStore.fork", 3, "UnknownError", "no"),
        None
    );
}

fn facts(role: Role, tokens: u64, usage: Option<f64>, timestamp: f64) -> MessageFacts {
    MessageFacts::new(role, tokens, usage, timestamp)
}

#[test]
fn context_tokens_read_back_from_the_end_in_growing_chunks() {
    // 100 user messages of 10 tokens, one assistant usage of 500 at 90.
    let all: Vec<MessageFacts> = (0..100)
        .map(|i| match i {
            90 => facts(Role::Assistant, 7, Some(500.0), i as f64),
            _ => facts(Role::User, 10, None, i as f64),
        })
        .collect();
    let mut reads = Vec::new();
    let tokens = context_tokens(100, None, &Marks::default(), |from, to| {
        reads.push((from, to));
        Ok::<_, ()>(all[from..to].to_vec())
    });
    assert_eq!(tokens, Ok(500.0 + 9.0 * 10.0));
    assert_eq!(reads, vec![(96, 100), (88, 96)]);

    // No usage: everything from the start, in chunks up to 32.
    let users: Vec<MessageFacts> = (0..80)
        .map(|i| facts(Role::User, 1, None, i as f64))
        .collect();
    let mut reads = Vec::new();
    let tokens = context_tokens(80, None, &Marks::default(), |from, to| {
        reads.push((from, to));
        Ok::<_, ()>(users[from..to].to_vec())
    });
    assert_eq!(tokens, Ok(80.0));
    assert_eq!(reads, vec![(76, 80), (68, 76), (52, 68), (20, 52), (0, 20)]);
}

#[test]
fn usage_from_before_the_summary_is_stale() {
    // A summary at 2 (timestamp 50); the assistant at 4 reports usage from
    // a call made before it (timestamp 40): ignored, estimates summed.
    let all = vec![
        facts(Role::User, 5, None, 1.0),
        facts(Role::Assistant, 5, Some(900.0), 2.0),
        facts(Role::CompactionSummary, 30, None, 50.0),
        facts(Role::User, 5, None, 51.0),
        facts(Role::Assistant, 6, Some(700.0), 40.0),
    ];
    let read = |from: usize, to: usize| Ok::<_, ()>(all[from..to].to_vec());
    assert_eq!(
        context_tokens(5, Some(2), &Marks::default(), read),
        Ok(30.0 + 5.0 + 6.0)
    );
    // A fresh one counts, and nothing before the summary is read.
    let mut fresh = all.clone();
    fresh[4] = facts(Role::Assistant, 6, Some(700.0), 60.0);
    let mut lowest = usize::MAX;
    let tokens = context_tokens(5, Some(2), &Marks::default(), |from, to| {
        lowest = lowest.min(from);
        Ok::<_, ()>(fresh[from..to].to_vec())
    });
    assert_eq!((tokens, lowest), (Ok(700.0), 2));
    // A read that fails fails the count.
    assert_eq!(
        context_tokens(
            5,
            None,
            &Marks::default(),
            |_, _| Err::<Vec<MessageFacts>, _>("no")
        ),
        Err("no")
    );
    // An empty session.
    assert_eq!(
        context_tokens(0, None, &Marks::default(), |_, _| Ok::<_, ()>(Vec::new())),
        Ok(0.0)
    );
}

#[test]
fn re_sent_pinned_messages_count_until_usage_and_markers_free_until_usage() {
    // Pinned at 1 (8 tokens), a summary at 2 (timestamp 50), a marker at 4
    // that freed 100, the rest users of 5 tokens.
    let mut all = vec![
        facts(Role::User, 5, None, 1.0),
        facts(Role::User, 8, None, 2.0),
        facts(Role::CompactionSummary, 30, None, 50.0),
        facts(Role::User, 5, None, 51.0),
        MessageFacts::cleared(100, 52.0),
        facts(Role::User, 5, None, 53.0),
    ];
    let marks = Marks {
        pinned: vec![1],
        markers: vec![4],
    };
    let read = |all: &Vec<MessageFacts>| {
        let all = all.clone();
        move |from: usize, to: usize| Ok::<_, ()>(all[from..to].to_vec())
    };
    // No usage after the summary: summary, pinned and the rest, less what
    // the marker freed (never below 0).
    let estimated = 30.0 + 8.0 + 5.0 + 5.0;
    assert_eq!(
        context_tokens(6, Some(2), &Marks::default(), read(&all)),
        Ok(30.0 + 10.0)
    );
    assert_eq!(
        context_tokens(
            6,
            Some(2),
            &Marks {
                markers: vec![],
                ..marks.clone()
            },
            read(&all)
        ),
        Ok(estimated)
    );
    assert_eq!(context_tokens(6, Some(2), &marks, read(&all)), Ok(0.0));
    all[4] = MessageFacts::cleared(10, 52.0);
    assert_eq!(
        context_tokens(6, Some(2), &marks, read(&all)),
        Ok(estimated - 10.0)
    );
    // Usage reported after the marker saw the pinned messages and the
    // placeholders: it stands, plus what follows.
    all.push(facts(Role::Assistant, 6, Some(700.0), 60.0));
    all.push(facts(Role::User, 5, None, 61.0));
    assert_eq!(context_tokens(8, Some(2), &marks, read(&all)), Ok(705.0));
    // Usage reported before the marker (a clearing after the last answer):
    // what it freed comes off it.
    let mut before = all[..4].to_vec();
    before.push(facts(Role::Assistant, 6, Some(700.0), 51.5));
    before.push(MessageFacts::cleared(100, 62.0));
    assert_eq!(
        context_tokens(
            6,
            Some(2),
            &Marks {
                pinned: vec![1],
                markers: vec![5]
            },
            read(&before)
        ),
        Ok(600.0)
    );
    // A marker before the summary and a pinned message after it do not
    // count apart: the one is in the summarized part, the other where it is.
    let marks = Marks {
        pinned: vec![3],
        markers: vec![0],
    };
    let mut plain = all[..4].to_vec();
    plain[0] = MessageFacts::cleared(100, 1.0);
    assert_eq!(context_tokens(4, Some(2), &marks, read(&plain)), Ok(35.0));
}

#[test]
fn the_stored_count_decides_by_position_whatever_the_clocks() {
    // A summary that kept the user and assistant after it, a marker
    // appended after them, a reply after the marker; the app's clock runs
    // far behind the package's (summary and marker at `now`).
    let now = 1.8e12;
    let session = |t: f64| {
        vec![
            facts(Role::User, 5, None, t + 1.0),
            MessageFacts::summary(30, Some(2), now),
            facts(Role::User, 5, None, t + 2.0),
            facts(Role::Assistant, 6, Some(90_000.0), t + 3.0),
            MessageFacts::cleared(100, now + 1.0),
            facts(Role::User, 5, None, t + 4.0),
        ]
    };
    let marks = Marks {
        pinned: vec![],
        markers: vec![4],
    };
    let read =
        |all: Vec<MessageFacts>| move |from: usize, to: usize| Ok::<_, ()>(all[from..to].to_vec());
    for t in [0.0, now + 1e10, -now] {
        let mut all = session(t);
        // The kept assistant's usage is stale; the marker was made after
        // the summary, with no usage after it.
        assert_eq!(
            context_tokens(6, Some(1), &marks, read(all.clone())),
            Ok(0.0)
        );
        all[4] = MessageFacts::cleared(10, now + 1.0);
        assert_eq!(
            context_tokens(6, Some(1), &marks, read(all.clone())),
            Ok(30.0 + 5.0 + 6.0 + 5.0 - 10.0)
        );
        // A reply after the marker reports the context with the placeholders.
        all.push(facts(Role::Assistant, 6, Some(700.0), t + 5.0));
        assert_eq!(context_tokens(7, Some(1), &marks, read(all)), Ok(700.0));
    }
}

#[test]
fn pack_keys_come_from_old_keys_inserted_keys_or_between_two_records() {
    let put = |start, len, key| PackPut { start, len, key };
    let layout = Layout {
        pack_puts: vec![
            put(0, 4, KeyOf::Old(0)),
            put(4, 3, KeyOf::Inserted(4)),
            put(7, 2, KeyOf::Split),
            put(12, 3, KeyOf::Split),
        ],
        ..Layout::default()
    };
    assert_eq!(
        pack_keys(&layout, 15),
        vec![
            PackKey::Old(0),
            PackKey::Inserted(4),
            // Between the first part (keyed just before) and the next record.
            PackKey::Between {
                before: 6,
                after: Some(9)
            },
            // At the end of the session: nothing after.
            PackKey::Between {
                before: 11,
                after: None
            },
        ]
    );
    assert!(pack_keys(&Layout::default(), 3).is_empty());
}
