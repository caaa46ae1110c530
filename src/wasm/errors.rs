//! Core errors become real JavaScript `Error`s.

use crate::core::error::InputError;
use wasm_bindgen::JsValue;

impl From<InputError> for JsValue {
    fn from(e: InputError) -> JsValue {
        js_sys::TypeError::new(&e.to_string()).into()
    }
}

/// A short description of a value's type for error messages.
pub fn describe(value: &JsValue) -> String {
    if value.is_null() {
        return "null".into();
    }
    if value.is_undefined() {
        return "undefined".into();
    }
    if js_sys::Array::is_array(value) {
        return "an array".into();
    }
    match value.js_typeof().as_string().as_deref() {
        Some("object") => "an object".into(),
        Some("string") => "a string".into(),
        Some("number") => "a number".into(),
        Some("boolean") => "a boolean".into(),
        Some("bigint") => "a bigint".into(),
        Some("symbol") => "a symbol".into(),
        Some("function") => "a function".into(),
        Some(other) => other.into(),
        None => "a value".into(),
    }
}

/// The message of whatever JavaScript threw.
pub fn thrown_message(thrown: &JsValue) -> String {
    if let Some(e) = thrown.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    thrown
        .as_string()
        .unwrap_or_else(|| format!("{} was thrown", describe(thrown)))
}

use wasm_bindgen::JsCast;
