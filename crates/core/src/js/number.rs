//! ECMAScript `Number::toString(10)`: what `String(x)` and `JSON.stringify`
//! print for a number, and `Number(text)` for a decimal literal.
//!
//! Safe integers, the common case, are printed and parsed here. Other
//! numbers go through [`engine`](crate::js::engine): in the wasm build the
//! JavaScript engine's own conversions, natively the Rust implementation
//! below, which is exact too and is what the tests check against Node.
//!
//! That implementation: Rust's `{:e}` formatting yields the shortest digits
//! that round-trip, the digits ECMAScript asks for, except that on an exact
//! tie between two candidates Rust rounds up where ECMAScript takes the even
//! one (fixed in `prefer_even`). The layout (plain, fractional or exponent
//! form) is done here by the ECMAScript rules.

use crate::js::engine::engine;
use crate::js::string::JsStr;
use std::fmt::{self, Write};

/// 2^53: every integer up to it in magnitude is a double, printed exactly.
const SAFE: f64 = 9_007_199_254_740_992.0;

/// Fixed-size ASCII buffer on the stack; the longest number text is 25 bytes
/// (`-0.0000012345678901234567`) and the longest `{:e}` form 24.
struct Buf {
    bytes: [u8; 32],
    len: usize,
}

impl Buf {
    fn new() -> Self {
        Buf {
            bytes: [0; 32],
            len: 0,
        }
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    fn filled(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

impl Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.len + s.len() > self.bytes.len() {
            return Err(fmt::Error);
        }
        s.bytes().for_each(|b| self.push(b));
        Ok(())
    }
}

/// The text of a number, held without allocating.
pub struct NumberText(Buf);

impl NumberText {
    /// The text, ASCII: each byte is also one UTF-16 code unit.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.filled()
    }

    fn string(&self) -> String {
        self.as_bytes().iter().map(|&b| char::from(b)).collect()
    }

    /// Length in bytes, which is also its length in UTF-16 units (ASCII).
    pub fn len(&self) -> usize {
        self.0.len
    }

    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
}

/// The significant digits (ASCII) and decimal exponent of `{:e}`'s output:
/// x = d1.d2…dk × 10^e.
#[derive(Clone, Copy)]
struct Sci {
    digits: [u8; 20],
    k: usize,
    e: i32,
}

impl Sci {
    /// Without `precision`, the shortest digits that round-trip.
    fn of(x: f64, precision: Option<usize>) -> Sci {
        let mut text = Buf::new();
        let _ = match precision {
            None => write!(text, "{x:e}"),
            Some(p) => write!(text, "{x:.p$e}"),
        };
        let text = text.filled();
        let e_at = text.iter().position(|&b| b == b'e').unwrap_or(text.len());
        let (mantissa, exp) = text.split_at(e_at);
        let mut sci = Sci {
            digits: [0; 20],
            k: 0,
            e: std::str::from_utf8(exp.get(1..).unwrap_or_default())
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
        };
        for &b in mantissa.iter().filter(|b| b.is_ascii_digit()) {
            if let Some(slot) = sci.digits.get_mut(sci.k) {
                *slot = b;
                sci.k += 1;
            }
        }
        sci
    }

    fn digits(&self) -> &[u8] {
        self.digits.get(..self.k).unwrap_or_default()
    }
}

/// When `x` lies exactly halfway between two shortest candidates, Rust
/// rounds up, but ECMAScript picks the one with the even last digit
/// (21957341185706.5625 prints as "21957341185706.562").
fn prefer_even(x: f64, sci: &mut Sci) {
    let k = sci.k;
    let digits = sci.digits();
    let Some((&last, head)) = digits.split_last() else {
        return;
    };
    if last % 2 == 0 {
        return; // ASCII digits share the parity of their values
    }
    // A tie means x is exactly the k+1 digit decimal "candidate ± ½".
    let near = Sci::of(x, Some(k));
    let Some((&five, near_head)) = near.digits().split_last() else {
        return;
    };
    let Some((&near_last, near_first)) = near_head.split_last() else {
        return;
    };
    if five != b'5' || near.e != sci.e || near_first != head {
        return;
    }
    let other = if near_last == last.wrapping_sub(1) {
        near_last
    } else if near_last == last && last != b'9' {
        last + 1
    } else {
        return;
    };
    // Exact only if all the further digits of x's full expansion are zero
    // (a double has at most 767 significant digits).
    let full = format!("{x:.800e}");
    let mantissa = full.split('e').next().unwrap_or_default();
    if !mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip(k + 1)
        .all(|b| b == b'0')
    {
        return;
    }
    // The neighbour must round-trip as well. It does whenever x's rounding
    // interval is symmetric, which fails only at powers of two; among those
    // the single exact tie whose neighbour falls outside is 2^-24 (checked
    // for all of them against Node in `random_doubles_match_node`). Parsing
    // would do, but would pull the float parser into the wasm.
    if x == 1.0 / 16_777_216.0 {
        return;
    }
    if let Some(slot) = sci.digits.get_mut(k.wrapping_sub(1)) {
        *slot = other;
    }
}

