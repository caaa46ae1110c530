//! Core errors become real JavaScript `Error`s.

use agent_compaction_core::error::InputError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = describeValue)]
    fn describe_value(value: &JsValue) -> String;
    #[wasm_bindgen(js_name = thrownMessage)]
    fn thrown_message_js(thrown: &JsValue) -> String;
}

/// A core input error as the `TypeError` JavaScript receives.
pub fn type_error(e: InputError) -> JsValue {
    js_sys::TypeError::new(&e.to_string()).into()
}

/// A short description of a value's type for error messages ("null", "an
/// array", "a number"...). Safe on hostile values such as revoked proxies.
pub fn describe(value: &JsValue) -> String {
    describe_value(value)
}

/// The message of whatever JavaScript threw.
pub fn thrown_message(thrown: &JsValue) -> String {
    thrown_message_js(thrown)
}
