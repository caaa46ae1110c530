//! Token estimates (pi's chars/4 heuristic) and the usage an assistant
//! message reports, from the facts gathered about each message once.
//!
//! Lengths are JavaScript string lengths (UTF-16 code units). The facts are
//! gathered without interpretation (every length a message has, by block
//! type); which of them count for which role is decided here, as pi's
//! `estimateTokens` does.

use crate::message::pinned::is_pinned;
use crate::message::role::Role;
use crate::tokens::overflow::StopReason;

/// Characters per image in tool results and custom messages (pi's constant);
/// images in user messages count nothing (pi's quirk).
pub const IMAGE_CHARS: u64 = 4800;

/// The lengths in one message, gathered once (at the boundary, or from a
/// decoded session).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RawFacts {
    pub role: Option<Role>,
    /// `content.length` when `content` is a string.
    pub content_string: Option<u64>,
    /// Σ `text.length` of `text` blocks when `content` is an array.
    pub text: u64,
    /// Σ `thinking.length` of `thinking` blocks.
    pub thinking: u64,
    /// Σ `name.length + JSON.stringify(arguments).length` of `toolCall` blocks.
    pub tool_calls: u64,
    /// Number of `image` blocks.
    pub images: u64,
    /// `summary.length` (summaries).
    pub summary: u64,
    /// `tokensFreed` (a `toolOutputCleared` marker; see
    /// `compaction::clearing`).
    pub tokens_freed: u64,
    /// `command.length` and `output.length` (bash executions).
    pub command: u64,
    pub output: u64,
    pub stop_reason: Option<StopReason>,
    /// The `usage` object's numbers, when the message has a truthy `usage`.
    pub usage: Option<UsageNumbers>,
    pub timestamp: f64,
    /// Tool-call arguments were not measured: the estimate must be gathered
    /// again if it is needed.
    pub tool_calls_pending: bool,
    /// With `tool_calls_pending`: `tool_calls` counts, for the arguments, an
    /// upper bound of their JSON length found from sizes alone, so the
    /// estimate is an upper bound. Without it nothing is known of them.
    pub tool_calls_bounded: bool,
    /// With `tool_calls_bounded`: how much of `tool_calls` is that bound
    /// (the rest: the names). It bounds the JSON's UTF-8 bytes as well (six
    /// per code unit of a string, the most an escape or a character takes),
    /// so the calibrated bound counts it per byte.
    pub tool_call_arguments_bound: u64,
    /// `pinned === true` (see [`crate::message::pinned`]).
    pub pinned: bool,
    /// A `compactionSummary`'s `keptMessages`: how many messages followed
    /// it when it was inserted (see [`crate::tokens::context_tokens::Stale`]).
    pub kept_messages: Option<u64>,
}

/// pi-ai's `Usage` numbers as JavaScript numbers (a missing one is NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UsageNumbers {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total_tokens: f64,
}

/// pi's `calculateContextTokens(usage)`: `totalTokens` when it is truthy,
/// else the sum of the parts.
pub fn calculate_context_tokens(u: &UsageNumbers) -> f64 {
    if u.total_tokens != 0.0 && !u.total_tokens.is_nan() {
        u.total_tokens
    } else {
        u.input + u.output + u.cache_read + u.cache_write
    }
}

/// pi's `estimateTokens(message)`: `ceil(chars / 4)`.
pub fn estimate_tokens(f: &RawFacts) -> u64 {
    counted_chars(f).div_ceil(4)
}

/// The characters pi's estimate counts for a message (by role; images as
/// [`IMAGE_CHARS`] each where they count).
pub fn counted_chars(f: &RawFacts) -> u64 {
    let (text, images) = counted_parts(f);
    text.saturating_add(IMAGE_CHARS.saturating_mul(images))
}

/// What counts for a message, by role: the length of its counted texts
/// (summed; whatever unit `f` holds them in) and the images that count.
fn counted_parts(f: &RawFacts) -> (u64, u64) {
    match f.role {
        Some(Role::User) => (f.content_string.unwrap_or(f.text), 0),
        Some(Role::Assistant) => (f.text + f.thinking + f.tool_calls, 0),
        Some(Role::ToolResult | Role::Custom) => match f.content_string {
            Some(s) => (s, 0),
            None => (f.text, f.images),
        },
        Some(Role::BashExecution) => (f.command + f.output, 0),
        Some(Role::BranchSummary | Role::CompactionSummary) => (f.summary, 0),
        Some(Role::ToolOutputCleared | Role::Other) | None => (0, 0),
    }
}

