use super::*;
use crate::tokens::estimate::{RawFacts, UsageNumbers};
use proptest::prelude::*;

fn no_fill(_: usize) -> Result<u64, ()> {
    panic!("nothing is pending in this test")
}

#[test]
fn what_a_marker_freed_counts_until_usage_is_reported_after_it() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::User, 10, None, 1.0));
    ix.push(f(Role::ToolResult, 50_000, None, 2.0));
    ix.push(f(Role::Assistant, 5, Some(60_000.0), 3.0));
    ix.push(f(Role::User, 3, None, 5.0));
    assert_eq!(ix.context_tokens().tokens, 60_003.0);
    // Clearing appends its marker at the end of the array.
    ix.push(MessageFacts::cleared(49_000, 4.0));
    assert_eq!(ix.context_tokens().tokens, 11_003.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    assert!(!ix.exceeds(11_003.0, no_fill).unwrap());
    assert!(ix.exceeds(11_002.0, no_fill).unwrap());
    // Fresh usage after it saw the placeholder already.
    ix.push(f(Role::Assistant, 5, Some(12_000.0), 6.0));
    assert_eq!(ix.context_tokens().tokens, 12_000.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    // Undo: the marker goes, the usage from before counts in full again.
    ix.truncate(5, no_fill).unwrap();
    ix.remove(4, no_fill).unwrap();
    assert_eq!(ix.context_tokens().tokens, 60_003.0);
    // A later summary that kept the marker ends it: the marker was made
    // before the summary, whose context may no longer hold what it cleared.
    ix.push(MessageFacts::cleared(49_000, 7.0));
    assert_eq!(ix.context_tokens().tokens, 11_003.0);
    ix.insert(3, MessageFacts::summary(100, Some(2), 8.0), no_fill)
        .unwrap();
    assert_eq!(ix.context_tokens().tokens, 103.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
}

#[test]
fn what_comes_after_a_marker_or_a_summary_is_decided_by_position_not_by_clocks() {
    // Messages stamped by a clock far behind the package's (1000 + i),
    // a marker and a summary stamped with the package's `Date.now()`.
    let now = 1.8e12;
    for shift in [0.0, -now, now, f64::NAN] {
        let ts = |i: f64| {
            if shift.is_nan() {
                5.0
            } else {
                1000.0 + i + shift
            }
        };
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, ts(0.0)));
        ix.push(f(Role::ToolResult, 120_000, None, ts(1.0)));
        ix.push(f(Role::Assistant, 5, Some(130_000.0), ts(2.0)));
        ix.push(MessageFacts::cleared(119_916, now));
        assert_eq!(ix.context_tokens().tokens, 10_084.0, "shift {shift}");
        // The next reply reports usage that saw the placeholders: what the
        // marker freed comes off no more.
        ix.push(f(Role::User, 4, None, ts(3.0)));
        ix.push(f(Role::Assistant, 5, Some(80_174.0), ts(4.0)));
        assert_eq!(ix.context_tokens().tokens, 80_174.0, "shift {shift}");
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        // A summary that kept the last two messages: their usage is stale,
        // whatever the clocks say; the first reply after it counts.
        ix.insert(4, MessageFacts::summary(300, Some(2), now), no_fill)
            .unwrap();
        assert_eq!(ix.context_tokens().tokens, 309.0, "shift {shift}");
        ix.push(f(Role::User, 4, None, ts(5.0)));
        ix.push(f(Role::Assistant, 5, Some(2_000.0), ts(6.0)));
        assert_eq!(ix.context_tokens().tokens, 2_000.0, "shift {shift}");
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        // Recomputed from scratch (an edit in the middle), the same.
        ix.remove(0, no_fill).unwrap();
        assert_eq!(ix.context_tokens().tokens, 2_000.0, "shift {shift}");
    }
}

#[test]
fn a_summary_that_does_not_say_what_it_kept_falls_back_to_timestamps() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::CompactionSummary, 50, None, 100.0));
    ix.push(f(Role::Assistant, 20, Some(180_000.0), 90.0));
    assert_eq!(ix.context_tokens().tokens, 70.0);
    ix.push(f(Role::Assistant, 20, Some(2_000.0), 110.0));
    assert_eq!(ix.context_tokens().tokens, 2_000.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
}

#[test]
fn lazily_gathered_estimates_are_filled_only_when_they_count() {
    let mut pending = f(Role::Assistant, 0, Some(5000.0), 2.0);
    pending.set_tokens_pending(true);
    let mut ix = ContextIndex::default();
    ix.push(f(Role::User, 10, None, 1.0));
    // Fresh usage: its own estimate is never needed.
    ix.push_with(pending, no_fill).unwrap();
    assert_eq!(ix.context_tokens().tokens, 5000.0);
    // A summary inserted before it makes its usage stale: now it counts.
    let mut asked = Vec::new();
    ix.insert(1, f(Role::CompactionSummary, 100, None, 3.0), |i| {
        asked.push(i);
        Ok::<u64, ()>(42)
    })
    .unwrap();
    assert_eq!(asked, vec![2]);
    assert_eq!(ix.context_tokens().tokens, 142.0);
    assert!(!ix.facts()[2].tokens_pending());
}

#[test]
fn deferred_pushes_measure_only_when_a_decision_needs_it() {
    let pending = |role, bound, usage, t| {
        let mut m = f(role, bound, usage, t);
        m.set_tokens_pending(true);
        m
    };
    let mut ix = ContextIndex::default();
    ix.push_deferred(pending(Role::User, 100, None, 1.0));
    ix.push_deferred(pending(Role::Assistant, 300, Some(5000.0), 2.0));
    ix.push_deferred(pending(Role::ToolResult, 400, None, 3.0));
    ix.push_deferred(f(Role::User, 7, None, 4.0));
    assert_eq!(ix.unmeasured(), 1);
    // Far from the threshold either way: nothing is measured.
    assert!(!ix.exceeds(10_000.0, no_fill).unwrap());
    assert!(ix.exceeds(1000.0, no_fill).unwrap());
    // Between the lower and upper ends: measured, once.
    let mut asked = Vec::new();
    let mut fill = |i| {
        asked.push(i);
        Ok::<u64, ()>(50)
    };
    assert!(ix.exceeds(5050.0, &mut fill).unwrap());
    assert_eq!(asked, vec![2]);
    assert_eq!(ix.context_tokens().tokens, 5057.0);
    assert_eq!(ix.unmeasured(), 0);
    // A summary deferred: the context starts there, its bound in the slack.
    ix.push_deferred(pending(Role::CompactionSummary, 80, None, 5.0));
    assert_eq!((ix.context_start(), ix.unmeasured()), (4, 1));
    let c = ix.context_tokens_exact(|_| Ok::<u64, ()>(20)).unwrap();
    assert_eq!(c.tokens, 20.0);
    assert_eq!(ix.context_tokens_recomputed().tokens, 20.0);
}

