//! Reads through routing: a checkpoint from the stores its ID's kind routes to (held here first,
//! then fetched, with the memory of what the remote lacked), where a read looked, a checkpoint's
//! files, history and author from the store that served it, and a full ID or a unique prefix
//! resolved.

use super::{Topology, TopologyError};
use crate::base::id::{self, CheckpointId};
use crate::git::repo::Identity;
use crate::remote::misses::Misses;
use crate::store::{
    Checkpoint, CheckpointFiles, CheckpointInfo, CommitInfo, StoreError, StoreKind,
};

impl<'r> Topology<'r> {
    /// Reads a checkpoint through routing (`first_resolved`): a non-final store that errors or
    /// reports absent falls through; the final store's answer is returned as it is.
    pub fn read(&self, id: &CheckpointId) -> Result<Option<Checkpoint>, StoreError> {
        let Some((repo, remote)) = &self.fetching else {
            return self.read_routed(id, false);
        };
        // What is held here needs neither the network nor the memo of what it lacked.
        let local = self.read_routed(id, true);
        if matches!(local, Ok(Some(_))) {
            return local;
        }
        // What the remote lacked a moment ago is not asked for again (docs/how-it-works.md,
        // "Reads ask the network once").
        if !self.refresh && Misses::open(repo).lacks(repo, remote, id) {
            log::info!(
                "checkpoint {id}: {} is not asked again: it lacked it a moment ago (--refresh asks)",
                crate::git::url::redact(remote)
            );
            return local;
        }
        let found = self.read_routed(id, false)?;
        if found.is_none() {
            if let Ok(mut asked) = self.asked_now.lock() {
                asked.push(id.clone());
            }
            // Opened again: the fetch may have changed the memo (the remote's tips moved).
            let mut misses = Misses::open(repo);
            misses.record(repo, remote, std::slice::from_ref(id));
            misses.save();
        }
        Ok(found)
    }

    /// Fetches, in one batch, the checkpoints of `ids` that reads would fetch one by one: those
    /// routed to the git-refs store and held nowhere here, except what the remote lacked a
    /// moment ago (unless refreshing). A command that reads many checkpoints calls it first, so
    /// that it asks the remote once, however many there are.
    pub fn prefetch(&self, ids: &[CheckpointId]) -> Result<(), StoreError> {
        let Some((repo, remote)) = &self.fetching else {
            return Ok(());
        };
        let misses = Misses::open(repo);
        let wanted: Vec<CheckpointId> = ids
            .iter()
            .filter(|id| self.read_order(id.kind()).contains(&StoreKind::GitRefs))
            .filter(|id| self.refresh || !misses.lacks(repo, remote, id))
            .cloned()
            .collect();
        self.refs.prefetch(&wanted)
    }

    /// In a partial clone, fetches every object of the checkpoints of `ids` held here that the
    /// repository lacks (their transcripts included), in one batch per store: what a command
    /// that reads them all (`blame`, `why`) asks first, rather than once per checkpoint. A
    /// failure is for the reads that follow to report, each naming its checkpoint; it is only
    /// logged here.
    pub fn complete(&self, ids: &[CheckpointId]) {
        for done in [self.refs.complete(ids), self.branch.complete(ids)] {
            if let Err(e) = done {
                log::info!("completing the checkpoints' objects: {e}");
            }
        }
    }

