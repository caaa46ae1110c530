//! How pi stores a summary's text, and how the flat array keeps it.
//!
//! pi appends the file lists of a compaction or branch summary to its text
//! as `<read-files>` / `<modified-files>` tags (its `formatFileOperations`)
//! and starts a generated branch summary with a preamble. The flat array
//! keeps the text alone: the tags come back from `details` (and a wrapper of
//! our own) when a summary is shown to the model. Export adds exactly what
//! pi adds; import takes it off only when the stored text is exactly what
//! export would write for the rest, so that export gives pi its text back
//! byte for byte. Any other text (no preamble where pi would have put one,
//! tags that are not the details', tags in the middle, a preamble with
//! other line ends) is kept whole and the summary marked `verbatim`
//! ([`crate::message::file_lists::VERBATIM`]): nothing is added to it, neither for the model (which
//! then sees what pi's sees) nor on export. Import ∘ export is the identity
//! on every summary; export ∘ import on every stored text.

use crate::js::json::Json;
use crate::js::string::JsStr;
use crate::message::file_lists::of_details;

/// What pi's branch summarizer puts before the model's text
/// (`BRANCH_SUMMARY_PREAMBLE` in pi's branch-summarization.js). A summary an
/// extension supplied (`fromHook: true`) is stored as given, without it.
pub const BRANCH_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// pi's `formatFileOperations(readFiles, modifiedFiles)` for the file lists
/// of `details` ([`crate::message::file_lists`]).
pub fn file_tags(details: Option<&Json>) -> JsStr {
    let lists = of_details(details);
    let mut tags = JsStr::new();
    for (tag, files) in [
        ("read-files", lists.read),
        ("modified-files", lists.modified),
    ] {
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

/// Whether `value` (a message's or an entry's `messageFields`' field) marks
/// a summary as `verbatim`.
pub fn is_verbatim(value: Option<&Json>) -> bool {
    value == Some(&Json::Bool(true))
}

/// The flat array's summary read from a stored text.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub text: JsStr,
    /// The text is the stored one, whole (`verbatim`).
    pub verbatim: bool,
}

/// Which entry a summary is stored in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind<'a> {
    Compaction,
    /// A branch summary, with its `fromHook`.
    Branch {
        from_hook: Option<&'a Json>,
    },
}

impl Kind<'_> {
    /// Whether pi would have put its preamble before this summary.
    fn has_preamble(self) -> bool {
        match self {
            Kind::Compaction => false,
            Kind::Branch { from_hook } => from_hook != Some(&Json::Bool(true)),
        }
    }
}

/// The flat array's summary → pi's stored text.
pub fn to_stored(kind: Kind<'_>, summary: &JsStr, details: Option<&Json>, verbatim: bool) -> JsStr {
    if verbatim {
        return summary.clone();
    }
    let mut stored = JsStr::new();
    if kind.has_preamble() {
        stored.push_str(BRANCH_PREAMBLE);
    }
    stored.push_js(summary);
    stored.push_js(&file_tags(details));
    stored
}