fn f(role: Role, tokens: u64, usage: Option<f64>, timestamp: f64) -> MessageFacts {
    MessageFacts::new(role, tokens, usage, timestamp)
}

#[test]
fn tracks_the_context_incrementally() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::User, 10, None, 1.0));
    assert_eq!(ix.context_tokens().tokens, 10.0);
    ix.push(f(Role::Assistant, 5, Some(1000.0), 2.0));
    ix.push(f(Role::User, 7, None, 3.0));
    assert_eq!(ix.context_tokens().tokens, 1007.0);
    assert_eq!(ix.context_start(), 0);
    // A summary inserted: the context starts there and old usage is stale.
    ix.push(f(Role::CompactionSummary, 50, None, 4.0));
    assert_eq!(ix.context_start(), 3);
    assert_eq!(ix.context_tokens().tokens, 50.0);
    ix.push(f(Role::User, 3, None, 5.0));
    ix.push(f(Role::Assistant, 4, Some(300.0), 6.0));
    assert_eq!(ix.context_tokens().tokens, 300.0);
}

fn pin(mut m: MessageFacts) -> MessageFacts {
    m.set_pinned(true);
    m
}

#[test]
fn pinned_messages_before_the_summary_count_until_a_fresh_usage() {
    let mut ix = ContextIndex::default();
    ix.push(pin(f(Role::User, 30, None, 1.0)));
    ix.push(f(Role::User, 1000, None, 2.0));
    ix.push(pin(f(Role::Custom, 7, None, 3.0)));
    ix.push(f(Role::Assistant, 5, Some(90_000.0), 4.0));
    assert!(ix.resent().is_empty());
    assert_eq!(ix.context_tokens().tokens, 90_000.0);
    // A summary: the model is sent it, then the two pinned messages.
    ix.push(f(Role::CompactionSummary, 100, None, 5.0));
    assert_eq!(ix.resent(), &[0, 2]);
    assert_eq!(ix.context_tokens().tokens, 137.0);
    ix.push(pin(f(Role::User, 11, None, 6.0)));
    // A pinned message after the summary is where it is, counted once.
    assert_eq!(ix.resent(), &[0, 2]);
    assert_eq!(ix.context_tokens().tokens, 148.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    // A fresh usage includes them (the provider was sent them).
    ix.push(f(Role::Assistant, 5, Some(2_000.0), 7.0));
    assert_eq!(ix.context_tokens().tokens, 2_000.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    // A new summary inserted before that assistant: all three pinned
    // messages before it are re-sent, the kept assistant estimated.
    ix.insert(6, f(Role::CompactionSummary, 50, None, 8.0), no_fill)
        .unwrap();
    assert_eq!(ix.resent(), &[0, 2, 5]);
    assert_eq!(ix.pinned_before(6), &[0, 2, 5]);
    assert_eq!(ix.context_tokens().tokens, 50.0 + 30.0 + 7.0 + 11.0 + 5.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    // The undo: taken out again.
    ix.remove(6, no_fill).unwrap();
    assert_eq!(ix.resent(), &[0, 2]);
    assert_eq!(ix.context_tokens().tokens, 2_000.0);
}

#[test]
fn deferred_pinned_messages_are_measured_only_when_a_decision_needs_them() {
    let pending = |role, bound, t| {
        let mut m = f(role, bound, None, t);
        m.set_tokens_pending(true);
        m
    };
    let mut ix = ContextIndex::default();
    ix.push_deferred(pin(pending(Role::User, 500, 1.0)));
    ix.push_deferred(pending(Role::User, 500, 2.0));
    ix.push_deferred(f(Role::CompactionSummary, 40, None, 3.0));
    assert_eq!((ix.unmeasured(), ix.resent()), (1, &[0][..]));
    let exact = [60, 70, 40];
    let mut asked = Vec::new();
    // 40 known, at most 540: 600 is decided without reading anything.
    assert!(!ix.exceeds(600.0, measure(&exact, &mut asked)).unwrap());
    assert!(asked.is_empty());
    // 99 needs the pinned message's own estimate: 40 + 60.
    assert!(ix.exceeds(99.0, measure(&exact, &mut asked)).unwrap());
    assert_eq!(asked, vec![0]);
    assert_eq!(ix.context_tokens().tokens, 100.0);
    let mut again = ix.clone();
    again.push_deferred(pin(pending(Role::User, 20, 4.0)));
    let c = again.context_tokens_exact(|_| Ok::<u64, ()>(9)).unwrap();
    assert_eq!(c.tokens, 109.0);
}

#[test]
fn kept_messages_stamped_before_the_summary_are_estimated() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::CompactionSummary, 50, None, 100.0));
    // A kept assistant from before the compaction, with its old usage.
    ix.push(f(Role::Assistant, 20, Some(180_000.0), 90.0));
    assert_eq!(ix.context_tokens().tokens, 70.0);
    ix.truncate(1, no_fill).unwrap();
    assert_eq!(ix.context_tokens().tokens, 50.0);
    ix.truncate(0, no_fill).unwrap();
    assert!(ix.is_empty());
    assert_eq!(ix.context_tokens().tokens, 0.0);
}

fn arb_facts() -> impl Strategy<Value = MessageFacts> {
    (
        0u8..8,
        0u64..5000,
        proptest::option::of(0.0f64..200_000.0),
        0.0f64..100.0,
        0u8..4,
        proptest::option::of(0u64..6),
    )
        .prop_map(|(role, tokens, usage, timestamp, pin, kept)| {
            let role = Role::from_code(role).unwrap_or(Role::Other);
            if role == Role::CompactionSummary {
                // Most summaries say what they kept; some do not.
                return MessageFacts::summary(tokens, kept, timestamp);
            }
            let mut m = f(
                role,
                tokens,
                usage.filter(|_| role == Role::Assistant),
                timestamp,
            );
            // One in four pinned (summaries never are).
            m.set_pinned(crate::message::pinned::is_pinned(role, pin == 0));
            m
        })
}

#[test]
fn inserting_a_summary_and_removing_a_failed_attempt() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::User, 10, None, 1.0));
    ix.push(f(Role::Assistant, 10, Some(5000.0), 2.0));
    ix.push(f(Role::User, 10, None, 3.0));
    ix.push(f(Role::Assistant, 10, Some(9000.0), 4.0));
    ix.push(f(Role::Assistant, 0, None, 5.0));
    assert_eq!(ix.context_tokens().tokens, 9000.0);
    // The failed attempt at the end goes, a summary goes in at 2.
    ix.remove(4, no_fill).unwrap();
    ix.insert(2, f(Role::CompactionSummary, 100, None, 6.0), no_fill)
        .unwrap();
    assert_eq!(ix.len(), 5);
    assert_eq!(ix.context_start(), 2);
    // The kept assistant's usage predates the summary: estimated.
    assert_eq!(ix.context_tokens().tokens, 120.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
}

