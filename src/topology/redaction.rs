//! What every write goes through first: the redactor of the settings, applied in place to a
//! session write and to a copy of a backfill, and the refusal of writes while a settings file
//! does not parse.

use super::{Topology, TopologyError};
use crate::model::redact::Redactor;
use crate::store::{Backfill, SessionWrite};

impl<'r> Topology<'r> {
    /// `Ok` unless a settings file does not parse; then the error every write (and push) must
    /// fail with, since the redaction rules and the store that file names are unknown.
    pub fn check_writable(&self) -> Result<(), TopologyError> {
        match &self.refused {
            Some(e) => Err(TopologyError::WritesRefused(e.clone())),
            None => Ok(()),
        }
    }

    /// The redactor every write goes through (from the settings' `redaction` block).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Redacts secrets from everything `w` stores as text (transcript, prompts, files touched,
    /// names, the commit subject, subagents' transcripts) in place, and adds the count. In place, not on a copy: a
    /// transcript may be hundreds of megabytes (docs/performance.md, target 5).
    /// A transcript already redacted by rules with this redactor's fingerprint
    /// ([`SessionWrite::transcript_redacted_by`]: a staged session's) is not redacted again:
    /// the pass would change nothing.
    pub(super) fn redact_write(&self, w: &mut SessionWrite) {
        let r = &self.redactor;
        let redacted = w
            .transcript_redacted_by
            .take()
            .is_some_and(|rules| rules == r.fingerprint());
        let mut n = match &mut w.transcript {
            Some(t) if !redacted => {
                // The bytes may change: a hash of them from before is no longer theirs.
                w.transcript_hash = None;
                r.redact_vec(t)
            }
            _ => 0,
        };
        for task in &mut w.tasks {
            n += task.transcript.as_mut().map_or(0, |t| r.redact_vec(t));
        }
        n += r.redact_strings(
            w.prompts
                .iter_mut()
                .chain(&mut w.files_touched)
                .chain([&mut w.agent, &mut w.model, &mut w.branch, &mut w.strategy])
                .chain(&mut w.commit_subject)
                .chain(w.tasks.iter_mut().filter_map(|t| t.subagent_type.as_mut())),
        );
        w.redactions += n;
    }

    /// `b` with secrets redacted from the transcript, prompts, summary or attribution it
    /// carries.
    pub(super) fn redacted_backfill(&self, b: &Backfill) -> Backfill {
        let mut b = b.clone();
        let r = &self.redactor;
        match &mut b {
            Backfill::Transcript {
                transcript,
                prompts,
                ..
            } => {
                r.redact_vec(transcript);
                r.redact_strings(prompts);
            }
            Backfill::Summary { summary, .. } => {
                r.redact_json(summary);
            }
            Backfill::Attribution { attribution, .. } => {
                r.redact_json(attribution);
            }
            // Object IDs only: nothing a secret could hide in.
            Backfill::Links { .. } => {}
        }
        b
    }
}
