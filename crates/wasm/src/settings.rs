//! Settings and models from JavaScript, and the `resolveSettings` export.

use crate::js::errors::type_error;
use crate::js::errors::{describe, thrown_message};
use crate::js::strings::to_js_str;
use crate::js::values::{read_fields, read_options, shape};
use agent_compaction_core::compaction::settings::{
    model_info, model_options, resolve_settings as core_resolve, CompactionSettings, SettingsError,
};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::json::{self, Json};
use agent_compaction_core::js::string::JsStr;
use wasm_bindgen::prelude::*;

/// The model a compactor or `resolveSettings` is told about.
pub use agent_compaction_core::compaction::settings::ModelInfo;

/// The `model` option (argument `name`), read by the core.
pub fn model_from_js(value: &JsValue, name: &'static str) -> Result<ModelInfo, InputError> {
    read_fields(name, value, |model, r| model_info(model, r, to_js_str))
}

pub fn settings_json(value: &JsValue) -> Result<Option<Json>, InputError> {
    let path = || FieldPath::argument("settings");
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(InputError::WrongType {
            path: path(),
            expected: "an object",
            got: describe(value),
        });
    }
    let text = js_sys::JSON::stringify(value).map_err(|thrown| InputError::Unreadable {
        path: path(),
        reason: thrown_message(&thrown),
    })?;
    let text = String::from(text);
    json::parse(&text)
        .map(Some)
        .map_err(|e| InputError::Unreadable {
            path: path(),
            reason: e.to_string(),
        })
}

pub(crate) fn settings_error(e: SettingsError) -> JsValue {
    let message = e.to_string();
    if e.is_range_error() {
        js_sys::RangeError::new(&message).into()
    } else {
        js_sys::TypeError::new(&message).into()
    }
}

pub fn resolve_from_js(
    settings: Option<&Json>,
    model_key: Option<&JsStr>,
    window: Option<f64>,
) -> Result<CompactionSettings, JsValue> {
    core_resolve(settings, model_key, window).map_err(settings_error)
}

pub fn settings_object(s: &CompactionSettings) -> JsValue {
    shape(agent_compaction_core::compaction::shapes::settings(s))
}

#[wasm_bindgen(js_name = resolveSettings, skip_typescript)]
pub fn resolve_settings(settings: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let settings = settings_json(&settings).map_err(type_error)?;
    let (model, window) = read_options(&options, |options, r| {
        model_options(options, r, |model| model_from_js(&model.0, "options.model"))
    })
    .map_err(type_error)?;
    let resolved = resolve_from_js(settings.as_ref(), model.key.as_ref(), window)?;
    Ok(settings_object(&resolved))
}
