//! Transcript storage: chunking over the forge-safe size, reassembly, and the content hash.
//!
//! Chunk 0 is `full.jsonl`, chunk n is `full.jsonl.%03d`. Chunks are cut at line boundaries and
//! the newline at each cut is dropped, so joining the chunks with a single `\n` gives back the
//! exact input bytes (and reads chunks written by the reference, which joins the same way).

use data_encoding::HEXLOWER;
use sha2::{Digest, Sha256};

/// Largest chunk written (`MaxChunkSize`, 50 MiB): safely below GitHub's 100 MB file limit.
pub const MAX_CHUNK_SIZE: usize = 50 * 1024 * 1024;

/// The file name of chunk 0.
pub const TRANSCRIPT_FILE: &str = "full.jsonl";

/// Errors splitting a transcript.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    /// One line is larger than a chunk may be.
    #[error("transcript line {line} is {len} bytes, more than the {max}-byte chunk limit")]
    LineTooLong {
        /// 1-based line number.
        line: usize,
        /// The line's length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// The file name of chunk `n`.
pub fn chunk_name(n: usize) -> String {
    if n == 0 {
        TRANSCRIPT_FILE.to_owned()
    } else {
        format!("{TRANSCRIPT_FILE}.{n:03}")
    }
}

/// If `name` is a transcript chunk file name, its chunk number.
pub fn chunk_index(name: &str) -> Option<usize> {
    chunk_index_of(TRANSCRIPT_FILE, name)
}

/// If `name` is chunk `n` of a file whose chunk 0 is named `base` (`base`, `base.001`, ...),
/// `n`: the chunk names of `full.jsonl`, and of checkpoints v2's `raw_transcript`.
pub fn chunk_index_of(base: &str, name: &str) -> Option<usize> {
    if name == base {
        return Some(0);
    }
    let suffix = name.strip_prefix(base)?.strip_prefix('.')?;
    if suffix.len() >= 3 && suffix.bytes().all(|b| b.is_ascii_digit()) {
        suffix.parse().ok().filter(|&n| n > 0)
    } else {
        None
    }
}

/// Splits `data` into chunks of at most `max` bytes each, cutting only at newlines.
pub fn split(data: &[u8], max: usize) -> Result<Vec<&[u8]>, TranscriptError> {
    if data.len() <= max {
        return Ok(vec![data]);
    }
    let mut chunks = Vec::new();
    let mut start = 0;
    while data.len() - start > max {
        // The last newline at or before start+max ends this chunk.
        let window = &data[start..=start + max];
        match window.iter().rposition(|&b| b == b'\n') {
            Some(pos) => {
                chunks.push(&data[start..start + pos]);
                start += pos + 1;
            }
            None => {
                let line = data[..start].iter().filter(|&&b| b == b'\n').count() + 1;
                let len = data[start..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(data.len() - start);
                return Err(TranscriptError::LineTooLong { line, len, max });
            }
        }
    }
    chunks.push(&data[start..]);
    Ok(chunks)
}

/// Joins chunks back into the transcript.
pub fn join(chunks: &[Vec<u8>]) -> Vec<u8> {
    chunks.join(&b'\n')
}

/// `sha256:<64 lowercase hex>` of the stored transcript bytes, the content of `content_hash.txt`.
pub fn content_hash(data: &[u8]) -> String {
    format!("sha256:{}", HEXLOWER.encode(&Sha256::digest(data)))
}

impl crate::base::error::ExitStatus for TranscriptError {
    fn exit_code(&self) -> i32 {
        match self {
            TranscriptError::LineTooLong { .. } => crate::base::error::FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names() {
        assert_eq!(chunk_name(0), "full.jsonl");
        assert_eq!(chunk_name(1), "full.jsonl.001");
        assert_eq!(chunk_index("full.jsonl.012"), Some(12));
        assert_eq!(chunk_index("full.jsonl"), Some(0));
        assert_eq!(chunk_index("full.jsonl.000"), None);
        assert_eq!(chunk_index("full.jsonl.x"), None);
        assert_eq!(chunk_index("transcript.jsonl"), None);
    }

    #[test]
    fn hash_format() {
        let h = content_hash(b"hello");
        assert_eq!(h.len(), 71);
        assert_eq!(
            h,
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
    }

    #[test]
    fn small_is_one_chunk() {
        assert_eq!(split(b"a\nb\n", 10).unwrap(), vec![&b"a\nb\n"[..]]);
    }

    #[test]
    fn splits_at_lines() {
        let data = b"aaa\nbbb\nccc\n";
        let chunks = split(data, 5).unwrap();
        assert_eq!(chunks, vec![&b"aaa"[..], &b"bbb"[..], &b"ccc\n"[..]]);
        let owned: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
        assert_eq!(join(&owned), data);
    }

    #[test]
    fn long_line_is_an_error() {
        let err = split(b"ok\nxxxxxxxxxx\n", 5).unwrap_err();
        assert_eq!(
            err,
            TranscriptError::LineTooLong {
                line: 2,
                len: 10,
                max: 5
            }
        );
    }

    proptest! {
        #[test]
        fn split_join_round_trips(lines in proptest::collection::vec("[a-z]{0,6}", 0..40), trailing in any::<bool>()) {
            let mut data = lines.join("\n").into_bytes();
            if trailing { data.push(b'\n'); }
            let chunks = split(&data, 8).unwrap();
            prop_assert!(chunks.iter().all(|c| c.len() <= 8));
            let owned: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
            prop_assert_eq!(join(&owned), data);
        }
    }
}
