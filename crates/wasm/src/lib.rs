//! agent-compaction's JavaScript binding: the npm package's `.wasm`.
//!
//! Each module exposes the core module of the same name
//! (`agent_compaction_core`): it reads messages from JavaScript, calls the
//! core, awaits what JavaScript must do (the summarizer, IndexedDB, locks),
//! and hands the caller's own objects back wherever nothing changes. `js/`
//! is the plumbing they share: reading message facts across the boundary,
//! errors, and the engine hooks the core is linked with.
//!
//! The crate is empty outside wasm32; the core is tested natively on its own.
#![cfg(target_arch = "wasm32")]

pub mod agent_flow;
pub mod branch;
pub mod clearing;
pub mod compaction;
pub mod compactor;
pub mod conversation;
pub mod estimate;
pub mod extractive;
pub mod history;
pub mod js;
pub mod message;
pub mod pinned;
pub mod prepare;
pub mod providers;
pub mod serialize;
pub mod session_file;
pub mod settings;
pub mod storage;
pub mod undo;