/// The texts of one message, by field, as UTF-8 (what the calibrated
/// estimate reads; gathered only when it is needed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageTexts<'a> {
    pub role: Option<Role>,
    pub content_string: Option<&'a [u8]>,
    /// `text` blocks, `thinking` blocks, and `toolCall` blocks (name and
    /// `JSON.stringify(arguments)`), each field's texts in order.
    pub text: Vec<&'a [u8]>,
    pub thinking: Vec<&'a [u8]>,
    pub tool_calls: Vec<&'a [u8]>,
    pub images: u64,
    pub summary: &'a [u8],
    pub command: &'a [u8],
    pub output: &'a [u8],
}

/// The calibrated estimate of a message: the same fields as pi's count for
/// each role, classified by kind of text ([`crate::tokens::calibrated`]);
/// an image counts what pi's estimate gives it (`IMAGE_CHARS / 4`).
pub fn calibrated_tokens(m: &MessageTexts) -> u64 {
    use crate::tokens::calibrated::estimate_texts;
    let images = || IMAGE_CHARS.saturating_mul(m.images).div_ceil(4);
    let list = |v: &Vec<&'_ [u8]>| estimate_texts(v.iter().copied());
    match m.role {
        Some(Role::User) => match m.content_string {
            Some(s) => estimate_texts([s]),
            None => list(&m.text),
        },
        Some(Role::Assistant) => estimate_texts(
            m.text
                .iter()
                .chain(&m.thinking)
                .chain(&m.tool_calls)
                .copied(),
        ),
        Some(Role::ToolResult | Role::Custom) => match m.content_string {
            Some(s) => estimate_texts([s]),
            None => list(&m.text).saturating_add(images()),
        },
        Some(Role::BashExecution) => estimate_texts([m.command, m.output]),
        Some(Role::BranchSummary | Role::CompactionSummary) => estimate_texts([m.summary]),
        Some(Role::ToolOutputCleared | Role::Other) | None => 0,
    }
}

/// An upper bound of [`calibrated_tokens`] from the lengths alone (no text
/// read): every counted unit at the most any unit can cost, images at what
/// they cost.
pub fn calibrated_bound(f: &RawFacts) -> u64 {
    use crate::tokens::calibrated::{MAX_TOKENS_PER_BYTE, MAX_TOKENS_PER_UNIT};
    let (units, images) = counted_parts(f);
    // Bounded tool-call arguments (assistants only) are bounded in bytes.
    let bytes = match f.role {
        Some(Role::Assistant) if f.tool_calls_bounded => f.tool_call_arguments_bound.min(units),
        _ => 0,
    };
    bound_with_images(
        (units - bytes) as f64 * MAX_TOKENS_PER_UNIT + bytes as f64 * MAX_TOKENS_PER_BYTE,
        images,
    )
}

/// A tighter upper bound of [`calibrated_tokens`], from the UTF-8 byte
/// lengths of the texts (`bytes`: a [`RawFacts`] whose text fields hold
/// byte lengths, as the boundary finds them by encoding the texts without
/// classifying them): every counted byte at the most any byte can cost
/// ([`crate::tokens::calibrated::MAX_TOKENS_PER_BYTE`], about half the
/// length bound on ASCII text), images at what they cost.
pub fn calibrated_byte_bound(bytes: &RawFacts) -> u64 {
    use crate::tokens::calibrated::MAX_TOKENS_PER_BYTE;
    let (bytes, images) = counted_parts(bytes);
    bound_with_images(bytes as f64 * MAX_TOKENS_PER_BYTE, images)
}

/// `ceil(texts)` plus what `images` cost in [`calibrated_tokens`].
fn bound_with_images(texts: f64, images: u64) -> u64 {
    (texts.ceil() as u64).saturating_add(IMAGE_CHARS.saturating_mul(images).div_ceil(4))
}

/// The context size an assistant message reports, as pi reads it
/// (`getAssistantUsage` + `calculateContextTokens`): only assistant messages
/// that have usage and did not stop with `aborted` or `error`.
pub fn reported_usage(f: &RawFacts) -> Option<f64> {
    if f.role != Some(Role::Assistant) || is_failed_attempt(f) {
        return None;
    }
    f.usage.as_ref().map(calculate_context_tokens)
}

/// The usage the `Compactor`'s decisions take (threshold, overflow
/// prediction, the calibrated estimate's correction, silent overflow):
/// [`reported_usage`], unless it cannot be true. A reply always has a
/// context, so zero input tokens (`input + cacheRead + cacheWrite == 0`)
/// is a provider that reported no usage (pi-ai leaves zeros then), and the
/// message is estimated instead; so is a usage whose input tokens or
/// context size is below zero, and one whose context size is no finite
/// number (a field missing with no `totalTokens`: pi's sum is NaN, which
/// would leave the threshold never crossed). pi's own functions keep pi's
/// numbers.
pub fn compactor_usage(f: &RawFacts) -> Option<f64> {
    let u = f.usage.as_ref()?;
    if u.input + u.cache_read + u.cache_write <= 0.0 {
        return None;
    }
    reported_usage(f).filter(|&tokens| tokens > 0.0 && tokens.is_finite())
}

