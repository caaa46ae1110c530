//! Reading what the core needs from the caller's messages, with errors that
//! name the index and the field. Getters that throw, proxies and other
//! hostile objects become errors, never panics.

use crate::js::errors::{describe, messages_unreadable, unreadable, wrong_type};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::chunks::read_chunked;
use agent_compaction_core::message::file_lists::SummaryFields;
use agent_compaction_core::message::role::{role_error, Role};
use js_sys::{Array, JsString, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = roleCode)]
    fn role_code(message: &JsValue) -> u8;
    #[wasm_bindgen(js_name = roleCodes, catch)]
    fn role_codes_js(messages: &Array, from: u32, to: u32) -> Result<js_sys::Uint8Array, JsValue>;
    #[wasm_bindgen(js_name = textUserMessage)]
    pub fn text_user_message(text: &JsString, timestamp: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = userMessage)]
    pub fn user_message(content: &JsValue, timestamp: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = compactionDivider)]
    pub fn compaction_divider(tokens_before: &JsValue, timestamp: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = arrayLength, catch)]
    fn array_length(value: &JsValue) -> Result<f64, JsValue>;
    #[wasm_bindgen(js_name = sliceArray, catch)]
    fn slice_array(array: &JsValue, start: u32, end: u32) -> Result<Array, JsValue>;
}

/// `Array.isArray(value)`, which throws for a revoked proxy: that is the
/// error (never unwound through wasm frames, as `js_sys::Array::is_array`
/// would).
pub fn is_array(value: &JsValue) -> Result<bool, JsValue> {
    array_length(value).map(|length| length != -1.0)
}

/// An array the caller handed in, with its length read once, safely.
pub struct JsArray {
    array: Array,
    len: u32,
    /// A one-element array standing for a `message` argument: error paths
    /// then say `message.content`, not `messages[0].content`.
    single: bool,
}

impl JsArray {
    /// `value` as an array; `None` when it is not one. A proxy whose traps
    /// throw is an error at `path`.
    pub fn new(
        value: &JsValue,
        path: impl Fn() -> FieldPath,
    ) -> Result<Option<JsArray>, InputError> {
        JsArray::new_at(value, &path)
    }

    // The generic wrappers only pass `path` on as a `&dyn Fn`: one copy of
    // the body in the `.wasm` rather than one per call site.
    fn new_at(
        value: &JsValue,
        path: &dyn Fn() -> FieldPath,
    ) -> Result<Option<JsArray>, InputError> {
        let len = array_length(value).map_err(|thrown| unreadable(path(), &thrown))?;
        if len == -1.0 {
            return Ok(None);
        }
        if len < 0.0 || len.fract() != 0.0 {
            return Err(InputError::Unreadable {
                path: path().field("length"),
                reason: "it is not a valid array length".into(),
            });
        }
        Ok(Some(JsArray {
            array: value.clone().unchecked_into(),
            len: len as u32,
            single: false,
        }))
    }

    /// The `message` argument of a single-message function, as an array.
    pub fn single(message: &JsValue) -> JsArray {
        JsArray {
            array: Array::of1(message),
            len: 1,
            single: true,
        }
    }

    /// Where message `index` is, for error messages.
    pub fn path(&self, index: usize) -> FieldPath {
        if self.single {
            FieldPath::argument("message")
        } else {
            FieldPath::element("messages", index)
        }
    }

    /// Like [`JsArray::new`], but anything else is a `WrongType` error.
    pub fn expect(
        value: &JsValue,
        path: impl Fn() -> FieldPath,
        expected: &'static str,
    ) -> Result<JsArray, InputError> {
        JsArray::expect_at(value, &path, expected)
    }

