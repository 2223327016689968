//! Links lost outside our hooks, as `doctor` reports them: commits of the current branch that
//! squash another branch's commits without carrying their `Entire-Checkpoint` links (a forge's
//! squash merge, `git merge --squash` committed where our hooks do not run), and dangling links
//! the user acknowledged as lost.
//!
//! ## Squashes
//! A squash leaves nothing in the new commit that names the commits it replaced (a forge may keep
//! their messages, and then their trailers, which are links wherever they are in a message; by
//! default GitLab and a GitHub repository set to "pull request title" do not, nor does
//! `git commit -m` after `merge --squash`). What is left is the other side: the squashed commits
//! on a branch or remote-tracking branch here that the current branch never merged. A commit `C`
//! of the current branch squashes such a branch `F` when `C`'s change (against its parent) is
//! `F`'s whole change since the merge base, as git's `patch-id` compares patches (line numbers
//! and whitespace aside). Its lost links are the checkpoints `F`'s unmerged commits link that no
//! commit of the current branch links.
//!
//! ## Acknowledged dangling links
//! A link that dangles and that nothing can repair (the checkpoint was never written and its
//! sessions went elsewhere) is recorded by `doctor --fix` in
//! `<git-common-dir>/entire/acknowledged-links`, one `<commit> <checkpoint ID>` a line, so that
//! doctor can be clean again. The file is local: another clone reports the link until it is
//! acknowledged there too.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use crate::git::objects::Oid;
use crate::git::plumbing;

use crate::base::error::{io_context, IoError};
use crate::base::id::CheckpointId;
use crate::git::repo::{LibGitError, Repo, RepoError};
use crate::ops::rewrites::{links, RewriteMap};

/// The most unmerged commits read over all branches: a repository with many stale branches
/// costs doctor a bounded walk.
const UNMERGED_LIMIT: usize = 10_000;

/// A commit of the current branch that squashed another branch's linked commits without their
/// links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostSquash {
    /// The squash commit.
    pub commit: Oid,
    /// The branch (short name) whose commits it squashed.
    pub branch: String,
    /// The squashed commits that link a checkpoint, newest first, with their links.
    pub squashed: Vec<(Oid, Vec<CheckpointId>)>,
    /// The checkpoints they link that no commit of the current branch links.
    pub lost: Vec<CheckpointId>,
}

/// Every link of `oid`: its trailers and what `map` says it inherited.
fn commit_links(repo: &Repo, map: Option<&RewriteMap>, oid: Oid) -> Vec<CheckpointId> {
    repo.objects().find_commit(oid).map_or_else(
        |_| Vec::new(),
        |c| {
            links(
                &String::from_utf8_lossy(c.message_bytes()),
                map.and_then(|m| m.get(&oid.to_string())),
            )
        },
    )
}

/// The branches and remote-tracking branches whose tips the current branch at `head` has not
/// merged, local ones first, by name; the checkpoint stores' own refs are not branches of code.
/// One `for-each-ref --no-merged` answers for all of them: a walk per branch costs seconds at a
/// few hundred branches.
fn unmerged_tips(repo: &Repo, head: Oid) -> Result<Vec<(String, Oid)>, RepoError> {
    let dir = repo.workdir().unwrap_or(repo.common_dir());
    let listed = plumbing::branches_not_merged_into(dir, &head.to_string()).map_err(|e| {
        RepoError::GitFailed {
            context: "list the unmerged branches".to_owned(),
            message: e.to_string(),
        }
    })?;
    let format = repo.object_format();
    let mut tips = Vec::new();
    for (name, tip) in listed {
        if name.contains("/entire/checkpoints/") || name.ends_with("/HEAD") {
            continue;
        }
        let Ok(tip) = format.parse(&tip) else {
            continue;
        };
        let short = ["refs/heads/", "refs/remotes/"]
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .unwrap_or(&name);
        tips.push((short.to_owned(), tip));
    }
    Ok(tips)
}

/// The commits of `from` not reachable from `hide`, newest first, at most `limit`.
fn commits_between(
    repo: &Repo,
    from: &[Oid],
    hide: Oid,
    limit: usize,
) -> Result<Vec<Oid>, LibGitError> {
    repo.commits_newest_first(from, Some(hide), limit)
}

/// A change as [`same_change`] compares it: the paths it touches and its patch ID.
struct Change {
    paths: BTreeSet<Vec<u8>>,
    diff_of: (Oid, Oid),
}

impl Change {
    /// The change from commit `base`'s tree to commit `tip`'s.
    fn between(repo: &Repo, base: Oid, tip: Oid) -> Result<Option<Change>, LibGitError> {
        let git = repo.objects();
        let old = git.find_commit(base)?.tree_id();
        let new = git.find_commit(tip)?.tree_id();
        let paths = git.changed_paths(old, new)?;
        Ok((!paths.is_empty()).then_some(Change {
            paths,
            diff_of: (old, new),
        }))
    }

    fn patch_id(&self, repo: &Repo) -> Result<Oid, LibGitError> {
        let (old, new) = self.diff_of;
        repo.objects().patch_id(old, new)
    }
}

