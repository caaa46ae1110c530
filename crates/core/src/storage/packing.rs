//! Which messages share a record: the layout of a session's message
//! records and what a save writes to keep it.
//!
//! A save writes each new message as a record of its own: its cost is what
//! changed. But reading many small records costs more than their bytes (in
//! Chromium, 362 one-message records take longer to read than one record of
//! 630 messages), and bigger records read faster still. So records are
//! merged as a session grows, in two steps, as a log-structured store does:
//!
//! - once [`SMALL`] + [`LOOSE`] messages after the last pack are loose, the
//!   save that gets there also writes the oldest [`SMALL`] of them as one
//!   *pack* record (an array of messages under the key of its first) and
//!   deletes their own records;
//! - once [`MERGE`] small packs follow the last big one, an appending save
//!   also writes them as one big pack (about [`SMALL`] × [`MERGE`] messages)
//!   and deletes them.
//!
//! All in the save's own transaction. A message is thus written at most
//! three times in its life; a turn's save writes at most one small and one
//! big pack besides what changed; a load reads about one record per big pack
//! plus fewer than [`MERGE`] small packs and [`SMALL`] + [`LOOSE`] loose
//! messages. The newest [`LOOSE`] messages or more stay loose, so that
//! dropping a trailing failed attempt deletes a record of its own. An array
//! written whole (a large first save, a fork, an import) is laid out in big
//! packs at once.
//!
//! An edit inside a pack (a `compactionSummary` inserted between two of its
//! messages, one of its messages removed) rewrites that pack under its own
//! key with its messages after the edit, split in two where the LLM context
//! now starts (or else where the first inserted message goes), so that the
//! context's start always begins a record. Packs an edit does not touch are
//! never rewritten.
//!
//! Indices here are message indices: `old` ones in the array the store last
//! saved or loaded, `new` ones in the array being saved.

use crate::storage::save_plan::Edit;

/// Messages per small pack.
pub const SMALL: usize = 32;
/// Small packs per big pack.
pub const MERGE: usize = 4;
/// Messages per big pack written at once.
pub const BIG: usize = SMALL * MERGE;
/// The newest messages always left in records of their own.
pub const LOOSE: usize = 4;

/// Whether a pack counts as big (merged, or written whole).
fn is_big(len: usize) -> bool {
    len > 2 * SMALL
}

/// A pack record's messages: (first index, count).
pub type Pack = (usize, usize);

/// Whose key a written pack record is stored under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOf {
    /// The record key of old message `k` (its pack's, or its own).
    Old(usize),
    /// The new key of inserted message `j` (new index).
    Inserted(usize),
    /// A new key between the record before this pack (the first part of a
    /// split pack, already keyed) and the record after it.
    Split,
}

/// A pack record to put: new messages `[start, start + len)` under `key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackPut {
    pub start: usize,
    pub len: usize,
    pub key: KeyOf,
}

/// What a save writes, besides the session record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The packs of the new array, in order.
    pub packs: Vec<Pack>,
    /// Pack records to put (rewritten or new), in order.
    pub pack_puts: Vec<PackPut>,
    /// Inserted messages (new indices) that get records of their own.
    pub singles: Vec<usize>,
    /// Old messages whose record is deleted (the first message of a pack
    /// that is gone entirely, a removed loose message), in no set order.
    pub deletes: Vec<usize>,
    /// Old loose messages folded into a new pack: their records are every
    /// record with a key from old message `a`'s to old message `b`'s,
    /// inclusive, and are deleted before the pack is put.
    pub delete_ranges: Vec<(usize, usize)>,
}

/// The pack holding message `i` in `packs` (sorted): its index.
pub fn pack_of(packs: &[Pack], i: usize) -> Option<usize> {
    let p = packs.partition_point(|&(s, _)| s <= i);
    (p > 0 && i < packs[p - 1].0 + packs[p - 1].1).then(|| p - 1)
}

/// Where message `i` sits in its record: 0 for a loose message, its place
/// in the pack otherwise.
pub fn slot_of(packs: &[Pack], i: usize) -> usize {
    pack_of(packs, i).map_or(0, |p| i - packs[p].0)
}

/// The layout of a session of `len` messages written whole (a fork, an
/// import) whose context starts at `context`: as a first save of them lays
/// them out.
pub fn initial(len: usize, context: Option<usize>) -> Vec<Pack> {
    let all = Edit {
        inserted: (0..len).collect(),
        removed: Vec::new(),
    };
    plan(0, &[], false, &all, len, context).packs
}

/// Plans a save. `old_packs` is the old array's layout; `partial_first`
/// says its first pack's record also holds messages before the old array
/// (the array came from `loadContext`), so it must be rewritten if kept.
/// `edit` relates the old array (`old_len`) to the new one (`new_len`).
/// `context` is where the LLM context starts in the new array (its last
/// `compactionSummary`): a record written by this save never holds it
/// after another message, so `loadContext` reads nothing before it.
pub fn plan(
    old_len: usize,
    old_packs: &[Pack],
    partial_first: bool,
    edit: &Edit,
    new_len: usize,
    context: Option<usize>,
) -> Layout {
    let appended = edit.removed.is_empty() && edit.inserted.first().is_none_or(|&j| j >= old_len);
    let mut layout = if appended && !(partial_first && old_packs.first().is_some_and(|p| p.0 == 0))
    {
        let mut layout = Layout {
            packs: old_packs.to_vec(),
            singles: edit.inserted.clone(),
            ..Layout::default()
        };
        merge(&mut layout, context);
        layout
    } else {
        edited(old_len, old_packs, partial_first, edit, context)
    };
    fold(&mut layout, edit, new_len, context);
    layout
}

