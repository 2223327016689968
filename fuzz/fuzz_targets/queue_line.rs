//! Push-queue lines: a line the queue accepts encodes back to a line that parses to the same
//! ref, and the encoding is one line; garbage of any kind is skipped, never a panic.
#![no_main]

use entire_checkpoints::store::queue::{encode_line, parse_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let Some(r) = parse_line(line) else {
            continue;
        };
        let encoded = encode_line(&r);
        assert!(encoded.ends_with('\n'));
        assert_eq!(
            encoded.lines().count(),
            1,
            "one record, one line: {encoded:?}"
        );
        assert_eq!(parse_line(&encoded), Some(r));
    }
});
