//! JavaScript's exact semantics, where compatibility depends on them:
//! numbers as `String(x)` prints them, strings as UTF-16 code units, JSON as
//! `JSON.parse` and `JSON.stringify` treat it, dates as `Date` does; and the
//! engine hooks through which the binding lends the engine's own versions.

pub mod engine;
pub mod iso_time;
pub mod json;
pub mod number;
pub mod options;
pub mod shape;
pub mod string;

/// The Rust implementations of the engine hooks ([`engine::Engine`]), used
/// natively and whenever the binding lends none.
#[cfg(not(feature = "external-engine"))]
pub static RUST_ENGINE: engine::Engine = engine::Engine {
    number_to_string: number::rust_number_to_string,
    parse_number: number::rust_parse_decimal,
    to_lowercase: str::to_lowercase,
};
