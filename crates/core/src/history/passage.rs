//! A message's passages: the parts of about [`PASSAGE_CHARS`] characters,
//! cut at line ends, that the index ranks as documents and a reference
//! points at. Short enough that a hit in a long tool output leads to its
//! place, long enough to hold a paragraph or a stack trace.

/// A passage ends at a line end near this many characters, or at a space,
/// or (in a line without either) after this many characters.
pub const PASSAGE_CHARS: usize = 1000;

/// The byte ranges `(start, end)` of `text`'s passages, in order, covering
/// it exactly; none for an empty text.
pub fn passages(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = text.get(start..).unwrap_or("");
        let mut cut = rest.len();
        // The ends of the last line and the last space so far, with the
        // characters before them.
        let (mut line, mut space) = ((0, 0), (0, 0));
        for (n, (i, c)) in rest.char_indices().enumerate() {
            if n == PASSAGE_CHARS {
                // A line end past half the passage, else a space past
                // half, else any line end or space.
                let half = PASSAGE_CHARS / 2;
                cut = if line.0 > 0 && line.1 >= half {
                    line.0
                } else if space.0 > 0 && space.1 >= half {
                    space.0
                } else if line.0 > 0 {
                    line.0
                } else if space.0 > 0 {
                    space.0
                } else {
                    i
                };
                break;
            }
            let end = (i.saturating_add(c.len_utf8()), n.saturating_add(1));
            if c == '\n' {
                line = end;
            } else if c.is_ascii_whitespace() {
                space = end;
            }
        }
        out.push((start, start.saturating_add(cut)));
        start = start.saturating_add(cut);
    }
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