/// `Number::toString(x)` exactly as JavaScript prints it.
pub fn format_number(x: f64) -> NumberText {
    let mut out = Buf::new();
    if x.is_nan() {
        out.write_str("NaN").ok();
    } else if x == 0.0 {
        out.push(b'0'); // also for -0
    } else if x.fract() == 0.0 && x.abs() <= SAFE {
        if x < 0.0 {
            out.push(b'-');
        }
        write_integer(x.abs() as u64, &mut out);
    } else {
        // Infinities too: `fract()` of an infinity is NaN.
        out.write_str(&(engine().number_to_string)(x)).ok();
    }
    NumberText(out)
}

/// The decimal digits of `n`.
fn write_integer(n: u64, out: &mut Buf) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        if let Some(slot) = digits.get_mut(at) {
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    digits
        .get(at..)
        .unwrap_or_default()
        .iter()
        .for_each(|&b| out.push(b));
}

/// `Number::toString(x)` for any number, in Rust: what native builds use
/// for non-integers (see [`engine`](crate::js::engine)).
pub fn rust_number_to_string(x: f64) -> String {
    let mut out = Buf::new();
    shortest(x, &mut out);
    std::str::from_utf8(out.filled()).unwrap_or("").to_owned()
}

fn shortest(x: f64, out: &mut Buf) {
    if x.is_nan() {
        out.write_str("NaN").ok();
        return;
    }
    if x == 0.0 {
        out.push(b'0'); // also for -0
        return;
    }
    if x < 0.0 {
        out.push(b'-');
    }
    if x.is_infinite() {
        out.write_str("Infinity").ok();
        return;
    }

    let mut sci = Sci::of(x.abs(), None);
    prefer_even(x.abs(), &mut sci);
    let (digits, e) = (sci.digits(), sci.e);

    // ECMAScript's n: the decimal point sits after the n-th digit.
    let n = e + 1;
    let k = digits.len() as i32;
    let push_all = |out: &mut Buf, bytes: &[u8]| bytes.iter().for_each(|&b| out.push(b));
    let (int_part, frac_part) = digits.split_at((n.clamp(0, k)) as usize);
    if k <= n && n <= 21 {
        push_all(out, digits);
        (0..n - k).for_each(|_| out.push(b'0'));
    } else if 0 < n && n <= 21 {
        push_all(out, int_part);
        out.push(b'.');
        push_all(out, frac_part);
    } else if -6 < n && n <= 0 {
        push_all(out, b"0.");
        (0..-n).for_each(|_| out.push(b'0'));
        push_all(out, digits);
    } else {
        let (first, rest) = digits.split_at(digits.len().min(1));
        push_all(out, first);
        if !rest.is_empty() {
            out.push(b'.');
            push_all(out, rest);
        }
        out.push(b'e');
        out.push(if n - 1 < 0 { b'-' } else { b'+' });
        write!(out, "{}", (n - 1).unsigned_abs()).ok();
    }
}

/// `Number(text)` for a decimal literal that the caller has checked:
/// an optional sign, digits with an optional point, an optional exponent
/// (`-12`, `1.5e-3`, `.5`, `+1.`). Up to 15 digits without a point or an
/// exponent are read here (exactly: they are below 2^53); the rest goes
/// through [`engine`](crate::js::engine).
pub fn parse_decimal(text: &str) -> f64 {
    let (negative, digits) = match text.as_bytes().split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text.as_bytes()),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return (engine().parse_number)(text);
    }
    let value = digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0')) as f64;
    if negative {
        -value
    } else {
        value
    }
}

/// `Number(text)` in Rust, for a checked decimal literal: what native builds
/// use beyond the integers `parse_decimal` reads (see [`engine`](crate::js::engine)).
pub fn rust_parse_decimal(text: &str) -> f64 {
    text.parse::<f64>().unwrap_or(f64::NAN)
}

