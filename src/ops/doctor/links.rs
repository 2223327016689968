//! The checks of the links the current branch's last commits carry: trailers that are no ID
//! (`trailer-malformed`), links to checkpoints held neither here nor on the checkpoint remote
//! (`trailer-dangling`, acknowledged by `--fix` when nothing repairs them), held here but not
//! there (`checkpoint-unpushed`) or not verifiable (`trailers-unverified`), and squashes that
//! dropped the links of the commits they fold (`squash-unlinked`, re-linked in the rewrite map by
//! `--fix`). The one check that asks the network: the checkpoint remote, once.

use std::collections::{HashMap, HashSet};

use crate::git::objects::Oid;

use super::{git_err, Code, Command, Context, DoctorError, Finding, Repair};
use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::model::trailers::{checkpoint_trailers, TrailerValue};
use crate::ops::lost_links::Acknowledged;
use crate::ops::rewrites::RewriteMap;
use crate::remote::fetch::Fetcher;
use crate::store::branch::GitBranchStore;
use crate::store::{StoreError, StoreKind};

/// The `strategy_options` key bounding how many commits of the current branch the trailer check
/// reads.
pub const TRAILER_DEPTH_SETTING: &str = "doctor_trailer_depth";

/// How many commits the trailer check reads without the setting.
pub const DEFAULT_TRAILER_DEPTH: usize = 1000;

/// The most commits the trailer check reads whatever the setting says: a committed settings
/// file is untrusted and must not make doctor read an unbounded history.
pub const MAX_TRAILER_DEPTH: usize = 100_000;

/// `strategy_options.doctor_trailer_depth` clamped to [`MAX_TRAILER_DEPTH`] when it is a whole
/// number (0 reads no commit), else [`DEFAULT_TRAILER_DEPTH`].
pub fn trailer_depth(repo: &Repo) -> usize {
    repo.settings()
        .strategy_option(TRAILER_DEPTH_SETTING)
        .and_then(|(v, _, _)| v.as_u64())
        .map_or(DEFAULT_TRAILER_DEPTH, |n| {
            usize::try_from(n).map_or(MAX_TRAILER_DEPTH, |n| n.min(MAX_TRAILER_DEPTH))
        })
}

/// One commit's link to one checkpoint.
struct Link {
    /// The commit's full SHA.
    sha: String,
    /// The commit's short SHA.
    commit: String,
    /// Its subject line.
    subject: String,
    id: CheckpointId,
    /// Whether the commit is `HEAD`, whose post-commit hook can still run.
    head: bool,
}

/// The links of the last `depth` commits of the current branch (newest first), through their
/// trailers and the rewrite map as `show <commit>` reads them, and a `trailer-malformed`
/// finding for each trailer that is no ID. An unborn branch has none.
fn history_links(repo: &Repo, depth: usize) -> Result<(Vec<Link>, Vec<Finding>), DoctorError> {
    let mut findings = Vec::new();
    // A map that cannot be read loses only the links it holds: say so and read the trailers.
    let map = RewriteMap::load(repo)
        .map_err(|e| {
            findings.push(Finding::new(
                Code::CheckFailed,
                "trailers",
                crate::base::error::error_chain(&e),
            ))
        })
        .ok();
    let mut links = Vec::new();
    let Some(head) = repo.resolve_commit("HEAD") else {
        return Ok((links, findings));
    };
    let walk = repo
        .commits_newest_first(&[head], None, depth)
        .map_err(git_err("walk the branch"))?;
    for (n, oid) in walk.into_iter().enumerate() {
        let commit = repo
            .objects()
            .find_commit(oid)
            .map_err(git_err("read a commit"))?;
        let message = String::from_utf8_lossy(commit.message_bytes());
        let short = repo.short_id(oid);
        let subject = String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default());
        let trailers = checkpoint_trailers(&message);
        for t in &trailers {
            if let TrailerValue::Malformed(token) = t {
                findings.push(Finding::new(
                    Code::TrailerMalformed,
                    &short,
                    format!("{subject:?} has the Entire-Checkpoint trailer {token:?}, which is no checkpoint ID; readers ignore it"),
                ));
            }
        }
        let inherited = map.as_ref().and_then(|m| m.get(&oid.to_string()));
        links.extend(
            crate::ops::rewrites::links_of(trailers, inherited)
                .into_iter()
                .map(|id| Link {
                    sha: oid.to_string(),
                    commit: short.clone(),
                    subject: subject.clone().into_owned(),
                    id,
                    head: n == 0,
                }),
        );
    }
    Ok((links, findings))
}

