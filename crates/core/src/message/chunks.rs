//! Reading a range of the caller's messages in bulk, a chunk at a time. A
//! host gathers each chunk in one crossing and the core decodes it before
//! the next is gathered, so the first bad message ends the reading: it is
//! reported after at most [`CHUNK`] messages are read past it, whatever the
//! array's length (a sparse array's can be 2³² − 1 with a hole at index 1),
//! and what a reading holds at once is one chunk's gathering.

use std::ops::Range;

/// The most messages gathered in one crossing.
pub const CHUNK: usize = 4096;

/// `from..to` as consecutive ranges of at most [`CHUNK`] messages.
pub fn chunks(from: usize, to: usize) -> impl Iterator<Item = Range<usize>> {
    (from..to)
        .step_by(CHUNK)
        .map(move |start| start..to.min(start + CHUNK))
}

/// What `read` gives for each chunk of `from..to`, in order, joined; the
/// first error ends the reading (the chunks after it are not read).
pub fn read_chunked<T, E>(
    from: usize,
    to: usize,
    mut read: impl FnMut(Range<usize>) -> Result<Vec<T>, E>,
) -> Result<Vec<T>, E> {
    if to.saturating_sub(from) <= CHUNK {
        return read(from..to.max(from));
    }
    let mut out = Vec::new();
    for range in chunks(from, to) {
        out.extend(read(range)?);
    }
    Ok(out)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_cut_into_chunks_in_order() {
        assert_eq!(chunks(0, 0).count(), 0);
        assert_eq!(chunks(5, 6).collect::<Vec<_>>(), vec![5..6]);
        assert_eq!(
            chunks(3, 3 + 2 * CHUNK + 1).collect::<Vec<_>>(),
            vec![
                3..3 + CHUNK,
                3 + CHUNK..3 + 2 * CHUNK,
                3 + 2 * CHUNK..4 + 2 * CHUNK
            ]
        );
    }

    #[test]
    fn every_message_is_read_once_when_none_is_bad() {
        let mut calls = Vec::new();
        let read = read_chunked::<usize, ()>(7, 7 + 3 * CHUNK - 2, |r| {
            calls.push(r.clone());
            Ok(r.collect())
        })
        .unwrap();
        assert_eq!(read, (7..7 + 3 * CHUNK - 2).collect::<Vec<_>>());
        assert_eq!(calls.len(), 3);
        // A turn's few messages are one reading.
        let mut calls = 0;
        let read = read_chunked::<usize, ()>(10, 12, |r| {
            calls += 1;
            Ok(r.collect())
        });
        assert_eq!((read, calls), (Ok(vec![10, 11]), 1));
        assert_eq!(
            read_chunked::<usize, ()>(4, 2, |r| Ok(r.collect())),
            Ok(vec![])
        );
    }

    #[test]
    fn a_bad_message_ends_the_reading_of_an_array_of_any_length() {
        // A sparse array of length 2^32 - 1 with a hole at index 1: one
        // chunk is read, not the length.
        let mut read = Vec::new();
        let result = read_chunked::<usize, String>(0, u32::MAX as usize, |r| {
            read.push(r.clone());
            match r.clone().find(|&i| i == 1) {
                Some(i) => Err(format!("messages[{i}]")),
                None => Ok(r.collect()),
            }
        });
        assert_eq!(result, Err("messages[1]".to_string()));
        assert_eq!(read, vec![0..CHUNK]);
        // A bad message in a later chunk: the chunks up to it.
        let mut calls = 0;
        let result = read_chunked::<usize, usize>(0, 1 << 30, |r| {
            calls += 1;
            if r.contains(&(CHUNK + 5)) {
                Err(CHUNK + 5)
            } else {
                Ok(r.collect())
            }
        });
        assert_eq!((result, calls), (Err(CHUNK + 5), 2));
    }
}
