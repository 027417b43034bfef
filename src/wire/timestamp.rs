//! ISO-8601 timestamps as Python 3.11's `datetime.fromisoformat` reads them.
//!
//! Owns the accepted syntax (extended and basic dates, ISO week dates, any one-character
//! date/time separator, fractions of any length, offsets down to seconds), the two error
//! strings (`must be an ISO timestamp`, `must include a timezone`) and comparison of aware
//! timestamps as instants. The original text is never re-formatted. Pure.

use crate::wire::json::Value;
use crate::wire::pyfmt::pystr_strip_cow;
use crate::wire::text::FieldError;

/// A parsed aware timestamp, comparable as an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant {
    /// Microseconds since 0001-01-01T00:00:00Z (proleptic Gregorian).
    pub micros: i128,
}

/// Why a string is not an aware timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampError {
    Invalid,
    Naive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parsed {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micro: u32,
    offset_micros: Option<i64>,
}

/// Byte access past the end reads as NUL, like the C parser's terminated buffer.
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn digits(b: &[u8], pos: usize, n: usize) -> Option<(u32, usize)> {
    let mut v: u32 = 0;
    for i in 0..n {
        let c = at(b, pos + i);
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some((v, pos + n))
}

fn find_separator(b: &[u8]) -> Option<usize> {
    let len = b.len();
    if len == 7 {
        return Some(7);
    }
    if at(b, 4) == b'-' {
        if at(b, 5) == b'W' {
            if len < 8 {
                return None;
            }
            if len > 8 && at(b, 8) == b'-' {
                if len == 9 {
                    return None;
                }
                if len > 10 && at(b, 10).is_ascii_digit() {
                    return Some(8);
                }
                return Some(10);
            }
            return Some(8);
        }
        return Some(10);
    }
    if at(b, 4) == b'W' {
        let mut idx = 7;
        while idx < len && at(b, idx).is_ascii_digit() {
            idx += 1;
        }
        if idx < 9 {
            return Some(idx);
        }
        return Some(if idx % 2 == 0 { 7 } else { 8 });
    }
    Some(8)
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 0001-01-01 for a valid date.
fn ordinal(y: i32, m: u32, d: u32) -> i64 {
    let y1 = i64::from(y) - 1;
    let mut days = y1 * 365 + y1 / 4 - y1 / 100 + y1 / 400;
    for month in 1..m {
        days += i64::from(days_in_month(y, month));
    }
    days + i64::from(d) - 1
}

fn from_ordinal(mut n: i64) -> Option<(i32, u32, u32)> {
    // Walk years; n is small for realistic inputs (years 1..9999).
    let mut y: i32 = 1;
    loop {
        let len = if is_leap(y) { 366 } else { 365 };
        if n < len {
            break;
        }
        n -= len;
        y += 1;
        if y > 10_000 {
            return None;
        }
    }
    let mut m = 1;
    loop {
        let dim = i64::from(days_in_month(y, m));
        if n < dim {
            break;
        }
        n -= dim;
        m += 1;
    }
    Some((y, m, u32::try_from(n + 1).ok()?))
}

fn iso_to_ymd(year: i32, week: u32, day: u32) -> Option<(i32, u32, u32)> {
    if !(1..=9999).contains(&year) {
        return None;
    }
    if week == 0 || week >= 53 {
        let mut out_of_range = true;
        if week == 53 {
            // A year has 53 weeks when Jan 1 is a Thursday, or a Wednesday in leap years.
            let first_weekday = (ordinal(year, 1, 1) % 7) as u32; // 0 = Monday
            if first_weekday == 3 || (first_weekday == 2 && is_leap(year)) {
                out_of_range = false;
            }
        }
        if out_of_range {
            return None;
        }
    }
    if day == 0 || day > 7 {
        return None;
    }
    let first_weekday = ordinal(year, 1, 1) % 7;
    // Monday of ISO week 1.
    let mut week1_monday = ordinal(year, 1, 1) - first_weekday;
    if first_weekday > 3 {
        week1_monday += 7;
    }
    let day_ord = week1_monday + i64::from(week - 1) * 7 + i64::from(day - 1);
    if day_ord < 0 {
        return None;
    }
    from_ordinal(day_ord)
}

fn parse_date(b: &[u8]) -> Option<(i32, u32, u32)> {
    let (year, mut p) = digits(b, 0, 4)?;
    let year = i32::try_from(year).ok()?;
    let sep = at(b, p) == b'-';
    if sep {
        p += 1;
    }
    if at(b, p) == b'W' {
        p += 1;
        let (week, np) = digits(b, p, 2)?;
        p = np;
        let day = if p < b.len() {
            if sep {
                if at(b, p) != b'-' {
                    return None;
                }
                p += 1;
            }
            digits(b, p, 1)?.0
        } else {
            1
        };
        return iso_to_ymd(year, week, day);
    }
    let (month, mut p) = digits(b, p, 2)?;
    if sep {
        if at(b, p) != b'-' {
            return None;
        }
        p += 1;
    }
    let (day, _) = digits(b, p, 2)?;
    Some((year, month, day))
}

/// Returns `Err` for a malformed component, `Ok(true)` when characters remain.
fn parse_hms(b: &[u8], start: usize, end: usize) -> Result<(bool, [u32; 4]), ()> {
    let mut vals = [0u32; 4];
    let mut p = start;
    let mut has_sep = true;
    let mut broke_for_fraction = false;
    for (i, slot) in vals.iter_mut().take(3).enumerate() {
        let (v, np) = digits(b, p, 2).ok_or(())?;
        *slot = v;
        p = np;
        let c = at(b, p);
        p += 1;
        if i == 0 {
            has_sep = c == b':';
        }
        if p >= end {
            return Ok((c != 0 && p - 1 < b.len(), vals));
        } else if has_sep && c == b':' {
            continue;
        } else if c == b'.' || c == b',' {
            broke_for_fraction = true;
            break;
        } else if !has_sep {
            p -= 1;
        } else {
            return Err(());
        }
    }
    let _ = broke_for_fraction;
    let remains = end.saturating_sub(p);
    let to_parse = remains.min(6);
    let (mut micro, mut np) = digits(b, p, to_parse).ok_or(())?;
    if to_parse == 0 {
        return Err(());
    }
    if to_parse < 6 {
        micro *= 10u32.pow(6 - to_parse as u32);
    }
    vals[3] = micro;
    while at(b, np).is_ascii_digit() {
        np += 1;
    }
    Ok((np < b.len(), vals))
}

fn parse_time(b: &[u8], start: usize) -> Option<([u32; 4], Option<i64>)> {
    let end = b.len();
    let mut tz = start;
    while tz < end {
        let c = b[tz];
        if c == b'Z' || c == b'+' || c == b'-' {
            break;
        }
        tz += 1;
    }
    if start >= end {
        // No time characters at all: the C parser reads the terminator as a non-digit.
        return None;
    }
    let (rest, vals) = parse_hms(b, start, tz).ok()?;
    if tz == end {
        return if rest { None } else { Some((vals, None)) };
    }
    if b[tz] == b'Z' {
        return if tz + 1 < end {
            None
        } else {
            Some((vals, Some(0)))
        };
    }
    let sign: i64 = if b[tz] == b'-' { -1 } else { 1 };
    let (rest, tzv) = parse_hms(b, tz + 1, end).ok()?;
    if rest {
        return None;
    }
    let offset = sign
        * (i64::from(tzv[0]) * 3_600_000_000
            + i64::from(tzv[1]) * 60_000_000
            + i64::from(tzv[2]) * 1_000_000
            + i64::from(tzv[3]));
    Some((vals, Some(offset)))
}

/// Short ASCII timestamps are rewritten in this much stack space instead of a `String`.
const STACK_TEXT: usize = 64;

fn parse_iso(text: &str) -> Option<Parsed> {
    match parse_utc_seconds(text.as_bytes()) {
        Some(parsed) => valid(parsed),
        None => parse_general(text),
    }
}

/// The layout nearly every timestamp here has, `YYYY-MM-DDTHH:MM:SS` in UTC (`Z` or
/// `+00:00`), read at fixed positions; `None` for any other text, which the general
/// reader takes. Where it answers, the fields are the general reader's (proptested).
fn parse_utc_seconds(b: &[u8]) -> Option<Parsed> {
    let utc = match b.len() {
        20 => b[19] == b'Z',
        25 => &b[19..] == b"+00:00",
        _ => false,
    };
    if !utc || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<u32> {
        b[from..to].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    Some(Parsed {
        year: i32::try_from(number(0, 4)?).ok()?,
        month: number(5, 7)?,
        day: number(8, 10)?,
        hour: number(11, 13)?,
        minute: number(14, 16)?,
        second: number(17, 19)?,
        micro: 0,
        offset_micros: Some(0),
    })
}

/// The general reader: every form Python's `fromisoformat` accepts.
fn parse_general(text: &str) -> Option<Parsed> {
    let mut stack = [0u8; STACK_TEXT];
    let owned: String;
    let b: &[u8] = if text.is_ascii() && text.len() + 5 * text.matches('Z').count() <= STACK_TEXT {
        // The common case: `Z` becomes `+00:00` in a stack buffer.
        let mut n = 0;
        for &byte in text.as_bytes() {
            let piece: &[u8] = if byte == b'Z' {
                b"+00:00"
            } else {
                std::slice::from_ref(&byte)
            };
            stack[n..n + piece.len()].copy_from_slice(piece);
            n += piece.len();
        }
        &stack[..n]
    } else {
        let replaced = text.replace('Z', "+00:00");
        owned = if !replaced.is_ascii() && replaced.chars().count() > 10 {
            // Python substitutes a non-ASCII separator at index 10 before parsing bytes.
            replaced
                .chars()
                .enumerate()
                .map(|(i, c)| if i == 10 && !c.is_ascii() { 'T' } else { c })
                .collect()
        } else {
            replaced
        };
        owned.as_bytes()
    };
    if b.len() < 7 {
        return None;
    }
    let sep = find_separator(b)?;
    let (year, month, day) = parse_date(&b[..sep.min(b.len())])?;
    let mut parsed = Parsed {
        year,
        month,
        day,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
        offset_micros: None,
    };
    if b.len() > sep {
        let (vals, offset) = parse_time(b, sep + 1)?;
        parsed.hour = vals[0];
        parsed.minute = vals[1];
        parsed.second = vals[2];
        parsed.micro = vals[3];
        parsed.offset_micros = offset;
    }
    valid(parsed)
}

/// `parsed` when its fields form a real date, time and offset.
fn valid(parsed: Parsed) -> Option<Parsed> {
    let ok = (1..=9999).contains(&parsed.year)
        && (1..=12).contains(&parsed.month)
        && parsed.day >= 1
        && parsed.day <= days_in_month(parsed.year, parsed.month)
        && parsed.hour < 24
        && parsed.minute < 60
        && parsed.second < 60
        && parsed
            .offset_micros
            .is_none_or(|o| o.abs() < 86_400_000_000);
    ok.then_some(parsed)
}

/// Parses an aware timestamp.
pub fn parse_aware(text: &str) -> Result<Instant, TimestampError> {
    let parsed = parse_iso(text).ok_or(TimestampError::Invalid)?;
    let offset = parsed.offset_micros.ok_or(TimestampError::Naive)?;
    let day = i128::from(ordinal(parsed.year, parsed.month, parsed.day));
    let micros = day * 86_400_000_000
        + i128::from(parsed.hour) * 3_600_000_000
        + i128::from(parsed.minute) * 60_000_000
        + i128::from(parsed.second) * 1_000_000
        + i128::from(parsed.micro)
        - i128::from(offset);
    Ok(Instant { micros })
}

/// The lenient timestamp field: `pystr().strip()`, parsed, original text kept.
pub fn timestamp_field(v: Option<&Value>, label: &str) -> Result<(String, Instant), FieldError> {
    let text = pystr_strip_cow(v);
    match parse_aware(&text) {
        Ok(instant) => Ok((text.into_owned(), instant)),
        Err(TimestampError::Invalid) => {
            Err(FieldError(format!("{label} must be an ISO timestamp")))
        }
        Err(TimestampError::Naive) => Err(FieldError(format!("{label} must include a timezone"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// The fixed-position UTC reader answers only in its layout, and then exactly as
        /// the general reader does (fields around their valid ranges, separators and
        /// zone varied).
        #[test]
        fn the_utc_fast_path_agrees_with_the_general_reader(
            date in (0u32..=10_000, 0u32..=13, 0u32..=32),
            time in (0u32..=24, 0u32..=60, 0u32..=60),
            seps in proptest::collection::vec(proptest::sample::select(vec!['-', ':', 'T', ' ', 'x', '5']), 5),
            zone in proptest::sample::select(vec!["Z", "+00:00", "-00:00", "+01:00", "", "z", "+0000", ".5Z"]),
            plausible in proptest::bool::ANY,
        ) {
            let sep = |i: usize, usual: char| if plausible { usual } else { seps[i] };
            let text = format!(
                "{:04}{}{:02}{}{:02}{}{:02}{}{:02}{}{:02}{zone}",
                date.0, sep(0, '-'), date.1, sep(1, '-'), date.2, sep(2, 'T'),
                time.0, sep(3, ':'), time.1, sep(4, ':'), time.2,
            );
            if let Some(fast) = parse_utc_seconds(text.as_bytes()) {
                proptest::prop_assert_eq!(valid(fast), parse_general(&text), "{}", text);
            }
            proptest::prop_assert_eq!(parse_iso(&text), parse_general(&text), "{}", text);
        }
    }

    #[test]
    fn accepts_the_permissive_python_forms() {
        let ok = [
            "2026-07-16T00:30:00+00:00",
            "2026-07-16T00:30:00Z",
            "2026-07-16 00:30:00Z",
            "2026-07-16T00:30Z",
            "2026-07-16T00Z",
            "20260716T003000Z",
            "20260716T003000+0000",
            "2026-07-16T00:30:00.5+00:00",
            "2026-07-16T00:30:00.123456789+00:00",
            "2026-07-16T00:30:00,5Z",
            "2026-W29-4T00:00Z",
            "2026-07-16T00:30:00+05",
            "2026-07-16T00:30:00+0530",
            "2026-07-16T00:30:00+00:00:30",
            "2026-07-16T00:30:00-00:00",
            "2026-07-16X00:30:00Z",
            "2026-07-16T00:30:00 +00:00",
        ];
        for text in ok {
            assert!(parse_aware(text).is_ok(), "{text} should parse");
        }
    }

    #[test]
    fn rejects_like_python() {
        let naive = ["2026-07-16", "2026-07-16T00:30:00", "2026-07-16Z"];
        for text in naive {
            assert_eq!(parse_aware(text), Err(TimestampError::Naive), "{text}");
        }
        let invalid = [
            "2026-07-16T24:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-07-16T00:00:60Z",
            "2026-07-16T00:00:00ZZ",
            "2026-07-16T00:00:00+24:00",
            "yesterday",
            "2026-07-16T00:00:00z",
        ];
        for text in invalid {
            assert_eq!(parse_aware(text), Err(TimestampError::Invalid), "{text}");
        }
    }

    #[test]
    fn compares_instants_across_offsets() {
        let a = parse_aware("2026-07-16T01:00:00+01:00").expect("valid");
        let b = parse_aware("2026-07-16T00:00:00Z").expect("valid");
        assert_eq!(a, b);
        let w = parse_aware("2026-W29-4T00:00Z").expect("valid");
        assert_eq!(w, parse_aware("2026-07-16T00:00Z").expect("valid"));
    }
}