/// The small packs that may still merge: those after the last big pack
/// and not before the context's start (where they start in `packs`).
fn first_small(packs: &[Pack], context: Option<usize>) -> usize {
    let after_big = packs
        .iter()
        .rposition(|&(_, l)| is_big(l))
        .map_or(0, |p| p + 1);
    let after_context = context.map_or(0, |c| packs.partition_point(|&(s, _)| s < c));
    after_big.max(after_context)
}

/// Merges [`MERGE`] small packs after the last big one (and from the
/// context's start on) into one big pack (an appending save: old and new
/// indices of packs are the same). Loose messages between them go in too.
fn merge(layout: &mut Layout, context: Option<usize>) {
    let from = first_small(&layout.packs, context);
    if layout.packs.len() - from < MERGE {
        return;
    }
    let group = &layout.packs[from..from + MERGE];
    let (start, first_len) = group[0];
    let (last_start, last_len) = group[MERGE - 1];
    let len = last_start + last_len - start;
    // Every record from the message after the first pack to the last
    // pack's (keyed by its first message).
    layout.delete_ranges.push((start + first_len, last_start));
    layout.pack_puts.push(PackPut {
        start,
        len,
        key: KeyOf::Old(start),
    });
    layout.packs[from] = (start, len);
    for _ in 1..MERGE {
        layout.packs.remove(from + 1);
    }
}

/// The general case: packs mapped through the edit, the touched ones
/// rewritten.
fn edited(
    old_len: usize,
    old_packs: &[Pack],
    partial_first: bool,
    edit: &Edit,
    context: Option<usize>,
) -> Layout {
    const GONE: usize = usize::MAX;
    // The new index of every old message (GONE when removed).
    let mut new_of_old = vec![GONE; old_len];
    let (mut r, mut ins, mut j) = (0, 0, 0);
    for (k, slot) in new_of_old.iter_mut().enumerate() {
        if edit.removed.get(r) == Some(&k) {
            r += 1;
            continue;
        }
        while edit.inserted.get(ins) == Some(&j) {
            ins += 1;
            j += 1;
        }
        *slot = j;
        j += 1;
    }
    let mut layout = Layout::default();
    for (p, &(s, len)) in old_packs.iter().enumerate() {
        let survivors = new_of_old[s..s + len].iter().filter(|&&n| n != GONE);
        let first = survivors.clone().next().copied();
        let last = survivors.clone().next_back().copied();
        let count = survivors.count();
        let (Some(first), Some(last)) = (first, last) else {
            layout.deletes.push(s);
            continue;
        };
        let span = last - first + 1;
        if count != len || span != count || (p == 0 && s == 0 && partial_first) {
            // The context's start inside it, or else the first message
            // inserted inside (a summary at a cut), starts a record of its
            // own with the pack's messages after it, so that a load from
            // there reads nothing before it.
            let at = edit.inserted.partition_point(|&j| j <= first);
            let split = context
                .filter(|&c| c > first && c <= last)
                .or_else(|| edit.inserted.get(at).copied().filter(|&j| j <= last));
            let (a, b) = match split {
                Some(j) => ((first, j - first), Some((j, last + 1 - j))),
                None => ((first, span), None),
            };
            layout.packs.push(a);
            layout.pack_puts.push(PackPut {
                start: a.0,
                len: a.1,
                key: KeyOf::Old(s),
            });
            if let Some((start, len)) = b {
                layout.packs.push((start, len));
                layout.pack_puts.push(PackPut {
                    start,
                    len,
                    key: KeyOf::Split,
                });
            }
        } else {
            layout.packs.push((first, span));
        }
    }
    let packs = &layout.packs;
    layout.singles = edit
        .inserted
        .iter()
        .copied()
        .filter(|&j| pack_of(packs, j).is_none())
        .collect();
    layout.deletes.extend(
        edit.removed
            .iter()
            .copied()
            .filter(|&k| pack_of(old_packs, k).is_none()),
    );
    layout
}

/// Folds the loose messages after the last pack into packs: inserted ones
/// in big packs while they fill one and nothing small is pending, then the
/// oldest [`SMALL`] at a time while [`SMALL`] + [`LOOSE`] are loose.
fn fold(layout: &mut Layout, edit: &Edit, new_len: usize, context: Option<usize>) {
    let mut start = layout.packs.last().map_or(0, |&(s, l)| s + l);
    if new_len.saturating_sub(start) < SMALL + LOOSE {
        return;
    }
    // Whether new messages [j, j + n) are all inserted ones.
    let all_inserted = |j: usize, n: usize| {
        let p = edit.inserted.partition_point(|&i| i < j);
        edit.inserted.get(p) == Some(&j) && edit.inserted.get(p + n - 1) == Some(&(j + n - 1))
    };
    while new_len - start >= SMALL + LOOSE {
        let nothing_small = first_small(&layout.packs, context) == layout.packs.len();
        let len = if nothing_small
            && new_len - start >= BIG + SMALL + LOOSE
            && all_inserted(start, BIG)
        {
            BIG
        } else {
            SMALL
        };
        // The context's start begins a record.
        let len = match context {
            Some(c) if c > start && c < start + len => c - start,
            _ => len,
        };
        let end = start + len;
        let key = match edit.old_index(start) {
            Some(k) => KeyOf::Old(k),
            None => KeyOf::Inserted(start),
        };
        let mut olds = (start + 1..end).filter_map(|j| edit.old_index(j));
        if let Some(a) = olds.next() {
            layout
                .delete_ranges
                .push((a, olds.next_back().unwrap_or(a)));
        }
        layout.singles.retain(|&j| j < start || j >= end);
        layout.packs.push((start, len));
        layout.pack_puts.push(PackPut { start, len, key });
        start = end;
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
