//! The tracker, edit by edit: brought in line incrementally it holds what a
//! fresh one holds for the same array, reading only what each kind of edit
//! needs; a failed sync starts over.

use super::*;
use crate::compaction::stall::Ended;
use crate::conversation::edit::scan::facts;
use crate::tokens::estimate::UsageNumbers;

/// A message by id: 100 and up are summaries, ids ending in 7 pinned user
/// messages, in 9 user messages, other odd ids assistant messages that
/// report usage, the rest tool results; timestamps follow the ids.
fn raw(id: u32) -> RawFacts {
    let mut r = RawFacts {
        timestamp: f64::from(id),
        content_string: Some(u64::from(id % 10 + 1) * 40),
        ..RawFacts::default()
    };
    if id >= 100 {
        r.role = Some(Role::CompactionSummary);
        r.summary = 400;
    } else if id % 10 == 7 {
        r.role = Some(Role::User);
        r.pinned = true;
    } else if id % 10 == 9 {
        r.role = Some(Role::User);
    } else if id % 2 == 1 {
        r.role = Some(Role::Assistant);
        r.usage = Some(UsageNumbers {
            input: f64::from(id) * 50.0,
            output: 20.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total_tokens: f64::from(id) * 50.0 + 20.0,
        });
    } else {
        r.role = Some(Role::ToolResult);
    }
    r
}

#[derive(Debug, PartialEq)]
enum Read {
    Facts { from: usize, to: usize, lazy: bool },
    Estimate(usize),
    Bounds(Vec<usize>),
    View(usize),
}

/// An array of message ids, with a log of what the tracker read.
struct Array {
    ids: Vec<u32>,
    log: Vec<Read>,
    /// Reading the facts of this index fails.
    unreadable: Option<usize>,
}

fn array(ids: &[u32]) -> Array {
    Array {
        ids: ids.to_vec(),
        log: Vec::new(),
        unreadable: None,
    }
}

fn unreadable() -> InputError {
    InputError::Unreadable {
        path: FieldPath::element("messages", 0),
        reason: "a getter threw".into(),
    }
}

impl Source for Array {
    fn message_count(&self) -> usize {
        self.ids.len()
    }

    fn facts(&mut self, from: usize, to: usize, lazy: bool) -> Result<Vec<RawFacts>, InputError> {
        self.log.push(Read::Facts { from, to, lazy });
        if self.unreadable.is_some_and(|u| (from..to).contains(&u)) {
            return Err(unreadable());
        }
        Ok(self.ids[from..to].iter().map(|&id| raw(id)).collect())
    }

    fn estimate(&mut self, index: usize) -> Result<u64, InputError> {
        self.log.push(Read::Estimate(index));
        Ok(u64::from(self.ids[index] % 10 + 1) * 10)
    }

    fn tight_bounds(&mut self, at: &[usize]) -> Result<Vec<u64>, InputError> {
        self.log.push(Read::Bounds(at.to_vec()));
        Ok(at
            .iter()
            .map(|&i| u64::from(self.ids[i] % 10 + 1) * 12)
            .collect())
    }

    fn view_fact(&mut self, index: usize) -> Result<Fact<Vec<u16>>, InputError> {
        self.log.push(Read::View(index));
        Ok(Fact::Message)
    }

    fn placeholder_estimate(&mut self, _: usize, _: usize) -> Result<u64, InputError> {
        Ok(0)
    }
}

/// What the shim's scan finds from `known` to `new`: an append without
/// facts, anything else with them.
fn scanned(known: &[u32], new: &[u32]) -> Result<Synced, InputError> {
    let f = facts(known, new);
    if f.prefix == known.len() {
        return Ok(Synced::Appended(known.len()));
    }
    let mut words = vec![f.prefix as i32];
    words.extend(&f.known_class);
    words.extend(&f.new_class);
    Synced::from_scan(known.len(), Some(&words), new.len())
}