#[test]
fn a_message_replaced_in_place_counts_as_the_new_one() {
    let build = |pinned_at_1: bool, marker_at_4: bool| {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        let mut rule = f(Role::User, 30, None, 2.0);
        rule.set_pinned(pinned_at_1);
        ix.push(rule);
        ix.push(f(Role::CompactionSummary, 100, None, 3.0));
        ix.push(f(Role::ToolResult, 40, None, 4.0));
        ix.push(if marker_at_4 {
            MessageFacts::cleared(35, 5.0)
        } else {
            f(Role::User, 5, None, 5.0)
        });
        ix
    };
    // Pinned by a pinned copy before the summary: re-sent, and counted.
    let mut ix = build(false, false);
    assert_eq!(ix.context_tokens().tokens, 145.0);
    let mut rule = f(Role::User, 30, None, 2.0);
    rule.set_pinned(true);
    ix.replace_bounded([(1, rule)]);
    assert_eq!(ix.resent(), &[1]);
    assert_eq!(ix.context_tokens().tokens, 175.0);
    assert_eq!(ix.context_tokens(), build(true, false).context_tokens());
    // Edited (a longer pinned rule), then unpinned.
    let mut longer = f(Role::User, 80, None, 2.0);
    longer.set_pinned(true);
    ix.replace_bounded([(1, longer)]);
    assert_eq!(ix.context_tokens().tokens, 225.0);
    ix.replace_bounded([(1, f(Role::User, 80, None, 2.0))]);
    assert_eq!(ix.resent(), &[] as &[usize]);
    assert_eq!(ix.context_tokens(), build(false, false).context_tokens());
    // A marker in place of a message, and back: the markers follow.
    ix.replace_bounded([(4, MessageFacts::cleared(35, 5.0))]);
    assert_eq!(ix.context_tokens(), build(false, true).context_tokens());
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    ix.replace_bounded([(4, f(Role::User, 5, None, 5.0))]);
    assert_eq!(ix.context_tokens(), build(false, false).context_tokens());
    // The summary replaced by a message: the context starts at 0 again.
    ix.replace_bounded([(2, f(Role::User, 100, None, 3.0)), (9, rule)]);
    assert_eq!(ix.context_start(), 0);
    assert_eq!(ix.len(), 5);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
}

/// A lazily gathered assistant: `bound` is what gathering could tell
/// of its estimate (`u32::MAX`: nothing).
fn pending(bound: u64, usage: f64, timestamp: f64) -> MessageFacts {
    let mut p = f(Role::Assistant, bound, Some(usage), timestamp);
    p.set_tokens_pending(true);
    p
}

/// Measures from `exact`, recording what it was asked for.
fn measure<'a>(
    exact: &'a [u64],
    asked: &'a mut Vec<usize>,
) -> impl FnMut(usize) -> Result<u64, ()> + 'a {
    move |i| {
        asked.push(i);
        exact.get(i).copied().ok_or(())
    }
}

#[test]
fn bounds_spare_measuring_until_the_threshold_needs_it() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::User, 10, None, 1.0));
    ix.push(pending(90, 150_000.0, 2.0));
    ix.push(f(Role::ToolResult, 20, None, 3.0));
    ix.push(pending(300, 160_000.0, 4.0));
    assert_eq!(ix.context_tokens().tokens, 160_000.0);
    // Indexes 0..=4 after the summary goes in at 0.
    let exact = [100, 10, 40, 20, 60];
    let mut asked = Vec::new();
    ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 5.0));
    // Both kept assistants are stale now: left out, their bounds known.
    assert_eq!(ix.unmeasured(), 2);
    assert_eq!(ix.context_tokens().tokens, 130.0);
    // Lower end 130, upper end 130 + 90 + 300 = 520.
    assert!(!ix.exceeds(520.0, measure(&exact, &mut asked)).unwrap());
    assert!(ix.exceeds(129.0, measure(&exact, &mut asked)).unwrap());
    assert!(asked.is_empty());
    // Within the range: measured, the largest bound first, and then exact.
    assert!(ix.exceeds(200.0, measure(&exact, &mut asked)).unwrap());
    assert_eq!(asked, vec![4, 2]);
    assert_eq!(ix.unmeasured(), 0);
    assert_eq!(
        ix.context_tokens().tokens,
        100.0 + 10.0 + 40.0 + 20.0 + 60.0
    );
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
}

#[test]
fn fresh_usage_makes_the_unmeasured_irrelevant() {
    let mut ix = ContextIndex::default();
    ix.push(pending(u64::from(u32::MAX), 150_000.0, 1.0));
    let exact = [100, 50, 3];
    let mut asked = Vec::new();
    ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 2.0));
    assert_eq!(ix.unmeasured(), 1);
    // No bound (as many tokens as can be counted): any threshold from
    // what is known up to that needs measuring.
    assert!(!ix
        .clone()
        .exceeds(1e6, measure(&exact, &mut asked))
        .unwrap());
    assert_eq!(asked, vec![1]);
    asked.clear();
    ix.push_with(f(Role::Assistant, 3, Some(900.0), 3.0), no_fill)
        .unwrap();
    assert_eq!(ix.unmeasured(), 0);
    let tokens = ix.context_tokens_exact(measure(&exact, &mut asked));
    assert_eq!(tokens.unwrap().tokens, 900.0);
    assert!(asked.is_empty());
    // Filling a range before a cut point search counts them again.
    ix.remove_bounded(2);
    assert_eq!(ix.unmeasured(), 1);
    ix.fill_pending(0..ix.len(), measure(&exact, &mut asked))
        .unwrap();
    assert_eq!(asked, vec![1]);
    assert_eq!(ix.unmeasured(), 0);
    assert_eq!(ix.context_tokens().tokens, 150.0);
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
}

