//! What changed between the array an adapter last saw (`known`) and the
//! one it is handed now, by object identity (messages are immutable,
//! SPEC §1): the one classification of an edit of the flat array, which the
//! `Compactor`'s index and the store's save both apply.
//!
//! Object identity is only visible to JavaScript, so the binding's shim
//! scans the two arrays once (`identityFacts`) and hands over
//! [`IdentityFacts`]: how many leading messages are the same objects, and
//! for the rest, which objects are the same, as *classes* (the index of an
//! object's first occurrence in `known[prefix..]`). [`edit`] makes the
//! [`Edit`] from them: which messages of the new array are inserted and
//! which known ones are removed (what a store writes, and what it checks
//! before it drops anything), and [`Edit::change`] says which of the
//! shapes an index follows cheaply it is: appended from `i`, one inserted at
//! `d`, some removed, some replaced one for one in place (a message the app
//! edited or pinned by replacing its object, wherever it lies: before the
//! last summary too), or replaced from `d` on. A turn (the known array plus
//! new messages at its end) has a prefix as long as the known array and no
//! classes at all, so its facts cost nothing to cross the boundary; the
//! `Compactor` does not even ask on a turn, its shim checks that case on
//! its own.

/// What the identity scan found. `known_class[i]` is the class of
/// `known[prefix + i]`, `new_class[j]` the class of `new[prefix + j]`, or a
/// negative number when that object is not in `known[prefix..]`. Two
/// messages are the same object exactly when their classes are equal and
/// not negative.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IdentityFacts {
    pub prefix: usize,
    pub known_len: usize,
    pub new_len: usize,
    pub known_class: Vec<i32>,
    pub new_class: Vec<i32>,
}

impl IdentityFacts {
    /// The facts from the shim's identity scan's words:
    /// `[prefix]` when the known array is a prefix of the new one, else
    /// `[prefix, class of each known[prefix..], class of each new[prefix..]]`,
    /// for a known array of `known_len` and a new one of `new_len`.
    pub fn from_words(words: &[i32], known_len: usize, new_len: usize) -> IdentityFacts {
        let prefix = words.first().map_or(0, |&p| p.max(0) as usize);
        let rest = words.get(1..).unwrap_or(&[]);
        let split = known_len.saturating_sub(prefix).min(rest.len());
        IdentityFacts {
            prefix,
            known_len,
            new_len,
            known_class: rest[..split].to_vec(),
            new_class: rest[split..].to_vec(),
        }
    }
}

/// Why the facts cannot be turned into an edit (a shim bug, never bad
/// input).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("inconsistent identity facts: {0}")]
pub struct BadFacts(&'static str);

/// The edit from `known` to the new array. Messages are matched in order:
/// a message of the new array that is the next known one is kept; one that
/// is a later known one removes the known ones before it (that a caller
/// dropped, e.g. a failed attempt); any other is inserted. So a removal in
/// the middle costs only the messages removed, and an object that appears
/// twice is matched at its first place.
pub fn edit(facts: &IdentityFacts) -> Result<Edit, BadFacts> {
    let IdentityFacts {
        prefix: p,
        known_len: m,
        new_len: n,
        ..
    } = *facts;
    if p > m || p > n {
        return Err(BadFacts("the prefix is longer than an array"));
    }
    // A turn: the known messages, then new ones.
    if p == m {
        return Ok(Edit {
            inserted: (m..n).collect(),
            removed: Vec::new(),
        });
    }
    if facts.known_class.len() != m - p || facts.new_class.len() != n - p {
        return Err(BadFacts("a class list has the wrong length"));
    }
    let class = |c: i32| usize::try_from(c).ok().filter(|&c| c < m - p);
    if facts.known_class.iter().any(|&c| class(c).is_none())
        || facts
            .new_class
            .iter()
            .any(|&c| c >= 0 && class(c).is_none())
    {
        return Err(BadFacts("a class is out of range"));
    }
    let mut inserted = Vec::new();
    let mut removed = Vec::new();
    // `i`: the next known message not yet matched (relative to the prefix).
    let mut i = 0;
    for (j, &c) in facts.new_class.iter().enumerate() {
        if i < m - p && c >= 0 && facts.known_class[i] == c {
            i += 1;
            continue;
        }
        // The class is the object's first place in known[prefix..].
        match class(c) {
            Some(k) if k > i => {
                removed.extend(p + i..p + k);
                i = k + 1;
            }
            _ => inserted.push(p + j),
        }
    }
    removed.extend(p + i..m);
    Ok(Edit { inserted, removed })
}

/// How the new array relates to the known one: indices of new messages in
/// the new array, and indices of messages of the known array that are gone;
/// everything else is the same messages in the same order. Both lists
/// ascending.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edit {
    pub inserted: Vec<usize>,
    pub removed: Vec<usize>,
}

impl Edit {
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty() && self.removed.is_empty()
    }

    /// The new index of old message `k`, unless it was removed.
    pub fn new_index(&self, k: usize) -> Option<usize> {
        if self.removed.binary_search(&k).is_ok() {
            return None;
        }
        // k - removed before it, then past the inserted ones up to it.
        Some(shift_past(
            k - self.removed.partition_point(|&r| r < k),
            &self.inserted,
        ))
    }

    /// The old index of new message `j`, unless it was inserted.
    pub fn old_index(&self, j: usize) -> Option<usize> {
        if self.inserted.binary_search(&j).is_ok() {
            return None;
        }
        Some(shift_past(
            j - self.inserted.partition_point(|&i| i < j),
            &self.removed,
        ))
    }
}

