//! The SessionStore's argument rules and their error texts: its string and
//! function arguments, each method's options object, `fork`'s index and
//! summary, `importJsonl`'s text. The binding reads the values
//! (through `core::js::options::Value`, describing a bad one with the
//! engine's words; `field(key)` reads an object's property, a getter that
//! throws reading as `undefined`); what is accepted, and what the `TypeError` or
//! `RangeError` says, is decided here.

use super::error::CallError;
use super::locks::{lock_timeout, DEFAULT_LOCK_TIMEOUT_MS};
use super::save_flow::unstorable;
use crate::error::{FieldPath, InputError};
use crate::js::number::number_to_string;
use crate::js::options::{expect_object, Value};

/// The database a store opens when its options name none.
pub const DEFAULT_DATABASE: &str = "agent-compaction";

impl From<InputError> for CallError {
    fn from(e: InputError) -> CallError {
        match e.is_range() {
            true => CallError::Range(e.to_string()),
            false => CallError::Type(e.to_string()),
        }
    }
}

/// A string argument (`sessionId`, `title`).
pub fn string<V: Value>(name: &'static str, value: &V) -> Result<String, CallError> {
    value.name().ok_or_else(|| {
        CallError::from(InputError::WrongType {
            path: FieldPath::argument(name),
            expected: "a string",
            got: value.describe(),
        })
    })
}

/// A function argument of `action` (`withSessionLock`'s callback,
/// `onChange`'s listener).
pub fn function<V: Value>(action: &str, name: &str, value: &V) -> Result<V::Function, CallError> {
    value.function().ok_or_else(|| {
        CallError::Type(format!(
            "{action}: {name} must be a function, got {}",
            value.describe()
        ))
    })
}

/// Whether an options argument is given: `undefined` and `null` are none,
/// an object is one, anything else is an error.
fn given<V: Value>(options: &V) -> Result<bool, CallError> {
    if options.is_nullish() {
        return Ok(false);
    }
    expect_object("options", options, "an object or undefined")?;
    Ok(true)
}

/// The error for option `key`'s `value`, which should have been `expected`.
fn wrong<V: Value>(key: &'static str, expected: &'static str, value: &V) -> CallError {
    CallError::from(InputError::WrongType {
        path: FieldPath::argument("options").field(key),
        expected,
        got: value.describe(),
    })
}

/// A string option; `None` when `undefined` or `null` (an empty string is
/// a string).
fn optional_string<V: Value>(value: V, key: &'static str) -> Result<Option<String>, CallError> {
    if value.is_nullish() {
        return Ok(None);
    }
    Ok(Some(
        value.name().ok_or_else(|| wrong(key, "a string", &value))?,
    ))
}

/// `SessionStore.open`'s options.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenOptions {
    /// The database's name.
    pub name: String,
    /// How long a call waits for its session's lock (`lockTimeoutMs`).
    pub lock_timeout_ms: f64,
}

pub fn open_options<V: Value>(
    options: &V,
    field: impl Fn(&'static str) -> V,
) -> Result<OpenOptions, CallError> {
    let mut read = OpenOptions {
        name: DEFAULT_DATABASE.into(),
        lock_timeout_ms: DEFAULT_LOCK_TIMEOUT_MS,
    };
    if !given(options)? {
        return Ok(read);
    }
    let name = field("name");
    if !name.is_undefined() {
        read.name = name
            .name()
            .ok_or_else(|| wrong("name", "a string", &name))?;
    }
    let ms = field("lockTimeoutMs");
    let option = (!ms.is_undefined()).then(|| ms.number());
    // A number out of range is shown; anything else is named by its kind.
    let got = match option {
        Some(Some(n)) => crate::js::number::number_to_string(n),
        _ => ms.describe(),
    };
    read.lock_timeout_ms = lock_timeout(option).map_err(|e| e.call_error(&got))?;
    Ok(read)
}

/// `createSession`'s options: each absent one is made up (a fresh id, the
/// default title, no model).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CreateOptions {
    pub id: Option<String>,
    pub title: Option<String>,
    pub model: Option<String>,
}

