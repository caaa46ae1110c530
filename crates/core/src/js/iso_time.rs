//! Dates as pi's session files write them: `Date.prototype.toISOString()`
//! text on one side, epoch milliseconds (`Date.prototype.getTime()`) on the
//! other, computed exactly as JavaScript does for the proleptic Gregorian
//! calendar, with no time zone and no floating point in between.

use crate::js::json::Json;

/// The largest distance from the epoch a JavaScript `Date` can hold, in ms.
pub const MAX_TIME_MS: f64 = 8.64e15;
const MS_PER_DAY: i64 = 86_400_000;

/// Days from 1970-01-01 to `year-month-01` (any year, month 1..=12).
fn days_from_civil(year: i64, month: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12; // March = 0
    let day_of_year = (153 * shifted_month + 2) / 5;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The calendar date of a day number (inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// JavaScript's TimeClip: a time value a `Date` can hold, or `None` (NaN).
/// Fractions are cut toward zero and `-0` becomes `0`.
pub fn time_clip(ms: f64) -> Option<f64> {
    if !ms.is_finite() || ms.abs() > MAX_TIME_MS {
        return None;
    }
    Some(ms.trunc() + 0.0)
}

/// Whether `new Date(ms).getTime() === ms`: a whole number of milliseconds a
/// `Date` can hold, so that it survives a trip through an ISO string.
pub fn is_exact_time(ms: f64) -> bool {
    time_clip(ms) == Some(ms)
}

/// `new Date(ms).toISOString()`; `None` where JavaScript throws a
/// `RangeError` (NaN, infinities, beyond ±8.64e15).
pub fn format_iso(ms: f64) -> Option<String> {
    let t = time_clip(ms)? as i64;
    let days = t.div_euclid(MS_PER_DAY);
    let in_day = t.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    let year_text = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else if year < 0 {
        format!("-{:06}", -year)
    } else {
        format!("+{year:06}")
    };
    Some(format!(
        "{year_text}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z"
    ))
}

/// Reads ASCII digits of an ISO string, position by position.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// Exactly `n` digits as a number.
    fn digits(&mut self, n: usize) -> Option<i64> {
        let mut value = 0i64;
        for _ in 0..n {
            let d = self.peek().filter(u8::is_ascii_digit)?;
            value = value * 10 + i64::from(d - b'0');
            self.at += 1;
        }
        Some(value)
    }

    fn at_end(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

/// `Date.parse(text)` for ECMAScript's Date Time String Format, which is
/// what `toISOString` writes and what pi stores: `YYYY`, `YYYY-MM`,
/// `YYYY-MM-DD` (UTC), optionally followed by `THH:mm`, `:ss` and `.sss`
/// (any number of fraction digits; the first three count, as V8 reads them)
/// and a zone, `Z` or `±HH:mm`. Years may be `±YYYYYY`. Day numbers up to 31
/// roll over into the next month as V8 lets them (`2021-02-30` is March 2).
///
/// `None` for anything else, including date-times without a zone: those
/// are local time in JavaScript, which depends on the machine.
pub fn parse_iso(text: &str) -> Option<f64> {
    let mut c = Cursor {
        bytes: text.as_bytes(),
        at: 0,
    };
    let year = match c.peek()? {
        sign @ (b'+' | b'-') => {
            c.at += 1;
            let y = c.digits(6)?;
            if sign == b'-' {
                if y == 0 {
                    return None; // -000000 is not a year
                }
                -y
            } else {
                y
            }
        }
        _ => c.digits(4)?,
    };
    let mut month = 1;
    let mut day = 1;
    if c.eat(b'-') {
        month = c.digits(2)?;
        if c.eat(b'-') {
            day = c.digits(2)?;
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut ms_in_day = 0i64;
    let mut offset_minutes = 0i64;
    if c.eat(b'T') {
        let hour = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        let minute = c.digits(2)?;
        let (mut second, mut milli) = (0, 0);
        if c.eat(b':') {
            second = c.digits(2)?;
            if c.eat(b'.') {
                let start = c.at;
                while c.peek().is_some_and(|b| b.is_ascii_digit()) {
                    c.at += 1;
                }
                let fraction = c.bytes.get(start..c.at)?;
                if fraction.is_empty() {
                    return None;
                }
                for i in 0..3 {
                    let d = fraction.get(i).map_or(0, |b| i64::from(b - b'0'));
                    milli = milli * 10 + d;
                }
            }
        }
        if hour > 24 || minute > 59 || second > 59 {
            return None;
        }
        if hour == 24 && (minute, second, milli) != (0, 0, 0) {
            return None;
        }
        ms_in_day = ((hour * 60 + minute) * 60 + second) * 1000 + milli;
        match c.peek() {
            Some(b'Z') => c.at += 1,
            Some(sign @ (b'+' | b'-')) => {
                c.at += 1;
                let oh = c.digits(2)?;
                if !c.eat(b':') {
                    return None;
                }
                let om = c.digits(2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_minutes = (oh * 60 + om) * if sign == b'-' { -1 } else { 1 };
            }
            _ => return None, // local time
        }
    }
    if !c.at_end() {
        return None;
    }
    let days = days_from_civil(year, month) + day - 1;
    let ms = days * MS_PER_DAY + ms_in_day - offset_minutes * 60_000;
    // Whole milliseconds well inside 2^53: the conversion is exact.
    time_clip(ms as f64)
}

/// `new Date(value).getTime()` for a JSON value, `None` where JavaScript
/// gives NaN. Strings follow [`parse_iso`]; arrays and objects, which
/// JavaScript would first turn into strings, are not dates here.
pub fn date_value(value: Option<&Json>) -> Option<f64> {
    match value? {
        Json::Null => Some(0.0),
        Json::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Json::Number(x) => time_clip(*x),
        Json::String(s) => parse_iso(&String::from_utf16(s.as_units()).ok()?),
        Json::Array(_) | Json::Object(_) => None,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_dates() {
        assert_eq!(format_iso(0.0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            format_iso(-0.0).as_deref(),
            Some("1970-01-01T00:00:00.000Z")
        );
        assert_eq!(
            format_iso(-1.0).as_deref(),
            Some("1969-12-31T23:59:59.999Z")
        );
        assert_eq!(
            format_iso(1_763_681_581_544.0).as_deref(),
            Some("2025-11-20T23:33:01.544Z")
        );
        assert_eq!(
            format_iso(MAX_TIME_MS).as_deref(),
            Some("+275760-09-13T00:00:00.000Z")
        );
        assert_eq!(
            format_iso(-MAX_TIME_MS).as_deref(),
            Some("-271821-04-20T00:00:00.000Z")
        );
        assert_eq!(
            format_iso(-62_167_219_200_000.0).as_deref(),
            Some("0000-01-01T00:00:00.000Z")
        );
        assert_eq!(
            format_iso(-62_167_219_200_001.0).as_deref(),
            Some("-000001-12-31T23:59:59.999Z")
        );
        assert_eq!(
            format_iso(253_402_300_800_000.0).as_deref(),
            Some("+010000-01-01T00:00:00.000Z")
        );
        assert_eq!(format_iso(1.9).as_deref(), Some("1970-01-01T00:00:00.001Z"));
        assert_eq!(format_iso(f64::NAN), None);
        assert_eq!(format_iso(MAX_TIME_MS + 1.0), None);
        assert_eq!(format_iso(f64::INFINITY), None);
    }

    /// `new Date(text).getTime()` in Node (TZ-independent cases only).
    const NODE_PARSES: &[(&str, Option<f64>)] = &[
        ("2020-01-01T00:00:00Z", Some(1577836800000.0)),
        ("2020-01-01T00:00:00.5Z", Some(1577836800500.0)),
        ("2020-01-01T00:00:00.123456Z", Some(1577836800123.0)),
        ("2020-01-01T00:00:00.999999Z", Some(1577836800999.0)),
        ("2020-01-01T00:00:00.Z", None),
        ("2021-02-29T00:00:00Z", Some(1614556800000.0)),
        ("2021-02-31T00:00:00Z", Some(1614729600000.0)),
        ("2021-04-31T00:00:00Z", Some(1619827200000.0)),
        ("2021-02-32T00:00:00Z", None),
        ("2020-01-01T24:00:00Z", Some(1577923200000.0)),
        ("2020-01-01T24:00:01Z", None),
        ("2020-01-01T23:60:00Z", None),
        ("2020-01-01T23:59:60Z", None),
        ("2020-01-01T00:00Z", Some(1577836800000.0)),
        ("2020-01-01T00Z", None),
        ("2020-01-01", Some(1577836800000.0)),
        ("2020-01", Some(1577836800000.0)),
        ("2020", Some(1577836800000.0)),
        ("+002020-01-01T00:00:00Z", Some(1577836800000.0)),
        ("-000000-01-01T00:00:00Z", None),
        ("-000001-01-01T00:00:00.000Z", Some(-62198755200000.0)),
        ("+275760-09-13T00:00:00.000Z", Some(8640000000000000.0)),
        ("+275760-09-13T00:00:00.001Z", None),
        ("-271821-04-20T00:00:00.000Z", Some(-8640000000000000.0)),
        ("-271821-04-19T23:59:59.999Z", None),
        ("2020-01-01T00:00:00+01:00", Some(1577833200000.0)),
        ("2020-01-01T00:00:00-23:59", Some(1577923140000.0)),
        ("2020-01-01T00:00:00+24:00", None),
        ("2020-01-01T00:00:00+01", None),
        (" 2020-01-01T00:00:00Z", None),
        ("2020-01-01T00:00:00Z ", None),
        ("2020-1-01T00:00:00Z", None),
        ("02020-01-01T00:00:00Z", None),
        ("2020-00-01T00:00:00Z", None),
        ("2020-01-00T00:00:00Z", None),
        ("2020-13-01T00:00:00Z", None),
        ("2020-01-01T1:00:00Z", None),
        ("+2020-01-01T00:00:00Z", None),
        ("2020-01-01T00:00:00+01:00:00", None),
        ("0000-01-01T00:00:00.000Z", Some(-62167219200000.0)),
        ("1970-01-01T00:00:00.000Z", Some(0.0)),
        ("", None),
    ];

    #[test]
    fn parses_like_node() {
        for &(text, want) in NODE_PARSES {
            assert_eq!(parse_iso(text), want, "{text:?}");
        }
    }

    #[test]
    fn local_times_are_refused() {
        // JavaScript reads these in the machine's time zone.
        assert_eq!(parse_iso("2020-01-01T00:00:00"), None);
        assert_eq!(parse_iso("2020-01-01T00:00"), None);
    }

    #[test]
    fn date_value_follows_the_date_constructor() {
        let n = |x: f64| Some(Json::Number(x));
        assert_eq!(date_value(None), None);
        assert_eq!(date_value(Some(&Json::Null)), Some(0.0));
        assert_eq!(date_value(Some(&Json::Bool(true))), Some(1.0));
        assert_eq!(date_value(n(1.9).as_ref()), Some(1.0));
        assert_eq!(date_value(n(-1.9).as_ref()), Some(-1.0));
        assert_eq!(date_value(n(9e15).as_ref()), None);
        assert_eq!(
            date_value(Some(&Json::from("2025-11-20T23:33:01.544Z"))),
            Some(1_763_681_581_544.0)
        );
        assert_eq!(date_value(Some(&Json::from("yesterday"))), None);
        assert_eq!(date_value(Some(&Json::Array(vec![]))), None);
    }

    proptest! {
        #[test]
        fn format_then_parse_is_the_identity(ms in -8_640_000_000_000_000i64..=8_640_000_000_000_000) {
            let text = format_iso(ms as f64).unwrap();
            prop_assert_eq!(parse_iso(&text), Some(ms as f64));
        }

        #[test]
        fn parse_never_panics(text in "[-+T:.Z0-9]{0,30}") {
            let _ = parse_iso(&text);
        }
    }

    /// A tiny deterministic generator, so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> i64 {
            (self.next() % n) as i64
        }
    }

    /// Checks formatting and parsing against Node's `Date` on thousands of
    /// values: every era from -271821 to +275760, the years around 1970,
    /// 0 and 10000, leap days, and texts with offsets and odd fractions.
    /// Skipped without `node`.
    #[test]
    fn matches_node_date() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        if Command::new("node").arg("--version").output().is_err() {
            eprintln!("node not on PATH: skipping the comparison with JavaScript");
            return;
        }
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut times: Vec<i64> = vec![
            0,
            -1,
            1,
            8_640_000_000_000_000,
            -8_640_000_000_000_000,
            951_782_400_000,    // 2000-02-29
            4_107_542_400_000,  // 2100-03-01
            -2_208_988_800_000, // 1900-01-01
            -62_167_219_200_000,
            -62_167_219_200_001,
            253_402_300_799_999,
            253_402_300_800_000,
        ];
        for _ in 0..3000 {
            times.push(match rng.below(4) {
                0 => rng.below(17_280_000_000_000_001) - 8_640_000_000_000_000,
                1 => rng.below(8_000_000_000_000) - 4_000_000_000_000, // 1843..2096
                2 => rng.below(400_000_000_000_000) - 200_000_000_000_000,
                _ => 4_102_444_800_000 + rng.below(100_000_000_000_000), // after 2100
            });
        }
        let mut texts: Vec<String> = Vec::new();
        for _ in 0..3000 {
            let year = match rng.below(4) {
                0 => format!("{:04}", rng.below(10_000)),
                1 => format!("+{:06}", rng.below(275_761)),
                2 => format!("-{:06}", rng.below(271_822)),
                _ => format!("{}", 1900 + rng.below(300)),
            };
            let mut t = year;
            if rng.below(6) > 0 {
                t += &format!("-{:02}", rng.below(14));
                if rng.below(6) > 0 {
                    t += &format!("-{:02}", rng.below(33));
                }
            }
            if rng.below(5) > 0 {
                t += &format!("T{:02}:{:02}", rng.below(26), rng.below(61));
                if rng.below(4) > 0 {
                    t += &format!(":{:02}", rng.below(61));
                    if rng.below(2) > 0 {
                        let digits = 1 + rng.below(7) as usize;
                        let f = format!("{:07}", rng.below(10_000_000));
                        t += ".";
                        t += &f[..digits];
                    }
                }
                t += &match rng.below(3) {
                    0 => "Z".to_owned(),
                    1 => format!("+{:02}:{:02}", rng.below(25), rng.below(61)),
                    _ => format!("-{:02}:{:02}", rng.below(25), rng.below(61)),
                };
            }
            texts.push(t);
        }
        let input = format!(
            "{}\n{}",
            times
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(","),
            texts.join(",")
        );
        let script = "const [a,b]=require('fs').readFileSync(0,'utf8').split('\\n');\
            const iso=a.split(',').map(t=>new Date(Number(t)).toISOString());\
            const ms=b.split(',').map(s=>{const v=new Date(s).getTime();return Number.isNaN(v)?'NaN':String(v)});\
            process.stdout.write(iso.join(',')+'\\n'+ms.join(','))";
        let mut child = Command::new("node")
            .args(["-e", script])
            .env("TZ", "UTC")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(output.status.success());
        let out = String::from_utf8(output.stdout).unwrap();
        let (iso, ms) = out.split_once('\n').unwrap();
        for (t, want) in times.iter().zip(iso.split(',')) {
            assert_eq!(format_iso(*t as f64).as_deref(), Some(want), "{t}");
            assert_eq!(parse_iso(want), Some(*t as f64), "{want}");
        }
        let mut valid = 0;
        for (text, want) in texts.iter().zip(ms.split(',')) {
            let ours = parse_iso(text);
            // Under TZ=UTC a zone-less date-time is UTC in Node; we refuse it.
            let local = text
                .split_once('T')
                .is_some_and(|(_, time)| !time.ends_with('Z') && !time.contains(['+', '-']));
            if local {
                assert_eq!(ours, None, "{text:?}");
                continue;
            }
            let ours = ours.map_or("NaN".to_owned(), |v| format!("{v}"));
            assert_eq!(ours, want, "{text:?}");
            valid += usize::from(want != "NaN");
        }
        assert!(valid > 1000, "{valid} valid texts");
    }
}
