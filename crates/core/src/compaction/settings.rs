//! Compaction settings (`resolveSettings`): pi's defaults, per-model
//! overrides that fall back field by field, and validation.
//!
//! The input is `{ enabled?, reserveTokens?, keepRecentTokens?,
//! modelOverrides?: { "provider/modelId": { enabled?, reserveTokens?,
//! keepRecentTokens? } } }`.
//!
//! - A field that is missing **or `null`** takes its default (or, in an
//!   override, the base setting). That is what pi's `?? default` reads do,
//!   and how the boundary treats optional fields elsewhere; an explicit value
//!   is used even when it equals the default. `null` for `settings`,
//!   `modelOverrides` or one override means "none" likewise.
//! - Unknown keys are ignored, so that a settings object shared with other
//!   code (or one from a newer version) still works.
//! - Every override is validated, not only the one for the current model, so
//!   that a settings object is valid or not whatever the model is.
//! - The model key is matched exactly (case-sensitive), as pi keys models.
//! - With a context window, the settings must leave room for compaction to
//!   work: `reserveTokens < contextWindow` and `reserveTokens +
//!   keepRecentTokens < contextWindow`. This holds whether or not `enabled`
//!   is true, since a manual compaction uses the same numbers.
//!
//! Differences from pi: pi validates nothing. Its settings manager reads
//! `compaction.enabled ?? true`, `reserveTokens ?? 16384` and
//! `keepRecentTokens ?? 20000` from the merged settings files, and passes on
//! whatever it finds (a string, a negative or fractional number, a reserve
//! larger than the window), which then misbehaves silently: `contextTokens >
//! contextWindow - reserveTokens` is always true with a reserve at or above
//! the window. pi also has no per-model compaction overrides (its
//! `modelOverrides` in `models.json` override model definitions, not
//! compaction settings); they are this package's addition.

use crate::compaction::serialize::describe;
use crate::error::InputError;
use crate::js::json::{stringified, Json, JsonObject};
use crate::js::number::{integer_to_string, number_to_string};
use crate::js::options::{expect_object, token_count_of, Reader, Value};
use crate::js::string::JsStr;

/// The resolved compaction settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Tokens kept free for the summary and the next answer: compaction
    /// starts once the context exceeds `contextWindow - reserveTokens`.
    pub reserve_tokens: u64,
    /// Roughly how many tokens of the most recent messages a compaction keeps.
    pub keep_recent_tokens: u64,
}

/// pi's `DEFAULT_COMPACTION_SETTINGS`.
pub const DEFAULT: CompactionSettings = CompactionSettings {
    enabled: true,
    reserve_tokens: 16384,
    keep_recent_tokens: 20000,
};

impl Default for CompactionSettings {
    fn default() -> Self {
        DEFAULT
    }
}

/// `Number.MAX_SAFE_INTEGER`: the largest token count accepted.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Why settings could not be resolved. `WrongType` is a JavaScript
/// `TypeError`, every other variant a `RangeError` (see
/// [`SettingsError::is_range_error`]). Field names are written as a
/// JavaScript reader would reach them: `settings.modelOverrides["a/b"].enabled`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("{field} must be {expected}, got {got}")]
    WrongType {
        field: String,
        expected: &'static str,
        got: &'static str,
    },
    /// A token count that is negative, fractional, not finite or above
    /// `Number.MAX_SAFE_INTEGER`; `got` is the number as JavaScript prints it.
    #[error("{field} must be a non-negative safe integer, got {got}")]
    NotATokenCount { field: String, got: String },
    #[error("contextWindow must be a positive finite number, got {got}")]
    InvalidContextWindow { got: String },
    /// `reserveTokens >= contextWindow`.
    #[error(
        "{reserve_field} ({}) must be less than contextWindow ({}), with room for \
         {keep_field} ({}): compaction starts when the context exceeds \
         contextWindow - reserveTokens = {} tokens, so it would run on every turn",
        integer_to_string(*.reserve),
        number_to_string(*.window),
        integer_to_string(*.keep),
        number_to_string(*.window - *.reserve as f64)
    )]
    ReserveFillsWindow {
        reserve_field: String,
        reserve: u64,
        keep_field: String,
        keep: u64,
        window: f64,
    },
    /// `reserveTokens + keepRecentTokens >= contextWindow`.
    #[error(
        "{reserve_field} ({}) + {keep_field} ({}) = {} must be less than \
         contextWindow ({}): compaction starts when the context exceeds \
         contextWindow - reserveTokens = {} tokens and keeps the most recent {}, \
         so it would find nothing to summarize",
        integer_to_string(*.reserve),
        integer_to_string(*.keep),
        integer_to_string(.reserve.saturating_add(*.keep)),
        number_to_string(*.window),
        number_to_string(*.window - *.reserve as f64),
        integer_to_string(*.keep)
    )]
    NothingToSummarize {
        reserve_field: String,
        reserve: u64,
        keep_field: String,
        keep: u64,
        window: f64,
    },
}

