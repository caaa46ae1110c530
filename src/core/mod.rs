//! The pure core: no `wasm_bindgen`, `js_sys` or `web_sys` in here.

pub mod context;
pub mod display;
pub mod error;
pub mod js_number;
pub mod js_string;
pub mod json;
pub mod llm_message;
pub mod overflow;
pub mod role;
