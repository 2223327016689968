//! `git entire-checkpoint`'s commands: one module per group, each rendering what the library
//! returns.

pub mod args;
mod blame;
mod completion;
mod config;
mod conversation;
mod dates;
mod demo;
mod doctor;
mod enable;
mod gc;
mod hooks;
pub mod pager;
mod push;
mod read;
mod report;
mod stats;
pub mod style;
mod trust;
mod verify;
mod write;

use std::path::Path;

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::blame as ops_blame;
use entire_checkpoints::ops::range::{self, RangeArgs};
use entire_checkpoints::ops::read as ops_read;
use entire_checkpoints::ops::stats as ops_stats;
use entire_checkpoints::ops::{Remote, Topology};

use crate::common::cli::{warn, warn_settings, warn_with_hint};
use crate::common::error::Result;
use args::{Cli, Command, FetchArgs};

/// What `git entire-checkpoint` alone prints, as `git` alone does: the synopsis, the commands a
/// user starts with, and where the rest is described.
pub fn usage() -> &'static str {
    "usage: git entire-checkpoint [-q | -v] [--no-pager] [--color[=<when>]] <command> [<args>]

Checkpoints of AI coding sessions, kept in this git repository. To begin:
   enable     turn checkpoints on here (settings and hooks)
   trust      approve what the committed .entire/settings.json asks for

Read them:
   show       one checkpoint, by ID, prefix or commit
   list       every checkpoint, or the commits of a range with theirs
   log        the history of one checkpoint
   blame      which lines of a file an agent wrote
   why        the prompt behind one line
   stats      how much of a range of commits an agent wrote
   verify     for CI: every checkpoint a range links can be fetched

Keep them healthy:
   status     what is configured, waiting to be pushed, and installed
   push       push the checkpoints waiting now
   doctor     find, and with --fix repair, checkpoint trouble

'git entire-checkpoint help' lists every command; 'git entire-checkpoint help <command>'
or 'git entire-checkpoint <command> -h' describes one.
"
}

/// Runs the command of `cli`.
pub fn run(cli: Cli) -> Result<()> {
    let quiet = cli.global.quiet;
    let color = cli.color;
    let command = cli.command;
    // Completion scripts are the same in and out of a repository.
    if let Command::Completion { shell, command } = command {
        return completion::run(shell, command);
    }
    // An agent's hook never disturbs the agent: nothing on stdout, exit 0 (the failure is noted).
    if let Command::AgentHook { agent, event } = command {
        let report =
            entire_checkpoints::ops::hook_runner::agent_hook(&agent, &event, std::io::stdin());
        crate::common::push::report_hook(&report, quiet, |_| {});
        return Ok(());
    }
    // Every other command needs a git we support, and says so before it does anything. The
    // hooks never fail the user's git command: what needs git warns when it finds it too old.
    if !matches!(command, Command::Hook(_)) {
        entire_checkpoints::ops::process::require_supported()?;
    }
    if let Command::Demo { keep } = command {
        return demo::run(keep);
    }
    // doctor opens the repository and the topology itself: it reports what fails there.
    if let Command::Doctor { fix, json } = command {
        return doctor::run(fix, json, quiet);
    }
    if matches!(
        command,
        Command::Show(_)
            | Command::Cat { .. }
            | Command::List { .. }
            | Command::Log { .. }
            | Command::Blame(_)
            | Command::Why(_)
            | Command::Stats(_)
    ) {
        pager::start(cli.no_pager);
    }
    let early = start_early(&command)?;
    let repo = Repo::discover()?;
    warn_settings(&entire_checkpoints::ops::settings::warnings(&repo), quiet);
    // An edit needs no topology: it may be what repairs settings the topology refuses.
    if let Command::Config(args::ConfigArgs {
        action: Some(action),
        ..
    }) = command
    {
        return config::edit(&repo, action);
    }
    // enable, disable and trust need no topology: the settings they write or approve may be
    // what it lacks.
    match command {
        Command::Enable(args) => return enable::enable(&repo, args, quiet),
        Command::Disable { agents, json } => return enable::disable(&repo, &agents, json, quiet),
        Command::Trust {
            revoke,
            dry_run,
            json,
        } => return trust::run(&repo, revoke, dry_run, json),
        _ => {}
    }
    let mut topo = Topology::open(&repo)?;
    let style = style::Style::decide(color, &repo);
    let tell_enable = matches!(
        command,
        Command::Session(args::SessionCommand::Record { .. })
            | Command::Status { .. }
            | Command::List { .. }
            | Command::Show(_)
    ) && entire_checkpoints::ops::enable::clone_needs_enable(&repo);
    let result = dispatch(&repo, &mut topo, command, early, &style, quiet);
    // Every command may fail early: the notices of the reads are printed whatever happened.
    for notice in topo.notices() {
        warn(quiet, notice);
    }
    if tell_enable {
        let [msg, hint] = enable::NOT_ENABLED_HERE;
        warn_with_hint(quiet, msg, Some(hint));
    }
    result
}

/// The git a command runs first ([`start_early`]).
enum Early {
    /// `list <range>`'s git log.
    Log(range::RangeLog),
    /// `blame`'s git blame.
    Blame(ops_blame::StartedBlame),
    /// `why`'s git blame.
    Why(ops_blame::StartedWhy),
}