/// A tracker brought in line with `ids` in one sync.
fn fresh(estimator: EstimatorChoice, ids: &[u32]) -> Tracker {
    let mut t = Tracker::new(estimator);
    t.sync(Ok(Synced::Appended(0)), &mut array(ids)).unwrap();
    t
}

/// `known`, then `new`, synced incrementally: the tracker equals a fresh
/// one on `new` in every fact and total; returns it and what the second
/// sync read.
fn resync(estimator: EstimatorChoice, known: &[u32], new: &[u32]) -> (Tracker, Vec<Read>) {
    let mut t = fresh(estimator, known);
    let mut a = array(new);
    t.sync(scanned(known, new), &mut a).unwrap();
    let mut want = fresh(estimator, new);
    assert_eq!(
        t.index().facts(),
        want.index().facts(),
        "{known:?} → {new:?}"
    );
    assert_eq!(t.view_head(), want.view_head());
    let tokens = t.context_tokens(&mut array(new)).unwrap();
    assert_eq!(tokens, want.context_tokens(&mut array(new)).unwrap());
    (t, a.log)
}

const BOTH: [EstimatorChoice; 2] = [EstimatorChoice::Pi, EstimatorChoice::Calibrated];

#[test]
fn a_turn_reads_only_the_new_messages_lazily() {
    for e in BOTH {
        let (t, log) = resync(e, &[1, 2, 3], &[1, 2, 3, 4, 5]);
        assert_eq!(t.generation(), 0);
        assert_eq!(
            log[0],
            Read::Facts {
                from: 3,
                to: 5,
                lazy: true
            }
        );
    }
}

#[test]
fn an_inserted_summary_reads_it_in_full_then_the_new_messages() {
    for e in BOTH {
        let (t, log) = resync(e, &[1, 2, 3, 4], &[1, 2, 100, 3, 4, 5]);
        assert_eq!(t.generation(), 1);
        assert_eq!(
            log[0],
            Read::Facts {
                from: 2,
                to: 3,
                lazy: false
            }
        );
        assert_eq!(
            log[1],
            Read::Facts {
                from: 5,
                to: 6,
                lazy: true
            }
        );
        assert_eq!(t.context_start(), 2);
    }
}

#[test]
fn removed_messages_are_taken_out_without_reading_the_rest() {
    for e in BOTH {
        let (t, log) = resync(e, &[1, 2, 3, 4, 5, 6], &[1, 3, 5, 6, 8]);
        assert_eq!(t.generation(), 1);
        assert_eq!(
            log[0],
            Read::Facts {
                from: 4,
                to: 5,
                lazy: true
            }
        );
    }
}

#[test]
fn a_message_replaced_in_place_is_read_alone() {
    for e in BOTH {
        let (t, log) = resync(e, &[1, 2, 3, 4, 5], &[1, 2, 9, 4, 5]);
        assert_eq!(t.generation(), 1);
        let from = |from, to, lazy| Read::Facts { from, to, lazy };
        assert_eq!(log[..2], [from(2, 3, false), from(5, 5, true)]);
        // Two, with a turn after them: each read, then the new ones.
        let (_, log) = resync(e, &[1, 2, 3, 4, 5], &[1, 8, 3, 9, 5, 6, 19]);
        assert_eq!(
            log[..3],
            [from(1, 2, false), from(3, 4, false), from(5, 7, true)]
        );
    }
}

