//! Writes `src/js/shim.js`, the one JavaScript module the binding imports,
//! from the modules in `src/js/shim/` (where the shim is written and
//! unit-tested, one module per concern: `node --test tests/shim/`). The
//! file is build output (ignored by git), so it can never be stale.
//!
//! Why one file: wasm-bindgen-test-runner's server under Chromium stalls
//! some module requests when a page imports many files at once (with ten
//! shim modules, two never finished loading on two cold starts out of
//! three), so the package ships the shim as one snippet. The modules'
//! imports of each other are dropped: their top-level names are unique
//! across the modules, which the bundle's one module scope then shares.

use std::fs;
use std::path::Path;

/// Dependencies first, for readability: every declaration is evaluated
/// before any exported function is called.
const MODULES: [&str; 10] = [
    "values",
    "roles",
    "facts",
    "text",
    "known",
    "summarizer",
    "store",
    "idb",
    "locks",
    "channel",
];

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/js");
    let mut out = String::from(
        "// Written by crates/wasm/build.rs from src/js/shim/*.js at every build: edit\n\
         // those. Each module's own header says what it does and why; build.rs says\n\
         // why the binding imports one file.\n",
    );
    for name in MODULES {
        let path = dir.join("shim").join(format!("{name}.js"));
        println!("cargo:rerun-if-changed={}", path.display());
        let source =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push_str(&format!("\n// ===== shim/{name}.js =====\n\n"));
        for line in source.trim_end().lines() {
            let sibling_import = line.starts_with("import {") && line.contains(" from \"./");
            if !sibling_import {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    let target = dir.join("shim.js");
    // Written only when it changes, so that an unchanged shim rebuilds nothing.
    if fs::read_to_string(&target).ok().as_deref() != Some(out.as_str()) {
        fs::write(&target, out).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
    }
}
