//! Writes `src/js/shim.js` and `src/js/shim_store.js`, the JavaScript the
//! binding imports, from the modules in `src/js/shim/` (where the shim is
//! written and unit-tested, one module per concern: `node --test
//! tests/shim/`). The files are build output (ignored by git), so they can
//! never be stale.
//!
//! Why one file: wasm-bindgen-test-runner's server under Chromium stalls
//! some module requests when a page imports many files at once (with ten
//! shim modules, two never finished loading on two cold starts out of
//! three), so each of the package's two wasm modules imports one snippet.
//! The modules' imports of each other are dropped: their top-level names
//! are unique across the modules, which the bundle's one module scope then
//! shares.

use std::fs;
use std::path::Path;

/// The bundles and their modules, dependencies first (for readability:
/// every declaration is evaluated before any exported function is called).
/// `shim.js` is imported by both of the package's wasm modules; the store's
/// modules go only with the store module, which loads lazily
/// (`src/lib.rs`), and import what they use of the first bundle from it.
const BUNDLES: [(&str, &[&str]); 2] = [
    (
        "shim",
        &[
            "values",
            "roles",
            "facts",
            "text",
            "known",
            "summarizer",
            "errors",
            "extractive",
            "run",
        ],
    ),
    ("shim_store", &["store", "idb", "locks", "channel"]),
];

/// The build with both features (browser tests, lints) imports one bundle
/// of every module instead: the test runner's server is what stalls on
/// several files, and one module never needs the other's file there.
const ALL: &str = "shim_all";

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/js");
    let all: Vec<&str> = BUNDLES
        .iter()
        .flat_map(|(_, m)| m.iter().copied())
        .collect();
    let bundles = BUNDLES
        .iter()
        .enumerate()
        .map(|(index, (name, modules))| (*name, *modules, Some(index)))
        .chain([(ALL, all.as_slice(), None)]);
    for (bundle, modules, index) in bundles {
        let mut out = format!(
            "// Written by crates/wasm/build.rs from src/js/shim/*.js at every build: edit\n\
             // those. Each module's own header says what it does and why; build.rs says\n\
             // why the binding imports one file per wasm module ({bundle}.js).\n",
        );
        for name in modules.iter() {
            let path = dir.join("shim").join(format!("{name}.js"));
            println!("cargo:rerun-if-changed={}", path.display());
            let source =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push_str(&format!("\n// ===== shim/{name}.js =====\n\n"));
            for line in source.trim_end().lines() {
                out.push_str(&bundled_line(line, index, &path));
            }
        }
        let target = dir.join(format!("{bundle}.js"));
        // Written only when it changes, so that an unchanged shim rebuilds nothing.
        if fs::read_to_string(&target).ok().as_deref() != Some(out.as_str()) {
            fs::write(&target, out).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        }
    }
}

/// A module's line as the bundle of index `bundle` holds it: an import of a
/// module of the same bundle is dropped (the bundle's one scope has the
/// name); an import of a module of an earlier bundle imports that bundle.
/// `None`: the bundle of every module.
fn bundled_line(line: &str, bundle: Option<usize>, path: &Path) -> String {
    let sibling = line
        .strip_prefix("import {")
        .and_then(|rest| rest.split_once(" from \"./"))
        .and_then(|(_, rest)| rest.strip_suffix(".js\";"));
    let Some(module) = sibling else {
        return format!("{line}\n");
    };
    let home = BUNDLES
        .iter()
        .position(|(_, modules)| modules.contains(&module))
        .unwrap_or_else(|| panic!("{}: imports ./{module}.js, in no bundle", path.display()));
    let Some(bundle) = bundle else {
        return String::new();
    };
    if home == bundle {
        String::new()
    } else if home < bundle {
        let from = format!("\"./{module}.js\";");
        line.replace(&from, &format!("\"./{}.js\";", BUNDLES[home].0)) + "\n"
    } else {
        panic!(
            "{}: imports ./{module}.js, from a bundle loaded later",
            path.display()
        )
    }
}
