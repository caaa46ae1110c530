//! The `convertToLlm` books: after any sequence of inputs the outputs are
//! what converting the last input from scratch gives, and only what each
//! change needs is converted again.

use super::*;
use crate::conversation::edit::scan::facts;
use crate::error::FieldPath;

/// Messages by id: 200 and up are `toolOutputCleared` markers listing the
/// tool call `id - 200`, ids ending in 0 have no output, the rest are tool
/// results whose call id is their own id.
fn role(id: u32) -> Role {
    if id >= 200 {
        Role::ToolOutputCleared
    } else {
        Role::ToolResult
    }
}

fn call_id(id: u32) -> Vec<u16> {
    id.to_string().encode_utf16().collect()
}

/// The output of `id` at `index` with `cleared`, as the adapter makes it.
fn output(id: u32, index: usize, cleared: &ClearedOutputs<Vec<u16>>) -> Option<String> {
    if role(id) == Role::ToolOutputCleared || id.is_multiple_of(10) {
        return None;
    }
    Some(match cleared.cleared(&call_id(id), index) {
        Some(_) => format!("cleared {id}"),
        None => format!("{id}"),
    })
}

fn cleared_by(ids: &[u32]) -> ClearedOutputs<Vec<u16>> {
    let mut cleared = ClearedOutputs::default();
    for (i, &id) in ids.iter().enumerate() {
        if role(id) == Role::ToolOutputCleared {
            cleared.add_marker(i, vec![call_id(id - 200)], None);
        }
    }
    cleared
}

/// Every output of `ids` converted from scratch.
fn from_scratch(ids: &[u32]) -> Vec<String> {
    let cleared = cleared_by(ids);
    (0..ids.len())
        .filter_map(|i| output(ids[i], i, &cleared))
        .collect()
}

#[derive(Debug, PartialEq)]
enum Call {
    Scan { trusted: bool },
    Rebase { dropped: u32 },
    Convert(usize),
    ReadAll,
}

/// The adapter: its known inputs and outputs, the inputs of this call,
/// and a log.
#[derive(Default)]
struct Adapter {
    known: Vec<u32>,
    out: Vec<String>,
    messages: Vec<u32>,
    log: Vec<Call>,
    /// Converting this id fails.
    failing: Option<u32>,
}

impl Converter for Adapter {
    type Message = u32;

    /// The shim's scan: a context that moved to a new summary rebased
    /// first, then the known inputs compared with the new ones.
    fn scan(&mut self, trusted: bool) -> Result<(Synced, usize), InputError> {
        self.log.push(Call::Scan { trusted });
        let (k, m) = (&mut self.known, &self.messages);
        let mut p = 0;
        if m.len() >= 2 && k.len() >= 2 && m[0] != k[0] {
            if let Some(at) = k.iter().position(|&x| x == m[1]).filter(|&at| at >= 1) {
                let upto = (m.len() - 1).min(k.len() - at);
                if (1..upto).all(|j| m[1 + j] == k[at + j]) {
                    k.splice(0..at, [m[0]]);
                    p = at;
                }
            }
        }
        let f = facts(k, m);
        let synced = if f.prefix == k.len() {
            Synced::Appended(k.len())
        } else {
            let mut words = vec![f.prefix as i32];
            words.extend(&f.known_class);
            words.extend(&f.new_class);
            Synced::from_scan(k.len(), Some(&words), m.len())?
        };
        *k = m.clone();
        Ok((synced, p))
    }

    fn read(&mut self, from: usize) -> Result<Vec<(u32, Role)>, InputError> {
        Ok(self.messages[from..]
            .iter()
            .map(|&id| (id, role(id)))
            .collect())
    }

    fn read_all(&mut self) -> Result<Fresh<u32>, InputError> {
        self.log.push(Call::ReadAll);
        Ok((self.read(0)?, cleared_by(&self.messages)))
    }

