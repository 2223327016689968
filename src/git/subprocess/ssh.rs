//! The ssh command of a git call: the user's own, as git would pick it (`GIT_SSH_COMMAND`, else
//! `core.sshCommand`, else `GIT_SSH`), extended so that it never prompts (a hook has no
//! terminal) and gives up connecting to a dead host before the call's deadline kills it (so the
//! error says why). It is extended, never replaced: a deploy key, an `ssh -F` or plink chosen
//! there applies to our pushes and fetches as to the user's.
//!
//! We hand git the result as `GIT_SSH_COMMAND`, which git prefers over the other two; so the
//! other two are read here first: the environment once per process, the configuration once per
//! repository (a `git config` of the call's directory and environment, which sees what git
//! would: the repository's, the user's, `-c` of the caller).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::Git;

/// OpenSSH's connect timeout when the deadline leaves more time than this.
const MAX_SSH_CONNECT: Duration = Duration::from_secs(60);
/// How long reading the ssh settings of a repository may take.
const CONFIG_BUDGET: Duration = Duration::from_secs(10);

/// What git would run for ssh, and how it would talk to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Choice {
    /// A shell command line (`GIT_SSH_COMMAND`, `core.sshCommand`, or `GIT_SSH` quoted).
    command: Option<String>,
    /// `GIT_SSH_VARIANT`, else `ssh.variant`.
    variant: Option<String>,
}

/// Which program the command runs, for the options it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// OpenSSH.
    OpenSsh,
    /// PuTTY's plink (or TortoisePlink): `-batch` instead of OpenSSH's options.
    Plink,
    /// Takes nothing but the host and the command.
    Simple,
    /// A wrapper of unknown kind (git probes it with `-G`): most wrap OpenSSH.
    Unknown,
}

impl Variant {
    /// The variant git would use: the explicit one, else by the program's name.
    fn of(explicit: Option<&str>, command: &str) -> Variant {
        match explicit.map(str::to_ascii_lowercase).as_deref() {
            Some("ssh") => return Variant::OpenSsh,
            Some("plink" | "putty" | "tortoiseplink") => return Variant::Plink,
            Some("simple") => return Variant::Simple,
            _ => {}
        }
        let program = first_word(command);
        let name = Path::new(&program)
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match name.strip_suffix(".exe").unwrap_or(&name) {
            "ssh" => Variant::OpenSsh,
            "plink" | "tortoiseplink" => Variant::Plink,
            _ => Variant::Unknown,
        }
    }
}

/// The program of a shell command line: its first word, quotes removed (as git's
/// `split_cmdline` reads it).
fn first_word(command: &str) -> String {
    let mut word = String::new();
    let mut quote = None;
    let mut chars = command.trim_start().chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => break,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => word.extend(chars.next()),
            _ => word.push(c),
        }
    }
    word
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A non-empty environment variable.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The ssh settings of the process's environment, read once: `GIT_SSH_COMMAND`, `GIT_SSH`
/// (quoted as a command line), `GIT_SSH_VARIANT`.
fn from_env() -> &'static (Option<String>, Option<String>, Option<String>) {
    static ENV: OnceLock<(Option<String>, Option<String>, Option<String>)> = OnceLock::new();
    ENV.get_or_init(|| {
        (
            env_var("GIT_SSH_COMMAND"),
            env_var("GIT_SSH").map(|p| shell_quote(&p)),
            env_var("GIT_SSH_VARIANT"),
        )
    })
}

/// `core.sshCommand` and `ssh.variant` as git run like `cmd` (its directory and environment)
/// reads them, once per directory and `GIT_DIR`. Unreadable settings count as unset: git, run
/// next, then says what is wrong with them.
fn from_config(cmd: &Command) -> Choice {
    type Key = (PathBuf, Option<OsString>);
    static SEEN: OnceLock<Mutex<HashMap<Key, Choice>>> = OnceLock::new();
    let dir = cmd.get_current_dir().unwrap_or(Path::new(".")).to_owned();
    let git_dir = cmd
        .get_envs()
        .find(|(k, _)| *k == "GIT_DIR")
        .and_then(|(_, v)| v.map(OsString::from));
    let key = (dir, git_dir);
    let seen = SEEN.get_or_init(Mutex::default);
    if let Some(known) = seen.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return known.clone();
    }
    let mut git = Git::new(&key.0);
    git.gated = false;
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => git.cmd.env(k, v),
            None => git.cmd.env_remove(k),
        };
    }
    let out = git
        .args([
            "config",
            "-z",
            "--get-regexp",
            r"^(core\.sshcommand|ssh\.variant)$",
        ])
        .run(CONFIG_BUDGET);
    let mut found = Choice::default();
    match out {
        Ok(out) => {
            // `key\nvalue\0` per setting; the last one wins, as for git.
            for entry in out.stdout.split('\0') {
                match entry.split_once('\n') {
                    Some(("core.sshcommand", v)) if !v.trim().is_empty() => {
                        found.command = Some(v.to_owned())
                    }
                    Some(("ssh.variant", v)) => found.variant = Some(v.to_owned()),
                    _ => {}
                }
            }
        }
        Err(e) => log::debug!("could not read the ssh settings: {e}"),
    }
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, found.clone());
    found
}

