//! The fuzz targets' checks (`fuzz/src/checks.rs`), natively: on the
//! committed seed corpora (`fuzz/seeds/<target>/`) and on every input a
//! fuzzer found a failure with (`fuzz/regressions/<target>/`), so that
//! `cargo test` keeps them passing without a nightly compiler.
// Native only: proptest and the fuzz checks are not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../fuzz/src/checks.rs"]
mod checks;
#[path = "properties/facts.rs"]
mod facts;
#[path = "properties/reference.rs"]
mod reference;

use std::path::Path;

/// The files of `fuzz/<kind>/<target>/`, sorted, as text (invalid UTF-8
/// replaced, as the fuzz targets do).
fn inputs(kind: &str, target: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .map(|e| {
            let bytes = std::fs::read(e.path()).expect("readable input");
            (
                e.file_name().to_string_lossy().into_owned(),
                String::from_utf8_lossy(&bytes).into_owned(),
            )
        })
        .collect();
    files.sort();
    files
}

fn run_all(target: &str, check: fn(&str)) {
    let seeds = inputs("seeds", target);
    assert!(!seeds.is_empty(), "no seeds in fuzz/seeds/{target}");
    for (name, text) in seeds.iter().chain(&inputs("regressions", target)) {
        let outcome = std::panic::catch_unwind(|| check(text));
        assert!(
            outcome.is_ok(),
            "{target}: {name} fails the target's checks"
        );
    }
}

#[test]
fn session_import_checks_pass_on_seeds_and_regressions() {
    run_all("session_import", checks::session_text);
}

#[test]
fn json_messages_checks_pass_on_seeds_and_regressions() {
    run_all("json_messages", checks::json_text);
}

/// The first finding of the `json_messages` target was in its own oracle:
/// `JSON.parse` reads `1e999` as Infinity and `JSON.stringify` writes it as
/// `null`, so a parsed value does not survive printing unchanged; the core
/// does what JavaScript does.
#[test]
fn numbers_out_of_range_parse_as_infinity_and_print_as_null() {
    use agent_compaction_core::js::json::{parse, stringified, Json};
    let value = parse("[1e999,-1e400,1e-400]").unwrap();
    assert_eq!(
        value,
        Json::Array(vec![
            Json::Number(f64::INFINITY),
            Json::Number(f64::NEG_INFINITY),
            Json::Number(0.0),
        ])
    );
    assert_eq!(stringified(&value).to_string(), "[null,null,0]");
    assert_eq!(
        checks::as_stored(&value),
        Json::Array(vec![Json::Null, Json::Null, Json::Number(0.0)])
    );
}
