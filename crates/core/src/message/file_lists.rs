//! A summary's file lists: which of its `details` count as the files read
//! and modified, shown to the model as `<read-files>` / `<modified-files>`
//! tags and carried into the next summary.
//!
//! pi treats `details` as the data of whoever wrote the summary: its own
//! summaries store `{ readFiles, modifiedFiles }`, an extension's
//! (`fromHook: true`) anything at all, and pi reads a list only when it is
//! an array (`Array.isArray(details.readFiles)`). Every reader of the
//! package (`convertToLlm`, the Compactor's per-turn path, the summarizer's
//! input, the file lists of the next summary, pi session files) asks this
//! one rule:
//!
//! - a list is `details.readFiles` / `details.modifiedFiles` when that is an
//!   array of strings; anything else (details that are not an object, a
//!   list that is missing, not an array, or holds a non-string) is no list,
//!   never an error. Only a value that cannot be read (a getter or proxy
//!   that throws) is an error;
//! - the lists are shown to the model unless the summary is `verbatim`
//!   ([`VERBATIM`]): a pi file's text kept as pi stored it, whose own text
//!   already shows what pi shows;
//! - the lists are carried into the next summary unless the summary is
//!   `fromHook` (pi's rule: an extension's details are its own).

use crate::js::json::{Json, JsonObject};
use crate::js::string::JsStr;

/// The field (`true`) of a summary whose text is a pi file's text as pi
/// stored it: its file tags and branch preamble, if any, are in the text,
/// and nothing is added to it, neither for the model nor in a pi file.
pub const VERBATIM: &str = "verbatim";