/// An entry's stored text → the flat array's summary. `marked`: the entry
/// says the summary is `verbatim` (an export of such a summary).
pub fn from_stored(
    kind: Kind<'_>,
    stored: &JsStr,
    details: Option<&Json>,
    marked: bool,
) -> Summary {
    let whole = || Summary {
        text: stored.clone(),
        verbatim: true,
    };
    if marked {
        return whole();
    }
    let tags = file_tags(details);
    let mut text = stored.as_units();
    if !tags.is_empty() {
        text = text.strip_suffix(tags.as_units()).unwrap_or(text);
    }
    if kind.has_preamble() {
        let preamble = JsStr::from(BRANCH_PREAMBLE);
        text = text.strip_prefix(preamble.as_units()).unwrap_or(text);
    }
    let text = JsStr::from_units(text.to_vec());
    if to_stored(kind, &text, details, false) == *stored {
        Summary {
            text,
            verbatim: false,
        }
    } else {
        whole()
    }
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

    const COMPACTION: Kind<'static> = Kind::Compaction;
    const BRANCH: Kind<'static> = Kind::Branch { from_hook: None };
    const HOOK_BRANCH: Kind<'static> = Kind::Branch {
        from_hook: Some(&Json::Bool(true)),
    };

    fn kept(text: JsStr) -> Summary {
        Summary {
            text,
            verbatim: false,
        }
    }

    fn whole(text: JsStr) -> Summary {
        Summary {
            text,
            verbatim: true,
        }
    }

    /// pi's text → the flat array → pi's text gives the same bytes.
    fn round_trips(kind: Kind<'_>, stored: &JsStr, details: Option<&Json>) -> Summary {
        let summary = from_stored(kind, stored, details, false);
        assert_eq!(
            to_stored(kind, &summary.text, details, summary.verbatim),
            *stored
        );
        summary
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
        assert_eq!(
            round_trips(COMPACTION, &stored, Some(&d)),
            kept(js("Summary."))
        );
        // The text itself ending with the same tags: one set is pi's.
        let twice =
            js("S.\n\n<read-files>\na.ts\n</read-files>\n\n<read-files>\na.ts\n</read-files>");
        let d = details(r#"{"readFiles":["a.ts"]}"#);
        assert_eq!(
            round_trips(COMPACTION, &twice, Some(&d)),
            kept(js("S.\n\n<read-files>\na.ts\n</read-files>"))
        );
    }

    #[test]
    fn text_that_is_not_what_export_writes_is_kept_whole() {
        let d = details(r#"{"readFiles":["a.ts"],"modifiedFiles":[]}"#);
        // No tags (an extension's summary), tags for other files, tags
        // edited by hand, tags not at the end.
        for text in [
            "S.",
            "S.\n\n<read-files>\nb.ts\n</read-files>",
            "S.\n<read-files>\na.ts\n</read-files>",
            "S.\n\n<read-files>\na.ts\n</read-files>\n",
            "S.\n\n<read-files>\na.ts\n</read-files>\n\nand more",
        ] {
            assert_eq!(
                round_trips(COMPACTION, &js(text), Some(&d)),
                whole(js(text)),
                "{text}"
            );
        }
        // Without lists nothing is added, so any text is kept as it is.
        let text = js("S.\n\n<read-files>\na.ts\n</read-files>");
        assert_eq!(round_trips(COMPACTION, &text, None), kept(text.clone()));
        let other = details(r#"{"readFiles":"a.ts","version":2}"#);
        assert_eq!(round_trips(COMPACTION, &text, Some(&other)), kept(text));
    }

    #[test]
    fn branch_preamble_and_tags() {
        let d = details(r#"{"readFiles":["a.ts"],"modifiedFiles":[]}"#);
        let stored = js(&format!(
            "{BRANCH_PREAMBLE}Explored X.\n\n<read-files>\na.ts\n</read-files>"
        ));
        let hook_false = Kind::Branch {
            from_hook: Some(&Json::Bool(false)),
        };
        for kind in [BRANCH, hook_false] {
            assert_eq!(
                round_trips(kind, &stored, Some(&d)),
                kept(js("Explored X."))
            );
        }
        // An extension's summary has no preamble; one that happens to start
        // with the preamble keeps it.
        let text = js(&format!("{BRANCH_PREAMBLE}hook text"));
        assert_eq!(round_trips(HOOK_BRANCH, &text, None), kept(text));
        assert_eq!(
            round_trips(HOOK_BRANCH, &js("hook"), None),
            kept(js("hook"))
        );
        // No preamble where pi's summarizer puts one (`branchWithSummary`
        // called by an app, pi's "No content to summarize"), or one with
        // other line ends: kept whole.
        for text in [
            "BS".to_owned(),
            "No content to summarize".to_owned(),
            BRANCH_PREAMBLE.replace('\n', "\r\n") + "X",
            format!("{BRANCH_PREAMBLE}Explored X."),
        ] {
            let expected = if text.starts_with(BRANCH_PREAMBLE) {
                kept(js("Explored X."))
            } else {
                whole(js(&text))
            };
            assert_eq!(round_trips(BRANCH, &js(&text), None), expected, "{text}");
        }
        // The preamble, but tags that are not the details': kept whole.
        let text = js(&format!(
            "{BRANCH_PREAMBLE}X\n\n<read-files>\nb.ts\n</read-files>"
        ));
        assert_eq!(round_trips(BRANCH, &text, Some(&d)), whole(text));
    }

    #[test]
    fn a_verbatim_summary_is_written_and_read_as_it_is() {
        let d = details(r#"{"readFiles":["a.ts"],"modifiedFiles":[]}"#);
        // Text that would otherwise lose its tags on import.
        let text = js("S.\n\n<read-files>\na.ts\n</read-files>");
        for kind in [COMPACTION, BRANCH, HOOK_BRANCH] {
            let stored = to_stored(kind, &text, Some(&d), true);
            assert_eq!(stored, text);
            assert_eq!(
                from_stored(kind, &stored, Some(&d), true),
                whole(text.clone())
            );
        }
        assert!(is_verbatim(Some(&Json::Bool(true))));
        for not in [None, Some(Json::Bool(false)), Some(Json::Number(1.0))] {
            assert!(!is_verbatim(not.as_ref()));
        }
    }
}
