//! A session's metadata record: what it holds when a session is created,
//! written whole (fork, import) or saved, and the defaults an upgrade gives
//! a record of an older version. The binding converts these to the record
//! object IndexedDB stores; what goes in each field is decided here.
//!
//! Besides the public `SessionMeta` fields, a record holds `contextKey` (the
//! key of the record where the LLM context starts: the last
//! `compactionSummary`'s, or null) and `contextSlot` (the summary's place in
//! that record when it is a pack), and `pinnedKeys` (where each pinned
//! message before that summary is stored: `[key, slot]` pairs, read by
//! `loadContext` alongside the context, see `storage::marks`).
//! [`INTERNAL_FIELDS`] are left out of what the app sees.
//!
//! The records' layout (field names, what is left out, `contextKey` as the
//! key `[id, ...position]`) is their [`Shape`] here; the binding turns it
//! into the object.

use super::packing::{initial, pack_of, Pack};
use super::save_plan::Position;
use crate::js::options::Value;
use crate::js::shape::{Field, Shape};
use crate::js::string::JsStr;
use crate::session_file::split_model_key;

/// A new session's title unless one is given.
pub const DEFAULT_TITLE: &str = "New session";
/// An imported session's title when neither the caller nor the file names
/// it and it has no user text.
pub const IMPORTED_TITLE: &str = "Imported session";
/// The list preview's length (UTF-16 units).
pub const PREVIEW_MAX: usize = 100;
/// An imported session's title made from its first user text.
pub const IMPORT_TITLE_MAX: usize = 60;
/// The preview is the first user text among this many first messages.
pub const PREVIEW_SCAN: u32 = 64;
/// Record fields the app does not see.
pub const INTERNAL_FIELDS: [&str; 3] = ["contextKey", "contextSlot", "pinnedKeys"];

/// A session record as this library writes it whole.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRecord {
    pub id: String,
    pub title: String,
    pub created_at: f64,
    pub last_modified: f64,
    pub message_count: u32,
    pub context_tokens: f64,
    pub preview: String,
    pub model: Option<String>,
    pub revision: f64,
    /// The position (key without the session id) of the record where the
    /// context starts, and the summary's slot in it.
    pub context: Option<(Position, u32)>,
    /// The same for each pinned message before that summary, in order.
    pub pinned: Vec<(Position, u32)>,
}

impl SessionRecord {
    /// The record object: `model` is left out when there is none,
    /// `contextKey` is null when the context is the whole session.
    pub fn shape<V>(&self) -> Shape<V> {
        let mut r = Shape::of([
            ("id", Field::String(self.id.clone())),
            ("title", Field::String(self.title.clone())),
            ("createdAt", Field::Number(self.created_at)),
            ("lastModified", Field::Number(self.last_modified)),
            ("messageCount", Field::Number(self.message_count.into())),
            ("contextTokens", Field::Number(self.context_tokens)),
            ("preview", Field::String(self.preview.clone())),
        ]);
        r.push_some("model", self.model.clone().map(Field::String));
        r.push("revision", Field::Number(self.revision));
        let context_key = self.context.as_ref().map(|(p, _)| self.key(p));
        r.push("contextKey", context_key.unwrap_or(Field::Null));
        let slot = self.context.as_ref().map_or(0, |c| c.1);
        r.push("contextSlot", Field::Number(slot.into()));
        let pinned = (self.pinned.iter())
            .map(|(p, slot)| Field::List(vec![self.key(p), Field::Number((*slot).into())]))
            .collect();
        r.push("pinnedKeys", Field::List(pinned));
        r
    }

    /// A message record's key, `[sessionId, ...position]`.
    fn key<V>(&self, position: &[f64]) -> Field<V> {
        let id = Field::String(self.id.clone());
        Field::List(
            std::iter::once(id)
                .chain(position.iter().map(|&x| Field::Number(x)))
                .collect(),
        )
    }
}

/// `createSession`: no messages, revision 0.
pub fn new_session(
    id: String,
    title: Option<String>,
    model: Option<String>,
    now: f64,
) -> SessionRecord {
    SessionRecord {
        id,
        title: title.unwrap_or_else(|| DEFAULT_TITLE.to_owned()),
        created_at: now,
        last_modified: now,
        message_count: 0,
        context_tokens: 0.0,
        preview: String::new(),
        model,
        revision: 0.0,
        context: None,
        pinned: Vec::new(),
    }
}

