//! The history search at the boundary (`core::history`): the Compactor's
//! `searchHistory`, `readHistory` and `historyTool` over the messages the
//! model no longer sees. The index is the Compactor's, built at the first
//! search and kept in step at each one after (only messages hidden since,
//! or replaced, are read), by identity through the shim's
//! `historyChanged`; texts cross in runs (`gatherTexts`). What is hidden,
//! what to index, the ranking, the excerpts, the pages and the tools'
//! answers are the core's.

use crate::compactor::Compactor;
use crate::js::errors::{input_error, messages_unreadable};
use crate::js::message_access::JsArray;
use crate::js::message_facts::texts_at;
use crate::js::values::{read_fields, read_options, shape, Opt};
use agent_compaction_core::error::FieldPath;
use agent_compaction_core::history::index::{Hit, Index};
use agent_compaction_core::history::lookup::{
    self, message_text, ranked, read_result, search_result,
};
use agent_compaction_core::history::reference::{Page, Reference, DEFAULT_PAGE_CHARS};
use agent_compaction_core::history::tool::{self, Call, Tool};
use agent_compaction_core::history::HistoryError;
use agent_compaction_core::message::role::Role;
use js_sys::Array;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = historyChanged, catch)]
    fn history_changed(
        known: &Array,
        messages: &Array,
        hidden: &[u32],
    ) -> Result<Vec<u32>, JsValue>;
}

/// A Compactor's history index and what it indexed.
#[derive(Default)]
pub(crate) struct Books {
    index: Index,
    /// The messages indexed, by place (the shim's copy).
    known: Array,
    /// The hidden places read so far (with text or not), ascending.
    read: Vec<u32>,
}

/// Messages' roles and searched texts (none if nothing is searched), by
/// place.
type Texts = Vec<(u32, (Role, Option<String>))>;

/// A search's hits (with their messages' roles and texts) and how many
/// messages it searched.
type Found = (Vec<(Hit, Role, String)>, usize);

/// The error a refused search or read throws.
pub(crate) fn history_error(e: HistoryError) -> JsValue {
    js_sys::Error::new(&e.to_string()).into()
}

impl Books {
    /// In step with `array`, of which the history holds the messages at
    /// `hidden` (ascending, `lookup::hidden`): returns how many messages
    /// the index holds.
    pub(crate) fn sync(&mut self, array: &JsArray, hidden: &[usize]) -> Result<usize, JsValue> {
        let mut places = Vec::with_capacity(hidden.len());
        for &i in hidden {
            places.push(i as u32);
        }
        let changed = history_changed(&self.known, array.as_array(), &places)
            .map_err(|thrown| input_error(messages_unreadable(thrown)))?;
        let mut changed_at = Vec::with_capacity(changed.len());
        for &i in &changed {
            changed_at.push(i as usize);
        }
        let plan = lookup::sync(&self.read, hidden, &changed_at);
        for &key in &plan.remove {
            self.index.remove(key);
        }
        for (key, (_, text)) in Books::texts_at(array, &plan.add)? {
            if let Some(text) = text {
                self.index.add(key, &text).map_err(history_error)?;
            }
        }
        // Only now: a failure above leaves the places to be read again.
        self.read = places;
        Ok(self.index.messages())
    }

    /// The texts and roles of the messages `keys` (any order).
    fn texts(array: &JsArray, keys: &[u32]) -> Result<Texts, JsValue> {
        let mut sorted: Vec<u32> = Vec::with_capacity(keys.len());
        for &key in keys {
            if let Err(at) = sorted.binary_search(&key) {
                sorted.insert(at, key);
            }
        }
        Books::texts_at(array, &sorted)
    }

    /// The texts and roles of the messages `keys` (ascending, no repeats).
    fn texts_at(array: &JsArray, keys: &[u32]) -> Result<Texts, JsValue> {
        texts_at(array, keys, |m| {
            (m.role.unwrap_or(Role::Other), message_text(m))
        })
        .map_err(input_error)
    }

    fn search(
        &mut self,
        array: &JsArray,
        hidden: &[usize],
        query: &str,
        limit: usize,
    ) -> Result<Found, JsValue> {
        let searched = self.sync(array, hidden)?;
        let (terms, best) = ranked(&mut self.index, query, limit).map_err(history_error)?;
        let mut keys = Vec::with_capacity(best.len());
        for r in &best {
            keys.push(r.key);
        }
        let texts = Books::texts(array, &keys)?;
        let mut found = Vec::with_capacity(best.len());
        for r in &best {
            let Some((_, (role, Some(text)))) = texts.iter().find(|(k, _)| *k == r.key) else {
                continue;
            };
            if let Some(hit) = lookup::hit(r, text, &terms) {
                found.push((hit, *role, text.clone()));
            }
        }
        Ok((found, searched))
    }