#[test]
fn exceeds_measures_the_largest_bounds_first_and_stops_when_decided() {
    let mut ix = ContextIndex::default();
    ix.push(f(Role::User, 10, None, 1.0));
    ix.push(pending(90_000, 150_000.0, 2.0));
    for t in 3..30 {
        ix.push(pending(1000, 150_000.0 + t as f64, t as f64));
    }
    // After the summary every kept assistant counts, at its bound.
    ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 50.0));
    assert_eq!(ix.unmeasured(), 28);
    let mut exact = vec![100, 10, 9_000];
    exact.resize(30, 200);
    let mut asked = Vec::new();
    // Upper end 110 + 90,000 + 27,000 = 117,110: measuring the largest
    // (9,000 for 90,000) decides 100,000 with nothing else read.
    assert!(!ix.exceeds(100_000.0, measure(&exact, &mut asked)).unwrap());
    assert_eq!(asked, vec![2]);
    assert_eq!(ix.unmeasured(), 27);
    // The measured estimate is kept: asked again, it is not read again.
    assert!(!ix.exceeds(100_000.0, measure(&exact, &mut asked)).unwrap());
    assert_eq!(asked, vec![2]);
    let c = ix
        .context_tokens_exact(measure(&exact, &mut asked))
        .unwrap();
    assert_eq!(c.tokens, (110 + 9_000 + 27 * 200) as f64);
    assert_eq!(asked.len(), 28);
}

#[test]
fn tightening_settles_the_answer_before_anything_is_read() {
    let session = || {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        ix.push(pending(90_000, 150_000.0, 2.0));
        for t in 3..30 {
            ix.push(pending(1000, 150_000.0 + t as f64, t as f64));
        }
        ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 50.0));
        ix
    };
    let mut exact = vec![100, 10, 9_000];
    exact.resize(30, 200);
    // Tighter bounds: half the loose ones (still above the estimates).
    let half = |i: usize| [0, 0, 45_000].get(i).copied().unwrap_or(500);
    let mut tightened = Vec::new();
    let mut asked = Vec::new();
    let mut ix = session();
    // Upper end 117,110; tightening the largest (90,000 → 45,000) makes
    // it 72,110: 100,000 is decided with nothing read.
    let answer = ix.exceeds_tightening(
        100_000.0,
        |i| {
            tightened.push(i);
            Ok::<_, ()>(Some(half(i)))
        },
        measure(&exact, &mut asked),
    );
    assert_eq!(answer, Ok(false));
    assert_eq!(
        (tightened.as_slice(), asked.as_slice()),
        (&[2][..], &[][..])
    );
    assert!(ix.facts()[2].bound_tight() && ix.facts()[2].tokens_pending());
    assert_eq!(ix.facts()[2].tokens, 45_000);
    // 60,000: the others tightened too (1,000 → 500 each), largest
    // first, until it is settled (25 of them: 59,610), nothing read.
    tightened.clear();
    let answer = ix.exceeds_tightening(
        60_000.0,
        |i| {
            tightened.push(i);
            Ok::<_, ()>(Some(half(i)))
        },
        measure(&exact, &mut asked),
    );
    assert_eq!(answer, Ok(false));
    assert_eq!(tightened.len(), 25);
    assert!(asked.is_empty());
    // 50,000: tightening cannot settle it (110 and the tight bounds:
    // 57,610), so the largest is measured (9,000: 23,610 at most),
    // which does; a tight bound is never tightened again.
    let mut no_more = |_: usize| -> Result<Option<u64>, ()> { panic!("tightened again") };
    let answer = ix.exceeds_tightening(50_000.0, &mut no_more, measure(&exact, &mut asked));
    assert_eq!(answer, Ok(false));
    assert_eq!(asked, vec![2]);
    // The estimate is 110 + 9,000 + 27 × 200 = 14,510: over 14,000,
    // not over 14,510, everything measured to tell.
    let answer = ix.exceeds_tightening(14_000.0, &mut no_more, measure(&exact, &mut asked));
    assert_eq!(answer, Ok(true));
    assert!(!ix
        .exceeds_tightening(14_510.0, &mut no_more, measure(&exact, &mut asked))
        .unwrap());
    assert_eq!(ix.unmeasured(), 0);
    // Nothing known settles it and tightening cannot: what is known
    // plus the tight bounds already over the threshold, the largest is
    // measured without tightening the rest.
    let mut ix = session();
    let mut asked = Vec::new();
    let mut tightened = Vec::new();
    ix.facts[2].tighten(45_000);
    ix.recompute_bounded();
    let answer = ix.exceeds_tightening(
        30_000.0,
        |i| {
            tightened.push(i);
            Ok::<_, ()>(Some(half(i)))
        },
        measure(&exact, &mut asked),
    );
    assert_eq!(answer, Ok(false));
    assert_eq!(asked, vec![2]);
    // Then as many of the rest tightened as settle it (36,110 at most
    // after the measuring, 500 less for each).
    assert_eq!(tightened.len(), 13);
    // A bound above the loose one is ignored (the lower is kept), and
    // `None` measures.
    let mut ix = session();
    let mut asked = Vec::new();
    let answer = ix.exceeds_tightening(
        100_000.0,
        |_| Ok::<_, ()>(Some(u64::MAX)),
        measure(&exact, &mut asked),
    );
    assert_eq!((answer, asked.as_slice()), (Ok(false), &[2][..]));
    let mut ix = session();
    let mut asked = Vec::new();
    let answer = ix.exceeds_tightening(
        100_000.0,
        |_| Ok::<_, ()>(None),
        measure(&exact, &mut asked),
    );
    assert_eq!((answer, asked.as_slice()), (Ok(false), &[2][..]));
}

/// A self-correcting session: a system prompt of `overhead` tokens the
/// estimates never see, then user/assistant pairs of `step` estimated
/// tokens each, the provider counting `factor` × the estimate.
fn corrected_session(overhead: f64, factor: f64, step: u64, pairs: usize) -> ContextIndex {
    let mut ix = ContextIndex::self_correcting();
    let mut reported = overhead;
    for k in 0..pairs {
        let t = 2.0 * k as f64;
        ix.push(f(Role::User, step - 10, None, t));
        reported += factor * step as f64;
        ix.push(f(Role::Assistant, 10, Some(reported), t + 1.0));
    }
    ix
}

