//! The 8-byte header: lowercase hex out, `0-9 a-f A-F` in, nothing else.

use crate::HEADER_LEN;

/// Marks a byte that is not a hexadecimal digit in [`HEX_VALUE`].
const INVALID: u8 = 0xff;

/// The value of every byte as a hexadecimal digit, or [`INVALID`]. Built at compile time
/// from the explicit match in [`hex_digit`], so that the hot loop is one table load per
/// byte while the accepted set stays readable (never `from_str_radix`, which takes `+`).
static HEX_VALUE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut byte = 0;
    while byte < table.len() {
        table[byte] = hex_digit(byte as u8);
        byte += 1;
    }
    table
};

/// The accepted header digits: exactly `0-9`, `a-f` and `A-F`.
const fn hex_digit(byte: u8) -> u8 {
    match byte {
        b'0'..=b'9' => byte - b'0',
        b'a'..=b'f' => byte - b'a' + 10,
        b'A'..=b'F' => byte - b'A' + 10,
        _ => INVALID,
    }
}

/// Whether `byte` may appear in a header.
pub(crate) fn is_hex_digit(byte: u8) -> bool {
    HEX_VALUE[usize::from(byte)] != INVALID
}

/// Reads the body length from a complete header, or returns the index (0..8) and value of
/// the first byte that is not a hexadecimal digit.
pub(crate) fn parse(header: &[u8; HEADER_LEN]) -> Result<u32, (usize, u8)> {
    let mut value: u32 = 0;
    let mut seen_invalid: u8 = 0;
    for &byte in header {
        let digit = HEX_VALUE[usize::from(byte)];
        seen_invalid |= digit;
        value = (value << 4) | u32::from(digit & 0x0f);
    }
    if seen_invalid & 0xf0 == 0 {
        Ok(value)
    } else {
        let bad = header
            .iter()
            .enumerate()
            .find(|(_, byte)| !is_hex_digit(**byte));
        Err(bad.map_or((0, header[0]), |(index, &byte)| (index, byte)))
    }
}

/// The header announcing a body of `len` bytes: 8 lowercase hexadecimal digits.
///
/// ```
/// assert_eq!(&curupira_framing::encode_header(44), b"0000002c");
/// assert_eq!(&curupira_framing::encode_header(u32::MAX), b"ffffffff");
/// ```
pub fn encode_header(len: u32) -> [u8; HEADER_LEN] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut header = [b'0'; HEADER_LEN];
    let mut rest = len;
    for slot in header.iter_mut().rev() {
        *slot = DIGITS[(rest & 0x0f) as usize];
        rest >>= 4;
    }
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_exactly_the_hex_digits() {
        for byte in 0..=u8::MAX {
            let expected = byte.is_ascii_hexdigit();
            assert_eq!(is_hex_digit(byte), expected, "byte 0x{byte:02x}");
        }
    }

    #[test]
    fn parses_both_cases() {
        assert_eq!(parse(b"0000002c"), Ok(44));
        assert_eq!(parse(b"0000002C"), Ok(44));
        assert_eq!(parse(b"DeadBeef"), Ok(0xdead_beef));
        assert_eq!(parse(b"ffffffff"), Ok(u32::MAX));
        assert_eq!(parse(b"00000000"), Ok(0));
    }

    #[test]
    fn points_at_the_first_bad_byte() {
        assert_eq!(parse(b"+000002c"), Err((0, b'+')));
        assert_eq!(parse(b"0x00002c"), Err((1, b'x')));
        assert_eq!(parse(b"0000 02c"), Err((4, b' ')));
        assert_eq!(parse(b"0000002g"), Err((7, b'g')));
        assert_eq!(parse(b"-0000-2c"), Err((0, b'-')));
    }

    #[test]
    fn encodes_lowercase_and_round_trips() {
        assert_eq!(&encode_header(0), b"00000000");
        assert_eq!(&encode_header(0xABCD_EF01), b"abcdef01");
        for len in [0, 1, 15, 16, 255, 4096, 0x00ff_ffff, 0x1000_0000, u32::MAX] {
            assert_eq!(parse(&encode_header(len)), Ok(len));
        }
    }
}
