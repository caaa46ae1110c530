//! How full the context is: per-message estimates and reported usage, the
//! context's token count and threshold, overflow detection, and the index
//! the compactor keeps so that a turn costs only its new messages.

pub mod calibrated;
pub mod context_index;
pub mod context_tokens;
pub mod estimate;
pub mod overflow;
pub mod record;
