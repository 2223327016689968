//! The marker files that let our hook scripts skip our binary when it has nothing to do, so a
//! hook with nothing to do costs a shell's start and a few file tests (docs/hooks.md, "Hooks
//! that do nothing cost nothing"). The scripts read them with shell builtins only
//! (`hooks/runner.sh`, `entire_idle`) and trust one only while it is newer than the hooks
//! directory and our hooks (so a displaced hook still heals), git's configuration and the
//! checkpoint settings; anything uncertain runs the binary. Our binary writes them after a run
//! that found nothing to do, and takes them away where that stops being true:
//!
//! - `<git common dir>/entire/hooks-idle` ([`SessionStore::mark_idle`]): no staged session has
//!   new activity; `session record` takes it away.
//! - `<git dir>/entire-unlinked-head`: a commit of this worktree whose message never names a
//!   checkpoint (no `Entire-Checkpoint` in any case, anywhere) and that no rewrite maps, so an
//!   amend of it carries no link over. Written by post-commit (ours, or the script after the
//!   fast path of prepare-commit-msg), taken away by post-rewrite.
//! - `<git dir>/entire-commit-note`: the message file of the commit whose prepare-commit-msg
//!   linked nothing (the script's fast path, or ours), for that commit's post-commit script.
//! - `<git common dir>/entire/push-idle`: one `<remote> <url> <primary> <mirrors> <v1>` line
//!   (git's arguments to pre-push, `ENTIRE_CHECKPOINTS_PRIMARY`, `ENTIRE_CHECKPOINTS_MIRRORS`
//!   and the v1 branch's loose ref file, `-` for none) per push that left nothing due (it
//!   delivered everything, with the v1 branch where it was before, or found nothing to), never
//!   for a URL that carries credentials (which would keep a password at rest); with no
//!   queue file present, the same v1 file and no `packed-refs` written since, the next such
//!   push has nothing to do either (git-refs writes queue, git-branch writes move the v1 file).

use std::path::Path;

use crate::git::repo::Repo;
use crate::ops::session::SessionStore;

/// This worktree's last commit known to link no checkpoint, in the git dir.
pub const UNLINKED_HEAD: &str = "entire-unlinked-head";
/// The message file a fast prepare-commit-msg left for its post-commit, in the git dir.
pub const COMMIT_NOTE: &str = "entire-commit-note";
/// Pushes with nothing due, in `<git common dir>/entire/`.
pub const PUSH_IDLE: &str = "push-idle";
/// The most lines [`PUSH_IDLE`] keeps (the latest).
const PUSH_IDLE_LINES: usize = 16;

/// Whether a commit message may name a checkpoint, by the rule of the hook scripts: the key
/// `Entire-Checkpoint`, in any case, anywhere.
fn may_link(message: &[u8]) -> bool {
    message
        .windows(CHECKPOINT_KEY.len())
        .any(|w| w.eq_ignore_ascii_case(CHECKPOINT_KEY))
}
const CHECKPOINT_KEY: &[u8] = b"entire-checkpoint";

/// Best effort: a marker that cannot be written only costs the next hook a run of our binary.
fn write(path: &Path, text: &str) {
    if let Err(e) = crate::base::fs::write_atomic(path, text.as_bytes(), 0o644) {
        log::info!("could not write {}: {e}", path.display());
    }
}

/// Takes a marker away. One that cannot be removed is emptied, which the scripts read as none.
fn remove(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            log::info!("could not remove {}: {e}", path.display());
            write(path, "");
        }
    }
}

/// After our prepare-commit-msg ran on `msg_file`: where it linked nothing (`linked_none`),
/// the note the fast path leaves too, so the post-commit script can tell whether the new commit
/// links a checkpoint by the message alone; else none.
pub fn prepare_commit_msg_ran(repo: &Repo, msg_file: &Path, linked_none: bool) {
    let note = repo.git_dir().join(COMMIT_NOTE);
    match msg_file.to_str() {
        Some(name) if linked_none && !name.contains('\n') => {
            // The script reads the path from the hook's working directory.
            let absolute = std::path::absolute(msg_file).unwrap_or_else(|_| msg_file.to_owned());
            write(&note, &format!("{}\n", absolute.display()));
        }
        _ => remove(&note),
    }
}

/// After our post-commit ran: whether the new commit links no checkpoint, and whether any
/// staged session still has new activity.
pub fn post_commit_ran(repo: &Repo) {
    remove(&repo.git_dir().join(COMMIT_NOTE));
    let unlinked = repo.git_dir().join(UNLINKED_HEAD);
    match repo.commit_and_message("HEAD") {
        Some((id, message)) if !may_link(&message) => write(&unlinked, &format!("{id}\n")),
        _ => remove(&unlinked),
    }
    if let Err(e) = SessionStore::new(repo).mark_idle() {
        log::info!("staged sessions: {e}");
    }
}

/// After our post-rewrite ran: the rewritten commits now link what the ones they replace
/// linked, so none is known to link nothing.
pub fn post_rewrite_ran(repo: &Repo) {
    remove(&repo.git_dir().join(UNLINKED_HEAD));
}

/// The v1 branch's loose ref file as the pre-push script reads it (its first line), `-` when
/// there is none; `None` in a reftable repository, where the script cannot read refs.
pub fn v1_file(repo: &Repo) -> Option<String> {
    if repo.ref_format() != crate::git::format::RefFormat::Files {
        return None;
    }
    let path = repo.common_dir().join(crate::store::branch::V1_BRANCH_REF);
    Some(match std::fs::read_to_string(path) {
        Ok(text) => text.lines().next().unwrap_or_default().to_owned(),
        Err(_) => "-".to_owned(),
    })
}

/// Whether a line names a URL with credentials in it.
fn carries_credentials(line: &str) -> bool {
    crate::git::url::redact(line) != line
}

/// After a push to `remote` (`url`, as git gave them to pre-push) that left nothing due, with
/// [`v1_file`] `v1` before it and still: the next one has nothing to do while nothing is queued
/// and the v1 branch has not moved.
pub fn push_was_idle(repo: &Repo, remote: &str, url: &str, v1: Option<String>) {
    let Some(v1) = v1.filter(|before| Some(before) == v1_file(repo).as_ref()) else {
        return;
    };
    let env = |k| std::env::var(k).unwrap_or_default();
    let line = format!(
        "{remote} {url} {} {} {v1}",
        env("ENTIRE_CHECKPOINTS_PRIMARY"),
        env("ENTIRE_CHECKPOINTS_MIRRORS")
    );
    // A URL carrying a password is never kept at rest: pushes to it keep running our binary.
    if line.contains('\n') || v1.is_empty() || carries_credentials(&line) {
        return;
    }
    let path = repo.common_dir().join("entire").join(PUSH_IDLE);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let mut lines: Vec<&str> = old
        .lines()
        .filter(|l| *l != line && !carries_credentials(l))
        .collect();
    lines.push(&line);
    let keep = &lines[lines.len().saturating_sub(PUSH_IDLE_LINES)..];
    let _ = std::fs::create_dir_all(path.parent().unwrap_or(repo.common_dir()));
    write(&path, &(keep.join("\n") + "\n"));
}
