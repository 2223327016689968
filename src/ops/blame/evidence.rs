//! The one attribution rule, for any caller: the checkpoints some commits link, each read once
//! (those no local copy holds fetched first, in one batch), and the question every line is
//! asked: did a session of these checkpoints write this text into this file? `blame` asks it of
//! each line of a file; `stats` and `verify` of each line a commit adds.

use std::collections::HashMap;

use crate::agents::{self, AgentWrites};
use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::ops::writes_cache::{LinesOf, WritesCache};
use crate::topology::Topology;

use super::settle::Settled;
use super::{read, CheckpointEntry, Loaded, SessionEntry, WriteRef};

/// The checkpoints commits link, gathered before they are read: each once, however many
/// commits link it.
#[derive(Debug, Default)]
pub struct Links {
    ids: Vec<CheckpointId>,
}

impl Links {
    /// Adds the checkpoints one commit links; returns their indices (what [`Evidence::writer`]
    /// is asked with), in the order given.
    pub fn add(&mut self, ids: Vec<CheckpointId>) -> Vec<usize> {
        ids.into_iter()
            .map(|id| match self.ids.iter().position(|i| *i == id) {
                Some(at) => at,
                None => {
                    self.ids.push(id);
                    self.ids.len() - 1
                }
            })
            .collect()
    }

    /// Every checkpoint added, as indices.
    pub fn all(&self) -> Vec<usize> {
        (0..self.ids.len()).collect()
    }
}

/// A session's writes to one file: line text → the last write holding it. Hashed with foldhash
/// rather than std's SipHash (every line of the blamed file is looked up in every linked
/// session's index, a tenth of a warm blame's own work), seeded at random per process as std's
/// is, since the lines come from transcripts anyone could have written.
type FileIndex = HashMap<String, usize, foldhash::fast::RandomState>;

/// The write [`Evidence::writer`] found.
#[derive(Debug, Clone)]
pub struct Writer {
    /// The checkpoint, an index of [`Links::add`] (and of [`Evidence::checkpoints`]).
    pub checkpoint: usize,
    /// The tool call.
    pub write: WriteRef,
}

/// The linked checkpoints as read, and what their sessions wrote.
pub struct Evidence {
    ids: Vec<CheckpointId>,
    pub(super) loaded: Vec<Loaded>,
    /// Per (checkpoint, session), per file: built on the first question about that file.
    indexes: HashMap<(usize, usize), HashMap<String, FileIndex>>,
    /// Each checkpoint's entry (in [`Links::add`] order): whether it was read, its sessions.
    pub checkpoints: Vec<CheckpointEntry>,
    /// What the user should hear of: checkpoints not found or unreadable, transcripts absent
    /// or in no known format, a failed fetch.
    pub warnings: Vec<String>,
    /// Whether something that should be readable was not (a checkpoint or transcript that
    /// exists but cannot be read, a failed fetch): the attribution is incomplete.
    pub damaged: bool,
}

impl Evidence {
    /// Reads the checkpoints of `links`, and with `transcripts` what their sessions wrote, the
    /// lines of the files it names (without, no line is found written and the checkpoints list
    /// no session: what only asks whether they exist reads no transcript); those no local copy
    /// holds are fetched from `remote` first, in one batch (`None`: not fetched). `warnings` are
    /// said before the reads' own. [`Evidence::writer`] finds lines only in the files
    /// `transcripts` names.
    pub fn load(
        repo: &Repo,
        topo: &Topology<'_>,
        links: Links,
        remote: Option<&Remote>,
        notice: impl Fn(&str) + Clone + 'static,
        mut warnings: Vec<String>,
        transcripts: Option<LinesOf<'_>>,
    ) -> Evidence {
        let ids = links.ids;
        // Only what no local copy holds is fetched: a checkpoint remote that is down must not
        // hide what `origin`'s copy (or any other) holds.
        let elsewhere: Vec<CheckpointId> = topo.batch(|| {
            ids.iter()
                .filter(|id| !topo.held_here(id).unwrap_or(false))
                .cloned()
                .collect()
        });
        let missing = super::fetch_batch(repo, topo, remote, &elsewhere, notice, &mut warnings);
        topo.complete(&ids);
        let cache = WritesCache::in_common_dir(repo.common_dir());
        let read = topo
            .batch(|| read::read_all(topo, &repo.location(), &cache, &ids, &missing, transcripts));
        let mut settled = Settled {
            warnings,
            ..Settled::default()
        };
        let mut checkpoints = Vec::with_capacity(ids.len());
        let mut loaded = Vec::with_capacity(ids.len());
        for (id, read) in ids.iter().zip(read) {
            let (entry, l) = settled.settle(id, read);
            checkpoints.push(entry);
            loaded.push(l);
        }
        let summary = settled.summary();
        let Settled {
            mut warnings,
            damaged,
            ..
        } = settled;
        warnings.extend(summary);
        Evidence {
            ids,
            loaded,
            indexes: HashMap::new(),
            checkpoints,
            warnings,
            damaged,
        }
    }

    /// The write that shows `text` written into `file` (its path in the commit) by a session
    /// of the checkpoints `cps` (indices of [`Links::add`]), by the rule of docs/blame.md:
    /// the line is evidence on its own ([`agents::is_evidence`]), and a file-writing tool call
    /// for that file holds it, trailing whitespace trimmed. When several do, the last
    /// checkpoint's last session that does.
    pub fn writer(&mut self, cps: &[usize], file: &str, text: &str) -> Option<Writer> {
        if !agents::is_evidence(text) {
            return None;
        }
        let text = text.trim_end();
        let mut found = None;
        for &c in cps {
            for (s, writes) in self.loaded[c].sessions.iter().enumerate() {
                let Some(writes) = writes else { continue };
                let files = self.indexes.entry((c, s)).or_default();
                if !files.contains_key(file) {
                    files.insert(file.to_owned(), file_index(writes, file));
                }
                if let Some(&w) = files[file].get(text) {
                    found = Some((c, s, w));
                }
            }
        }
        let (c, s, w) = found?;
        let writes = self.loaded[c].sessions[s].as_ref()?;
        Some(Writer {
            checkpoint: c,
            write: write_ref(&self.loaded[c], &self.ids[c], s, writes, w),
        })
    }

    /// The session `slot` of checkpoint `c` (an index of [`Links::add`]), as read.
    pub fn session(&self, c: usize, slot: usize) -> &SessionEntry {
        &self.checkpoints[c].sessions[slot]
    }

    /// Checkpoint `c`'s ID.
    pub fn id(&self, c: usize) -> &CheckpointId {
        &self.ids[c]
    }
}

/// The lines `writes` wrote to `file`, each mapped to the last write that holds it.
fn file_index(writes: &AgentWrites, file: &str) -> FileIndex {
    let mut index = FileIndex::default();
    for (i, w) in writes.writes.iter().enumerate() {
        if agents::same_file(&w.file, file) {
            for line in &w.lines {
                index.insert(line.clone(), i);
            }
        }
    }
    index
}

fn write_ref(
    l: &Loaded,
    id: &CheckpointId,
    slot: usize,
    writes: &AgentWrites,
    w: usize,
) -> WriteRef {
    let write = &writes.writes[w];
    WriteRef {
        checkpoint_id: id.to_string(),
        session_index: slot,
        session_id: l
            .cp
            .as_ref()
            .map(|cp| cp.sessions[slot].session_id.clone())
            .unwrap_or_default(),
        tool: write.tool.clone(),
        timestamp: write.timestamp.clone(),
        transcript_line: write.entry,
        prompt: write.prompt,
    }
}
