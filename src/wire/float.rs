//! Python's `repr()` and `round(x, 6)` of a float: the one place that turns an `f64` into
//! the text Python would print for it.
//!
//! Owns the shortest round-trip digits in Python's layout (fixed notation for exponents
//! -4..16, else `d.ddde±XX`; `inf`, `nan`, `-0.0`), written on the stack ([`FloatBuf`]),
//! with exact ties settled as CPython settles them, and the correctly rounded
//! `round(x, 6)`. It depends on nothing else in the crate: the JSON printer
//! ([`crate::wire::json`]) and the `str()`/`repr()` conventions ([`crate::wire::pyfmt`])
//! both build on it. Pure and deterministic.

use std::fmt::Write as _;

/// `repr(f)` for a finite or non-finite float (`inf`, `nan` as Python prints them).
pub fn float_repr(f: f64) -> String {
    float_repr_in(f, &mut FloatBuf::new()).to_owned()
}

/// Stack space for the text of one float (the longest `repr` takes 24 bytes).
#[derive(Debug, Clone)]
pub struct FloatBuf {
    bytes: [u8; 48],
    len: usize,
}

impl FloatBuf {
    pub fn new() -> FloatBuf {
        FloatBuf {
            bytes: [0; 48],
            len: 0,
        }
    }

    fn push(&mut self, b: &[u8]) {
        let end = (self.len + b.len()).min(self.bytes.len());
        let n = end - self.len;
        self.bytes[self.len..end].copy_from_slice(&b[..n]);
        self.len = end;
    }

