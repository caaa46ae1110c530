//! The document and its fitting: items with renderings from full to short,
//! importance tiers, and the single pass that shortens and drops items
//! (least important, oldest first) until the summary fits its budget.

use super::focus::Focus;
use super::text::{cut, units};
use crate::sorted::sort_by;

/// Importance tiers: lower tiers are shortened or dropped first.
pub(super) mod tier {
    pub const OLD_DECISIONS: u32 = 10;
    pub const OLD_COMMANDS: u32 = 12;
    pub const OLD_ERRORS: u32 = 14;
    pub const EARLIER_MISC: u32 = 16;
    pub const OLD_REPLIES: u32 = 17;
    pub const OLD_REQUESTS_SHORTEN: u32 = 18;
    pub const STATE_SHORTEN: u32 = 20;
    pub const OLD_CONSTRAINTS: u32 = 22;
    pub const DECISIONS: u32 = 23;
    pub const OLD_REQUESTS: u32 = 24;
    pub const FOLLOW_UPS: u32 = 26;
    pub const FILES_READ: u32 = 28;
    pub const ERRORS: u32 = 30;
    pub const CONSTRAINTS: u32 = 32;
    pub const EARLIER_DONE: u32 = 34;
    pub const STATE_SHORTER: u32 = 36;
    pub const GOAL_SHORTEN: u32 = 38;
    pub const RECENT_REPLIES: u32 = 40;
    pub const NEXT_STEPS: u32 = 42;
    pub const STATE: u32 = 44;
    pub const GOAL_SHORTER: u32 = 46;
    pub const GOAL: u32 = 47;
    pub const FOCUS: u32 = 48;
    /// Below: the last five user requests and the modified files.
    pub const MUST_SHORTEN: u32 = 50;
    pub const MUST_REQUESTS: u32 = 52;
    pub const MUST_FILES: u32 = 54;
    /// Focus matches move up by this much, staying below `RECENT_REPLIES`.
    pub const FOCUS_BONUS: u32 = 15;
}

pub(super) const GOAL: usize = 0;
pub(super) const CONSTRAINTS: usize = 1;
pub(super) const DONE: usize = 2;
pub(super) const IN_PROGRESS: usize = 3;
pub(super) const BLOCKED: usize = 4;
pub(super) const DECISIONS: usize = 5;
pub(super) const NEXT: usize = 6;
pub(super) const CRITICAL: usize = 7;

pub(super) const HEADINGS: [&str; 8] = [
    "## Goal\n",
    "## Constraints & Preferences\n",
    "## Progress\n### Done\n",
    "### In Progress\n",
    "### Blocked\n",
    "## Key Decisions\n",
    "## Next Steps\n",
    "## Critical Context\n",
];
pub(super) const NONE: &str = "(none)\n";
pub(super) const OMITTED: &str = "(omitted to fit the budget)\n";

pub(super) struct Item {
    /// Renderings, longest first, each with its length.
    pub(super) versions: Vec<(String, usize)>,
    /// The rendering in use; `versions.len()` when dropped.
    pub(super) current: usize,
    /// Whether the marker line counts it when dropped.
    pub(super) counted: bool,
}

pub(super) struct Group {
    pub(super) label: String,
    pub(super) label_len: usize,
    /// The indentation of the marker line for dropped items.
    pub(super) indent: &'static str,
    /// What the marker line calls the dropped items ("earlier requests").
    pub(super) noun: &'static str,
    pub(super) items: Vec<Item>,
    pub(super) visible: usize,
    pub(super) visible_len: usize,
    pub(super) omitted: usize,
    /// Dropped items the marker line counts (a reply goes with its request).
    pub(super) omitted_counted: usize,
}

impl Group {
    pub(super) fn len(&self) -> usize {
        if self.visible == 0 {
            return 0;
        }
        let marker = if self.omitted_counted > 0 {
            units(&marker_line(self.indent, self.omitted_counted, self.noun))
        } else {
            0
        };
        self.label_len + self.visible_len + marker
    }
}

pub(super) fn marker_line(indent: &str, n: usize, noun: &str) -> String {
    let noun = if n == 1 {
        noun.strip_suffix('s').unwrap_or(noun)
    } else {
        noun
    };
    format!("{indent}- … {n} {noun} omitted to fit the budget\n")
}

#[derive(Default)]
pub(super) struct Section {
    pub(super) groups: Vec<Group>,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Step {
    pub(super) tier: u32,
    pub(super) seq: usize,
    pub(super) section: usize,
    pub(super) group: usize,
    pub(super) item: usize,
    pub(super) to: usize,
}

pub(super) struct Builder {
    pub(super) sections: Vec<Section>,
    pub(super) steps: Vec<Step>,
    pub(super) focus: Focus,
}

impl Builder {
    pub(super) fn new(focus: Focus) -> Builder {
        Builder {
            sections: HEADINGS.iter().map(|_| Section::default()).collect(),
            steps: Vec::new(),
            focus,
        }
    }