impl SettingsError {
    /// Whether JavaScript should see a `RangeError` (a value of the right
    /// type out of range) rather than a `TypeError`.
    pub fn is_range_error(&self) -> bool {
        !matches!(self, SettingsError::WrongType { .. })
    }
}

/// What the options say of the model: its settings key
/// ("provider/modelId") and, when it says, its context window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelInfo {
    pub key: Option<JsStr>,
    pub context_window: Option<f64>,
}

/// A compactor with no context window: none given, and the model says none.
pub const NO_CONTEXT_WINDOW: &str =
    "contextWindow is required: give options.contextWindow or a model with a contextWindow";

impl ModelInfo {
    /// The context window a compactor uses with this model: the one
    /// given, else the model's own, else `current` (the compactor's so
    /// far, when the model changes).
    pub fn window(&self, given: Option<f64>, current: Option<f64>) -> Result<f64, &'static str> {
        given
            .or(self.context_window)
            .or(current)
            .ok_or(NO_CONTEXT_WINDOW)
    }
}

/// A `model` option: absent (nothing known), a "provider/modelId" string,
/// or an object with string `provider` and `id` and a numeric
/// `contextWindow` or none. `units` gives a string's code units.
pub fn model_info<V: Value>(
    value: &V,
    r: &Reader<V>,
    units: impl Fn(&V::Text) -> JsStr,
) -> Result<ModelInfo, InputError> {
    if value.is_nullish() {
        return Ok(ModelInfo::default());
    }
    if let Some((key, _)) = value.text() {
        let key = Some(units(&key));
        return Ok(ModelInfo {
            key,
            context_window: None,
        });
    }
    let expected = "a \"provider/modelId\" string or a model object";
    expect_object(r.root, value, expected)?;
    let mut key = units(&r.string("provider")?);
    key.push_str("/");
    key.push_js(&units(&r.string("id")?));
    let context_window = r.number("contextWindow")?;
    Ok(ModelInfo {
        key: Some(key),
        context_window,
    })
}

/// `resolveSettings`' `options`: the model (read by `model`) and the
/// context window given, else the model's own.
pub fn model_options<V: Value>(
    options: &V,
    r: &Reader<V>,
    model: impl FnOnce(V) -> Result<ModelInfo, InputError>,
) -> Result<(ModelInfo, Option<f64>), InputError> {
    if options.is_nullish() {
        return Ok((ModelInfo::default(), None));
    }
    expect_object(r.root, options, "an object")?;
    let model = model(r.field("model")?)?;
    let window = r.number("contextWindow")?.or(model.context_window);
    Ok((model, window))
}

/// Resolves `settings` for the model `model_key` ("provider/modelId") and,
/// when known, its context window. See the module documentation.
pub fn resolve_settings(
    settings: Option<&Json>,
    model_key: Option<&JsStr>,
    context_window: Option<f64>,
) -> Result<CompactionSettings, SettingsError> {
    let base = match settings {
        None | Some(Json::Null) => None,
        Some(Json::Object(o)) => Some(o),
        Some(other) => {
            return Err(SettingsError::WrongType {
                field: "settings".into(),
                expected: "an object",
                got: describe(Some(other)),
            })
        }
    };
    let mut resolved = Resolved::DEFAULT;
    if let Some(base) = base {
        resolved.apply(Fields::read(base, Source::Base)?);
        // Validated whatever the model, applied only for a match.
        let mut matched = None;
        for (key, fields) in overrides(base)? {
            if model_key == Some(key) {
                matched = Some(fields);
            }
        }
        if let Some(fields) = matched {
            resolved.apply(fields);
        }
    }
    if let Some(window) = context_window {
        resolved.check_window(window)?;
    }
    Ok(CompactionSettings {
        enabled: resolved.enabled,
        reserve_tokens: resolved.reserve.0,
        keep_recent_tokens: resolved.keep.0,
    })
}

/// Where a value came from, to name it in errors.
#[derive(Clone, Copy, Debug)]
enum Source<'a> {
    Default,
    Base,
    Override(&'a JsStr),
}

impl Source<'_> {
    fn field(self, name: &str) -> String {
        match self {
            Source::Default => format!("the default {name}"),
            Source::Base => format!("settings.{name}"),
            Source::Override(key) => format!("{}.{name}", override_path(key)),
        }
    }
}

/// `settings.modelOverrides["key"]`, the key quoted as `JSON.stringify` does.
fn override_path(key: &JsStr) -> String {
    let quoted = stringified(&Json::String(key.clone()));
    // Lossless: the quoting escapes lone surrogates.
    format!("settings.modelOverrides[{}]", quoted.to_string_lossy())
}