pub fn create_options<V: Value>(
    options: &V,
    field: impl Fn(&'static str) -> V,
) -> Result<CreateOptions, CallError> {
    if !given(options)? {
        return Ok(CreateOptions::default());
    }
    Ok(CreateOptions {
        id: optional_string(field("id"), "id")?,
        title: optional_string(field("title"), "title")?,
        model: optional_string(field("model"), "model")?,
    })
}

/// `save`'s options: whether it may drop stored messages (`replace`).
pub fn save_options<V: Value>(
    options: &V,
    field: impl Fn(&'static str) -> V,
) -> Result<bool, CallError> {
    Ok(given(options)? && field("replace").is_truthy())
}

/// `fork`'s options: the summary to append (checked by [`fork_summary`]),
/// the new session's id and title.
#[derive(Clone, Debug, PartialEq)]
pub struct ForkOptions<V> {
    pub summary: Option<V>,
    pub id: Option<String>,
    pub title: Option<String>,
}

pub fn fork_options<V: Value>(
    options: &V,
    field: impl Fn(&'static str) -> V,
) -> Result<ForkOptions<V>, CallError> {
    if !given(options)? {
        return Ok(ForkOptions {
            summary: None,
            id: None,
            title: None,
        });
    }
    let summary = field("summary");
    Ok(ForkOptions {
        summary: (!summary.is_nullish()).then_some(summary),
        id: optional_string(field("id"), "id")?,
        title: optional_string(field("title"), "title")?,
    })
}

/// `importJsonl`'s options: the title to give the session.
pub fn import_options<V: Value>(
    options: &V,
    field: impl Fn(&'static str) -> V,
) -> Result<Option<String>, CallError> {
    match given(options)? {
        true => optional_string(field("title"), "title"),
        false => Ok(None),
    }
}

const FORK: &str = "SessionStore.fork";

/// `fork`'s `atIndex`: a number (`None`: not one, `described` says what it
/// is), whole, from 0 (its upper bound is checked against the stored
/// session by [`fork_within`]).
pub fn fork_index(at: Option<f64>, described: impl FnOnce() -> String) -> Result<u32, CallError> {
    let Some(x) = at else {
        return Err(CallError::Type(format!(
            "{FORK}: atIndex must be a number, got {}",
            described()
        )));
    };
    if x.fract() != 0.0 || x < 0.0 || !x.is_finite() || x > u32::MAX as f64 {
        return Err(CallError::Range(format!(
            "{FORK}: atIndex must be a whole number from 0 to the session's message count, got {}",
            number_to_string(x)
        )));
    }
    Ok(x as u32)
}

/// `atIndex` against session `id`'s `count` messages.
pub fn fork_within(id: &str, at: u32, count: f64) -> Result<(), CallError> {
    if at as f64 <= count {
        return Ok(());
    }
    let count = number_to_string(count);
    Err(CallError::Range(format!(
        "{FORK}: atIndex {at} is past the end of session \"{id}\", which has {count} messages \
         (atIndex must be in 0..={count})"
    )))
}

/// Whether `options.summary` (given, neither undefined nor null; `field`
/// reads its fields) is a `branchSummary` message; whether it is plain data
/// is checked after, with [`fork_summary_unstorable`].
pub fn fork_summary<V: Value>(
    summary: &V,
    field: impl Fn(&'static str) -> V,
) -> Result<(), CallError> {
    let what = if !summary.is_object() {
        format!("got {}", summary.describe())
    } else {
        let role = field("role");
        match role.name() {
            Some(name) if name == "branchSummary" => {
                let text = field("summary");
                if text.text().is_some() {
                    return Ok(());
                }
                format!("got summary {}", text.describe())
            }
            Some(name) => format!("got role \"{name}\""),
            None => format!("got role {}", role.describe()),
        }
    };
    Err(CallError::Type(format!(
        "{FORK}: options.summary must be a branchSummary message \
         ({{ role: \"branchSummary\", summary: string, timestamp: number }}), {what}"
    )))
}

/// `options.summary` is not plain data: `path` inside it is `what`.
pub fn fork_summary_unstorable(path: &str, what: &str) -> CallError {
    CallError::Type(unstorable(&format!("{FORK}: options.summary"), path, what))
}

/// `importJsonl`'s text is not a string.
pub fn import_text(described: &str) -> CallError {
    CallError::Type(format!(
        "SessionStore.importJsonl: text must be a string (a pi session file), got {described}"
    ))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::js::options::tests::{Fields, Js};

    fn text(e: CallError) -> (char, String) {
        match e {
            CallError::Type(m) => ('T', m),
            CallError::Range(m) => ('R', m),
            CallError::Store(e) => ('S', e.to_string()),
        }
    }

    #[test]
    fn bad_input_keeps_its_class() {
        let path = || FieldPath::argument("options").field("limit");
        let range = crate::js::options::out_of_range(path(), "a whole number from 1 to 100", 0.0);
        assert_eq!(
            text(range.into()),
            (
                'R',
                "options.limit must be a whole number from 1 to 100, got 0".into()
            )
        );
        let wrong = InputError::WrongType {
            path: path(),
            expected: "a whole number from 1 to 100",
            got: "a string".into(),
        };
        assert_eq!(text(wrong.into()).0, 'T');
    }

    #[test]
    fn the_fork_index_is_a_whole_number_within_the_session() {
        assert_eq!(fork_index(Some(0.0), || unreachable!()), Ok(0));
        assert_eq!(fork_index(Some(12.0), || unreachable!()), Ok(12));
        assert_eq!(
            text(fork_index(None, || "a string".into()).unwrap_err()),
            (
                'T',
                "SessionStore.fork: atIndex must be a number, got a string".into()
            )
        );
        for (x, shown) in [
            (1.5, "1.5"),
            (-1.0, "-1"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (5e9, "5000000000"),
        ] {
            assert_eq!(
                text(fork_index(Some(x), || unreachable!()).unwrap_err()),
                ('R', format!("SessionStore.fork: atIndex must be a whole number from 0 to the session's message count, got {shown}"))
            );
        }
        assert_eq!(fork_within("s", 3, 3.0), Ok(()));
        assert_eq!(
            text(fork_within("s", 4, 3.0).unwrap_err()),
            ('R', "SessionStore.fork: atIndex 4 is past the end of session \"s\", which has 3 messages (atIndex must be in 0..=3)".into())
        );
    }

    /// `read(value, field)` over an object with `fields`.
    fn with<T>(
        fields: Vec<(&'static str, Js)>,
        value: Js,
        read: impl FnOnce(&Js, &dyn Fn(&'static str) -> Js) -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        let o = Fields::new(fields);
        read(&value, &|k| o.get(k).unwrap())
    }

    #[test]
    fn the_fork_summary_must_be_a_branch_summary_message() {
        let summary = |fields, value| with(fields, value, |v, f| fork_summary(v, f));
        let branch = ("role", Js::Str("branchSummary"));
        assert_eq!(
            summary(vec![branch.clone(), ("summary", Js::Str("s"))], Js::Obj),
            Ok(())
        );
        let head = "SessionStore.fork: options.summary must be a branchSummary message ({ role: \"branchSummary\", summary: string, timestamp: number }), ";
        for (fields, value, tail) in [
            (vec![], Js::Num(1.0), "got a number"),
            (
                vec![("role", Js::Str("user"))],
                Js::Obj,
                "got role \"user\"",
            ),
            (vec![], Js::Obj, "got role undefined"),
            (
                vec![branch.clone(), ("summary", Js::Null)],
                Js::Obj,
                "got summary null",
            ),
        ] {
            assert_eq!(
                text(summary(fields, value).unwrap_err()),
                ('T', format!("{head}{tail}"))
            );
        }
        assert_eq!(
            text(fork_summary_unstorable(".details.f", "is a function")),
            ('T', "SessionStore.fork: options.summary.details.f is a function: a message must be plain data to be stored".into())
        );
    }

    #[test]
    fn string_and_function_arguments() {
        assert_eq!(string("sessionId", &Js::Str("s")), Ok("s".into()));
        assert_eq!(
            text(string("sessionId", &Js::Num(1.0)).unwrap_err()),
            ('T', "sessionId must be a string, got a number".into())
        );
        assert_eq!(function("A.on", "listener", &Js::Fun("f")), Ok("f"));
        assert_eq!(
            text(function("A.on", "listener", &Js::Obj).unwrap_err()),
            (
                'T',
                "A.on: listener must be a function, got an object".into()
            )
        );
    }

    #[test]
    fn an_options_argument_is_an_object_or_absent() {
        for absent in [Js::Undefined, Js::Null] {
            let read = with(vec![("id", Js::Num(1.0))], absent, |v, r| {
                create_options(v, r)
            });
            assert_eq!(read, Ok(CreateOptions::default()));
        }
        let not_object = with(vec![], Js::Num(1.0), |v, f| save_options(v, f));
        assert_eq!(
            text(not_object.unwrap_err()),
            (
                'T',
                "options must be an object or undefined, got a number".into()
            )
        );
    }

    #[test]
    fn each_method_reads_its_options() {
        let open = with(vec![], Js::Obj, |v, f| open_options(v, f)).unwrap();
        assert_eq!(
            (open.name.as_str(), open.lock_timeout_ms),
            (DEFAULT_DATABASE, DEFAULT_LOCK_TIMEOUT_MS)
        );
        let fields = vec![("name", Js::Str("db")), ("lockTimeoutMs", Js::Num(50.0))];
        let open = with(fields, Js::Obj, |v, f| open_options(v, f)).unwrap();
        assert_eq!((open.name.as_str(), open.lock_timeout_ms), ("db", 50.0));
        for (fields, error) in [
            (
                vec![("name", Js::Null)],
                ('T', "options.name must be a string, got null"),
            ),
            (
                vec![("lockTimeoutMs", Js::Str("x"))],
                (
                    'T',
                    "options.lockTimeoutMs must be a number of milliseconds, got a string",
                ),
            ),
            (
                vec![("lockTimeoutMs", Js::Num(0.0))],
                (
                    'R',
                    "options.lockTimeoutMs must be from 1 to 2147483647 milliseconds, got 0",
                ),
            ),
            (
                vec![("lockTimeoutMs", Js::Num(2_147_483_648.0))],
                (
                    'R',
                    "options.lockTimeoutMs must be from 1 to 2147483647 milliseconds, got 2147483648",
                ),
            ),
        ] {
            let e = with(fields, Js::Obj, |v, f| open_options(v, f)).unwrap_err();
            assert_eq!(text(e), (error.0, error.1.to_owned()));
        }

        let fields = vec![
            ("id", Js::Str("")),
            ("title", Js::Null),
            ("model", Js::Str("m")),
        ];
        assert_eq!(
            with(fields, Js::Obj, |v, f| create_options(v, f)),
            Ok(CreateOptions {
                id: Some("".into()),
                title: None,
                model: Some("m".into())
            })
        );
        let e = with(vec![("title", Js::Bool(true))], Js::Obj, |v, r| {
            create_options(v, r)
        });
        assert_eq!(
            text(e.unwrap_err()),
            ('T', "options.title must be a string, got a boolean".into())
        );

        assert_eq!(
            with(vec![("replace", Js::Num(1.0))], Js::Obj, |v, r| {
                save_options(v, r)
            }),
            Ok(true)
        );
        assert_eq!(with(vec![], Js::Obj, |v, f| save_options(v, f)), Ok(false));
        assert_eq!(
            with(vec![("replace", Js::Bool(true))], Js::Undefined, |v, r| {
                save_options(v, r)
            }),
            Ok(false)
        );

        let fields = vec![
            ("summary", Js::Obj),
            ("id", Js::Str("n")),
            ("title", Js::Undefined),
        ];
        assert_eq!(
            with(fields, Js::Obj, |v, f| fork_options(v, f)),
            Ok(ForkOptions {
                summary: Some(Js::Obj),
                id: Some("n".into()),
                title: None
            })
        );
        let fork = with(vec![("summary", Js::Null)], Js::Obj, |v, r| {
            fork_options(v, r)
        });
        assert_eq!(fork.unwrap().summary, None);

        assert_eq!(
            with(vec![("title", Js::Str("t"))], Js::Obj, |v, r| {
                import_options(v, r)
            }),
            Ok(Some("t".into()))
        );
        assert_eq!(
            with(vec![("title", Js::Str("t"))], Js::Null, |v, r| {
                import_options(v, r)
            }),
            Ok(None)
        );
    }

    #[test]
    fn import_arguments() {
        assert_eq!(
            text(import_text("a number")),
            (
                'T',
                "SessionStore.importJsonl: text must be a string (a pi session file), got a number"
                    .into()
            )
        );
    }
}
