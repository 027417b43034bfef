//! String literals as `json.dumps` writes them: which bytes need an escape (with and
//! without `ensure_ascii`), found eight at a time, and the escaped text itself. The
//! printers use both; the parser uses the same scan to find the end of a plain run of
//! string text. No I/O.

use super::Sink;

/// Bytes `json.dumps` escapes with `ensure_ascii=False`: `"`, `\\` and controls.
pub(super) const ESCAPE_RAW: [bool; 256] = escape_table(false);
/// Bytes `json.dumps` escapes with `ensure_ascii=True`: also everything past `~`.
pub(super) const ESCAPE_ASCII: [bool; 256] = escape_table(true);

const fn escape_table(ensure_ascii: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] =
            b < 0x20 || b == b'"' as usize || b == b'\\' as usize || (ensure_ascii && b > 0x7e);
        b += 1;
    }
    table
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `word` that equals `byte`, and perhaps of bytes above
/// an equal one (a borrow only runs upwards): the lowest bit set is always exact.
const fn eq_bytes(word: u64, byte: u8) -> u64 {
    let x = word ^ (LOW_BITS * byte as u64);
    x.wrapping_sub(LOW_BITS) & !x & HIGH_BITS
}

/// The length of the prefix of `bytes` that needs no escape: no `"`, `\\` or control
/// byte, and with `ensure_ascii` nothing past `~`. The same set ends a plain run of
/// string text for the parser. Eight bytes are tested at a time; the lowest flagged byte
/// of a word is the first special one.
pub(super) fn plain_prefix(bytes: &[u8], ensure_ascii: bool) -> usize {
    let special = |chunk: &[u8]| -> Option<usize> {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // A byte below 0x20: `(b - 0x20)` borrows into bit 7 while `b` itself has it clear.
        let mut hits = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS
            | eq_bytes(word, b'"')
            | eq_bytes(word, b'\\');
        if ensure_ascii {
            hits |= word & HIGH_BITS | eq_bytes(word, 0x7f);
        }
        (hits != 0).then(|| (hits.trailing_zeros() / 8) as usize)
    };
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        if let Some(at) = special(chunk) {
            return i + at;
        }
        i += 8;
    }
    if i == bytes.len() {
        return i;
    }
    // Fewer than eight bytes left: the last eight, overlapping bytes already known to be
    // plain, settle them at once.
    if let Some(from) = bytes.len().checked_sub(8) {
        return match special(&bytes[from..]) {
            Some(at) => from + at,
            None => bytes.len(),
        };
    }
    let table = if ensure_ascii {
        &ESCAPE_ASCII
    } else {
        &ESCAPE_RAW
    };
    while let Some(&b) = bytes.get(i) {
        if table[usize::from(b)] {
            break;
        }
        i += 1;
    }
    i
}

/// Writes a JSON string literal with Python's escaping rules.
///
/// Runs of bytes that need no escape are copied at once; only `"`, `\\`, control
/// characters and (with `ensure_ascii`) everything outside `' '..='~'` are escaped.
pub fn write_string<S: Sink + ?Sized>(out: &mut S, s: &str, ensure_ascii: bool) {
    out.push_str("\"");
    let bytes = s.as_bytes();
    let mut i = 0;
    loop {
        let run = i + plain_prefix(&bytes[i..], ensure_ascii);
        out.push_str(&s[i..run]);
        i = run;
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            0..0x20 | 0x7f => push_unicode_escape(out, u16::from(b)),
            _ => {
                // ensure_ascii and a non-ASCII character: its UTF-16 units.
                let c = s[i..].chars().next().unwrap_or('\u{fffd}');
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    push_unicode_escape(out, *unit);
                }
                i += c.len_utf8();
                continue;
            }
        }
        i += 1;
    }
    out.push_str("\"");
}

/// `\uXXXX` with lowercase hex digits.
fn push_unicode_escape<S: Sink + ?Sized>(out: &mut S, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = *b"\\u0000";
    for (k, slot) in buf[2..].iter_mut().enumerate() {
        *slot = HEX[usize::from((unit >> (12 - 4 * k)) & 0xf)];
    }
    // Only ASCII was written.
    out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
}
