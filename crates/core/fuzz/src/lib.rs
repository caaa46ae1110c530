//! What the fuzz targets check, shared with the native regression test
//! (`tests/fuzz_regressions.rs` includes `checks.rs` and runs the committed
//! seeds and crashing inputs through the same functions).

#[path = "../../tests/properties/facts.rs"]
pub mod facts;
#[path = "../../tests/properties/reference.rs"]
pub mod reference;

pub mod checks;