/// An assistant message that stopped with `error` or `aborted`: a failed
/// attempt, which the model's view leaves out.
pub fn is_failed_attempt(f: &RawFacts) -> bool {
    f.role == Some(Role::Assistant)
        && matches!(f.stop_reason, Some(StopReason::Aborted | StopReason::Error))
}

const HAS_USAGE: u8 = 1;
const BOUND_TIGHT: u8 = 2;
/// A summary that says how many messages it kept (in the usage slot).
const HAS_KEPT: u8 = 4;
/// [`MessageFacts::tokens_pending`].
const PENDING: u8 = 8;
/// [`MessageFacts::pinned`].
const PINNED: u8 = 16;
/// [`MessageFacts::written_share`]'s unit: the whole usage.
const SHARE_UNIT: f64 = u16::MAX as f64;

/// What the engine keeps about each message: small and fixed-size (24
/// bytes, checked by a test), so a 10,000-message session costs a quarter
/// of a megabyte.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageFacts {
    pub timestamp: f64,
    usage_tokens: f64,
    /// pi's estimate (saturating at `u32::MAX`, some 17 billion characters);
    /// while [`tokens_pending`](Self::tokens_pending), an upper bound of it
    /// (`u32::MAX` when none is known).
    pub tokens: u32,
    pub role: Role,
    /// [`HAS_USAGE`], [`BOUND_TIGHT`], [`HAS_KEPT`], [`PENDING`] and
    /// [`PINNED`] (one byte).
    flags: u8,
    /// With a usage: the share of it the model wrote (its output, reasoning
    /// included), in 65,535ths, so that what it read is known
    /// ([`prompt`](Self::prompt)) within a token or two in 100,000 from two
    /// bytes rather than eight. 0 when it wrote nothing, or when the usage
    /// does not say.
    written_share: u16,
}

impl MessageFacts {
    pub fn new(role: Role, tokens: u64, usage: Option<f64>, timestamp: f64) -> MessageFacts {
        MessageFacts {
            timestamp,
            usage_tokens: usage.unwrap_or(0.0),
            tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
            role,
            flags: if usage.is_some() { HAS_USAGE } else { 0 },
            written_share: 0,
        }
    }

    /// The estimate was not computed (an assistant message that reports
    /// usage, gathered lazily): fill it in before it is used.
    pub fn tokens_pending(&self) -> bool {
        self.flags & PENDING != 0
    }

    pub fn set_tokens_pending(&mut self, pending: bool) {
        self.set_flag(PENDING, pending);
    }

    /// The app marked the message `pinned: true`: it is sent to the model
    /// after every summary ([`crate::message::pinned`]). Read once, when
    /// the message is first gathered.
    pub fn pinned(&self) -> bool {
        self.flags & PINNED != 0
    }

    pub fn set_pinned(&mut self, pinned: bool) {
        self.set_flag(PINNED, pinned);
    }

    fn set_flag(&mut self, flag: u8, on: bool) {
        self.flags = if on {
            self.flags | flag
        } else {
            self.flags & !flag
        };
    }

    /// The facts of a `toolOutputCleared` marker: it counts no tokens of its
    /// own (it is never sent); what it freed is kept for the context tokens
    /// ([`tokens_freed`](Self::tokens_freed)).
    pub fn cleared(tokens_freed: u64, timestamp: f64) -> MessageFacts {
        let mut f = MessageFacts::new(Role::ToolOutputCleared, 0, None, timestamp);
        // The usage slot is free on a marker (it never reports usage).
        f.usage_tokens = tokens_freed as f64;
        f
    }

    /// What a `toolOutputCleared` marker freed (0 for any other message).
    pub fn tokens_freed(&self) -> u64 {
        if self.role == Role::ToolOutputCleared {
            self.usage_tokens as u64
        } else {
            0
        }
    }

    /// The facts of a `compactionSummary` that kept `kept` messages after
    /// it (`None`: it does not say).
    pub fn summary(tokens: u64, kept: Option<u64>, timestamp: f64) -> MessageFacts {
        MessageFacts::new(Role::CompactionSummary, tokens, None, timestamp).with_kept(kept)
    }

    /// A summary's `keptMessages`, in the usage slot (a summary reports no
    /// usage of the context).
    fn with_kept(mut self, kept: Option<u64>) -> MessageFacts {
        if let (Role::CompactionSummary, Some(k)) = (self.role, kept) {
            self.usage_tokens = k as f64;
            self.flags = (self.flags & !HAS_USAGE) | HAS_KEPT;
        }
        self
    }

    /// How many messages a `compactionSummary` kept after it when it was
    /// inserted, when it says (its `keptMessages`).
    pub fn kept_messages(&self) -> Option<usize> {
        (self.flags & HAS_KEPT != 0).then_some(self.usage_tokens as usize)
    }

