//! What was read of each linked checkpoint, settled into its entry of the report: each
//! session's transcript status, the warnings, and whether the command fails after its output.

use crate::agents::TranscriptFormat;
use crate::base::id::CheckpointId;

use super::read::{transcript_path, CheckpointRead, TranscriptMiss};
use super::{CheckpointEntry, CheckpointStatus, Loaded, SessionEntry, TranscriptStatus};

/// What settling all the checkpoints gathered besides their entries.
#[derive(Default)]
pub(super) struct Settled {
    /// Warnings, one per checkpoint or session that gave nothing for a reason to hear of.
    pub(super) warnings: Vec<String>,
    /// The transcripts in no format whose writes are read (checkpoint, session, file), for
    /// one summary line.
    pub(super) unread: Vec<String>,
    /// The absent transcript blobs, in the order met, each with why and the sessions
    /// (`checkpoint <id> session <n>`) whose transcript it is: checkpoints that share a blob
    /// share one warning.
    pub(super) absent: Vec<AbsentBlob>,
    /// Whether something that exists could not be read (the command then fails after its
    /// output).
    pub(super) damaged: bool,
}

/// A transcript blob absent from the object store, and the sessions whose transcript it is.
pub(super) struct AbsentBlob {
    oid: String,
    why: String,
    sessions: Vec<String>,
}

/// The most sessions an absent blob's warning names; the rest are counted.
const NAMED_SESSIONS: usize = 5;

impl AbsentBlob {
    /// Its warning: as for any absent transcript when one session has it, else one line for
    /// all of them.
    fn warning(&self) -> String {
        let [only] = self.sessions.as_slice() else {
            let named = self.sessions.len().min(NAMED_SESSIONS);
            let more = match self.sessions.len() - named {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            return format!(
                "transcript blob {} is absent from the object store (as in a partial clone); the lines of the {} sessions that share it are commit-linked: {}{more}",
                self.oid,
                self.sessions.len(),
                self.sessions[..named].join(", ")
            );
        };
        format!("{only}: {}; its lines are commit-linked", self.why)
    }
}

impl Settled {
    /// The lines said once all checkpoints are settled: one per absent transcript blob, and
    /// the one that says which transcripts showed no writes blame reads, if any.
    pub(super) fn summary(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.absent.iter().map(AbsentBlob::warning).collect();
        if !self.unread.is_empty() {
            lines.push(format!(
                "{} transcript(s) in no format whose writes blame reads, their lines commit-linked: {}",
                self.unread.len(),
                self.unread.join("; ")
            ));
        }
        lines
    }

    /// Settles what was read of checkpoint `id` into its entry and the session writes kept.
    pub(super) fn settle(
        &mut self,
        id: &CheckpointId,
        read: CheckpointRead,
    ) -> (CheckpointEntry, Loaded) {
        let entry = |status, error: Option<String>| CheckpointEntry {
            checkpoint_id: id.to_string(),
            status,
            error,
            sessions: Vec::new(),
        };
        let none = || Loaded {
            cp: None,
            sessions: Vec::new(),
        };
        let (cp, extracted) = match read {
            Ok(read) => read,
            Err((status, why)) => {
                let unreadable = status == CheckpointStatus::Unreadable;
                // A store error names the checkpoint itself.
                self.warnings.push(match unreadable {
                    true => format!("{why}; its lines are commit-linked"),
                    false => format!("checkpoint {id}: {why}; its lines are commit-linked"),
                });
                // A failed fetch leaves the attribution incomplete: the command fails after
                // its output, as `list <range>` does.
                self.damaged |= unreadable || status == CheckpointStatus::FetchFailed;
                return (entry(status, Some(why)), none());
            }
        };
        let mut e = entry(CheckpointStatus::Read, None);
        let mut sessions = Vec::new();
        for (slot, extracted) in extracted.into_iter().enumerate() {
            let meta = &cp.sessions[slot];
            let mut s = SessionEntry {
                session_index: slot,
                session_id: meta.session_id.clone(),
                agent: meta.agent.clone(),
                model: meta.model.clone(),
                transcript: TranscriptStatus::Read,
                format: None,
                writes: 0,
                skipped_lines: 0,
                reason: None,
            };
            let mut fail = |s: &mut SessionEntry, status, why: String| {
                self.warnings.push(format!(
                    "checkpoint {id} session {slot}: {why}; its lines are commit-linked"
                ));
                s.transcript = status;
                s.reason = Some(why);
            };
            let writes = match extracted {
                Err(TranscriptMiss::Absent(why)) => {
                    fail(&mut s, TranscriptStatus::Absent, why);
                    None
                }
                Err(TranscriptMiss::AbsentBlob { oid, why }) => {
                    let session = format!("checkpoint {id} session {slot}");
                    match self.absent.iter_mut().find(|a| a.oid == oid) {
                        Some(known) => known.sessions.push(session),
                        None => self.absent.push(AbsentBlob {
                            oid,
                            why: why.clone(),
                            sessions: vec![session],
                        }),
                    }
                    s.transcript = TranscriptStatus::Absent;
                    s.reason = Some(why);
                    None
                }
                Err(TranscriptMiss::Unreadable(why)) => {
                    self.damaged = true;
                    fail(&mut s, TranscriptStatus::Unreadable, why);
                    None
                }
                Ok(writes) if writes.format == TranscriptFormat::Unknown => {
                    let (status, what) = match writes.is_json() {
                        true => (
                            TranscriptStatus::UnknownFormat,
                            "JSON of no known agent's format",
                        ),
                        false => (TranscriptStatus::NotJsonl, "not JSON"),
                    };
                    let file = transcript_path(&cp.session_dirs[slot]);
                    self.unread
                        .push(format!("checkpoint {id} session {slot} {file} ({what})"));
                    s.transcript = status;
                    s.skipped_lines = writes.skipped_lines;
                    s.reason = Some(format!("the transcript is {what}"));
                    None
                }
                Ok(writes) => {
                    if writes.skipped_lines > 0 {
                        self.warnings.push(format!(
                            "checkpoint {id} session {slot}: skipped {} transcript line(s) that are not JSON",
                            writes.skipped_lines
                        ));
                    }
                    s.skipped_lines = writes.skipped_lines;
                    s.format = Some(writes.format.name());
                    s.writes = writes.writes.len();
                    Some(writes)
                }
            };
            sessions.push(writes);
            e.sessions.push(s);
        }
        let l = Loaded {
            cp: Some(cp),
            sessions,
        };
        (e, l)
    }
}
