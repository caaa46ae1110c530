//! The JavaScript engine's own number conversions and lowercasing, which
//! the core is linked with in the wasm build (its feature `external-engine`,
//! `agent_compaction_core::js::engine`): exact by definition, and they keep
//! Rust's float formatting, float parsing and case tables out of the `.wasm`.

use agent_compaction_core::js::engine::Engine;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = numberText)]
    fn number_text(x: f64) -> String;
    #[wasm_bindgen(js_name = textNumber)]
    fn text_number(text: &str) -> f64;
    #[wasm_bindgen(js_name = lowerCase)]
    fn lower_case(text: &str) -> String;
}

/// The core's engine: the symbol its `external-engine` feature links to.
#[export_name = "agent_compaction_engine"]
pub static JAVASCRIPT: Engine = Engine {
    number_to_string: number_text,
    parse_number: text_number,
    to_lowercase: lower_case,
};

#[cfg(test)]
mod tests {
    use super::JAVASCRIPT;
    use agent_compaction_core::js::number::{rust_number_to_string, rust_parse_decimal};
    use wasm_bindgen_test::*;

    /// The engine agrees with the Rust implementations the native tests
    /// check against Node.
    #[wasm_bindgen_test]
    #[allow(clippy::excessive_precision)] // an exact tie, as in js_number's tests
    fn engine_matches_the_rust_implementations() {
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut xs = vec![
            0.1,
            -1.5e-7,
            1e21,
            2f64.powi(-24),
            21957341185706.5625,
            f64::MAX,
        ];
        while xs.len() < 3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            xs.push(f64::from_bits(state));
            xs.push((state % 100_000) as f64 * 10f64.powi((state >> 40) as i32 % 40 - 20));
        }
        for x in xs {
            let text = rust_number_to_string(x);
            assert_eq!((JAVASCRIPT.number_to_string)(x), text);
            let back = (JAVASCRIPT.parse_number)(&text);
            assert_eq!(
                back.to_bits(),
                rust_parse_decimal(&text).to_bits(),
                "{text}"
            );
        }
        for text in [
            "Make SURE",
            "ÉCOLE Straße",
            "ΟΔΟΣ",
            "İstanbul",
            "\u{212A}elvin",
        ] {
            assert_eq!((JAVASCRIPT.to_lowercase)(text), text.to_lowercase());
        }
    }
}