/// `rank` (a kept message's place among the kept ones) as an index of the
/// array that also holds `others` (ascending): one more for each of them at
/// or before it.
fn shift_past(rank: usize, others: &[usize]) -> usize {
    let mut at = rank;
    for &o in others {
        if o <= at {
            at += 1;
        } else {
            break;
        }
    }
    at
}

/// An [`Edit`] as the shapes an index of the known array follows without
/// re-reading what it kept (the `Compactor`'s `ContextIndex`). Every shape
/// but `Swapped` and `Replaced` keeps every known message that is not
/// removed; `Swapped` keeps every other one in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change<'a> {
    /// The known messages, then new ones from `from` (the known length) on:
    /// a turn.
    Appended { from: usize },
    /// One new message at `at`, below the known length (a compaction's
    /// summary), then new ones from `from` (the known length + 1) on.
    Inserted { at: usize, from: usize },
    /// The known messages at `removed` (ascending, one to
    /// [`REMOVED_ONE_BY_ONE`], the last known one not among them) gone (a
    /// failed attempt, an undone summary), then new ones from `from` (the
    /// known length less the removed ones) on.
    Removed { removed: &'a [usize], from: usize },
    /// The known messages at `at` (ascending, one to
    /// [`REMOVED_ONE_BY_ONE`]) replaced one for one by new objects in the
    /// same places, every other known message kept where it was (a message
    /// edited, pinned or unpinned by replacing its object, anywhere in the
    /// array), then new ones from `from` (the known length) on: the index
    /// reads the replacements alone.
    Swapped { at: &'a [usize], from: usize },
    /// The same messages up to `at`, and from `at` on, anything (messages
    /// replaced by new objects, reordered, cut back: a trailing failed
    /// attempt removed, a retry in its place): the index is cut back to `at`
    /// and reads the rest as new.
    Replaced { at: usize },
}

/// The most removals [`Change::Removed`] and replacements
/// [`Change::Swapped`] stand for: an index takes them out (each moves what
/// follows) or reads them one by one, so more than a few are cheaper as a
/// cut back to the first and the rest read again.
pub const REMOVED_ONE_BY_ONE: usize = 8;

impl Edit {
    /// The shape of this edit of a known array of `known_len` messages.
    pub fn change(&self, known_len: usize) -> Change<'_> {
        let m = known_len;
        let trailing =
            |from: usize, list: &[usize]| list.iter().copied().eq(from..from + list.len());
        match (self.inserted.split_first(), self.removed.is_empty()) {
            (None, true) => Change::Appended { from: m },
            (Some(_), true) if trailing(m, &self.inserted) => Change::Appended { from: m },
            (Some((&at, rest)), true) if at < m && trailing(m + 1, rest) => {
                Change::Inserted { at, from: m + 1 }
            }
            (_, false)
                if self.removed.len() <= REMOVED_ONE_BY_ONE
                    && self.removed.last() != Some(&(m - 1))
                    && trailing(m - self.removed.len(), &self.inserted) =>
            {
                Change::Removed {
                    removed: &self.removed,
                    from: m - self.removed.len(),
                }
            }
            (Some(_), false)
                if self.removed.len() <= REMOVED_ONE_BY_ONE
                    && self.inserted.starts_with(&self.removed)
                    && trailing(m, &self.inserted[self.removed.len()..]) =>
            {
                Change::Swapped {
                    at: &self.removed,
                    from: m,
                }
            }
            _ => Change::Replaced {
                at: self.kept_prefix(m),
            },
        }
    }

    /// How many leading messages are kept, in place: the first index the
    /// edit touches (`known_len` when it only appends).
    pub fn kept_prefix(&self, known_len: usize) -> usize {
        let first = |l: &[usize]| l.first().copied().unwrap_or(usize::MAX);
        known_len
            .min(first(&self.inserted))
            .min(first(&self.removed))
    }
}

/// The identity scan as the shim makes it (`identityFacts`), over arrays of
/// object ids: the tests' way to make facts.
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod scan {
    use super::IdentityFacts;

    /// `known` after `ops`, each `(op, at, id)`: 0 inserts `id` at `at`,
    /// 1 removes at `at`, 2 replaces at `at` by `id`, 3 cuts back to `at`,
    /// anything else appends `id` (`at` clamped to the length): the
    /// property tests' random edits.
    pub fn edited(known: &[u32], ops: &[(u8, usize, u32)]) -> Vec<u32> {
        let mut new = known.to_vec();
        for &(op, at, x) in ops {
            let at = at.min(new.len());
            match op {
                0 => new.insert(at, x),
                1 if at < new.len() => {
                    new.remove(at);
                }
                2 if at < new.len() => new[at] = x,
                3 => new.truncate(at),
                _ => new.push(x),
            }
        }
        new
    }

    pub fn facts(known: &[u32], new: &[u32]) -> IdentityFacts {
        let m = known.len();
        let n = new.len();
        let mut p = 0;
        while p < m.min(n) && known[p] == new[p] {
            p += 1;
        }
        let first = |x: u32| {
            (p..m)
                .find(|&k| known[k] == x)
                .map_or(-1, |k| (k - p) as i32)
        };
        let sure = p == m;
        IdentityFacts {
            prefix: p,
            known_len: m,
            new_len: n,
            known_class: if sure {
                vec![]
            } else {
                known[p..].iter().map(|&x| first(x)).collect()
            },
            new_class: if sure {
                vec![]
            } else {
                new[p..].iter().map(|&x| first(x)).collect()
            },
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
