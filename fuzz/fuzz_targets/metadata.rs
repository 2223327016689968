//! The metadata documents: a root or session `metadata.json` that decodes re-encodes to a
//! document that decodes to the same value, and re-encoding that is byte-stable.
#![no_main]

use entire_checkpoints::model::documents::{CheckpointSummary, SessionMetadata, TokenUsage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = CheckpointSummary::from_json(data) {
        let bytes = doc.to_json();
        let again = CheckpointSummary::from_json(&bytes).expect("re-encoded summary decodes");
        assert_eq!(again, doc);
        assert_eq!(again.to_json(), bytes);
    }
    if let Ok(doc) = SessionMetadata::from_json(data) {
        let bytes = doc.to_json();
        let again = SessionMetadata::from_json(&bytes).expect("re-encoded session decodes");
        assert_eq!(again, doc);
        assert_eq!(again.to_json(), bytes);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = TokenUsage::parse_input(text);
    }
});
