//! The `Compactor`'s options that are choices rather than conversions: the
//! fallback when the summarizer fails, which estimator measures the
//! context, what a token count or a timeout may be, and their defaults.
//! The binding reads each value (undefined, a string, a number) and asks
//! these; a refusal is what the value should have been, for the
//! `TypeError` that names the field.

/// A hung summarizer is a failure after this long (SPEC §3).
pub const DEFAULT_TIMEOUT_MS: f64 = 120_000.0;

/// The largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `fallback`: `"extractive"` or `"none"`; absent (undefined), extractive
/// exactly when there is no `summarize` callback (the offline summary is
/// then the only one). `text`: the value when it is a string.
pub fn fallback_extractive(
    undefined: bool,
    text: Option<&str>,
    has_summarize: bool,
) -> Result<bool, &'static str> {
    match text {
        Some("extractive") => Ok(true),
        Some("none") => Ok(false),
        None if undefined => Ok(!has_summarize),
        _ => Err("\"extractive\" or \"none\""),
    }
}

/// Which estimate the `Compactor` measures the context with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimatorChoice {
    Pi,
    Calibrated,
}

/// `estimator`: `"calibrated"` (the default: reading a text costs a few
/// nanoseconds per code unit, and a turn reads none unless a decision needs
/// it) or `"pi"`.
pub fn estimator(undefined: bool, text: Option<&str>) -> Result<EstimatorChoice, &'static str> {
    match text {
        Some("calibrated") => Ok(EstimatorChoice::Calibrated),
        Some("pi") => Ok(EstimatorChoice::Pi),
        None if undefined => Ok(EstimatorChoice::Calibrated),
        _ => Err("\"calibrated\" or \"pi\""),
    }
}

/// A token count or a duration option (`summarizerContextWindow`,
/// `summarizeTimeoutMs`), given (neither undefined nor null): a
/// non-negative safe integer. `number`: the value when it is a number.
pub fn token_count(number: Option<f64>) -> Result<u64, &'static str> {
    match number {
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= MAX_SAFE_INTEGER => Ok(x as u64),
        _ => Err("a non-negative safe integer"),
    }
}

/// The summarizer's timeout: the option, else [`DEFAULT_TIMEOUT_MS`].
pub fn timeout_ms(given: Option<u64>) -> f64 {
    given.map_or(DEFAULT_TIMEOUT_MS, |ms| ms as f64)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_is_extractive_without_a_summarizer() {
        assert_eq!(fallback_extractive(true, None, false), Ok(true));
        assert_eq!(fallback_extractive(true, None, true), Ok(false));
        assert_eq!(
            fallback_extractive(false, Some("extractive"), true),
            Ok(true)
        );
        assert_eq!(fallback_extractive(false, Some("none"), false), Ok(false));
        // null, another string, a number: refused.
        assert_eq!(
            fallback_extractive(false, None, true),
            Err("\"extractive\" or \"none\"")
        );
        assert!(fallback_extractive(false, Some("Extractive"), true).is_err());
    }

    #[test]
    fn pi_is_the_default_estimator() {
        assert_eq!(estimator(true, None), Ok(EstimatorChoice::Calibrated));
        assert_eq!(estimator(false, Some("pi")), Ok(EstimatorChoice::Pi));
        assert_eq!(
            estimator(false, Some("calibrated")),
            Ok(EstimatorChoice::Calibrated)
        );
        assert_eq!(estimator(false, None), Err("\"calibrated\" or \"pi\""));
        assert!(estimator(false, Some("")).is_err());
    }

    #[test]
    fn token_counts_are_non_negative_safe_integers() {
        assert_eq!(token_count(Some(0.0)), Ok(0));
        assert_eq!(token_count(Some(128_000.0)), Ok(128_000));
        assert_eq!(
            token_count(Some(MAX_SAFE_INTEGER)),
            Ok(9_007_199_254_740_991)
        );
        for bad in [
            Some(-1.0),
            Some(1.5),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(9.1e15),
            None,
        ] {
            assert_eq!(token_count(bad), Err("a non-negative safe integer"));
        }
        assert_eq!(timeout_ms(None), 120_000.0);
        assert_eq!(timeout_ms(Some(5)), 5.0);
    }
}
