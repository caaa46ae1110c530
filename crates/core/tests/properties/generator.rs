//! Random but valid flat message arrays: the Rust twin of
//! `tests/conformance/generator.mjs` (same shapes and proportions, its own
//! PRNG), as `core::json` values.
//!
//! Everything is a pure function of the seed and the options, so a failing
//! case is reproduced from the numbers proptest prints.

use agent_compaction_core::js::json::{Json, JsonObject};
use agent_compaction_core::js::string::JsStr;

// ---------------------------------------------------------------------------
// PRNG: splitmix64.
// ---------------------------------------------------------------------------

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15);
        rng.next_u64();
        rng
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Integer in `[lo, hi]`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.next() < p
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// One of the keys of `(key, weight)` pairs.
    pub fn weighted<T: Copy>(&mut self, table: &[(T, u32)]) -> T {
        let total: u32 = table.iter().map(|&(_, w)| w).sum();
        let mut r = self.int(0, i64::from(total) - 1) as u32;
        for &(key, w) in table {
            if r < w {
                return key;
            }
            r -= w;
        }
        table[table.len() - 1].0
    }

    /// Roughly log-uniform integer in `[lo, hi]` (`lo >= 1`).
    pub fn log_int(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
        ((l + self.next() * (h - l)).exp().floor() as u64).clamp(lo, hi)
    }
}

// ---------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------

pub fn js(s: &str) -> JsStr {
    JsStr::from(s)
}

pub fn string(s: &str) -> Json {
    Json::String(js(s))
}

pub fn num(x: impl Into<f64>) -> Json {
    Json::Number(x.into())
}

/// An object with the fields in order; `None` values are left out (as
/// `undefined` properties vanish in JSON).
pub fn object(fields: Vec<(&str, Option<Json>)>) -> Json {
    let mut o = JsonObject::new();
    for (k, v) in fields {
        if let Some(v) = v {
            o.insert(js(k), v);
        }
    }
    Json::Object(o)
}

fn set(message: &mut Json, key: &str, value: Json) {
    if let Json::Object(o) = message {
        o.insert(js(key), value);
    }
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

const ASCII_WORDS: &[&str] = &[
    "the",
    "a",
    "an",
    "of",
    "to",
    "in",
    "is",
    "it",
    "that",
    "this",
    "for",
    "on",
    "with",
    "as",
    "function",
    "const",
    "let",
    "return",
    "if",
    "else",
    "match",
    "impl",
    "struct",
    "pub",
    "fn",
    "file",
    "path",
    "error",
    "warning",
    "test",
    "value",
    "result",
    "src",
    "lib",
    "cargo",
    "npm",
    "TODO",
    "FIXME",
    "OK",
    "read",
    "write",
    "edit",
    "bash",
    "grep",
    "git",
    "diff",
    "0",
    "42",
    "3.14",
    "-1",
    "1e21",
    "null",
    "undefined",
    "true",
    "NaN",
    "{}",
    "[]",
    "=>",
    "===",
    "&&",
    "?",
];

/// Tokens outside ASCII, lone surrogates and control characters included.
const UNICODE_TOKENS: &[&[u16]] = &[
    &[0xE9],
    &[0xDF],
    &[0x6E, 0x61, 0xEF, 0x76, 0x65],
    &[0x3A9],
    &[0x2248],
    &[0x20AC],
    &[0x2014],
    &[0x2026],
    &[0x201C, 0x71, 0x201D],
    &[0x4E2D, 0x6587],
    &[0x65E5, 0x672C, 0x8A9E],
    &[0xD55C, 0xAD6D, 0xC5B4],
    &[0xFF46, 0xFF55, 0xFF4C],
    &[0xD83D, 0xDE00],
    &[0xD83D, 0xDC4D, 0xD83C, 0xDFFD],
    &[0xD83E, 0xDDD1, 0x200D, 0xD83D, 0xDCBB],
    &[0xD83C, 0xDDEF, 0xD83C, 0xDDF5],
    &[0xD841, 0xDF0E],
    &[0x65, 0x301],
    &[0x645, 0x631, 0x62D, 0x628, 0x627],
    &[0x41F, 0x440, 0x438],
    &[0xA0],
    &[0x2028],
    &[0x2029],
    &[0x200B],
    &[0xFEFF],
    &[0xFFFF],
    &[0xFFFD],
    &[0x0],
    &[0x1],
    &[0x1F],
    &[0x7F],
    &[0x80],
    &[0x8],
    &[0xC],
    &[0xB],
    &[0xD800],
    &[0xDFFF],
    &[0xDBFF],
    &[0xDC00],
    &[0xDBFF, 0xDFFF],
    &[0xD83D],
    &[0x17F],
    &[0x212A],
    &[0x130],
    &[0x131],
    &[0xFB00],
];

const PUNCT: &[&str] = &[
    " ", " ", " ", " ", " ", "\n", "\n\n", "\t", ", ", ". ", "; ", ": ", "\r\n", "\"", "'", "\\",
    "/", "`", "<", ">", "&", "#", "$", "%", "{", "}", "[", "]",
];

/// Text for one session: a flavour (how much of it is not ASCII) and a
/// pool long texts are sliced from.
struct Text {
    unicode_share: f64,
    pool: Vec<u16>,
}

impl Text {
    fn new(rng: &mut Rng) -> Text {
        let mut t = Text {
            unicode_share: rng.pick(&[0.0, 0.02, 0.05, 0.1, 0.3]),
            pool: Vec::new(),
        };
        let len = 6000 + rng.int(0, 6000) as usize;
        t.pool = t.short_units(rng, len);
        t
    }

    fn token(&self, rng: &mut Rng, out: &mut Vec<u16>) {
        if rng.chance(self.unicode_share) {
            out.extend_from_slice(rng.pick(UNICODE_TOKENS));
        } else {
            out.extend(rng.pick(ASCII_WORDS).encode_utf16());
        }
    }

    fn short_units(&self, rng: &mut Rng, len: usize) -> Vec<u16> {
        let mut s = Vec::with_capacity(len + 16);
        while s.len() < len {
            self.token(rng, &mut s);
            s.extend(rng.pick(PUNCT).encode_utf16());
        }
        // Cutting may split a surrogate pair: a lone surrogate, as real
        // truncated output has.
        if rng.chance(0.8) {
            s.truncate(len);
        }
        s
    }

    fn short(&self, rng: &mut Rng, len: usize) -> JsStr {
        JsStr::from_units(self.short_units(rng, len))
    }

    fn text(&self, rng: &mut Rng, len: usize) -> JsStr {
        if len <= 96 {
            return self.short(rng, len);
        }
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let off = rng.below(self.pool.len());
            let take = (len - out.len())
                .min(self.pool.len() - off)
                .min(rng.int(1, 4000) as usize);
            out.extend_from_slice(&self.pool[off..off + take]);
        }
        JsStr::from_units(out)
    }
}

