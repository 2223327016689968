//! The caps on what a read of hostile checkpoint data may cost, from the per-clone file only.

use serde_json::Value;

use super::{ConfigSource, SettingsFiles};

/// The caps on what a read of hostile checkpoint data may cost (docs/configuration.md,
/// "Limits"): set in the per-clone file's `limits` block only (the committed file's is
/// ignored: the data and the settings may come from the same stranger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most sessions one checkpoint may list (`limits.sessions_per_checkpoint`).
    pub sessions_per_checkpoint: usize,
    /// The most entries one tree of a checkpoint may hold (`limits.tree_entries`).
    pub tree_entries: usize,
    /// The most bytes one file of a checkpoint (a transcript: all its chunks) may hold to be
    /// read into memory (`limits.blob_bytes`); larger ones are only streamed.
    pub blob_bytes: u64,
    /// The most bytes one JSON document of a checkpoint (a root or session `metadata.json`)
    /// may hold to be parsed (`limits.document_bytes`): refused from its object header, never
    /// inflated.
    pub document_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            sessions_per_checkpoint: 100_000,
            tree_entries: 1_000_000,
            blob_bytes: 512 << 20,
            // The largest real document seen is 89 KB; a root `metadata.json` listing the
            // 100,000 sessions `sessions_per_checkpoint` allows is about 12 MiB.
            document_bytes: 16 << 20,
        }
    }
}

/// The names of the keys of the `limits` block, as messages name them.
pub const LIMIT_SESSIONS: &str = "limits.sessions_per_checkpoint";
/// See [`LIMIT_SESSIONS`].
pub const LIMIT_TREE_ENTRIES: &str = "limits.tree_entries";
/// See [`LIMIT_SESSIONS`].
pub const LIMIT_BLOB_BYTES: &str = "limits.blob_bytes";
/// See [`LIMIT_SESSIONS`].
pub const LIMIT_DOCUMENT_BYTES: &str = "limits.document_bytes";

impl SettingsFiles {
    /// The caps of the per-clone file's `limits` block, each key a whole number (at least 1;
    /// anything else, and a key it does not set, is the default).
    pub fn limits(&self) -> Limits {
        let block = self
            .parsed
            .iter()
            .find(|(_, source, _)| *source == ConfigSource::SettingsLocal)
            .and_then(|(_, _, v)| v.get("limits"));
        let get = |key: &str| {
            block
                .and_then(|b| b.get(key))
                .and_then(Value::as_u64)
                .filter(|&n| n > 0)
        };
        let d = Limits::default();
        let size = |key: &str, default: usize| {
            get(key).map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        Limits {
            sessions_per_checkpoint: size("sessions_per_checkpoint", d.sessions_per_checkpoint),
            tree_entries: size("tree_entries", d.tree_entries),
            blob_bytes: get("blob_bytes").unwrap_or(d.blob_bytes),
            document_bytes: get("document_bytes").unwrap_or(d.document_bytes),
        }
    }
}