#[test]
fn the_ratio_compares_reported_usage_with_the_estimate_and_ignores_the_system_prompt() {
    let none = |_: usize| -> Result<u64, ()> { panic!("nothing is pending") };
    // 2× over 600-token steps, with a 20,000-token system prompt: the
    // difference of two usages cancels the prompt.
    let mut ix = corrected_session(20_000.0, 2.0, 600, 4);
    assert_eq!(ix.ratio(), 1.0);
    assert_eq!(ix.learn_ratio(none).unwrap(), 2.0);
    // The usage is the provider's own; what follows it is scaled.
    ix.push(f(Role::ToolResult, 1000, None, 100.0));
    let c = ix.context_tokens();
    assert_eq!(c.usage_tokens, 20_000.0 + 2.0 * 2400.0);
    assert_eq!(c.trailing_tokens, 2000.0);
    // Not enough estimate between two usages (one 600-token step):
    // no correction.
    assert_eq!(
        corrected_session(20_000.0, 2.0, 600, 2).learn_ratio(none),
        Ok(1.0)
    );
    // One usage only: nothing to compare (the system prompt would read
    // as a 30× tokenizer).
    assert_eq!(
        corrected_session(20_000.0, 2.0, 600, 1).learn_ratio(none),
        Ok(1.0)
    );
    // Within bounds, whatever the provider claims.
    assert_eq!(
        corrected_session(0.0, 9.0, 600, 4).learn_ratio(none),
        Ok(MAX_RATIO)
    );
    assert_eq!(
        corrected_session(0.0, 0.1, 600, 4).learn_ratio(none),
        Ok(MIN_RATIO)
    );
    // Usage that falls below half the one before cannot describe the
    // messages it follows: it counts for nothing, the ratio included.
    assert_eq!(
        corrected_session(0.0, -1.0, 600, 4).learn_ratio(none),
        Ok(1.0)
    );
    assert_eq!(
        corrected_session(0.0, 0.8, 1000, 3).learn_ratio(none),
        Ok(0.8)
    );
    // pi's index never scales.
    let mut pi = ContextIndex::default();
    pi.push(f(Role::Assistant, 10, Some(100.0), 1.0));
    pi.push(f(Role::User, 5000, None, 2.0));
    pi.push(f(Role::Assistant, 10, Some(50_000.0), 3.0));
    pi.push(f(Role::User, 7, None, 4.0));
    assert_eq!(pi.learn_ratio(none), Ok(1.0));
    assert_eq!(pi.context_tokens().tokens, 50_007.0);
}

#[test]
fn the_ratio_is_learned_from_measured_estimates_and_kept_past_a_summary() {
    let mut ix = corrected_session(5_000.0, 1.5, 500, 5);
    // The estimates between the usages pending, as the calibrated
    // estimate leaves them: learning measures them (and only them).
    for i in 2..ix.len() {
        ix.facts[i].set_tokens_pending(true);
        ix.facts[i].tokens = 10_000;
    }
    let mut tool = f(Role::ToolResult, 8_000, None, 20.0);
    tool.set_tokens_pending(true);
    ix.push_deferred(tool);
    let exact = |i: usize| -> Result<u64, ()> { Ok(if i.is_multiple_of(2) { 490 } else { 10 }) };
    // Reported 5,000 + 1.5 × 2,500 = 8,750; the message after it is
    // scaled only once the ratio is learned.
    assert_eq!(
        ix.context_tokens_exact(exact).unwrap().tokens,
        8_750.0 + 490.0
    );
    let mut asked = Vec::new();
    let r = ix.learn_ratio(|i| {
        asked.push(i);
        exact(i)
    });
    assert_eq!(r, Ok(1.5));
    // From the first usage's reply up to the last's (which its own usage
    // did not read): the pending ones among them.
    assert_eq!(asked, (2..9).collect::<Vec<_>>());
    assert_eq!(ix.context_tokens().tokens, 8_750.0 + 735.0);
    // exceeds decides with it.
    assert!(ix.exceeds(8_750.0 + 734.0, exact).unwrap());
    assert!(!ix.exceeds(8_750.0 + 735.0, exact).unwrap());
    // A summary inserted: no fresh usage after it, the ratio learned
    // before still scales the estimates.
    ix.insert_bounded(6, f(Role::CompactionSummary, 300, None, 30.0));
    // The messages after it moved one on (the last assistant is still
    // pending: learning did not need it).
    let moved = |i: usize| exact(if i > 6 { i - 1 } else { i });
    let c = ix.context_tokens_exact(moved).unwrap();
    // Kept: 2 pairs (1,000) + the tool result (490) + the summary.
    assert_eq!(c.tokens, (1.5f64 * 1_790.0).ceil());
    // Learning again in the new context, with no two usages there: the
    // context before it is used (the same ratio).
    assert_eq!(ix.learn_ratio(moved), Ok(1.5));
    ix.push(f(Role::Assistant, 10, Some(3_000.0), 31.0));
    assert_eq!(ix.context_tokens_exact(moved).unwrap().tokens, 3_000.0);
    assert_eq!(ix.ratio(), 1.5);
}

#[test]
fn tokens_after_a_summary_are_what_the_index_counts_right_after_it() {
    let exact = |i: usize| -> Result<u64, ()> { Ok(if i.is_multiple_of(2) { 490 } else { 10 }) };
    for (overhead, factor) in [(5_000.0, 1.5), (0.0, 0.7), (2_000.0, 1.0)] {
        let mut ix = corrected_session(overhead, factor, 500, 5);
        let ratio = ix.learn_ratio(exact).unwrap();
        assert_eq!(ratio, factor);
        // A summary of 333 kept the last 4 messages (1,000); it is sent
        // with a note of 17, and a kept output cleared by a kept marker
        // saves 91.
        let summary = MessageFacts::summary(333, Some(4), 30.0);
        ix.insert(6, summary, exact).unwrap();
        ix.set_summary_note(17);
        ix.set_kept_cleared(91);
        let after = tokens_after_summary(333 + 1_000, 17, 91, ratio);
        assert_eq!(ix.context_tokens_exact(exact).unwrap().tokens, after);
        assert_eq!(ix.context_tokens().last_usage_index, None);
        // Each part scaled on its own, as the index scales it.
        let scaled = |t: f64| (t * ratio).ceil();
        assert_eq!(after, scaled(1_333.0) + scaled(17.0) - scaled(91.0));
    }
    // Never below zero.
    assert_eq!(tokens_after_summary(10, 0, 50, 1.0), 0.0);
}

/// A conversation whose provider reports 10,000 more each turn (user 9,000
/// and assistant 1,000 by the estimate), up to 90,000 + 1,000.
fn grown(ix: &mut ContextIndex, turns: usize) {
    for k in 0..turns {
        let t = 2.0 * k as f64;
        ix.push(f(Role::User, 9_000, None, t));
        ix.push(f(
            Role::Assistant,
            1_000,
            Some(1_000.0 + 10_000.0 * (k + 1) as f64),
            t + 1.0,
        ));
    }
}