// ---------------------------------------------------------------------------
// JSON values for tool-call arguments and details
// ---------------------------------------------------------------------------

/// Finite numbers with awkward printed forms (JSON has no others).
const NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    7.0,
    42.0,
    255.0,
    65536.0,
    0.1,
    0.30000000000000004,
    0.5,
    -2.5,
    1.0 / 3.0,
    std::f64::consts::PI,
    12345.678,
    1e21,
    1e20,
    123456789012345680000.0,
    1e22,
    1e-6,
    1e-7,
    1.234e-7,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    f64::MAX,
    9007199254740992.0,
    9007199254740994.0,
    -9007199254740992.0,
    2147483648.0,
    4294967295.0,
    1e100,
    -1e-100,
    123e-20,
];

const KEYS: &[&str] = &[
    "path",
    "content",
    "oldText",
    "newText",
    "command",
    "timeout",
    "offset",
    "limit",
    "pattern",
    "0",
    "1",
    "2",
    "10",
    "01",
    "-1",
    "1.5",
    "-0",
    "4294967294",
    "4294967295",
    "9007199254740993",
    "",
    " ",
    "a",
    "b",
    "z",
    "A",
    "_",
    "$",
    "key with spaces",
    "émoji😀",
    "中文",
    "\u{2028}",
    "constructor",
    "toString",
    "hasOwnProperty",
    "length",
    "__proto__",
];

fn number(rng: &mut Rng) -> Json {
    num(match rng.int(0, 4) {
        0 | 1 => rng.pick(NUMBERS),
        2 => rng.int(-1_000_000, 1_000_000) as f64,
        3 => (rng.next() - 0.5) * 10f64.powi(rng.int(-30, 30) as i32),
        _ => rng.next(),
    })
}

fn json_string(rng: &mut Rng, t: &Text) -> Json {
    if rng.chance(0.7) {
        let len = rng.int(0, 40) as usize;
        Json::String(t.short(rng, len))
    } else {
        let len = rng.log_int(1, 3000) as usize;
        Json::String(t.text(rng, len))
    }
}

