//! Composes text out of the engine's own strings, so that the caller's text
//! comes back exactly (UTF-16, lone surrogates included) and is never copied
//! into wasm memory.

use agent_compaction_core::message::llm::TextSink;
use js_sys::JsString;

pub struct JsText(JsString);

impl Default for JsText {
    fn default() -> Self {
        JsText(JsString::from(""))
    }
}

impl JsText {
    pub fn into_inner(self) -> JsString {
        self.0
    }
}

impl TextSink for JsText {
    type Text = JsString;

    fn literal(&mut self, s: &str) {
        self.0 = self.0.concat(&JsString::from(s).into());
    }

    fn text(&mut self, t: &JsString) {
        self.0 = self.0.concat(t);
    }

    fn text_replacing(&mut self, t: &JsString, needle: &str, replacement: &str) {
        let replaced = if t.includes(needle, 0) {
            t.replace_all(needle, replacement)
        } else {
            t.clone()
        };
        self.0 = self.0.concat(&replaced);
    }
}
