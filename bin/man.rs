//! `entire-checkpoints-man DIR`: writes the man pages of the three binaries into DIR, from the
//! same argument definitions they parse with. install.sh runs it at install time; it is not
//! installed, and the installed binaries carry no man page code.

mod checkpoint {
    pub mod args;
}
mod common {
    pub mod args;
}
mod fetch {
    pub mod args;
}
mod prepush {
    pub mod args;
}

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: entire-checkpoints-man DIR");
        return ExitCode::from(2);
    };
    let commands = [
        checkpoint::args::Cli::command(),
        fetch::args::Cli::command(),
        prepush::args::Cli::command(),
    ];
    for cmd in commands {
        // clap's `help` subcommand gets no page of its own: the pages must not refer to one.
        if let Err(e) = write_pages(cmd.disable_help_subcommand(true), &dir) {
            eprintln!("error: write the man pages into {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Writes a page for `cmd` and one per visible subcommand at any depth
/// (`git-entire-checkpoint-write.1`, ...), each with clap's sections (NAME from the command's own
/// description) and the suite's EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES.
fn write_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let name = cmd.get_name().to_owned();
    // The examples of a page are those of its command line: the binary's page shows them all.
    let mut pages = vec![(name.clone(), cmd.clone(), command_line(&name))];
    subcommand_pages(&cmd, &name, &command_line(&name), &mut pages);
    for (name, page, line) in pages {
        let mut buf = Vec::new();
        clap_mangen::Man::new(page).render(&mut buf)?;
        extra_sections(&line).to_writer(&mut buf)?;
        std::fs::write(dir.join(format!("{name}.1")), buf)?;
    }
    Ok(())
}

/// Adds a page for each visible subcommand of `cmd` (page `name`, typed as `line`), and for
/// theirs (`git-entire-checkpoint-hooks-install`): a page lists its subcommands' pages.
fn subcommand_pages(
    cmd: &clap::Command,
    name: &str,
    line: &str,
    pages: &mut Vec<(String, clap::Command, String)>,
) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_name = format!("{name}-{}", sub.get_name());
        let sub_line = format!("{line} {}", sub.get_name());
        let mut page = sub
            .clone()
            .name(&sub_name)
            .bin_name(&sub_name)
            .disable_help_subcommand(true);
        // The binaries define a subcommand's arguments only when it runs (`defer`); building
        // the page's own command defines them, under the page's name.
        page.build();
        subcommand_pages(&page, &sub_name, &sub_line, pages);
        pages.push((sub_name, page, sub_line));
    }
}

/// How a binary is typed through git: `git-entire-fetch` -> `git entire-fetch`.
fn command_line(bin: &str) -> String {
    bin.replacen("git-", "git ", 1)
}

/// The exit codes of docs/cli.md.
const EXIT_STATUS: [(&str, &str); 5] = [
    ("0", "Success."),
    ("1", "The operation failed; the message on stderr says why."),
    ("2", "Usage error."),
    (
        "3",
        "The named checkpoint does not exist (locally, and on the remote when a fetch was tried).",
    ),
    (
        "128",
        "Not a git repository, or an unsupported one (reftable, sha256, bare where a work tree is needed).",
    ),
];

/// The variables the binaries read (docs/configuration.md).
const ENVIRONMENT: [(&str, &str); 6] = [
    (
        "ENTIRE_CHECKPOINTS_PRIMARY",
        "The primary store (git-refs or git-branch), replacing the settings files' choice.",
    ),
    (
        "ENTIRE_CHECKPOINTS_MIRRORS",
        "Comma-separated mirror stores, replacing the settings files' mirrors.",
    ),
    (
        "ENTIRE_HOOK_BUDGET_SECONDS",
        "The network budget of the hooks (default 30, clamped to 1..600); past it refs stay queued.",
    ),
    (
        "ENTIRE_NETWORK_TIMEOUT_SECONDS",
        "The deadline of each network git call of an interactive command (default 120, 1..3600).",
    ),
    (
        "ENTIRE_LOG",
        "A log filter (e.g. debug, trace) turning on logging to stderr, like -v.",
    ),
    (
        "GIT_DIR, GIT_WORK_TREE",
        "Found the way git finds them: the repository is the one git would use.",
    ),
];