fn key(rng: &mut Rng, t: &Text) -> JsStr {
    if rng.chance(0.85) {
        js(rng.pick(KEYS))
    } else {
        let len = rng.int(0, 12) as usize;
        t.short(rng, len)
    }
}

fn json_object(rng: &mut Rng, t: &Text, depth: usize) -> Json {
    let mut o = JsonObject::new();
    for _ in 0..rng.int(0, 5) {
        let k = key(rng, t);
        let v = json_value(rng, t, depth + 1);
        o.insert(k, v);
    }
    Json::Object(o)
}

fn json_value(rng: &mut Rng, t: &Text, depth: usize) -> Json {
    let kind = if depth >= 3 {
        rng.weighted(&[('s', 5), ('n', 4), ('b', 1), ('z', 1)])
    } else {
        rng.weighted(&[('s', 5), ('n', 4), ('b', 1), ('z', 1), ('a', 2), ('o', 2)])
    };
    match kind {
        's' => json_string(rng, t),
        'n' => number(rng),
        'b' => Json::Bool(rng.chance(0.5)),
        'z' => Json::Null,
        'a' => Json::Array(
            (0..rng.int(0, 5))
                .map(|_| json_value(rng, t, depth + 1))
                .collect(),
        ),
        _ => json_object(rng, t, depth),
    }
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

const PATHS: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "README.md",
    "package.json",
    "/tmp/x.txt",
    "/Users/me/project/src/index.ts",
    "docs/日本語.md",
    "src/ü.rs",
    "😀.txt",
    "Zeta.md",
    "alpha.md",
    "~/home.txt",
    "a b/c d.txt",
    "src/e\u{301}.rs",
    "10.txt",
    "9.txt",
    "B.md",
    "b.md",
    "./rel/../path.txt", // path-check: data
];

const OTHER_TOOLS: &[&str] = &[
    "grep",
    "find",
    "ls",
    "Read",
    "WRITE",
    "web_fetch",
    "todo",
    "mcp__server__tool",
    "",
];

const ERROR_MESSAGES: &[&str] = &[
    "prompt is too long: 213462 tokens > 200000 maximum",
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    "context_length_exceeded",
    "400 status code (no body)",
    "429 Too Many Requests",
    "Connection error.",
    "Request was aborted",
    "500 Internal Server Error",
    "overloaded_error: Overloaded",
    "",
];

#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// At most this many conversation messages (before summaries).
    pub max_messages: Option<usize>,
    /// Leave out the compaction summaries a finished session may hold.
    pub no_summaries: bool,
}

struct Session<'a> {
    rng: &'a mut Rng,
    t: Text,
    seed: u64,
    scale: f64,
    clock: f64,
    ids: u64,
    session_paths: Vec<JsStr>,
}

