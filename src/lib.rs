//! agent-compaction: keep a long LLM agent conversation inside the model's
//! context window, with messages kept in one flat array.
//!
//! [`core`] holds the algorithms and never touches JavaScript; it is tested
//! natively. The `wasm` module (built for `wasm32` only) is the thin boundary
//! that reads messages from JavaScript, calls the core and hands results back.

pub mod core;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;
