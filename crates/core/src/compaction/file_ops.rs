//! Which files the summarized conversation read and changed, from the
//! `read` / `write` / `edit` tool calls (pi's file-operation tracking),
//! carried from one compaction to the next through a summary's `details`.

use crate::js::string::JsStr;
use crate::sorted::SortedSet;

/// Paths by operation. `SortedSet<JsStr>` orders by UTF-16 code units, which
/// is the order JavaScript's default `sort()` gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: SortedSet<JsStr>,
    pub written: SortedSet<JsStr>,
    pub edited: SortedSet<JsStr>,
}

impl FileOps {
    /// A tool call with a non-empty string `arguments.path` (pi ignores the
    /// rest): `read`, `write` and `edit` are tracked, other tools are not.
    pub fn add_tool_call(&mut self, tool_name: &JsStr, path: JsStr) {
        if path.is_empty() {
            return;
        }
        let set = if tool_name.eq_str("read") {
            &mut self.read
        } else if tool_name.eq_str("write") {
            &mut self.written
        } else if tool_name.eq_str("edit") {
            &mut self.edited
        } else {
            return;
        };
        set.insert(path);
    }

    /// The previous summary's lists: its read files count as read, its
    /// modified files as edited (pi does the same).
    pub fn add_previous(
        &mut self,
        read_files: impl IntoIterator<Item = JsStr>,
        modified_files: impl IntoIterator<Item = JsStr>,
    ) {
        self.read.extend(read_files);
        self.edited.extend(modified_files);
    }

    /// pi's `computeFileLists`: files only read, and files written or edited,
    /// each sorted.
    pub fn file_lists(&self) -> (Vec<JsStr>, Vec<JsStr>) {
        let modified: SortedSet<JsStr> = self.written.iter().chain(&self.edited).cloned().collect();
        let read_only = self
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect();
        (read_only, modified.into_vec())
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn js(s: &str) -> JsStr {
        JsStr::from(s)
    }

    #[test]
    fn tracks_read_write_and_edit_only() {
        let mut ops = FileOps::default();
        ops.add_tool_call(&js("read"), js("b.rs"));
        ops.add_tool_call(&js("read"), js("a.rs"));
        ops.add_tool_call(&js("write"), js("new.rs"));
        ops.add_tool_call(&js("edit"), js("a.rs"));
        ops.add_tool_call(&js("bash"), js("ignored.rs"));
        ops.add_tool_call(&js("Read"), js("ignored-too.rs"));
        ops.add_tool_call(&js("read"), js(""));
        let (read, modified) = ops.file_lists();
        assert_eq!(read, vec![js("b.rs")]);
        assert_eq!(modified, vec![js("a.rs"), js("new.rs")]);
    }

    #[test]
    fn sorted_as_javascript_sorts() {
        let mut ops = FileOps::default();
        for p in ["b", "B", "a", "\u{1F600}", "\u{FFFF}", "Z10", "Z9"] {
            ops.add_tool_call(&js("read"), js(p));
        }
        let (read, _) = ops.file_lists();
        let read: Vec<String> = read.iter().map(|p| p.to_string_lossy()).collect();
        // ["b","B","a","😀","\uffff","Z10","Z9"].sort() in JavaScript:
        assert_eq!(read, ["B", "Z10", "Z9", "a", "b", "\u{1F600}", "\u{FFFF}"]);
    }

    #[test]
    fn previous_lists_carry_over() {
        let mut ops = FileOps::default();
        ops.add_previous([js("old-read.rs"), js("x.rs")], [js("old-mod.rs")]);
        ops.add_tool_call(&js("write"), js("x.rs"));
        assert_eq!(ops.edited.len(), 1);
        let (read, modified) = ops.file_lists();
        assert_eq!(read, vec![js("old-read.rs")]);
        assert_eq!(modified, vec![js("old-mod.rs"), js("x.rs")]);
    }
}