/// What a session written whole (a fork, an import) starts as, besides its
/// messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Seed {
    pub id: String,
    pub title: String,
    pub created_at: f64,
    pub model: Option<String>,
}

/// What a session written whole holds about its messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Contents {
    pub message_count: usize,
    /// The last `compactionSummary`.
    pub last_summary: Option<usize>,
    pub context_tokens: f64,
    pub preview: String,
    /// The pinned messages before the last summary (`storage::marks`).
    pub pinned: Vec<usize>,
}

/// The record of a session written whole at `now`, and the layout of its
/// records (`core::packing::initial`; message `i` alone is keyed `[i]`, a
/// pack by its first message): as a save of the array into a new session
/// would leave it, revision 1. `lastModified` is never before `createdAt`
/// (an imported file's creation time may be in the future of this clock).
pub fn written_whole(seed: Seed, contents: Contents, now: f64) -> (SessionRecord, Vec<Pack>) {
    let packs = initial(contents.message_count, contents.last_summary);
    let stored_at = |j: usize| match pack_of(&packs, j) {
        Some(p) => (vec![packs[p].0 as f64], (j - packs[p].0) as u32),
        None => (vec![j as f64], 0),
    };
    let context = contents.last_summary.map(stored_at);
    let pinned = contents.pinned.iter().map(|&j| stored_at(j)).collect();
    let record = SessionRecord {
        last_modified: now.max(seed.created_at),
        id: seed.id,
        title: seed.title,
        created_at: seed.created_at,
        message_count: contents.message_count as u32,
        context_tokens: contents.context_tokens,
        preview: contents.preview,
        model: seed.model,
        revision: 1.0,
        context,
        pinned,
    };
    (record, packs)
}

/// A fork's title unless one is given.
fn fork_title(source_title: &str) -> String {
    format!("{source_title} (fork)")
}

/// The session a fork writes, besides its messages: `id`, created `now`,
/// titled `title` or after the source's title, with the source's model
/// (`source(key)` reads the source's record).
pub fn fork_seed<V: Value>(
    id: String,
    title: Option<String>,
    source: impl Fn(&'static str) -> V,
    now: f64,
) -> Seed {
    Seed {
        id,
        title: title.unwrap_or_else(|| fork_title(&source("title").name().unwrap_or_default())),
        created_at: now,
        model: source("model").name(),
    }
}

/// An imported session's title: the caller's, else the file's session
/// name, else its first user text (`preview`, cut to
/// [`IMPORT_TITLE_MAX`]), else [`IMPORTED_TITLE`]. Empty ones do not count.
pub fn import_title(given: Option<String>, file: Option<String>, preview: &str) -> String {
    given
        .or(file)
        .filter(|t| !t.is_empty())
        .or_else(|| Some(preview.to_owned()).filter(|t| !t.is_empty()))
        .unwrap_or_else(|| IMPORTED_TITLE.to_owned())
}

/// A pi session file's model as this library names it: "provider/modelId".
pub fn model_key(provider: Option<String>, model_id: Option<String>) -> Option<String> {
    Some(format!("{}/{}", provider?, model_id?))
}

/// What an imported pi session file's header says (its `session` line, as
/// `piSessionToMessages` reads it): each field where it is a string, and
/// its timestamp parsed to milliseconds (NaN where it does not parse).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileHeader {
    pub id: Option<String>,
    pub title: Option<String>,
    pub provider: Option<String>,
    pub model_id: Option<String>,
    pub timestamp: Option<f64>,
}

/// An imported session's `createdAt`: the file's header timestamp when it
/// parses to a date (`parsed`, milliseconds), else now.
pub fn imported_created_at(parsed: Option<f64>, now: f64) -> f64 {
    parsed.filter(|ms| ms.is_finite()).unwrap_or(now)
}