    fn convert(
        &mut self,
        &id: &u32,
        index: usize,
        _: Role,
        cleared: &ClearedOutputs<Vec<u16>>,
    ) -> Result<bool, InputError> {
        self.log.push(Call::Convert(index));
        if self.failing == Some(id) {
            return Err(InputError::Unreadable {
                path: FieldPath::element("messages", index),
                reason: "a getter threw".into(),
            });
        }
        let out = output(id, index, cleared);
        let had = out.is_some();
        self.out.extend(out);
        Ok(had)
    }

    fn rebase(
        &mut self,
        dropped: u32,
        cleared: &ClearedOutputs<Vec<u16>>,
    ) -> Result<bool, InputError> {
        self.log.push(Call::Rebase { dropped });
        let first = output(self.messages[0], 0, cleared);
        let had = first.is_some();
        self.out.splice(0..dropped as usize, first);
        Ok(had)
    }

    fn truncate(&mut self, len: u32) {
        self.out.truncate(len as usize);
    }
}

/// Converts `ids` (not as the tracker's context) and checks the outputs;
/// returns what this call did.
fn step(books: &mut LlmBooks, a: &mut Adapter, ids: &[u32]) -> Vec<Call> {
    step_as(books, a, ids, false, 0)
}

fn step_as(
    books: &mut LlmBooks,
    a: &mut Adapter,
    ids: &[u32],
    is_context: bool,
    generation: u32,
) -> Vec<Call> {
    a.messages = ids.to_vec();
    a.log.clear();
    let len = books.convert(a, is_context, generation).unwrap();
    assert_eq!(a.out, from_scratch(ids), "{ids:?}");
    assert_eq!(len as usize, a.out.len());
    std::mem::take(&mut a.log)
}

fn converted(log: &[Call]) -> Vec<usize> {
    log.iter()
        .filter_map(|c| match c {
            Call::Convert(i) => Some(*i),
            _ => None,
        })
        .collect()
}

#[test]
fn a_turn_converts_only_its_new_messages() {
    let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
    assert_eq!(converted(&step(&mut books, &mut a, &[1, 2, 10])), [0, 1, 2]);
    assert_eq!(
        converted(&step(&mut books, &mut a, &[1, 2, 10, 3, 4])),
        [3, 4]
    );
    assert_eq!(
        converted(&step(&mut books, &mut a, &[1, 2, 10, 3, 4])),
        [] as [usize; 0]
    );
}

#[test]
fn an_edit_converts_from_the_first_message_it_touches() {
    let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
    step(&mut books, &mut a, &[1, 2, 3, 4, 5]);
    // 3 replaced by 6: outputs of 1 and 2 kept.
    assert_eq!(
        converted(&step(&mut books, &mut a, &[1, 2, 6, 4, 5])),
        [2, 3, 4]
    );
    // Cut back: nothing converted, outputs cut.
    assert_eq!(
        converted(&step(&mut books, &mut a, &[1, 2])),
        [] as [usize; 0]
    );
    // A message inserted before one with no output.
    step(&mut books, &mut a, &[1, 10, 2]);
    assert_eq!(
        converted(&step(&mut books, &mut a, &[1, 7, 10, 2])),
        [1, 2, 3]
    );
}

#[test]
fn a_context_moved_to_a_new_summary_keeps_the_outputs_it_goes_on_with() {
    let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
    step(&mut books, &mut a, &[1, 2, 10, 3, 4, 5]);
    // The new context: a summary (11), then known[3..], then a new one.
    let log = step(&mut books, &mut a, &[11, 3, 4, 5, 6]);
    // known[..3] gave two outputs (10 has none): dropped.
    assert_eq!(log[1], Call::Rebase { dropped: 2 });
    assert_eq!(converted(&log), [4]);
    // A summary with no output in front.
    step(&mut books, &mut a, &[11, 3, 4, 5, 6, 8]);
    let log = step(&mut books, &mut a, &[20, 5, 6, 8, 9]);
    assert_eq!(log[1], Call::Rebase { dropped: 3 });
    assert_eq!(converted(&log), [4]);
}

