//! Small readers and builders for plain JavaScript values at the boundary.

use crate::js::errors::describe;
use crate::js::message_access::get;
use agent_compaction_core::error::{FieldPath, InputError};
use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

/// A plain object with these properties, in this order.
pub fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (key, value) in entries {
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &JsValue::from_str(key), value);
    }
    o.into()
}

/// A number argument or field; `None` when it is `undefined`.
pub fn optional_number(
    value: &JsValue,
    path: impl Fn() -> FieldPath,
) -> Result<Option<f64>, InputError> {
    optional_number_at(value, &path)
}

// The generic wrappers only pass `path` on as a `&dyn Fn`: one copy of the
// body in the `.wasm` rather than one per call site.
fn optional_number_at(
    value: &JsValue,
    path: &dyn Fn() -> FieldPath,
) -> Result<Option<f64>, InputError> {
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .as_f64()
        .map(Some)
        .ok_or_else(|| InputError::WrongType {
            path: path(),
            expected: "a number",
            got: describe(value),
        })
}

pub fn number(value: &JsValue, path: impl Fn() -> FieldPath) -> Result<f64, InputError> {
    number_at(value, &path)
}

fn number_at(value: &JsValue, path: &dyn Fn() -> FieldPath) -> Result<f64, InputError> {
    optional_number_at(value, path)?.ok_or_else(|| InputError::WrongType {
        path: path(),
        expected: "a number",
        got: describe(value),
    })
}

/// A field read as a JavaScript number: anything else is NaN, as arithmetic
/// on `undefined` gives in pi.
pub fn number_or_nan(
    object: &JsValue,
    key: &'static str,
    path: impl Fn() -> FieldPath,
) -> Result<f64, InputError> {
    Ok(get(object, key, || path().field(key))?
        .as_f64()
        .unwrap_or(f64::NAN))
}

/// An argument that must be an object.
pub fn expect_object(value: &JsValue, path: impl Fn() -> FieldPath) -> Result<(), InputError> {
    expect_object_at(value, &path)
}

fn expect_object_at(value: &JsValue, path: &dyn Fn() -> FieldPath) -> Result<(), InputError> {
    if value.is_object() {
        Ok(())
    } else {
        Err(InputError::WrongType {
            path: path(),
            expected: "an object",
            got: describe(value),
        })
    }
}

/// `options[key]` as a non-empty string, `None` when absent, null or empty.
pub fn optional_text(
    options: &JsValue,
    key: &'static str,
    path: impl Fn() -> FieldPath,
) -> Result<Option<js_sys::JsString>, InputError> {
    use wasm_bindgen::JsCast;
    let value = get(options, key, || path().field(key))?;
    match value.dyn_into::<js_sys::JsString>() {
        Ok(s) if s.length() > 0 => Ok(Some(s)),
        Ok(_) => Ok(None),
        Err(v) if v.is_undefined() || v.is_null() => Ok(None),
        Err(v) => Err(InputError::WrongType {
            path: path().field(key),
            expected: "a string",
            got: describe(&v),
        }),
    }
}

/// A pi `Usage` object (the compaction's result, a fetch summarizer's reply).
pub fn usage_object(t: &agent_compaction_core::compaction::flow::UsageTotals) -> JsValue {
    object(&[
        ("input", t.input.into()),
        ("output", t.output.into()),
        ("cacheRead", t.cache_read.into()),
        ("cacheWrite", t.cache_write.into()),
        ("totalTokens", t.total_tokens.into()),
        (
            "cost",
            object(&[
                ("input", t.cost.input.into()),
                ("output", t.cost.output.into()),
                ("cacheRead", t.cost.cache_read.into()),
                ("cacheWrite", t.cost.cache_write.into()),
                ("total", t.cost.total.into()),
            ]),
        ),
    ])
}
