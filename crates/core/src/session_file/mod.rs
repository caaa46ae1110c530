//! pi session files (JSONL, format versions 1–3) ↔ the flat message array.
//!
//! [`import_session`] reads a file as pi 0.73's `SessionManager` loads it
//! (malformed lines skipped, the header checked, versions 1 and 2
//! migrated, the active branch followed from the leaf) and flattens that
//! branch into the flat array, such that `transformContext` of the array is
//! pi's `buildSessionContext(...).messages` for the file: same messages,
//! and summaries with the same text once pi's file tags are taken off.
//!
//! [`export_session`] writes a flat array as a version-3 file that pi loads
//! into the same context, and that [`import_session`] turns back into the
//! same array, field for field.

mod cleared;
mod entries;
mod error;
mod export;
mod fields;
mod import;
mod js_semantics;
mod summary_text;

pub use error::SessionFileError;
pub use export::{ends_messages, export_session, split_model_key, ExportDefaults};
pub use import::{import_session, ImportedSession, SessionInfo};
pub use summary_text::BRANCH_PREAMBLE;

use crate::js::string::push_hex;

/// A version-7 UUID (what pi uses for session ids) from a Unix time in
/// milliseconds and ten random bytes.
pub fn uuid_v7(ms: f64, random: [u8; 10]) -> String {
    let time = if ms.is_finite() && ms >= 0.0 {
        (ms as u64) & 0xFFFF_FFFF_FFFF
    } else {
        0
    };
    let mut bytes = [0u8; 16];
    for (i, byte) in bytes.iter_mut().take(6).enumerate() {
        *byte = (time >> (40 - 8 * i)) as u8;
    }
    let [r0, r1, r2, rest @ ..] = random;
    bytes[6] = 0x70 | (r0 & 0x0F);
    bytes[7] = r1;
    bytes[8] = 0x80 | (r2 & 0x3F);
    bytes[9..].copy_from_slice(&rest);
    let mut out = String::with_capacity(36);
    for (i, &byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        push_hex(&mut out, byte.into(), 2);
    }
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
