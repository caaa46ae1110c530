//! Reading a session file the way pi 0.73's `SessionManager` does: the
//! JSONL lines, the header check, the migrations from versions 1 and 2, and
//! the active branch (the path from the leaf back to the root).

use super::error::SessionFileError;
use super::js_semantics::{
    describe, is_js_whitespace_char, quote_for_error, to_number, trim_str, truthy, Key,
};
use crate::js::json::{parse, Json, JsonObject};
use crate::js::string::JsStr;
use crate::sorted::SortedMap;

/// The entry types pi gives a meaning to; everything else is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Session,
    Message,
    CustomMessage,
    BranchSummary,
    Compaction,
    ModelChange,
    ThinkingLevelChange,
    SessionInfo,
    Other,
}

impl Kind {
    fn of(value: &Json) -> Kind {
        let Some(Json::String(t)) = value.get("type") else {
            return Kind::Other;
        };
        const KINDS: [(&str, Kind); 8] = [
            ("session", Kind::Session),
            ("message", Kind::Message),
            ("custom_message", Kind::CustomMessage),
            ("branch_summary", Kind::BranchSummary),
            ("compaction", Kind::Compaction),
            ("model_change", Kind::ModelChange),
            ("thinking_level_change", Kind::ThinkingLevelChange),
            ("session_info", Kind::SessionInfo),
        ];
        KINDS
            .iter()
            .find(|(name, _)| t.eq_str(name))
            .map_or(Kind::Other, |&(_, kind)| kind)
    }
}

/// One parsed line. `id`, `parent_id` and `first_kept` are kept apart from
/// `value` because the version-1 migration assigns them.
#[derive(Debug)]
pub struct Entry {
    /// 1-based line number in the file.
    pub line: usize,
    pub value: Json,
    pub kind: Kind,
    pub id: Key,
    pub parent_id: Key,
    /// A compaction's `firstKeptEntryId`.
    pub first_kept: Key,
}

impl Entry {
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.value.get(key)
    }
}

/// A session file after pi's loading steps.
#[derive(Debug)]
pub struct LoadedFile {
    /// Every parsed line, the header first.
    pub entries: Vec<Entry>,
    /// The version pi read the file as (before migrating it).
    pub version: f64,
    /// Lines pi skips because they are not valid JSON.
    pub skipped_lines: Vec<usize>,
}

/// Parses the lines as pi's `loadEntriesFromFile` does: the text is trimmed
/// (JavaScript's `trim`, which also removes a byte-order mark), split at
/// `\n`, blank lines are ignored and lines that are not valid JSON skipped.
/// The first parsed line must be a session header with a string `id`.
pub fn load(text: &str) -> Result<LoadedFile, SessionFileError> {
    let trimmed = trim_str(text);
    // Line numbers count from the start of the untrimmed text.
    let lead = text.len() - text.trim_start_matches(is_js_whitespace_char).len();
    let first_line = 1 + text.get(..lead).map_or(0, |l| l.matches('\n').count());
    let mut values: Vec<(usize, Json)> = Vec::new();
    let mut skipped_lines = Vec::new();
    let mut non_blank = 0usize;
    for (i, line) in trimmed.split('\n').enumerate() {
        if trim_str(line).is_empty() {
            continue;
        }
        non_blank += 1;
        match parse(line) {
            Ok(value) => values.push((first_line + i, value)),
            Err(_) => skipped_lines.push(first_line + i),
        }
    }
    let Some((header_line, header)) = values.first() else {
        return Err(if non_blank == 0 {
            SessionFileError::Empty
        } else {
            SessionFileError::NoValidLine { lines: non_blank }
        });
    };
    check_header(*header_line, header)?;
    let version = match header.get("version") {
        None | Some(Json::Null) => 1.0,
        Some(v) => to_number(v),
    };
    let mut objects = 0usize;
    let mut entries = Vec::with_capacity(values.len());
    for (line, value) in values {
        if value.is_null() {
            // pi reads `entry.type` of every line while loading.
            return Err(SessionFileError::NullEntry { line });
        }
        let object = value.as_object();
        let key =
            |name: &str, objects: &mut usize| Key::of(object.and_then(|o| o.get(name)), objects);
        entries.push(Entry {
            line,
            kind: Kind::of(&value),
            id: key("id", &mut objects),
            parent_id: key("parentId", &mut objects),
            first_kept: key("firstKeptEntryId", &mut objects),
            value,
        });
    }
    if version < 2.0 {
        migrate_v1_to_v2(&mut entries)?;
    }
    if version < 3.0 {
        migrate_v2_to_v3(&mut entries);
    }
    Ok(LoadedFile {
        entries,
        version,
        skipped_lines,
    })
}

