//! How pi stores a summary's text, and how the flat array keeps it.
//!
//! pi appends the file lists of a compaction or branch summary to its text
//! as `<read-files>` / `<modified-files>` tags (its `formatFileOperations`)
//! and starts a generated branch summary with a preamble. The flat array
//! keeps the text alone: the tags come back from `details` (and a wrapper of
//! our own) when a summary is shown to the model. Import removes exactly
//! what pi adds, and only when it is there unchanged; export adds it back,
//! so that import ∘ export is the identity on every summary.

use crate::js::json::Json;
use crate::js::string::JsStr;

/// What pi's branch summarizer puts before the model's text
/// (`BRANCH_SUMMARY_PREAMBLE` in pi's branch-summarization.js). A summary an
/// extension supplied (`fromHook: true`) is stored as given, without it.
pub const BRANCH_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// The file lists of a summary's `details`, read as `convertToLlm` reads
/// them: missing or null details or lists are empty. `None` when they are
/// not lists of strings (then no tags are added or removed).
fn file_lists(details: Option<&Json>) -> Option<(Vec<&JsStr>, Vec<&JsStr>)> {
    let object = match details {
        None | Some(Json::Null) | Some(Json::Array(_)) => return Some((Vec::new(), Vec::new())),
        Some(Json::Object(o)) => o,
        Some(_) => return None,
    };
    let list = |key: &str| -> Option<Vec<&JsStr>> {
        match object.get(key) {
            None | Some(Json::Null) => Some(Vec::new()),
            Some(Json::Array(items)) => items.iter().map(Json::as_str).collect(),
            Some(_) => None,
        }
    };
    Some((list("readFiles")?, list("modifiedFiles")?))
}

/// pi's `formatFileOperations(readFiles, modifiedFiles)`.
pub fn file_tags(details: Option<&Json>) -> JsStr {
    let mut tags = JsStr::new();
    let Some((read, modified)) = file_lists(details) else {
        return tags;
    };
    for (tag, files) in [("read-files", read), ("modified-files", modified)] {
        if files.is_empty() {
            continue;
        }
        tags.push_str("\n\n<");
        tags.push_str(tag);
        tags.push_str(">\n");
        for (i, file) in files.into_iter().enumerate() {
            if i > 0 {
                tags.push_str("\n");
            }
            tags.push_js(file);
        }
        tags.push_str("\n</");
        tags.push_str(tag);
        tags.push_str(">");
    }
    tags
}

/// Whether pi would have put its preamble before this branch summary.
fn has_preamble(from_hook: Option<&Json>) -> bool {
    from_hook != Some(&Json::Bool(true))
}

/// A compaction entry's stored summary → the flat array's summary.
pub fn compaction_from_stored(stored: &JsStr, details: Option<&Json>) -> JsStr {
    let tags = file_tags(details);
    strip_suffix(stored.as_units(), tags.as_units())
}

/// The flat array's compaction summary → pi's stored text.
pub fn compaction_to_stored(summary: &JsStr, details: Option<&Json>) -> JsStr {
    let mut stored = summary.clone();
    stored.push_js(&file_tags(details));
    stored
}

/// A branch_summary entry's stored summary → the flat array's summary.
pub fn branch_from_stored(
    stored: &JsStr,
    details: Option<&Json>,
    from_hook: Option<&Json>,
) -> JsStr {
    let tags = file_tags(details);
    let text = strip_suffix(stored.as_units(), tags.as_units());
    if !has_preamble(from_hook) {
        return text;
    }
    let preamble = JsStr::from(BRANCH_PREAMBLE);
    match text.as_units().strip_prefix(preamble.as_units()) {
        Some(rest) => JsStr::from_units(rest.to_vec()),
        None => text,
    }
}

/// The flat array's branch summary → pi's stored text.
pub fn branch_to_stored(
    summary: &JsStr,
    details: Option<&Json>,
    from_hook: Option<&Json>,
) -> JsStr {
    let mut stored = JsStr::new();
    if has_preamble(from_hook) {
        stored.push_str(BRANCH_PREAMBLE);
    }
    stored.push_js(summary);
    stored.push_js(&file_tags(details));
    stored
}

