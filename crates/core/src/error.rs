//! Errors about the caller's input, precise enough to find the bad field.

use std::fmt;

/// Where in the input a problem is: `messages[3].details.readFiles[0]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    root: &'static str,
    index: Option<usize>,
    fields: Vec<PathPart>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum PathPart {
    Field(&'static str),
    Index(usize),
}

impl FieldPath {
    /// The argument itself, e.g. `messages`.
    pub fn argument(root: &'static str) -> Self {
        FieldPath {
            root,
            index: None,
            fields: Vec::new(),
        }
    }

    /// An element of an array argument, e.g. `messages[3]`.
    pub fn element(root: &'static str, index: usize) -> Self {
        FieldPath {
            root,
            index: Some(index),
            fields: Vec::new(),
        }
    }

    pub fn field(mut self, name: &'static str) -> Self {
        self.fields.push(PathPart::Field(name));
        self
    }

    pub fn at(mut self, index: usize) -> Self {
        self.fields.push(PathPart::Index(index));
        self
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.root)?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        for part in &self.fields {
            match part {
                PathPart::Field(name) => write!(f, ".{name}")?,
                PathPart::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// Bad input: reported to JavaScript as a `TypeError`, or a `RangeError`
/// for a number outside the values a field takes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("{path} must be {expected}, got {got}")]
    WrongType {
        path: FieldPath,
        expected: &'static str,
        got: String,
    },
    #[error("{path} could not be read: {reason}")]
    Unreadable { path: FieldPath, reason: String },
    /// A number, but not one the field takes: `got` is the number as
    /// JavaScript prints it.
    #[error("{path} must be {expected}, got {got}")]
    OutOfRange {
        path: FieldPath,
        expected: &'static str,
        got: String,
    },
}

impl InputError {
    /// The same error about element `index(i)` of its array argument where
    /// it named element `i`: for an error met in an array made of some of
    /// the caller's elements, so that it names the caller's own index.
    pub fn reindexed(mut self, index: impl Fn(usize) -> usize) -> Self {
        let path = match &mut self {
            InputError::WrongType { path, .. }
            | InputError::Unreadable { path, .. }
            | InputError::OutOfRange { path, .. } => path,
        };
        path.index = path.index.map(index);
        self
    }

    /// Whether JavaScript throws it as a `RangeError` (else a `TypeError`).
    pub fn is_range(&self) -> bool {
        matches!(self, InputError::OutOfRange { .. })
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_reindexed_error_names_the_callers_index() {
        let e = InputError::WrongType {
            path: FieldPath::element("messages", 1).field("content"),
            expected: "a string",
            got: "undefined".into(),
        };
        let picked = [3, 7];
        assert_eq!(
            e.reindexed(|i| picked[i]).to_string(),
            "messages[7].content must be a string, got undefined"
        );
        let whole = InputError::WrongType {
            path: FieldPath::argument("messages"),
            expected: "an array",
            got: "null".into(),
        };
        assert_eq!(whole.clone().reindexed(|i| i + 1), whole);
    }

    #[test]
    fn messages_name_the_index_and_field() {
        let e = InputError::WrongType {
            path: FieldPath::element("messages", 3)
                .field("details")
                .field("readFiles")
                .at(0),
            expected: "a string",
            got: "a number".into(),
        };
        assert_eq!(
            e.to_string(),
            "messages[3].details.readFiles[0] must be a string, got a number"
        );
        let e = InputError::WrongType {
            path: FieldPath::argument("messages"),
            expected: "an array of messages",
            got: "null".into(),
        };
        assert_eq!(
            e.to_string(),
            "messages must be an array of messages, got null"
        );
    }

    #[test]
    fn a_number_out_of_range_is_a_range_error() {
        let path = || FieldPath::argument("options").field("limit");
        let e = InputError::OutOfRange {
            path: path(),
            expected: "a whole number from 1 to 100",
            got: "0".into(),
        };
        assert!(e.is_range());
        assert_eq!(
            e.to_string(),
            "options.limit must be a whole number from 1 to 100, got 0"
        );
        let e = InputError::WrongType {
            path: path(),
            expected: "a whole number from 1 to 100",
            got: "a string".into(),
        };
        assert!(!e.is_range());
    }
}