/// Whether a remote-tracking branch holds `commit`: it was pushed, and rewriting it would need
/// a force-push.
fn published(repo: &Repo, commit: Oid) -> bool {
    let Ok(refs) = repo.refs_under("refs/remotes/") else {
        return true;
    };
    refs.into_iter()
        .filter_map(|(_, tip)| tip)
        .any(|tip| tip == commit || repo.is_descendant_of(tip, commit).unwrap_or(true))
}

/// `squash-unlinked`: commits of the current branch's last commits ([`TRAILER_DEPTH_SETTING`])
/// that squash a branch's commits without their links ([`crate::ops::lost_links`]). `--fix`
/// records the links in the local rewrite map, as `post-rewrite` does for a rewrite our hooks
/// see, so `show` and `blame` of the squash read them here; the repair that reaches every clone
/// is carrying them in the commit, which is only offered while it is `HEAD` and unpushed.
pub(super) fn squashes(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let depth = trailer_depth(cx.repo);
    let (links, _) = history_links(cx.repo, depth)?;
    let linked: HashSet<CheckpointId> = links.into_iter().map(|l| l.id).collect();
    let map = RewriteMap::load(cx.repo).ok();
    let found = crate::ops::lost_links::lost_squashes(cx.repo, map.as_ref(), &linked, depth)?;
    let head = cx.repo.resolve_commit("HEAD");
    let mut out = Vec::new();
    for squash in found {
        let commit = cx
            .repo
            .objects()
            .find_commit(squash.commit)
            .map_err(git_err("read a commit"))?;
        let subject = String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default());
        let short = cx.repo.short_id(squash.commit);
        let ids: Vec<&str> = squash.lost.iter().map(CheckpointId::as_str).collect();
        let mut finding = Finding::new(
            Code::SquashUnlinked,
            &short,
            format!(
                "{subject:?} squashes {} linked commit(s) of {} without their links: it drops checkpoint(s) {}",
                squash.squashed.len(),
                squash.branch,
                ids.join(", ")
            ),
        );
        if cx.fix {
            let trailers =
                crate::ops::rewrites::links(&String::from_utf8_lossy(commit.message_bytes()), None);
            let rewrites: Vec<crate::ops::rewrites::Rewrite> = squash
                .squashed
                .iter()
                .map(|(old, old_links)| crate::ops::rewrites::Rewrite {
                    old: old.to_string(),
                    new: squash.commit.to_string(),
                    old_links: old_links.clone(),
                    new_trailers: trailers.clone(),
                })
                .collect();
            crate::ops::rewrites::record(cx.repo, &rewrites)?;
            finding.message +=
                "; re-linked in this clone's rewrite map, which show and blame follow";
            out.push(finding.fixed_if(true));
            continue;
        }
        finding = if head == Some(squash.commit) && !published(cx.repo, squash.commit) {
            let mut argv = vec!["commit".to_owned(), "--amend".into(), "--no-edit".into()];
            for id in &ids {
                argv.push("--trailer".into());
                argv.push(format!("Entire-Checkpoint: {id}"));
            }
            finding.repair(Command::git(argv))
        } else {
            finding.advise(format!(
                "git entire-checkpoint doctor --fix re-links them in this clone (show and blame follow the rewrite map); elsewhere each is read by its ID (git entire-checkpoint show {})",
                ids[0]
            ))
        };
        out.push(finding);
    }
    Ok(out)
}

/// The repair of a `trailer-dangling` link. The link dangles when the commit's post-commit hook
/// did not run (a hook manager or another tool displaced ours) or the checkpoint was lost. For
/// `HEAD` with sessions still staged, running the post-commit hook writes them under the
/// trailer's ID; an older commit's sessions went into a later commit's checkpoint (or were never
/// staged), so what is left to repair is the hook that did not run: re-installing ours.
struct DanglingRepair {
    /// Sessions are staged in this work tree.
    staged: bool,
    /// Our post-commit hook is not the one git runs.
    hook_displaced: bool,
    /// The command that re-installs ours.
    install: Command,
}

impl DanglingRepair {
    fn new(repo: &Repo) -> Self {
        let staged = crate::ops::session::SessionStore::new(repo)
            .pending_here()
            .is_ok_and(|p| !p.is_empty());
        // Only a foreign hook displaced ours; with none at all, the trailer came from elsewhere.
        let hook_displaced = crate::ops::hooks::status(repo).iter().any(|(name, state)| {
            name == "post-commit" && *state == crate::ops::hooks::HookState::Foreign
        });
        DanglingRepair {
            staged,
            hook_displaced,
            install: Command::ours(crate::ops::hooks::install_args(repo)),
        }
    }