    /// A new group in `section`; `label` is a whole line (or empty).
    pub(super) fn group(
        &mut self,
        section: usize,
        label: &str,
        indent: &'static str,
        noun: &'static str,
    ) -> usize {
        let Some(s) = self.sections.get_mut(section) else {
            return 0;
        };
        s.groups.push(Group {
            label: label.to_string(),
            label_len: units(label),
            indent,
            noun,
            items: Vec::new(),
            visible: 0,
            visible_len: 0,
            omitted: 0,
            omitted_counted: 0,
        });
        s.groups.len() - 1
    }

    /// An item with renderings `versions` (longest first); `tiers[k]` is the
    /// tier at which it goes from rendering `k` to `k + 1` (the last step
    /// drops it); `seq` orders steps within a tier.
    pub(super) fn item(
        &mut self,
        at: (usize, usize),
        versions: Vec<String>,
        tiers: &[u32],
        seq: usize,
    ) {
        let (section, group) = at;
        let boost = versions
            .first()
            .is_some_and(|text| self.focus.matches(text));
        let Some(g) = self
            .sections
            .get_mut(section)
            .and_then(|s| s.groups.get_mut(group))
        else {
            return;
        };
        let versions: Vec<(String, usize)> = versions
            .into_iter()
            .map(|v| {
                let n = units(&v);
                (v, n)
            })
            .collect();
        let Some(&(_, first_len)) = versions.first() else {
            return;
        };
        let index = g.items.len();
        let count = versions.len();
        g.items.push(Item {
            versions,
            current: 0,
            counted: true,
        });
        g.visible += 1;
        g.visible_len += first_len;
        for (k, &t) in tiers.iter().enumerate().take(count) {
            let tier = if boost && t + tier::FOCUS_BONUS < tier::RECENT_REPLIES {
                t + tier::FOCUS_BONUS
            } else {
                t
            };
            self.steps.push(Step {
                tier,
                seq,
                section,
                group,
                item: index,
                to: k + 1,
            });
        }
    }

    /// The group's last item is not counted by its marker line.
    pub(super) fn not_counted(&mut self, at: (usize, usize)) {
        let last = self
            .sections
            .get_mut(at.0)
            .and_then(|s| s.groups.get_mut(at.1))
            .and_then(|g| g.items.last_mut());
        if let Some(item) = last {
            item.counted = false;
        }
    }

    pub(super) fn section_len(&self, section: usize) -> usize {
        let heading = HEADINGS.get(section).map_or(0, |h| units(h));
        let Some(s) = self.sections.get(section) else {
            return heading;
        };
        let body: usize = s.groups.iter().map(Group::len).sum();
        if body > 0 {
            heading + body
        } else if s.groups.iter().any(|g| g.omitted > 0) {
            heading + units(OMITTED)
        } else {
            heading + units(NONE)
        }
    }

    pub(super) fn total_len(&self) -> usize {
        let sections: usize = (0..self.sections.len()).map(|s| self.section_len(s)).sum();
        // A blank line between sections, no newline at the end.
        (sections + self.sections.len().saturating_sub(1)).saturating_sub(1)
    }

    pub(super) fn fit(mut self, max: usize) -> String {
        let mut steps = std::mem::take(&mut self.steps);
        sort_by(&mut steps, Step::cmp);
        let mut total = self.total_len();
        for step in &steps {
            if total <= max {
                break;
            }
            let before = self.section_len(step.section);
            let Some(g) = self
                .sections
                .get_mut(step.section)
                .and_then(|s| s.groups.get_mut(step.group))
            else {
                continue;
            };
            let Some(item) = g.items.get_mut(step.item) else {
                continue;
            };
            if step.to <= item.current || item.current >= item.versions.len() {
                continue;
            }
            let old_len = item.versions.get(item.current).map_or(0, |v| v.1);
            item.current = step.to;
            match item.versions.get(step.to) {
                Some(&(_, new_len)) => {
                    g.visible_len = g.visible_len - old_len + new_len;
                }
                None => {
                    g.visible_len -= old_len;
                    g.visible -= 1;
                    g.omitted += 1;
                    if item.counted {
                        g.omitted_counted += 1;
                    }
                }
            }
            total = total - before + self.section_len(step.section);
        }
        let out = self.render();
        debug_assert_eq!(units(&out), total, "length bookkeeping");
        if units(&out) <= max {
            out
        } else {
            // Even the headings and the must-keep content do not fit.
            let mut cut_out = String::new();
            let mut used = 0;
            for c in out.chars() {
                used += c.len_utf16();
                if used > max {
                    break;
                }
                cut_out.push(c);
            }
            cut_out
        }
    }

    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        for (i, section) in self.sections.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(HEADINGS.get(i).copied().unwrap_or(""));
            let mut any = false;
            for g in &section.groups {
                if g.visible == 0 {
                    continue;
                }
                any = true;
                out.push_str(&g.label);
                if g.omitted_counted > 0 {
                    out.push_str(&marker_line(g.indent, g.omitted_counted, g.noun));
                }
                for item in &g.items {
                    if let Some((text, _)) = item.versions.get(item.current) {
                        out.push_str(text);
                    }
                }
            }
            if !any {
                let omitted = section.groups.iter().any(|g| g.omitted > 0);
                out.push_str(if omitted { OMITTED } else { NONE });
            }
        }
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }
}

pub(super) fn bullet(indent: &str, text: &str, max: usize) -> String {
    format!("{indent}- {}\n", cut(text, max))
}