    pub fn from_raw(raw: &RawFacts) -> MessageFacts {
        if raw.role == Some(Role::ToolOutputCleared) {
            return MessageFacts::cleared(raw.tokens_freed, raw.timestamp);
        }
        let mut f = MessageFacts::new(
            raw.role.unwrap_or(Role::Other),
            estimate_tokens(raw),
            reported_usage(raw),
            raw.timestamp,
        )
        .with_prompt(raw);
        f.set_pinned(is_pinned(f.role, raw.pinned));
        if raw.tool_calls_pending {
            f.set_tokens_pending(true);
            if !raw.tool_calls_bounded {
                f.tokens = u32::MAX;
            }
        }
        f.with_kept(raw.kept_messages)
    }

    /// The facts the `Compactor` keeps with pi's estimate: [`from_raw`]
    /// (Self::from_raw) with a usage that cannot be true left out
    /// ([`compactor_usage`]).
    pub fn compactor_pi(raw: &RawFacts) -> MessageFacts {
        let mut f = MessageFacts::from_raw(raw);
        if f.role != Role::ToolOutputCleared
            && f.role != Role::CompactionSummary
            && compactor_usage(raw).is_none()
        {
            f.flags &= !HAS_USAGE;
            f.usage_tokens = 0.0;
            f.written_share = 0;
        }
        f
    }

    /// The facts the `Compactor` keeps with the calibrated estimate: the
    /// estimate is left pending (measured only if a decision needs it), its
    /// bound found from the lengths. A failed attempt (an assistant message
    /// that stopped with `error` or `aborted`) counts nothing: the model is
    /// never sent it (`conversation::view`). pi's estimate counts it, and
    /// [`compactor_pi`](Self::compactor_pi) keeps pi's numbers.
    pub fn calibrated_pending(raw: &RawFacts) -> MessageFacts {
        if raw.role == Some(Role::ToolOutputCleared) {
            return MessageFacts::cleared(raw.tokens_freed, raw.timestamp);
        }
        if is_failed_attempt(raw) {
            let mut f = MessageFacts::new(Role::Assistant, 0, None, raw.timestamp);
            f.set_pinned(is_pinned(f.role, raw.pinned));
            return f;
        }
        let mut f = MessageFacts::new(
            raw.role.unwrap_or(Role::Other),
            calibrated_bound(raw),
            compactor_usage(raw),
            raw.timestamp,
        )
        .with_prompt(raw);
        f.set_tokens_pending(!matches!(f.role, Role::Other));
        f.set_pinned(is_pinned(f.role, raw.pinned));
        if raw.tool_calls_pending && !raw.tool_calls_bounded {
            f.tokens = u32::MAX;
        }
        f.with_kept(raw.kept_messages)
    }

    /// The context size this message reported, when it counts (pi's rules).
    pub fn usage(&self) -> Option<f64> {
        (self.flags & HAS_USAGE != 0).then_some(self.usage_tokens)
    }

    /// With a [`usage`](Self::usage): what the model read for this reply
    /// (`input + cacheRead + cacheWrite`), without what it wrote. A
    /// reasoning model's output counts reasoning that is never sent again,
    /// so what the model reads is what grows from one reply to the next.
    /// Facts made with [`new`](Self::new) read their whole usage.
    pub fn prompt(&self) -> Option<f64> {
        let usage = self.usage()?;
        Some(match self.written_share {
            0 => usage,
            share => usage * (1.0 - f64::from(share) / SHARE_UNIT),
        })
    }

    /// What the model read for the usage `raw` reports (`input + cacheRead +
    /// cacheWrite`), kept with the usage as the share it wrote.
    fn with_prompt(mut self, raw: &RawFacts) -> MessageFacts {
        if let (Some(total), Some(u)) = (self.usage(), raw.usage.as_ref()) {
            let read = u.input + u.cache_read + u.cache_write;
            let written = (total - read) / total;
            if written.is_finite() && written > 0.0 {
                self.written_share = (written.min(1.0) * SHARE_UNIT).round() as u16;
            }
        }
        self
    }

    /// While `tokens_pending`: `tokens` is the bound the texts' UTF-8
    /// lengths give ([`calibrated_byte_bound`]), as tight as a bound gets
    /// without classifying them.
    pub fn bound_tight(&self) -> bool {
        self.flags & BOUND_TIGHT != 0
    }

    /// A pending estimate's bound tightened to `bound` (kept if it was
    /// lower already: both are bounds) and marked tight. Returns the bound
    /// now in force.
    pub fn tighten(&mut self, bound: u64) -> u32 {
        let bound = u32::try_from(bound).unwrap_or(u32::MAX);
        self.tokens = self.tokens.min(bound);
        self.flags |= BOUND_TIGHT;
        self.tokens
    }

