//! Writes through the topology: a session to the primary then to each mirror (best effort), a
//! backfill along the read order, and the report of what the mirrors failed.

use super::{Topology, TopologyError};
use crate::base::threads::join;
use crate::store::{Backfill, CheckpointWriter, SessionWrite, StoreError, StoreKind, WriteOutcome};

/// `(mirror name, error)` for each mirror write that failed.
pub type MirrorFailures = Vec<(String, StoreError)>;

/// The result of a write through the topology: the primary's outcome plus every mirror that
/// failed (a warning for the caller to show, never a failed write).
#[derive(Debug)]
pub struct WriteReport {
    /// What the primary did.
    pub outcome: WriteOutcome,
    /// `(mirror name, error)` for each mirror write that failed.
    pub mirror_failures: MirrorFailures,
}

impl WriteReport {
    /// One line per thing the caller should warn about: failed mirrors, a failed enqueue.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .mirror_failures
            .iter()
            .map(|(name, e)| {
                format!(
                    "mirror {name} write failed; primary write succeeded: {}",
                    crate::base::error::error_chain(e)
                )
            })
            .collect();
        if let Some(e) = &self.outcome.enqueue_error {
            out.push(format!(
                "{} was written but not queued for push ({e}); the next write to this checkpoint queues it again",
                self.outcome.ref_name
            ));
        }
        out
    }
}

impl<'r> Topology<'r> {
    /// Writes one session, redacted, to the primary, then to each mirror (best effort), with
    /// `beside` run over the transcript as written (redacted) on a second thread while the
    /// stores write it: work that needs the stored bytes, not the write's outcome, done while
    /// the write waits on its objects and files. Refused while a settings file does not parse.
    /// `beside`'s result is `None` when the write has no transcript, and is not made when the
    /// write is refused before redaction.
    pub fn write_session_beside<T: Send>(
        &self,
        mut w: SessionWrite,
        beside: impl Fn(&[u8]) -> T + Sync,
    ) -> Result<(WriteReport, Option<T>), TopologyError> {
        self.check_writable()?;
        self.redact_write(&mut w);
        // No transcript, nothing to read beside the write: no thread.
        let (written, found) = match w.transcript.as_deref() {
            Some(t) => {
                let (written, found) = join(|| self.write_redacted(&w), &|| beside(t));
                (written, Some(found))
            }
            None => (self.write_redacted(&w), None),
        };
        let (outcome, mirror_failures) = written?;
        let report = WriteReport {
            outcome,
            mirror_failures,
        };
        Ok((report, found))
    }

    /// Writes the redacted `w` to the primary, then to each mirror (best effort): the primary's
    /// outcome and the mirrors that failed.
    fn write_redacted(
        &self,
        w: &SessionWrite,
    ) -> Result<(WriteOutcome, MirrorFailures), StoreError> {
        let outcome = self.primary_writer().write_session(w)?;
        let mirror_failures = self
            .mirrors
            .iter()
            .filter_map(|m| m.write_session(w).err().map(|e| (m.name().to_owned(), e)))
            .collect();
        Ok((outcome, mirror_failures))
    }

    /// Runs a backfill along the read order, falling through only when a store does not have
    /// the checkpoint (a hard error stops: redirecting after a failure would fork the data).
    /// Mirrors receive the backfill only when the primary served it. The backfill is redacted
    /// first, and refused while a settings file does not parse.
    pub fn backfill(&self, b: &Backfill) -> Result<WriteReport, TopologyError> {
        self.check_writable()?;
        let b = &self.redacted_backfill(b);
        let order = self.read_order(b.id().kind());
        let mut last = None;
        for (i, kind) in order.iter().enumerate() {
            let writer: &dyn CheckpointWriter = match kind {
                StoreKind::GitRefs => &self.refs,
                StoreKind::GitBranch => &self.branch,
            };
            match writer.backfill(b) {
                Ok(outcome) => {
                    let mirror_failures = if *kind == self.primary {
                        self.mirrors
                            .iter()
                            .filter_map(|m| m.backfill(b).err().map(|e| (m.name().to_owned(), e)))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    return Ok(WriteReport {
                        outcome,
                        mirror_failures,
                    });
                }
                Err(e @ StoreError::NotFound { .. }) if i + 1 < order.len() => last = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        Err(last
            .unwrap_or(StoreError::NotFound { id: b.id().clone() })
            .into())
    }
}