    fn as_str(&self) -> &str {
        // Only ASCII is ever pushed.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl Default for FloatBuf {
    fn default() -> Self {
        FloatBuf::new()
    }
}

impl std::fmt::Write for FloatBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// [`float_repr`] written into `buf` instead of a new `String`.
pub fn float_repr_in(f: f64, buf: &mut FloatBuf) -> &str {
    buf.len = 0;
    if f.is_nan() {
        buf.push(b"nan");
    } else if f.is_infinite() {
        buf.push(if f > 0.0 { b"inf" } else { b"-inf" });
    } else if f == 0.0 {
        buf.push(if f.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
    } else {
        let mut digit_buf = [0u8; 24];
        let (n, exp) = shortest_digits(f.abs(), &mut digit_buf);
        let digits = &digit_buf[..n];
        let negative = f.is_sign_negative();
        if negative {
            buf.push(b"-");
        }
        if (-4..16).contains(&exp) {
            // Fixed notation with at least one digit after the point.
            let point = exp + 1; // digits before the decimal point
            if point <= 0 {
                buf.push(b"0.");
                for _ in 0..(-point) {
                    buf.push(b"0");
                }
                buf.push(digits);
            } else {
                let point = point as usize;
                if digits.len() <= point {
                    buf.push(digits);
                    for _ in digits.len()..point {
                        buf.push(b"0");
                    }
                    buf.push(b".0");
                } else {
                    buf.push(&digits[..point]);
                    buf.push(b".");
                    buf.push(&digits[point..]);
                }
            }
        } else {
            buf.push(&digits[..1]);
            if digits.len() > 1 {
                buf.push(b".");
                buf.push(&digits[1..]);
            }
            let _ = write!(buf, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
        }
    }
    buf.as_str()
}

/// The shortest digits that read back as `f` (finite, positive), written into `out`
/// without trailing zeros, with the decimal exponent of the first digit. Rust's `{:e}`
/// finds them, written into a stack buffer, not a `String`; an exact tie between two
/// shortest forms is then settled as Python settles it ([`settle_tie`]).
fn shortest_digits(f: f64, out: &mut [u8; 24]) -> (usize, i32) {
    if let Some(found) = six_decimal_digits(f, out) {
        return found;
    }
    let mut sci = FloatBuf::new();
    let _ = write!(sci, "{f:e}");
    let sci = sci.as_str();
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut n = 0;
    for &b in mantissa.as_bytes() {
        if b.is_ascii_digit() && n < out.len() {
            out[n] = b;
            n += 1;
        }
    }
    settle_tie(f, out, n);
    (n, exp)
}

/// When `f` lies exactly halfway between two shortest forms of `n` digits, Python's
/// `repr` takes the one whose last digit is even, where `{:e}` takes the upper one
/// (671455930560847.25 is `...847.2` in Python). Such a tie needs the exact decimal
/// expansion of `f` to end one digit after the shortest form, in a 5: `f = m * 2^-k`
/// (m odd) has the `m * 5^k` digits, so only small `k` can tie. Rewrites the last digit
/// in place when that is the case and the even form reads back as `f`.
fn settle_tie(f: f64, out: &mut [u8; 24], n: usize) {
    if n == 0 || n >= out.len() || (out[n - 1] - b'0').is_multiple_of(2) {
        return;
    }
    let bits = f.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let mut mantissa = bits & ((1 << 52) - 1);
    let mut exp2 = if biased == 0 {
        -1074
    } else {
        mantissa |= 1 << 52;
        biased - 1075
    };
    if mantissa == 0 {
        return;
    }
    let zeros = mantissa.trailing_zeros();
    mantissa >>= zeros;
    exp2 += zeros as i32;
    if !(-26..0).contains(&exp2) {
        return;
    }
    let exact = u128::from(mantissa) * 5u128.pow(exp2.unsigned_abs());
    let digits = exact.checked_ilog10().map_or(1, |d| d as usize + 1);
    if digits != n + 1 {
        return;
    }
    let lower = exact / 10;
    let shown = out[..n]
        .iter()
        .fold(0u128, |acc, &d| acc * 10 + u128::from(d - b'0'));
    let even = if shown == lower { lower + 1 } else { lower };
    if (shown != lower && shown != lower + 1) || !even.is_multiple_of(2) || even / 10 != shown / 10
    {
        return;
    }
    let mut text = FloatBuf::new();
    let _ = write!(text, "{}", even);
    let candidate = text.as_str();
    let mut check = FloatBuf::new();
    // `exact` is `f * 10^k`, and `even` counts units of its second-to-last digit.
    let _ = write!(check, "{candidate}e{}", exp2 + 1);
    if check.as_str().parse::<f64>() == Ok(f) {
        out[n - 1] = b'0' + (even % 10) as u8;
    }
}

/// [`shortest_digits`] without the formatting machinery for a value (finite, positive)
/// below 1e9 that is exactly `n / 10^6` for an integer `n`, as every `round(x, 6)` result
/// is: the digits of `n` are then the only shortest form that reads back as `f` (any
/// other decimal with as few digits is a multiple of 10^-6 apart from it, far more than
/// half a unit in the last place). `None` for every other value.
fn six_decimal_digits(f: f64, out: &mut [u8; 24]) -> Option<(usize, i32)> {
    if !f.is_finite() || f >= 1e9 {
        return None;
    }
    let scaled = (f * 1e6).round();
    if scaled < 1.0 || scaled / 1e6 != f {
        return None;
    }
    // Below 1e15, so exact as an integer.
    let mut n = scaled as u64;
    let mut reversed = [0u8; 20];
    let mut len = 0;
    while n > 0 && len < reversed.len() {
        reversed[len] = b'0' + (n % 10) as u8;
        n /= 10;
        len += 1;
    }
    for (slot, &digit) in out.iter_mut().zip(reversed[..len].iter().rev()) {
        *slot = digit;
    }
    let mut kept = len.min(out.len());
    while kept > 1 && out[kept - 1] == b'0' {
        kept -= 1;
    }
    Some((kept, len as i32 - 7))
}

/// Text formatted on the stack: 64 bytes, enough for `{:.6}` of any |x| < 1e56; a
/// longer text is refused (`fmt::Error`) and formatted on the heap instead.
struct StackText {
    bytes: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        StackText {
            bytes: [0; 64],
            len: 0,
        }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Python's `round(x, 6)`: correctly rounded on the exact binary value.
pub fn round6(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if let Some(rounded) = round6_far_from_ties(x) {
        return rounded;
    }
    round6_exact(x)
}

/// The largest `|x * 1e6|` the fast path takes: below 2^31, the product's rounding error
/// (half an ulp, at most 2^-22) stays far inside [`TIE_MARGIN`].
const FAST_LIMIT: f64 = 2_147_483_648.0;

/// How far from a tie (`.5` in millionths) the fast path's product must be.
const TIE_MARGIN: f64 = 1e-4;

/// `round(x, 6)` when `x` in millionths is clearly not near a tie: the nearest count of
/// millionths is then the rounded product, and that count divided by 10^6 (both exact in
/// an `f64`, so the quotient is correctly rounded) is the `f64` nearest to the decimal
/// that Python would round to, which is what parsing that decimal gives. `None` near a
/// tie or out of range.
fn round6_far_from_ties(x: f64) -> Option<f64> {
    // `x` is finite, so `scaled` is a number (perhaps infinite, then out of range).
    let scaled = x * 1e6;
    if scaled.abs() >= FAST_LIMIT {
        return None;
    }
    let fraction = scaled - scaled.floor();
    if (fraction - 0.5).abs() < TIE_MARGIN {
        return None;
    }
    let millionths = scaled.round();
    if millionths == 0.0 {
        // Python keeps the sign of the input for a zero result.
        return Some(if x.is_sign_negative() { -0.0 } else { 0.0 });
    }
    Some(millionths / 1e6)
}

/// `round(x, 6)` by the exact decimal expansion, for every finite `x`.
fn round6_exact(x: f64) -> f64 {
    // `{:.6}` rounds the exact decimal expansion half-to-even, as CPython's dtoa does.
    let mut buf = StackText::default();
    let rounded: f64 = if write!(buf, "{x:.6}").is_ok() {
        buf.as_str().parse().unwrap_or(x)
    } else {
        format!("{x:.6}").parse().unwrap_or(x)
    };
    if rounded == 0.0 {
        // Python keeps the sign of the input for a zero result.
        if x.is_sign_negative() { -0.0 } else { 0.0 }
    } else {
        rounded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python_table() {
        let table: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (30.0, "30.0"),
            (0.9, "0.9"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345.6, "123456789012345.6"),
            (1e-6, "1e-06"),
            (1.5e-7, "1.5e-07"),
            (5e-7, "5e-07"),
            (0.0001, "0.0001"),
            (0.00012, "0.00012"),
            (-0.0, "-0.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-2.5, "-2.5"),
            (1e22, "1e+22"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.42, "0.42"),
            (123.0, "123.0"),
        ];
        for (f, want) in table {
            assert_eq!(float_repr(*f), *want, "repr of {f:e}");
        }
    }

    #[test]
    fn exact_ties_take_the_even_digit_as_python_does() {
        // Values halfway between two shortest forms, with Python's repr of each.
        let ties = [
            "1142643739891557.2",
            "1933098805650895.8",
            "105380157916191.88",
            "1729906760687039.2",
            "2025568270395031.8",
            "178856249101560.38",
            "4008952189445.5938",
            "1666157303937071.8",
            "34765225284350.062",
            "270935487290111.62",
            "1549701294616903.8",
            "1597734842333641.8",
            "1497959055766329.8",
            "1986962429672441.8",
            "1424922634911896.2",
            "1490642310747352.2",
            "1761579764179350.8",
            "1610086221870962.8",
            "186487443267932.38",
            "222153163234355.88",
            "1352190126061453.8",
            "1648832146109399.2",
            "2055440325106415.2",
            "1433128624851278.8",
            "1134736535829397.2",
            "259010387717070.38",
            "1846080341275156.8",
            "1099766246347220.8",
            "1753864832940791.2",
            "1559653097641179.8",
            "1928661577334661.2",
            "2137523655806095.2",
            "1711035208633394.2",
            "783184069883437.2",
            "1309603548468705.2",
            "617796956865646.8",
            "1864263932393968.8",
            "1627322734557447.2",
            "1426721206184416.2",
            "1277913292562958.8",
        ];
        for text in ties {
            let f: f64 = text.parse().expect("table value");
            assert_eq!(float_repr(f), text, "repr of {f:e}");
            assert_eq!(float_repr(-f), format!("-{text}"));
        }
        for (exact, want) in [
            ("671455930560847.25", "671455930560847.2"),
            ("671455930560847.75", "671455930560847.8"),
        ] {
            let f: f64 = exact.parse().expect("exact value");
            assert_eq!(float_repr(f), want);
        }
    }

    #[test]
    fn round6_formats_long_values_on_the_heap_like_short_ones() {
        // Around the 64-byte stack buffer's limit and far past it.
        for x in [
            123.4567895,
            -0.0000005,
            9.99e55,
            1e56,
            -1e56,
            1.5e57,
            1e100,
            -1e300,
            f64::MAX,
        ] {
            let heap: f64 = format!("{x:.6}").parse().unwrap_or(f64::NAN);
            assert_eq!(round6(x).to_bits(), heap.to_bits(), "{x:e}");
        }
    }

    #[test]
    fn round6_is_correctly_rounded() {
        assert_eq!(round6(5e-7), 0.0);
        assert_eq!(round6(1.5e-6), 2e-6); // exact value is just above the tie
        assert_eq!(round6(0.9999995), 1.0);
        assert_eq!(round6(0.123456789), 0.123457);
        assert_eq!(float_repr(round6(-0.0)), "-0.0");
        assert_eq!(float_repr(round6(-1e-9)), "-0.0");
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::{float_repr, round6, round6_exact};

    /// `round6` and the exact decimal path agree bit for bit on `x`.
    fn agrees(x: f64) -> Result<(), TestCaseError> {
        prop_assert_eq!(round6(x).to_bits(), round6_exact(x).to_bits(), "{:e}", x);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The fast path of `round6` gives what the exact path gives: on any float, on
        /// the values the reducer rounds (confidences, utilities, sums), and on the
        /// floats nearest to every kind of tie (`k + 0.5` millionths) and their
        /// neighbours.
        #[test]
        fn round6_fast_path_agrees_with_the_exact_one(
            bits in any::<u64>(),
            small in -2000.0f64..2000.0,
            unit in 0.0f64..1.0,
            k in -2_000_000_000i64..2_000_000_000,
            step in -3i64..=3,
        ) {
            let any = f64::from_bits(bits);
            prop_assume!(any.is_finite());
            agrees(any)?;
            agrees(small)?;
            agrees(unit)?;
            agrees(unit * unit / 3.0)?;
            let tie = (k as f64 + 0.5) / 1e6;
            let near = f64::from_bits(tie.to_bits().wrapping_add_signed(step));
            agrees(tie)?;
            agrees(near)?;
            agrees(k as f64 / 1e6)?;
            agrees(-near)?;
        }

        /// `repr` is the shortest text that reads back to the same float, in Python's
        /// layout: fixed notation with a `.` for exponents -4..16, else `d[.ddd]e±XX`.
        #[test]
        fn float_repr_round_trips_in_python_layout(bits in any::<u64>()) {
            let f = f64::from_bits(bits);
            prop_assume!(f.is_finite());
            let text = float_repr(f);
            let back: f64 = text.parse().expect("repr parses");
            prop_assert_eq!(back.to_bits(), f.to_bits());
            let abs = f.abs();
            if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
                let (mantissa, exp) = text.split_once('e').expect("exponent form");
                prop_assert!(exp.starts_with('+') || exp.starts_with('-'));
                prop_assert!(exp.len() >= 3);
                prop_assert!(!mantissa.ends_with(".0"));
            } else {
                prop_assert!(text.contains('.') && !text.contains('e'), "{}", text);
            }
        }
    }

    /// The digits and exponent of Rust's `{:e}` (the general path of `shortest_digits`).
    fn sci_digits(f: f64) -> (String, i32) {
        let sci = format!("{f:e}");
        let (mantissa, exp) = sci.split_once('e').expect("exponent");
        let digits = mantissa.chars().filter(char::is_ascii_digit).collect();
        (digits, exp.parse().expect("int"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The six-decimal fast path gives exactly the `{:e}` digits for every value it
        /// takes (rounded values of any size and scale), and declines the others.
        #[test]
        fn six_decimal_digits_match_the_general_path(
            n in 1u64..1_000_000_000_000_000,
            shift in 0u32..16,
            bits in any::<u64>(),
        ) {
            let rounded = (n / 10u64.pow(shift)).max(1) as f64 / 1e6;
            let any = f64::from_bits(bits).abs();
            for f in [rounded, any] {
                prop_assume!(f.is_finite() && f > 0.0);
                let mut out = [0u8; 24];
                if let Some((len, exp)) = super::six_decimal_digits(f, &mut out) {
                    let digits = std::str::from_utf8(&out[..len]).expect("ascii").to_owned();
                    prop_assert_eq!((digits, exp), sci_digits(f), "{:e}", f);
                } else {
                    prop_assert!(f >= 1e9 || (f * 1e6).round() / 1e6 != f, "{:e}", f);
                }
            }
        }
    }
}
