//! Core errors become real JavaScript `Error`s, and JavaScript values and
//! exceptions become the core's input errors.

use agent_compaction_core::error::{FieldPath, InputError};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = describeValue)]
    fn describe_value(value: &JsValue) -> String;
    #[wasm_bindgen(js_name = thrownMessage)]
    fn thrown_message_js(thrown: &JsValue) -> String;
}

/// A core input error as JavaScript receives it: a `RangeError` for a
/// number out of range, a `TypeError` else.
pub fn input_error(e: InputError) -> JsValue {
    bad_input(&e.to_string(), e.is_range())
}

/// Bad input with its whole `message`: a `RangeError` when `range` (a
/// number out of range), a `TypeError` else.
pub fn bad_input(message: &str, range: bool) -> JsValue {
    match range {
        true => js_sys::RangeError::new(message).into(),
        false => js_sys::TypeError::new(message).into(),
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

/// `value`, found at `path`, is not `expected`.
pub fn wrong_type(path: FieldPath, expected: &'static str, value: &JsValue) -> InputError {
    InputError::WrongType {
        path,
        expected,
        got: describe(value),
    }
}

/// A read at `path` threw `thrown`.
pub fn unreadable(path: FieldPath, thrown: &JsValue) -> InputError {
    InputError::Unreadable {
        path,
        reason: thrown_message(thrown),
    }
}

/// A shim's read of the whole `messages` argument threw `thrown`.
pub fn messages_unreadable(thrown: JsValue) -> InputError {
    unreadable(FieldPath::argument("messages"), &thrown)
}
