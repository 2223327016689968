//! Partial fetches: checkpoint refs fetched without their transcripts (`--filter=blob:none`).
//!
//! The user's repository is not a partial clone, so objects missing from its store would break
//! its `git gc` and `git fsck`. Filtered fetches therefore land in a repository of their own, the
//! partial cache: a bare `<git-common-dir>/entire/partial.git` in which the fetch remote is a
//! promisor remote (`remote.<name>.promisor`, `remote.<name>.partialclonefilter`). The user's
//! repository never references an object of the cache, so deleting the cache is always safe.
//!
//! - A filtered fetch brings commits and trees; the small documents (every blob that is not a
//!   transcript chunk) follow in one more `git fetch` of their hashes, so `show` and `list` work
//!   from the cache without the transcripts and without the network.
//! - Reading a transcript asks git in the cache for the missing chunks (`git cat-file
//!   --batch-check`), and git fetches them lazily from the promisor remote.
//! - A server that does not support filters (`uploadpack.allowFilter` off) sends whole
//!   checkpoints and git says "filtering not recognized by server": the refs are then moved into
//!   the user's repository (a local fetch from the cache) and dropped from the cache, and the
//!   caller is told ([`FilteredFetch::whole`]).
//! - The user's repository always wins: a checkpoint it holds is read from it, and a later full
//!   fetch or a write of a cached checkpoint goes to it as usual.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::git::config_file::ConfigFile;
use crate::git::objects::{sha1_blob_id, Objects, Oid};
use crate::git::refs::RefEdit;
use crate::git::repo::LibGitError;

use crate::base::id::CheckpointId;
use crate::git::refname::{CheckpointRef, CHECKPOINT_REF_PREFIX};
use crate::git::repo::Repo;
use crate::git::side;
use crate::git::subprocess::{self as git, GitError, TempDir};
use crate::git::url::Remote;
use crate::model::transcript;
use crate::remote::fetch::{exact_glob, FetchFilter, Fetched, Fetcher, READ_FETCH_BUDGET};
use crate::store::on_demand::{FetchError, Wanted};

/// What git prints when the server ignored `--filter` and sent everything.
const FILTER_IGNORED: &str = "filtering not recognized by server";

/// Object hashes per `git fetch` of documents.
const OIDS_PER_FETCH: usize = 1000;

/// What a filtered fetch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilteredFetch {
    /// Per ref asked for.
    pub results: Vec<(String, Fetched)>,
    /// The server ignored the filter: the checkpoints were fetched whole into the repository
    /// (not the cache), and the fetcher holds a notice saying so.
    pub whole: bool,
}

/// The partial cache of a repository.
pub struct PartialCache<'r> {
    repo: &'r Repo,
    dir: PathBuf,
    /// The cache itself, opened as a repository of its own (its refs go through `git::refs`
    /// like any repository's).
    cache: Repo,
}

fn local_error(message: impl Into<String>) -> FetchError {
    Fetcher::local(CHECKPOINT_REF_PREFIX, message)
}

impl<'r> PartialCache<'r> {
    /// Where the cache of `repo` lives.
    pub fn dir_of(repo: &Repo) -> PathBuf {
        repo.common_dir().join("entire").join("partial.git")
    }

    /// The cache of `repo`, if a filtered fetch ever created it.
    pub fn open(repo: &'r Repo) -> Result<Option<Self>, FetchError> {
        let dir = Self::dir_of(repo);
        if !dir.join("config").is_file() {
            return Ok(None);
        }
        let cache = Repo::open(&dir).map_err(|e| {
            local_error(format!(
                "open the partial cache: {}",
                crate::base::error::error_chain(&e)
            ))
        })?;
        Ok(Some(PartialCache { repo, dir, cache }))
    }

