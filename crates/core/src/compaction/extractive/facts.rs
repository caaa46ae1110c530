//! The facts gathered from the messages in one pass: the user's requests
//! and their replies, tool operations and their outcomes, constraints,
//! decisions and the last assistant text.

use super::phrases::{constraint_sentences, decision_sentences, error_text, is_substantive};
use super::text::one_line;
use super::{ExtractInput, ExtractRole};

pub(super) struct Request {
    pub(super) msg: usize,
    pub(super) text: String,
    /// The assistant's last message with text before the next request.
    pub(super) reply_msg: Option<usize>,
    pub(super) reply: Option<String>,
}

pub(super) struct ToolOp {
    pub(super) msg: usize,
    pub(super) tool: String,
    pub(super) arg: Option<String>,
    /// `None` while no result was seen.
    pub(super) failed: Option<bool>,
    pub(super) error: String,
}

pub(super) struct Facts {
    pub(super) requests: Vec<Request>,
    pub(super) ops: Vec<ToolOp>,
    pub(super) constraints: Vec<(usize, String)>,
    pub(super) decisions: Vec<(usize, String)>,
    /// The last assistant message with text: (index, text).
    pub(super) last_text: Option<(usize, String)>,
    /// Index of the last assistant message (with text or tool calls).
    pub(super) last_assistant: Option<usize>,
}

impl Facts {
    pub(super) fn gather(input: &ExtractInput) -> Facts {
        let mut facts = Facts {
            requests: Vec::new(),
            ops: Vec::new(),
            constraints: Vec::new(),
            decisions: Vec::new(),
            last_text: None,
            last_assistant: None,
        };
        let mut last_text = None;
        // Tool calls of the latest assistant message still waiting for
        // their results, as indices into `ops`.
        let mut pending: Vec<usize> = Vec::new();
        for (i, message) in input.messages.iter().enumerate() {
            match message.role {
                ExtractRole::User => {
                    let text = message.text.trim();
                    if text.is_empty() {
                        continue;
                    }
                    for c in constraint_sentences(text) {
                        facts.constraints.push((i, c));
                    }
                    facts.requests.push(Request {
                        msg: i,
                        text: one_line(text),
                        reply_msg: None,
                        reply: None,
                    });
                }
                ExtractRole::Assistant => {
                    let text = message.text.trim();
                    if !text.is_empty() {
                        last_text = Some(i);
                        if let Some(request) = facts.requests.last_mut() {
                            request.reply_msg = Some(i);
                        }
                        for d in decision_sentences(text) {
                            facts.decisions.push((i, d));
                        }
                    }
                    if !text.is_empty() || !message.tool_calls.is_empty() {
                        facts.last_assistant = Some(i);
                    }
                    pending.clear();
                    for (tool, arg) in &message.tool_calls {
                        pending.push(facts.ops.len());
                        let arg = arg.trim();
                        facts.ops.push(ToolOp {
                            msg: i,
                            tool: tool.clone(),
                            arg: (!arg.is_empty()).then(|| arg.to_string()),
                            failed: None,
                            error: String::new(),
                        });
                    }
                }
                ExtractRole::ToolResult => {
                    let name = message.tool_name.as_deref();
                    let slot = pending.iter().position(|&k| {
                        name.is_none_or(|n| facts.ops.get(k).is_some_and(|op| op.tool == n))
                    });
                    let error = if message.is_error {
                        error_text(&message.text)
                    } else {
                        String::new()
                    };
                    let paired = slot.map(|p| pending.remove(p));
                    match paired.and_then(|k| facts.ops.get_mut(k)) {
                        Some(op) => {
                            op.failed = Some(message.is_error);
                            op.error = error;
                        }
                        None => facts.ops.push(ToolOp {
                            msg: i,
                            tool: name.unwrap_or("tool").to_string(),
                            arg: None,
                            failed: Some(message.is_error),
                            error,
                        }),
                    }
                }
                ExtractRole::Other => {}
            }
        }
        let text_of = |i: usize| input.messages.get(i).map(|m| m.text.trim());
        for request in &mut facts.requests {
            request.reply = request.reply_msg.and_then(text_of).map(one_line);
        }
        facts.last_text = last_text.and_then(|i| Some((i, text_of(i)?.to_string())));
        facts
    }

    pub(super) fn last_substantive(&self) -> Option<&Request> {
        self.requests.iter().rev().find(|r| is_substantive(&r.text))
    }
}