#[test]
fn pinning_editing_or_unpinning_before_the_summary_by_replacing_the_object() {
    // 100 the summary; 7, 17, 27 pinned user messages, 9, 19 plain ones.
    let head = |t: &Tracker| t.view_head().map(|(s, r)| (s, r.to_vec()));
    for e in BOTH {
        // Pinned by a pinned copy, at any index before the summary.
        for at in 0..3 {
            let known = [9, 2, 19, 100, 4, 5];
            let mut new = known;
            new[at] = 7;
            let (t, log) = resync(e, &known, &new);
            assert_eq!(head(&t), Some((3, vec![at])));
            assert_eq!(
                log[0],
                Read::Facts {
                    from: at,
                    to: at + 1,
                    lazy: false
                }
            );
        }
        // A pinned rule edited (another pinned object), then unpinned.
        let (t, _) = resync(e, &[9, 17, 2, 100, 4], &[9, 27, 2, 100, 4, 6]);
        assert_eq!(head(&t), Some((3, vec![1])));
        let (t, _) = resync(e, &[9, 17, 2, 100, 4], &[9, 19, 2, 100, 4]);
        assert_eq!(head(&t), Some((3, vec![])));
        // The summary itself replaced (its text edited).
        let (t, _) = resync(e, &[9, 17, 2, 100, 4], &[9, 17, 2, 101, 4]);
        assert_eq!(head(&t), Some((3, vec![1])));
    }
}

#[test]
fn a_replaced_message_with_others_removed_reads_everything_from_it_on() {
    for e in BOTH {
        let (t, log) = resync(e, &[1, 2, 3, 4, 5], &[1, 2, 9, 5]);
        assert_eq!(t.generation(), 1);
        assert_eq!(
            log[0],
            Read::Facts {
                from: 2,
                to: 4,
                lazy: true
            }
        );
        // A cut back (a trailing failed attempt dropped) reads nothing.
        let (t, log) = resync(e, &[1, 2, 3, 4, 5], &[1, 2, 3]);
        assert_eq!(t.generation(), 1);
        assert_eq!(
            log[0],
            Read::Facts {
                from: 3,
                to: 3,
                lazy: true
            }
        );
    }
}

#[test]
fn an_edit_that_only_appends_is_a_turn_of_a_new_generation() {
    // The facts of an append found by a full scan (as when an edit was
    // expected): applied as a turn.
    let known = [1, 2, 3];
    let words = [3];
    let synced = Synced::from_scan(3, Some(&words), 5).unwrap();
    let mut t = fresh(EstimatorChoice::Pi, &known);
    let mut a = array(&[1, 2, 3, 4, 5]);
    t.sync(Ok(synced), &mut a).unwrap();
    assert_eq!(t.generation(), 1);
    assert_eq!(
        a.log[0],
        Read::Facts {
            from: 3,
            to: 5,
            lazy: true
        }
    );
    assert_eq!(
        t.index().facts(),
        fresh(EstimatorChoice::Pi, &a.ids).index().facts()
    );
}

#[test]
fn every_edit_of_small_arrays_gives_what_a_fresh_tracker_gives() {
    let arrays: [&[u32]; 12] = [
        &[],
        &[1],
        &[1, 2, 3, 4],
        &[1, 100, 3, 4],
        &[7, 1, 2, 100, 3, 4],
        &[7, 1, 2, 100, 3, 4, 17, 5, 101, 6],
        &[7, 1, 2, 4],
        &[2, 1, 4, 3],
        &[1, 2, 3, 4, 9, 8, 6, 5],
        &[7, 1, 17, 101, 3, 4],
        &[9, 1, 19, 100, 3, 4],
        &[7, 1, 27, 100, 3, 4, 17],
    ];
    for e in BOTH {
        for known in arrays {
            for new in arrays {
                resync(e, known, new);
            }
        }
    }
}

#[test]
fn the_view_head_is_the_last_summary_and_the_pinned_messages_before_it() {
    let t = fresh(EstimatorChoice::Calibrated, &[7, 1, 2, 17, 100, 3, 4]);
    assert_eq!(t.view_head(), Some((4, &[0, 3][..])));
    assert_eq!(t.view_len(7), 5);
    let t = fresh(EstimatorChoice::Calibrated, &[7, 1, 2]);
    assert_eq!(t.view_head(), None);
    assert_eq!(t.view_len(3), 3);
    assert!(!t.ends_with_summary());
    assert!(fresh(EstimatorChoice::Pi, &[1, 2, 100]).ends_with_summary());
}