#[test]
fn usage_reported_after_a_summary_or_marker_an_edit_took_out_counts_no_more() {
    for bounded in [false, true] {
        let remove = |ix: &mut ContextIndex, at: usize| {
            if bounded {
                ix.remove_bounded(at);
            } else {
                ix.remove(at, no_fill).unwrap();
            }
        };
        // Compacted to a summary that kept the last 4 messages (from the
        // 60,000-token user message), then a turn: its usage counts the
        // summary, and the drop is under half (no plausibility rule
        // needed).
        let mut ix = ContextIndex::default();
        grown(&mut ix, 9);
        assert_eq!(ix.context_tokens().tokens, 91_000.0);
        ix.insert(14, MessageFacts::summary(500, Some(4), 50.0), no_fill)
            .unwrap();
        ix.push(f(Role::User, 10, None, 60.0));
        ix.push(f(Role::Assistant, 20, Some(50_000.0), 61.0));
        assert_eq!(ix.context_tokens().tokens, 50_000.0);
        // Undone: the model is sent everything again, which that usage
        // does not describe; the last usage from before counts.
        remove(&mut ix, 14);
        let c = ix.context_tokens();
        assert_eq!((c.tokens, c.last_usage_index), (91_030.0, Some(17)));
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        // Until a usage is reported after the edit.
        ix.push(f(Role::User, 10, None, 62.0));
        ix.push(f(Role::Assistant, 20, Some(92_000.0), 63.0));
        assert_eq!(ix.context_tokens().tokens, 92_000.0);
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());

        // A clearing, a turn that saw its placeholders, the marker taken
        // out: everything after the marker is estimated again.
        let mut ix = ContextIndex::default();
        grown(&mut ix, 9);
        ix.push(MessageFacts::cleared(40_000, 50.0));
        ix.push(f(Role::User, 10, None, 60.0));
        ix.push(f(Role::Assistant, 20, Some(52_000.0), 61.0));
        assert_eq!(ix.context_tokens().tokens, 52_000.0);
        remove(&mut ix, 18);
        assert_eq!(ix.context_tokens().tokens, 91_030.0);
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        // Any other message taken out changes no usage.
        let mut ix = ContextIndex::default();
        grown(&mut ix, 9);
        ix.push(f(Role::User, 10, None, 60.0));
        remove(&mut ix, 16);
        assert_eq!(ix.context_tokens().tokens, 91_010.0);
        assert_eq!(ix.context_tokens().last_usage_index, Some(16));
    }
    // A summary replaced in place is taken out too.
    let mut ix = ContextIndex::default();
    grown(&mut ix, 9);
    ix.insert(14, MessageFacts::summary(500, Some(4), 50.0), no_fill)
        .unwrap();
    ix.push(f(Role::User, 10, None, 60.0));
    ix.push(f(Role::Assistant, 20, Some(50_000.0), 61.0));
    ix.replace_bounded([(14, f(Role::User, 30, None, 50.0))]);
    assert_eq!(ix.context_tokens().tokens, 91_030.0);
}

#[test]
fn a_usage_under_half_the_one_before_counts_as_none() {
    // What an index that never saw the edit is given after an undo: the
    // conversation, then a turn whose usage counted the summary.
    let mut ix = ContextIndex::self_correcting();
    grown(&mut ix, 9);
    ix.push(f(Role::User, 10, None, 60.0));
    ix.push(f(Role::Assistant, 20, Some(16_000.0), 61.0));
    let c = ix.context_tokens();
    assert_eq!((c.tokens, c.last_usage_index), (91_030.0, Some(17)));
    assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    // Compared with the usage that counted, not the one just before: the
    // next turn's is no more credible.
    ix.push(f(Role::User, 10, None, 62.0));
    ix.push(f(Role::Assistant, 20, Some(17_000.0), 63.0));
    assert_eq!(ix.context_tokens().tokens, 91_060.0);
    // Half counts; a usage that grows again counts.
    let mut half = ix.clone();
    half.push(f(Role::Assistant, 20, Some(45_500.0), 64.0));
    assert_eq!(half.context_tokens().tokens, 45_500.0);
    ix.push(f(Role::Assistant, 20, Some(92_000.0), 64.0));
    assert_eq!(ix.context_tokens().tokens, 92_000.0);
    // Nor is the ratio learnt from it: from the usages that count.
    let mut ratio = ContextIndex::self_correcting();
    grown(&mut ratio, 3);
    ratio.push(f(Role::User, 2_000, None, 10.0));
    ratio.push(f(Role::Assistant, 10, Some(12_000.0), 11.0));
    assert_eq!(ratio.learn_ratio(no_fill), Ok(1.0));
    // An edit elsewhere recomputes the same (what a fresh index says).
    let mut edited = ix.clone();
    edited.remove(0, no_fill).unwrap();
    let mut fresh = ContextIndex::self_correcting();
    for m in &ix.facts()[1..] {
        fresh.push(*m);
    }
    assert_eq!(edited.context_tokens(), fresh.context_tokens());

    // With a clearing marker between, a drop is what it freed.
    let mut cleared = ContextIndex::default();
    grown(&mut cleared, 9);
    cleared.push(MessageFacts::cleared(80_000, 50.0));
    cleared.push(f(Role::User, 10, None, 60.0));
    cleared.push(f(Role::Assistant, 20, Some(12_000.0), 61.0));
    assert_eq!(cleared.context_tokens().tokens, 12_000.0);
    assert_eq!(
        cleared.context_tokens(),
        cleared.context_tokens_recomputed()
    );
    // After a summary, the first usage is never compared.
    let mut summarized = ContextIndex::default();
    grown(&mut summarized, 9);
    summarized.push(MessageFacts::summary(500, Some(0), 50.0));
    summarized.push(f(Role::User, 10, None, 60.0));
    summarized.push(f(Role::Assistant, 20, Some(3_000.0), 61.0));
    assert_eq!(summarized.context_tokens().tokens, 3_000.0);
    // A provider that reports NaN keeps pi's NaN.
    let mut odd = ContextIndex::default();
    grown(&mut odd, 2);
    odd.push(f(Role::Assistant, 20, Some(f64::NAN), 61.0));
    assert!(odd.context_tokens().tokens.is_nan());
}

/// An assistant's facts as the `Compactor` gathers them, from pi-ai's usage
/// numbers: `prompt` tokens read (uncached, as Anthropic reports `input`,
/// the rest read from the cache) and `output` written.
fn replied(prompt: f64, output: f64, timestamp: f64) -> MessageFacts {
    let usage = UsageNumbers {
        input: 100.0,
        output,
        cache_read: prompt - 100.0,
        cache_write: 0.0,
        total_tokens: prompt + output,
    };
    MessageFacts::compactor_pi(&RawFacts {
        role: Some(Role::Assistant),
        text: 40,
        usage: Some(usage),
        timestamp,
        ..RawFacts::default()
    })
}