/// The fields one settings object sets.
#[derive(Clone, Copy, Debug)]
struct Fields<'a> {
    enabled: Option<bool>,
    reserve: Option<(u64, Source<'a>)>,
    keep: Option<(u64, Source<'a>)>,
}

impl<'a> Fields<'a> {
    fn read(o: &JsonObject, source: Source<'a>) -> Result<Self, SettingsError> {
        let enabled = match o.get("enabled") {
            None | Some(Json::Null) => None,
            Some(Json::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(SettingsError::WrongType {
                    field: source.field("enabled"),
                    expected: "a boolean",
                    got: describe(Some(other)),
                })
            }
        };
        let count = |name: &str| -> Result<Option<(u64, Source<'a>)>, SettingsError> {
            Ok(token_count(o.get(name), || source.field(name))?.map(|n| (n, source)))
        };
        Ok(Fields {
            enabled,
            reserve: count("reserveTokens")?,
            keep: count("keepRecentTokens")?,
        })
    }
}

/// A token count: `None` when missing or `null`.
fn token_count(
    value: Option<&Json>,
    field: impl Fn() -> String,
) -> Result<Option<u64>, SettingsError> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(x)) => match token_count_of(*x) {
            Some(count) => Ok(Some(count)),
            None => Err(SettingsError::NotATokenCount {
                field: field(),
                got: number_to_string(*x),
            }),
        },
        Some(other) => Err(SettingsError::WrongType {
            field: field(),
            expected: "a non-negative safe integer",
            got: describe(Some(other)),
        }),
    }
}

/// Every override in `settings.modelOverrides`, validated.
fn overrides(settings: &JsonObject) -> Result<Vec<(&JsStr, Fields<'_>)>, SettingsError> {
    let map = match settings.get("modelOverrides") {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Object(map)) => map,
        Some(other) => {
            return Err(SettingsError::WrongType {
                field: "settings.modelOverrides".into(),
                expected: "an object",
                got: describe(Some(other)),
            })
        }
    };
    let mut out = Vec::new();
    for (key, value) in map.iter() {
        match value {
            Json::Null => {}
            Json::Object(o) => out.push((key, Fields::read(o, Source::Override(key))?)),
            other => {
                return Err(SettingsError::WrongType {
                    field: override_path(key),
                    expected: "an object",
                    got: describe(Some(other)),
                })
            }
        }
    }
    Ok(out)
}

/// Settings being resolved, each token count with where it came from.
struct Resolved<'a> {
    enabled: bool,
    reserve: (u64, Source<'a>),
    keep: (u64, Source<'a>),
}

impl<'a> Resolved<'a> {
    const DEFAULT: Resolved<'static> = Resolved {
        enabled: DEFAULT.enabled,
        reserve: (DEFAULT.reserve_tokens, Source::Default),
        keep: (DEFAULT.keep_recent_tokens, Source::Default),
    };

    fn apply(&mut self, fields: Fields<'a>) {
        if let Some(enabled) = fields.enabled {
            self.enabled = enabled;
        }
        if let Some(reserve) = fields.reserve {
            self.reserve = reserve;
        }
        if let Some(keep) = fields.keep {
            self.keep = keep;
        }
    }

    fn check_window(&self, window: f64) -> Result<(), SettingsError> {
        if !(window.is_finite() && window > 0.0) {
            return Err(SettingsError::InvalidContextWindow {
                got: number_to_string(window),
            });
        }
        let ((reserve, reserve_source), (keep, keep_source)) = (self.reserve, self.keep);
        let names = || {
            (
                reserve_source.field("reserveTokens"),
                keep_source.field("keepRecentTokens"),
            )
        };
        if at_least(reserve, window) {
            let (reserve_field, keep_field) = names();
            return Err(SettingsError::ReserveFillsWindow {
                reserve_field,
                reserve,
                keep_field,
                keep,
                window,
            });
        }
        // Both are at most 2^53 - 1: the sum cannot overflow.
        if at_least(reserve + keep, window) {
            let (reserve_field, keep_field) = names();
            return Err(SettingsError::NothingToSummarize {
                reserve_field,
                reserve,
                keep_field,
                keep,
                window,
            });
        }
        Ok(())
    }
}

/// `n >= window`, exactly, for a positive finite `window` (`n as f64` may
/// round above 2^53).
fn at_least(n: u64, window: f64) -> bool {
    let ceil = window.ceil();
    // 2^64: at or above it, no u64 reaches the window.
    if ceil >= 18_446_744_073_709_551_616.0 {
        return false;
    }
    n >= ceil as u64
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
