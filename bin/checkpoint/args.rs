//! The command line of `git entire-checkpoint`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use entire_checkpoints::model::documents::{TokenUsage, DEFAULT_STRATEGY};
use entire_checkpoints::ops::Remote;

use crate::common::args::GlobalArgs;

/// Store AI coding-session checkpoints inside this git repository.
#[derive(Parser)]
#[command(
    name = "git-entire-checkpoint",
    version,
    max_term_width = 100,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Never pipe output into a pager (by default `show`, `cat`, `list` and `log` page on a
    /// terminal, as git does).
    #[arg(long, global = true)]
    pub no_pager: bool,
    /// Color human output: `auto` (on a terminal; the default, unless color.entire-checkpoint or
    /// color.ui say otherwise), `always` (also `--color` alone) or `never`. JSON never is.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always"
    )]
    pub color: Option<ColorWhen>,
    #[command(subcommand)]
    pub command: Command,
}

// Every subcommand enum defers its arguments (`defer`): clap then defines only the arguments of
// the subcommand that runs, not all forty (0.4 M instructions of every start). The description
// is set before the deferred arguments, so an arguments struct carries no doc comment (it would
// become the description): plain comments there.
#[derive(Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Create a checkpoint, or add or replace one session in it; prints the checkpoint ID.
    Write(Box<WriteArgs>),
    /// Update an existing checkpoint.
    Backfill(BackfillArgs),
    /// Link a commit to a checkpoint from the checkpoint's side (its `linked_commits`), for a
    /// commit that carries no Entire-Checkpoint trailer (a squash merge's); pushed as any
    /// checkpoint update is.
    Link {
        /// The commit (any commit-ish: a hash, a branch, HEAD~2).
        commit: String,
        /// The checkpoint: an ID or unique ID prefix.
        checkpoint: String,
        #[command(flatten)]
        fetch: FetchArgs,
    },
    /// Show one checkpoint (by ID, unique ID prefix, or a commit with Entire-Checkpoint trailers).
    Show(ShowArgs),
    /// The sessions behind the commits of a revision range (default: the current branch's
    /// commits not on its upstream) as one self-contained HTML page for a reviewer (no script,
    /// no network), or as Markdown for a terminal or a pull-request comment.
    Report(ReportArgs),
    /// Write one file of a checkpoint's tree to stdout as raw bytes (to a terminal, with its
    /// control characters written out visibly unless --raw).
    Cat {
        /// Checkpoint ID or unique prefix.
        id: String,
        /// Path inside the checkpoint, e.g. `metadata.json` or `0/full.jsonl`.
        path: String,
        /// Write the stored bytes as they are, also to a terminal.
        #[arg(long)]
        raw: bool,
        #[command(flatten)]
        fetch: FetchArgs,
    },
    /// List all checkpoints, newest first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        date: DateArgs,
        /// Print only the checkpoint IDs, one per line (for scripts and shell completion).
        #[arg(long, conflicts_with_all = ["json", "RangeArgs"])]
        ids: bool,
        /// Show at most N checkpoints.
        #[arg(long, value_name = "N", conflicts_with = "RangeArgs")]
        limit: Option<usize>,
        /// Also list checkpoints that exist only on the remote R (default: the checkpoint remote,
        /// else origin, else the only remote), marked as such.
        #[arg(long, value_name = "R", num_args = 0..=1)]
        remote: Option<Option<Remote>>,
        /// With --remote: fetch the remote-only checkpoints to fill in their details (bounded
        /// to 30 seconds; the rest stay bare remote-only entries).
        #[arg(long, requires = "remote", conflicts_with = "RangeArgs")]
        hydrate: bool,
        #[command(flatten)]
        range: RangeArgs,
        /// Never ask the network. With a revision range: never fetch a checkpoint missing
        /// locally (otherwise they are fetched in one batch from --remote R, else the checkpoint
        /// remote, else origin, else the only remote). Without: do not list the remote to say
        /// how many checkpoints it holds that are not here (what its last listing showed is
        /// still said).
        #[arg(long, conflicts_with = "remote")]
        no_fetch: bool,
        /// With a revision range: ask the remote again for checkpoints it lacked a moment ago.
        #[arg(long, requires = "RangeArgs")]
        refresh: bool,
    },
    /// The resolved checkpoint topology and every effective setting with where it came from;
    /// `config set` / `config unset` change one.
    Config(ConfigArgs),
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
        /// Print what was pushed as JSON (docs/schema/push.json).
        #[arg(long)]
        json: bool,
    },
    /// Stage a live session's data for the next commit, or inspect and drop staged sessions.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Entry points the installed hook scripts call. Not for people.
    #[command(subcommand, hide = true)]
    Hook(HookCommand),
    /// The entry point of an agent's own hooks (`enable --agent`): the agent's JSON payload on
    /// standard input. Prints nothing on standard output and exits 0 whatever happens (a
    /// failure is one line on standard error, and `status` shows it). Not for people.
    #[command(hide = true)]
    AgentHook {
        /// The agent (claude-code, ...).
        agent: String,
        /// The event, as the agent names it.
        event: String,
    },
    /// Run the whole story in a scratch directory: hooks, a staged session, a commit, a push, a
    /// fresh clone reading the checkpoint on demand. Cleans up afterwards.
    Demo {
        /// Keep the scratch directory and print its path.
        #[arg(long)]
        keep: bool,
    },
    /// Print a completion script for SHELL, covering `git-entire-checkpoint`, `git-entire-fetch`
    /// and, through git's own completion, `git entire-checkpoint` and `git entire-fetch`.
    Completion {
        /// The shell the script is for.
        shell: CompletionShell,
        /// Only the script of this binary (default: both), e.g. for one zsh function file each.
        command: Option<CompletedCommand>,
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
        /// Print what was migrated (and pushed) as JSON (docs/schema/migrate.json).
        #[arg(long)]
        json: bool,
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
    /// `git blame` of a file, each line labelled with the checkpoints of its commit and with
    /// whether a transcript records the agent writing it (agent, commit-linked, human).
    Blame(BlameArgs),
    /// Why a line is there: its commit, checkpoint, session, agent, model and the prompt that
    /// led the agent to write it (FILE:LINE, or FILE -L LINE).
    Why(WhyArgs),
    /// Lines added and removed per commit of a range, and how many of the added lines an agent
    /// wrote (blame's attribution), as a table with a total; default range: the branch against
    /// its upstream.
    Stats(StatsArgs),
    /// For CI: fail (exit 1) when a commit of the range links a checkpoint nobody can fetch;
    /// with --require, also when it adds lines a session wrote without linking a checkpoint.
    Verify(VerifyArgs),
    /// Turn checkpoints on in this repository: the settings (git-refs store by default), the
    /// .entire/.gitignore of per-clone files, and the hooks. Idempotent.
    Enable(EnableArgs),
    /// Approve the committed .entire/settings.json: show what it asks for (a checkpoint remote,
    /// mirrors, redaction rules, the hook budget) and use it from now on. Until then, checkpoints
    /// go where they would go without it; a change to the file needs approval again.
    Trust {
        /// Take the approval back.
        #[arg(long)]
        revoke: bool,
        /// Show what would be approved; approve nothing.
        #[arg(long, conflicts_with = "revoke")]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove the hooks; every checkpoint and setting stays (enable turns them back on).
    Disable {
        /// Only take our hooks out of this agent's configuration (repeatable; `all`), leaving
        /// everything else on.
        #[arg(long = "agent", value_name = "AGENT")]
        agents: Vec<String>,
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
        date: DateArgs,
        #[command(flatten)]
        fetch: FetchArgs,
    },
}

/// `--color`'s values, as git's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal (and in its pager) only.
    Auto,
    /// Always, also into a pipe or a file.
    Always,
    /// Never.
    Never,
}