    fn apply(&self, mut finding: Finding, link: &Link) -> Finding {
        if link.head && self.staged {
            finding.message += "; its sessions are still staged, and the post-commit hook writes them under that ID";
            return finding.repair(Command::ours(["hook", "post-commit"]));
        }
        if self.hook_displaced {
            finding.message += ": our post-commit hook is not the one git runs, so the commit's sessions went into a later checkpoint or were not recorded";
            return finding.repair(self.install.clone());
        }
        finding.message += ": the sessions it recorded cannot be read from it";
        finding.advise(ACKNOWLEDGE_ADVICE)
    }
}

/// The advice on a dangling link nothing here can repair; `--fix` acknowledges it.
const ACKNOWLEDGE_ADVICE: &str = "push it from a clone that holds it, or acknowledge it as lost with git entire-checkpoint doctor --fix";

/// What the remote holds, as far as one listing and one branch fetch could tell.
struct RemoteHoldings<'r> {
    /// The remote as shown.
    display: String,
    /// The IDs of its checkpoint refs; `None` when the listing failed or was not needed.
    refs: Option<HashSet<CheckpointId>>,
    /// Its v1 branch as fetched; `None` when the fetch failed or was not needed.
    branch: Option<GitBranchStore<'r>>,
    /// Why the remote could not be asked.
    failure: Option<String>,
}

impl RemoteHoldings<'_> {
    /// Whether the remote holds `id` wherever routing would look for it (`order`); `None` when
    /// a place that could hold it could not be asked.
    fn holds(&self, id: &CheckpointId, order: &[StoreKind]) -> Result<Option<bool>, DoctorError> {
        let mut unknown = false;
        for kind in order {
            let held = match kind {
                StoreKind::GitRefs => self.refs.as_ref().map(|r| r.contains(id)),
                StoreKind::GitBranch => self
                    .branch
                    .as_ref()
                    .map(|b| b.remote_holds(id))
                    .transpose()?,
            };
            match held {
                Some(true) => return Ok(Some(true)),
                Some(false) => {}
                None => unknown = true,
            }
        }
        Ok((!unknown).then_some(false))
    }
}

