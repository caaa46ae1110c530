//! The books of the `convertToLlm` hook: which outputs made for the inputs
//! seen so far are kept and which inputs are converted again, so that a
//! turn converts only its new messages.
//!
//! Outputs follow inputs in order (an input gives one output or none), so
//! the books are the output count after each input. They hold up to the
//! first input an edit touches. Two changes reach further back: a context
//! that moved forward to a new summary (the adapter's scan found the known
//! inputs from `p` on after a new first message) keeps the outputs of those
//! inputs and drops the ones before them; and a `toolOutputCleared` marker
//! appended, or one perhaps taken out or moved by an edit, changes which
//! earlier tool results go as placeholders, so everything is converted
//! again (once per clearing or undo).
//!
//! No I/O: the adapter scans the arrays, reads and converts messages and
//! keeps the outputs, through [`Converter`].

use crate::compaction::clearing::ClearedOutputs;
use crate::conversation::tracker::Synced;
use crate::error::InputError;
use crate::message::role::Role;

/// What the books drive in the adapter.
pub trait Converter {
    type Message;
    /// Compares the inputs with the known ones (`trusted`: the known part
    /// is the context the tracker last produced and needs no identity
    /// check) and brings the known ones in line: how they differ, and
    /// where the context moved forward to a new summary (`p` ≥ 1: the known
    /// inputs from `p` on follow the new first one; 0: it did not).
    fn scan(&mut self, trusted: bool) -> Result<(Synced, usize), InputError>;
    /// `messages[from..]` and their roles.
    fn read(&mut self, from: usize) -> Result<Vec<(Self::Message, Role)>, InputError>;
    /// Every message and its role, and the tool outputs the markers among
    /// them clear.
    fn read_all(&mut self) -> Result<Fresh<Self::Message>, InputError>;
    /// Converts `message` (at `index`) and appends its output, if it has
    /// one; whether it had.
    fn convert(
        &mut self,
        message: &Self::Message,
        index: usize,
        role: Role,
        cleared: &ClearedOutputs<Vec<u16>>,
    ) -> Result<bool, InputError>;
    /// Converts the first message, and puts its output, if it has one, in
    /// place of the first `dropped` outputs; whether it had one.
    fn rebase(
        &mut self,
        dropped: u32,
        cleared: &ClearedOutputs<Vec<u16>>,
    ) -> Result<bool, InputError>;
    /// Cuts the outputs back to `len`.
    fn truncate(&mut self, len: u32);
}

/// Messages and roles, with what the markers among them clear.
pub type Fresh<M> = (Vec<(M, Role)>, ClearedOutputs<Vec<u16>>);

/// See the module's doc.
#[derive(Default)]
pub struct LlmBooks {
    /// The output count after converting input `i`.
    out_len_at: Vec<u32>,
    /// The tracker's generation the known inputs were last in line with,
    /// when they were the context the tracker produced.
    generation: Option<u32>,
    /// The tool outputs the markers among the known inputs clear.
    cleared: ClearedOutputs<Vec<u16>>,
}

impl LlmBooks {
    /// Brings the outputs in line with the inputs and returns how many
    /// there are. `is_context`: the inputs are the context the tracker
    /// produced at `generation` (then, if the books were in line with such
    /// a context of the same generation, no identity check is needed). On
    /// an error the books start over: the adapter must forget its known
    /// inputs and outputs. Inlined, with what it calls: this is every
    /// turn's path, and the release build optimizes for size.
    #[inline]
    pub fn convert<C: Converter>(
        &mut self,
        c: &mut C,
        is_context: bool,
        generation: u32,
    ) -> Result<u32, InputError> {
        let trusted = is_context && self.generation == Some(generation);
        let result = self.bring_in_line(c, trusted);
        match result {
            Ok(_) => self.generation = is_context.then_some(generation),
            Err(_) => self.start_over(),
        }
        result
    }

    /// Forgets everything: the next inputs are all converted.
    pub fn start_over(&mut self) {
        *self = LlmBooks::default();
    }

    #[inline]
    fn bring_in_line<C: Converter>(&mut self, c: &mut C, trusted: bool) -> Result<u32, InputError> {
        let (change, rebased) = c.scan(trusted)?;
        let moved = rebased >= 1;
        if moved {
            // Keep the outputs of known[p..], put the new first one's in
            // front of them.
            let dropped = self.out_len_at.get(rebased - 1).copied().unwrap_or(0);
            let added = u32::from(c.rebase(dropped, &self.cleared)?);
            let kept = self.out_len_at.get(rebased..).unwrap_or(&[]);
            let mut lens = Vec::with_capacity(kept.len() + 1);
            lens.push(added);
            lens.extend(kept.iter().map(|&n| n - dropped + added));
            self.out_len_at = lens;
        }
        let mut from = change.kept_prefix();
        let mut fresh = c.read(from)?;
        if fresh.iter().any(|(_, r)| *r == Role::ToolOutputCleared)
            || ((change.is_edit() || moved) && !self.cleared.is_empty())
        {
            let (all, cleared) = c.read_all()?;
            self.cleared = cleared;
            fresh = all;
            from = 0;
        }
        if from < self.out_len_at.len() {
            self.out_len_at.truncate(from);
            c.truncate(self.out_len());
        }
        let mut out_len = self.out_len();
        for (i, (message, role)) in (from..).zip(fresh) {
            if c.convert(&message, i, role, &self.cleared)? {
                out_len += 1;
            }
            self.out_len_at.push(out_len);
        }
        Ok(out_len)
    }

    fn out_len(&self) -> u32 {
        self.out_len_at.last().copied().unwrap_or(0)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
