//! Dates as pi's session files write them: `Date.prototype.toISOString()`
//! text on one side, epoch milliseconds (`Date.prototype.getTime()`) on the
//! other, computed exactly as JavaScript does for the proleptic Gregorian
//! calendar, with no time zone and no floating point in between.

use crate::js::json::Json;
use crate::js::number::integer_to_string;
use crate::js::string::ascii_string;

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
    let mut out = String::with_capacity(27);
    // Years outside 0..=9999 take a sign and six digits.
    let year_width = if (0..=9999).contains(&year) {
        4
    } else {
        out.push(if year < 0 { '-' } else { '+' });
        6
    };
    push_padded(&mut out, year, year_width);
    for (separator, n, width) in [
        ('-', month, 2),
        ('-', day, 2),
        ('T', h, 2),
        (':', m, 2),
        (':', s, 2),
        ('.', milli, 3),
    ] {
        out.push(separator);
        push_padded(&mut out, n, width);
    }
    out.push('Z');
    Some(out)
}

/// The digits of `|n|`, zero-padded to at least `width`.
fn push_padded(out: &mut String, n: i64, width: usize) {
    let digits = integer_to_string(n.unsigned_abs());
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(&digits);
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
        Json::String(s) => parse_iso(&ascii_string(s.as_units())?),
        Json::Array(_) | Json::Object(_) => None,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