impl Session<'_> {
    /// A text length: log-uniform up to a few times `typical`, now and then
    /// ten times more, never over `max` (both scaled by the density).
    fn size(&mut self, typical: f64, max: f64) -> usize {
        let cap = ((max * self.scale).round() as u64).max(1);
        let top = ((typical * self.scale * 4.0).round() as u64).max(1);
        let mut n = self.rng.log_int(1, top);
        if self.rng.chance(0.05) {
            n *= 10;
        }
        n.min(cap) as usize
    }

    fn tick(&mut self) -> Json {
        self.clock += self.rng.int(2, 90_000) as f64;
        num(self.clock)
    }

    fn text(&mut self, typical: f64, max: f64) -> Json {
        let len = self.size(typical, max);
        Json::String(self.t.text(self.rng, len))
    }

    fn short(&mut self, lo: i64, hi: i64) -> JsStr {
        let len = self.rng.int(lo, hi) as usize;
        self.t.short(self.rng, len)
    }

    fn hex8(&mut self) -> String {
        format!("{:08x}", self.rng.next_u64() as u32)
    }

    fn path(&mut self) -> JsStr {
        if self.rng.chance(0.9) {
            js(self.rng.pick(PATHS))
        } else {
            self.short(1, 20)
        }
    }

    fn file_path(&mut self) -> JsStr {
        if self.rng.chance(0.85) {
            self.session_paths[self.rng.below(self.session_paths.len())].clone()
        } else {
            self.path()
        }
    }

    fn image(&mut self) -> Json {
        let tail: Vec<u16> = self
            .short(0, 30)
            .as_units()
            .iter()
            .map(|&u| {
                let ok = u < 0x80 && (u as u8).is_ascii_alphanumeric() || u == 0x2B || u == 0x2F;
                if ok {
                    u
                } else {
                    u16::from(b'A')
                }
            })
            .collect();
        let mut data = js("iVBORw0KGgo");
        data.push_units(&tail);
        object(vec![
            ("type", Some(string("image"))),
            ("data", Some(Json::String(data))),
            (
                "mimeType",
                Some(string(self.rng.pick(&["image/png", "image/jpeg"]))),
            ),
        ])
    }

    fn usage(&mut self, zero: bool) -> Json {
        let r = &mut *self.rng;
        let input = if zero {
            0
        } else if r.chance(0.1) {
            r.int(0, 50)
        } else {
            r.int(100, 220_000)
        };
        let output = if zero || r.chance(0.08) {
            0
        } else {
            r.int(1, 16_000)
        };
        let cache_read = if zero || r.chance(0.4) {
            0
        } else {
            r.int(0, 180_000)
        };
        let cache_write = if zero || r.chance(0.5) {
            0
        } else {
            r.int(0, 30_000)
        };
        let sum = input + output + cache_read + cache_write;
        let total = if r.chance(0.12) {
            0
        } else if r.chance(0.03) {
            sum + r.int(1, 100)
        } else {
            sum
        };
        let price = |n: i64, per: f64| n as f64 * per / 1e6;
        let costs = [
            price(input, 3.0),
            price(output, 15.0),
            price(cache_read, 0.3),
            price(cache_write, 3.75),
        ];
        let cost = object(vec![
            ("input", Some(num(costs[0]))),
            ("output", Some(num(costs[1]))),
            ("cacheRead", Some(num(costs[2]))),
            ("cacheWrite", Some(num(costs[3]))),
            ("total", Some(num(costs.iter().sum::<f64>()))),
        ]);
        // Sessions written by older pi versions have no totalTokens.
        let total = (!r.chance(0.05)).then(|| num(total as f64));
        object(vec![
            ("input", Some(num(input as f64))),
            ("output", Some(num(output as f64))),
            ("cacheRead", Some(num(cache_read as f64))),
            ("cacheWrite", Some(num(cache_write as f64))),
            ("totalTokens", total),
            ("cost", Some(cost)),
        ])
    }

    fn tool_arguments(&mut self, name: &str) -> Json {
        let mut args = JsonObject::new();
        let with_path = |s: &mut Self, args: &mut JsonObject| {
            let r = s.rng.next();
            if r < 0.85 {
                args.insert(js("path"), Json::String(s.file_path()));
            } else if r < 0.9 {
                args.insert(js("path"), string(""));
            } else if r < 0.94 {
                let odd = match s.rng.int(0, 3) {
                    0 => num(42),
                    1 => Json::Null,
                    2 => Json::Array(vec![string("a.txt")]),
                    _ => Json::Bool(true),
                };
                args.insert(js("path"), odd);
            }
        };
        match name {
            "read" => {
                with_path(self, &mut args);
                if self.rng.chance(0.3) {
                    args.insert(js("offset"), num(self.rng.int(1, 2000) as f64));
                }
                if self.rng.chance(0.3) {
                    args.insert(js("limit"), num(self.rng.pick(&[100.0, 2000.0, 1e21, 0.5])));
                }
            }
            "write" => {
                with_path(self, &mut args);
                let content = self.text(600.0, 20_000.0);
                args.insert(js("content"), content);
            }
            "edit" => {
                with_path(self, &mut args);
                if self.rng.chance(0.5) {
                    let old = self.text(80.0, 3000.0);
                    let new = self.text(80.0, 3000.0);
                    args.insert(js("oldText"), old);
                    args.insert(js("newText"), new);
                } else {
                    let edits = (0..self.rng.int(1, 3))
                        .map(|_| {
                            let old = self.short(0, 60);
                            let new = self.short(0, 60);
                            object(vec![
                                ("oldText", Some(Json::String(old))),
                                ("newText", Some(Json::String(new))),
                            ])
                        })
                        .collect();
                    args.insert(js("edits"), Json::Array(edits));
                }
            }
            "bash" => {
                let command = self.short(2, 120);
                args.insert(js("command"), Json::String(command));
                if self.rng.chance(0.3) {
                    let timeout = self.rng.pick(&[30.0, 600.0, 1e21, -0.0, 0.1]);
                    args.insert(js("timeout"), num(timeout));
                }
            }
            _ => {
                if let Json::Object(o) = json_object(self.rng, &self.t, 0) {
                    args = o;
                }
                if self.rng.chance(0.2) {
                    args.insert(js("path"), Json::String(self.file_path()));
                }
                if self.rng.chance(0.01) {
                    // Deep nesting (JSON.parse accepts any depth).
                    let mut deep = Json::Array(Vec::new());
                    for _ in 0..self.rng.int(100, 300) {
                        deep = if self.rng.chance(0.5) {
                            Json::Array(vec![deep])
                        } else {
                            let mut o = JsonObject::new();
                            o.insert(js(self.rng.pick(KEYS)), deep);
                            Json::Object(o)
                        };
                    }
                    args.insert(js("nested"), deep);
                }
            }
        }
        // Extra nested arguments, with numeric-looking keys and odd numbers.
        if self.rng.chance(0.25) {
            if let Json::Object(extra) = json_object(self.rng, &self.t, 1) {
                for (k, v) in extra.iter() {
                    if args.get_js(k).is_none() {
                        args.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        Json::Object(args)
    }

    fn user(&mut self) -> Json {
        let content = if self.rng.chance(0.6) {
            if self.rng.chance(0.03) {
                string("")
            } else {
                self.text(200.0, 8000.0)
            }
        } else {
            Json::Array(
                (0..self.rng.int(0, 4))
                    .map(|_| {
                        if self.rng.chance(0.75) {
                            let text = self.text(150.0, 6000.0);
                            object(vec![("type", Some(string("text"))), ("text", Some(text))])
                        } else {
                            self.image()
                        }
                    })
                    .collect(),
            )
        };
        let ts = self.tick();
        object(vec![
            ("role", Some(string("user"))),
            ("content", Some(content)),
            ("timestamp", Some(ts)),
        ])
    }

    fn bash_execution(&mut self) -> Json {
        let command = self.short(1, 100);
        let output = if self.rng.chance(0.1) {
            string("")
        } else {
            self.text(600.0, 30_000.0)
        };
        let exit_code = match self.rng.int(0, 8) {
            0..=2 => Some(num(0)),
            3 => Some(num(1)),
            4 => Some(num(2)),
            5 => Some(num(127)),
            6 => Some(num(130)),
            7 => None,
            _ => Some(Json::Null),
        };
        let cancelled = self.rng.chance(0.08);
        let truncated = self.rng.chance(0.1);
        let ts = self.tick();
        let mut m = object(vec![
            ("role", Some(string("bashExecution"))),
            ("command", Some(Json::String(command))),
            ("output", Some(output)),
            ("exitCode", exit_code),
            ("cancelled", Some(Json::Bool(cancelled))),
            ("truncated", Some(Json::Bool(truncated))),
            ("timestamp", Some(ts)),
        ]);
        if truncated && self.rng.chance(0.7) {
            let path = format!("/tmp/pi-bash-{}.log", self.hex8());
            set(&mut m, "fullOutputPath", string(&path));
        }
        if self.rng.chance(0.2) {
            let exclude = self.rng.chance(0.8);
            set(&mut m, "excludeFromContext", Json::Bool(exclude));
        }
        m
    }

    fn custom(&mut self) -> Json {
        let custom_type = self
            .rng
            .pick(&["note", "artifact", "reminder", "ext:todo", "中文"]);
        let content = if self.rng.chance(0.5) {
            self.text(200.0, 8000.0)
        } else {
            Json::Array(
                (0..self.rng.int(0, 3))
                    .map(|_| {
                        if self.rng.chance(0.8) {
                            let text = self.text(150.0, 5000.0);
                            object(vec![("type", Some(string("text"))), ("text", Some(text))])
                        } else {
                            self.image()
                        }
                    })
                    .collect(),
            )
        };
        let display = self.rng.chance(0.6);
        let ts = self.tick();
        let mut m = object(vec![
            ("role", Some(string("custom"))),
            ("customType", Some(string(custom_type))),
            ("content", Some(content)),
            ("display", Some(Json::Bool(display))),
            ("timestamp", Some(ts)),
        ]);
        if self.rng.chance(0.4) {
            let details = json_object(self.rng, &self.t, 1);
            set(&mut m, "details", details);
        }
        m
    }

    fn file_lists(&mut self) -> Json {
        let read = (0..self.rng.int(0, 4))
            .map(|_| Json::String(self.file_path()))
            .collect();
        let modified = (0..self.rng.int(0, 3))
            .map(|_| Json::String(self.file_path()))
            .collect();
        object(vec![
            ("readFiles", Some(Json::Array(read))),
            ("modifiedFiles", Some(Json::Array(modified))),
        ])
    }

    fn branch_summary(&mut self) -> Json {
        let summary = if self.rng.chance(0.05) {
            string("")
        } else {
            self.text(800.0, 12_000.0)
        };
        let from_id = self.hex8();
        let ts = self.tick();
        let mut m = object(vec![
            ("role", Some(string("branchSummary"))),
            ("summary", Some(summary)),
            ("fromId", Some(string(&from_id))),
            ("timestamp", Some(ts)),
        ]);
        if self.rng.chance(0.6) {
            let details = self.file_lists();
            set(&mut m, "details", details);
        }
        if self.rng.chance(0.2) {
            let from_hook = self.rng.chance(0.5);
            set(&mut m, "fromHook", Json::Bool(from_hook));
        }
        m
    }

    fn unknown(&mut self) -> Json {
        let role = self.rng.pick(&[
            "note",
            "hookMessage",
            "system",
            "debug",
            "compactionDivider",
        ]);
        let ts = self.tick();
        let mut m = object(vec![("role", Some(string(role))), ("timestamp", Some(ts))]);
        if self.rng.chance(0.5) {
            let content = self.text(100.0, 2000.0);
            set(&mut m, "content", content);
        }
        if self.rng.chance(0.3) {
            let summary = self.short(0, 50);
            set(&mut m, "summary", Json::String(summary));
        }
        if role == "hookMessage" {
            set(&mut m, "customType", string("legacy"));
            set(&mut m, "display", Json::Bool(true));
        }
        m
    }

    fn assistant(&mut self, stop_reason: &str, calls: Vec<Json>) -> Json {
        let mut content = Vec::new();
        if self.rng.chance(0.3) {
            let thinking = self.text(300.0, 10_000.0);
            let mut b = object(vec![
                ("type", Some(string("thinking"))),
                ("thinking", Some(thinking)),
            ]);
            if self.rng.chance(0.5) {
                let sig = format!("sig{}", self.hex8());
                set(&mut b, "thinkingSignature", string(&sig));
            }
            if self.rng.chance(0.05) {
                set(&mut b, "thinking", string(""));
                set(&mut b, "redacted", Json::Bool(true));
            }
            content.push(b);
        }
        let p_text = if calls.is_empty() { 0.92 } else { 0.5 };
        if self.rng.chance(p_text) {
            let text = self.text(250.0, 12_000.0);
            content.push(object(vec![
                ("type", Some(string("text"))),
                ("text", Some(text)),
            ]));
        }
        if self.rng.chance(0.05) {
            let text = self.short(0, 20);
            content.push(object(vec![
                ("type", Some(string("text"))),
                ("text", Some(Json::String(text))),
            ]));
        }
        content.extend(calls);
        if self.rng.chance(0.03) {
            content.reverse();
        }
        let failed = stop_reason == "error" || stop_reason == "aborted";
        let zero = failed && self.rng.chance(0.6);
        let usage = self.usage(zero);
        let api = self.rng.pick(&[
            "anthropic-messages",
            "openai-completions",
            "openai-responses",
        ]);
        let provider = self
            .rng
            .pick(&["anthropic", "openai", "google", "openrouter"]);
        let model = self
            .rng
            .pick(&["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro"]);
        let ts = self.tick();
        let mut m = object(vec![
            ("role", Some(string("assistant"))),
            ("content", Some(Json::Array(content))),
            ("api", Some(string(api))),
            ("provider", Some(string(provider))),
            ("model", Some(string(model))),
            ("usage", Some(usage)),
            ("stopReason", Some(string(stop_reason))),
            ("timestamp", Some(ts)),
        ]);
        if stop_reason == "error" {
            let error = if self.rng.chance(0.95) {
                string(self.rng.pick(ERROR_MESSAGES))
            } else {
                Json::String(self.short(0, 80))
            };
            set(&mut m, "errorMessage", error);
        }
        if stop_reason == "aborted" && self.rng.chance(0.5) {
            set(&mut m, "errorMessage", string("Request was aborted"));
        }
        if self.rng.chance(0.1) {
            let id = format!("msg_{}", self.hex8());
            set(&mut m, "responseId", string(&id));
        }
        m
    }

    fn tool_call(&mut self) -> Json {
        let kind = self.rng.weighted(&[
            ("read", 30),
            ("write", 10),
            ("edit", 15),
            ("bash", 25),
            ("other", 20),
        ]);
        let name = if kind == "other" {
            self.rng.pick(OTHER_TOOLS)
        } else {
            kind
        };
        let id = self.tool_call_id();
        let arguments = self.tool_arguments(name);
        let mut b = object(vec![
            ("type", Some(string("toolCall"))),
            ("id", Some(string(&id))),
            ("name", Some(string(name))),
            ("arguments", Some(arguments)),
        ]);
        if self.rng.chance(0.05) {
            let sig = format!("ts{}", self.hex8());
            set(&mut b, "thoughtSignature", string(&sig));
        }
        b
    }

    fn tool_call_id(&mut self) -> String {
        self.ids += 1;
        format!("toolu_{:x}_{:x}", self.seed, self.ids)
    }

    fn tool_result(&mut self, id: &Json, name: &Json) -> Json {
        let n = self.rng.weighted(&[(1, 80), (0, 5), (2, 10), (3, 5)]);
        let content = (0..n)
            .map(|_| {
                if self.rng.chance(0.88) {
                    let text = self.text(900.0, 60_000.0);
                    object(vec![("type", Some(string("text"))), ("text", Some(text))])
                } else {
                    self.image()
                }
            })
            .collect();
        let is_error = self.rng.chance(0.1);
        let ts = self.tick();
        let mut m = object(vec![
            ("role", Some(string("toolResult"))),
            ("toolCallId", Some(id.clone())),
            ("toolName", Some(name.clone())),
            ("content", Some(Json::Array(content))),
            ("isError", Some(Json::Bool(is_error))),
            ("timestamp", Some(ts)),
        ]);
        if self.rng.chance(0.3) {
            let details = if self.rng.chance(0.5) {
                let diff = self.short(0, 200);
                object(vec![("diff", Some(Json::String(diff)))])
            } else {
                json_object(self.rng, &self.t, 1)
            };
            set(&mut m, "details", details);
        }
        m
    }

    fn compaction_summary(&mut self, timestamp: f64) -> Json {
        let summary = if self.rng.chance(0.03) {
            string("")
        } else {
            self.text(1500.0, 16_000.0)
        };
        let tokens_before = self.rng.int(0, 250_000);
        let mut s = object(vec![
            ("role", Some(string("compactionSummary"))),
            ("summary", Some(summary)),
            ("timestamp", Some(num(timestamp))),
            ("tokensBefore", Some(num(tokens_before as f64))),
        ]);
        if self.rng.chance(0.75) {
            let details = self.file_lists();
            set(&mut s, "details", details);
        }
        if self.rng.chance(0.2) {
            let from_hook = self.rng.chance(0.6);
            set(&mut s, "fromHook", Json::Bool(from_hook));
        }
        if self.rng.chance(0.3) {
            let usage = self.usage(false);
            set(&mut s, "usage", usage);
        }
        s
    }
}

pub fn role_of(message: &Json) -> Option<&JsStr> {
    message.get("role").and_then(Json::as_str)
}

fn is_role(message: &Json, names: &[&str]) -> bool {
    role_of(message).is_some_and(|r| names.iter().any(|n| r.eq_str(n)))
}

/// A random valid flat array for `seed`.
pub fn generate_session(seed: u64, options: Options) -> Vec<Json> {
    let mut rng = Rng::new(seed);
    let size_class = rng.weighted(&[
        ((0, 3), 15),
        ((4, 25), 30),
        ((26, 120), 35),
        ((121, 400), 20),
    ]);
    let mut target = rng.int(size_class.0, size_class.1) as usize;
    if let Some(max) = options.max_messages {
        target = target.min(max);
    }
    let scale = rng.weighted(&[(0.15, 30), (1.0, 50), (4.0, 20)]);
    let t = Text::new(&mut rng);
    let clock = 1_700_000_000_000.0 + (rng.int(0, 100_000_000) * 1000) as f64;
    let mut s = Session {
        rng: &mut rng,
        t,
        seed,
        scale,
        clock,
        ids: 0,
        session_paths: Vec::new(),
    };
    s.session_paths = (0..s.rng.int(1, 8)).map(|_| s.path()).collect();

    let mut messages: Vec<Json> = Vec::new();
    let push = |messages: &mut Vec<Json>, m: Json| {
        if messages.len() < target {
            messages.push(m);
        }
    };
    while messages.len() < target {
        let starter = s.rng.weighted(&[
            ("user", 74),
            ("bash", 7),
            ("custom", 8),
            ("branch", 4),
            ("unknown", 2),
            ("none", 5),
        ]);
        match starter {
            "user" => push(&mut messages, s.user()),
            "bash" => push(&mut messages, s.bash_execution()),
            "custom" => {
                push(&mut messages, s.custom());
                if s.rng.chance(0.5) {
                    push(&mut messages, s.user());
                }
            }
            "branch" => {
                push(&mut messages, s.branch_summary());
                if s.rng.chance(0.6) {
                    push(&mut messages, s.user());
                }
            }
            "unknown" => push(&mut messages, s.unknown()),
            _ => {}
        }
        let steps = s
            .rng
            .weighted(&[(0, 4), (1, 35), (2, 20), (3, 15), (5, 12), (8, 8), (15, 6)]);
        for step in 0..steps {
            if messages.len() >= target {
                break;
            }
            let last = step == steps - 1;
            let calls: Vec<Json> = if !last || s.rng.chance(0.1) {
                let n = s.rng.weighted(&[(1, 70), (2, 18), (3, 8), (0, 4)]);
                (0..n).map(|_| s.tool_call()).collect()
            } else {
                Vec::new()
            };
            let stop = if !calls.is_empty() && !last {
                s.rng
                    .weighted(&[("toolUse", 90), ("aborted", 4), ("error", 3), ("length", 3)])
            } else {
                s.rng
                    .weighted(&[("stop", 72), ("length", 8), ("error", 12), ("aborted", 8)])
            };
            let pairs: Vec<(Json, Json)> = calls
                .iter()
                .map(|c| {
                    (
                        c.get("id").cloned().unwrap_or(Json::Null),
                        c.get("name").cloned().unwrap_or(Json::Null),
                    )
                })
                .collect();
            let has_calls = !calls.is_empty();
            push(&mut messages, s.assistant(stop, calls));
            if stop == "toolUse" || (has_calls && s.rng.chance(0.3)) {
                for (id, name) in &pairs {
                    if s.rng.chance(0.95) {
                        push(&mut messages, s.tool_result(id, name));
                    }
                }
                if s.rng.chance(0.02) {
                    let id = string(&s.tool_call_id());
                    push(&mut messages, s.tool_result(&id, &string("orphan")));
                }
            }
            // Mid-turn injections.
            if s.rng.chance(0.04) {
                push(&mut messages, s.custom());
            }
            if s.rng.chance(0.02) {
                push(&mut messages, s.bash_execution());
            }
            if s.rng.chance(0.01) {
                push(&mut messages, s.unknown());
            }
            if stop == "error" || stop == "aborted" {
                break;
            }
        }
    }

    if options.no_summaries {
        return messages;
    }
    // Compaction summaries where a real compaction leaves one: before a
    // valid cut point (never before a tool result), plus rare odd places (at
    // the very start, at the end, two in a row).
    let count = s.rng.weighted(&[(0, 45), (1, 30), (2, 15), (3, 10)]);
    let candidates: Vec<usize> = (0..messages.len())
        .filter(|&i| {
            is_role(
                &messages[i],
                &[
                    "user",
                    "assistant",
                    "bashExecution",
                    "custom",
                    "branchSummary",
                ],
            )
        })
        .collect();
    let mut positions: Vec<usize> = Vec::new();
    for _ in 0..count {
        let r = s.rng.next();
        let p = if r < 0.04 {
            Some(messages.len())
        } else if r < 0.07 {
            Some(0)
        } else if !candidates.is_empty() {
            Some(s.rng.pick(&candidates))
        } else {
            None
        };
        if let Some(p) = p.filter(|p| !positions.contains(p)) {
            positions.push(p);
        }
    }
    positions.sort_unstable_by(|a, b| b.cmp(a));
    let realistic_times = s.rng.chance(0.5);
    let timestamp_of = |m: &Json| m.get("timestamp").and_then(Json::as_f64).unwrap_or(0.0);
    for p in positions {
        let copies = if s.rng.chance(0.05) { 2 } else { 1 };
        for _ in 0..copies {
            // A compaction happens later than the messages it keeps.
            let later = messages
                .len()
                .checked_sub(1)
                .map(|last| &messages[last.min(p + s.rng.int(0, 20) as usize)]);
            let ts = match (realistic_times, later) {
                (true, Some(later)) => timestamp_of(later) + 1.0,
                _ => {
                    p.checked_sub(1)
                        .map_or(s.clock, |b| timestamp_of(&messages[b]))
                        + 1.0
                }
            };
            let summary = s.compaction_summary(ts);
            messages.insert(p, summary);
        }
    }
    messages
}