    fn expect_at(
        value: &JsValue,
        path: &dyn Fn() -> FieldPath,
        expected: &'static str,
    ) -> Result<JsArray, InputError> {
        JsArray::new_at(value, path)?.ok_or_else(|| wrong_type(path(), expected, value))
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_array(&self) -> &Array {
        &self.array
    }

    /// `array[index]`; a throwing getter is an error at `path`.
    pub fn get(&self, index: u32, path: impl FnOnce() -> FieldPath) -> Result<JsValue, InputError> {
        Reflect::get_u32(&self.array, index).map_err(|thrown| unreadable(path(), &thrown))
    }

    /// `array.slice(start, end)`, done by the engine.
    pub fn slice(&self, start: u32, end: u32) -> Result<Array, InputError> {
        slice_array(&self.array, start, end).map_err(messages_unreadable)
    }
}

/// The `messages` argument, which must be an array.
pub fn messages_array(value: &JsValue) -> Result<JsArray, InputError> {
    JsArray::expect(
        value,
        || FieldPath::argument("messages"),
        "an array of messages",
    )
}

/// Reads `object[key]`; a throwing getter or proxy trap is an error.
pub fn get(
    object: &JsValue,
    key: &str,
    path: impl FnOnce() -> FieldPath,
) -> Result<JsValue, InputError> {
    property(object, key).map_err(|thrown| unreadable(path(), &thrown))
}

/// `object[key]`, or what the getter threw. Not generic: the many callers of
/// [`get`] share it.
fn property(object: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(object, &JsValue::from_str(key))
}

pub fn role_from_code(messages: &JsArray, index: usize, code: u8) -> Result<Role, InputError> {
    if let Some(role) = Role::from_code(code) {
        return Ok(role);
    }
    let message = message_at(messages, index)?;
    let role = || {
        let role = get(&message, "role", || messages.path(index).field("role"))?;
        Ok(describe(&role))
    };
    Err(role_error(
        code,
        messages.path(index),
        || describe(&message),
        role,
    ))
}

/// The role of `messages[index]`, in one crossing of the boundary.
pub fn role_at(messages: &JsArray, index: usize) -> Result<Role, InputError> {
    message_and_role(messages, index).map(|(_, role)| role)
}

/// `messages[index]` and its role, each read once.
pub fn message_and_role(messages: &JsArray, index: usize) -> Result<(JsValue, Role), InputError> {
    let message = message_at(messages, index)?;
    let role = role_from_code(messages, index, role_code(&message))?;
    Ok((message, role))
}

/// The roles of all messages, gathered a chunk per crossing
/// (`core::message::chunks`): the first message that has none ends the
/// reading.
pub fn roles(messages: &JsArray) -> Result<Vec<Role>, InputError> {
    read_chunked(0, messages.len() as usize, |range| {
        let codes = role_codes_js(messages.as_array(), range.start as u32, range.end as u32)
            .map_err(messages_unreadable)?
            .to_vec();
        range
            .zip(codes)
            .map(|(i, code)| role_from_code(messages, i, code))
            .collect()
    })
}

/// `messages[index]` itself.
pub fn message_at(messages: &JsArray, index: usize) -> Result<JsValue, InputError> {
    messages.get(index as u32, || messages.path(index))
}

/// A field that must hold a string.
pub fn string_field(
    message: &JsValue,
    index: usize,
    key: &'static str,
) -> Result<JsString, InputError> {
    let path = || FieldPath::element("messages", index).field(key);
    let value = get(message, key, path)?;
    value
        .dyn_into::<JsString>()
        .map_err(|value| wrong_type(path(), "a string", &value))
}

/// A field read with JavaScript's truthiness, as pi reads its flags.
pub fn truthy_field(
    message: &JsValue,
    index: usize,
    key: &'static str,
) -> Result<bool, InputError> {
    Ok(get(message, key, || {
        FieldPath::element("messages", index).field(key)
    })?
    .is_truthy())
}

/// An optional string field: `None` when absent (`undefined` or `null`).
pub fn optional_string_field(
    message: &JsValue,
    index: usize,
    key: &'static str,
) -> Result<Option<JsString>, InputError> {
    let path = || FieldPath::element("messages", index).field(key);
    let value = get(message, key, path)?;
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .dyn_into::<JsString>()
        .map(Some)
        .map_err(|value| wrong_type(path(), "a string or undefined", &value))
}

/// `value`, at `path`, as an array of strings (`expected` names it).
pub fn strings(
    value: &JsValue,
    path: impl Fn() -> FieldPath,
    expected: &'static str,
) -> Result<Vec<JsString>, InputError> {
    let list = JsArray::expect(value, &path, expected)?;
    (0..list.len())
        .map(|i| {
            let item = list.get(i, || path().at(i as usize))?;
            item.dyn_into::<JsString>()
                .map_err(|item| wrong_type(path().at(i as usize), "a string", &item))
        })
        .collect()
}

/// `messages[index]`, a summary, as the core's file-list rule reads it
/// (`message::file_lists`): a getter or proxy that throws is the only error.
pub struct SummaryAt<'a> {
    pub message: &'a JsValue,
    pub index: usize,
}

impl SummaryFields for SummaryAt<'_> {
    type Text = JsString;
    type Error = InputError;

    fn details_strings(&self, key: &'static str) -> Result<Option<Vec<JsString>>, InputError> {
        let details_path = || FieldPath::element("messages", self.index).field("details");
        let details = get(self.message, "details", details_path)?;
        if !details.is_object() {
            return Ok(None);
        }
        let path = || details_path().field(key);
        let value = get(&details, key, path)?;
        let Some(list) = JsArray::new(&value, path)? else {
            return Ok(None);
        };
        let mut strings = Vec::with_capacity(list.len() as usize);
        for i in 0..list.len() {
            match list
                .get(i, || path().at(i as usize))?
                .dyn_into::<JsString>()
            {
                Ok(text) => strings.push(text),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(strings))
    }

    fn is_true(&self, key: &'static str) -> Result<bool, InputError> {
        let value = get(self.message, key, || {
            FieldPath::element("messages", self.index).field(key)
        })?;
        Ok(value.as_bool() == Some(true))
    }

    fn is_truthy(&self, key: &'static str) -> Result<bool, InputError> {
        truthy_field(self.message, self.index, key)
    }
}
