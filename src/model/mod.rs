//! What a checkpoint holds, as values: the JSON documents, transcripts and their chunking, the
//! writes a transcript records, secret redaction, and the `Entire-Checkpoint` trailer. Pure data and parsing: no repository, no git.

pub mod agent_writes;
pub mod documents;
pub mod redact;
pub mod trailers;
pub mod transcript;