/// The session an import writes, besides its messages: the file's id
/// unless it is empty (else `fresh()`), the title [`import_title`] gives
/// (`title`: the caller's; `preview`: the messages' first user text), the
/// file's model ([`model_key`]), and the file's creation time where it
/// parses, else `now`.
pub fn import_seed(
    file: FileHeader,
    title: Option<String>,
    preview: &str,
    now: f64,
    fresh: impl FnOnce() -> String,
) -> Seed {
    Seed {
        id: file.id.filter(|id| !id.is_empty()).unwrap_or_else(fresh),
        title: import_title(title, file.title, preview),
        created_at: imported_created_at(file.timestamp, now),
        model: model_key(file.provider, file.model_id),
    }
}

/// What `exportJsonl` tells the session-file writer of a stored session:
/// its id, and its title, model and creation time where the record has
/// them (a string; a finite number). A model that is not a
/// `"provider/modelId"` key (`createSession` takes any string; a pi file
/// whose model has an empty provider is imported as `"/modelId"`) names no
/// model a `model_change` entry can hold, and is left out: the session is
/// exported without it rather than not at all.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportOptions {
    pub id: String,
    pub title: Option<String>,
    pub model: Option<String>,
    pub timestamp: Option<f64>,
}

impl ExportOptions {
    /// The options object; what is missing is left out.
    pub fn shape<V>(&self) -> Shape<V> {
        let mut o = Shape::of([("id", Field::String(self.id.clone()))]);
        o.push_some("title", self.title.clone().map(Field::String));
        o.push_some("model", self.model.clone().map(Field::String));
        o.push_some("timestamp", self.timestamp.map(Field::Number));
        o
    }
}

pub fn export_options(
    id: &str,
    title: Option<String>,
    model: Option<String>,
    created_at: Option<f64>,
) -> ExportOptions {
    ExportOptions {
        id: id.to_owned(),
        title,
        model: model.filter(|key| split_model_key(&JsStr::from(key.as_str())).is_some()),
        timestamp: created_at.filter(|t| t.is_finite()),
    }
}

/// The fields a save writes over the stored record (the rest is kept;
/// the binding adds `contextKey`, a key it holds).
#[derive(Clone, Debug, PartialEq)]
pub struct SaveFields {
    pub last_modified: f64,
    pub message_count: u32,
    pub context_tokens: f64,
    pub preview: String,
    pub revision: f64,
    pub context_slot: u32,
}

impl SaveFields {
    /// The fields a save writes, as a stored record holds them (`field(key)`
    /// gives each): `None` when one is missing or not of its type (a record
    /// of an older version, or one no save wrote since).
    pub fn read<V: Value>(field: impl Fn(&'static str) -> V) -> Option<SaveFields> {
        let number = |key| field(key).number();
        let count = |key| {
            number(key).filter(|x| x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(x))
        };
        Some(SaveFields {
            last_modified: number("lastModified")?,
            message_count: count("messageCount")? as u32,
            context_tokens: number("contextTokens")?,
            preview: field("preview").name()?,
            revision: number("revision")?,
            context_slot: count("contextSlot")? as u32,
        })
    }

    pub fn shape<V>(&self) -> Shape<V> {
        Shape::of([
            ("lastModified", Field::Number(self.last_modified)),
            ("messageCount", Field::Number(self.message_count.into())),
            ("contextTokens", Field::Number(self.context_tokens)),
            ("preview", Field::String(self.preview.clone())),
            ("revision", Field::Number(self.revision)),
            ("contextSlot", Field::Number(self.context_slot.into())),
        ])
    }
}

/// A save's `lastModified`: now, unless the stored one is later (a record
/// written by a tab whose clock runs ahead): it never goes back.
pub fn saved_last_modified(stored: Option<f64>, now: f64) -> f64 {
    match stored {
        Some(before) if before > now => before,
        _ => now,
    }
}

/// The fields a rename writes over the stored record: the title, and
/// `lastModified` as a save sets it (never back).
#[derive(Clone, Debug, PartialEq)]
pub struct Renamed {
    pub title: String,
    pub last_modified: f64,
}

impl Renamed {
    pub fn new(title: String, stored_last_modified: Option<f64>, now: f64) -> Renamed {
        let last_modified = saved_last_modified(stored_last_modified, now);
        Renamed {
            title,
            last_modified,
        }
    }

