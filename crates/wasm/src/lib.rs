//! agent-compaction's JavaScript binding: the npm package's `.wasm`.
//!
//! Each module exposes the core module of the same name
//! (`agent_compaction_core`): it reads messages from JavaScript, calls the
//! core, awaits what JavaScript must do (the summarizer, IndexedDB, locks),
//! and hands the caller's own objects back wherever nothing changes. `js/`
//! is the plumbing every module shares: reading message facts across the
//! boundary, errors, and the engine hooks the core is linked with.
//!
//! The crate is empty outside wasm32; the core is tested natively on its own.
#![cfg(target_arch = "wasm32")]
// The npm package ships four modules built from this crate: the main one
// (feature `compactor`: everything but the store and the extractive
// summarizer), instantiated at import; the store (feature `store`:
// `SessionStore` and what it alone uses), which `SessionStore.open` loads on
// first use (package/session-store.js); the extractive summarizer
// (feature `extractive`), which the first compaction that needs it loads
// (shim/extractive.js); and `run` (what only runs inside a compaction: the
// fetch summarizers' calls, the clearing tier), which the first call that
// needs it loads
// (shim/run.js). The default build has all four, for the browser tests and
// the lints. In a one-feature build the shared plumbing has parts another
// module uses.
#![cfg_attr(
    not(all(
        feature = "compactor",
        feature = "store",
        feature = "extractive",
        feature = "run"
    )),
    allow(dead_code)
)]

// Talc instead of std's dlmalloc: the same job (memory grown from the engine
// as needed, freed blocks reused and merged) in fewer bytes, which each
// module carries (its Cargo.toml entry says how many). Not in the store's
// module (nor in the all-features build that contains it): there a save
// took ~0.6 ms longer with talc than with dlmalloc (Chromium, 5,000
// messages, the store benchmark run against both builds), for 1.7 KB of
// a module that loads lazily.
#[cfg(not(feature = "store"))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(feature = "compactor")]
pub mod attach;
#[cfg(feature = "compactor")]
pub mod branch;
#[cfg(any(feature = "compactor", feature = "run"))]
pub mod clearing;
#[cfg(feature = "compactor")]
pub mod compaction;
#[cfg(feature = "compactor")]
pub mod compactor;
#[cfg(feature = "compactor")]
pub mod conversation;
#[cfg(feature = "compactor")]
pub mod estimate;
#[cfg(feature = "extractive")]
pub mod extractive;
#[cfg(any(feature = "compactor", feature = "run"))]
pub mod fetch_summarizers;
// Every module links `js::engine` (the core's engine hooks).
pub mod js;
#[cfg(feature = "compactor")]
pub mod message;
#[cfg(feature = "compactor")]
pub mod pinned;
#[cfg(feature = "compactor")]
pub mod prepare;
#[cfg(feature = "compactor")]
pub mod serialize;
#[cfg(any(feature = "compactor", feature = "store"))]
pub mod session_file;
#[cfg(feature = "compactor")]
pub mod settings;
#[cfg(feature = "store")]
pub mod store;
#[cfg(feature = "compactor")]
pub mod undo;
