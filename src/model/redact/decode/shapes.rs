//! The two shapes of secret without a rule of their own: a PEM private key body without its
//! header (DER of a private key, or an OpenSSH key), and a bare AWS secret access key.

use std::ops::Range;

use super::super::secret::entropy;
use super::super::PLACEHOLDER;

/// Whether `bytes` are a private key: DER that opens as PKCS #1, PKCS #8 or SEC 1 keys do (a
/// sequence whose first element is the version 0 or 1, then an integer, an algorithm or an
/// octet string), or an OpenSSH private key. A certificate or a public key opens otherwise.
pub(super) fn is_private_key(bytes: &[u8]) -> bool {
    if bytes.starts_with(b"openssh-key-v1\0") {
        return true;
    }
    let header = match bytes {
        [0x30, 0x80, ..] => return false,
        [0x30, 0x81, _, rest @ ..] => rest,
        [0x30, 0x82, _, _, rest @ ..] => rest,
        [0x30, 0x83, _, _, _, rest @ ..] => rest,
        [0x30, len, rest @ ..] if *len < 0x80 => rest,
        _ => return false,
    };
    bytes.len() >= 32 && matches!(header, [0x02, 0x01, 0x00 | 0x01, 0x02 | 0x30 | 0x04, ..])
}

/// The bare AWS secret access key the maximal run `text[run]` of `[A-Za-z0-9/+]` is, if it is
/// one: exactly 40 of those characters (after an escape's letter: `\n`, `\u005f`) with upper and
/// lower case letters and digits, few `/` and `+`, not all hex, and random (high entropy).
/// [`super::scan::candidates`] finds the runs.
pub(super) fn aws_key(text: &[u8], run: Range<usize>) -> Option<Range<usize>> {
    let i = run.start;
    // An escape, at any depth of nesting (`\n`, `\\n`, `\u005f`), starts no key.
    let after_backslash = i > 0 && text[i - 1] == b'\\';
    let start = match text[i] {
        b'u' if after_backslash
            && text
                .get(i + 1..i + 5)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
        {
            i + 5
        }
        b'n' | b'r' | b't' | b'b' | b'f' | b'u' if after_backslash => i + 1,
        _ => i,
    };
    let end = run.end;
    let word = |b: &u8| b.is_ascii_alphanumeric() || b"_-+/.".contains(b);
    let t = &text[start..end];
    (t.len() == 40
        && (start > i || start == 0 || !word(&text[start - 1]))
        && !text.get(end).is_some_and(|b| word(b) || *b == b'=')
        && looks_random_key(t)
        && memchr::memmem::find(t, PLACEHOLDER.as_bytes()).is_none())
    .then_some(start..end)
}

fn looks_random_key(t: &[u8]) -> bool {
    let has = |f: fn(&u8) -> bool| t.iter().any(f);
    let symbols = t.iter().filter(|&&b| b == b'/' || b == b'+').count();
    has(u8::is_ascii_uppercase)
        && has(u8::is_ascii_lowercase)
        && has(u8::is_ascii_digit)
        && symbols <= 3
        && !t.windows(2).any(|w| w == b"//")
        && entropy(t) >= 4.3
}