    pub fn shape<V>(&self) -> Shape<V> {
        Shape::of([
            ("title", Field::String(self.title.clone())),
            ("lastModified", Field::Number(self.last_modified)),
        ])
    }
}

/// What the schema upgrade to version 2 reads of a record written before:
/// the numbers that are finite numbers, and which text fields are strings.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OldRecord {
    pub created_at: Option<f64>,
    pub last_modified: Option<f64>,
    pub message_count: Option<f64>,
    pub context_tokens: Option<f64>,
    pub revision: Option<f64>,
    pub title_is_text: bool,
    pub preview_is_text: bool,
    pub has_context_key: bool,
}

impl OldRecord {
    /// Reads an old record, `field(key)` giving each of its fields.
    pub fn read<V: Value>(field: impl Fn(&'static str) -> V) -> OldRecord {
        let number = |key| field(key).number().filter(|x| x.is_finite());
        OldRecord {
            created_at: number("createdAt"),
            last_modified: number("lastModified"),
            message_count: number("messageCount"),
            context_tokens: number("contextTokens"),
            revision: number("revision"),
            title_is_text: field("title").text().is_some(),
            preview_is_text: field("preview").text().is_some(),
            has_context_key: !field("contextKey").is_undefined(),
        }
    }
}

/// The fields the upgrade sets on an old record (only those missing or of
/// the wrong type). A numeric `lastModified` is what puts a record in the
/// `byLastModified` index that `list()` reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Defaults {
    pub created_at: Option<f64>,
    pub last_modified: Option<f64>,
    pub title: Option<&'static str>,
    pub preview: Option<&'static str>,
    pub context_tokens: Option<f64>,
    pub revision: Option<f64>,
    /// Set `contextKey` to null (the context is the whole session).
    pub context_key_null: bool,
    /// `messageCount` must be counted from the session's records.
    pub count_messages: bool,
}

/// What the upgrade does to one old record: `fields` set over it, and
/// whether its `messageCount` is counted from its records; `None` (null)
/// when nothing changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub fields: Defaults,
    pub count: bool,
}

impl Patch {
    pub fn of(defaults: Defaults) -> Option<Patch> {
        (!defaults.is_empty()).then_some(Patch {
            count: defaults.count_messages,
            fields: defaults,
        })
    }

    /// `{ fields, count }`: `fields` holds only the fields to set.
    pub fn shape<V>(&self) -> Shape<V> {
        let d = &self.fields;
        let mut fields = Shape(Vec::new());
        fields.push_some("createdAt", d.created_at.map(Field::Number));
        fields.push_some("lastModified", d.last_modified.map(Field::Number));
        fields.push_some("title", d.title.map(Field::Str));
        fields.push_some("preview", d.preview.map(Field::Str));
        fields.push_some("contextTokens", d.context_tokens.map(Field::Number));
        fields.push_some("revision", d.revision.map(Field::Number));
        fields.push_some("contextKey", d.context_key_null.then_some(Field::Null));
        Shape::of([
            ("fields", Field::Object(fields)),
            ("count", Field::Bool(self.count)),
        ])
    }
}

impl Defaults {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        *self == Defaults::default()
    }
}

