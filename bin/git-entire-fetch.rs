//! `git entire-fetch`: fetch checkpoints from a remote: named IDs, every checkpoint ref, or the
//! checkpoints the `Entire-Checkpoint:` trailers of a range of commits name.

#[path = "common/mod.rs"]
mod common;

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser};
use serde_json::json;

use entire_checkpoints::base::id::{CheckpointId, IdKind};
use entire_checkpoints::git::refname::CheckpointRef;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::git::url::{self as remote, Remote};
use entire_checkpoints::model::trailers::{checkpoint_trailers, TrailerValue};
use entire_checkpoints::remote::fetch::FetchFilter;
use entire_checkpoints::remote::fetch::{FetchError, Fetched, Fetcher};
use entire_checkpoints::remote::partial::PartialCache;
use entire_checkpoints::store::branch::GitBranchStore;
use entire_checkpoints::store::refs::GitRefsStore;
use entire_checkpoints::store::{CheckpointReader, StoreError};

/// Fetch checkpoints from a remote: named IDs, all of them, or those a revision range links to.
#[derive(Parser)]
#[command(name = "git-entire-fetch", version, about, max_term_width = 100)]
struct Cli {
    /// `[<remote>] [<ID>...]`: the remote (default: the checkpoint remote, else origin, else the
    /// only remote), then checkpoint IDs. A first word that is a configured remote, a URL or a
    /// path is the remote.
    args: Vec<String>,
    /// Fetch every checkpoint ref of the remote.
    #[arg(long)]
    all: bool,
    /// Fetch the checkpoints named by Entire-Checkpoint trailers of the commits in a range
    /// (e.g. `origin/main..HEAD`, or `@{upstream}` for everything it reaches).
    #[arg(long = "for", value_name = "REV-RANGE")]
    for_range: Option<String>,
    /// Fetch checkpoints without their transcripts into the partial cache, where the server
    /// supports it (only `blob:none`); transcripts are fetched when read. A server without
    /// filter support gets a warning and whole checkpoints.
    #[arg(long, value_name = "SPEC")]
    filter: Option<FetchFilter>,
    /// Print JSON: one entry per checkpoint with its status.
    #[arg(long)]
    json: bool,
    /// Silence warnings and progress.
    #[arg(short, long)]
    quiet: bool,
    /// More diagnostics on stderr (repeatable).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Write man pages into DIR and exit (used by install.sh).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_man: Option<PathBuf>,
}

/// Refs per `git fetch` when fetching many.
const FETCH_CHUNK: usize = 500;

fn main() -> ExitCode {
    common::main_with(run)
}

fn looks_like_remote(repo: &Repo, word: &str) -> bool {
    repo.config_string(&format!("remote.{word}.url")).is_some()
        || word.contains('/')
        || word.contains(':')
}

/// One checkpoint's outcome.
struct Outcome {
    id: String,
    status: &'static str,
    error: Option<String>,
    /// Held in the partial cache, without its transcripts.
    partial: bool,
}

/// How this run fetches refs missing from the repository: whole into it, or with a filter into
/// the partial cache.
struct Mode<'r> {
    fetcher: Fetcher<'r>,
    partial: Option<(PartialCache<'r>, FetchFilter)>,
    /// The v1 branch, locally and as the remote's copy (fetched whole, once, when needed).
    branch: GitBranchStore<'r>,
}

impl Mode<'_> {
    /// Fetches `names`; the flag says whether they ended up in the partial cache.
    fn fetch_refs(&self, names: &[String]) -> Result<(Vec<(String, Fetched)>, bool), FetchError> {
        match &self.partial {
            None => Ok((self.fetcher.fetch_refs(names)?, false)),
            Some((cache, filter)) => {
                let f = cache.fetch_refs(&self.fetcher, names, *filter)?;
                Ok((f.results, !f.whole))
            }
        }
    }

    /// Fetches one checkpoint in both spellings; the flag as for [`Mode::fetch_refs`].
    fn fetch_checkpoint(&self, id: &CheckpointId) -> Result<(Fetched, bool), FetchError> {
        match &self.partial {
            None => Ok((self.fetcher.fetch_checkpoint(id)?, false)),
            Some((cache, filter)) => {
                let f = cache.fetch_checkpoint(&self.fetcher, id, *filter)?;
                let state = f
                    .results
                    .iter()
                    .map(|(_, s)| s.clone())
                    .find(|s| *s != Fetched::Absent)
                    .unwrap_or(Fetched::Absent);
                Ok((state, !f.whole))
            }
        }
    }

    /// Whether `id` is already here: in the repository, or (for a filtered fetch) in the cache.
    fn present(&self, store: &GitRefsStore<'_>, id: &CheckpointId) -> Result<bool> {
        if store.locate_ref(id)?.is_some() {
            return Ok(true);
        }
        if id.kind() == IdKind::Hex && self.branch.holds(id)? {
            return Ok(true);
        }
        Ok(matches!(&self.partial, Some((cache, _)) if cache.has(id)))
    }
}