/// Starts the git that `list <range>`, `blame` and `why` read (in the current directory, where
/// git finds the repository as discovery does), so that it works while the repository and its
/// stores are opened: its walk is most of these commands' time.
fn start_early(command: &Command) -> Result<Option<Early>> {
    Ok(match command {
        Command::List { range, .. } => match read::range_words(range) {
            words if words.is_empty() => None,
            words => Some(Early::Log(range::start(
                Path::new("."),
                &RangeArgs::parse(&words)?,
            )?)),
        },
        Command::Blame(a) => Some(Early::Blame(blame::start(a)?)),
        Command::Why(a) => Some(Early::Why(blame::start_why(a)?)),
        _ => None,
    })
}

fn dispatch<'r>(
    repo: &'r Repo,
    topo: &mut Topology<'r>,
    command: Command,
    early: Option<Early>,
    style: &style::Style,
    quiet: bool,
) -> Result<()> {
    match command {
        Command::Write(args) => write::write(repo, topo, *args, quiet),
        Command::Backfill(b) => {
            enable_fetch(repo, topo, &b.fetch, quiet)?;
            write::backfill(topo, b.what, quiet)
        }
        Command::Link {
            commit,
            checkpoint,
            fetch,
        } => {
            enable_fetch(repo, topo, &fetch, quiet)?;
            write::link(repo, topo, &commit, &checkpoint, quiet)
        }
        Command::Show(args) => {
            enable_fetch(repo, topo, &args.fetch, quiet)?;
            read::show(repo, topo, args, style)
        }
        Command::Report(args) => {
            let cwd = std::env::current_dir()?;
            let words = read::range_words(&args.range);
            let range = ops_stats::range_args(&cwd, &words, &|m| warn(quiet, m))?;
            let fetch = &args.fetch;
            let from = ops_read::choose_remote(
                repo,
                topo,
                (fetch.no_fetch, fetch.remote.as_ref(), fetch.refresh),
            )?;
            report::report(
                repo,
                topo,
                &range,
                from,
                (args.markdown, args.output.as_deref()),
                quiet,
            )
        }
        Command::Cat {
            id,
            path,
            raw,
            fetch,
        } => {
            enable_fetch(repo, topo, &fetch, quiet)?;
            read::cat(repo, topo, &id, &path, raw)
        }
        Command::Log {
            id,
            json,
            date,
            fetch,
        } => {
            enable_fetch(repo, topo, &fetch, quiet)?;
            read::log(repo, topo, &id, json, date.date, style)
        }
        Command::List {
            json,
            date,
            remote,
            no_fetch,
            refresh,
            ..
        } if matches!(early, Some(Early::Log(_))) => {
            let remote = remote.flatten();
            let from = ops_read::choose_remote(repo, topo, (no_fetch, remote.as_ref(), refresh))?;
            let Some(Early::Log(log)) = early else {
                unreachable!("the guard saw it")
            };
            let human = (!json).then_some((date.date, style));
            read::list_range(repo, topo, log, from, human, quiet)
        }
        Command::List {
            json,
            date,
            ids,
            limit,
            remote,
            hydrate,
            no_fetch,
            ..
        } => read::list(
            repo,
            topo,
            read::ListArgs {
                json,
                ids,
                limit,
                remote,
                hydrate,
                no_fetch,
                date: date.date,
                quiet,
            },
            style,
        ),
        Command::Config(args) => config::config(repo, topo, args.json),
        Command::Status { json } => config::status(repo, topo, json),
        Command::Push { remote, all, json } => push::push(repo, topo, remote, all, json, quiet),
        Command::Migrate {
            dry_run,
            push,
            json,
        } => push::migrate(repo, topo, dry_run, push, json, quiet),
        Command::Session(c) => write::session(repo, topo, c, style, quiet),
        Command::Hook(h) => {
            hooks::hook(repo, topo, h, quiet);
            Ok(())
        }
        Command::Hooks(h) => hooks::hooks(repo, h, quiet),
        Command::Gc {
            keep_days,
            dry_run,
            json,
        } => gc::run(
            repo,
            topo,
            gc::GcArgs {
                keep_days,
                dry_run,
                json,
                quiet,
            },
        ),
        Command::Blame(args) => {
            let Some(Early::Blame(started)) = early else {
                unreachable!("start_early starts blame's git blame")
            };
            let remote = enable_fetch(repo, topo, &args.common.fetch, quiet)?;
            blame::blame(repo, topo, args, started, remote, style, quiet)
        }
        Command::Why(args) => {
            let Some(Early::Why(started)) = early else {
                unreachable!("start_early starts why's git blame")
            };
            let remote = enable_fetch(repo, topo, &args.common.fetch, quiet)?;
            blame::why(repo, topo, args, started, remote, style, quiet)
        }
        Command::Stats(args) => {
            let remote = enable_fetch(repo, topo, &args.fetch, quiet)?;
            stats::run(repo, topo, args, remote, quiet)
        }
        Command::Verify(args) => {
            let remote = enable_fetch(repo, topo, &args.fetch, quiet)?;
            verify::run(repo, topo, args, remote, quiet)
        }
        Command::Demo { .. }
        | Command::Doctor { .. }
        | Command::Completion { .. }
        | Command::AgentHook { .. } => {
            unreachable!("handled before opening a repository")
        }
        Command::Enable(_) | Command::Disable { .. } | Command::Trust { .. } => {
            unreachable!("handled before opening the topology")
        }
    }
}

/// Turns on the on-demand fetch of checkpoints missing locally ([`ops_read::enable_fetch`]);
/// returns the remote fetched from.
fn enable_fetch<'r>(
    repo: &'r Repo,
    topo: &mut Topology<'r>,
    args: &FetchArgs,
    quiet: bool,
) -> Result<Option<Remote>> {
    let ask = (args.no_fetch, args.remote.as_ref(), args.refresh);
    Ok(ops_read::enable_fetch(repo, topo, ask, move |m| {
        warn(quiet, m)
    })?)
}
