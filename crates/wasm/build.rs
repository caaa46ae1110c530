//! Writes `src/js/shim.js`, the one JavaScript snippet the binding imports,
//! by joining the modules of `src/js/shim/` (where the shim is written and
//! unit-tested, one module per concern: `node --test tests/shim/`). The
//! file is build output (ignored by git), so it can never be stale.
//!
//! Why one file: wasm-bindgen-test-runner's server under Chromium stalls
//! some module requests when a page imports many files at once (with ten
//! shim modules, two never finished loading on two cold starts out of
//! three). The modules' imports of each other (`import { … } from "./x.js";`)
//! are dropped: their top-level names are unique across the modules, which
//! the file's one module scope then shares.

use std::fs;
use std::path::Path;

/// Dependencies first, so that every declaration is read before its use.
const MODULES: &[&str] = &[
    "values",
    "roles",
    "facts",
    "text",
    "known",
    "summarizer",
    "errors",
    "store",
    "idb",
    "locks",
    "channel",
];

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/js");
    for entry in fs::read_dir(dir.join("shim")).expect("src/js/shim") {
        let file = entry.expect("src/js/shim").file_name();
        let file = file.to_string_lossy();
        if let Some(name) = file.strip_suffix(".js") {
            assert!(
                MODULES.contains(&name),
                "src/js/shim/{file}: add it to MODULES in build.rs"
            );
        }
    }
    let mut out = String::from(
        "// Written by crates/wasm/build.rs from src/js/shim/*.js at every build: edit those.\n",
    );
    for name in MODULES {
        let path = dir.join(format!("shim/{name}.js"));
        println!("cargo:rerun-if-changed={}", path.display());
        let source =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push_str(&format!("\n// ===== shim/{name}.js =====\n\n"));
        for line in source.lines() {
            let sibling = line.starts_with("import {") && line.contains(" from \"./");
            if !sibling {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    println!("cargo:rerun-if-changed={}", dir.join("shim").display());
    let target = dir.join("shim.js");
    // Written only when it changes, so that an unchanged shim rebuilds nothing.
    if fs::read_to_string(&target).ok().as_deref() != Some(out.as_str()) {
        fs::write(&target, out).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
    }
}