fn strip_suffix(text: &[u16], suffix: &[u16]) -> JsStr {
    let kept = if suffix.is_empty() {
        text
    } else {
        text.strip_suffix(suffix).unwrap_or(text)
    };
    JsStr::from_units(kept.to_vec())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::js::json::parse;

    fn js(s: &str) -> JsStr {
        JsStr::from(s)
    }

    fn details(text: &str) -> Json {
        parse(text).unwrap()
    }

    #[test]
    fn tags_are_pi_format_file_operations() {
        let d = details(r#"{"readFiles":["a.ts","b.ts"],"modifiedFiles":["c.ts"]}"#);
        assert_eq!(
            file_tags(Some(&d)).to_string_lossy(),
            "\n\n<read-files>\na.ts\nb.ts\n</read-files>\n\n<modified-files>\nc.ts\n</modified-files>"
        );
        let d = details(r#"{"readFiles":[],"modifiedFiles":["c.ts"]}"#);
        assert_eq!(
            file_tags(Some(&d)).to_string_lossy(),
            "\n\n<modified-files>\nc.ts\n</modified-files>"
        );
        for none in [
            r#"{"readFiles":[],"modifiedFiles":[]}"#,
            r#"{}"#,
            r#"null"#,
            r#"{"readFiles":"a.ts"}"#,
            r#"{"readFiles":["a.ts", 1]}"#,
            r#""text""#,
        ] {
            assert!(file_tags(Some(&details(none))).is_empty(), "{none}");
        }
        assert!(file_tags(None).is_empty());
    }

    #[test]
    fn compaction_tags_move_out_and_back() {
        let d = details(r#"{"readFiles":["a.ts"],"modifiedFiles":["b.ts"]}"#);
        let stored = js("Summary.\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\n</modified-files>");
        let summary = compaction_from_stored(&stored, Some(&d));
        assert_eq!(summary, js("Summary."));
        assert_eq!(compaction_to_stored(&summary, Some(&d)), stored);
    }

    #[test]
    fn text_that_does_not_match_the_details_is_left_alone() {
        let d = details(r#"{"readFiles":["a.ts"],"modifiedFiles":[]}"#);
        // Tags for other files, tags edited by hand, tags not at the end.
        for text in [
            "S.\n\n<read-files>\nb.ts\n</read-files>",
            "S.\n<read-files>\na.ts\n</read-files>",
            "S.\n\n<read-files>\na.ts\n</read-files>\n",
            "S.\n\n<read-files>\na.ts\n</read-files> and more",
        ] {
            assert_eq!(compaction_from_stored(&js(text), Some(&d)), js(text));
        }
        // No details: nothing is removed, even text that looks like tags.
        let text = js("S.\n\n<read-files>\na.ts\n</read-files>");
        assert_eq!(compaction_from_stored(&text, None), text);
    }

    #[test]
    fn branch_preamble_and_tags() {
        let d = details(r#"{"readFiles":["a.ts"],"modifiedFiles":[]}"#);
        let stored = js(&format!(
            "{BRANCH_PREAMBLE}Explored X.\n\n<read-files>\na.ts\n</read-files>"
        ));
        let summary = branch_from_stored(&stored, Some(&d), Some(&Json::Bool(false)));
        assert_eq!(summary, js("Explored X."));
        assert_eq!(
            branch_to_stored(&summary, Some(&d), Some(&Json::Bool(false))),
            stored
        );
        assert_eq!(branch_to_stored(&summary, Some(&d), None), stored);
        // An extension's summary has no preamble; one that happens to start
        // with the preamble keeps it.
        let hook = Some(&Json::Bool(true));
        let text = js(&format!("{BRANCH_PREAMBLE}hook text"));
        assert_eq!(branch_from_stored(&text, None, hook), text);
        assert_eq!(branch_to_stored(&text, None, hook), text);
        // pi's "No content to summarize" has no preamble: kept as is.
        let plain = js("No content to summarize");
        assert_eq!(
            branch_from_stored(&plain, None, Some(&Json::Bool(false))),
            plain
        );
    }
}
