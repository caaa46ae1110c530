//! How a host's texts are composed, measured and cut, so that the
//! compaction flow and the summaries it edits work on the caller's own
//! strings (in the wasm build, JavaScript strings never copied into wasm
//! memory; natively, Rust strings in the tests).

use crate::message::llm::TextSink;

/// How the host's texts are composed, measured and cut (UTF-16 code units,
/// as JavaScript counts).
pub trait TextOps {
    type Text: Clone;
    type Sink: TextSink + Default;
    fn borrow(text: &Self::Text) -> &<Self::Sink as TextSink>::Text;
    fn finish(sink: Self::Sink) -> Self::Text;
    fn len(text: &Self::Text) -> usize;
    /// Nothing but whitespace (JavaScript's `trim()` leaves nothing).
    fn is_blank(text: &Self::Text) -> bool;
    /// The first `units` code units.
    fn prefix(text: &Self::Text, units: usize) -> Self::Text;
    /// Where `needle` first occurs in `text`, in code units.
    fn find(text: &Self::Text, needle: &str) -> Option<usize>;

    fn compose(build: impl FnOnce(&mut Self::Sink)) -> Self::Text {
        let mut sink = Self::Sink::default();
        build(&mut sink);
        Self::finish(sink)
    }
}