#[test]
fn a_failed_sync_starts_over_in_a_new_generation() {
    for e in BOTH {
        let known = [1, 2, 3, 4];
        // The scan failed (a getter threw in it).
        let mut t = fresh(e, &known);
        assert!(t.sync(Err(unreadable()), &mut array(&known)).is_err());
        assert_eq!(t.generation(), 1);
        assert!(t.index().is_empty());
        // Reading the new messages failed.
        let mut t = fresh(e, &known);
        let mut a = array(&[1, 2, 3, 4, 5, 6]);
        a.unreadable = Some(5);
        assert!(t.sync(scanned(&known, &a.ids.clone()), &mut a).is_err());
        assert_eq!(t.generation(), 1);
        assert!(t.index().is_empty());
        // Reading an inserted summary failed.
        let mut t = fresh(e, &known);
        let new = [1, 100, 2, 3, 4];
        let mut a = array(&new);
        a.unreadable = Some(1);
        assert!(t.sync(scanned(&known, &new), &mut a).is_err());
        assert!(t.generation() > 0 && t.index().is_empty());
        assert_eq!(t.estimator(), e);
        // Next time everything is read, as a fresh tracker would.
        t.sync(Ok(Synced::Appended(0)), &mut array(&new)).unwrap();
        assert_eq!(t.index().facts(), fresh(e, &new).index().facts());
    }
}

#[test]
fn a_scan_stopped_at_an_element_that_is_no_object_edits_up_to_it_and_reads_it_as_new() {
    // Known [1 2 3]; the new array [9, (a hole), ...] whose scan stopped at
    // the hole: classes of the known three, and of 9 alone.
    let synced = Synced::from_scan(3, Some(&[0, 0, 1, 2, -1]), 1_000).unwrap();
    let Synced::Edited {
        ref edit,
        known_len,
    } = synced
    else {
        panic!("an edit: {synced:?}");
    };
    assert_eq!(
        (&edit.inserted[..], &edit.removed[..]),
        (&[0][..], &[0, 1, 2][..])
    );
    assert_eq!(edit.change(known_len), Change::Replaced { at: 0 });
    // The messages from the hole on are read as new: the first read of
    // them reports it, and the tracker starts over.
    let mut t = fresh(EstimatorChoice::Pi, &[1, 2, 3]);
    let mut a = array(&[9; 1_000]);
    a.unreadable = Some(1);
    assert_eq!(t.sync(Ok(synced), &mut a), Err(unreadable()));
    assert_eq!(
        a.log,
        vec![Read::Facts {
            from: 0,
            to: 1_000,
            lazy: true
        }]
    );
    assert!(t.index().facts().is_empty());
    // A full scan's words are read as they are.
    let full = Synced::from_scan(2, Some(&[0, 0, 1, -1, -1, -1]), 3).unwrap();
    let Synced::Edited { edit, .. } = full else {
        panic!("an edit");
    };
    assert_eq!(edit.inserted, vec![0, 1, 2]);
}

#[test]
fn identity_facts_that_do_not_add_up_are_an_error_naming_the_messages() {
    assert_eq!(Synced::from_scan(3, None, 5), Ok(Synced::Appended(3)));
    // A class out of range.
    let e = Synced::from_scan(2, Some(&[0, 5, 0, 0, 1]), 3).unwrap_err();
    assert!(
        e.to_string().starts_with("messages could not be read"),
        "{e}"
    );
    // A prefix longer than the arrays.
    assert!(Synced::from_scan(2, Some(&[4]), 3).is_err());
}

