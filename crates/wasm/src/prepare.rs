//! pi-compatible `findCutPoint` and `prepareCompaction` on the flat array.

use crate::js::errors::describe;
use crate::js::errors::input_error;
use crate::js::errors::messages_unreadable;
use crate::js::message_access::{message_at, messages_array, string_field, JsArray, SummaryAt};
use crate::js::message_facts::{message_facts, EstimateChunks};
use crate::js::strings::{to_js_str, to_js_string};
use crate::js::values::{number, read_fields, shape};
use agent_compaction_core::compaction::cut_point::{
    find_cut_point as core_find_cut_point, index_argument,
};
use agent_compaction_core::compaction::file_ops::FileOps;
use agent_compaction_core::compaction::options::EstimatorChoice;
use agent_compaction_core::compaction::prepare::{keep_recent_setting, prepare_compaction_with};
use agent_compaction_core::compaction::shapes::{self, PreparedValues};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::shape::{Field, Shape};
use agent_compaction_core::js::string::JsStr;
use agent_compaction_core::message::file_lists;
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::{Array, JsString};
use std::ops::Range;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = toolCallPaths, catch)]
    fn tool_call_paths(messages: &Array, from: u32, to: u32) -> Result<Array, JsValue>;
}

#[wasm_bindgen(js_name = findCutPoint, skip_typescript)]
pub fn find_cut_point(
    messages: JsValue,
    start: JsValue,
    end: JsValue,
    keep_recent_tokens: JsValue,
) -> Result<JsValue, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    let index = |value: &JsValue, name, max| {
        index_argument(value.as_f64(), name, max, || describe(value)).map_err(input_error)
    };
    let end = index(&end, "end", array.len())?;
    let start = index(&start, "start", end)?;
    let keep = number(&keep_recent_tokens, || {
        FieldPath::argument("keepRecentTokens")
    })
    .map_err(input_error)?;
    let facts = message_facts(&array, start, end, false).map_err(input_error)?;
    let cut = core_find_cut_point(&facts, 0, facts.len(), keep);
    Ok(shape(shapes::cut_point(
        cut.first_kept_index,
        cut.turn_start_index,
        cut.is_split_turn,
        start as usize,
    )))
}

/// The file lists the summary at `index` carries into the next one
/// (none when a hook wrote it: the core's `file_lists::carried`).
pub fn add_summary_files(
    ops: &mut FileOps,
    array: &JsArray,
    index: usize,
) -> Result<(), InputError> {
    let message = message_at(array, index)?;
    let files = file_lists::carried(&SummaryAt {
        message: &message,
        index,
    })?;
    ops.add_previous(
        files.read.iter().map(to_js_str),
        files.modified.iter().map(to_js_str),
    );
    Ok(())
}

/// The `read` / `write` / `edit` tool calls of `array[range]` into `ops`.
pub fn add_tool_calls(
    ops: &mut FileOps,
    array: &JsArray,
    range: Range<usize>,
) -> Result<(), InputError> {
    let pairs = tool_call_paths(array.as_array(), range.start as u32, range.end as u32)
        .map_err(messages_unreadable)?;
    let pairs: Vec<JsString> = pairs
        .iter()
        .filter_map(|v| v.dyn_into::<JsString>().ok())
        .collect();
    for pair in pairs.chunks_exact(2) {
        ops.add_tool_call(&to_js_str(&pair[0]), to_js_str(&pair[1]));
    }
    Ok(())
}

pub fn string_array(paths: impl IntoIterator<Item = JsStr>) -> JsValue {
    paths
        .into_iter()
        .map(|p| JsValue::from(to_js_string(&p)))
        .collect::<Array>()
        .into()
}

/// A preparation with the caller's own objects, for `prepareCompaction`
/// and for the compactor.
pub struct Prepared {
    pub plan: agent_compaction_core::compaction::prepare::Preparation,
    pub messages_to_summarize: Array,
    pub turn_prefix_messages: Array,
    pub previous_summary: Option<JsString>,
    pub file_ops: FileOps,
}

impl Prepared {
    /// The object `prepareCompaction` returns (laid out by the core).
    pub fn shape(&self, settings: Field<JsValue>) -> Shape<JsValue> {
        let ops = &self.file_ops;
        let values = PreparedValues {
            messages_to_summarize: self.messages_to_summarize.clone().into(),
            turn_prefix_messages: self.turn_prefix_messages.clone().into(),
            previous_summary: self.previous_summary.clone().map(JsValue::from),
            file_ops: [&ops.read, &ops.written, &ops.edited]
                .map(|l| string_array(l.iter().cloned())),
        };
        shapes::preparation(&self.plan, values, settings)
    }
}

/// pi's preparation for `array`, whose facts are `facts`; `None` when there
/// is nothing to summarize.
pub fn prepare(
    array: &JsArray,
    facts: &[MessageFacts],
    keep_recent_tokens: f64,
    estimator: EstimatorChoice,
    one_request: bool,
    after_failed_attempt: bool,
) -> Result<Option<Prepared>, InputError> {
    // Estimates the facts lack (gathered lazily) are measured when asked
    // for, newest first, a chunk at a time.
    let mut chunks = EstimateChunks::with(array, estimator);
    let mut tokens = |i: usize| -> Result<u64, InputError> {
        match facts.get(i) {
            Some(f) if !f.tokens_pending() => Ok(u64::from(f.tokens)),
            _ => chunks.get(i),
        }
    };
    let Some(mut plan) =
        prepare_compaction_with(facts, keep_recent_tokens, after_failed_attempt, &mut tokens)?
    else {
        return Ok(None);
    };
    if one_request {
        plan = plan.in_one_request();
    }
    let mut file_ops = FileOps::default();
    let previous_summary = match plan.previous_summary_index {
        Some(i) => {
            let summary = string_field(&message_at(array, i)?, i, "summary")?;
            add_summary_files(&mut file_ops, array, i)?;
            Some(summary)
        }
        None => None,
    };
    for range in [&plan.history, &plan.turn_prefix] {
        add_tool_calls(&mut file_ops, array, range.clone())?;
    }
    let slice = |r: &Range<usize>| array.slice(r.start as u32, r.end as u32);
    Ok(Some(Prepared {
        messages_to_summarize: slice(&plan.history)?,
        turn_prefix_messages: slice(&plan.turn_prefix)?,
        previous_summary,
        file_ops,
        plan,
    }))
}

#[wasm_bindgen(js_name = prepareCompaction, skip_typescript)]
pub fn prepare_compaction(messages: JsValue, settings: JsValue) -> Result<JsValue, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    let keep = read_fields("settings", &settings, keep_recent_setting).map_err(input_error)?;
    let facts = message_facts(&array, 0, array.len(), true).map_err(input_error)?;
    Ok(
        match prepare(&array, &facts, keep, EstimatorChoice::Pi, false, false)
            .map_err(input_error)?
        {
            Some(p) => shape(p.shape(Field::Value(settings))),
            None => JsValue::UNDEFINED,
        },
    )
}