/// Appends `Number::toString(x)` to `out`.
pub fn number_to_js_string(x: f64, out: &mut JsStr) {
    out.push_ascii(format_number(x).as_bytes());
}

/// `Number::toString(x)` as a Rust `String`.
pub fn number_to_string(x: f64) -> String {
    format_number(x).string()
}

/// The decimal digits of any `n`, as `n.to_string()` prints them.
pub fn integer_to_string(n: u64) -> String {
    let mut out = Buf::new();
    write_integer(n, &mut out);
    NumberText(out).string()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Expected texts were printed by Node 20: `node -e 'console.log(String(x))'`.
    #[allow(clippy::excessive_precision)]
    const CASES: &[(f64, &str)] = &[
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-1.0, "-1"),
        (5.0, "5"),
        (-1.5, "-1.5"),
        (10.0, "10"),
        (100.0, "100"),
        (123.456, "123.456"),
        (0.1, "0.1"),
        (0.5, "0.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1.0 / 3.0, "0.3333333333333333"),
        (2.0 / 3.0, "0.6666666666666666"),
        (0.000001, "0.000001"),
        (0.0000015, "0.0000015"),
        (0.000001234, "0.000001234"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-1.5e-7, "-1.5e-7"),
        (1.2345e-10, "1.2345e-10"),
        (5e-324, "5e-324"),
        (-5e-324, "-5e-324"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-1.7976931348623157e308, "-1.7976931348623157e+308"),
        (9007199254740992.0, "9007199254740992"),
        (9007199254740993.0, "9007199254740992"),
        (9007199254740994.0, "9007199254740994"),
        (1e20, "100000000000000000000"),
        (1.5e20, "150000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (999999999999999900000.0, "999999999999999900000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (-1e21, "-1e+21"),
        (1e100, "1e+100"),
        (1.2345678901234567e22, "1.2345678901234568e+22"),
        (4294967295.0, "4294967295"),
        (4294967296.0, "4294967296"),
        (12345.6789, "12345.6789"),
        (1.7976931348623157e-300, "1.7976931348623157e-300"),
        (100.5, "100.5"),
        (0.001, "0.001"),
        (0.00001, "0.00001"),
        (1234567.125, "1234567.125"),
        (1.0e15, "1000000000000000"),
        (1.0e16, "10000000000000000"),
        (0.1e-5, "0.000001"),
        (123e-20, "1.23e-18"),
        (2.71, "2.71"),
        (-0.000001, "-0.000001"),
        (0.0000012345678901234567, "0.0000012345678901234567"),
        (-0.0000012345678901234567, "-0.0000012345678901234567"),
        (1.2345678901234567e-7, "1.2345678901234566e-7"),
        (5e-7, "5e-7"),
        (1.5, "1.5"),
        (4.35, "4.35"),
        (0.3, "0.3"),
        (1.005, "1.005"),
        // Exact ties between two shortest candidates: the even one wins.
        (21957341185706.5625, "21957341185706.562"),
        (111.16665649414063, "111.16665649414062"),
        (0.23277664184570313, "0.23277664184570312"),
        (2.1892758471326653e15, "2189275847132665.2"),
        (1.0899623217097813e12, "1089962321709.7812"),
        (0.5, "0.5"),
    ];

    #[test]
    fn integers_print_every_digit() {
        for n in [0, 7, 10, 999, 1_234_567, 9_007_199_254_740_993, u64::MAX] {
            assert_eq!(integer_to_string(n), n.to_string());
        }
    }

    #[test]
    fn matches_javascript_table() {
        for &(x, want) in CASES {
            assert_eq!(number_to_string(x), want, "for {x:e}");
            let mut js = JsStr::from("<");
            number_to_js_string(x, &mut js);
            assert_eq!(js.to_string_lossy(), format!("<{want}"));
            assert_eq!(format_number(x).len(), want.len());
        }
    }

    /// Compares with Node's `String(x)` on random doubles. Skipped without `node`.
    #[test]
    fn random_doubles_match_node() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        if Command::new("node").arg("--version").output().is_err() {
            eprintln!("node not on PATH: skipping the comparison with JavaScript");
            return;
        }
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut xs: Vec<f64> = CASES.iter().map(|c| c.0).collect();
        xs.extend((-1074..=1023).map(|e| 2f64.powi(e)));
        while xs.len() < 20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = match state % 3 {
                0 => f64::from_bits(state),
                // Decimal-looking values near the layout boundaries.
                1 => (state % 100_000) as f64 * 10f64.powi((state >> 40) as i32 % 40 - 20),
                _ => (state >> 11) as f64 / (1u64 << (state % 64)) as f64,
            };
            xs.push(x);
        }
        let input: Vec<String> = xs
            .iter()
            .map(|x| {
                if x.is_finite() {
                    format!("{x:e}")
                } else {
                    number_to_string(*x)
                }
            })
            .collect();
        let mut child = Command::new("node")
            .args([
                "-e",
                "const t=require('fs').readFileSync(0,'utf8').split(' ');\
                process.stdout.write(t.map(s=>String(Number(s))).join(' '))",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let text = input.join(" ");
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        let node_out = String::from_utf8(output.stdout).unwrap();
        let want: Vec<&str> = node_out.split(' ').collect();
        assert_eq!(want.len(), xs.len());
        for (x, want) in xs.iter().zip(want) {
            assert_eq!(number_to_string(*x), want, "for {x:e}");
        }
    }

    #[test]
    fn ties_at_powers_of_two() {
        // Node: 2**-24 keeps the odd digit (the even one would not round-trip);
        // 2**-25 takes the even one.
        assert_eq!(number_to_string(2f64.powi(-24)), "5.960464477539063e-8");
        assert_eq!(number_to_string(2f64.powi(-25)), "2.9802322387695312e-8");
    }

    /// Checks the ECMAScript layout rules independently of the formatter.
    fn check_layout(x: f64, s: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(s.parse::<f64>().ok(), Some(x), "{} does not parse back", s);
        let body = s.strip_prefix('-').unwrap_or(s);
        prop_assert_eq!(s.starts_with('-'), x < 0.0);
        let (mantissa, exp) = match body.split_once('e') {
            Some((m, e)) => (m, Some(e)),
            None => (body, None),
        };
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        let sig = digits.trim_start_matches('0').trim_end_matches('0');
        // Shortest: no fewer significant digits round-trip (17 is always enough).
        prop_assert!(sig.len() <= 17);
        if sig.len() > 1 {
            let shorter = format!("{:.*e}", sig.len() - 2, x.abs());
            prop_assert_ne!(
                shorter.parse::<f64>().ok(),
                Some(x.abs()),
                "{} not shortest",
                s
            );
        }
        let a = x.abs();
        match exp {
            Some(e) => {
                prop_assert!(
                    !(1e-6..1e21).contains(&a),
                    "{} should not use an exponent",
                    s
                );
                prop_assert!(e.starts_with('+') || e.starts_with('-'));
                prop_assert!(!mantissa.starts_with('0'));
                prop_assert!(mantissa.len() == 1 || mantissa.as_bytes().get(1) == Some(&b'.'));
                prop_assert!(!mantissa.ends_with('0') && !mantissa.ends_with('.'));
            }
            None => {
                prop_assert!((1e-6..1e21).contains(&a), "{} needs an exponent", s);
                if mantissa.contains('.') {
                    prop_assert!(!mantissa.ends_with('0'));
                    prop_assert!(!mantissa.starts_with("00"));
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn random_bits_round_trip(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite() && x != 0.0);
            check_layout(x, &number_to_string(x))?;
        }

        #[test]
        fn near_layout_boundaries(m in 1.0f64..10.0, e in -9i32..25, neg in any::<bool>()) {
            let x = m * 10f64.powi(e) * if neg { -1.0 } else { 1.0 };
            check_layout(x, &number_to_string(x))?;
        }

        #[test]
        fn decimal_literals_parse_as_rust_parses_them(
            sign in prop::sample::select(vec!["", "-", "+"]),
            digits in "[0-9]{1,20}",
            tail in prop::sample::select(vec!["", ".5", "e3", ".", "E-400"]),
        ) {
            let text = format!("{sign}{digits}{tail}");
            let want: f64 = text.parse().unwrap();
            prop_assert_eq!(parse_decimal(&text).to_bits(), want.to_bits(), "{}", text);
        }

        #[test]
        fn integers_print_plainly(i in any::<i64>()) {
            let x = i as f64;
            let s = number_to_string(x);
            check_layout(x, &s)?;
            if x.abs() < 1e21 {
                prop_assert!(s.bytes().all(|b| b.is_ascii_digit() || b == b'-'));
            }
        }
    }
}