/// The files the binaries read and write (docs/configuration.md, docs/format.md).
const FILES: [(&str, &str); 6] = [
    (
        ".entire/settings.json",
        "The committed settings: stores, checkpoint remote, strategy options.",
    ),
    (
        ".git/entire/settings.local.json",
        "Per-clone settings, not committed; its keys win over settings.json.",
    ),
    (
        "refs/entire/checkpoints/<shard>/<id>",
        "A checkpoint of the git-refs store.",
    ),
    (
        "refs/heads/entire/checkpoints/v1",
        "The branch of the git-branch store.",
    ),
    (
        "<git-common-dir>/entire-checkpoint-push-queue.jsonl",
        "The checkpoint refs waiting to be pushed.",
    ),
    (
        "<git-common-dir>/entire/",
        "Local state: push queues and delivery records, the summary index, staged sessions, the rewrite map, the partial-fetch cache.",
    ),
];

/// Example command lines and what they do; each page shows those of its command.
const EXAMPLES: [(&str, &str); 13] = [
    (
        "git entire-checkpoint hooks install",
        "Link commits to checkpoints and push checkpoints with every git push.",
    ),
    (
        "git entire-checkpoint write --session s1 --transcript t.jsonl --prompt 'fix the bug'",
        "Write a checkpoint; prints its ID.",
    ),
    (
        "git entire-checkpoint show HEAD",
        "The checkpoint(s) the current commit links to.",
    ),
    (
        "git entire-checkpoint show 01KVBJCWYA4YW6J5M9GP655HZN --json",
        "One checkpoint as JSON.",
    ),
    (
        "git entire-checkpoint show HEAD --transcript",
        "The latest session of the current commit's checkpoint as a conversation: each prompt, \
         the agent's replies, each tool call with its file and a short diff of what it wrote, long outputs \
         elided, entries of no known shape as stored (--raw: the stored bytes).",
    ),
    (
        "git entire-checkpoint cat 01KVBJCWYA4YW6J5M9GP655HZN 0/full.jsonl",
        "The transcript of the first session, raw.",
    ),
    ("git entire-checkpoint list --limit 10", "The ten newest checkpoints."),
    (
        "git entire-checkpoint log 01KVBJCWYA4YW6J5M9GP655HZN",
        "The history of a checkpoint.",
    ),
    (
        "git entire-checkpoint push --all",
        "Push every checkpoint the remote lacks.",
    ),
    (
        "git entire-checkpoint completion bash > ~/.local/share/bash-completion/completions/git-entire-checkpoint",
        "Install bash completion by hand.",
    ),
    (
        "git entire-fetch --for ORIG_HEAD..HEAD",
        "Fetch the checkpoints of the commits a pull brought in.",
    ),
    ("git entire-fetch --all", "Fetch every checkpoint of the remote."),
    (
        "git entire-prepush origin",
        "What the pre-push hook runs: push the queued checkpoint refs.",
    ),
];

/// EXIT STATUS, ENVIRONMENT, FILES and, when it has any, EXAMPLES for the page of `line`.
fn extra_sections(line: &str) -> roff::Roff {
    let mut r = roff::Roff::new();
    let section = |r: &mut roff::Roff, title: &str, items: &[(&str, &str)]| {
        r.control("SH", [title]);
        for (term, text) in items {
            r.control("TP", []);
            r.text([roff::bold(*term)]);
            r.text([roff::roman(*text)]);
        }
    };
    section(&mut r, "EXIT STATUS", &EXIT_STATUS);
    section(&mut r, "ENVIRONMENT", &ENVIRONMENT);
    section(&mut r, "FILES", &FILES);
    let examples: Vec<(&str, &str)> = EXAMPLES
        .into_iter()
        .filter(|(cmd, _)| *cmd == line || cmd.starts_with(&format!("{line} ")))
        .collect();
    if !examples.is_empty() {
        section(&mut r, "EXAMPLES", &examples);
    }
    r
}
