//! The extractive summarizer (`core::compaction::extractive`), which a
//! compaction or a branch summary uses when it has no summarizer callback,
//! or a failed one with `fallback: "extractive"`.

use agent_compaction_core::compaction::extractive::{
    extractive_summary, messages_from_facts, ExtractInput,
};

/// The summary of the messages whose facts `facts` holds (the JSON text the
/// shim's `extractFacts` writes), folding in `previous_summary`, within
/// `max_chars` UTF-16 code units.
pub fn summary(
    facts: &str,
    read_files: Vec<String>,
    modified_files: Vec<String>,
    previous_summary: Option<String>,
    custom_instructions: Option<String>,
    max_chars: usize,
) -> Result<String, String> {
    let messages = messages_from_facts(facts)?;
    Ok(extractive_summary(&ExtractInput {
        messages: &messages,
        previous_summary: previous_summary.as_deref(),
        read_files: &read_files,
        modified_files: &modified_files,
        custom_instructions: custom_instructions.as_deref(),
        max_chars,
    }))
}
