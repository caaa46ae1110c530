//! The few JavaScript operations whose exact Rust implementations are large:
//! printing and parsing numbers that are not safe integers (Rust's float
//! formatting and parsing bring tens of KB of code and tables) and Unicode
//! lowercasing (its case tables).
//!
//! By default, and so in every native `cargo test`, the Rust
//! implementations are used. With the feature `external-engine` the core
//! links against an [`Engine`] that the binding defines under the symbol
//! `agent_compaction_engine` (the wasm package lends the JavaScript
//! engine's own functions, which are by definition what JavaScript does),
//! so that none of the Rust code is linked into the `.wasm`. The core never
//! names the binding: the linker joins the two. The choice is made at
//! build time rather than by registering at start-up, so that nothing can
//! run before it or skip it (`wasm-bindgen-test-runner` does not run start
//! functions), and a build with the feature but without a definition fails
//! to link instead of misbehaving. Callers keep the cheap, common cases
//! (safe integers, ASCII text) in Rust.

/// One implementation of each operation.
pub struct Engine {
    /// `String(x)`: exactly what JavaScript prints for the number `x`.
    pub number_to_string: fn(f64) -> String,
    /// `Number(text)` for a decimal literal without spaces (`-1.5e-3`).
    pub parse_number: fn(&str) -> f64,
    /// `text.toLowerCase()`.
    pub to_lowercase: fn(&str) -> String,
}

/// The implementations in use: the Rust ones, which `js` assembles from
/// the modules that write them.
#[cfg(not(feature = "external-engine"))]
pub fn engine() -> &'static Engine {
    &super::RUST_ENGINE
}

#[cfg(feature = "external-engine")]
extern "Rust" {
    /// Defined by the binding: `#[export_name = "agent_compaction_engine"]`.
    #[link_name = "agent_compaction_engine"]
    static EXTERNAL: Engine;
}

/// The implementations in use.
#[cfg(feature = "external-engine")]
pub fn engine() -> &'static Engine {
    // SAFETY: the binding defines this immutable static with this very type
    // (the wasm package's `js::engine::JAVASCRIPT`); nothing writes it.
    unsafe { &EXTERNAL }
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