/// The defaults for `old`.
pub fn defaults(old: &OldRecord) -> Defaults {
    let created_at = old.created_at.or(old.last_modified).unwrap_or(0.0);
    Defaults {
        created_at: old.created_at.is_none().then_some(created_at),
        last_modified: old.last_modified.is_none().then_some(created_at),
        title: (!old.title_is_text).then_some(DEFAULT_TITLE),
        preview: (!old.preview_is_text).then_some(""),
        context_tokens: old.context_tokens.is_none().then_some(0.0),
        revision: old.revision.is_none().then_some(0.0),
        context_key_null: !old.has_context_key,
        count_messages: old.message_count.is_none(),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::js::shape::text;

    #[test]
    fn an_export_carries_what_the_record_has() {
        let o = export_options("s", Some("T".into()), None, Some(5.0));
        assert_eq!((o.id.as_str(), o.title.as_deref()), ("s", Some("T")));
        assert_eq!((o.model.as_deref(), o.timestamp), (None, Some(5.0)));
        assert_eq!(text(&o.shape()), r#"{"id":"s","title":"T","timestamp":5}"#);
        assert_eq!(
            export_options("s", None, None, Some(f64::NAN)).timestamp,
            None
        );
        assert_eq!(export_options("s", None, None, None).timestamp, None);
    }

    #[test]
    fn a_model_the_file_cannot_name_is_left_out_of_the_export() {
        // `createSession({ model })` takes any string, and a pi file's
        // model with an empty provider is imported as "/id": an export of
        // such a session writes no model change rather than failing.
        for model in ["gpt-4o", "/gpt-4o", "openai/", "", "/"] {
            let o = export_options("s", None, Some(model.into()), None);
            assert_eq!(o.model, None, "{model:?}");
            assert_eq!(text(&o.shape()), r#"{"id":"s"}"#, "{model:?}");
        }
        for model in ["openai/gpt-4o", "openrouter/anthropic/claude", " a / b "] {
            let o = export_options("s", None, Some(model.into()), None);
            assert_eq!(o.model.as_deref(), Some(model));
        }
    }

    #[test]
    fn records_serialize_as_the_store_writes_them() {
        let mut r = new_session("a".into(), None, None, 5.0);
        assert_eq!(
            text(&r.shape()),
            r#"{"id":"a","title":"New session","createdAt":5,"lastModified":5,"messageCount":0,"contextTokens":0,"preview":"","revision":0,"contextKey":null,"contextSlot":0,"pinnedKeys":[]}"#
        );
        r.model = Some("p/m".into());
        r.context = Some((vec![3.0, 1.0], 2));
        r.pinned = vec![(vec![0.0], 1), (vec![2.0, 5.0], 0)];
        let out = text(&r.shape());
        assert!(out.contains(r#""model":"p/m","revision""#), "{out}");
        assert!(
            out.ends_with(r#""contextKey":["a",3,1],"contextSlot":2,"pinnedKeys":[[["a",0],1],[["a",2,5],0]]}"#),
            "{out}"
        );
        let f = SaveFields {
            last_modified: 1.0,
            message_count: 2,
            context_tokens: 3.0,
            preview: "p".into(),
            revision: 4.0,
            context_slot: 5,
        };
        assert_eq!(
            text(&f.shape()),
            r#"{"lastModified":1,"messageCount":2,"contextTokens":3,"preview":"p","revision":4,"contextSlot":5}"#
        );
    }

    #[test]
    fn a_stored_record_gives_the_fields_a_save_wrote_only_when_it_has_them_all() {
        use crate::js::options::tests::{Fields, Js};
        let whole = vec![
            ("id", Js::Str("s")),
            ("lastModified", Js::Num(1.0)),
            ("messageCount", Js::Num(2.0)),
            ("contextTokens", Js::Num(3.5)),
            ("preview", Js::Str("p")),
            ("revision", Js::Num(4.0)),
            ("contextSlot", Js::Num(5.0)),
        ];
        let read = |fields: Vec<(&'static str, Js)>| {
            let record = Fields::new(fields);
            SaveFields::read(|k| record.get(k).unwrap())
        };
        let expected = SaveFields {
            last_modified: 1.0,
            message_count: 2,
            context_tokens: 3.5,
            preview: "p".into(),
            revision: 4.0,
            context_slot: 5,
        };
        assert_eq!(read(whole.clone()), Some(expected));
        for (key, bad) in [
            ("lastModified", Js::Str("1")),
            ("messageCount", Js::Num(2.5)),
            ("messageCount", Js::Num(-1.0)),
            ("contextTokens", Js::Null),
            ("preview", Js::Num(0.0)),
            ("revision", Js::Undefined),
            ("contextSlot", Js::Num(f64::NAN)),
        ] {
            let mut fields = whole.clone();
            fields.iter_mut().find(|(k, _)| *k == key).unwrap().1 = bad.clone();
            assert_eq!(read(fields), None, "{key}: {bad:?}");
        }
    }

    #[test]
    fn the_upgrade_patch_sets_only_what_is_missing() {
        let whole = OldRecord {
            created_at: Some(1.0),
            last_modified: Some(2.0),
            message_count: Some(0.0),
            context_tokens: Some(0.0),
            revision: Some(0.0),
            title_is_text: true,
            preview_is_text: true,
            has_context_key: true,
        };
        assert_eq!(Patch::of(defaults(&whole)), None);
        let old = OldRecord {
            last_modified: Some(7.0),
            title_is_text: true,
            ..OldRecord::default()
        };
        let patch = Patch::of(defaults(&old)).unwrap();
        assert_eq!(
            text(&patch.shape()),
            r#"{"fields":{"createdAt":7,"preview":"","contextTokens":0,"revision":0,"contextKey":null},"count":true}"#
        );
    }

    #[test]
    fn a_new_session() {
        let r = new_session("a".into(), None, Some("p/m".into()), 5.0);
        assert_eq!(r.title, DEFAULT_TITLE);
        assert_eq!((r.created_at, r.last_modified, r.revision), (5.0, 5.0, 0.0));
        assert_eq!(
            (r.message_count, r.context_tokens, r.context),
            (0, 0.0, None)
        );
        assert_eq!(r.model.as_deref(), Some("p/m"));
        assert_eq!(
            new_session("b".into(), Some("T".into()), None, 1.0).title,
            "T"
        );
    }

    #[test]
    fn written_whole_is_revision_one_with_the_context_located() {
        let seed = Seed {
            id: "s".into(),
            title: "t".into(),
            created_at: 10.0,
            model: None,
        };
        let contents = |n, last| Contents {
            message_count: n,
            last_summary: last,
            context_tokens: 7.0,
            preview: "hi".into(),
            pinned: Vec::new(),
        };
        let (r, packs) = written_whole(seed.clone(), contents(3, Some(1)), 20.0);
        assert_eq!(
            (r.revision, r.last_modified, r.message_count),
            (1.0, 20.0, 3)
        );
        assert!(packs.is_empty());
        assert_eq!(r.context, Some((vec![1.0], 0)));
        // A clock behind the file's creation time.
        let (r, _) = written_whole(seed.clone(), contents(0, None), 5.0);
        assert_eq!((r.last_modified, r.context), (10.0, None));
        // A long session: the summary inside a pack is located by its slot.
        let (r, packs) = written_whole(seed.clone(), contents(5000, Some(4000)), 20.0);
        let p = pack_of(&packs, 4000);
        let (position, slot) = r.context.unwrap();
        match p {
            Some(p) => {
                assert_eq!(position, vec![packs[p].0 as f64]);
                assert_eq!(slot as usize, 4000 - packs[p].0);
            }
            None => assert_eq!((position, slot), (vec![4000.0], 0)),
        }
        // Pinned messages before the summary are located the same way.
        let mut pinned = contents(5000, Some(4000));
        pinned.pinned = vec![3, 3999];
        let (r, packs) = written_whole(seed, pinned, 20.0);
        for (&j, (position, slot)) in [3usize, 3999].iter().zip(&r.pinned) {
            let start = pack_of(&packs, j).map_or(j, |p| packs[p].0);
            assert_eq!(
                (position.clone(), *slot as usize),
                (vec![start as f64], j - start)
            );
        }
        assert_eq!(r.pinned.len(), 2);
    }

    #[test]
    fn titles() {
        assert_eq!(fork_title("Plan"), "Plan (fork)");
        use crate::js::options::tests::{Fields, Js};
        let source = Fields::new(vec![("title", Js::Str("Plan")), ("model", Js::Str("p/m"))]);
        let seed = fork_seed("n".into(), None, |k| source.get(k).unwrap(), 4.0);
        let expected = Seed {
            id: "n".into(),
            title: "Plan (fork)".into(),
            created_at: 4.0,
            model: Some("p/m".into()),
        };
        assert_eq!(seed, expected);
        let untitled = Fields::new(vec![("title", Js::Num(1.0))]);
        let seed = fork_seed("n".into(), None, |k| untitled.get(k).unwrap(), 4.0);
        assert_eq!((seed.title.as_str(), seed.model), (" (fork)", None));
        let given = fork_seed(
            "n".into(),
            Some("T".into()),
            |k| source.get(k).unwrap(),
            4.0,
        );
        assert_eq!(given.title, "T");
        assert_eq!(import_title(Some("A".into()), Some("B".into()), "c"), "A");
        assert_eq!(import_title(None, Some("B".into()), "c"), "B");
        assert_eq!(import_title(Some("".into()), None, "c"), "c");
        assert_eq!(import_title(None, None, ""), IMPORTED_TITLE);
        assert_eq!(
            model_key(Some("p".into()), Some("m".into())).as_deref(),
            Some("p/m")
        );
        assert_eq!(model_key(None, Some("m".into())), None);
        assert_eq!(imported_created_at(Some(5.0), 9.0), 5.0);
        assert_eq!(imported_created_at(Some(f64::NAN), 9.0), 9.0);
        assert_eq!(imported_created_at(None, 9.0), 9.0);
        let file = FileHeader {
            id: Some("f".into()),
            title: Some("T".into()),
            provider: Some("p".into()),
            model_id: Some("m".into()),
            timestamp: Some(5.0),
        };
        let fresh = || "new".to_owned();
        let seed = import_seed(file.clone(), None, "c", 9.0, fresh);
        let expected = Seed {
            id: "f".into(),
            title: "T".into(),
            created_at: 5.0,
            model: Some("p/m".into()),
        };
        assert_eq!(seed, expected);
        let unnamed = FileHeader {
            id: Some(String::new()),
            timestamp: Some(f64::NAN),
            model_id: None,
            ..file
        };
        let seed = import_seed(unnamed, Some("given".into()), "c", 9.0, fresh);
        let expected = Seed {
            id: "new".into(),
            title: "given".into(),
            created_at: 9.0,
            model: None,
        };
        assert_eq!(seed, expected);
        assert_eq!(
            import_seed(FileHeader::default(), None, "", 9.0, fresh).title,
            IMPORTED_TITLE
        );
    }

    #[test]
    fn last_modified_never_goes_back() {
        assert_eq!(saved_last_modified(Some(5.0), 9.0), 9.0);
        assert_eq!(saved_last_modified(Some(50.0), 9.0), 50.0);
        assert_eq!(saved_last_modified(None, 9.0), 9.0);
        // A rename moves it as a save does.
        assert_eq!(
            Renamed::new("t".into(), Some(50.0), 9.0).last_modified,
            50.0
        );
        let renamed = Renamed::new("New title".into(), Some(5.0), 9.0);
        assert_eq!(renamed.last_modified, 9.0);
        let shape: Shape<()> = renamed.shape();
        assert_eq!(
            shape,
            Shape::of([
                ("title", Field::String("New title".into())),
                ("lastModified", Field::Number(9.0)),
            ])
        );
    }

    #[test]
    fn upgrade_defaults() {
        let complete = OldRecord {
            created_at: Some(1.0),
            last_modified: Some(2.0),
            message_count: Some(3.0),
            context_tokens: Some(4.0),
            revision: Some(5.0),
            title_is_text: true,
            preview_is_text: true,
            has_context_key: true,
        };
        assert!(defaults(&complete).is_empty());
        let d = defaults(&OldRecord {
            last_modified: Some(8.0),
            ..OldRecord::default()
        });
        assert_eq!(d.created_at, Some(8.0));
        assert_eq!(d.last_modified, None);
        assert_eq!((d.title, d.preview), (Some(DEFAULT_TITLE), Some("")));
        assert_eq!((d.context_tokens, d.revision), (Some(0.0), Some(0.0)));
        assert!(d.context_key_null && d.count_messages);
        let d = defaults(&OldRecord::default());
        assert_eq!((d.created_at, d.last_modified), (Some(0.0), Some(0.0)));
        let d = defaults(&OldRecord {
            created_at: Some(3.0),
            ..complete
        });
        assert!(d.is_empty());
    }

    #[test]
    fn an_old_record_is_read_field_by_field() {
        use crate::js::options::tests::{Fields, Js};
        let o = Fields::new(vec![
            ("createdAt", Js::Num(5.0)),
            ("lastModified", Js::Num(f64::NAN)),
            ("messageCount", Js::Str("3")),
            ("revision", Js::Num(2.0)),
            ("title", Js::Str("t")),
            ("preview", Js::Num(1.0)),
            ("contextKey", Js::Null),
        ]);
        let read = OldRecord {
            created_at: Some(5.0),
            revision: Some(2.0),
            title_is_text: true,
            has_context_key: true,
            ..OldRecord::default()
        };
        assert_eq!(OldRecord::read(|k| o.get(k).unwrap()), read);
    }
}