#[test]
fn the_threshold_is_decided_on_the_bounds_and_measured_only_when_open() {
    let settings = |enabled, reserve_tokens| CompactionSettings {
        enabled,
        reserve_tokens,
        keep_recent_tokens: 10,
    };
    // Tool results only: no usage, every estimate pending.
    let ids = [2, 4, 6, 8, 10, 12];
    let mut t = fresh(EstimatorChoice::Calibrated, &ids);
    let mut a = array(&ids);
    // Disabled: never, and nothing read.
    assert!(!t
        .threshold_exceeded(&settings(false, 0), 1.0, &mut a)
        .unwrap());
    assert!(a.log.is_empty());
    // Far above the bounds: nothing read either.
    assert!(!t
        .threshold_exceeded(&settings(true, 0), 1e9, &mut a)
        .unwrap());
    assert!(a.log.is_empty());
    // Far below the real tokens: exceeded, whatever it reads.
    assert!(t
        .threshold_exceeded(&settings(true, 100), 101.0, &mut a)
        .unwrap());
    // Exactly at the real total (estimates 30+50+70+90+10+30 = 280): not
    // over it, and once the bounds are tightened and measured, the same
    // answer as the exact count.
    let mut t = fresh(EstimatorChoice::Calibrated, &ids);
    let mut a = array(&ids);
    assert!(!t
        .threshold_exceeded(&settings(true, 20), 300.0, &mut a)
        .unwrap());
    assert!(a.log.iter().any(|r| matches!(r, Read::Bounds(_))));
    assert!(t
        .threshold_exceeded(&settings(true, 21), 300.0, &mut a)
        .unwrap());
    assert_eq!(t.context_tokens(&mut a).unwrap().tokens, 280.0);
    assert_eq!(threshold(&settings(true, 21), 300.0), 279.0);
    // A fraction of the threshold (the background start): 280 tokens are
    // over 0.8 × 340 = 272, not over 0.8 × 360 = 288.
    assert!(t.exceeds(&settings(true, 60), 400.0, 0.8, &mut a).unwrap());
    assert!(!t.exceeds(&settings(true, 40), 400.0, 0.8, &mut a).unwrap());
    assert!(!t.exceeds(&settings(false, 60), 400.0, 0.8, &mut a).unwrap());
}

#[test]
fn filling_the_context_measures_every_pending_estimate_after_the_summary() {
    let ids = [2, 4, 100, 6, 8];
    let mut t = fresh(EstimatorChoice::Calibrated, &ids);
    let mut a = array(&ids);
    assert_eq!(t.fill_context(&mut a).unwrap(), 1.0);
    assert!(a.log.contains(&Read::Estimate(3)) && a.log.contains(&Read::Estimate(4)));
    assert!(!a.log.contains(&Read::Estimate(0)));
    assert!(t.index().facts()[3..].iter().all(|f| !f.tokens_pending()));
}

#[test]
fn survivors_are_the_pinned_messages_before_the_cut_and_the_latest_request() {
    let ids = [7, 17, 1, 19, 3, 4];
    let mut t = fresh(EstimatorChoice::Calibrated, &ids);
    let mut a = array(&ids);
    let s = t
        .survivors(4, 99, &mut a, |i| Ok(format!("request {i}")))
        .unwrap();
    assert_eq!(s.resent.len(), 2);
    assert!(s.resent.iter().all(|f| f.pinned() && !f.tokens_pending()));
    assert_eq!(s.budget_chars, 99);
    assert_eq!(s.latest_request.as_deref(), Some("request 3"));
    // A cut before the request: it is kept, not quoted.
    let s = t.survivors(3, 99, &mut a, |_| -> Result<String, _> {
        panic!("the request is kept")
    });
    assert!(s.unwrap().latest_request.is_none());
    // No summary: nothing is re-sent.
    assert_eq!(t.resent_tokens(&mut a).unwrap(), 0);
    // After a summary the pinned ones before it count while no usage is
    // fresh.
    let ids = [7, 2, 17, 100, 4];
    let mut t = fresh(EstimatorChoice::Calibrated, &ids);
    assert_eq!(t.resent_tokens(&mut array(&ids)).unwrap(), 80 + 80);
}

