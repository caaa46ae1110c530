//! JavaScript strings ↔ the core's `JsStr` (UTF-16 code units), exactly.

use agent_compaction_core::js::string::JsStr;
use js_sys::{JsString, Uint16Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = codeUnits)]
    fn code_units(text: &JsString) -> Uint16Array;
    #[wasm_bindgen(js_name = fromCodeUnits)]
    fn from_code_units(units: &Uint16Array) -> JsString;
}

pub fn to_js_str(text: &JsString) -> JsStr {
    JsStr::from_units(code_units(text).to_vec())
}

pub fn to_js_string(text: &JsStr) -> JsString {
    from_code_units(&Uint16Array::from(text.as_units()))
}