fn check_header(line: usize, header: &Json) -> Result<(), SessionFileError> {
    let problem = match header {
        Json::Object(o) => match (o.get("type"), o.get("id")) {
            (Some(t), _) if !matches!(t, Json::String(s) if s.eq_str("session")) => {
                format!("its type is {}", quote_for_error(t))
            }
            (None, _) => "it has no type".to_owned(),
            (_, Some(Json::String(_))) => return Ok(()),
            (_, id) => format!("its id is {}", describe(id)),
        },
        other => format!("it is {}", describe(Some(other))),
    };
    Err(SessionFileError::NoHeader { line, problem })
}

/// pi's `migrateV1ToV2`: every entry but session headers gets a fresh id
/// and the previous entry as its parent; a compaction's
/// `firstKeptEntryIndex` (an index into the lines, header included) becomes
/// the `firstKeptEntryId` of the entry there, as that entry's id stands at
/// that moment (a later entry's id is not assigned yet).
fn migrate_v1_to_v2(entries: &mut [Entry]) -> Result<(), SessionFileError> {
    // pi assigns properties on every entry; on a string or number that
    // throws (ES modules are strict), so pi cannot load such a file.
    if let Some(e) = entries
        .iter()
        .find(|e| !matches!(e.value, Json::Object(_) | Json::Array(_)))
    {
        return Err(SessionFileError::NotAnObjectInV1 {
            line: e.line,
            got: describe(Some(&e.value)),
        });
    }
    let mut previous = Key::Null;
    for i in 0..entries.len() {
        let target = match entries.get(i) {
            Some(e) if e.kind == Kind::Session => continue,
            Some(e) if e.kind == Kind::Compaction => match e.get("firstKeptEntryIndex") {
                Some(Json::Number(index)) => Some(array_index(*index, entries.len())),
                _ => None,
            },
            _ => None,
        };
        if let Some(entry) = entries.get_mut(i) {
            entry.id = Key::Generated(i);
            entry.parent_id = std::mem::replace(&mut previous, Key::Generated(i));
        }
        // `if (targetEntry && targetEntry.type !== "session")`
        let kept = target
            .flatten()
            .and_then(|t| entries.get(t))
            .filter(|t| truthy(Some(&t.value)) && t.kind != Kind::Session)
            .map(|t| t.id.clone());
        if let (Some(kept), Some(entry)) = (kept, entries.get_mut(i)) {
            entry.first_kept = kept;
        }
    }
    Ok(())
}

/// `entries[index]` for a number `index`: a whole, non-negative index in range.
fn array_index(index: f64, len: usize) -> Option<usize> {
    if index.fract() != 0.0 || index < 0.0 || index >= len as f64 {
        return None;
    }
    Some(index as usize)
}

/// pi's `migrateV2ToV3`: a message with role `hookMessage` becomes `custom`.
fn migrate_v2_to_v3(entries: &mut [Entry]) {
    for entry in entries.iter_mut().filter(|e| e.kind == Kind::Message) {
        let Json::Object(object) = &mut entry.value else {
            continue;
        };
        let Some(Json::Object(message)) = object.get("message") else {
            continue;
        };
        if !matches!(message.get("role"), Some(Json::String(r)) if r.eq_str("hookMessage")) {
            continue;
        }
        let mut message: JsonObject = message.clone();
        message.insert(JsStr::from("role"), Json::from("custom"));
        object.insert(JsStr::from("message"), Json::Object(message));
    }
}

/// The active branch as indices into `entries`, root first.
///
/// pi's leaf is the last entry that is not a session header (the leaf a
/// session had when it was last appended to: moving to another branch
/// without appending is not saved). A leaf whose id is `null` gives an
/// empty context, as pi's `buildSessionContext(entries, null)` does. From
/// the leaf, pi follows `parentId` through a map of ids in which a later
/// entry replaces an earlier one with the same id, until a parent is falsy
/// or unknown. A chain that comes back on itself would make pi loop forever;
/// here it is an error.
pub fn active_path(entries: &[Entry]) -> Result<Vec<usize>, SessionFileError> {
    let mut ids: Vec<(&Key, usize)> = Vec::new();
    let mut leaf = None;
    for (i, entry) in entries.iter().enumerate() {
        if entry.kind != Kind::Session {
            ids.push((&entry.id, i));
            leaf = Some(i);
        }
    }
    let by_id = SortedMap::from_pairs(ids);
    let Some(leaf) = leaf else {
        return Ok(Vec::new());
    };
    if entries.get(leaf).is_some_and(|e| e.id == Key::Null) {
        return Ok(Vec::new());
    }
    let mut on_path = vec![false; entries.len()];
    let mut path = Vec::new();
    let mut current = leaf;
    while let Some(entry) = entries.get(current) {
        if on_path.get(current) == Some(&true) {
            return Err(SessionFileError::ParentCycle { line: entry.line });
        }
        if let Some(seen) = on_path.get_mut(current) {
            *seen = true;
        }
        path.push(current);
        if !entry.parent_id.is_truthy() {
            break;
        }
        match by_id.get(&&entry.parent_id) {
            Some(&parent) => current = parent,
            None => break,
        }
    }
    path.reverse();
    Ok(path)
}