#[test]
fn the_clearing_tier_copies_the_measured_context_from_the_last_summary() {
    let ids = [2, 4, 100, 6, 9, 8];
    let mut t = fresh(EstimatorChoice::Calibrated, &ids);
    let mut a = array(&ids);
    let settings = CompactionSettings {
        reserve_tokens: 50,
        ..CompactionSettings::default()
    };
    let clearing = ClearingSettings {
        protect_turns: 0,
        ..ClearingSettings::default()
    };
    let tier = t
        .clearing_tier(&settings, 300.0, &clearing, &mut a)
        .unwrap();
    // Every estimate after the summary measured first, nothing before it.
    assert!(a.log.contains(&Read::Estimate(5)));
    assert!(!a.log.contains(&Read::Estimate(0)));
    assert_eq!(tier.start, 2);
    assert_eq!(
        tier.roles,
        [
            Role::CompactionSummary,
            Role::ToolResult,
            Role::User,
            Role::ToolResult
        ]
    );
    let facts = &t.index().facts()[2..];
    let tokens: Vec<u64> = facts.iter().map(|f| u64::from(f.tokens)).collect();
    assert_eq!(tier.tokens, tokens);
    assert!(facts.iter().all(|f| !f.tokens_pending()));
    assert_eq!(
        tier.context_tokens,
        t.context_tokens(&mut a).unwrap().tokens
    );
    assert_eq!(tier.threshold, 250.0);
    assert_eq!(tier.ratio, t.index().ratio());
    assert_eq!(tier.settings, clearing);
}

#[test]
fn a_stalled_threshold_waits_for_growth_an_edit_or_a_new_window() {
    // Estimates 30 + 50 + 70 + 90 = 240, over a threshold of 200.
    let ids = [2, 4, 6, 8];
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 0,
        keep_recent_tokens: 10,
    };
    let over = |t: &mut Tracker, ids: &[u32]| {
        t.threshold_exceeded(&settings, 200.0, &mut array(ids))
            .unwrap()
    };
    let mut t = fresh(EstimatorChoice::Pi, &ids);
    assert!(over(&mut t, &ids));
    assert_eq!(
        t.compaction_ended(Reason::Threshold, Ended::Unchanged(240.0)),
        Some(252.0)
    );
    assert!(!over(&mut t, &ids), "quiet at the same context");
    // Grown by 10 (250): still within 5 %; by 30 more (280): over it.
    let grown = [2, 4, 6, 8, 10];
    t.sync(scanned(&ids, &grown), &mut array(&grown)).unwrap();
    assert!(!over(&mut t, &grown));
    let more = [2, 4, 6, 8, 10, 12];
    t.sync(scanned(&grown, &more), &mut array(&more)).unwrap();
    assert!(over(&mut t, &more));

    // An edit that is not the conversation grown (the last message
    // replaced, as an undo would) ends the hold.
    let mut t = fresh(EstimatorChoice::Pi, &ids);
    t.compaction_ended(Reason::Threshold, Ended::Unchanged(240.0));
    let replaced = [2, 4, 6, 18];
    t.sync(scanned(&ids, &replaced), &mut array(&replaced))
        .unwrap();
    assert!(over(&mut t, &replaced));

    // So does a new model or window.
    let mut t = fresh(EstimatorChoice::Pi, &ids);
    t.compaction_ended(Reason::Threshold, Ended::Unchanged(240.0));
    t.release_stall();
    assert!(over(&mut t, &ids));
}

/// Messages with the view facts a clearing needs: `(facts, fact)`.
struct Cleared {
    messages: Vec<(RawFacts, Fact<Vec<u16>>)>,
    placeholders: usize,
}

impl Source for Cleared {
    fn message_count(&self) -> usize {
        self.messages.len()
    }

