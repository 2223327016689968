//! Ref-name parsing: whatever `CheckpointRef::parse` accepts keeps its exact spelling, parses
//! again to the same value, is one of its ID's spellings, and its ID's canonical ref parses too.
//! `ref_name_for` builds only refs that parse.
#![no_main]

use entire_checkpoints::git::refname::{self, CheckpointRef, CHECKPOINT_REF_PREFIX};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(name) = refname::ref_name_for(s) {
        let r = CheckpointRef::parse(&name).expect("ref_name_for builds a parseable ref");
        assert_eq!(r.id().as_str(), s);
        assert!(r.is_canonical());
    }
    for name in [s.to_owned(), format!("{CHECKPOINT_REF_PREFIX}{s}")] {
        let Ok(r) = CheckpointRef::parse(&name) else {
            continue;
        };
        assert_eq!(r.name(), name);
        assert_eq!(CheckpointRef::parse(r.name()).unwrap(), r);
        assert!(
            CheckpointRef::spellings(r.id()).contains(&r),
            "{name:?} is not a spelling of its own ID"
        );
        let canonical = CheckpointRef::canonical(r.id());
        assert_eq!(CheckpointRef::parse(canonical.name()).unwrap(), canonical);
        assert_eq!(r.is_canonical(), r == canonical);
    }
});