    /// The cache of `repo`, created on first use (built aside and renamed into place, so a
    /// concurrent creator never sees half a repository).
    pub fn create(repo: &'r Repo) -> Result<Self, FetchError> {
        if let Some(cache) = Self::open(repo)? {
            return Ok(cache);
        }
        let dir = Self::dir_of(repo);
        let io = |e: std::io::Error| local_error(format!("create the partial cache: {e}"));
        let parent = dir.parent().unwrap_or(repo.common_dir());
        let tmp = TempDir::new(&parent.join("tmp"), "partial-").map_err(io)?;
        let t = tmp.path();
        // The real config first (remotes, insteadOf and credentials apply), then what makes this
        // a bare repository of its own.
        let config = format!(
            "[include]\n\tpath = {}\n{}[core]\n\tbare = true\n\tlogAllRefUpdates = false\n[fetch]\n\twriteCommitGraph = false\n[protocol]\n\tversion = 2\n",
            crate::git::side::config_quoted(&repo.common_dir().join("config")),
            repo.object_format().config_lines()
        );
        std::fs::create_dir_all(t.join("refs/heads")).map_err(io)?;
        std::fs::create_dir_all(t.join("objects/pack")).map_err(io)?;
        std::fs::write(t.join("HEAD"), "ref: refs/heads/entire-partial\n").map_err(io)?;
        std::fs::write(t.join("config"), config).map_err(io)?;
        if let Err(e) = std::fs::rename(t, &dir) {
            if !dir.join("config").is_file() {
                return Err(io(e));
            }
        }
        Self::open(repo)?.ok_or_else(|| local_error("the partial cache vanished"))
    }