    /// [`Topology::read`] through routing; with `offline`, from what is held here only.
    fn read_routed(
        &self,
        id: &CheckpointId,
        offline: bool,
    ) -> Result<Option<Checkpoint>, StoreError> {
        // Unlike the reference, an error from an earlier store is returned when no later store
        // has the checkpoint: reporting "not found" for a checkpoint whose ref exists but cannot
        // be read would be a lie (and would invite a write that forks it).
        let mut first_error = None;
        for kind in self.read_order(id.kind()) {
            let read = match (offline, kind) {
                (false, _) => self.reader(kind).read(id),
                (true, StoreKind::GitRefs) => self.refs.read_local(id),
                (true, StoreKind::GitBranch) => self.branch.read_held(id),
            };
            match read {
                Ok(Some(cp)) => {
                    log::info!(
                        "checkpoint {id}: read from {} at commit {} ({} store)",
                        cp.ref_name,
                        cp.commit,
                        kind.name()
                    );
                    return Ok(Some(cp));
                }
                Ok(None) => log::info!(
                    "checkpoint {id}: not in the {} store{}",
                    kind.name(),
                    if offline { " here" } else { "" }
                ),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(None), Err)
    }

    /// Whether the repository holds `id` where routing looks, without the network: its
    /// checkpoint ref, or the v1 branch, its archived layouts and every remote's copies of them
    /// as fetched so far (not the partial cache, whose checkpoints lack their transcripts).
    pub fn held_here(&self, id: &CheckpointId) -> Result<bool, StoreError> {
        for kind in self.read_order(id.kind()) {
            let held = match kind {
                StoreKind::GitRefs => self.refs.locate_ref(id)?.is_some(),
                StoreKind::GitBranch => self.branch.holds(id)?,
            };
            if held {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Like [`Topology::read`], but absence is [`StoreError::NotFoundAnywhere`], naming every
    /// place that was looked at.
    pub fn get(&self, id: &CheckpointId) -> Result<Checkpoint, StoreError> {
        self.read(id)?.ok_or_else(|| StoreError::NotFoundAnywhere {
            id: id.clone(),
            places: self.places(id).join(", "),
        })
    }

    /// What reads set aside and the user should hear of (one line each): a copy of the v1
    /// branch or of an archived layout whose ref is not a commit.
    pub fn notices(&self) -> Vec<String> {
        self.branch.ignored()
    }

    /// The remote reads fetch from, as shown to the user, when they do.
    pub fn fetches_from(&self) -> Option<String> {
        let (_, remote) = self.fetching.as_ref()?;
        Some(crate::git::url::redact(remote))
    }

    /// Where a read of `id` looks, in order, as shown to the user; last, when the remote was
    /// not asked because it lacked `id` a moment ago, when that was.
    pub fn places(&self, id: &CheckpointId) -> Vec<String> {
        let remembered = match &self.fetching {
            Some((repo, remote)) if !self.refresh => Misses::open(repo)
                .asked(repo, remote, id)
                .map(|ago| (crate::git::url::redact(remote), ago)),
            _ => None,
        };
        let asked = remembered.is_none();
        let mut out = Vec::new();
        for kind in self.read_order(id.kind()) {
            match kind {
                StoreKind::GitRefs => {
                    let name = crate::git::refname::CheckpointRef::canonical(id)
                        .name()
                        .to_owned();
                    match self.refs.fetch_remote().filter(|_| asked) {
                        Some(r) => out.push(format!("{name} here and on {r}")),
                        None => out.push(name),
                    }
                }
                StoreKind::GitBranch => {
                    out.push(format!(
                        "the local {} branch",
                        crate::store::branch::V1_BRANCH
                    ));
                    if let Some(copy) = self.branch.remote_copy() {
                        out.push(match copy.fetches() && asked {
                            true => format!("{} (fetched just now)", copy.tracking()),
                            false => copy.tracking().to_owned(),
                        });
                    }
                }
            }
        }
        let asked_now = self.asked_now.lock().is_ok_and(|a| a.contains(id));
        match remembered {
            // Asked by this very command: there is no memory to refresh.
            Some((remote, _)) if asked_now => out.push(format!("{remote} (asked just now)")),
            Some((remote, ago)) => out.push(format!(
                "not {remote}, which lacked it {} ago (--refresh asks again)",
                crate::remote::misses::age(ago)
            )),
            None => {}
        }
        out
    }

    /// A file of a checkpoint, from the store that served it.
    pub fn read_file(&self, cp: &Checkpoint, path: &str) -> Result<Vec<u8>, StoreError> {
        self.reader(cp.store).read_file(cp, path)
    }

    /// The files of the checkpoint, from the store that serves it, its tree opened once: for
    /// reading many of them, or streaming one of any size.
    pub fn files<'s>(
        &'s self,
        cp: &Checkpoint,
    ) -> Result<Box<dyn CheckpointFiles + 's>, StoreError> {
        self.reader(cp.store).files(cp)
    }

    /// The list line of `cp`, its subject read from the store that serves it.
    pub fn info(&self, cp: &Checkpoint) -> CheckpointInfo {
        // Only for people: a prompt that cannot be read gives no subject, never an error.
        let subject = cp
            .session_dirs
            .iter()
            .find_map(|dir| self.read_file(cp, &format!("{dir}/prompt.txt")).ok())
            .and_then(|p| crate::model::documents::prompt_subject(&p))
            .unwrap_or_default();
        crate::store::refs::info_of(cp, subject)
    }

    /// The checkpoint's history, from the store that serves it.
    pub fn history(&self, cp: &Checkpoint) -> Result<Vec<CommitInfo>, StoreError> {
        self.reader(cp.store)
            .history(&cp.id)?
            .ok_or_else(|| StoreError::NotFound { id: cp.id.clone() })
    }

    /// The checkpoint's author, from the store that serves it.
    pub fn author(&self, cp: &Checkpoint) -> Result<Option<Identity>, StoreError> {
        self.reader(cp.store).author(cp)
    }

    /// Resolves a full ID or a unique prefix of one.
    pub fn resolve(&self, name: &str) -> Result<CheckpointId, TopologyError> {
        if let Ok(id) = CheckpointId::parse(name) {
            return Ok(id);
        }
        if !id::could_be_prefix(name) {
            return Err(crate::base::id::InvalidIdError {
                input: name.to_owned(),
            }
            .into());
        }
        let mut candidates: Vec<CheckpointId> = Vec::new();
        for kind in [StoreKind::GitRefs, StoreKind::GitBranch] {
            for id in self.reader(kind).ids()? {
                if id.as_str().starts_with(name)
                    && self.visible(&id, kind)
                    && !candidates.contains(&id)
                {
                    candidates.push(id);
                }
            }
        }
        match candidates.len() {
            0 => Err(TopologyError::NoMatch {
                name: name.to_owned(),
                why: None,
            }),
            1 => Ok(candidates.remove(0)),
            _ => {
                candidates.sort();
                Err(TopologyError::Ambiguous {
                    prefix: name.to_owned(),
                    candidates: candidates.into_iter().map(|c| c.to_string()).collect(),
                })
            }
        }
    }
}
