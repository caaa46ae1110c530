//! `findCutPoint` and `prepareCompaction` on arbitrary sessions of message
//! facts (roles, estimates, usage, timestamps), against the reference cut
//! and the compactor's index (see `checks::cut`).
#![no_main]

use agent_compaction_core::tokens::estimate::MessageFacts;
use agent_compaction_core::message::role::Role;
use agent_compaction_fuzz::checks;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Tokens {
    Small(u8),
    Medium(u16),
    Huge(u32),
}

#[derive(Arbitrary, Debug)]
struct Message {
    role: u8,
    tokens: Tokens,
    /// Reported context size (assistant messages only).
    usage: Option<u32>,
    timestamp: i16,
}

#[derive(Arbitrary, Debug)]
enum Keep {
    Small(u8),
    Medium(u16),
    Large(u32),
    /// Anything, NaN and infinities included (the boundary validates it,
    /// the core must not panic).
    Any(f64),
}

#[derive(Arbitrary, Debug)]
struct Input {
    messages: Vec<Message>,
    start: u16,
    end: u16,
    keep: Keep,
}

fuzz_target!(|input: Input| {
    let facts: Vec<MessageFacts> = input
        .messages
        .iter()
        .map(|m| {
            let role = Role::from_code(m.role % 9).unwrap_or(Role::Other);
            let tokens = match m.tokens {
                Tokens::Small(t) => u64::from(t),
                Tokens::Medium(t) => u64::from(t),
                Tokens::Huge(t) => u64::from(t),
            };
            let usage = m.usage.filter(|_| role == Role::Assistant).map(f64::from);
            MessageFacts::new(role, tokens, usage, f64::from(m.timestamp))
        })
        .collect();
    let keep = match input.keep {
        Keep::Small(k) => f64::from(k),
        Keep::Medium(k) => f64::from(k),
        Keep::Large(k) => f64::from(k),
        Keep::Any(k) => k,
    };
    let len = facts.len() + 1;
    let (a, b) = (usize::from(input.start) % len, usize::from(input.end) % len);
    checks::cut(&facts, a.min(b), a.max(b), keep);
});
