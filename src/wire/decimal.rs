//! Unsigned integers in decimal, written on the stack: the digits that the JSON printer,
//! the ledger's order keys and its stored subject states are made of, without the
//! formatting machinery (which cost more than the rest of those texts).

/// The decimal digits of one integer (a `u128` has at most 39).
pub struct Digits {
    bytes: [u8; 39],
    start: usize,
}

impl Digits {
    /// The digits of `n`, without leading zeros (`0` for zero).
    pub fn of(n: u128) -> Digits {
        let mut bytes = [b'0'; 39];
        let mut start = bytes.len();
        let mut put = |digit: u8| {
            start -= 1;
            bytes[start] = b'0' + digit;
        };
        // Every integer the crate prints fits in 64 bits, whose division is far cheaper.
        match u64::try_from(n) {
            Ok(mut n) => loop {
                put((n % 10) as u8);
                n /= 10;
                if n == 0 {
                    break;
                }
            },
            Err(_) => {
                let mut n = n;
                while n > 0 {
                    put((n % 10) as u8);
                    n /= 10;
                }
            }
        }
        Digits { bytes, start }
    }

    /// The digits.
    pub fn as_str(&self) -> &str {
        self.padded(0)
    }

    /// The digits, zero-padded on the left to at least `width` (at most 39), as `{:0width$}`.
    pub fn padded(&self, width: usize) -> &str {
        let start = self
            .start
            .min(self.bytes.len() - width.min(self.bytes.len()));
        // Only ASCII digits were written.
        std::str::from_utf8(&self.bytes[start..]).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Digits;

    #[test]
    fn digits_are_what_the_formatter_writes() {
        for n in [
            0u128,
            7,
            10,
            99,
            1_767_225_600_000_000,
            u128::from(u64::MAX),
            u128::from(u64::MAX) + 1,
            u128::MAX,
        ] {
            assert_eq!(Digits::of(n).as_str(), format!("{n}"));
            assert_eq!(Digits::of(n).padded(20), format!("{n:020}"));
            assert_eq!(Digits::of(n).padded(39), format!("{n:039}"));
        }
    }
}
