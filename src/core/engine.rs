//! The few JavaScript operations whose exact Rust implementations are large:
//! printing and parsing numbers that are not safe integers (Rust's float
//! formatting and parsing bring tens of KB of code and tables) and Unicode
//! lowercasing (its case tables).
//!
//! Natively, and so in every `cargo test`, the Rust implementations are
//! used. The wasm build uses the JavaScript engine's own (`wasm::engine`),
//! so that none of that code is linked into the `.wasm`: the engine is by
//! definition what JavaScript does. The choice is made at compile time
//! rather than by registering at start-up, so that nothing can run before
//! it or skip it (`wasm-bindgen-test-runner` does not run start functions).
//! Callers keep the cheap, common cases (safe integers, ASCII text) in Rust.

/// One implementation of each operation.
pub struct Engine {
    /// `String(x)`: exactly what JavaScript prints for the number `x`.
    pub number_to_string: fn(f64) -> String,
    /// `Number(text)` for a decimal literal without spaces (`-1.5e-3`).
    pub parse_number: fn(&str) -> f64,
    /// `text.toLowerCase()`.
    pub to_lowercase: fn(&str) -> String,
}

/// The Rust implementations.
#[cfg(not(target_arch = "wasm32"))]
pub static RUST: Engine = Engine {
    number_to_string: super::js_number::rust_number_to_string,
    parse_number: super::js_number::rust_parse_decimal,
    to_lowercase: str::to_lowercase,
};

/// The implementations in use.
#[cfg(not(target_arch = "wasm32"))]
pub fn engine() -> &'static Engine {
    &RUST
}

/// The implementations in use.
#[cfg(target_arch = "wasm32")]
pub fn engine() -> &'static Engine {
    &crate::wasm::engine::JAVASCRIPT
}

/// `text.toLowerCase()`; ASCII text without a call to the engine.
pub fn to_lowercase(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        (engine().to_lowercase)(text)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn lowercases_ascii_and_unicode_alike() {
        for text in [
            "",
            "Make SURE",
            "ÉCOLE Straße",
            "ΟΔΟΣ",
            "İstanbul",
            "\u{212A}elvin",
        ] {
            assert_eq!(to_lowercase(text), text.to_lowercase(), "{text}");
        }
    }
}
