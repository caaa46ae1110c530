//! Reading a JavaScript options object the way every entry point of the
//! package reads one: which values count as absent (`undefined`, `null`,
//! sometimes an empty string), what each kind of option may be, and the
//! `TypeError` text naming the field (`options.summarize must be a
//! function, got a number`).
//!
//! The binding implements [`Value`] for the engine's values and hands a
//! [`Reader`] the property read (a getter may throw: that is its error);
//! the option sets built from these rules are `compaction::options`.

use crate::error::{FieldPath, InputError};

/// `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `x` as a token count: a non-negative safe integer (-0 is one too, and
/// counts as 0), else `None`.
pub fn token_count_of(x: f64) -> Option<u64> {
    (x.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&x)).then_some(x as u64)
}

/// The number `got` at `path`, which must be `expected`: a `RangeError`'s
/// text, the number as JavaScript prints it.
pub fn out_of_range(path: FieldPath, expected: &'static str, got: f64) -> InputError {
    InputError::OutOfRange {
        path,
        expected,
        got: super::number::number_to_string(got),
    }
}

/// A token count or a duration option (`summarizerContextWindow`,
/// `summarizeTimeoutMs`), given (neither undefined nor null): a
/// non-negative safe integer. `number`: the value when it is a number.
pub fn token_count(number: Option<f64>) -> Result<u64, &'static str> {
    number
        .and_then(token_count_of)
        .ok_or("a non-negative safe integer")
}

/// A JavaScript value, as the readers ask about it. `Text` and `Function`
/// are the engine's own (never copied); `name` copies a short string (an
/// option that names a choice).
pub trait Value: Sized {
    type Text;
    type Function;
    fn is_undefined(&self) -> bool;
    fn is_null(&self) -> bool;
    fn is_object(&self) -> bool;
    fn is_truthy(&self) -> bool;
    fn number(&self) -> Option<f64>;
    fn boolean(&self) -> Option<bool>;
    /// The string itself when the value is a string, with its length in
    /// UTF-16 code units.
    fn text(&self) -> Option<(Self::Text, usize)>;
    fn name(&self) -> Option<String>;
    fn function(&self) -> Option<Self::Function>;
    /// Whether the value is an `AbortSignal`.
    fn is_abort_signal(&self) -> bool;
    /// How an error names the value (`a number`, `null`, `an object`, …).
    fn describe(&self) -> String;

    /// `undefined` or `null`.
    fn is_nullish(&self) -> bool {
        self.is_undefined() || self.is_null()
    }
}

/// The fields of one options object (`root` names it in errors: `options`).
pub struct Reader<'a, V> {
    pub root: &'static str,
    pub get: &'a dyn Fn(&'static str) -> Result<V, InputError>,
}

impl<V: Value> Reader<'_, V> {
    pub fn path(&self, key: &'static str) -> FieldPath {
        FieldPath::argument(self.root).field(key)
    }

    /// The field as it is.
    pub fn field(&self, key: &'static str) -> Result<V, InputError> {
        (self.get)(key)
    }

    /// The error for `value` at `key`, which should have been `expected`.
    pub fn wrong(&self, key: &'static str, expected: &'static str, value: &V) -> InputError {
        InputError::WrongType {
            path: self.path(key),
            expected,
            got: value.describe(),
        }
    }

    /// A field that must be a number `expected` describes: a `RangeError`'s
    /// text when it is a number but not such a one, a `TypeError`'s else.
    pub fn wrong_number(&self, key: &'static str, expected: &'static str, value: &V) -> InputError {
        match value.number() {
            Some(n) => out_of_range(self.path(key), expected, n),
            None => self.wrong(key, expected, value),
        }
    }

    /// A function, or `None` when `undefined` or `null`.
    pub fn function(&self, key: &'static str) -> Result<Option<V::Function>, InputError> {
        let value = self.field(key)?;
        if value.is_nullish() {
            return Ok(None);
        }
        value
            .function()
            .map(Some)
            .ok_or_else(|| self.wrong(key, "a function", &value))
    }

    /// An `AbortSignal`, or `None` when `undefined` or `null`.
    pub fn abort_signal(&self, key: &'static str) -> Result<Option<V>, InputError> {
        let value = self.field(key)?;
        if value.is_nullish() {
            return Ok(None);
        }
        match value.is_abort_signal() {
            true => Ok(Some(value)),
            false => Err(self.wrong(key, "an AbortSignal", &value)),
        }
    }

    /// A number, or `None` when `undefined` (`null` is not a number).
    pub fn number(&self, key: &'static str) -> Result<Option<f64>, InputError> {
        let value = self.field(key)?;
        if value.is_undefined() {
            return Ok(None);
        }
        value
            .number()
            .map(Some)
            .ok_or_else(|| self.wrong(key, "a number", &value))
    }

    /// A string (any, even empty).
    pub fn string(&self, key: &'static str) -> Result<V::Text, InputError> {
        let value = self.field(key)?;
        match value.text() {
            Some((text, _)) => Ok(text),
            None => Err(self.wrong(key, "a string", &value)),
        }
    }

    /// A number that must be given.
    pub fn required_number(&self, key: &'static str) -> Result<f64, InputError> {
        let value = self.field(key)?;
        value
            .number()
            .ok_or_else(|| self.wrong(key, "a number", &value))
    }

    /// A non-empty string; `None` when empty, `undefined` or `null`.
    pub fn text(&self, key: &'static str) -> Result<Option<V::Text>, InputError> {
        let value = self.field(key)?;
        match value.text() {
            Some((text, len)) => Ok((len > 0).then_some(text)),
            None if value.is_nullish() => Ok(None),
            None => Err(self.wrong(key, "a string", &value)),
        }
    }

    /// A non-negative safe integer, or `None` when `undefined` or `null`.
    pub fn token_count(&self, key: &'static str) -> Result<Option<u64>, InputError> {
        let value = self.field(key)?;
        if value.is_nullish() {
            return Ok(None);
        }
        token_count(value.number())
            .map(Some)
            .map_err(|expected| self.wrong_number(key, expected, &value))
    }

    /// Whether the field is truthy.
    pub fn truthy(&self, key: &'static str) -> Result<bool, InputError> {
        Ok(self.field(key)?.is_truthy())
    }
}

/// An options argument that must be an object (`expected` says what else
/// it may be, e.g. `an object or undefined`).
pub fn expect_object<V: Value>(
    root: &'static str,
    value: &V,
    expected: &'static str,
) -> Result<(), InputError> {
    if value.is_object() {
        return Ok(());
    }
    Err(InputError::WrongType {
        path: FieldPath::argument(root),
        expected,
        got: value.describe(),
    })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests;
