//! Core errors become real JavaScript `Error`s.

use crate::core::error::InputError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/message_shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = describeValue)]
    fn describe_value(value: &JsValue) -> String;
    #[wasm_bindgen(js_name = thrownMessage)]
    fn thrown_message_js(thrown: &JsValue) -> String;
}

impl From<InputError> for JsValue {
    fn from(e: InputError) -> JsValue {
        js_sys::TypeError::new(&e.to_string()).into()
    }
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