/// What git run like `cmd` would use for ssh.
fn choice(cmd: &Command) -> Choice {
    let (env_command, git_ssh, env_variant) = from_env();
    let config = match (env_command, env_variant) {
        (Some(_), Some(_)) => Choice::default(),
        _ => from_config(cmd),
    };
    Choice {
        command: env_command
            .clone()
            .or(config.command)
            .or_else(|| git_ssh.clone()),
        variant: env_variant.clone().or(config.variant),
    }
}

/// The `GIT_SSH_COMMAND` of a call run like `cmd` that must end within `limit`.
pub(super) fn ssh_command(cmd: &Command, limit: Duration) -> String {
    extended(&choice(cmd), limit)
}

/// `choice`'s command (plain `ssh` when there is none) with what keeps it from prompting and
/// from connecting past `limit`, where the user did not say otherwise.
fn extended(choice: &Choice, limit: Duration) -> String {
    let connect = limit.min(MAX_SSH_CONNECT).as_secs().max(1);
    let mut c = choice.command.clone().unwrap_or_else(|| "ssh".to_owned());
    let variant = Variant::of(choice.variant.as_deref(), &c);
    match variant {
        Variant::OpenSsh | Variant::Unknown => {
            if !c.contains("BatchMode") {
                c.push_str(" -o BatchMode=yes");
            }
            if variant == Variant::OpenSsh && !c.contains("ConnectTimeout") {
                c.push_str(&format!(" -o ConnectTimeout={connect}"));
            }
        }
        Variant::Plink => {
            if !c.split_whitespace().any(|w| w == "-batch") {
                c.push_str(" -batch");
            }
        }
        Variant::Simple => {}
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(command: Option<&str>, variant: Option<&str>) -> String {
        let choice = Choice {
            command: command.map(str::to_owned),
            variant: variant.map(str::to_owned),
        };
        extended(&choice, Duration::from_secs(3))
    }

    #[test]
    fn plain_ssh_gives_up_connecting_within_the_deadline() {
        assert_eq!(with(None, None), "ssh -o BatchMode=yes -o ConnectTimeout=3");
        let long = Choice::default();
        assert!(extended(&long, Duration::from_secs(600)).ends_with("ConnectTimeout=60"));
        assert!(extended(&long, Duration::from_millis(10)).ends_with("ConnectTimeout=1"));
    }

    #[test]
    fn the_users_command_is_extended_never_replaced() {
        assert_eq!(
            with(Some("ssh -i ~/.ssh/deploy -F 'my config'"), None),
            "ssh -i ~/.ssh/deploy -F 'my config' -o BatchMode=yes -o ConnectTimeout=3"
        );
        assert_eq!(
            with(Some("'/opt/my ssh/bin/ssh' -o BatchMode=no"), None),
            "'/opt/my ssh/bin/ssh' -o BatchMode=no -o ConnectTimeout=3"
        );
        // A wrapper: most pass OpenSSH's options on, but may not know ConnectTimeout.
        assert_eq!(
            with(Some("/usr/local/bin/ssh-wrapper"), None),
            "/usr/local/bin/ssh-wrapper -o BatchMode=yes"
        );
        assert_eq!(
            with(Some(&shell_quote("C:/PuTTY/plink.exe")), None),
            "'C:/PuTTY/plink.exe' -batch"
        );
        assert_eq!(
            with(Some("/opt/wrapper"), Some("putty")),
            "/opt/wrapper -batch"
        );
        assert_eq!(with(Some("/opt/tiny"), Some("simple")), "/opt/tiny");
        assert_eq!(
            with(Some("/opt/tiny"), Some("ssh")),
            "/opt/tiny -o BatchMode=yes -o ConnectTimeout=3"
        );
    }

    #[test]
    fn the_program_is_read_as_git_reads_it() {
        assert_eq!(first_word("  ssh -v"), "ssh");
        assert_eq!(first_word("'/a b/plink' -x"), "/a b/plink");
        assert_eq!(first_word(r#""/a \"b\"/ssh" x"#), r#"/a "b"/ssh"#);
        assert_eq!(first_word(r"/a\ b/ssh x"), "/a b/ssh");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