fn status_name(f: &Fetched) -> &'static str {
    match f {
        Fetched::Updated => "fetched",
        Fetched::Absent => "not_found",
        Fetched::Diverged => "diverged",
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    common::init_logging(cli.verbose);
    if let Some(dir) = &cli.generate_man {
        return common::generate_man(Cli::command(), dir);
    }
    let repo = Repo::discover()?;
    common::warn_unparseable_settings(&repo, cli.quiet);
    let mut words = cli.args.clone();
    let remote = match words.first() {
        Some(w) if CheckpointId::parse(w).is_err() && looks_like_remote(&repo, w) => {
            let remote = Remote::parse(w)
                .with_context(|| format!("remote {} is refused", remote::shown(w)))?;
            words.remove(0);
            remote
        }
        _ => entire_checkpoints::remote::checkpoint_remote::resolve(&repo, None)?
            .map(|t| t.target)
            .context("no remote to fetch from: name one (git entire-fetch <remote> ...)")?,
    };
    let ids = words
        .iter()
        .map(|w| CheckpointId::parse(w))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.is_empty() && !cli.all && cli.for_range.is_none() {
        bail!("nothing to fetch: name checkpoint IDs, or use --all or --for <REV-RANGE>");
    }
    let quiet = cli.quiet;
    let fetcher = Fetcher::new(&repo, remote).on_notice(move |m| common::warn(quiet, m));
    let partial = match cli.filter {
        Some(filter) => Some((PartialCache::create(&repo)?, filter)),
        None => None,
    };
    let mut branch = GitBranchStore::mirror(&repo);
    branch.set_remote(entire_checkpoints::remote::on_demand::remote_copy(
        &repo,
        fetcher.remote(),
        Some(fetcher.sibling()),
    ));
    let mode = Mode {
        fetcher,
        partial,
        branch,
    };
    let fetcher = &mode.fetcher;
    let store = GitRefsStore::new(&repo);
    let mut outcomes: Vec<Outcome> = Vec::new();

    let mut wanted: Vec<CheckpointId> = ids.clone();
    if let Some(range) = &cli.for_range {
        for t in trailers_in(&repo, range)? {
            match t {
                TrailerValue::Valid(id) => {
                    if !wanted.contains(&id) {
                        wanted.push(id)
                    }
                }
                TrailerValue::Malformed(tok) => common::warn(
                    cli.quiet,
                    format!("ignoring malformed Entire-Checkpoint trailer {tok:?}"),
                ),
            }
        }
    }
    let mut to_fetch = Vec::new();
    for id in wanted {
        if mode.present(&store, &id)? {
            outcomes.push(Outcome {
                id: id.to_string(),
                status: "present",
                error: None,
                partial: false,
            });
        } else {
            to_fetch.push(id);
        }
    }
    let mut transport_error = None;
    for chunk in to_fetch.chunks(FETCH_CHUNK) {
        let names: Vec<String> = chunk
            .iter()
            .map(|id| CheckpointRef::canonical(id).name().to_owned())
            .collect();
        let (results, partial) = match mode.fetch_refs(&names) {
            Ok(r) => r,
            Err(e) => {
                let msg = e.to_string();
                outcomes.extend(chunk.iter().map(|id| Outcome {
                    id: id.to_string(),
                    status: "failed",
                    error: Some(msg.clone()),
                    partial: false,
                }));
                transport_error.get_or_insert(e);
                continue;
            }
        };
        for (id, (_, state)) in chunk.iter().zip(results_in_order(&names, results)) {
            // The remote may hold the case-folded spelling (a ref packed on a case-insensitive
            // filesystem); ask for it only when the canonical one is absent.
            let (state, partial) = match state {
                Fetched::Absent if CheckpointRef::folded(id).is_some() => {
                    match mode.fetch_checkpoint(id) {
                        Ok(s) => s,
                        Err(e) => {
                            transport_error.get_or_insert(e);
                            (Fetched::Absent, false)
                        }
                    }
                }
                s => (s, partial),
            };
            outcomes.push(Outcome {
                id: id.to_string(),
                partial: partial && state == Fetched::Updated,
                status: status_name(&state),
                error: None,
            });
        }
    }

    if cli.all {
        match fetcher.list_remote() {
            Ok(remote_refs) => {
                // A checkpoint the repository holds is only ever updated whole.
                let (here, missing): (Vec<String>, Vec<String>) = remote_refs
                    .iter()
                    .map(|r| r.name().to_owned())
                    .partition(|n| {
                        mode.partial.is_none()
                            || CheckpointRef::parse(n)
                                .ok()
                                .and_then(|r| store.locate_ref(r.id()).ok().flatten())
                                .is_some()
                    });
                let whole = here.chunks(FETCH_CHUNK).map(|c| (c, false));
                let filtered = missing.chunks(FETCH_CHUNK).map(|c| (c, true));
                for (chunk, filtered) in whole.chain(filtered) {
                    let result = match filtered {
                        true => mode.fetch_refs(chunk),
                        false => fetcher.fetch_refs(chunk).map(|r| (r, false)),
                    };
                    match result {
                        Ok((results, partial)) => {
                            outcomes.extend(results.into_iter().map(|(name, s)| {
                                Outcome {
                                    id: CheckpointRef::parse(&name)
                                        .map(|r| r.id().to_string())
                                        .unwrap_or(name),
                                    partial: partial && s == Fetched::Updated,
                                    status: status_name(&s),
                                    error: None,
                                }
                            }))
                        }
                        Err(e) => {
                            transport_error.get_or_insert(e);
                            break;
                        }
                    }
                }
            }
            Err(e) => {
                transport_error.get_or_insert(e);
            }
        }
    }

    // Hex IDs the remote has no ref for may be on its v1 branch: one fetch of the branch.
    let on_branch = |o: &Outcome| {
        o.status == "not_found"
            && CheckpointId::parse(&o.id).is_ok_and(|id| id.kind() == IdKind::Hex)
    };
    if outcomes.iter().any(on_branch) || cli.all {
        let before: HashSet<CheckpointId> = mode.branch.ids()?.into_iter().collect();
        match mode.branch.refresh_remote() {
            Ok(_) => {
                for o in outcomes.iter_mut().filter(|o| on_branch(o)) {
                    if mode.branch.holds(&CheckpointId::parse(&o.id)?)? {
                        o.status = "fetched";
                    }
                }
                if cli.all {
                    let listed: HashSet<String> = outcomes.iter().map(|o| o.id.clone()).collect();
                    for id in mode.branch.ids()? {
                        if listed.contains(id.as_str()) {
                            continue;
                        }
                        outcomes.push(Outcome {
                            status: if before.contains(&id) {
                                "present"
                            } else {
                                "fetched"
                            },
                            id: id.to_string(),
                            error: None,
                            partial: false,
                        });
                    }
                }
            }
            Err(StoreError::Fetch(e)) => {
                transport_error.get_or_insert(e);
            }
            Err(e) => return Err(e.into()),
        }
    }
    let named_missing = outcomes
        .iter()
        .any(|o| o.status == "not_found" && ids.iter().any(|id| id.as_str() == o.id));

    if cli.all && outcomes.iter().any(|o| o.status == "fetched") {
        // A bulk fetch can create thousands of loose refs: pack them.
        if let Err(e) = entire_checkpoints::ops::gc::pack_checkpoint_refs(&repo) {
            common::warn(
                cli.quiet,
                format!("could not pack the checkpoint refs: {e}"),
            );
        }
    }
    if cli.json {
        let v: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| {
                let mut e = json!({"checkpoint_id": o.id, "status": o.status});
                if let Some(err) = &o.error {
                    e["error"] = json!(err);
                }
                if o.partial {
                    e["partial"] = json!(true);
                }
                e
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&v)?;
        text.push('\n');
        common::write_stdout(text.as_bytes())?;
    } else {
        let mut text = String::new();
        for o in &outcomes {
            let note = if o.partial {
                " (without transcripts)"
            } else {
                ""
            };
            text.push_str(&format!("{}  {}{note}\n", o.id, o.status.replace('_', " ")));
        }
        common::write_stdout(text.as_bytes())?;
        let diverged = outcomes.iter().filter(|o| o.status == "diverged").count();
        if diverged > 0 {
            common::warn(
                cli.quiet,
                format!("{diverged} checkpoint(s) diverged from the remote and were left as they are; the next push merges them"),
            );
        }
    }
    if let Some(e) = transport_error {
        return Err(StoreError::Fetch(e).into());
    }
    if named_missing {
        let missing: Vec<&str> = outcomes
            .iter()
            .filter(|o| o.status == "not_found")
            .map(|o| o.id.as_str())
            .collect();
        let first = CheckpointId::parse(missing[0])?;
        return Err(
            anyhow::Error::from(StoreError::NotFound { id: first }).context(format!(
                "not found locally or on the remote: {}",
                missing.join(", ")
            )),
        );
    }
    Ok(())
}

/// Orders `results` like `names` (fetch reports absent refs first).
fn results_in_order(names: &[String], results: Vec<(String, Fetched)>) -> Vec<(String, Fetched)> {
    names
        .iter()
        .map(|n| {
            let state = results
                .iter()
                .find(|(r, _)| r == n)
                .map(|(_, s)| s.clone())
                .unwrap_or(Fetched::Absent);
            (n.clone(), state)
        })
        .collect()
}

/// Every `Entire-Checkpoint:` trailer of the commits in `range` (`A..B`, or one revision and
/// everything it reaches), in walk order, duplicates dropped.
fn trailers_in(repo: &Repo, range: &str) -> Result<Vec<TrailerValue>> {
    let messages = repo
        .commit_messages_in(range)
        .with_context(|| format!("--for {range}: not a revision range of this repository"))?;
    let mut out: Vec<TrailerValue> = Vec::new();
    for m in messages {
        for t in checkpoint_trailers(&m) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}
