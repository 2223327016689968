//! What a checkpoint holds, as values: the JSON documents, transcripts and their chunking,
//! secret redaction, and the `Entire-Checkpoint` trailer. Pure data and parsing: no repository, no git.

pub mod documents;
pub mod links;
pub mod redact;
pub mod trailers;
pub mod transcript;