    fn facts(&mut self, from: usize, to: usize, _: bool) -> Result<Vec<RawFacts>, InputError> {
        Ok(self.messages[from..to].iter().map(|m| m.0).collect())
    }

    fn estimate(&mut self, index: usize) -> Result<u64, InputError> {
        Ok(crate::tokens::estimate::estimate_tokens(
            &self.messages[index].0,
        ))
    }

    fn tight_bounds(&mut self, _: &[usize]) -> Result<Vec<u64>, InputError> {
        Ok(Vec::new())
    }

    fn view_fact(&mut self, index: usize) -> Result<Fact<Vec<u16>>, InputError> {
        Ok(self.messages[index].1.clone())
    }

    fn placeholder_estimate(&mut self, _: usize, _: usize) -> Result<u64, InputError> {
        self.placeholders += 1;
        Ok(5)
    }
}

#[test]
fn outputs_a_summary_kept_that_a_kept_marker_clears_count_as_their_placeholders() {
    let id = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    let text = |role, chars| RawFacts {
        role: Some(role),
        content_string: Some(chars),
        ..RawFacts::default()
    };
    let result = |name: &str| {
        (
            text(Role::ToolResult, 4_000),
            Fact::ToolResult(Some(id(name))),
        )
    };
    let plain = |role, chars| (text(role, chars), Fact::Message);
    let marker = (
        RawFacts {
            role: Some(Role::ToolOutputCleared),
            tokens_freed: 2 * 995,
            ..RawFacts::default()
        },
        Fact::Marker(vec![id("a"), id("b")]),
    );
    let summary = (
        RawFacts {
            role: Some(Role::CompactionSummary),
            summary: 400,
            kept_messages: Some(3),
            ..RawFacts::default()
        },
        Fact::Message,
    );
    // A clearing of `a` and `b`, then a summary that hid `a` and kept `b`
    // and the marker.
    let before = vec![
        plain(Role::User, 40),
        result("a"),
        result("b"),
        plain(Role::User, 40),
        marker.clone(),
    ];
    let mut after = before.clone();
    after.insert(2, summary);
    for estimator in [EstimatorChoice::Pi, EstimatorChoice::Calibrated] {
        let mut a = Cleared {
            messages: before.clone(),
            placeholders: 0,
        };
        let mut t = Tracker::new(estimator);
        t.sync(Ok(Synced::Appended(0)), &mut a).unwrap();
        // The marker made after any summary: what it freed comes off.
        assert_eq!(t.context_tokens(&mut a).unwrap().tokens, 2_020.0 - 1_990.0);
        // What a cut at `b` keeps cleared: `b`'s saving.
        assert_eq!(t.kept_cleared_after_cut(2, &mut a).unwrap(), 995);

        let mut a = Cleared {
            messages: after.clone(),
            placeholders: 0,
        };
        let mut t = Tracker::new(estimator);
        t.sync(Ok(Synced::Appended(0)), &mut a).unwrap();
        // The summary, `b` as its placeholder, the user message.
        let sent = 100.0 + 5.0 + 10.0;
        assert_eq!(t.context_tokens(&mut a).unwrap().tokens, sent);
        assert_eq!(a.placeholders, 1);
        // The same when the marker comes in a later turn, as the last of
        // the messages the summary kept.
        let mut grown = Tracker::new(estimator);
        a.messages.pop();
        grown.sync(Ok(Synced::Appended(0)), &mut a).unwrap();
        assert_eq!(
            grown.context_tokens(&mut a).unwrap().tokens,
            100.0 + 1_000.0 + 10.0
        );
        a.messages.push(marker.clone());
        grown.sync(Ok(Synced::Appended(5)), &mut a).unwrap();
        assert_eq!(grown.context_tokens(&mut a).unwrap().tokens, sent);
        a.placeholders = 1;
        let settings = CompactionSettings {
            reserve_tokens: 0,
            ..CompactionSettings::default()
        };
        assert!(!t.threshold_exceeded(&settings, sent, &mut a).unwrap());
        assert!(t.threshold_exceeded(&settings, sent - 1.0, &mut a).unwrap());
        // Found once for the summary, not on every turn.
        let turn = plain(Role::User, 40);
        a.messages.push(turn.clone());
        t.sync(Ok(Synced::Appended(6)), &mut a).unwrap();
        assert_eq!(t.context_tokens(&mut a).unwrap().tokens, sent + 10.0);
        assert_eq!(a.placeholders, 1);
        // A fresh usage saw the placeholder.
        let mut reply = text(Role::Assistant, 40);
        reply.usage = Some(UsageNumbers {
            input: 300.0,
            output: 10.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total_tokens: 310.0,
        });
        a.messages.push((reply, Fact::Message));
        t.sync(Ok(Synced::Appended(7)), &mut a).unwrap();
        assert_eq!(t.context_tokens(&mut a).unwrap().tokens, 310.0);
    }
}