#[test]
fn a_marker_added_or_touched_converts_everything_again() {
    let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
    step(&mut books, &mut a, &[1, 2, 3]);
    // A marker appended clears an earlier output: all converted again.
    let log = step(&mut books, &mut a, &[1, 2, 3, 202]);
    assert!(log.contains(&Call::ReadAll));
    assert_eq!(converted(&log), [0, 1, 2, 3]);
    // A turn after it: only the new message.
    assert_eq!(
        converted(&step(&mut books, &mut a, &[1, 2, 3, 202, 4])),
        [4]
    );
    // An edit while markers are known (the marker taken out): all again.
    let log = step(&mut books, &mut a, &[1, 2, 3, 4]);
    assert_eq!(converted(&log), [0, 1, 2, 3]);
    // No marker left: an edit converts from where it touches.
    assert_eq!(converted(&step(&mut books, &mut a, &[1, 2, 5])), [2]);
    // A moved context while markers are known: all again.
    step(&mut books, &mut a, &[1, 2, 5, 203, 6, 7]);
    let log = step(&mut books, &mut a, &[11, 6, 7, 8]);
    assert!(log.contains(&Call::ReadAll));
    assert_eq!(converted(&log)[..4], [0, 1, 2, 3]);
}

#[test]
fn only_the_context_it_was_in_line_with_is_trusted() {
    let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
    let trusted = |log: &[Call]| log[0] == Call::Scan { trusted: true };
    // The tracker's context, first seen: checked.
    assert!(!trusted(&step_as(&mut books, &mut a, &[1, 2], true, 5)));
    // Its next turn, same generation: trusted.
    assert!(trusted(&step_as(&mut books, &mut a, &[1, 2, 3], true, 5)));
    // Another generation: checked.
    assert!(!trusted(&step_as(
        &mut books,
        &mut a,
        &[1, 2, 3, 4],
        true,
        6
    )));
    assert!(trusted(&step_as(
        &mut books,
        &mut a,
        &[1, 2, 3, 4],
        true,
        6
    )));
    // An array that is not the context in between: checked after it.
    step(&mut books, &mut a, &[1, 2, 3, 4]);
    assert!(!trusted(&step_as(
        &mut books,
        &mut a,
        &[1, 2, 3, 4],
        true,
        6
    )));
}

#[test]
fn a_failed_conversion_starts_over() {
    let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
    step_as(&mut books, &mut a, &[1, 2, 202], true, 1);
    step_as(&mut books, &mut a, &[1, 2, 202], true, 1);
    a.failing = Some(4);
    a.messages = vec![1, 2, 202, 3, 4];
    let e = books.convert(&mut a, true, 1).unwrap_err();
    assert!(e.to_string().contains("messages[4]"), "{e}");
    // The adapter forgets its inputs and outputs; the books convert
    // everything again, and trust nothing.
    a.failing = None;
    a.known.clear();
    a.out.clear();
    let log = step_as(&mut books, &mut a, &[1, 2, 202, 3, 4], true, 1);
    assert_eq!(log[0], Call::Scan { trusted: false });
    assert_eq!(converted(&log), [0, 1, 2, 3, 4]);
}

#[test]
fn every_sequence_of_small_arrays_gives_the_outputs_from_scratch() {
    let arrays: [&[u32]; 8] = [
        &[],
        &[1, 2, 3],
        &[1, 2, 3, 202, 4],
        &[11, 3, 202, 4, 5],
        &[10, 1, 20, 2],
        &[1, 10, 2, 3, 4, 203],
        &[12, 4, 203],
        &[3, 2, 1],
    ];
    for x in arrays {
        for y in arrays {
            for z in arrays {
                let (mut books, mut a) = (LlmBooks::default(), Adapter::default());
                step(&mut books, &mut a, x);
                step(&mut books, &mut a, y);
                step(&mut books, &mut a, z);
            }
        }
    }
}