    fn read(
        &mut self,
        array: &JsArray,
        hidden: &[usize],
        reference: &str,
        offset: Option<usize>,
        max_chars: usize,
    ) -> Result<(Reference, Role, String, Page), JsValue> {
        let reference = Reference::parse(reference).map_err(history_error)?;
        self.sync(array, hidden)?;
        let texts = Books::texts_at(array, &[reference.key])?;
        let text = texts
            .first()
            .filter(|(k, _)| *k == reference.key)
            .map(|(_, t)| t);
        let page = lookup::read(
            &self.index,
            &reference,
            text.map(|(_, t)| t.as_deref().unwrap_or("")),
            offset,
            max_chars,
        )
        .map_err(history_error)?;
        let (role, text) = text.map_or((Role::Other, None), |(role, text)| (*role, text.clone()));
        let text = text.unwrap_or_default();
        Ok((reference, role, text, page))
    }
}

/// `options.limit` of `searchHistory` (1 to 100, 10 if not given).
fn search_limit(options: &JsValue) -> Result<usize, JsValue> {
    read_options(options, lookup::search_limit).map_err(input_error)
}

/// A string argument.
pub(crate) fn string_argument(value: &JsValue, name: &'static str) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| {
        input_error(crate::js::errors::wrong_type(
            FieldPath::argument(name),
            "a string",
            value,
        ))
    })
}

/// A tool call's arguments, for the tool `name`.
pub(crate) fn tool_call(name: &JsValue, args: &JsValue) -> Result<Call, JsValue> {
    let which = (name.as_string().as_deref())
        .and_then(Tool::named)
        .ok_or_else(|| {
            input_error(crate::js::errors::wrong_type(
                FieldPath::argument("name"),
                "\"search_history\" or \"read_history\"",
                name,
            ))
        })?;
    read_fields("arguments", args, |v: &Opt, r| tool::call(which, v, r)).map_err(input_error)
}

#[wasm_bindgen]
impl Compactor {
    /// Searches the messages of `messages` the model no longer sees:
    /// `{ hits: [{ ref, index, role, excerpt, score }], searched }`.
    #[wasm_bindgen(js_name = searchHistory)]
    pub fn search_history(
        &self,
        messages: JsValue,
        query: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let query = string_argument(&query, "query")?;
        let limit = search_limit(&options)?;
        self.with_history(&messages, |array, hidden, books| {
            let (found, searched) = books.search(array, hidden, &query, limit)?;
            Ok(shape(search_result(&found, searched)))
        })?
    }

    /// The original text a search's `ref` points at, a page at a time:
    /// `{ ref, index, role, text, next }`.
    #[wasm_bindgen(js_name = readHistory)]
    pub fn read_history(
        &self,
        messages: JsValue,
        reference: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let reference = string_argument(&reference, "ref")?;
        let (offset, max_chars) =
            read_options(&options, lookup::read_options).map_err(input_error)?;
        self.with_history(&messages, |array, hidden, books| {
            let (reference, role, text, page) =
                books.read(array, hidden, &reference, offset, max_chars)?;
            Ok(shape(read_result(&reference, role, &text, &page)))
        })?
    }

    /// What the tool `name` (`search_history` or `read_history`) answers
    /// the model for `args`: the text of its result.
    #[wasm_bindgen(js_name = historyTool)]
    pub fn history_tool(
        &self,
        messages: JsValue,
        name: JsValue,
        args: JsValue,
    ) -> Result<String, JsValue> {
        let call = tool_call(&name, &args)?;
        self.with_history(&messages, |array, hidden, books| match call {
            Call::Search { query, limit } => {
                let (found, searched) = books.search(array, hidden, &query, limit)?;
                Ok(tool::search_answer(&query, &found, searched))
            }
            Call::Read { reference, offset } => {
                let (reference, role, text, page) =
                    books.read(array, hidden, &reference, offset, DEFAULT_PAGE_CHARS)?;
                Ok(tool::read_answer(&reference, role, &text, &page))
            }
        })?
    }

    /// The tools' definitions: `[{ name, description, parameters }]`
    /// (`parameters`: a JSON Schema). From the first call on, the model is
    /// sent the last summary ending with the history note.
    #[wasm_bindgen(js_name = historyTools)]
    pub fn history_tools(&self) -> Result<Array, JsValue> {
        self.offer_history()?;
        tool::DEFINITIONS
            .iter()
            .map(|d| {
                let parameters = js_sys::JSON::parse(d.parameters)?;
                Ok(crate::js::values::object(&[
                    ("name", d.name.into()),
                    ("description", d.description.into()),
                    ("parameters", parameters),
                ]))
            })
            .collect()
    }
}
