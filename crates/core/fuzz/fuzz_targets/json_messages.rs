//! The message decoder: `core::json::parse` on any text, and the parsed
//! values as flat-array messages through serialization, session-file
//! export/import and the cut point (see `checks::json_text`).
#![no_main]

use agent_compaction_fuzz::checks;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    checks::json_text(&String::from_utf8_lossy(data));
});