    /// The cache's object database (for commits, trees and documents already present).
    pub(crate) fn objects(&self) -> Objects<'_> {
        self.cache.objects()
    }

    /// The commit `name` points at in the cache.
    pub(crate) fn tip(&self, name: &str) -> Option<Oid> {
        self.cache.ref_tip(name).ok().flatten()
    }

    /// The cached spelling of `id`'s ref and its tip.
    pub(crate) fn locate(&self, id: &CheckpointId) -> Option<(String, Oid)> {
        CheckpointRef::spellings(id)
            .into_iter()
            .find_map(|r| self.tip(r.name()).map(|t| (r.name().to_owned(), t)))
    }

    /// Whether the cache holds `id` (in either spelling).
    pub fn has(&self, id: &CheckpointId) -> bool {
        self.locate(id).is_some()
    }

    /// Every checkpoint ref of the cache.
    pub(crate) fn refs(&self) -> Vec<(CheckpointRef, Oid)> {
        let Ok(refs) = self.cache.refs_under(CHECKPOINT_REF_PREFIX) else {
            return Vec::new();
        };
        refs.into_iter()
            .filter_map(|(name, tip)| Some((CheckpointRef::parse(&name).ok()?, tip?)))
            .collect()
    }

    /// The name under which the cache knows `remote` (a remote of the repository keeps its
    /// name; a URL or path gets one derived from it), configured as a promisor remote.
    fn promisor(&self, remote: &str, filter: FetchFilter) -> Result<String, FetchError> {
        let named = self
            .repo
            .config_string(&format!("remote.{remote}.url"))
            .is_some();
        let name = if named {
            remote.to_owned()
        } else {
            // The cache's config would hold the URL in clear (files under .git/entire never
            // hold a credential): a URL with one must be a configured remote to be used here.
            if crate::git::url::redact_url(remote) != remote {
                return Err(local_error(format!(
                    "{}: a URL carrying credentials cannot be used for a partial fetch: add it as a remote (git remote add) and name the remote",
                    crate::git::url::redact_url(remote)
                )));
            }
            let hash = sha1_blob_id(remote.as_bytes()).map_err(|e| local_error(e.to_string()))?;
            format!("entire-{}", &hash.to_string()[..12])
        };
        let cfg_err = |e: LibGitError| local_error(format!("configure the partial cache: {e}"));
        let mut cfg = ConfigFile::open(&self.dir.join("config")).map_err(cfg_err)?;
        if cfg
            .get_bool(&format!("remote.{name}.promisor"))
            .unwrap_or(false)
        {
            return Ok(name);
        }
        if !named {
            let cwd = self.repo.workdir().unwrap_or(self.repo.common_dir());
            let path = cwd.join(remote);
            // A relative path would mean something else from another worktree.
            let url = match Path::new(remote).is_relative() && path.exists() {
                true => path.canonicalize().unwrap_or(path).display().to_string(),
                false => remote.to_owned(),
            };
            cfg.set_str(&format!("remote.{name}.url"), &url)
                .map_err(cfg_err)?;
        }
        cfg.set_bool(&format!("remote.{name}.promisor"), true)
            .map_err(cfg_err)?;
        cfg.set_str(&format!("remote.{name}.partialclonefilter"), filter.spec())
            .map_err(cfg_err)?;
        Ok(name)
    }

    /// The promisor remotes of the cache as shown to the user (credentials redacted).
    fn promisors_display(&self) -> String {
        let Ok(cfg) = ConfigFile::open(&self.dir.join("config")) else {
            return "the promisor remote".to_owned();
        };
        let names: Vec<String> = cfg
            .keys_matching(r"remote\..*\.promisor")
            .iter()
            .filter_map(|key| key.strip_prefix("remote.")?.strip_suffix(".promisor"))
            .map(|name| match name.starts_with("entire-") {
                true => cfg
                    .get_string(&format!("remote.{name}.url"))
                    .map(|u| crate::git::url::redact(&u))
                    .unwrap_or_else(|| name.to_owned()),
                false => name.to_owned(),
            })
            .collect();
        if names.is_empty() {
            "the promisor remote".to_owned()
        } else {
            names.join(", ")
        }
    }

    /// Fetches `names` from the fetcher's remote with `filter` into the cache (forced: the cache
    /// only mirrors the remote and nothing is ever pushed from it), then the documents of every
    /// fetched checkpoint. A server that ignored the filter gets the refs moved into the
    /// repository instead.
    pub fn fetch_refs(
        &self,
        fetcher: &Fetcher<'_>,
        names: &[String],
        filter: FetchFilter,
    ) -> Result<FilteredFetch, FetchError> {
        let first = names.first().cloned().unwrap_or_default();
        fetcher.earlier_failure(&first)?;
        let deadline = Instant::now() + READ_FETCH_BUDGET;
        let remote = self.promisor(fetcher.remote(), filter)?;
        let mut pending = names.to_vec();
        let mut results = Vec::new();
        let mut ignored = false;
        while !pending.is_empty() {
            let wants = pending.iter().map(|n| exact_glob(n, n));
            let fetch = side::filtered_fetch(self.repo, &self.dir, &remote, filter.spec(), wants);
            let Some(res) = fetcher.attempt(fetch, &mut pending, &mut results, &first, deadline)?
            else {
                continue;
            };
            if !res.success() {
                return Err(fetcher.transport(&first, git::first_error_line(&res.stderr)));
            }
            ignored |= res.stderr.contains(FILTER_IGNORED);
            for name in pending.drain(..) {
                let state = match self.tip(&name) {
                    Some(_) => Fetched::Updated,
                    None => Fetched::Absent,
                };
                results.push((name, state));
            }
        }
        let fetched: Vec<String> = results
            .iter()
            .filter(|(_, f)| *f == Fetched::Updated)
            .map(|(n, _)| n.clone())
            .collect();
        if ignored {
            fetcher.notice(format!(
                "{} does not support filtered fetches (uploadpack.allowFilter is off): fetched whole checkpoints instead",
                fetcher.remote_display()
            ));
            let moved = self.move_to_repository(&fetched)?;
            for (name, state) in results.iter_mut() {
                if let Some((_, s)) = moved.iter().find(|(n, _)| n == name) {
                    *state = s.clone();
                }
            }
            return Ok(FilteredFetch {
                results,
                whole: true,
            });
        }
        self.fetch_documents(fetcher, &remote, &fetched, filter, deadline)?;
        Ok(FilteredFetch {
            results,
            whole: false,
        })
    }

    /// Moves whole cached checkpoints into the repository (a local fetch from the cache, with
    /// the usual compare-and-swap publication) and drops them from the cache.
    fn move_to_repository(&self, names: &[String]) -> Result<Vec<(String, Fetched)>, FetchError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let cache = Remote::local(&self.dir)
            .map_err(|e| local_error(format!("the partial cache's path: {e}")))?;
        let moved = Fetcher::new(self.repo, cache).fetch_refs(names)?;
        for name in names {
            if let Some(old) = self.tip(name) {
                let delete = RefEdit::Delete {
                    name: name.clone(),
                    old,
                };
                let _ = self
                    .cache
                    .update_refs(&[delete], "entire: moved into the repository");
            }
        }
        Ok(moved)
    }

    /// The documents of `tip`'s tree missing from the cache ([`missing_for_path`]).
    fn missing_documents(&self, tip: Oid) -> Result<Vec<Oid>, FetchError> {
        missing_for_path(self.objects(), tip, Wanted::Documents).map_err(read_error)
    }

    /// Fetches the documents (every blob but the transcript chunks) of the `names` just
    /// fetched, by hash, in as few `git fetch`es as possible.
    fn fetch_documents(
        &self,
        fetcher: &Fetcher<'_>,
        remote: &str,
        names: &[String],
        filter: FetchFilter,
        deadline: Instant,
    ) -> Result<(), FetchError> {
        let mut wanted = Vec::new();
        for name in names {
            if let Some(tip) = self.tip(name) {
                wanted.extend(self.missing_documents(tip)?);
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let first = names.first().map(String::as_str).unwrap_or_default();
        for chunk in wanted.chunks(OIDS_PER_FETCH) {
            let wants = chunk.iter().map(Oid::to_string);
            let fetch = side::filtered_fetch(self.repo, &self.dir, remote, filter.spec(), wants);
            // No refs are asked for, so none can be reported missing.
            let res = fetcher.attempt(fetch, &mut Vec::new(), &mut Vec::new(), first, deadline)?;
            if let Some(res) = res.filter(|r| !r.success()) {
                return Err(fetcher.transport(first, git::first_error_line(&res.stderr)));
            }
        }
        Ok(())
    }

    /// Makes sure every blob `path` of the checkpoint at `tip` needs is in the cache: the
    /// documents, and for `N/full.jsonl` that session's transcript chunks. Missing ones are
    /// fetched lazily by git from the promisor remote; a failure is a fetch error naming it.
    pub(crate) fn ensure_for_path(
        &self,
        reference: &str,
        tip: Oid,
        path: Option<&str>,
    ) -> Result<(), FetchError> {
        let wanted = Wanted::documents_and(path);
        let missing = missing_for_path(self.objects(), tip, wanted).map_err(read_error)?;
        if missing.is_empty() {
            return Ok(());
        }
        let run = side::fetch_missing(self.repo, &self.dir, &missing, READ_FETCH_BUDGET);
        let transport = |message: String| FetchError::Transport {
            reference: reference.to_owned(),
            remote: self.promisors_display(),
            message,
        };
        let res = match run {
            Ok(res) => res,
            Err(GitError::Timeout { after, .. }) => {
                return Err(transport(format!("timed out after {}s", after.as_secs())))
            }
            Err(e) => return Err(local_error(e.to_string())),
        };
        if !res.success() || res.stdout.lines().any(|l| l.ends_with(" missing")) {
            let message = match res.stderr.trim().is_empty() {
                true => "the promisor remote did not send the missing objects".to_owned(),
                false => git::first_error_line(&res.stderr),
            };
            return Err(transport(message));
        }
        Ok(())
    }
}

/// The objects of what `wanted` names of the checkpoint at `tip` (its commit, or its tree) that
/// `objects` lacks, as in a partial clone: documents are the blobs that are not transcript
/// chunks, a session's `N/full.jsonl` is its chunks. When its tree itself, or one below it, is
/// missing (`--filter=tree:0`), that tree, which brings the others (the blobs are asked for once
/// the trees are there). The commit must be there.
pub(crate) fn missing_for_path(
    objects: Objects<'_>,
    tip: Oid,
    wanted: Wanted<'_>,
) -> Result<Vec<Oid>, LibGitError> {
    let tree_id = match objects.find_commit(tip) {
        Ok(commit) => commit.tree_id(),
        Err(_) => tip,
    };
    let tree = match objects.find_tree(tree_id) {
        Ok(tree) => tree,
        Err(e) if e.is_not_found() => return Ok(vec![tree_id]),
        Err(e) => return Err(e),
    };
    let Ok(blobs) = tree.blobs() else {
        return Ok(vec![tree_id]);
    };
    let is_chunk = |name: Option<&str>| name.and_then(transcript::chunk_index).is_some();
    let mut ids: Vec<Oid> = blobs
        .iter()
        .filter(|e| wanted == Wanted::All || !is_chunk(e.name()))
        .map(|e| e.id())
        .collect();
    let slot = match wanted {
        Wanted::File(path) => path
            .trim_start_matches('/')
            .rsplit_once('/')
            .filter(|(_, name)| *name == transcript::TRANSCRIPT_FILE)
            .map(|(slot, _)| slot),
        Wanted::Documents | Wanted::All => None,
    };
    if let Some(slot_tree) = slot
        .and_then(|slot| tree.get_path(slot).ok())
        .and_then(|entry| objects.find_tree(entry.id()).ok())
    {
        ids.extend(
            slot_tree
                .iter()
                .filter(|e| is_chunk(e.name()))
                .map(|e| e.id()),
        );
    }
    objects.missing(ids)
}

/// A failure reading the cache's own objects.
fn read_error(e: LibGitError) -> FetchError {
    local_error(format!("read the partial cache: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters() {
        assert_eq!("blob:none".parse(), Ok(FetchFilter::BlobNone));
        assert_eq!(FetchFilter::BlobNone.spec(), "blob:none");
        assert!("tree:0".parse::<FetchFilter>().is_err());
        assert!("blob:limit=1k".parse::<FetchFilter>().is_err());
    }
}
