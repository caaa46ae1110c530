//! pi session files (JSONL): `core::session_file::import_session` on any
//! text, then export and import again (see `checks::session_text`).
#![no_main]

use agent_compaction_fuzz::checks;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    checks::session_text(&String::from_utf8_lossy(data));
});