#[test]
fn what_the_summary_is_sent_with_counts_with_it_until_a_fresh_usage() {
    let note = "\n\nDetails can be looked up.";
    for estimator in [EstimatorChoice::Pi, EstimatorChoice::Calibrated] {
        let ids = [2, 4, 100, 6, 8];
        let mut a = array(&ids);
        let mut t = fresh(estimator, &ids);
        let plain = t.context_tokens(&mut a).unwrap().tokens;
        let tokens = t.append_to_summary(note);
        let want = match estimator {
            EstimatorChoice::Pi => 7,
            EstimatorChoice::Calibrated => {
                crate::tokens::calibrated::estimate_texts([note.as_bytes()])
            }
        };
        assert_eq!(tokens, want);
        assert_eq!(
            t.context_tokens(&mut a).unwrap().tokens,
            plain + want as f64
        );
        let settings = CompactionSettings {
            reserve_tokens: 0,
            ..CompactionSettings::default()
        };
        let window = plain + want as f64;
        assert!(!t.threshold_exceeded(&settings, window, &mut a).unwrap());
        assert!(t
            .threshold_exceeded(&settings, window - 1.0, &mut a)
            .unwrap());
        // Kept when a failed sync starts the books over.
        a.unreadable = Some(1);
        assert!(t.sync(scanned(&ids, &[2, 5]), &mut a).is_err());
        a.unreadable = None;
        t.sync(Ok(Synced::Appended(0)), &mut a).unwrap();
        assert_eq!(
            t.context_tokens(&mut a).unwrap().tokens,
            plain + want as f64
        );
        // No summary: nothing is sent with one.
        let mut none = fresh(estimator, &[2, 4]);
        let without = none.context_tokens(&mut array(&[2, 4])).unwrap().tokens;
        none.append_to_summary(note);
        assert_eq!(
            none.context_tokens(&mut array(&[2, 4])).unwrap().tokens,
            without
        );
        // A fresh usage after the summary includes it.
        let message = |role, usage: Option<f64>| {
            let mut r = RawFacts {
                role: Some(role),
                content_string: Some(40),
                summary: 40,
                kept_messages: Some(0),
                ..RawFacts::default()
            };
            r.usage = usage.map(|u| UsageNumbers {
                input: u,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
                total_tokens: u,
            });
            (r, Fact::Message)
        };
        let mut b = Cleared {
            messages: vec![
                message(Role::User, None),
                message(Role::CompactionSummary, None),
                message(Role::User, None),
                message(Role::Assistant, Some(500.0)),
            ],
            placeholders: 0,
        };
        let mut t = Tracker::new(estimator);
        t.sync(Ok(Synced::Appended(0)), &mut b).unwrap();
        t.append_to_summary(note);
        assert_eq!(t.context_tokens(&mut b).unwrap().tokens, 500.0);
    }
}