#[test]
fn a_reasoning_turn_does_not_make_the_next_usage_implausible() {
    // A reasoning model's output counts its hidden reasoning, which is
    // never sent again: 10,000 read and 30,000 written, then 11,100 read
    // (the visible answer and a question more) and 500 written. The second
    // reply is far below the first's total, but not below what the first
    // read: it counts, as in pi.
    for mut ix in [ContextIndex::default(), ContextIndex::self_correcting()] {
        ix.push(f(Role::User, 25, None, 1.0));
        ix.push(replied(10_000.0, 30_000.0, 2.0));
        ix.push(f(Role::User, 1_000, None, 3.0));
        ix.push(replied(11_100.0, 500.0, 4.0));
        let c = ix.context_tokens();
        assert_eq!((c.tokens, c.last_usage_index), (11_600.0, Some(3)));
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        // An undo is still caught: what the model read fell below half.
        ix.push(f(Role::User, 10, None, 5.0));
        ix.push(replied(5_000.0, 100.0, 6.0));
        let c = ix.context_tokens();
        assert_eq!((c.tokens, c.last_usage_index), (11_620.0, Some(3)));
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }
}

#[test]
fn the_ratio_is_learned_from_what_the_model_read_not_its_hidden_reasoning() {
    // Each turn: a 600-token question and a 10-token answer, read by the
    // provider at 1.5× the estimate, over a 3,000-token system prompt. The
    // first reply reasoned for 20,000 tokens, the last for 200: what they
    // wrote differs by far more than the turns between them grew.
    let none = |_: usize| -> Result<u64, ()> { panic!("nothing is pending") };
    let mut ix = ContextIndex::self_correcting();
    let mut read = 3_000.0;
    for k in 0..5 {
        let t = 2.0 * k as f64;
        ix.push(f(Role::User, 600, None, t));
        read += 1.5 * 600.0;
        let reasoning = match k {
            0 => 20_000.0,
            4 => 200.0,
            _ => 1_000.0,
        };
        ix.push(replied(read, 10.0 + reasoning, t + 1.0));
        read += 1.5 * 10.0;
    }
    // What the model read is kept within a token or two in 100,000 (the
    // share it wrote, in two bytes): the totals would give 0.5.
    let ratio = ix.learn_ratio(none).unwrap();
    assert!((ratio - 1.5).abs() < 1e-3, "{ratio}");
}

/// Facts with lazily gathered assistants (their bound tight, loose or
/// unknown), and every message's measured estimate.
fn arb_session() -> impl Strategy<Value = (Vec<MessageFacts>, Vec<u64>)> {
    let message = prop_oneof![
        arb_facts(),
        (0u64..3000, 0.0f64..200_000.0, 0.0f64..100.0).prop_map(|(t, usage, ts)| f(
            Role::Assistant,
            t,
            Some(usage),
            ts
        )),
    ];
    proptest::collection::vec((message, 0u64..3000, 0u8..4), 1..50).prop_map(|items| {
        let mut facts = Vec::new();
        let mut exact = Vec::new();
        for (mut m, extra, kind) in items {
            let measured = u64::from(m.tokens);
            if m.role == Role::Assistant && m.usage().is_some() && kind > 0 {
                m.set_tokens_pending(true);
                m.tokens = match kind {
                    1 => m.tokens,
                    2 => m.tokens.saturating_add(extra as u32),
                    _ => u32::MAX,
                };
            }
            facts.push(m);
            exact.push(measured);
        }
        (facts, exact)
    })
}

/// `facts` pushed deferred (every estimate pending; those measured
/// get a loose bound, three times theirs), a pending summary inserted
/// at `at` (its estimate 77 in the returned `exact`), and the usage
/// ratio learned first when `learn`: the index the tightening
/// properties start from.
fn deferred_with_summary(
    facts: &[MessageFacts],
    mut exact: Vec<u64>,
    at: usize,
    learn: bool,
) -> (ContextIndex, Vec<u64>) {
    let mut ix = ContextIndex::self_correcting();
    for m in facts {
        let mut d = *m;
        d.set_tokens_pending(true);
        if !m.tokens_pending() {
            d.tokens = m.tokens.saturating_mul(3);
        }
        ix.push_deferred(d);
    }
    let at = at % (facts.len() + 1);
    exact.insert(at, 77);
    let mut s = f(Role::CompactionSummary, 200, None, 1000.0);
    s.set_tokens_pending(true);
    ix.insert_bounded(at, s);
    if learn {
        ix.learn_ratio(measure(&exact, &mut Vec::new())).unwrap();
    }
    (ix, exact)
}

