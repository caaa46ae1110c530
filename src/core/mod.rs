//! The pure core: no `wasm_bindgen`, `js_sys` or `web_sys` in here.

pub mod branch;
pub mod chunking;
pub mod context;
pub mod context_index;
pub mod context_tokens;
pub mod cut_point;
pub mod display;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod extractive;
pub mod file_ops;
pub mod iso_time;
pub mod js_number;
pub mod js_string;
pub mod json;
pub mod llm_message;
pub mod overflow;
pub mod prepare;
pub mod prompts;
pub mod role;
pub mod save_plan;
pub mod serialize;
pub mod session_file;
pub mod settings;
pub mod sorted;
