//! Settings and models from JavaScript, and the `resolveSettings` export.

use crate::js::errors::input_error;
use crate::js::errors::thrown_message;
use crate::js::errors::wrong_type;
use crate::js::message_access::is_array;
use crate::js::strings::to_js_str;
use crate::js::values::{read_fields, read_options, shape};
use agent_compaction_core::compaction::clearing::resolve_all;
use agent_compaction_core::compaction::settings::{
    model_info, model_options, CompactionSettings, SettingsError,
};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::json::{Json, JsonObject};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The model a compactor or `resolveSettings` is told about.
pub use agent_compaction_core::compaction::settings::ModelInfo;

/// The `model` option (argument `name`), read by the core.
pub fn model_from_js(value: &JsValue, name: &'static str) -> Result<ModelInfo, InputError> {
    read_fields(name, value, |model, r| model_info(model, r, to_js_str))
}

/// The `settings` argument as data, read property by property (not through
/// `JSON.stringify`, which would turn `NaN` and `±Infinity` into `null`,
/// "the default", and drop functions): numbers reach the core as they are,
/// and the core decides which are valid. The outer error is the argument's
/// own (not an object); the inner one a value inside it that no setting can
/// be (a function, a symbol, a bigint), reported when the settings are
/// resolved, with the other settings errors.
pub type SettingsInput = Result<Option<Json>, SettingsError>;

pub fn settings_json(value: &JsValue) -> Result<SettingsInput, InputError> {
    let path = || FieldPath::argument("settings");
    if value.is_undefined() || value.is_null() {
        return Ok(Ok(None));
    }
    let array = is_array(value).map_err(|e| InputError::Unreadable {
        path: path(),
        reason: thrown_message(&e),
    })?;
    if !value.is_object() || array {
        return Err(wrong_type(path(), "an object", value));
    }
    let mut field = String::from("settings");
    match data(value, &mut field, 0) {
        Ok(json) => Ok(Ok(json)),
        Err(Unread::Setting(e)) => Ok(Err(e)),
        Err(Unread::Thrown(reason)) => Err(InputError::Unreadable {
            path: path(),
            reason,
        }),
    }
}

enum Unread {
    Setting(SettingsError),
    Thrown(String),
}

/// What a value inside the settings must be.
const JSON_DATA: &str = "JSON data (an object, array, string, number, boolean or null)";

/// Deeper than any settings object: a cycle.
const MAX_DEPTH: usize = 64;

/// `value` as JSON data, `None` for `undefined` (a missing field). Own
/// enumerable string keys are read, as `JSON.stringify` reads them; an
/// array's `undefined` elements are refused (no setting is one).
fn data(value: &JsValue, field: &mut String, depth: usize) -> Result<Option<Json>, Unread> {
    use js_sys::Reflect;
    let thrown = |e: JsValue| Unread::Thrown(thrown_message(&e));
    if value.is_undefined() {
        return Ok(None);
    }
    if value.is_null() {
        return Ok(Some(Json::Null));
    }
    if let Some(b) = value.as_bool() {
        return Ok(Some(Json::Bool(b)));
    }
    if let Some(x) = value.as_f64() {
        return Ok(Some(Json::Number(x)));
    }
    if let Some(s) = value.dyn_ref::<js_sys::JsString>() {
        return Ok(Some(Json::String(to_js_str(s))));
    }
    if !value.is_object() || depth >= MAX_DEPTH {
        let got = if value.is_object() {
            "an object nested too deeply (a cycle?)"
        } else if value.is_function() {
            "a function"
        } else if value.is_symbol() {
            "a symbol"
        } else {
            "a bigint"
        };
        return Err(Unread::Setting(SettingsError::WrongType {
            field: field.clone(),
            expected: JSON_DATA,
            got,
        }));
    }
    let at = field.len();
    if is_array(value).map_err(thrown)? {
        let length = Reflect::get(value, &"length".into())
            .map_err(thrown)?
            .as_f64()
            .unwrap_or(0.0) as u32;
        let mut out = Vec::new();
        for i in 0..length {
            let item = Reflect::get_u32(value, i).map_err(thrown)?;
            field.truncate(at);
            field.push_str(&format!("[{i}]"));
            // An element that is `undefined` (a hole of a sparse array) is
            // no setting: refused at its index, before the rest of an array
            // that may be 2^32 - 1 holes long is read.
            let Some(json) = data(&item, field, depth + 1)? else {
                return Err(Unread::Setting(SettingsError::WrongType {
                    field: field.clone(),
                    expected: JSON_DATA,
                    got: "undefined",
                }));
            };
            out.push(json);
        }
        field.truncate(at);
        return Ok(Some(Json::Array(out)));
    }
    let mut out = JsonObject::new();
    for key in Reflect::own_keys(value).map_err(thrown)?.iter() {
        let Some(name) = key.dyn_ref::<js_sys::JsString>() else {
            continue;
        };
        let descriptor =
            Reflect::get_own_property_descriptor(value.unchecked_ref::<js_sys::Object>(), &key)
                .map_err(thrown)?;
        let enumerable = descriptor.is_object()
            && Reflect::get(&descriptor, &"enumerable".into())
                .map_err(thrown)?
                .is_truthy();
        if !enumerable {
            continue;
        }
        let item = Reflect::get(value, &key).map_err(thrown)?;
        let name = to_js_str(name);
        field.truncate(at);
        field.push('.');
        field.push_str(&name.to_string_lossy());
        if let Some(json) = data(&item, field, depth + 1)? {
            out.insert(name, json);
        }
    }
    field.truncate(at);
    Ok(Some(Json::Object(out)))
}

pub(crate) fn settings_error(e: SettingsError) -> JsValue {
    let message = e.to_string();
    if e.is_range_error() {
        js_sys::RangeError::new(&message).into()
    } else {
        js_sys::TypeError::new(&message).into()
    }
}

pub fn settings_object(s: &CompactionSettings) -> JsValue {
    shape(agent_compaction_core::compaction::shapes::settings(s))
}

#[wasm_bindgen(js_name = resolveSettings, skip_typescript)]
pub fn resolve_settings(settings: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let settings = settings_json(&settings)
        .map_err(input_error)?
        .map_err(settings_error)?;
    let (model, window) = read_options(&options, |options, r| {
        model_options(options, r, |model| model_from_js(&model.0, "options.model"))
    })
    .map_err(input_error)?;
    let (resolved, _) =
        resolve_all(settings.as_ref(), model.key.as_ref(), window).map_err(settings_error)?;
    Ok(settings_object(&resolved))
}
