//! Tests of ISO 8601 time handling with `Date`'s semantics: parsing,
//! formatting and round trips.

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