/// Asks the checkpoint remote about the places `orders` route to: one `ls-remote` when an ID
/// routes to refs, one fetch of its v1 branch into the remote-tracking ref when one routes to
/// the branch (skipped once the remote failed, so an unreachable remote costs one deadline).
fn ask_remote<'r>(
    repo: &'r Repo,
    target: &crate::remote::checkpoint_remote::CheckpointTarget,
    orders: &[Vec<StoreKind>],
) -> Result<RemoteHoldings<'r>, DoctorError> {
    let needs = |kind| orders.iter().any(|o| o.contains(&kind));
    let mut out = RemoteHoldings {
        display: target.display.clone(),
        refs: None,
        branch: None,
        failure: None,
    };
    let fetcher = Fetcher::new(repo, target.target.clone());
    if needs(StoreKind::GitRefs) {
        match fetcher.list_remote() {
            Ok(refs) => out.refs = Some(refs.into_iter().map(|r| r.id().clone()).collect()),
            Err(e) => out.failure = Some(e.reason()),
        }
    }
    if needs(StoreKind::GitBranch) && out.failure.is_none() {
        let mut branch = GitBranchStore::mirror(repo);
        branch.set_remote(crate::remote::on_demand::remote_copy(
            repo,
            &target.target,
            Some(fetcher.sibling()),
        ));
        match branch.refresh_remote() {
            Ok(_) => out.branch = Some(branch),
            Err(StoreError::Fetch(e)) => out.failure = Some(e.reason()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// `trailer-malformed`, `trailer-dangling`, `checkpoint-unpushed` and `trailers-unverified`:
/// the links of the current branch's last commits ([`TRAILER_DEPTH_SETTING`]) checked against
/// what is held locally (read through the topology's routing: refs, the local v1 branch, the
/// remote's copy of it) and what the checkpoint remote holds (asked once, see [`ask_remote`]).
/// The remote is asked first, so a local copy it no longer has is not counted. A link the
/// remote could not be asked about is neither dangling nor unpushed: one `trailers-unverified`
/// finding counts them. A dangling link cannot be brought back: `--fix` acknowledges those with
/// no repair to run (recorded locally, never reported again), and pushing is the named repair of
/// an unpushed one.
pub(super) fn trailers(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let Some(topology) = &cx.topology else {
        return Ok(Vec::new());
    };
    let (links, mut out) = history_links(cx.repo, trailer_depth(cx.repo))?;
    if links.is_empty() {
        return Ok(out);
    }
    let mut ids: Vec<&CheckpointId> = links.iter().map(|l| &l.id).collect();
    ids.sort();
    ids.dedup();
    let orders: Vec<Vec<StoreKind>> = ids
        .iter()
        .map(|id| topology.read_order(id.kind()))
        .collect();
    let remote = match crate::remote::checkpoint_remote::resolve(cx.repo, None) {
        Ok(Some(target)) => Some(ask_remote(cx.repo, &target, &orders)?),
        Ok(None) => None,
        Err(e) => Some(RemoteHoldings {
            display: ".entire/settings.json".into(),
            refs: None,
            branch: None,
            failure: Some(crate::base::error::error_chain(&e)),
        }),
    };
    let mut status: HashMap<&CheckpointId, (bool, Option<bool>)> = HashMap::new();
    for (id, order) in ids.into_iter().zip(&orders) {
        // Held but unreadable is still held: corrupt, not dangling.
        let local = !matches!(topology.read(id), Ok(None));
        let on_remote = match &remote {
            Some(r) => r.holds(id, order)?,
            None => Some(false),
        };
        status.insert(id, (local, on_remote));
    }
    let shown = remote.as_ref().map(|r| r.display.as_str());
    // Looked up only when a link dangles: it reads the hooks and the staged sessions.
    let repair = std::cell::OnceCell::new();
    let repair = || repair.get_or_init(|| DanglingRepair::new(cx.repo));
    let (mut unverified_here, mut unverified_nowhere) = (0, 0);
    let acknowledged = Acknowledged::load(cx.repo);
    // Dangling links --fix acknowledges: their findings' places in `out`.
    let mut acknowledging: Vec<(usize, (String, CheckpointId))> = Vec::new();
    for link in &links {
        let (id, what) = (&link.id, &link.subject);
        let dangling = match (status[id], shown) {
            ((false, Some(false)), Some(remote)) => Finding::new(
                Code::TrailerDangling,
                &link.commit,
                format!("{what:?} links checkpoint {id}, which neither this repository nor {remote} holds"),
            ),
            ((false, Some(false)), None) => Finding::new(
                Code::TrailerDangling,
                &link.commit,
                format!("{what:?} links checkpoint {id}, which this repository does not hold (and there is no remote)"),
            ),
            ((true, Some(false)), Some(remote)) => {
                let unpushed = Finding::new(
                    Code::CheckpointUnpushed,
                    &link.commit,
                    format!("{what:?} links checkpoint {id}, which is held here but not on {remote}"),
                );
                // A push the server refuses cannot repair it: say what can.
                out.push(match super::push::refusal_advice(cx.repo, remote) {
                    Some(advice) => unpushed.advise(advice),
                    None => unpushed.repair(Command::ours(["push"])),
                });
                continue;
            }
            ((true, None), _) => {
                unverified_here += 1;
                continue;
            }
            ((false, None), _) => {
                unverified_nowhere += 1;
                continue;
            }
            _ => continue,
        };
        if acknowledged.contains(&link.sha, id) {
            continue;
        }
        let dangling = repair().apply(dangling, link);
        if cx.fix && !matches!(dangling.repair, Some(Repair::Run(_))) {
            acknowledging.push((out.len(), (link.sha.clone(), id.clone())));
        }
        out.push(dangling);
    }
    if !acknowledging.is_empty() {
        let links: Vec<_> = acknowledging.iter().map(|(_, l)| l.clone()).collect();
        Acknowledged::add(cx.repo, &links)?;
        for (at, _) in acknowledging {
            out[at].message +=
                "; acknowledged as lost in this clone, so doctor no longer reports it";
            out[at].fixed = true;
        }
    }
    if let Some(r) = &remote {
        if unverified_here + unverified_nowhere > 0 {
            out.push(Finding::new(
                Code::TrailersUnverified,
                &r.display,
                format!(
                    "could not ask {} which checkpoints it holds ({}): {unverified_here} link(s) held here may be unpushed and {unverified_nowhere} held nowhere here may be dangling",
                    r.display,
                    r.failure.as_deref().unwrap_or("not asked"),
                ),
            ));
        }
    }
    Ok(out)
}
