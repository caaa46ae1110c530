//! Small readers and builders for plain JavaScript values at the boundary.

use crate::js::errors::describe;
use crate::js::errors::wrong_type;
use crate::js::message_access::get;
use agent_compaction_core::compaction::providers::Json;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::options::{Reader, Value};
use agent_compaction_core::js::shape::{Field, Shape};
use js_sys::{Array, JsString, Object, Promise, Reflect};
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = isAbortSignal)]
    fn is_abort_signal(value: &JsValue) -> bool;
}

/// A plain object with these properties, in this order.
pub fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (key, value) in entries {
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &JsValue::from_str(key), value);
    }
    o.into()
}

/// `value[key]`, or `undefined` when it cannot be read (a primitive, a
/// throwing getter): for the package's own objects and the engine's.
pub fn prop(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// The plain object the core laid out (`core::js::shape`).
pub fn shape(shape: Shape<JsValue>) -> JsValue {
    let o = Object::new();
    for (key, value) in shape.0 {
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &JsValue::from_str(key), &field(value));
    }
    o.into()
}

fn field(value: Field<JsValue>) -> JsValue {
    match value {
        Field::Str(s) => s.into(),
        Field::String(s) => s.into(),
        Field::Number(n) => n.into(),
        Field::Bool(b) => b.into(),
        Field::Null => JsValue::NULL,
        Field::Undefined => JsValue::UNDEFINED,
        Field::Value(v) => v,
        Field::Object(o) => shape(o),
        Field::List(items) => items
            .into_iter()
            .map(field)
            .collect::<js_sys::Array>()
            .into(),
    }
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
        .ok_or_else(|| wrong_type(path(), "a number", value))
}

pub fn number(value: &JsValue, path: impl Fn() -> FieldPath) -> Result<f64, InputError> {
    number_at(value, &path)
}

fn number_at(value: &JsValue, path: &dyn Fn() -> FieldPath) -> Result<f64, InputError> {
    optional_number_at(value, path)?.ok_or_else(|| wrong_type(path(), "a number", value))
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

/// A usage field read as pi's arithmetic reads it (`usage.input +
/// usage.cacheRead`, `usage.totalTokens || …`): `null` counts as 0, as
/// JavaScript's `+` takes it (a NaN written to a session file comes back as
/// `null`); any other non-number is NaN.
pub fn usage_number(
    object: &JsValue,
    key: &'static str,
    path: impl Fn() -> FieldPath,
) -> Result<f64, InputError> {
    let value = get(object, key, || path().field(key))?;
    Ok(if value.is_null() {
        0.0
    } else {
        value.as_f64().unwrap_or(f64::NAN)
    })
}

/// An argument that must be an object.
pub fn expect_object(value: &JsValue, path: impl Fn() -> FieldPath) -> Result<(), InputError> {
    expect_object_at(value, &path)
}

fn expect_object_at(value: &JsValue, path: &dyn Fn() -> FieldPath) -> Result<(), InputError> {
    if value.is_object() {
        Ok(())
    } else {
        Err(wrong_type(path(), "an object", value))
    }
}

/// An options argument's value, as the core's option readers ask about it
/// (`core::js::options`).
#[derive(Clone, Default)]
pub struct Opt(pub JsValue);

impl Value for Opt {
    type Text = js_sys::JsString;
    type Function = js_sys::Function;
    fn is_undefined(&self) -> bool {
        self.0.is_undefined()
    }
    fn is_null(&self) -> bool {
        self.0.is_null()
    }
    fn is_object(&self) -> bool {
        self.0.is_object()
    }
    fn is_truthy(&self) -> bool {
        self.0.is_truthy()
    }
    fn number(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn boolean(&self) -> Option<bool> {
        self.0.as_bool()
    }
    fn text(&self) -> Option<(js_sys::JsString, usize)> {
        let text = self.0.dyn_ref::<js_sys::JsString>()?;
        Some((text.clone(), text.length() as usize))
    }
    fn name(&self) -> Option<String> {
        self.0.as_string()
    }
    fn function(&self) -> Option<js_sys::Function> {
        self.0.dyn_ref().cloned()
    }
    fn is_abort_signal(&self) -> bool {
        is_abort_signal(&self.0)
    }
    fn describe(&self) -> String {
        describe(&self.0)
    }
}

/// Reads the `options` argument with `read` (a core option set), each
/// field through [`get`] (a throwing getter names the field).
pub fn read_options<T>(
    options: &JsValue,
    read: impl FnOnce(&Opt, &Reader<Opt>) -> Result<T, InputError>,
) -> Result<T, InputError> {
    read_fields("options", options, read)
}

/// [`read_options`] for the argument named `root`.
pub fn read_fields<T>(
    root: &'static str,
    value: &JsValue,
    read: impl FnOnce(&Opt, &Reader<Opt>) -> Result<T, InputError>,
) -> Result<T, InputError> {
    let get = fields_of(root, value);
    read(&Opt(value.clone()), &Reader { root, get: &get })
}

/// The property reads of [`read_fields`]: not generic, one copy in the `.wasm`.
fn fields_of<'a>(
    root: &'static str,
    value: &'a JsValue,
) -> impl Fn(&'static str) -> Result<Opt, InputError> + 'a {
    move |key| get(value, key, || FieldPath::argument(root).field(key)).map(Opt)
}

/// A JavaScript value (a parsed reply, a thrown error, a usage object) as
/// the core reads JSON, in place.
#[derive(Clone)]
pub struct JsJson(pub JsValue);

impl Json for JsJson {
    type Text = JsString;
    fn get(&self, key: &str) -> JsJson {
        JsJson(prop(&self.0, key))
    }
    fn items(&self) -> Vec<JsJson> {
        if Array::is_array(&self.0) {
            self.0.unchecked_ref::<Array>().iter().map(JsJson).collect()
        } else {
            Vec::new()
        }
    }
    fn number(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn text(&self) -> Option<JsString> {
        self.0.dyn_ref::<JsString>().cloned()
    }
    fn string(&self) -> Option<String> {
        self.0.as_string()
    }
    fn is_object(&self) -> bool {
        self.0.is_object()
    }
    fn is_present(&self) -> bool {
        !(self.0.is_undefined() || self.0.is_null())
    }
    fn join(joined: JsString, separator: &str, next: JsString) -> JsString {
        joined.concat(&JsString::from(separator)).concat(&next)
    }
    fn is_blank(text: &JsString) -> bool {
        text.trim().length() == 0
    }
}

/// A task's work, boxed: one copy of wasm-bindgen-futures' task code in
/// the `.wasm` for every caller rather than one per future type.
pub type Task = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

/// A Promise of `task` (`future_to_promise`, through one boxed type).
pub fn spawn(task: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    wasm_bindgen_futures::future_to_promise(Box::pin(task) as Task)
}

/// Runs `task` to its end with nothing awaiting it (`spawn_local`, through
/// one boxed type).
pub fn spawn_detached(task: impl Future<Output = ()> + 'static) {
    let task: Pin<Box<dyn Future<Output = ()>>> = Box::pin(task);
    wasm_bindgen_futures::spawn_local(task)
}
