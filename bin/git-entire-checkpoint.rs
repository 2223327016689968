//! `git entire-checkpoint`: write, read and manage checkpoints.

#[path = "common/mod.rs"]
mod common;
#[path = "checkpoint/demo.rs"]
mod demo;
#[path = "checkpoint/doctor.rs"]
mod doctor;
#[path = "checkpoint/gc.rs"]
mod gc;
#[path = "checkpoint/render.rs"]
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, CommandFactory, Parser, Subcommand};
use serde_json::Value;

use entire_checkpoints::base::id::CheckpointId;
use entire_checkpoints::base::session_id::SessionId;
use entire_checkpoints::base::time as timefmt;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::git::url::Remote;
use entire_checkpoints::model::documents::{TokenUsage, DEFAULT_STRATEGY};
use entire_checkpoints::ops::commit_hooks;
use entire_checkpoints::ops::hooks;
use entire_checkpoints::ops::migrate;
use entire_checkpoints::ops::rewrites::{self, RewriteMap};
use entire_checkpoints::ops::session::{Record, SessionStore};
use entire_checkpoints::store::{Backfill, Checkpoint, SessionWrite, StoreError};
use entire_checkpoints::topology::{Topology, TopologyError, WriteReport};
use std::io::Read as _;

/// Store AI coding-session checkpoints inside this git repository.
#[derive(Parser)]
#[command(name = "git-entire-checkpoint", version, about, max_term_width = 100)]
struct Cli {
    /// Silence warnings and progress.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// More diagnostics on stderr (repeatable).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Write man pages into DIR and exit (used by install.sh).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_man: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Create a checkpoint, or add or replace one session in it; prints the checkpoint ID.
    Write(Box<WriteArgs>),
    /// Update an existing checkpoint.
    Backfill(BackfillArgs),
    /// Show one checkpoint (by ID, unique ID prefix, or a commit with Entire-Checkpoint trailers).
    Show(ShowArgs),
    /// Write one file of a checkpoint's tree to stdout as raw bytes.
    Cat {
        /// Checkpoint ID or unique prefix.
        id: String,
        /// Path inside the checkpoint, e.g. `metadata.json` or `0/full.jsonl`.
        path: String,
        #[command(flatten)]
        fetch: FetchArgs,
    },
    /// List all checkpoints, newest first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Show at most N checkpoints.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Also list checkpoints that exist only on the remote R (default: the checkpoint remote,
        /// else origin, else the only remote), marked as such.
        #[arg(long, value_name = "R", num_args = 0..=1)]
        remote: Option<Option<Remote>>,
        /// With --remote: fetch the remote-only checkpoints to fill in their details (bounded
        /// to 30 seconds; the rest stay bare remote-only entries).
        #[arg(long, requires = "remote")]
        hydrate: bool,
    },
    /// The resolved checkpoint topology and where it came from.
    Config {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Topology, checkpoints waiting to be pushed, and hooks.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Push checkpoint refs now (what the pre-push hook does).
    Push {
        /// The code remote (default: origin, else the only remote). With a checkpoint remote
        /// configured, checkpoints go there instead.
        remote: Option<Remote>,
        /// Compare every local checkpoint ref with the remote and push whatever it lacks or has
        /// behind, queued or not.
        #[arg(long)]
        all: bool,
    },
    /// Stage a live session's data for the next commit, or inspect and drop staged sessions.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Entry points the installed hook scripts call. Not for people.
    #[command(subcommand, hide = true)]
    Hook(HookCommand),
    /// Run the whole story in a scratch directory: hooks, a staged session, a commit, a push, a
    /// fresh clone reading the checkpoint on demand. Cleans up afterwards.
    Demo {
        /// Keep the scratch directory and print its path.
        #[arg(long)]
        keep: bool,
    },
    /// Install, remove or inspect the git hooks.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Copy every checkpoint of the git-branch store into git-refs (idempotent).
    Migrate {
        /// Report what would be migrated; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Push the migrated refs now, to REMOTE (default: the checkpoint remote, else origin,
        /// else the only remote).
        #[arg(long, value_name = "REMOTE", num_args = 0..=1)]
        push: Option<Option<Remote>>,
    },
    /// Check the checkpoint namespace, push queues, v1 branch, lock files and hooks; exit 1
    /// while a problem remains.
    Doctor {
        /// Repair what can be repaired safely (never deletes checkpoint data, never pushes).
        #[arg(long)]
        fix: bool,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Delete local checkpoint refs confirmed on their delivery remote at the same commit and
    /// older than N days (never queued, unpushed, ahead or diverged ones), then pack refs.
    /// Reads fetch them back on demand.
    Gc {
        /// Keep checkpoints whose tip is newer than N days (default:
        /// strategy_options.checkpoint_gc_days; without either, gc is off).
        #[arg(long, value_name = "N")]
        keep_days: Option<u32>,
        /// Report what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The history of one checkpoint: its commits, newest first.
    Log {
        /// Checkpoint ID or unique prefix.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        fetch: FetchArgs,
    },
}

/// How reads get a checkpoint that is missing locally.
#[derive(Args)]
struct FetchArgs {
    /// Never fetch a checkpoint missing locally.
    #[arg(long, global = true)]
    no_fetch: bool,
    /// The remote to fetch a missing checkpoint from (default: the checkpoint remote, else
    /// origin, else the only remote).
    #[arg(long, value_name = "R", global = true)]
    remote: Option<Remote>,
}

#[derive(Args)]
struct BackfillArgs {
    #[command(subcommand)]
    what: BackfillCommand,
    #[command(flatten)]
    fetch: FetchArgs,
}

#[derive(Args)]
struct WriteArgs {
    /// The agent session being recorded.
    #[arg(long, value_name = "SID")]
    session: String,
    /// The checkpoint ID; minted in the primary store's format when omitted.
    #[arg(long)]
    id: Option<String>,
    #[command(flatten)]
    data: SessionData,
    /// Strategy name.
    #[arg(long, default_value = DEFAULT_STRATEGY)]
    strategy: String,
    /// Branch to record (default: the current branch).
    #[arg(long)]
    branch: Option<String>,
    /// A subject line for the checkpoint commit.
    #[arg(long)]
    commit_subject: Option<String>,
    /// Creation time (RFC 3339); default now.
    #[arg(long, value_name = "RFC3339")]
    created_at: Option<String>,
}

/// What `write` and `session record` take about a session.
#[derive(Args)]
struct SessionData {
    /// The session transcript so far (a file, or - for stdin), stored byte for byte (after
    /// secret redaction).
    #[arg(long, value_name = "FILE|-")]
    transcript: Option<String>,
    /// A user prompt (repeatable).
    #[arg(long = "prompt", value_name = "TEXT")]
    prompts: Vec<String>,
    /// A file the session touched (repeatable).
    #[arg(long = "files-touched", value_name = "PATH")]
    files_touched: Vec<String>,
    /// Agent display name, e.g. "Claude Code".
    #[arg(long)]
    agent: Option<String>,
    /// Model name.
    #[arg(long)]
    model: Option<String>,
    /// Token usage as a JSON object.
    #[arg(long, value_name = "JSON")]
    token_usage: Option<String>,
}

impl SessionData {
    /// Reads the transcript file and validates the token usage (before anything is written).
    fn load(&self) -> Result<(Option<Vec<u8>>, Option<TokenUsage>)> {
        let transcript = self
            .transcript
            .as_deref()
            .map(common::read_input)
            .transpose()?;
        let token_usage = self
            .token_usage
            .as_deref()
            .map(TokenUsage::parse_input)
            .transpose()
            .context("--token-usage")?;
        Ok((transcript, token_usage))
    }
}

#[derive(Subcommand)]
enum SessionCommand {
    /// Record a session's progress: the transcript so far, new prompts, files touched.
    Record {
        /// The session.
        #[arg(long, value_name = "SID")]
        session: String,
        #[command(flatten)]
        data: SessionData,
    },
    /// List staged sessions.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drop a staged session.
    Discard {
        /// The session.
        session: String,
    },
}

#[derive(Subcommand)]
enum HookCommand {
    /// git's prepare-commit-msg hook.
    PrepareCommitMsg {
        /// The commit message file.
        file: PathBuf,
        /// Where the message came from (message, template, merge, squash, commit).
        source: Option<String>,
        /// The commit, for `commit`.
        sha: Option<String>,
    },
    /// git's post-commit hook.
    PostCommit,
    /// git's post-rewrite hook (amend, rebase): records the rewrite so links to checkpoints survive.
    PostRewrite {
        /// `amend` or `rebase`.
        kind: Option<String>,
    },
    /// git's pre-auto-gc hook: checkpoint gc with the retention of the settings.
    PreAutoGc,
}

#[derive(Subcommand)]
enum HooksCommand {
    /// Install the hook scripts (respecting core.hooksPath), chaining any hook already there.
    Install {
        /// Install into the hooks directory even where lefthook owns it (rather than into its
        /// configuration).
        #[arg(long)]
        force: bool,
        /// Install even where the hooks directory is shared with other repositories
        /// (core.hooksPath outside the git dir) or tracked.
        #[arg(long)]
        shared: bool,
    },
    /// Remove our hooks and restore the ones they chained.
    Uninstall,
    /// Show which hooks are installed, the directory git runs them from and whether it is
    /// shared.
    Status,
}

#[derive(Subcommand)]
enum BackfillCommand {
    /// Replace a session's transcript (no-op when content_hash.txt already matches).
    Transcript {
        /// Checkpoint ID or unique prefix.
        id: String,
        /// The session whose transcript this is.
        #[arg(long, value_name = "SID")]
        session: String,
        /// The transcript (a file, or - for stdin).
        #[arg(long, value_name = "FILE|-")]
        transcript: String,
    },
    /// Set a session's `summary` object (JSON input). Default session: the latest.
    Summary {
        /// Checkpoint ID or unique prefix.
        id: String,
        /// The session to update.
        #[arg(long, value_name = "SID")]
        session: Option<String>,
        /// The summary JSON object (a file, or - for stdin).
        #[arg(long, value_name = "FILE|-")]
        summary: String,
    },
    /// Set the root `combined_attribution` object (JSON input).
    Attribution {
        /// Checkpoint ID or unique prefix.
        id: String,
        /// The attribution JSON object (a file, or - for stdin).
        #[arg(long, value_name = "FILE|-")]
        attribution: String,
    },
}

#[derive(Args)]
struct ShowArgs {
    /// Checkpoint ID, unique prefix, or commit-ish.
    target: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Only this session (slot number or session ID).
    #[arg(long, value_name = "N|SID")]
    session: Option<String>,
    /// Print the transcript of the session (default: the latest) instead.
    #[arg(long)]
    transcript: bool,
    #[command(flatten)]
    fetch: FetchArgs,
}

fn main() -> ExitCode {
    common::main_with(run)
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    common::init_logging(cli.verbose);
    if let Some(dir) = &cli.generate_man {
        return common::generate_man(Cli::command(), dir);
    }
    let Some(command) = cli.command else {
        Cli::command().print_help()?;
        return Ok(());
    };
    if let Command::Demo { keep } = command {
        return demo::run(keep);
    }
    // doctor opens the repository and the topology itself: it reports what fails there.
    if let Command::Doctor { fix, json } = command {
        return doctor::run(fix, json, cli.quiet);
    }
    let repo = Repo::discover()?;
    let quiet = cli.quiet;
    common::warn_unparseable_settings(&repo, quiet);
    let mut topo = Topology::open(&repo)?;
    // Every arm may return early: the notices of the reads are printed whatever happened.
    let result = (|| -> Result<()> {
        match command {
            Command::Write(args) => cmd_write(&repo, &topo, *args, quiet),
            Command::Backfill(b) => {
                enable_fetch(&repo, &mut topo, &b.fetch, quiet)?;
                cmd_backfill(&topo, b.what, quiet)
            }
            Command::Show(args) => {
                enable_fetch(&repo, &mut topo, &args.fetch, quiet)?;
                cmd_show(&repo, &topo, args)
            }
            Command::Cat { id, path, fetch } => {
                enable_fetch(&repo, &mut topo, &fetch, quiet)?;
                let cp = topo.get(&topo.resolve(&id)?)?;
                common::write_stdout(&topo.read_file(&cp, &path)?)
            }
            Command::List {
                json,
                limit,
                remote,
                hydrate,
            } => {
                let mut failed = None;
                let mut all = match remote {
                    None => topo.list()?,
                    Some(r) => {
                        let r = match r {
                            Some(r) => r,
                            None => common::checkpoint_target(&repo, None)?.target,
                        };
                        let listing = topo.list_with_remote(&repo, &r)?;
                        let mut entries = listing.entries;
                        match listing.enumeration_error {
                        // The local checkpoints are still listed; the command fails after.
                        Some(e) => failed = Some(anyhow::anyhow!(
                            "could not list the checkpoints of {r} (local checkpoints listed only): {}",
                            e.reason()
                        )),
                        None if hydrate => {
                            topo.hydrate(&repo, &r, &mut entries, std::time::Duration::from_secs(30));
                        }
                        None => {}
                    }
                        entries
                    }
                };
                if let Some(n) = limit {
                    all.truncate(n);
                }
                if json {
                    print_json(&render::list_json(&all))?;
                } else {
                    common::write_stdout(render::list_human(&all).as_bytes())?;
                }
                let unreadable: Vec<&String> =
                    all.iter().filter_map(|i| i.unreadable.as_ref()).collect();
                for reason in &unreadable {
                    eprintln!("entire: unreadable checkpoint: {reason}");
                }
                if let Some(e) = failed {
                    return Err(e);
                }
                if !unreadable.is_empty() {
                    bail!("{} checkpoint(s) could not be read", unreadable.len());
                }
                Ok(())
            }
            Command::Config { json } => {
                let mut v = render::config_json(&topo);
                render::add_remote_fields(&repo, &mut v)?;
                if json {
                    print_json(&v)
                } else {
                    common::write_stdout(render::config_human(&v).as_bytes())
                }
            }
            Command::Status { json } => {
                let mut v = render::status_json(&repo, &topo);
                render::add_remote_fields(&repo, &mut v)?;
                render::add_scale_fields(&repo, &mut v)?;
                if json {
                    print_json(&v)
                } else {
                    common::write_stdout(render::status_human(&v).as_bytes())
                }
            }
            Command::Push { remote, all } => {
                common::push_and_report(&repo, &topo, remote.as_deref(), all, quiet)
            }
            Command::Demo { .. } | Command::Doctor { .. } => {
                unreachable!("handled before opening a repository")
            }
            Command::Session(c) => cmd_session(&repo, &topo, c, quiet),
            Command::Hook(h) => {
                common::bound_hook(&repo, std::time::Instant::now());
                // Hooks never fail the user's git command: every problem is a warning.
                if let Err(e) = cmd_hook(&repo, &topo, h, quiet) {
                    common::warn(quiet, format!("checkpoint hook: {e:#}"));
                }
                Ok(())
            }
            Command::Hooks(h) => {
                let done = match h {
                    HooksCommand::Install { force, shared } => {
                        hooks::install(&repo, hooks::InstallOptions { force, shared })?
                    }
                    HooksCommand::Uninstall => hooks::uninstall(&repo)?,
                    HooksCommand::Status => hooks::Installed {
                        states: hooks::status(&repo),
                        warnings: Vec::new(),
                    },
                };
                for w in &done.warnings {
                    common::warn(quiet, w);
                }
                let dir = hooks::hooks_dir(&repo);
                let mut text = format!(
                    "{:<20}{} ({})\n",
                    "directory",
                    dir.display(),
                    match hooks::sharing(&repo, &dir) {
                        Some(why) => format!("shared: {why}"),
                        None => "this repository only".to_owned(),
                    }
                );
                for (name, state) in done.states {
                    let what = match state {
                        hooks::HookState::Installed => "installed".to_owned(),
                        hooks::HookState::Chained(chained) => {
                            format!("installed (chains {})", chained.join(", "))
                        }
                        hooks::HookState::Managed(manager) => {
                            format!("installed (run by {manager})")
                        }
                        hooks::HookState::Foreign => "foreign hook (not ours)".to_owned(),
                        hooks::HookState::Missing => "missing".to_owned(),
                    };
                    text.push_str(&format!(
                        "{name:<20}{what}  ({})\n",
                        dir.join(&name).display()
                    ));
                }
                common::write_stdout(text.as_bytes())
            }
            Command::Migrate { dry_run, push } => {
                if !dry_run {
                    topo.check_writable()?;
                }
                cmd_migrate(&repo, &topo, dry_run, quiet)?;
                match push {
                    Some(_) if dry_run => Ok(()),
                    Some(remote) => {
                        if !repo.settings().push_sessions_enabled() {
                            common::warn(quiet, "checkpoint pushing is disabled in settings; refs stay queued for the next push");
                            return Ok(());
                        }
                        let target = common::checkpoint_target(&repo, remote.as_deref())?;
                        common::flush_and_report(&repo, topo.refs_store(), &target, false, quiet)
                    }
                    None => Ok(()),
                }
            }
            Command::Gc {
                keep_days,
                dry_run,
                json,
            } => gc::run(
                &repo,
                &topo,
                gc::GcArgs {
                    keep_days,
                    dry_run,
                    json,
                    quiet,
                },
            ),
            Command::Log { id, json, fetch } => {
                enable_fetch(&repo, &mut topo, &fetch, quiet)?;
                let history = topo.history(&topo.resolve(&id)?)?;
                if json {
                    print_json(&serde_json::to_value(&history)?)
                } else {
                    common::write_stdout(render::log_human(&history).as_bytes())
                }
            }
        }
    })();
    for notice in topo.notices() {
        common::warn(quiet, notice);
    }
    result
}

/// Turns on the on-demand fetch of checkpoints missing locally, unless `--no-fetch` or there is
/// no remote (then a miss is simply "not found").
fn enable_fetch<'r>(
    repo: &'r Repo,
    topo: &mut Topology<'r>,
    args: &FetchArgs,
    quiet: bool,
) -> Result<()> {
    if args.no_fetch {
        return Ok(());
    }
    let remote = match &args.remote {
        Some(r) => Some(r.clone()),
        None => {
            entire_checkpoints::remote::checkpoint_remote::resolve(repo, None)?.map(|t| t.target)
        }
    };
    if let Some(remote) = remote {
        let fetcher = entire_checkpoints::remote::fetch::Fetcher::new(repo, remote)
            .on_notice(move |m| common::warn(quiet, m));
        topo.enable_fetch_with(fetcher);
    }
    Ok(())
}

pub(crate) fn print_json(v: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(v)?;
    text.push('\n');
    common::write_stdout(text.as_bytes())
}

fn report_mirrors(report: &WriteReport, quiet: bool) {
    for w in report.warnings() {
        common::warn(quiet, w);
    }
}

fn cmd_write(repo: &Repo, topo: &Topology<'_>, a: WriteArgs, quiet: bool) -> Result<()> {
    // Validate everything before writing anything.
    let id = match &a.id {
        Some(raw) => CheckpointId::parse(raw)?,
        None => topo.mint_id(),
    };
    let session_id = SessionId::parse(&a.session)?;
    let (transcript, token_usage) = a.data.load()?;
    let created_at = match &a.created_at {
        Some(t) => timefmt::rfc3339_nano_utc(timefmt::parse_rfc3339(t)?),
        None => timefmt::now_rfc3339_nano(),
    };
    let w = SessionWrite {
        checkpoint_id: id.clone(),
        session_id,
        strategy: a.strategy,
        branch: a
            .branch
            .or_else(|| repo.current_branch())
            .unwrap_or_default(),
        commit_sha: String::new(),
        created_at,
        transcript,
        checkpoints_count: a.data.prompts.len().max(1) as i64,
        prompts: a.data.prompts,
        files_touched: a.data.files_touched,
        agent: a.data.agent.unwrap_or_default(),
        model: a.data.model.unwrap_or_default(),
        token_usage,
        checkpoint_transcript_start: 0,
        commit_subject: a.commit_subject,
        author: None,
        redactions: 0,
    };
    let report = topo.write_session(&w)?;
    report_mirrors(&report, quiet);
    println!("{id}");
    Ok(())
}

fn cmd_migrate(repo: &Repo, topo: &Topology<'_>, dry_run: bool, quiet: bool) -> Result<()> {
    use std::io::IsTerminal;
    let show_progress = !quiet && std::io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize| {
        if show_progress {
            eprint!("\rentire: migrating checkpoints {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    };
    let report = migrate::migrate_branch_to_refs(repo, topo.refs_store(), dry_run, &mut progress)?;
    for (name, why) in &report.misshapen {
        common::warn(
            quiet,
            format!("{name} is not a checkpoint ({why}); it is never pushed: fix or delete it (git update-ref -d {name})"),
        );
    }
    if report.source.is_none() {
        println!("No checkpoints found on the v1 branch \u{2014} nothing to migrate.");
        return Ok(());
    }
    if !dry_run && !report.migrated.is_empty() {
        // Thousands of new loose refs would slow every git command down: pack them.
        if let Err(e) = entire_checkpoints::ops::gc::pack_checkpoint_refs(repo) {
            common::warn(quiet, format!("could not pack the checkpoint refs: {e}"));
        }
    }
    for (path, reason) in &report.skipped {
        common::warn(quiet, format!("skipped v1 entry {path}: {reason}"));
    }
    let verb = if dry_run { "Would migrate" } else { "Migrated" };
    println!(
        "{verb} {} checkpoint(s) to refs ({} already up to date, {} total).",
        report.migrated.len(),
        report.up_to_date.len(),
        report.total()
    );
    if !report.skipped.is_empty() {
        bail!(
            "{} v1 entr(ies) could not be migrated",
            report.skipped.len()
        );
    }
    Ok(())
}

fn cmd_session(repo: &Repo, topo: &Topology<'_>, c: SessionCommand, _quiet: bool) -> Result<()> {
    let store = SessionStore::new(repo);
    match c {
        SessionCommand::Record { session, data } => {
            let sid = SessionId::parse(&session)?;
            let (transcript, token_usage) = data.load()?;
            // Staging is local and must not lose the agent's step: it goes on while a settings
            // file does not parse (with the built-in rules at least; the commit redacts again).
            store.record(
                &sid,
                Record {
                    transcript,
                    prompts: data.prompts,
                    files_touched: data.files_touched,
                    agent: data.agent,
                    model: data.model,
                    token_usage,
                },
                topo.redactor(),
            )?;
            Ok(())
        }
        SessionCommand::List { json } => {
            let all = store.list()?;
            if json {
                let v: Vec<Value> = all
                    .iter()
                    .map(|s| {
                        serde_json::json!({
                            "session_id": s.session_id,
                            "worktree": s.worktree,
                            "agent": s.agent,
                            "model": s.model,
                            "prompts": s.prompts.len(),
                            "files_touched": s.files_touched,
                            "pending": s.pending(),
                            "last_checkpoint": s.last_checkpoint,
                            "updated_at": s.updated_at,
                        })
                    })
                    .collect();
                print_json(&Value::Array(v))
            } else {
                let mut text = String::new();
                for s in &all {
                    let state = if s.pending() { "pending" } else { "condensed" };
                    text.push_str(&format!(
                        "{:<40}  {:<9}  {} prompt(s)  {}\n",
                        s.session_id,
                        state,
                        s.prompts.len(),
                        if s.agent.is_empty() { "-" } else { &s.agent }
                    ));
                }
                common::write_stdout(text.as_bytes())
            }
        }
        SessionCommand::Discard { session } => {
            store.discard(&SessionId::parse(&session)?)?;
            Ok(())
        }
    }
}

fn cmd_hook(repo: &Repo, topo: &Topology<'_>, h: HookCommand, quiet: bool) -> Result<()> {
    match h {
        HookCommand::PrepareCommitMsg { file, source, .. } => {
            commit_hooks::prepare_commit_msg(repo, &file, source.as_deref())?;
        }
        HookCommand::PostCommit => {
            let report = commit_hooks::post_commit(repo, topo)?;
            for tok in &report.malformed {
                common::warn(
                    quiet,
                    format!("ignoring malformed Entire-Checkpoint trailer {tok:?}"),
                );
            }
            for w in &report.warnings {
                common::warn(quiet, w);
            }
            for (sid, e) in &report.failed {
                common::warn(
                    quiet,
                    format!("session {sid} was not condensed (it stays staged): {e}"),
                );
            }
            if let (Some(id), false) = (&report.checkpoint, report.sessions.is_empty()) {
                if !quiet {
                    eprintln!(
                        "entire: checkpoint {id}: {} session(s) condensed",
                        report.sessions.len()
                    );
                }
            }
        }
        HookCommand::PreAutoGc => {
            if entire_checkpoints::ops::gc::enabled_in_settings(repo) {
                gc::run(
                    repo,
                    topo,
                    gc::GcArgs {
                        keep_days: None,
                        dry_run: false,
                        json: false,
                        quiet: true,
                    },
                )?;
            }
        }
        HookCommand::PostRewrite { .. } => {
            let mut input = String::new();
            std::io::stdin().lock().read_to_string(&mut input)?;
            for (commit, id) in commit_hooks::post_rewrite(repo, &input)? {
                if !quiet {
                    eprintln!(
                        "entire: {commit} keeps its link to checkpoint {id} in the rewrite map"
                    );
                }
            }
        }
    }
    Ok(())
}

fn read_json_object(path: &str, what: &str) -> Result<Value> {
    let bytes = common::read_input(path)?;
    let v: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{what} is not valid JSON"))?;
    if !v.is_object() {
        bail!("{what} must be a JSON object");
    }
    Ok(v)
}

fn cmd_backfill(topo: &Topology<'_>, b: BackfillCommand, quiet: bool) -> Result<()> {
    let backfill = match b {
        BackfillCommand::Transcript {
            id,
            session,
            transcript,
        } => Backfill::Transcript {
            id: topo.resolve(&id)?,
            session_id: Some(SessionId::parse(&session)?),
            transcript: common::read_input(&transcript)?,
            prompts: Vec::new(),
        },
        BackfillCommand::Summary {
            id,
            session,
            summary,
        } => Backfill::Summary {
            id: topo.resolve(&id)?,
            session_id: session.as_deref().map(SessionId::parse).transpose()?,
            summary: read_json_object(&summary, "--summary")?,
        },
        BackfillCommand::Attribution { id, attribution } => Backfill::Attribution {
            id: topo.resolve(&id)?,
            attribution: read_json_object(&attribution, "--attribution")?,
        },
    };
    let report = topo.backfill(&backfill)?;
    report_mirrors(&report, quiet);
    if !report.outcome.changed && !quiet {
        eprintln!("entire: checkpoint {} already up to date", backfill.id());
    }
    Ok(())
}

/// The checkpoints a `show` target names: an ID or unique prefix, else a commit-ish whose
/// `Entire-Checkpoint:` trailers name them.
fn show_targets(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    quiet: bool,
) -> Result<Vec<Checkpoint>> {
    let by_trailers = |ids: Vec<CheckpointId>| -> Result<Vec<Checkpoint>> {
        ids.iter().map(|id| Ok(topo.get(id)?)).collect()
    };
    match topo.resolve(target) {
        Ok(id) => {
            if let Some(cp) = topo.read(&id)? {
                return Ok(vec![cp]);
            }
            if let Some(ids) = commit_trailer_ids(repo, target, quiet)? {
                return by_trailers(ids);
            }
            Err(StoreError::NotFoundAnywhere {
                places: topo.places(&id).join(", "),
                id,
            }
            .into())
        }
        Err(TopologyError::NoMatch(_) | TopologyError::InvalidId(_)) => {
            match commit_trailer_ids(repo, target, quiet)? {
                Some(ids) => by_trailers(ids),
                None => Err(TopologyError::NoMatch(format!(
                    "{target} (neither a checkpoint ID nor a commit)"
                ))
                .into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

fn commit_trailer_ids(repo: &Repo, rev: &str, quiet: bool) -> Result<Option<Vec<CheckpointId>>> {
    let map = RewriteMap::load(repo)
        .map_err(|e| common::warn(quiet, format!("{e:#}")))
        .ok();
    let Some(links) = rewrites::commit_links(repo, map.as_ref(), rev) else {
        return Ok(None);
    };
    for tok in &links.malformed {
        common::warn(
            quiet,
            format!("{rev}: ignoring malformed Entire-Checkpoint trailer {tok:?}"),
        );
    }
    if links.ids.is_empty() {
        bail!(TopologyError::NoMatch(format!(
            "{rev} (commit has no Entire-Checkpoint trailer)"
        )));
    }
    Ok(Some(links.ids))
}

fn cmd_show(repo: &Repo, topo: &Topology<'_>, a: ShowArgs) -> Result<()> {
    let checkpoints = show_targets(repo, topo, &a.target, false)?;
    let mut docs = Vec::new();
    for cp in &checkpoints {
        let slot = a.session.as_deref().map(|s| cp.slot_of(s)).transpose()?;
        if a.transcript {
            let slot = match slot {
                Some(s) => s,
                None => cp
                    .sessions
                    .len()
                    .checked_sub(1)
                    .context("checkpoint has no sessions")?,
            };
            let dir = &cp.session_dirs[slot];
            let data = topo
                .read_file(cp, &format!("{dir}/full.jsonl"))
                .map_err(|e| match e {
                    StoreError::FileNotFound { id, .. } => {
                        anyhow::anyhow!("checkpoint {id}: session {slot} has no transcript")
                    }
                    other => other.into(),
                })?;
            common::write_stdout(&data)?;
            continue;
        }
        docs.push(show_doc(topo, cp, slot)?);
    }
    if a.transcript {
        return Ok(());
    }
    if a.json {
        if docs.len() == 1 {
            print_json(&docs.remove(0).json)
        } else {
            print_json(&Value::Array(docs.into_iter().map(|d| d.json).collect()))
        }
    } else {
        let text: Vec<String> = docs
            .iter()
            .map(|d| render::show_human(&d.cp, &d.json))
            .collect();
        common::write_stdout(text.join("\n").as_bytes())
    }
}

struct ShowDoc {
    cp: Checkpoint,
    json: Value,
}

fn show_doc(topo: &Topology<'_>, cp: &Checkpoint, only: Option<usize>) -> Result<ShowDoc> {
    let raw = |path: &str| -> Result<Value> {
        let bytes = topo.read_file(cp, path)?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("checkpoint {}: {path} is corrupt", cp.id))
    };
    let summary = raw("metadata.json")?;
    let mut sessions = Vec::new();
    for (slot, dir) in cp.session_dirs.iter().enumerate() {
        if only.is_none_or(|o| o == slot) {
            sessions.push(raw(&format!("{dir}/metadata.json"))?);
        }
    }
    let author = topo.author(cp)?.unwrap_or_default();
    let json = serde_json::json!({
        "checkpoint_id": cp.id.as_str(),
        "store": cp.store.name(),
        "ref": cp.ref_name,
        "commit": cp.commit,
        "author": {"name": author.name, "email": author.email},
        "summary": summary,
        "sessions": sessions,
    });
    Ok(ShowDoc {
        cp: cp.clone(),
        json,
    })
}