// How human output shows times (JSON keeps the stored RFC 3339 values).
#[derive(Args)]
pub struct DateArgs {
    /// Time format, in the local time zone (`TZ`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "iso")]
    pub date: DateFormat,
}

/// How a time is shown (`--date`); rendered by `dates.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DateFormat {
    /// `2026-12-02 04:15:48 +0100`, as `git log --date=iso-local`.
    Iso,
    /// `2026-12-02T04:15:48+01:00`, as `git log --date=iso-strict-local`.
    IsoStrict,
    /// `3 hours ago`, as `git log --date=relative`.
    Relative,
    /// Seconds since the epoch, as `git log --date=unix`.
    Unix,
}

// `config [--json]`, `config set` and `config unset`.
#[derive(Args)]
pub struct ConfigArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Option<ConfigAction>,
}

// Changes to one settings file.
#[derive(Subcommand)]
#[command(defer = true)]
pub enum ConfigAction {
    /// Set KEY (a dotted path such as strategy_options.push_sessions) to VALUE (JSON when it
    /// parses as JSON, else a string) in .entire/settings.json; refused when the result is
    /// invalid or KEY is not a known setting.
    Set {
        /// Edit .git/entire/settings.local.json (this clone only) instead.
        #[arg(long)]
        local: bool,
        /// Set KEY even when it is not a setting this tool or the reference knows.
        #[arg(long)]
        force: bool,
        /// The dotted key.
        key: String,
        /// The value.
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
    /// Remove KEY from .entire/settings.json.
    Unset {
        /// Edit .git/entire/settings.local.json (this clone only) instead.
        #[arg(long)]
        local: bool,
        /// The dotted key.
        key: String,
    },
}

/// The shells `completion` writes scripts for.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// The binaries `completion` writes scripts for.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CompletedCommand {
    #[value(name = "git-entire-checkpoint")]
    Checkpoint,
    #[value(name = "git-entire-fetch")]
    Fetch,
}