    /// The usage this message reported counts no more (an edit took away
    /// the context it was reported for): the message is estimated, as one
    /// that reports none.
    pub fn forget_usage(&mut self) {
        if self.usage().is_some() {
            self.flags &= !HAS_USAGE;
            self.usage_tokens = 0.0;
            self.written_share = 0;
        }
    }

    /// Completes a lazily gathered message with its estimate.
    pub fn set_tokens(&mut self, tokens: u64) {
        self.tokens = u32::try_from(tokens).unwrap_or(u32::MAX);
        self.set_tokens_pending(false);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_usage_of_zero_input_is_no_usage_for_the_compactor_only() {
        let zeros = UsageNumbers {
            input: 0.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total_tokens: 0.0,
        };
        let mut raw = RawFacts {
            role: Some(Role::Assistant),
            usage: Some(zeros),
            content_string: Some(400),
            ..RawFacts::default()
        };
        // pi's numbers: a usage of 0.
        assert_eq!(reported_usage(&raw), Some(0.0));
        assert_eq!(MessageFacts::from_raw(&raw).usage(), Some(0.0));
        // The Compactor's: none, the message estimated.
        assert_eq!(compactor_usage(&raw), None);
        assert_eq!(MessageFacts::compactor_pi(&raw).usage(), None);
        assert_eq!(MessageFacts::calibrated_pending(&raw).usage(), None);
        // Output only (a provider counting nothing sent) is no usage either.
        raw.usage = Some(UsageNumbers {
            output: 50.0,
            total_tokens: 50.0,
            ..zeros
        });
        assert_eq!(compactor_usage(&raw), None);
        // Any input tokens: the usage stands.
        for u in [
            UsageNumbers {
                input: 1.0,
                ..zeros
            },
            UsageNumbers {
                cache_read: 7.0,
                ..zeros
            },
            UsageNumbers {
                cache_write: 7.0,
                total_tokens: 9.0,
                ..zeros
            },
        ] {
            raw.usage = Some(u);
            assert_eq!(compactor_usage(&raw), reported_usage(&raw));
            assert!(MessageFacts::calibrated_pending(&raw).usage().is_some());
        }
    }

    #[test]
    fn a_negative_or_non_finite_usage_is_no_usage_for_the_compactor_only() {
        let usage = |input: f64, total_tokens: f64| UsageNumbers {
            input,
            output: 10.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total_tokens,
        };
        let mut raw = RawFacts {
            role: Some(Role::Assistant),
            content_string: Some(400),
            ..RawFacts::default()
        };
        // Negative input tokens (a proxy's cached count above its input), or
        // a negative total: no context is that size.
        for (u, pi) in [
            (usage(-5_000.0, -4_990.0), -4_990.0),
            (usage(5_000.0, -1.0), -1.0),
        ] {
            raw.usage = Some(u);
            assert_eq!(reported_usage(&raw), Some(pi));
            assert_eq!(compactor_usage(&raw), None);
            assert_eq!(MessageFacts::compactor_pi(&raw).usage(), None);
            assert_eq!(MessageFacts::calibrated_pending(&raw).usage(), None);
        }
        // Uncached input below zero, the cache read making up for it: the
        // usage stands.
        raw.usage = Some(UsageNumbers {
            cache_read: 6_000.0,
            ..usage(-100.0, 5_910.0)
        });
        assert_eq!(compactor_usage(&raw), Some(5_910.0));
        // A context size that is no number (a field missing, no total):
        // pi's NaN, none for the Compactor; so is an infinite one.
        for (u, pi_nan) in [
            (usage(f64::NAN, f64::NAN), true),
            (usage(f64::INFINITY, 0.0), false),
        ] {
            raw.usage = Some(u);
            assert_eq!(reported_usage(&raw).is_some_and(f64::is_nan), pi_nan);
            assert_eq!(compactor_usage(&raw), None);
            assert_eq!(MessageFacts::compactor_pi(&raw).usage(), None);
        }
        // A total given while an input field is missing: pi takes the
        // total, and so does the Compactor.
        raw.usage = Some(usage(f64::NAN, 5_000.0));
        assert_eq!(compactor_usage(&raw), Some(5_000.0));
    }

    fn facts(role: Role) -> RawFacts {
        RawFacts {
            role: Some(role),
            ..RawFacts::default()
        }
    }

    #[test]
    fn user_counts_text_only_and_never_images() {
        let f = RawFacts {
            text: 9,
            images: 3,
            thinking: 100,
            ..facts(Role::User)
        };
        assert_eq!(estimate_tokens(&f), 3);
        let s = RawFacts {
            content_string: Some(8),
            ..facts(Role::User)
        };
        assert_eq!(estimate_tokens(&s), 2);
    }

    #[test]
    fn tool_results_and_custom_count_images() {
        for role in [Role::ToolResult, Role::Custom] {
            let f = RawFacts {
                text: 1,
                images: 2,
                ..facts(role)
            };
            assert_eq!(estimate_tokens(&f), (1 + 9600u64).div_ceil(4));
            let s = RawFacts {
                content_string: Some(5),
                images: 2,
                ..facts(role)
            };
            assert_eq!(estimate_tokens(&s), 2);
        }
    }

    #[test]
    fn a_lazily_gathered_estimate_is_an_upper_bound_or_unknown() {
        let raw = RawFacts {
            text: 3,
            tool_calls: 21,
            tool_calls_pending: true,
            tool_calls_bounded: true,
            ..facts(Role::Assistant)
        };
        let bounded = MessageFacts::from_raw(&raw);
        assert!(bounded.tokens_pending());
        assert_eq!(bounded.tokens, 6);
        let unbounded = MessageFacts::from_raw(&RawFacts {
            tool_calls_bounded: false,
            ..raw
        });
        assert!(unbounded.tokens_pending());
        assert_eq!(unbounded.tokens, u32::MAX);
        let mut measured = unbounded;
        measured.set_tokens(4);
        assert_eq!((measured.tokens, measured.tokens_pending()), (4, false));
    }

    #[test]
    fn assistant_counts_text_thinking_and_tool_calls() {
        let f = RawFacts {
            text: 3,
            thinking: 4,
            tool_calls: 6,
            images: 10,
            content_string: Some(1000),
            ..facts(Role::Assistant)
        };
        assert_eq!(estimate_tokens(&f), 4);
    }

    #[test]
    fn bash_and_summaries_and_unknown_roles() {
        let b = RawFacts {
            command: 2,
            output: 7,
            ..facts(Role::BashExecution)
        };
        assert_eq!(estimate_tokens(&b), 3);
        for role in [Role::CompactionSummary, Role::BranchSummary] {
            let s = RawFacts {
                summary: 4001,
                ..facts(role)
            };
            assert_eq!(estimate_tokens(&s), 1001);
        }
        let o = RawFacts {
            text: 100,
            ..facts(Role::Other)
        };
        assert_eq!(estimate_tokens(&o), 0);
        assert_eq!(estimate_tokens(&facts(Role::User)), 0);
    }

    #[test]
    fn calibrated_counts_the_fields_pi_counts() {
        let texts = |role| MessageTexts {
            role: Some(role),
            text: vec![&b"hello world"[..]],
            thinking: vec![&b"I think so"[..]],
            tool_calls: vec![&b"read{\"path\":\"a.ts\"}"[..]],
            images: 1,
            summary: b"a summary of it all",
            command: b"ls -la",
            output: b"total 0",
            content_string: None,
        };
        let user = calibrated_tokens(&texts(Role::User));
        assert_eq!(user, 3); // "hello world": two pieces; images never count
        let assistant = calibrated_tokens(&texts(Role::Assistant));
        assert!(assistant > user + 4, "{assistant}");
        assert_eq!(calibrated_tokens(&texts(Role::ToolResult)), 3 + 1200);
        let s = MessageTexts {
            content_string: Some("你好".as_bytes()),
            ..texts(Role::Custom)
        };
        assert_eq!(calibrated_tokens(&s), 2);
        assert_eq!(calibrated_tokens(&texts(Role::CompactionSummary)), 6); // 5 × 1.005, rounded up
        assert!(calibrated_tokens(&texts(Role::BashExecution)) >= 4);
        assert_eq!(calibrated_tokens(&texts(Role::Other)), 0);
        assert_eq!(calibrated_tokens(&MessageTexts::default()), 0);
    }

    #[test]
    fn calibrated_facts_are_pending_under_their_bound() {
        let raw = RawFacts {
            text: 10,
            ..facts(Role::User)
        };
        let f = MessageFacts::calibrated_pending(&raw);
        assert!(f.tokens_pending());
        assert_eq!(f.tokens, 21);
        let text = MessageTexts {
            role: Some(Role::User),
            text: vec!["🇫🇷🇫🇷🇫🇷".as_bytes()],
            ..MessageTexts::default()
        };
        assert!(
            calibrated_tokens(&text)
                <= u64::from(
                    MessageFacts::calibrated_pending(&RawFacts { text: 12, ..raw }).tokens
                )
        );
        let unbounded = RawFacts {
            tool_calls_pending: true,
            ..facts(Role::Assistant)
        };
        assert_eq!(
            MessageFacts::calibrated_pending(&unbounded).tokens,
            u32::MAX
        );
        assert!(!MessageFacts::calibrated_pending(&facts(Role::Other)).tokens_pending());
    }

    /// The facts the boundary gathers of `m`'s texts for the byte bound:
    /// every length a byte length.
    fn byte_lengths(m: &MessageTexts) -> RawFacts {
        let sum = |v: &Vec<&[u8]>| v.iter().map(|t| t.len() as u64).sum();
        RawFacts {
            role: m.role,
            content_string: m.content_string.map(|s| s.len() as u64),
            text: sum(&m.text),
            thinking: sum(&m.thinking),
            tool_calls: sum(&m.tool_calls),
            images: m.images,
            summary: m.summary.len() as u64,
            command: m.command.len() as u64,
            output: m.output.len() as u64,
            ..RawFacts::default()
        }
    }

    #[test]
    fn the_byte_bound_is_tighter_than_the_length_bound_on_ascii() {
        let text = "fn main() {\n    println!(\"hello\");\n}\n".repeat(50);
        let m = MessageTexts {
            role: Some(Role::ToolResult),
            text: vec![text.as_bytes()],
            images: 2,
            ..MessageTexts::default()
        };
        let exact = calibrated_tokens(&m);
        let bytes = calibrated_byte_bound(&byte_lengths(&m));
        let units = calibrated_bound(&RawFacts {
            text: text.len() as u64,
            ..byte_lengths(&m)
        });
        assert!(exact <= bytes && bytes < units, "{exact} {bytes} {units}");
        // Images at what they cost, in both.
        assert_eq!(bytes, (text.len() as f64 * 1.115).ceil() as u64 + 2400);
        assert_eq!(units, (text.len() as f64 * 2.1).ceil() as u64 + 2400);
    }

    #[test]
    fn what_the_model_read_is_kept_within_a_token_or_two_in_100_000() {
        let raw = |input: f64, output: f64| RawFacts {
            usage: Some(UsageNumbers {
                input,
                output,
                cache_read: 0.0,
                cache_write: 0.0,
                total_tokens: input + output,
            }),
            ..facts(Role::Assistant)
        };
        for (input, output) in [
            (100_000.0, 0.0),
            (3_600.0, 20_010.0),
            (199_000.0, 64_000.0),
            (1.0, 1e6),
        ] {
            let f = MessageFacts::from_raw(&raw(input, output));
            assert_eq!(f.usage(), Some(input + output), "the usage itself is exact");
            let read = f.prompt().unwrap();
            assert!(
                (read - input).abs() <= (input + output) / 50_000.0,
                "{input} {output}: {read}"
            );
        }
        // Nothing written: exact.
        assert_eq!(
            MessageFacts::from_raw(&raw(123_457.0, 0.0)).prompt(),
            Some(123_457.0)
        );
        // A total below what was read (a provider's own arithmetic): all read.
        let mut odd = raw(5_000.0, 10.0);
        odd.usage.as_mut().unwrap().total_tokens = 4_000.0;
        assert_eq!(MessageFacts::from_raw(&odd).prompt(), Some(4_000.0));
    }

    #[test]
    fn facts_stay_24_bytes_and_a_tightened_bound_only_goes_down() {
        assert_eq!(std::mem::size_of::<MessageFacts>(), 24);
        let mut f = MessageFacts::new(Role::Assistant, 500, Some(10.0), 1.0);
        f.set_tokens_pending(true);
        assert!(!f.bound_tight());
        assert_eq!(f.tighten(900), 500);
        assert!(f.bound_tight());
        assert_eq!(f.tighten(300), 300);
        assert_eq!(f.usage(), Some(10.0));
        assert_eq!(MessageFacts::new(Role::User, 1, None, 1.0).usage(), None);
    }

    proptest::proptest! {
        /// Both bounds hold for any message of any role: its texts any
        /// Unicode, lengths in UTF-16 units for the one, UTF-8 bytes for the
        /// other.
        #[test]
        fn bounds_never_fall_below_the_calibrated_estimate(
            role in 0u8..9,
            texts in proptest::collection::vec("(\\PC|[\\n\\r\\t]|aA|1\u{20E3}){0,40}", 9),
            images in 0u64..3,
            string_content in proptest::prelude::any::<bool>(),
        ) {
            let role = [Role::User, Role::Assistant, Role::ToolResult, Role::BashExecution, Role::Custom,
                Role::BranchSummary, Role::CompactionSummary, Role::ToolOutputCleared, Role::Other][role as usize];
            let t: Vec<&[u8]> = texts.iter().map(|s| s.as_bytes()).collect();
            let m = MessageTexts {
                role: Some(role),
                content_string: string_content.then_some(t[0]),
                text: vec![t[1], t[2]],
                thinking: vec![t[3]],
                tool_calls: vec![t[4], t[5]],
                images,
                summary: t[6],
                command: t[7],
                output: t[8],
            };
            let exact = calibrated_tokens(&m);
            let bytes = byte_lengths(&m);
            proptest::prop_assert!(exact <= calibrated_byte_bound(&bytes));
            let units = |i: usize| texts[i].encode_utf16().count() as u64;
            let lengths = RawFacts {
                content_string: string_content.then(|| units(0)),
                text: units(1) + units(2),
                thinking: units(3),
                tool_calls: units(4) + units(5),
                summary: units(6),
                command: units(7),
                output: units(8),
                ..bytes
            };
            proptest::prop_assert!(exact <= calibrated_bound(&lengths));
        }
    }

    proptest::proptest! {
        /// Bounded tool-call arguments count per byte of their bound (which
        /// bounds their JSON's UTF-8 length), the names per code unit: the
        /// bound holds however tight the arguments' bound is.
        #[test]
        fn bounded_arguments_count_per_byte(
            name in "\\PC{0,12}",
            json in "(\\PC|[\\n\"\\\\]|aA|1\u{20E3}){0,60}",
            text in "\\PC{0,20}",
            slack in 0u64..50,
        ) {
            let call = format!("{name}{json}");
            let m = MessageTexts {
                role: Some(Role::Assistant),
                text: vec![text.as_bytes()],
                tool_calls: vec![call.as_bytes()],
                ..MessageTexts::default()
            };
            let args = json.len() as u64 + slack;
            let units = |s: &str| s.encode_utf16().count() as u64;
            let raw = RawFacts {
                role: Some(Role::Assistant),
                text: units(&text),
                tool_calls: units(&name) + args,
                tool_calls_pending: true,
                tool_calls_bounded: true,
                tool_call_arguments_bound: args,
                ..RawFacts::default()
            };
            let bound = calibrated_bound(&raw);
            proptest::prop_assert!(calibrated_tokens(&m) <= bound);
            // Tighter than counting the arguments' bound per code unit.
            let per_unit = calibrated_bound(&RawFacts { tool_calls_bounded: false, ..raw });
            proptest::prop_assert!(bound <= per_unit);
        }
    }

    fn usage(total: f64) -> UsageNumbers {
        UsageNumbers {
            input: 10.0,
            output: 5.0,
            cache_read: 100.0,
            cache_write: 1.0,
            total_tokens: total,
        }
    }

    #[test]
    fn context_tokens_prefer_a_truthy_total() {
        assert_eq!(calculate_context_tokens(&usage(500.0)), 500.0);
        assert_eq!(calculate_context_tokens(&usage(0.0)), 116.0);
        assert_eq!(calculate_context_tokens(&usage(f64::NAN)), 116.0);
        let missing = UsageNumbers {
            cache_write: f64::NAN,
            ..usage(0.0)
        };
        assert!(calculate_context_tokens(&missing).is_nan());
    }

    #[test]
    fn usage_counts_only_for_assistants_that_did_not_fail() {
        let ok = RawFacts {
            usage: Some(usage(42.0)),
            stop_reason: Some(StopReason::Stop),
            ..facts(Role::Assistant)
        };
        assert_eq!(reported_usage(&ok), Some(42.0));
        for stop in [StopReason::Aborted, StopReason::Error] {
            let failed = RawFacts {
                stop_reason: Some(stop),
                ..ok
            };
            assert_eq!(reported_usage(&failed), None);
        }
        let none = RawFacts { usage: None, ..ok };
        assert_eq!(reported_usage(&none), None);
        let user = RawFacts {
            role: Some(Role::User),
            ..ok
        };
        assert_eq!(reported_usage(&user), None);
    }

    #[test]
    fn a_failed_attempt_counts_nothing_with_the_calibrated_estimate_only() {
        use crate::tokens::context_index::ContextIndex;
        let text = |role| RawFacts {
            content_string: Some(40),
            ..facts(role)
        };
        for stop in [StopReason::Aborted, StopReason::Error] {
            let failed = RawFacts {
                text: 40_000,
                usage: Some(usage(90_000.0)),
                stop_reason: Some(stop),
                pinned: true,
                ..facts(Role::Assistant)
            };
            let messages = [text(Role::User), failed, text(Role::User)];
            // The Compactor's calibrated books: the failed attempt is never
            // sent, so it costs nothing and is never read.
            let mut calibrated = ContextIndex::self_correcting();
            for raw in &messages {
                calibrated.push_deferred(MessageFacts::calibrated_pending(raw));
            }
            let f = calibrated.facts()[1];
            assert_eq!((f.tokens, f.tokens_pending(), f.usage()), (0, false, None));
            assert!(f.pinned(), "still pinned: it is kept after a summary");
            let c = calibrated.context_tokens_exact(|i| {
                assert_ne!(i, 1, "the failed attempt is read");
                Ok::<u64, ()>(10)
            });
            assert_eq!(c.unwrap().tokens, 20.0);
            // pi's numbers count it, as pi's estimateContextTokens does.
            let mut pi = ContextIndex::default();
            for raw in &messages {
                pi.push(MessageFacts::compactor_pi(raw));
            }
            assert_eq!(pi.context_tokens().tokens, 10_000.0 + 20.0);
        }
    }
}