/// A summary message, as the rule reads it. The binding implements it for
/// the caller's objects, the core for JSON.
pub trait SummaryFields {
    /// A file path as the implementation holds it.
    type Text;
    type Error;
    /// `details[key]` as its strings when `details` is an object and that
    /// field an array whose items are all strings; `None` for anything else.
    fn details_strings(&self, key: &'static str) -> Result<Option<Vec<Self::Text>>, Self::Error>;
    /// Whether the field is `true` itself.
    fn is_true(&self, key: &'static str) -> Result<bool, Self::Error>;
    /// Whether the field is truthy (JavaScript's rule).
    fn is_truthy(&self, key: &'static str) -> Result<bool, Self::Error>;
}

/// The files a summary read and modified (either list may be empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLists<T> {
    pub read: Vec<T>,
    pub modified: Vec<T>,
}

impl<T> FileLists<T> {
    pub fn none() -> Self {
        FileLists {
            read: Vec::new(),
            modified: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.modified.is_empty()
    }
}

/// The summary's file lists from its `details`.
pub fn lists<S: SummaryFields>(summary: &S) -> Result<FileLists<S::Text>, S::Error> {
    Ok(FileLists {
        read: summary.details_strings("readFiles")?.unwrap_or_default(),
        modified: summary
            .details_strings("modifiedFiles")?
            .unwrap_or_default(),
    })
}

/// The lists shown to the model after the summary's text.
pub fn shown<S: SummaryFields>(summary: &S) -> Result<FileLists<S::Text>, S::Error> {
    if summary.is_true(VERBATIM)? {
        return Ok(FileLists::none());
    }
    lists(summary)
}

/// The lists the next summary starts from.
pub fn carried<S: SummaryFields>(summary: &S) -> Result<FileLists<S::Text>, S::Error> {
    if summary.is_truthy("fromHook")? {
        return Ok(FileLists::none());
    }
    lists(summary)
}

/// `list` as its strings, when it is an array of strings.
fn json_strings(list: Option<&Json>) -> Option<Vec<&JsStr>> {
    match list {
        Some(Json::Array(items)) => items.iter().map(Json::as_str).collect(),
        _ => None,
    }
}

/// A summary's `details` alone (a pi entry's, whose flags are read apart).
pub struct Details<'a>(pub Option<&'a Json>);

impl<'a> SummaryFields for Details<'a> {
    type Text = &'a JsStr;
    type Error = std::convert::Infallible;
    fn details_strings(&self, key: &'static str) -> Result<Option<Vec<&'a JsStr>>, Self::Error> {
        Ok(match self.0 {
            Some(Json::Object(details)) => json_strings(details.get(key)),
            _ => None,
        })
    }
    fn is_true(&self, _: &'static str) -> Result<bool, Self::Error> {
        Ok(false)
    }
    fn is_truthy(&self, _: &'static str) -> Result<bool, Self::Error> {
        Ok(false)
    }
}

impl<'a> SummaryFields for &'a JsonObject {
    type Text = &'a JsStr;
    type Error = std::convert::Infallible;
    fn details_strings(&self, key: &'static str) -> Result<Option<Vec<&'a JsStr>>, Self::Error> {
        Details(self.get("details")).details_strings(key)
    }
    fn is_true(&self, key: &'static str) -> Result<bool, Self::Error> {
        Ok(self.get(key) == Some(&Json::Bool(true)))
    }
    fn is_truthy(&self, key: &'static str) -> Result<bool, Self::Error> {
        Ok(match self.get(key) {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(Json::Number(x)) => *x != 0.0 && !x.is_nan(),
            Some(Json::String(s)) => !s.is_empty(),
            Some(Json::Array(_) | Json::Object(_)) => true,
        })
    }
}

/// The lists of `details` alone, for JSON that cannot fail to read.
pub fn of_details(details: Option<&Json>) -> FileLists<&JsStr> {
    match lists(&Details(details)) {
        Ok(l) => l,
        Err(never) => match never {},
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::js::json::parse;

    fn object(text: &str) -> JsonObject {
        match parse(text).unwrap() {
            Json::Object(o) => o,
            other => panic!("not an object: {other:?}"),
        }
    }

    fn strings(list: &[&JsStr]) -> Vec<String> {
        list.iter().map(|s| s.to_string_lossy()).collect()
    }

    fn read_modified(l: &FileLists<&JsStr>) -> (Vec<String>, Vec<String>) {
        (strings(&l.read), strings(&l.modified))
    }

    #[test]
    fn a_list_is_an_array_of_strings_and_anything_else_is_no_list() {
        let d = parse(r#"{"readFiles":["a.ts","b.ts"],"modifiedFiles":["c.ts"]}"#).unwrap();
        assert_eq!(
            read_modified(&of_details(Some(&d))),
            (vec!["a.ts".into(), "b.ts".into()], vec!["c.ts".into()])
        );
        // Each list on its own, as pi's `Array.isArray` reads it.
        let d = parse(r#"{"readFiles":"a.ts,b.ts","modifiedFiles":["c.ts"]}"#).unwrap();
        assert_eq!(
            read_modified(&of_details(Some(&d))),
            (vec![], vec!["c.ts".into()])
        );
        // An extension's details, of any shape: no lists, no error.
        for none in [
            r#"{"readFiles":"src/a.ts,src/b.ts","version":2}"#,
            r#"{"readFiles":["a.ts",1]}"#,
            r#"{"readFiles":{"0":"a.ts"},"modifiedFiles":null}"#,
            r#"{"artifactIndex":[1,2]}"#,
            r#"["a.ts"]"#,
            r#""a.ts""#,
            r#"7"#,
            r#"null"#,
        ] {
            assert!(of_details(Some(&parse(none).unwrap())).is_empty(), "{none}");
        }
        assert!(of_details(None).is_empty());
    }

    #[test]
    fn verbatim_summaries_show_no_lists_and_hook_summaries_carry_none() {
        let plain =
            object(r#"{"role":"compactionSummary","summary":"S","details":{"readFiles":["a"]}}"#);
        let verbatim = object(
            r#"{"role":"compactionSummary","summary":"S","details":{"readFiles":["a"]},"verbatim":true}"#,
        );
        let not_quite = object(
            r#"{"role":"compactionSummary","summary":"S","details":{"readFiles":["a"]},"verbatim":1}"#,
        );
        let hook = object(
            r#"{"role":"compactionSummary","summary":"S","details":{"readFiles":["a"]},"fromHook":1}"#,
        );
        let shown_read = |m: &JsonObject| strings(&shown(&m).unwrap().read);
        let carried_read = |m: &JsonObject| strings(&carried(&m).unwrap().read);
        assert_eq!(shown_read(&plain), ["a"]);
        assert!(shown_read(&verbatim).is_empty());
        assert_eq!(shown_read(&not_quite), ["a"], "only true itself");
        assert_eq!(shown_read(&hook), ["a"]);
        assert_eq!(carried_read(&plain), ["a"]);
        assert_eq!(carried_read(&verbatim), ["a"], "pi carries them too");
        assert!(carried_read(&hook).is_empty(), "fromHook is read as truthy");
    }
}