// How reads get a checkpoint that is missing locally.
#[derive(Args)]
pub struct FetchArgs {
    /// Never fetch a checkpoint missing locally.
    #[arg(long, global = true)]
    pub no_fetch: bool,
    /// The remote to fetch a missing checkpoint from (default: the checkpoint remote, else
    /// origin, else the only remote).
    #[arg(long, value_name = "R", global = true)]
    pub remote: Option<Remote>,
    /// Ask the remote again for checkpoints it lacked a moment ago (otherwise not asked again
    /// for entire.fetchMissTtl seconds, default 900).
    #[arg(long, global = true)]
    pub refresh: bool,
}

#[derive(Args)]
pub struct BackfillArgs {
    #[command(subcommand)]
    pub what: BackfillCommand,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

#[derive(Args)]
pub struct WriteArgs {
    /// The agent session being recorded.
    #[arg(long, value_name = "SID")]
    pub session: String,
    /// The checkpoint ID; minted in the primary store's format when omitted.
    #[arg(long)]
    pub id: Option<String>,
    #[command(flatten)]
    pub data: SessionData,
    /// Strategy name.
    #[arg(long, default_value = DEFAULT_STRATEGY)]
    pub strategy: String,
    /// Branch to record (default: the current branch).
    #[arg(long)]
    pub branch: Option<String>,
    /// A subject line for the checkpoint commit.
    #[arg(long)]
    pub commit_subject: Option<String>,
    /// Creation time (RFC 3339); default now.
    #[arg(long, value_name = "RFC3339")]
    pub created_at: Option<String>,
}

// What `write` and `session record` take about a session.
#[derive(Args)]
pub struct SessionData {
    /// The session transcript so far (a file, or - for stdin), stored byte for byte (after
    /// secret redaction).
    #[arg(long, value_name = "FILE|-")]
    pub transcript: Option<String>,
    /// A user prompt (repeatable).
    #[arg(long = "prompt", value_name = "TEXT")]
    pub prompts: Vec<String>,
    /// A file the session touched (repeatable).
    #[arg(long = "files-touched", value_name = "PATH")]
    pub files_touched: Vec<String>,
    /// Agent display name, e.g. "Claude Code".
    #[arg(long)]
    pub agent: Option<String>,
    /// Model name.
    #[arg(long)]
    pub model: Option<String>,
    /// Token usage as a JSON object (default: what the transcript records, for the agents
    /// whose transcripts record it).
    #[arg(long, value_name = "JSON", value_parser = parse_token_usage)]
    pub token_usage: Option<Box<TokenUsage>>,
}

/// Parses `--token-usage`: a bad value is a usage error, as any other bad option value.
fn parse_token_usage(text: &str) -> Result<Box<TokenUsage>, String> {
    TokenUsage::parse_input(text)
        .map(Box::new)
        .map_err(|e| e.to_string())
}

#[derive(Subcommand)]
#[command(defer = true)]
pub enum SessionCommand {
    /// Record a session's progress: the transcript so far, new prompts, files touched.
    Record {
        /// The session.
        #[arg(long, value_name = "SID")]
        session: String,
        #[command(flatten)]
        data: SessionData,
        /// Print the staged session as JSON (docs/schema/session-record.json).
        #[arg(long)]
        json: bool,
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
    /// Find the sessions agents ran in this work tree before their hooks recorded them (in
    /// each agent's own store), list them, and import the chosen ones as checkpoints, linked
    /// to the commits their transcripts show the agent making.
    Import(ImportArgs),
}

// `session import [--agent <AGENT>]... [--list | --all | <SID>...] [--dry-run] [--json]`.
#[derive(Args)]
pub struct ImportArgs {
    /// The sessions to import, by ID (as listed).
    #[arg(value_name = "SID", conflicts_with_all = ["all", "list"])]
    pub sessions: Vec<String>,
    /// Import every session found that no checkpoint or staged session holds yet.
    #[arg(long, conflicts_with = "list")]
    pub all: bool,
    /// Only list the sessions found (what a plain `session import` does).
    #[arg(long)]
    pub list: bool,
    /// Only this agent's sessions (repeatable): claude-code, codex, gemini, cursor, copilot,
    /// droid.
    #[arg(long = "agent", value_name = "AGENT")]
    pub agents: Vec<String>,
    /// Say what would be imported, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
#[command(defer = true)]
pub enum HookCommand {
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
#[command(defer = true)]
pub enum HooksCommand {
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
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
#[command(defer = true)]
pub enum BackfillCommand {
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
pub struct ShowArgs {
    /// Checkpoint ID, unique prefix, or commit-ish.
    pub target: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Only this session (slot number or session ID).
    #[arg(long, value_name = "N|SID")]
    pub session: Option<String>,
    /// Print the transcript of the session (default: the latest) instead: on a terminal the
    /// conversation it records (prompts, replies, tool calls and a short diff of what they
    /// wrote), else the stored bytes.
    #[arg(long)]
    pub transcript: bool,
    /// With --transcript: write the stored bytes as they are, also to a terminal (instead of
    /// the conversation). --json writes them too, on a terminal with their control characters
    /// written out (as `cat` without --raw).
    #[arg(long, requires = "transcript")]
    pub raw: bool,
    /// Write the checkpoints and their sessions' conversations as one self-contained HTML page
    /// (as `report` does for a range).
    #[arg(long, conflicts_with_all = ["json", "transcript"])]
    pub html: bool,
    #[command(flatten)]
    pub date: DateArgs,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

#[derive(Args)]
pub struct ReportArgs {
    /// Write Markdown instead of HTML.
    #[arg(long)]
    pub markdown: bool,
    /// Write HTML (the default).
    #[arg(long, conflicts_with = "markdown")]
    pub html: bool,
    /// Write the report to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub range: RangeArgs,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

#[derive(Args)]
pub struct BlameArgs {
    /// The file (relative to the current directory, as for git blame).
    pub file: String,
    /// Only lines START to END (`START,END`, `START,+COUNT`, or `START` to the end).
    #[arg(short = 'L', value_name = "START,END", allow_hyphen_values = true)]
    pub lines: Option<String>,
    #[command(flatten)]
    pub common: LineArgs,
}

#[derive(Args)]
pub struct WhyArgs {
    /// FILE:LINE, or FILE with -L LINE.
    pub target: String,
    /// The line (when TARGET is only the file).
    #[arg(short = 'L', value_name = "LINE", allow_hyphen_values = true)]
    pub line: Option<String>,
    #[command(flatten)]
    pub common: LineArgs,
}

// `stats [<range>] [--by file|author|agent] [--json]`.
#[derive(Args)]
pub struct StatsArgs {
    /// The commits (`main..HEAD`, `HEAD~5..`; default: HEAD against its upstream, else against
    /// the default branch).
    #[arg(value_name = "RANGE")]
    pub range: Vec<String>,
    /// Also group the lines by file, by commit author, or by writer (each agent and model, and
    /// people).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub by: Option<StatsBy>,
    /// Print JSON (docs/schema/stats.json).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

/// `stats --by`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsBy {
    /// Per file.
    File,
    /// Per commit author.
    Author,
    /// Per agent and model, and people.
    Agent,
}

// `verify [<range>] [--require] [--json]`.
#[derive(Args)]
pub struct VerifyArgs {
    /// The commits (`origin/main..HEAD`; default: HEAD against its upstream, else against the
    /// default branch).
    #[arg(value_name = "RANGE")]
    pub range: Vec<String>,
    /// Also fail a commit that links no checkpoint while a session of a checkpoint linked
    /// elsewhere in the range wrote lines it adds.
    #[arg(long)]
    pub require: bool,
    /// Print JSON (docs/schema/verify.json).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

// What `blame` and `why` share.
#[derive(Args)]
pub struct LineArgs {
    /// The revision to look at (default: the working tree).
    pub rev: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub date: DateArgs,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

// `enable [--local] [--store <STORE>] [--json]`.
#[derive(Args)]
pub struct EnableArgs {
    /// Write .git/entire/settings.local.json (this clone only) instead of .entire/settings.json.
    #[arg(long)]
    pub local: bool,
    /// The primary store (default: the one the settings name, else git-refs). Naming another
    /// one than the settings do switches it; the checkpoints written so far stay where they are.
    #[arg(long, value_enum, value_name = "STORE")]
    pub store: Option<StoreChoice>,
    /// Also wire the agent's own hooks, so that its sessions are recorded as it works
    /// (claude-code; `all`: every agent used here). Repeatable. With --local, into the agent's
    /// local, uncommitted file where it has one.
    #[arg(long = "agent", value_name = "AGENT")]
    pub agents: Vec<String>,
    /// Also import the sessions those agents ran in this work tree before (as `session import
    /// --all --agent <AGENT>` does).
    #[arg(long, requires = "agents")]
    pub import_history: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The stores `enable --store` can make the primary.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum StoreChoice {
    /// One ref per checkpoint under refs/entire/checkpoints/.
    #[value(name = "git-refs")]
    GitRefs,
    /// The legacy entire/checkpoints/v1 branch.
    #[value(name = "git-branch")]
    GitBranch,
}

// `list <revision-range>`: revisions and ranges, and the `git log` options that select
// commits. Any of them turns `list` into the listing of the range's linked commits.
#[derive(Args, Default)]
#[command(next_help_heading = "Revision range (list the commits of a range that link checkpoints)")]
pub struct RangeArgs {
    /// Revisions and ranges, as git log takes them (`main..HEAD`, `HEAD~5..`, `^A B`).
    #[arg(value_name = "REVISION-RANGE")]
    pub revisions: Vec<String>,
    /// At most N commits (git log -n).
    #[arg(short = 'n', long, value_name = "N")]
    pub max_count: Option<u64>,
    /// Skip N commits first.
    #[arg(long, value_name = "N")]
    pub skip: Option<u64>,
    /// Commits newer than DATE (git log --since; also --after).
    #[arg(long, visible_alias = "after", value_name = "DATE")]
    pub since: Option<String>,
    /// Commits older than DATE (git log --until; also --before).
    #[arg(long, visible_alias = "before", value_name = "DATE")]
    pub until: Option<String>,
    /// Commits whose author matches PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub author: Option<String>,
    /// Commits whose committer matches PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub committer: Option<String>,
    /// Commits whose message matches PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,
    /// Follow only the first parent of merges.
    #[arg(long)]
    pub first_parent: bool,
    /// Leave out merge commits.
    #[arg(long)]
    pub no_merges: bool,
    /// Only merge commits.
    #[arg(long)]
    pub merges: bool,
    /// The commits of every ref (git log --all).
    #[arg(long)]
    pub all: bool,
}