proptest! {
    #[test]
    fn self_correcting_exceeds_answers_as_the_exact_number(
        (facts, exact) in arb_session(),
        at in 0usize..60,
        summary_late in any::<bool>(),
        learn in any::<bool>(),
        offsets in proptest::collection::vec(-3000.0f64..3000.0, 1..6),
    ) {
        let mut ix = ContextIndex::self_correcting();
        for m in &facts {
            let mut d = *m;
            d.set_tokens_pending(true);
            if !m.tokens_pending() {
                // Its bound: anything at least its estimate.
                d.tokens = m.tokens.saturating_mul(3);
            }
            ix.push_deferred(d);
        }
        let mut exact = exact;
        let at = at % (facts.len() + 1);
        let stamp = if summary_late { 1000.0 } else { 50.0 };
        exact.insert(at, 77);
        let mut s = f(Role::CompactionSummary, 200, None, stamp);
        s.set_tokens_pending(true);
        ix.insert_bounded(at, s);
        let mut asked = Vec::new();
        if learn {
            let r = ix.learn_ratio(measure(&exact, &mut asked)).unwrap();
            prop_assert!((MIN_RATIO..=MAX_RATIO).contains(&r));
        }
        let truth = ix.clone().context_tokens_exact(measure(&exact, &mut asked)).unwrap();
        for th in offsets.iter().map(|o| truth.tokens + o.round()) {
            let mut b = ix.clone();
            prop_assert_eq!(b.exceeds(th, measure(&exact, &mut asked)).unwrap(), truth.tokens > th, "threshold {}", th);
            prop_assert_eq!(b.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
        }
    }

    /// Tightening (with any bounds between the estimate and the loose
    /// bound, or none) never changes an answer or a number.
    #[test]
    fn tightened_exceeds_answers_as_the_exact_number(
        (facts, exact) in arb_session(),
        at in 0usize..60,
        learn in any::<bool>(),
        slack in proptest::collection::vec(proptest::option::of(0u64..4000), 64),
        offsets in proptest::collection::vec(-3000.0f64..3000.0, 1..6),
    ) {
        let (ix, exact) = deferred_with_summary(&facts, exact, at, learn);
        let mut asked = Vec::new();
        let truth = ix.clone().context_tokens_exact(measure(&exact, &mut asked)).unwrap();
        let tighter = |i: usize| Ok::<_, ()>(slack[i % slack.len()].map(|extra| exact[i] + extra));
        for th in offsets.iter().map(|o| truth.tokens + o.round()) {
            let mut b = ix.clone();
            prop_assert_eq!(b.exceeds_tightening(th, tighter, measure(&exact, &mut asked)).unwrap(), truth.tokens > th, "threshold {}", th);
            // Again, on the tightened bounds.
            prop_assert_eq!(b.exceeds_tightening(th, tighter, measure(&exact, &mut asked)).unwrap(), truth.tokens > th, "threshold {} again", th);
            prop_assert_eq!(b.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
        }
    }

    /// Tightening a batch per call answers as one at a time, with the
    /// same numbers, in no more calls (when every bound is given); a
    /// batch holds distinct loose
    /// messages, largest bounds first, and none is tightened twice.
    #[test]
    fn batched_tightening_answers_as_one_at_a_time(
        (facts, exact) in arb_session(),
        at in 0usize..60,
        learn in any::<bool>(),
        slack in proptest::collection::vec(proptest::option::of(0u64..4000), 64),
        short in any::<bool>(),
        offsets in proptest::collection::vec(-3000.0f64..3000.0, 1..6),
    ) {
        let (ix, exact) = deferred_with_summary(&facts, exact, at, learn);
        let mut asked = Vec::new();
        let truth = ix.clone().context_tokens_exact(measure(&exact, &mut asked)).unwrap();
        let tighter = |i: usize| slack[i % slack.len()].map(|extra| exact[i] + extra);
        for th in offsets.iter().map(|o| truth.tokens + o.round()) {
            let mut one = ix.clone();
            let mut one_calls = 0;
            let answer = one.exceeds_tightening(th, |i| { one_calls += 1; Ok::<_, ()>(tighter(i)) }, measure(&exact, &mut asked)).unwrap();
            let mut b = ix.clone();
            let mut calls = 0;
            let mut seen = std::collections::BTreeSet::new();
            let before = b.clone();
            let batched = b.exceeds_tightening_batched(th, |batch: &[usize]| {
                calls += 1;
                prop_assert!(!batch.is_empty());
                for w in batch.windows(2) {
                    prop_assert!(before.facts[w[0]].tokens >= before.facts[w[1]].tokens);
                }
                for &i in batch {
                    prop_assert!(seen.insert(i), "{} tightened twice", i);
                    prop_assert!(!before.facts[i].bound_tight());
                }
                // Bounds for all, or (short) for all but the last.
                let n = batch.len() - usize::from(short);
                Ok(batch[..n].iter().map(|&i| tighter(i).unwrap_or(u64::MAX)).collect())
            }, |i| Ok(exact[i])).unwrap();
            prop_assert_eq!(batched, answer, "threshold {}", th);
            prop_assert_eq!(batched, truth.tokens > th);
            if !short {
                prop_assert!(calls <= one_calls, "{} batches, {} one at a time", calls, one_calls);
            }
            prop_assert_eq!(b.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
        }
    }

    #[test]
    fn edits_in_the_middle_equal_recomputed(
        items in proptest::collection::vec(arb_facts(), 1..60),
        extra in arb_facts(),
        at in 0usize..60,
        remove in any::<bool>(),
    ) {
        let mut ix = ContextIndex::default();
        for item in &items {
            ix.push(*item);
        }
        if remove {
            ix.remove(at % items.len(), no_fill).unwrap();
        } else {
            ix.insert(at % (items.len() + 1), extra, no_fill).unwrap();
        }
        prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }

    #[test]
    fn incremental_equals_recomputed(
        items in proptest::collection::vec(arb_facts(), 0..60),
        cut in 0usize..60,
    ) {
        let mut ix = ContextIndex::default();
        for (k, item) in items.iter().enumerate() {
            ix.push(*item);
            prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed(), "after {} pushes", k + 1);
        }
        ix.truncate(cut, no_fill).unwrap();
        prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }

    #[test]
    fn bounded_edits_answer_as_measured_ones(
        (facts, exact) in arb_session(),
        summary in arb_facts(),
        at in 0usize..60,
        edit in 0u8..4,
        late in any::<bool>(),
        other in arb_facts(),
        after in proptest::collection::vec(arb_facts(), 0..4),
        offsets in proptest::collection::vec(-3000.0f64..3000.0, 1..6),
    ) {
        // The same edits, once measuring everything, once bounded.
        let mut exact = exact;
        let mut measured = ContextIndex::default();
        let mut bounded = ContextIndex::default();
        let mut asked = Vec::new();
        for m in &facts {
            measured.push_with(*m, measure(&exact, &mut asked)).unwrap();
            bounded.push_with(*m, measure(&exact, &mut asked)).unwrap();
        }
        // Late: stamped after every message, so every kept usage is stale.
        let stamp = summary.timestamp + if late { 100.0 } else { 0.0 };
        let summary = f(Role::CompactionSummary, u64::from(summary.tokens), None, stamp);
        let at = at % (facts.len() + 1);
        match edit {
            0 => {
                exact.insert(at, u64::from(summary.tokens));
                measured.insert(at, summary, measure(&exact, &mut asked)).unwrap();
                bounded.insert_bounded(at, summary);
            }
            1 => {
                let at = at % facts.len();
                exact.remove(at);
                measured.remove(at, measure(&exact, &mut asked)).unwrap();
                bounded.remove_bounded(at);
            }
            2 => {
                // Replaced in place: a summary or another message.
                let at = at % facts.len();
                // Measured as a removal, then an insertion, each against
                // the estimates of the array it leaves.
                let new = if late { summary } else { other };
                let mut without = exact.clone();
                without.remove(at);
                exact[at] = u64::from(new.tokens);
                measured.remove(at, measure(&without, &mut asked)).unwrap();
                measured.insert(at, new, measure(&exact, &mut asked)).unwrap();
                bounded.replace_bounded([(at, new)]);
            }
            _ => {
                exact.truncate(at);
                measured.truncate(at, measure(&exact, &mut asked)).unwrap();
                bounded.truncate_bounded(at);
            }
        }
        prop_assert_eq!(measured.unmeasured(), 0);
        for m in &after {
            exact.push(u64::from(m.tokens));
            measured.push_with(*m, measure(&exact, &mut asked)).unwrap();
            bounded.push_with(*m, measure(&exact, &mut asked)).unwrap();
        }
        let truth = measured.context_tokens();
        prop_assert!(bounded.context_tokens().tokens <= truth.tokens || truth.tokens.is_nan());
        // Thresholds near the number, where the bounds leave it open.
        for th in offsets.iter().map(|o| truth.tokens + o.round()) {
            let mut b = bounded.clone();
            prop_assert_eq!(b.exceeds(th, measure(&exact, &mut asked)).unwrap(), truth.tokens > th, "threshold {}", th);
            prop_assert_eq!(b.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
        }
        prop_assert_eq!(bounded.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
        prop_assert_eq!(bounded.context_tokens(), bounded.context_tokens_recomputed());
    }
}