/// Whether two changes are the same patch: the same paths, then the same patch ID.
fn same_change(git: &Repo, a: &Change, b: &Change) -> Result<bool, LibGitError> {
    Ok(a.paths == b.paths && (a.diff_of == b.diff_of || a.patch_id(git)? == b.patch_id(git)?))
}

/// The squashes among the current branch's last `depth` commits whose links were lost (see the
/// module documentation), newest first; `linked` holds every checkpoint the current branch's
/// commits link. A squash found through several branches (`feature`, `origin/feature`) is
/// reported once, through the first.
pub fn lost_squashes(
    repo: &Repo,
    map: Option<&RewriteMap>,
    linked: &HashSet<CheckpointId>,
    depth: usize,
) -> Result<Vec<LostSquash>, RepoError> {
    let Some(head) = repo.resolve_commit("HEAD") else {
        return Ok(Vec::new());
    };
    let tips = unmerged_tips(repo, head)?;
    if tips.is_empty() {
        return Ok(Vec::new());
    }
    squashes_of(repo, map, linked, depth, head, tips)
        .map_err(crate::git::repo::git_err("look for squashes"))
}

/// [`lost_squashes`] of the current branch at `head`, among the unmerged branches `tips`.
fn squashes_of(
    git: &Repo,
    map: Option<&RewriteMap>,
    linked: &HashSet<CheckpointId>,
    depth: usize,
    head: Oid,
    tips: Vec<(String, Oid)>,
) -> Result<Vec<LostSquash>, LibGitError> {
    // One walk over everything unmerged finds the commits with links the branch lacks.
    let all: Vec<Oid> = tips.iter().map(|(_, t)| *t).collect();
    let mut unmerged_links: HashMap<Oid, Vec<CheckpointId>> = HashMap::new();
    for oid in commits_between(git, &all, head, UNMERGED_LIMIT)? {
        let ids = commit_links(git, map, oid);
        if ids.iter().any(|id| !linked.contains(id)) {
            unmerged_links.insert(oid, ids);
        }
    }
    let mut found: Vec<LostSquash> = Vec::new();
    for (branch, tip) in tips {
        let holds = |c: &Oid| *c == tip || git.is_descendant_of(tip, *c).unwrap_or(false);
        if !unmerged_links.keys().any(holds) {
            continue;
        }
        let squashed: Vec<(Oid, Vec<CheckpointId>)> =
            commits_between(git, &[tip], head, UNMERGED_LIMIT)?
                .into_iter()
                .filter_map(|c| unmerged_links.get(&c).map(|ids| (c, ids.clone())))
                .collect();
        let Some(base) = git.merge_base(head, tip) else {
            continue;
        };
        let Some(theirs) = Change::between(git, base, tip)? else {
            continue;
        };
        for candidate in commits_between(git, &[head], base, depth)? {
            let commit = git.objects().find_commit(candidate)?;
            if commit.parent_count() != 1 || found.iter().any(|f| f.commit == candidate) {
                continue;
            }
            let Some(ours) = Change::between(git, commit.parent_id(0)?, candidate)? else {
                continue;
            };
            if !same_change(git, &ours, &theirs)? {
                continue;
            }
            let mut lost: Vec<CheckpointId> = Vec::new();
            for id in squashed.iter().rev().flat_map(|(_, ids)| ids) {
                if !linked.contains(id) && !lost.contains(id) {
                    lost.push(id.clone());
                }
            }
            found.push(LostSquash {
                commit: candidate,
                branch: branch.clone(),
                squashed: squashed.clone(),
                lost,
            });
            break;
        }
    }
    Ok(found)
}

/// The dangling links the user acknowledged as lost (see the module documentation).
#[derive(Debug, Default)]
pub struct Acknowledged {
    links: HashSet<(String, String)>,
}

impl Acknowledged {
    fn path(repo: &Repo) -> PathBuf {
        repo.common_dir().join("entire").join("acknowledged-links")
    }

    /// Reads the record; a missing or unreadable file acknowledges nothing.
    pub fn load(repo: &Repo) -> Acknowledged {
        let text = std::fs::read_to_string(Self::path(repo)).unwrap_or_default();
        Acknowledged {
            links: text
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(c, id)| (c.to_owned(), id.to_owned()))
                .collect(),
        }
    }

    /// Whether the link of `commit` (a full SHA) to `id` was acknowledged.
    pub fn contains(&self, commit: &str, id: &CheckpointId) -> bool {
        self.links
            .contains(&(commit.to_owned(), id.as_str().to_owned()))
    }

    /// Records the links `(commit, id)` as acknowledged, adding to what the file holds.
    pub fn add(repo: &Repo, links: &[(String, CheckpointId)]) -> Result<(), IoError> {
        let path = Self::path(repo);
        let io = |e| io_context(format!("write {}", path.display()))(e);
        let mut known = Self::load(repo);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for (commit, id) in links {
            if known.links.insert((commit.clone(), id.as_str().to_owned())) {
                text.push_str(&format!("{commit} {id}\n"));
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        crate::base::fs::write_atomic(&path, text.as_bytes(), 0o644).map_err(io)
    }
}
