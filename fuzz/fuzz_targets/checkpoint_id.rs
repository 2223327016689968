//! Checkpoint ID parsing: whatever `CheckpointId::parse` accepts prints back as the same string,
//! parses again to the same ID, names a ref that parses back to it, and is a valid prefix of
//! itself; whatever it refuses, `kind_of` refuses too.
#![no_main]

use entire_checkpoints::base::id::{self, CheckpointId};
use entire_checkpoints::git::refname::CheckpointRef;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = id::could_be_prefix(s);
    let _ = id::shard_for(s);
    let Ok(parsed) = CheckpointId::parse(s) else {
        assert!(
            id::kind_of(s).is_none(),
            "kind_of accepts what parse refuses: {s:?}"
        );
        return;
    };
    assert_eq!(parsed.as_str(), s);
    assert_eq!(parsed.to_string(), s);
    assert_eq!(CheckpointId::parse(&parsed.to_string()).unwrap(), parsed);
    assert_eq!(id::kind_of(s), Some(parsed.kind()));
    assert!(
        id::could_be_prefix(s),
        "a valid ID is a prefix of itself: {s:?}"
    );
    assert_eq!(parsed.shard(), id::shard_for(s));
    assert_eq!(parsed.v1_path().replace('/', ""), s);
    let _ = parsed.display_short();
    let _ = parsed.ulid_time_ms();
    let canonical = CheckpointRef::canonical(&parsed);
    let back = CheckpointRef::parse(canonical.name()).expect("a canonical ref parses");
    assert_eq!(back.id(), &parsed);
    assert!(back.is_canonical());
    if let Some(folded) = CheckpointRef::folded(&parsed) {
        let back = CheckpointRef::parse(folded.name()).expect("a folded ref parses");
        assert_eq!(back.id(), &parsed);
        assert!(!back.is_canonical());
    }
});
