//! `git entire-checkpoint completion`: the bash script, sourced with git's own bash completion
//! in a non-interactive bash, completes `git entire-checkpoint ...` and `git entire-fetch ...`
//! (docs/cli.md, "Shell completion").

use std::path::{Path, PathBuf};

use crate::env::{checkpoint_bin, path_with_bins, tool_available, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT};

/// Where git's bash completion is installed: by Debian's git package, or from git's sources.
const GIT_COMPLETION: [&str; 2] = [
    "/usr/share/bash-completion/completions/git",
    "/usr/share/git-core/contrib/completion/git-completion.bash",
];

fn git_completion() -> Option<PathBuf> {
    GIT_COMPLETION
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs the completion of `line` (words split on spaces; a trailing space starts an empty word)
/// in `dir` through git's completion (`__git_wrap__git_main`), or through the direct binary's
/// when the line starts with `git-entire-`. Returns the candidates; asserts nothing on stderr.
fn complete(env: &TestEnv, script: &Path, dir: &Path, line: &str) -> Vec<String> {
    let git = git_completion().expect("git's bash completion");
    let driver = r#"
source "$1" && source "$2" || exit 1
COMP_LINE=$3
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"
[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
if [[ ${COMP_WORDS[0]} == git ]]; then
	__git_wrap__git_main
else
	$(complete -p "${COMP_WORDS[0]}" | sed 's/.* -F \([^ ]*\) .*/\1/')
fi
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let out = env
        .std_program(Path::new("bash"), Store::Refs)
        .current_dir(dir)
        .env("PATH", path_with_bins())
        .args(["-c", driver, "completion-test"])
        .arg(git)
        .arg(script)
        .arg(line)
        .output()
        .expect("run bash");
    assert!(out.status.success(), "complete {line:?}: {out:?}");
    assert!(
        out.stderr.is_empty(),
        "completion of {line:?} is quiet: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The bash script, written to a file; `None` (with a note) where git's completion is missing.
fn bash_script(env: &TestEnv) -> Option<PathBuf> {
    if !tool_available(
        "git's bash completion (bash-completion)",
        git_completion().is_some(),
    ) {
        return None;
    }
    let out = env
        .bin_cmd(&checkpoint_bin())
        .args(["completion", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success(), "completion bash: {out:?}");
    Some(env.input_file("completion.bash", &out.stdout))
}

#[test]
fn git_completes_subcommands_and_options() {
    let env = TestEnv::new();
    let Some(script) = bash_script(&env) else {
        return;
    };
    let repo = env.repo();
    assert_eq!(
        complete(&env, &script, repo, "git entire-checkpoint sh"),
        ["show "]
    );
    // The hidden `hook` (for the installed hook scripts) is not offered, nor through `help`.
    for line in ["git entire-checkpoint ho", "git entire-checkpoint help ho"] {
        assert_eq!(complete(&env, &script, repo, line), ["hooks "], "{line}");
    }
    let words = complete(&env, &script, repo, "git entire-checkpoint ");
    for sub in ["write ", "show ", "list ", "completion "] {
        assert!(words.contains(&sub.to_owned()), "{sub:?} in {words:?}");
    }
    assert_eq!(
        complete(&env, &script, repo, "git entire-checkpoint list --j"),
        ["--json "]
    );
    assert_eq!(
        complete(&env, &script, repo, "git entire-fetch --a"),
        ["--all "]
    );
    assert_eq!(
        complete(&env, &script, repo, "git entire-checkpoint completion z"),
        ["zsh "]
    );
}

#[test]
fn git_completes_checkpoint_ids_and_refs_where_a_checkpoint_goes() {
    let env = TestEnv::new();
    let Some(script) = bash_script(&env) else {
        return;
    };
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let repo = env.repo();
    for line in [
        "git entire-checkpoint show ",
        "git entire-checkpoint -q log ",
        "git entire-checkpoint cat --no-fetch ",
        "git entire-checkpoint backfill summary ",
    ] {
        let words = complete(&env, &script, repo, line);
        for want in [format!("{HEX_ID} "), "main ".to_owned(), "HEAD ".to_owned()] {
            assert!(words.contains(&want), "{line:?}: {want:?} in {words:?}");
        }
        assert!(
            words.iter().all(|w| !w.starts_with(['-', '<'])),
            "{line:?}: no options or placeholders before a dash: {words:?}"
        );
    }
    assert_eq!(
        complete(
            &env,
            &script,
            repo,
            &format!("git entire-checkpoint show {}", &HEX_ID[..4])
        ),
        [format!("{HEX_ID} ")]
    );
    // Not after an option that takes a value, nor for a second positional.
    let words = complete(&env, &script, repo, "git entire-checkpoint show --session ");
    assert!(!words.contains(&format!("{HEX_ID} ")), "{words:?}");
    // The binary itself completes the same, with bash adding the spaces.
    let words = complete(&env, &script, repo, "git-entire-checkpoint show ");
    assert!(words.contains(&HEX_ID.to_owned()), "{words:?}");
}

#[test]
fn completion_is_quiet_outside_a_repository() {
    let env = TestEnv::without_repo();
    let Some(script) = bash_script(&env) else {
        return;
    };
    let words = complete(&env, &script, env.repo(), "git entire-checkpoint show ");
    assert!(words.is_empty(), "{words:?}");
}

#[test]
fn zsh_and_fish_scripts_are_generated_for_the_binaries() {
    let env = TestEnv::without_repo();
    for (shell, marker, other) in [
        (
            "zsh",
            "#compdef git-entire-checkpoint",
            "#compdef git-entire-fetch",
        ),
        (
            "fish",
            "complete -c git-entire-checkpoint",
            "complete -c git-entire-fetch",
        ),
    ] {
        let out = env
            .bin_cmd(&checkpoint_bin())
            .args(["completion", shell, "git-entire-checkpoint"])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: {text}");
        assert!(!text.contains(other), "{shell}: one binary");
        assert!(
            !text.contains("'hook:") && !text.contains(" -a \"hook\" "),
            "{shell} offers the hidden hook"
        );
    }
    let out = env
        .bin_cmd(&checkpoint_bin())
        .args(["completion", "fish"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("list --ids"), "fish completes IDs: {text}");
    assert!(text.contains("complete -c git-entire-fetch"), "{text}");
}

/// Whether `shell` is installed (`tests/tools.sh` installs zsh and fish; [`tool_available`]).
fn have_shell(shell: &str) -> bool {
    let found = std::process::Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success());
    tool_available(shell, found)
}

#[test]
fn fish_completes_subcommands_and_checkpoint_ids() {
    if !have_shell("fish") {
        return;
    }
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    // fish's `complete -C` prints the candidates of a command line, as a <TAB> would offer them.
    let driver = "git-entire-checkpoint completion fish | source; or exit 1
for line in $argv
    complete -C $line
    echo ==
end";
    let out = env
        .std_program(Path::new("fish"), Store::Refs)
        .env("PATH", path_with_bins())
        .env("XDG_CONFIG_HOME", env.root().join("fish-config"))
        .args(["--no-config", "-c", driver])
        .args([
            "git-entire-checkpoint sh",
            &format!("git-entire-checkpoint show {}", &HEX_ID[..4]),
            "git-entire-fetch --a",
            "git-entire-checkpoint ho",
        ])
        .output()
        .expect("run fish");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let blocks: Vec<Vec<&str>> = text
        .split("==\n")
        .map(|b| b.lines().map(|l| l.split('\t').next().unwrap()).collect())
        .collect();
    assert!(blocks[0].contains(&"show"), "{text}");
    assert_eq!(blocks[1], [HEX_ID], "{text}");
    assert!(blocks[2].contains(&"--all"), "{text}");
    assert_eq!(
        blocks[3],
        ["hooks"],
        "the hidden hook is not offered: {text}"
    );
}

#[test]
fn zsh_loads_the_functions_its_git_completion_calls() {
    if !have_shell("zsh") {
        return;
    }
    let env = TestEnv::without_repo();
    let dir = env.root().join("zsh-functions");
    std::fs::create_dir_all(&dir).unwrap();
    for command in ["git-entire-checkpoint", "git-entire-fetch"] {
        let out = env
            .bin_cmd(&checkpoint_bin())
            .args(["completion", "zsh", command])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        std::fs::write(dir.join(format!("_{command}")), &out.stdout).unwrap();
    }
    // zsh's `_git` completes `git <name> ...` by calling `_git-<name>`: each file is found on
    // fpath by compinit and defines that function.
    let driver = r#"fpath=("$1" $fpath)
autoload -Uz compinit && compinit -u -d "$2" || exit 1
for f in _git-entire-checkpoint _git-entire-fetch; do
    autoload +X $f 2>/dev/null || { echo "missing $f"; exit 1; }
    whence -w $f
done"#;
    let out = env
        .std_program(Path::new("zsh"), Store::Refs)
        .args(["-f", "-c", driver, "zsh-test"])
        .arg(&dir)
        .arg(env.root().join("zcompdump"))
        .output()
        .expect("run zsh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("_git-entire-checkpoint: function")
            && stdout.contains("_git-entire-fetch: function"),
        "{stdout}"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
