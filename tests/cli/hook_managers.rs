//! Our hooks beside other hooks and hook managers, with the real tools (pre-commit, husky,
//! lefthook, git-lfs; `tests/tools.sh` installs them): re-installs that never hide a hook,
//! shared hook directories, and the managers' own installs before and after ours. Every
//! scenario ends with a real commit and a real push to a bare remote.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::commit_hooks::{lines, record, the_trailer, LINE_1, SESSION};
use crate::env::{
    assert_code, checkpoint_bin, checkpoint_ref, hooks_dir, path_str, path_with_bins, rev_in,
    sha256_hex, text, tool_available, tools_dir, write_executable, Store, TestEnv,
};

/// The directories of the installed tools, then our binaries, then the test's own `PATH`.
fn tool_path() -> std::ffi::OsString {
    let tools = tools_dir();
    let mut paths = vec![tools.join("venv/bin"), tools.join("npm/node_modules/.bin")];
    paths.extend(std::env::split_paths(&path_with_bins()));
    std::env::join_paths(paths).expect("join PATH")
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("Entire checkpoints hook"))
}

/// git-lfs pushes to a local bare remote, which its pre-push hook reads without naming it
/// explicitly: under `safe.bareRepository=explicit` it fails alone (`EOF`), without our hooks.
/// Whether it can run here; otherwise the test says it is skipped.
fn lfs_can_push_locally() -> bool {
    let explicit = crate::env::Profile::current().global_config().contains(&(
        "safe",
        "bareRepository",
        "explicit",
    ));
    if explicit {
        crate::env::skip("git-lfs's pre-push cannot read a local bare remote under safe.bareRepository=explicit (it fails alone, without our hooks)");
    }
    !explicit
}

/// Whether hook manager `tool` is installed ([`tool_available`]: a test without it fails under
/// `./test.sh`, and is skipped, saying so, under a plain `cargo test`).
fn require(tool: &str) -> bool {
    let found = match tool {
        "git-lfs" => std::process::Command::new("git-lfs")
            .arg("version")
            .env("PATH", tool_path())
            .output()
            .is_ok_and(|o| o.status.success()),
        _ => ["venv/bin", "npm/node_modules/.bin"]
            .iter()
            .any(|d| tools_dir().join(d).join(tool).is_file()),
    };
    tool_available(tool, found)
}

/// A repository with a bare remote `origin`, where git and the tools run with [`tool_path`] and
/// the git-refs primary; `inputs/` holds the markers the test's own hooks leave.
struct Scenario {
    env: TestEnv,
    origin: PathBuf,
}

impl Scenario {
    fn new() -> Self {
        let env = TestEnv::new();
        let origin = env.bare_remote("origin");
        Scenario { env, origin }
    }

    fn repo(&self) -> &Path {
        self.env.repo()
    }

    /// `<tmp>/inputs/<name>`: where the test's hooks leave their markers.
    fn marker(&self, name: &str) -> PathBuf {
        self.env.root().join("inputs").join(name)
    }

    /// A hook script that appends `name` to the `ran` marker, and refuses (exit 1) while the
    /// `refuse` marker exists. It ends without `exit`, as a husky script must for lines added
    /// after it to run.
    fn user_hook(&self, name: &str) -> String {
        format!(
            "#!/bin/sh\necho {name} >> '{ran}'\nif [ -f '{refuse}' ]; then echo '{name} refuses' >&2; exit 1; fi\n",
            ran = path_str(&self.marker("ran")),
            refuse = path_str(&self.marker("refuse")),
        )
    }

    /// The test's own hooks run by `manager`: [`Scenario::user_hook`] scripts
    /// `<manager>-commit` for git's `pre-commit` and `<manager>-push` for `pre-push`, written to
    /// `inputs/`, as `(git hook, name, script)`.
    fn manager_hooks(&self, manager: &str) -> [(&'static str, String, PathBuf); 2] {
        ["pre-commit", "pre-push"].map(|hook| {
            let id = format!("{manager}-{}", hook.trim_start_matches("pre-"));
            let script = self.marker(&id);
            write_executable(&script, &self.user_hook(&id));
            (hook, id, script)
        })
    }

    /// The names the test's hooks appended to the `ran` marker, in order; then empties it.
    fn take_ran(&self) -> Vec<String> {
        let ran = std::fs::read_to_string(self.marker("ran")).unwrap_or_default();
        let _ = std::fs::remove_file(self.marker("ran"));
        ran.lines().map(str::to_owned).collect()
    }

    /// Any program (`git`, a tool) in the repository with the test environment.
    fn program(&self, program: &str, args: &[&str]) -> Output {
        self.program_with_path(program, args, &tool_path())
    }

    /// [`Scenario::program`] with `path` as `PATH`.
    fn program_with_path(&self, program: &str, args: &[&str], path: &std::ffi::OsStr) -> Output {
        let mut cmd = std::process::Command::new(program);
        for (k, v) in self.env.env_vars() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.current_dir(self.repo())
            .args(args)
            .env("PATH", path)
            .env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"))
    }

    fn git(&self, args: &[&str]) -> Output {
        self.program("git", args)
    }

    /// `git-entire-checkpoint <args>`.
    fn entire(&self, args: &[&str]) -> Output {
        self.program(path_str(&checkpoint_bin()), args)
    }

    /// A session with activity, then a commit of `file` through the hooks: asserts the trailer
    /// was added and its checkpoint exists; returns the checkpoint ID.
    fn commit(&self, file: &str) -> String {
        record(
            &self.env,
            self.repo(),
            SESSION,
            Some(&lines(&[LINE_1])),
            &[],
        );
        self.env.write_file(file, format!("{file}\n").as_bytes());
        assert_code(&self.git(&["add", "--", file]), 0, "git add");
        assert_code(&self.git(&["commit", "-q", "-m", file]), 0, "git commit");
        let id = the_trailer(&self.env, "HEAD");
        let out = self.git(&[
            "cat-file",
            "-e",
            &format!("{}^{{tree}}", checkpoint_ref(&id)),
        ]);
        assert!(
            out.status.success(),
            "the checkpoint {id} the trailer names exists"
        );
        id
    }

    /// `git push origin main` through the hooks: asserts it succeeded and checkpoint `id` and
    /// `main` reached the remote.
    fn push(&self, id: &str) -> String {
        let stderr = assert_code(&self.git(&["push", "-q", "origin", "main"]), 0, "git push");
        assert_eq!(
            rev_in(&self.env, &self.origin, &checkpoint_ref(id)),
            self.env.rev(&checkpoint_ref(id)),
            "checkpoint {id} reached the remote:\n{stderr}"
        );
        assert_eq!(
            rev_in(&self.env, &self.origin, "refs/heads/main"),
            self.env.rev("main")
        );
        stderr
    }

    /// Like [`Scenario::commit`], with an LFS-tracked file `<name>.bin` beside: returns the
    /// checkpoint ID and the LFS object's ID.
    fn commit_lfs(&self, name: &str) -> (String, String) {
        assert_code(&self.git(&["lfs", "track", "*.bin"]), 0, "git lfs track");
        assert_code(&self.git(&["add", ".gitattributes"]), 0, "git add");
        let content = format!("large {name}\n").repeat(100);
        let file = format!("{name}.bin");
        self.env.write_file(&file, content.as_bytes());
        assert_code(&self.git(&["add", &file]), 0, "git add");
        let stored = self.git(&["cat-file", "-p", &format!(":{file}")]);
        assert!(
            text(&stored.stdout).starts_with("version https://git-lfs"),
            "{file} is stored as an LFS pointer"
        );
        (
            self.commit(&format!("{name}.txt")),
            sha256_hex(content.as_bytes()),
        )
    }

    /// Asserts the LFS object `oid` reached the remote.
    fn assert_lfs_pushed(&self, oid: &str) {
        let object = self
            .origin
            .join("lfs/objects")
            .join(&oid[..2])
            .join(&oid[2..4])
            .join(oid);
        assert!(object.is_file(), "the LFS object {oid} reached the remote");
    }

    /// A new commit, then with the `refuse` marker, its push fails and publishes nothing.
    fn assert_push_refused(&self) {
        let count = self.env.git(&["rev-list", "--count", "HEAD"]);
        self.env
            .write_file("refused.txt", format!("refused at {count}").as_bytes());
        assert_code(&self.git(&["add", "refused.txt"]), 0, "git add");
        assert_code(
            &self.git(&["commit", "-q", "-m", "refused"]),
            0,
            "git commit",
        );
        std::fs::write(self.marker("refuse"), b"").unwrap();
        let before = rev_in(&self.env, &self.origin, "refs/heads/main");
        let out = self.git(&["push", "-q", "origin", "main"]);
        std::fs::remove_file(self.marker("refuse")).unwrap();
        assert!(
            !out.status.success(),
            "the user's refusing pre-push hook still refuses:\n{}",
            text(&out.stderr)
        );
        assert_eq!(rev_in(&self.env, &self.origin, "refs/heads/main"), before);
    }
}

// ---------------------------------------------------------------------------------------------
// Re-installs never hide a hook
// ---------------------------------------------------------------------------------------------

/// A hook B that replaced ours after the first install is chained by the second (it runs, after
/// the hook A the first install chained), with a warning naming it. Both were running, and git
/// runs one pre-push: `hooks uninstall` leaves in its place a chain that runs A, then B (not
/// ours: it pushes no checkpoint), and says so; no hook stops running. An install replaces that
/// chain without chaining it (each runs once); once one of the two is gone, `hooks uninstall`
/// puts the other back in place, byte for byte.
#[test]
fn a_hook_that_replaced_ours_keeps_running_with_the_first_after_uninstall() {
    let s = Scenario::new();
    let dir = hooks_dir(&s.env);
    let a = s.user_hook("A");
    let b = s.user_hook("B");
    write_executable(&dir.join("pre-push"), &a);
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    write_executable(&dir.join("pre-push"), &b);

    let stderr = assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install again");
    assert!(
        stderr.contains(path_str(&dir.join("pre-push")))
            && stderr.contains("pre-push.pre-entire.002"),
        "warns, naming the hook it found and where it is kept:\n{stderr}"
    );
    let kept = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
    assert_eq!(kept("pre-push.pre-entire.002").as_deref(), Some(b.as_str()));
    let status = text(&s.entire(&["hooks", "status"]).stdout);
    assert!(
        status.contains("chains pre-push.pre-entire, pre-push.pre-entire.002"),
        "{status}"
    );

    let id = s.commit("a.txt");
    s.push(&id);
    assert_eq!(s.take_ran(), ["A", "B"], "both chained hooks ran, in order");
    s.assert_push_refused();

    let out = s.entire(&["hooks", "uninstall"]);
    let stderr = assert_code(&out, 0, "hooks uninstall");
    assert_no_warning(&stderr, "hooks uninstall");
    assert!(
        stderr.contains(&format!(
            "{} is now a chain",
            path_str(&dir.join("pre-push"))
        )) && stderr.contains("pre-push.pre-entire, ")
            && stderr.contains("pre-push.pre-entire.002 in turn"),
        "says it left a chain of both:\n{stderr}"
    );
    let chain = kept("pre-push").expect("a pre-push hook");
    assert!(!is_ours(&dir.join("pre-push")), "ours is gone:\n{chain}");
    let status: serde_json::Value =
        serde_json::from_slice(&s.entire(&["hooks", "status", "--json"]).stdout).unwrap();
    assert_eq!(
        status["hooks"][0],
        serde_json::json!({
            "name": "pre-push",
            "state": "chain",
            "chains": ["pre-push.pre-entire", "pre-push.pre-entire.002"],
            "manager": null,
            "path": path_str(&dir.join("pre-push")),
        }),
        "hooks status tells the chain from a foreign hook"
    );
    assert_eq!(kept("pre-push.pre-entire").as_deref(), Some(a.as_str()));
    assert_eq!(kept("pre-push.pre-entire.002").as_deref(), Some(b.as_str()));
    s.env.write_file("b.txt", b"b\n");
    assert_code(&s.git(&["add", "b.txt"]), 0, "git add");
    assert_code(&s.git(&["commit", "-q", "-m", "b"]), 0, "git commit");
    s.take_ran();
    assert_code(&s.git(&["push", "-q", "origin", "main"]), 0, "git push");
    assert_eq!(s.take_ran(), ["A", "B"], "both still run, in order");
    s.assert_push_refused();

    assert_code(
        &s.entire(&["hooks", "install"]),
        0,
        "hooks install over the chain",
    );
    assert!(is_ours(&dir.join("pre-push")));
    assert_eq!(kept("pre-push.pre-entire").as_deref(), Some(a.as_str()));
    assert_eq!(kept("pre-push.pre-entire.002").as_deref(), Some(b.as_str()));
    assert!(
        !dir.join("pre-push.pre-entire.003").exists(),
        "the chain is not chained"
    );
    let id = s.commit("c.txt");
    s.take_ran();
    s.push(&id);
    assert_eq!(s.take_ran(), ["A", "B"], "each ran once");

    assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    std::fs::remove_file(dir.join("pre-push.pre-entire.002")).unwrap();
    let stderr = assert_code(
        &s.entire(&["hooks", "uninstall"]),
        0,
        "hooks uninstall once B is gone",
    );
    assert_eq!(
        kept("pre-push").as_deref(),
        Some(a.as_str()),
        "A is back in place"
    );
    assert!(!dir.join("pre-push.pre-entire").exists());
    assert!(
        stderr.contains(&format!("at {}", path_str(&dir.join("pre-push")))),
        "says it put A back:\n{stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// Shared hook directories
// ---------------------------------------------------------------------------------------------

/// A global `core.hooksPath` is shared by every repository of the user: refused without
/// `--shared` (nothing written), installed with it (saying who is affected); `hooks status`
/// shows the directory and that it is shared.
#[test]
fn a_global_hooks_path_is_refused_unless_shared() {
    let s = Scenario::new();
    let shared = s.env.root().join("global-hooks");
    assert_code(
        &s.git(&["config", "--global", "core.hooksPath", path_str(&shared)]),
        0,
        "git config --global",
    );
    let out = s.entire(&["hooks", "install"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused:\n{stderr}");
    assert!(
        stderr.contains(path_str(&shared)) && stderr.contains("global"),
        "names the directory and why it is shared:\n{stderr}"
    );
    assert!(
        stderr.contains("git entire-checkpoint hooks install --shared"),
        "{stderr}"
    );
    assert!(!shared.join("pre-push").exists(), "nothing written");

    let status = text(&s.entire(&["hooks", "status"]).stdout);
    let line = status.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("directory")
            && line.contains(path_str(&shared))
            && line.contains("shared"),
        "{status}"
    );

    let stderr = assert_code(&s.entire(&["hooks", "install", "--shared"]), 0, "--shared");
    assert!(
        stderr.contains("every repository without a core.hooksPath of its own"),
        "says which repositories are affected:\n{stderr}"
    );
    let id = s.commit("a.txt");
    s.push(&id);
}

/// A tracked hooks directory is refused without `--shared`: no tracked file changes.
#[test]
fn a_tracked_hooks_directory_is_refused_unless_shared() {
    let s = Scenario::new();
    let hook = s.user_hook("tracked");
    s.env.write_file(".githooks/pre-push", hook.as_bytes());
    s.env.git(&["add", ".githooks"]);
    s.env.git(&["commit", "-q", "-m", "team hooks"]);
    s.env.git(&["config", "core.hooksPath", ".githooks"]);
    let out = s.entire(&["hooks", "install"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused:\n{stderr}");
    assert!(stderr.contains("tracked"), "{stderr}");
    assert_eq!(s.env.git(&["status", "--porcelain"]), "", "nothing changed");

    let status = text(&s.entire(&["hooks", "status"]).stdout);
    assert!(status.contains("shared: it is tracked"), "{status}");

    // The default directory is this repository's own.
    let s = Scenario::new();
    let status = text(&s.entire(&["hooks", "status"]).stdout);
    assert!(
        status
            .lines()
            .next()
            .unwrap_or_default()
            .contains("this repository only"),
        "{status}"
    );
}

/// A `lefthook-local.yml` that is not ours is left alone: the refusal gives the jobs of all
/// four hooks to add, and a command that installs beside lefthook and works as given.
#[test]
fn a_foreign_lefthook_local_file_is_refused_with_all_four_hooks_and_a_runnable_command() {
    let s = Scenario::new();
    s.env
        .write_file("lefthook.yml", b"pre-commit:\n  jobs:\n    - run: 'true'\n");
    let local = s
        .env
        .write_file("lefthook-local.yml", b"pre-commit:\n  skip: true\n");
    let out = s.entire(&["hooks", "install"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused:\n{stderr}");
    assert!(
        stderr.contains(path_str(&local)),
        "names the file:\n{stderr}"
    );
    for call in [
        "git entire-prepush {1} {2}",
        "git entire-checkpoint hook prepare-commit-msg {0}",
        "git entire-checkpoint hook post-commit",
        "git entire-checkpoint hook post-rewrite {1}",
    ] {
        assert!(stderr.contains(call), "gives {call:?}:\n{stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(&local).unwrap(),
        "pre-commit:\n  skip: true\n"
    );
    let command = stderr
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("git entire-checkpoint hooks install"))
        .unwrap_or_else(|| panic!("a command to run:\n{stderr}"));
    let args: Vec<&str> = command.split_whitespace().skip(2).collect();
    assert_code(&s.entire(&args), 0, command);
    let id = s.commit("a.txt");
    s.push(&id);
}

// ---------------------------------------------------------------------------------------------
// git-lfs
// ---------------------------------------------------------------------------------------------

/// git-lfs first, then ours: ours chains LFS's pre-push and post-commit, and both tools' hooks
/// run. LFS accepts only its own hook text where it installs, so `git lfs update` (and
/// `install`) after ours exits 2 and changes nothing; `git lfs update --force` writes LFS's
/// hooks over ours, and `hooks install` (doctor's repair) puts ours back, chaining LFS's once.
#[test]
fn git_lfs_first_then_ours_and_lfs_reinstalling_itself() {
    if !require("git-lfs") || !lfs_can_push_locally() {
        return;
    }
    let s = Scenario::new();
    assert_code(&s.git(&["lfs", "install"]), 0, "git lfs install");
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    let dir = hooks_dir(&s.env);
    for hook in ["pre-push", "post-commit"] {
        let kept = std::fs::read_to_string(dir.join(format!("{hook}.pre-entire"))).unwrap();
        assert!(
            kept.contains(&format!("git lfs {hook}")),
            "LFS's {hook} is chained"
        );
    }
    let (id, oid) = s.commit_lfs("first");
    s.push(&id);
    s.assert_lfs_pushed(&oid);

    let before = std::fs::read_to_string(dir.join("pre-push")).unwrap();
    let out = s.git(&["lfs", "update"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        before
    );

    assert_code(
        &s.git(&["lfs", "update", "--force"]),
        0,
        "git lfs update --force",
    );
    let stderr = repair_with_doctor(&s, "hook-foreign");
    assert!(
        stderr.contains("the same as pre-push.pre-entire"),
        "{stderr}"
    );
    assert!(
        !dir.join("pre-push.pre-entire.002").exists(),
        "LFS's hook runs once"
    );
    let (id, oid) = s.commit_lfs("second");
    s.push(&id);
    s.assert_lfs_pushed(&oid);
}

/// Ours first (chaining the user's own pre-push hook), then git-lfs: `git lfs install` exits 2
/// and changes nothing; `git lfs install --force` then `hooks install` ends with all three
/// running: the user's hook (which still refuses), LFS's, ours.
#[test]
fn ours_first_then_git_lfs() {
    if !require("git-lfs") || !lfs_can_push_locally() {
        return;
    }
    let s = Scenario::new();
    let dir = hooks_dir(&s.env);
    write_executable(&dir.join("pre-push"), &s.user_hook("user"));
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    let out = s.git(&["lfs", "install"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(is_ours(&dir.join("pre-push")), "ours is left alone");
    assert_code(
        &s.git(&["lfs", "install", "--force"]),
        0,
        "git lfs install --force",
    );
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install again");
    let (id, oid) = s.commit_lfs("first");
    s.push(&id);
    s.assert_lfs_pushed(&oid);
    assert_eq!(s.take_ran(), ["user"]);
    s.assert_push_refused();
}

// ---------------------------------------------------------------------------------------------
// pre-commit
// ---------------------------------------------------------------------------------------------

/// A committed `.pre-commit-config.yaml` whose hooks (for the `pre-commit` and `pre-push`
/// stages) are the test's [`Scenario::user_hook`] scripts `pre-commit-commit` and
/// `pre-commit-push` (the second refuses while the `refuse` marker exists).
fn pre_commit_config(s: &Scenario) {
    let mut hooks = String::new();
    for (stage, id, script) in s.manager_hooks("pre-commit") {
        hooks.push_str(&format!(
            "  - id: {id}\n    name: {id}\n    entry: {}\n    language: system\n    always_run: true\n    pass_filenames: false\n    stages: [{stage}]\n",
            path_str(&script)
        ));
    }
    s.env.write_file(
        ".pre-commit-config.yaml",
        format!("default_install_hook_types: [pre-commit, pre-push]\nrepos:\n- repo: local\n  hooks:\n{hooks}").as_bytes(),
    );
    s.env.git(&["add", ".pre-commit-config.yaml"]);
    s.env.git(&["commit", "-q", "-m", "pre-commit config"]);
}

/// A [`Scenario`] with [`pre_commit_config`] and `pre-commit install` run; `None` when
/// pre-commit is not installed (see [`require`]).
fn pre_commit_installed() -> Option<Scenario> {
    if !require("pre-commit") {
        return None;
    }
    let s = Scenario::new();
    pre_commit_config(&s);
    assert_code(
        &s.program("pre-commit", &["install"]),
        0,
        "pre-commit install",
    );
    Some(s)
}

/// pre-commit first, then ours, then pre-commit's re-install: ours sits where pre-commit runs
/// a hook that was there before it (`<hook>.legacy`), so pre-commit's re-install keeps it;
/// `hooks uninstall` leaves pre-commit's setup as it was.
#[test]
fn pre_commit_first_then_ours_then_pre_commit_again() {
    let Some(s) = pre_commit_installed() else {
        return;
    };
    let dir = hooks_dir(&s.env);
    let pre_commits_hook = std::fs::read_to_string(dir.join("pre-push")).unwrap();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    let status = text(&s.entire(&["hooks", "status"]).stdout);
    let line = |hook: &str| {
        status
            .lines()
            .find(|l| l.starts_with(&format!("{hook} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("pre-push").contains("installed (run by pre-commit)")
            && !line("post-commit").contains("run by"),
        "{status}"
    );
    commit_and_push_with(&s, "a.txt", "pre-commit");

    assert_code(
        &s.program("pre-commit", &["install"]),
        0,
        "pre-commit install again",
    );
    commit_and_push_with(&s, "b.txt", "pre-commit");
    s.assert_push_refused();
    assert_doctor_hooks_healthy(&s);

    assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        pre_commits_hook
    );
    assert!(!dir.join("pre-push.legacy").exists());
}

/// Ours first, then pre-commit (which moves ours to `<hook>.legacy` and runs it), then
/// `pre-commit install -f` (which deletes it): doctor reports ours missing, and its repair puts
/// it back.
#[test]
fn ours_first_then_pre_commit_and_its_forced_reinstall() {
    if !require("pre-commit") {
        return;
    }
    let s = Scenario::new();
    pre_commit_config(&s);
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert_code(
        &s.program("pre-commit", &["install"]),
        0,
        "pre-commit install",
    );
    commit_and_push_with(&s, "a.txt", "pre-commit");

    assert_code(
        &s.program("pre-commit", &["install", "-f"]),
        0,
        "pre-commit install -f",
    );
    repair_with_doctor(&s, "hook-missing");
    commit_and_push_with(&s, "b.txt", "pre-commit");
    s.assert_push_refused();
}

/// The state earlier versions left (pre-commit's script chained by ours as `.pre-entire`, then
/// `pre-commit install` moving ours to `.legacy`) fails every push; `hooks install` repairs it.
#[test]
fn hooks_install_repairs_pre_commit_running_itself_through_ours() {
    let Some(s) = pre_commit_installed() else {
        return;
    };
    let dir = hooks_dir(&s.env);
    std::fs::rename(dir.join("pre-push"), dir.join("pre-push.pre-entire")).unwrap();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert_code(
        &s.program("pre-commit", &["install"]),
        0,
        "pre-commit install again",
    );
    let id = s.commit("a.txt");
    let out = s.git(&["push", "-q", "origin", "main"]);
    assert!(
        !out.status.success() && text(&out.stderr).contains("migration mode"),
        "the state of the issue: {}",
        text(&out.stderr)
    );
    s.take_ran();

    let stderr = assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert!(
        stderr.contains("a copy of pre-commit's pre-push hook"),
        "{stderr}"
    );
    s.push(&id);
    assert_eq!(s.take_ran(), ["pre-commit-push"]);
}

/// Asserts doctor reports `code` for a hook, with `git entire-checkpoint hooks install` as every
/// repair, and runs that repair as given; returns its stderr.
fn repair_with_doctor(s: &Scenario, code: &str) -> String {
    let doctor = text(&s.entire(&["doctor"]).stdout);
    let repairs: Vec<&str> = doctor
        .split("(repair: ")
        .skip(1)
        .filter_map(|r| r.split(')').next())
        .collect();
    assert!(
        doctor.contains(code)
            && !repairs.is_empty()
            && repairs
                .iter()
                .all(|r| *r == "git entire-checkpoint hooks install"),
        "doctor reports {code} with a repair that works as given:\n{doctor}"
    );
    assert_code(&s.entire(&["hooks", "install"]), 0, "doctor's repair")
}

/// `hooks install` where `manager` owns the hooks: it says it changed `changed`; then a commit
/// and a push through both, and doctor finds the hooks healthy.
fn install_into_the_manager(s: &Scenario, manager: &str, changed: &str) {
    let stderr = assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert!(stderr.contains(changed), "says what it changed:\n{stderr}");
    commit_and_push_with(s, "a.txt", manager);
    assert_doctor_hooks_healthy(s);
}

/// Asserts doctor finds nothing wrong with the hooks.
fn assert_doctor_hooks_healthy(s: &Scenario) {
    let doctor = s.entire(&["doctor"]);
    let out = text(&doctor.stdout);
    assert!(
        !out.contains("hook-"),
        "doctor: the hooks are healthy:\n{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// lefthook
// ---------------------------------------------------------------------------------------------

/// A committed `lefthook.yml` whose `pre-commit` and `pre-push` jobs are the test's
/// [`Scenario::user_hook`] scripts `lefthook-commit` and `lefthook-push`, plus `extra` lines.
fn lefthook_config(s: &Scenario, extra: &str) {
    let mut config = String::new();
    for (hook, id, script) in s.manager_hooks("lefthook") {
        config.push_str(&format!(
            "{hook}:\n  jobs:\n    - name: {id}\n      run: {}\n",
            path_str(&script)
        ));
    }
    config.push_str(extra);
    s.env.write_file("lefthook.yml", config.as_bytes());
    s.env.git(&["add", "lefthook.yml"]);
    s.env.git(&["commit", "-q", "-m", "lefthook config"]);
}

/// A commit and a push through `manager` and ours: the manager's `<manager>-commit` and
/// `<manager>-push` hooks ran, the trailer and the checkpoint are there and reached the remote.
fn commit_and_push_with(s: &Scenario, file: &str, manager: &str) {
    let id = s.commit(file);
    s.push(&id);
    assert_eq!(
        s.take_ran(),
        [format!("{manager}-commit"), format!("{manager}-push")]
    );
}

/// lefthook first, then ours (run from lefthook's per-clone `lefthook-local.yml`, which
/// `hooks install` writes), then lefthook's re-install and a config change that makes lefthook
/// re-install itself: ours keeps running; `hooks uninstall` removes the file.
#[test]
fn lefthook_first_then_ours_then_lefthook_again() {
    if !require("lefthook") {
        return;
    }
    let s = Scenario::new();
    lefthook_config(&s, "");
    assert_code(&s.program("lefthook", &["install"]), 0, "lefthook install");
    install_into_the_manager(&s, "lefthook", "lefthook-local.yml");

    assert_code(
        &s.program("lefthook", &["install"]),
        0,
        "lefthook install again",
    );
    commit_and_push_with(&s, "b.txt", "lefthook");
    // The commit of the change runs the hooks too (without our binaries on PATH: ours does
    // nothing there, as on a teammate's machine without this tool).
    lefthook_config(&s, "post-merge:\n  jobs:\n    - run: 'true'\n");
    s.take_ran();
    commit_and_push_with(&s, "c.txt", "lefthook");
    s.assert_push_refused();

    let stderr = assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    assert!(!s.repo().join("lefthook-local.yml").exists(), "{stderr}");
}

/// Ours first, then lefthook, which moves ours aside where it never runs: doctor says so, and
/// its repair (`hooks install`) has lefthook run ours.
/// A repository with ours installed, then lefthook's committed configuration and `lefthook
/// install` (which moves ours aside for the hooks it installs); `None` without lefthook.
fn ours_then_lefthook() -> Option<Scenario> {
    if !require("lefthook") {
        return None;
    }
    let s = Scenario::new();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    lefthook_config(&s, "");
    assert_code(&s.program("lefthook", &["install"]), 0, "lefthook install");
    Some(s)
}

#[test]
fn ours_first_then_lefthook() {
    let Some(s) = ours_then_lefthook() else {
        return;
    };
    repair_with_doctor(&s, "hook-foreign");
    commit_and_push_with(&s, "a.txt", "lefthook");
    s.assert_push_refused();
    assert_doctor_hooks_healthy(&s);
}

/// Ours first, then lefthook, which moves our pre-push aside (lefthook installs the hooks its
/// configuration names): the next commit, whose prepare-commit-msg is still ours, heals, and its
/// one line says what happened: lefthook runs ours now (not "put back"). The push delivers the
/// checkpoint through lefthook.
#[test]
fn ours_displaced_by_lefthook_heals_into_its_configuration_and_says_so() {
    let Some(s) = ours_then_lefthook() else {
        return;
    };
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    s.env.write_file("a.txt", b"a\n");
    assert_code(&s.git(&["add", "a.txt"]), 0, "git add");
    let stderr = assert_code(&s.git(&["commit", "-q", "-m", "a"]), 0, "git commit");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("entire: ") && l.contains("pre-push"))
        .collect();
    assert_eq!(
        said,
        ["entire: lefthook had taken the place of our pre-push hook; lefthook runs ours now, from its configuration, and what ours ran keeps running"],
        "{stderr}"
    );
    let id = the_trailer(&s.env, "HEAD");
    s.take_ran();
    s.push(&id);
    assert_eq!(s.take_ran(), ["lefthook-push"]);
}

/// A team that drops lefthook: its configuration removed from the repository and
/// `lefthook uninstall` run while ours ran from `lefthook-local.yml`. `lefthook uninstall` puts
/// ours (kept as `<hook>.old`) back in place, and the next `hooks install` stays a plain one (it
/// does not install lefthook again for the `lefthook-local.yml` left behind); `hooks uninstall`
/// removes that file too, leaving the hooks directory as it was.
#[test]
fn lefthook_dropped_while_ours_ran_from_it() {
    if !require("lefthook") {
        return;
    }
    let s = Scenario::new();
    let dir = hooks_dir(&s.env);
    write_executable(&dir.join("pre-push"), &s.user_hook("user-push"));
    lefthook_config(&s, "");
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert!(s.repo().join("lefthook-local.yml").exists());
    assert_code(
        &s.program("lefthook", &["uninstall"]),
        0,
        "lefthook uninstall",
    );
    assert_code(&s.git(&["rm", "-q", "lefthook.yml"]), 0, "git rm");
    assert_code(
        &s.git(&["commit", "-q", "-m", "no lefthook"]),
        0,
        "git commit",
    );
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install again");
    for name in ["pre-push", "post-commit"] {
        assert!(is_ours(&dir.join(name)), "ours is in place of {name}");
        assert!(!dir.join(format!("{name}.old")).exists(), "no {name}.old");
    }
    s.take_ran();
    let id = s.commit("a.txt");
    s.push(&id);
    assert_eq!(s.take_ran(), ["user-push"]);
    s.assert_push_refused();

    assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    assert!(
        !s.repo().join("lefthook-local.yml").exists(),
        "hooks uninstall removes the lefthook-local.yml it wrote"
    );
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| !f.ends_with(".sample"))
        .collect();
    assert_eq!(left, ["pre-push"], "only the user's hook is left");
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        s.user_hook("user-push")
    );
}

// ---------------------------------------------------------------------------------------------
// husky
// ---------------------------------------------------------------------------------------------

/// Committed `.husky/pre-commit` and `.husky/pre-push` scripts: the test's
/// [`Scenario::user_hook`] bodies `husky-commit` and `husky-push`.
fn husky_scripts(s: &Scenario) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for (hook, id) in [("pre-commit", "husky-commit"), ("pre-push", "husky-push")] {
        let body = s.user_hook(id);
        out.push((
            s.env.write_file(&format!(".husky/{hook}"), body.as_bytes()),
            body,
        ));
    }
    s.env.git(&["add", ".husky"]);
    s.env.git(&["commit", "-q", "-m", "husky scripts"]);
    out
}

/// husky first, then ours (a line added to each of husky's scripts, which husky's re-install
/// leaves alone), then husky's re-install: ours keeps running; `hooks uninstall` puts husky's
/// scripts back as they were.
#[test]
fn husky_first_then_ours_then_husky_again() {
    if !require("husky") {
        return;
    }
    let s = Scenario::new();
    let scripts = husky_scripts(&s);
    assert_code(&s.program("husky", &[]), 0, "husky");
    install_into_the_manager(&s, "husky", ".husky/pre-push");

    assert_code(&s.program("husky", &[]), 0, "husky again");
    commit_and_push_with(&s, "b.txt", "husky");
    s.assert_push_refused();

    assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    for (path, body) in scripts {
        assert_eq!(std::fs::read_to_string(&path).unwrap(), body);
    }
    assert!(!s.repo().join(".husky/post-commit").exists());
}

/// husky, then ours (lines added to husky's scripts), then husky uninstalled as husky 9 says
/// (`core.hooksPath` unset; the scripts stay): `hooks uninstall` still takes our lines out of
/// the scripts, which are byte-identical to before.
#[test]
fn hooks_uninstall_after_husky_is_gone_takes_ours_out_of_its_scripts() {
    if !require("husky") {
        return;
    }
    let s = Scenario::new();
    let scripts = husky_scripts(&s);
    assert_code(&s.program("husky", &[]), 0, "husky");
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert_ne!(
        std::fs::read_to_string(&scripts[1].0).unwrap(),
        scripts[1].1
    );
    assert_code(
        &s.git(&["config", "--unset", "core.hooksPath"]),
        0,
        "git config --unset core.hooksPath",
    );
    let stderr = assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    assert!(stderr.contains(".husky/pre-push"), "says so: {stderr}");
    for (path, body) in scripts {
        assert_eq!(std::fs::read_to_string(&path).unwrap(), body);
    }
    for hook in ["post-commit", "prepare-commit-msg", "post-rewrite"] {
        assert!(!s.repo().join(".husky").join(hook).exists(), "{hook}");
    }
}

/// Ours first, then husky (whose core.hooksPath shadows ours): doctor says so, and its repair
/// (`hooks install`) has husky run ours.
#[test]
fn ours_first_then_husky() {
    if !require("husky") {
        return;
    }
    let s = Scenario::new();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    husky_scripts(&s);
    assert_code(&s.program("husky", &[]), 0, "husky");
    repair_with_doctor(&s, "hook-foreign");
    commit_and_push_with(&s, "a.txt", "husky");
    s.assert_push_refused();
    assert_doctor_hooks_healthy(&s);
}

/// A commit whose trailer names a checkpoint no post-commit of ours writes: hooks wired by hand
/// that run only our prepare-commit-msg (none of ours is installed, so nothing heals). Returns
/// the checkpoint ID; the session stays staged.
fn dangling_commit(s: &Scenario) -> String {
    let by_hand = s.env.root().join("by-hand-hooks");
    write_executable(
        &by_hand.join("prepare-commit-msg"),
        "#!/bin/sh\ngit entire-checkpoint hook prepare-commit-msg \"$@\"\n",
    );
    assert_code(
        &s.git(&["config", "core.hooksPath", path_str(&by_hand)]),
        0,
        "git config",
    );
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    s.env.write_file("a.txt", b"a\n");
    assert_code(&s.git(&["add", "a.txt"]), 0, "git add");
    assert_code(&s.git(&["commit", "-q", "-m", "a"]), 0, "git commit");
    assert_code(
        &s.git(&["config", "--unset", "core.hooksPath"]),
        0,
        "git config --unset",
    );
    let id = the_trailer(&s.env, "HEAD");
    assert!(s.env.rev(&checkpoint_ref(&id)).is_none(), "never written");
    id
}

/// A dangling trailer while its session is still staged: doctor reports the commit, and its
/// repair (`hook post-commit`) writes the session under the trailer's ID.
#[test]
fn a_dangling_trailer_that_doctor_reports_and_repairs() {
    let s = Scenario::new();
    let id = dangling_commit(&s);
    let head = s.env.rev("HEAD").unwrap();
    let doctor = text(&s.entire(&["doctor"]).stdout);
    assert!(
        doctor
            .lines()
            .any(|l| l.contains("trailer-dangling") && l.contains(&head[..7])),
        "doctor reports the commit:\n{doctor}"
    );
    let finding = the_dangling_finding(&s);
    let argv = crate::env::repair_args(&finding).unwrap_or_else(|| panic!("{finding}"));
    assert_eq!(argv, ["entire-checkpoint", "hook", "post-commit"]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    assert_code(&s.git(&argv), 0, "the repair as given");
    let written = s.git(&[
        "cat-file",
        "-p",
        &format!("{}:0/metadata.json", checkpoint_ref(&id)),
    ]);
    assert!(written.status.success(), "the repair wrote {id}");
    assert!(
        text(&written.stdout).contains(SESSION),
        "with the staged session"
    );
    let doctor = text(&s.entire(&["doctor"]).stdout);
    assert!(!doctor.contains("trailer-dangling"), "{doctor}");
}

/// A dangling trailer whose session is no longer staged (it went into a later checkpoint), with
/// ours displaced by another post-commit hook: the repair doctor names is re-installing ours.
#[test]
fn a_dangling_trailer_behind_a_foreign_post_commit_names_hooks_install() {
    let s = Scenario::new();
    let id = dangling_commit(&s);
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    let hook = crate::env::hooks_dir(&s.env).join("post-commit");
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    // Its session folded elsewhere: nothing is staged any more.
    assert_code(
        &s.entire(&["session", "discard", SESSION]),
        0,
        "session discard",
    );
    let finding = the_dangling_finding(&s);
    assert!(
        finding["message"].as_str().unwrap().contains(id.as_str()),
        "{finding}"
    );
    assert_eq!(
        crate::env::repair_args(&finding).unwrap(),
        ["entire-checkpoint", "hooks", "install"],
        "{finding}"
    );
}

/// A dangling trailer nothing can repair (its session went elsewhere, the hooks are fine): doctor
/// reports it once, saying what was lost and that `doctor --fix` acknowledges it; `--fix`
/// records that in this clone (exit 0), and doctor is clean afterwards and says so. A link that
/// can still be repaired (`HEAD` with its session staged) is never acknowledged.
#[test]
fn a_dangling_trailer_that_cannot_be_repaired_is_acknowledged_by_doctor_fix() {
    let s = Scenario::new();
    let id = dangling_commit(&s);
    // While the session is staged, the link is repairable (`doctor --fix` writes it:
    // `checkpoint-unwritten`), never acknowledged.
    let before = s.entire(&["doctor", "--json"]);
    assert_code(&before, 1, "doctor while the session is staged");
    let doc = crate::env::parse_json(&before.stdout);
    let found = crate::doctor::findings_of(&doc, "trailer-dangling");
    assert_eq!(found.len(), 1, "{doc}");
    let unwritten = crate::doctor::findings_of(&doc, "checkpoint-unwritten");
    assert_eq!(unwritten.len(), 1, "{doc}");
    assert_eq!(unwritten[0]["subject"], serde_json::json!(id), "{doc}");

    assert_code(
        &s.entire(&["session", "discard", SESSION]),
        0,
        "session discard",
    );
    let out = s.entire(&["doctor"]);
    let report = assert_code(&out, 1, "doctor");
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("trailer-dangling"))
        .collect();
    assert_eq!(lines.len(), 1, "reported once:\n{stdout}{report}");
    assert!(lines[0].contains(&id), "{stdout}");
    assert!(
        lines[0].contains("the sessions it recorded cannot be read from it")
            && lines[0].contains("doctor --fix"),
        "says what was lost and how to acknowledge it: {stdout}"
    );
    let before = s.env.refs_snapshot();
    let fixed = s.entire(&["doctor", "--fix"]);
    assert_code(&fixed, 0, "doctor --fix");
    let stdout = text(&fixed.stdout);
    assert!(
        stdout.contains("acknowledged as lost") && stdout.contains("(fixed)"),
        "{stdout}"
    );
    assert_eq!(s.env.refs_snapshot(), before, "no ref changed");
    let clean = s.entire(&["doctor"]);
    assert_code(&clean, 0, "doctor after --fix");
    assert_eq!(text(&clean.stdout), "no problems found\n");
}

// ---------------------------------------------------------------------------------------------
// Hooks that heal
// ---------------------------------------------------------------------------------------------

/// The lines of ours that say a hook was put back.
fn healed_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("put back our"))
        .collect()
}

/// Ours, then `git lfs install --force`, which writes LFS's pre-push and post-commit over ours:
/// the next commit's prepare-commit-msg (still ours) puts them back, chaining LFS's, and says
/// so in one line. The commit's checkpoint is written, and the push delivers it and LFS's
/// objects.
#[test]
fn hooks_displaced_by_git_lfs_install_force_heal_at_the_next_commit() {
    if !require("git-lfs") || !lfs_can_push_locally() {
        return;
    }
    let s = Scenario::new();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert_code(
        &s.git(&["lfs", "install", "--force"]),
        0,
        "git lfs install --force",
    );
    let dir = hooks_dir(&s.env);
    assert!(!is_ours(&dir.join("post-commit")) && !is_ours(&dir.join("pre-push")));
    assert_code(&s.git(&["lfs", "track", "*.bin"]), 0, "git lfs track");
    s.env
        .write_file("big.bin", "large\n".repeat(100).as_bytes());
    assert_code(&s.git(&["add", ".gitattributes", "big.bin"]), 0, "git add");
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let stderr = assert_code(&s.git(&["commit", "-q", "-m", "lfs"]), 0, "git commit");
    assert_eq!(
        healed_lines(&stderr),
        ["entire: put back our pre-push, post-commit hook (another tool had replaced it; its hook is kept and runs too)"],
        "{stderr}"
    );
    for hook in ["pre-push", "post-commit"] {
        assert!(is_ours(&dir.join(hook)), "ours is back in {hook}");
        let kept = std::fs::read_to_string(dir.join(format!("{hook}.pre-entire"))).unwrap();
        assert!(
            kept.contains(&format!("git lfs {hook}")),
            "LFS's {hook} is chained"
        );
    }
    let id = the_trailer(&s.env, "HEAD");
    let stderr = s.push(&id);
    assert!(healed_lines(&stderr).is_empty(), "healed once: {stderr}");
    s.assert_lfs_pushed(&sha256_hex("large\n".repeat(100).as_bytes()));
}

/// Ours, then pre-commit (running ours from `.legacy`), then `pre-commit install -f`, which
/// deletes ours: the next commit puts ours back where pre-commit runs it, saying so in one line;
/// the push delivers the checkpoint and pre-commit's hooks still run (and refuse).
#[test]
fn a_hook_pre_commit_install_f_deleted_heals_at_the_next_commit() {
    if !require("pre-commit") {
        return;
    }
    let s = Scenario::new();
    pre_commit_config(&s);
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    for args in [&["install"][..], &["install", "-f"]] {
        assert_code(&s.program("pre-commit", args), 0, "pre-commit install");
    }
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    s.env.write_file("a.txt", b"a\n");
    assert_code(&s.git(&["add", "a.txt"]), 0, "git add");
    let stderr = assert_code(&s.git(&["commit", "-q", "-m", "a"]), 0, "git commit");
    assert_eq!(healed_lines(&stderr).len(), 1, "{stderr}");
    assert!(healed_lines(&stderr)[0].contains("pre-push"), "{stderr}");
    let id = the_trailer(&s.env, "HEAD");
    s.push(&id);
    assert_eq!(s.take_ran(), ["pre-commit-commit", "pre-commit-push"]);
    s.assert_push_refused();
    assert_doctor_hooks_healthy(&s);
}

/// doctor's one `trailer-dangling` finding.
fn the_dangling_finding(s: &Scenario) -> serde_json::Value {
    let doc = crate::env::parse_json(&s.entire(&["doctor", "--json"]).stdout);
    let found = crate::doctor::findings_of(&doc, "trailer-dangling");
    assert_eq!(found.len(), 1, "{doc}");
    found[0].clone()
}

/// `git entire-prepush` without the remote (a hook manager's entry that does not pass git's
/// arguments on) says that it pushed nothing, rather than passing silently.
#[test]
fn prepush_without_a_remote_warns_that_nothing_was_pushed() {
    let s = Scenario::new();
    let out = s.program(path_str(&crate::env::prepush_bin()), &[]);
    let stderr = assert_code(&out, 0, "git entire-prepush");
    assert!(
        stderr.contains("no remote given, so no checkpoint was pushed"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// A minimal PATH
// ---------------------------------------------------------------------------------------------

/// GUI git clients, IDEs and cron run hooks with a PATH that lacks our binaries: every hook
/// still runs ours, from where `hooks install` found them. (The git is the test's own, by its
/// path, as a client runs its git: git puts its own directory on the hooks' PATH.)
#[test]
fn every_hook_runs_with_a_minimal_path() {
    let s = Scenario::new();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    let minimal = std::ffi::OsStr::new("/usr/bin:/bin");
    let git_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on the test's PATH");
    let git = |args: &[&str]| {
        let out = s.program_with_path(path_str(&git_path), args, minimal);
        assert_code(&out, 0, &format!("git {args:?} with PATH=/usr/bin:/bin"))
    };
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    s.env.write_file("a.txt", b"a\n");
    git(&["add", "a.txt"]);
    let stderr = git(&["commit", "-q", "-m", "a"]);
    assert!(!stderr.contains("warning"), "{stderr}");
    let id = the_trailer(&s.env, "HEAD");
    assert!(
        s.env.rev(&checkpoint_ref(&id)).is_some(),
        "post-commit wrote it"
    );
    // post-rewrite records the amend, so the amended commit still links the checkpoint.
    git(&["commit", "-q", "--amend", "-m", "a, amended"]);
    let show = s.entire(&["show", "HEAD", "--json"]);
    assert!(text(&show.stdout).contains(&id), "{}", text(&show.stderr));
    let stderr = git(&["push", "origin", "main"]);
    assert_eq!(
        rev_in(&s.env, &s.origin, &checkpoint_ref(&id)),
        s.env.rev(&checkpoint_ref(&id)),
        "pre-push pushed it:\n{stderr}"
    );
}

/// `--force` where husky owns the hooks is refused (renaming husky's hook to chain it would
/// silently skip the user's script); husky's scripts wired by hand, with the lines of
/// docs/hooks.md, run ours and doctor counts them as healthy.
#[test]
fn husky_forced_is_refused_and_hand_wired_scripts_are_healthy() {
    if !require("husky") {
        return;
    }
    let s = Scenario::new();
    husky_scripts(&s);
    assert_code(&s.program("husky", &[]), 0, "husky");
    let dir = hooks_dir(&s.env);
    let stub = std::fs::read_to_string(dir.join("pre-push")).unwrap();
    let out = s.entire(&["hooks", "install", "--force"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("pre-push")).unwrap(), stub);

    let docs = include_str!("../../docs/hooks.md");
    let snippet = docs
        .split("```sh\n# .husky/pre-push\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the husky snippet of docs/hooks.md");
    let mut hook = "pre-push".to_owned();
    for line in format!("# .husky/pre-push\n{snippet}").lines() {
        match line.strip_prefix("# .husky/") {
            Some(name) => hook = name.to_owned(),
            None => {
                let path = s.repo().join(".husky").join(&hook);
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                std::fs::write(&path, format!("{text}{line}\n")).unwrap();
            }
        }
    }
    commit_and_push_with(&s, "a.txt", "husky");
    assert_doctor_hooks_healthy(&s);
    s.assert_push_refused();
}

/// `enable` where lefthook owns the hooks: ours go into its configuration, as `hooks install`
/// puts them, and a commit and a push through lefthook run ours; `disable` takes them out.
#[test]
fn enable_with_lefthook_wires_ours_into_its_configuration() {
    if !require("lefthook") {
        return;
    }
    let s = Scenario::new();
    lefthook_config(&s, "");
    assert_code(&s.program("lefthook", &["install"]), 0, "lefthook install");
    let out = s.entire(&["enable"]);
    let stderr = assert_code(&out, 0, "enable");
    assert!(
        text(&out.stdout).contains("hook pre-push: installed (run by lefthook)"),
        "{}",
        text(&out.stdout)
    );
    assert_no_warning(&stderr, "enable");
    assert!(
        stderr.contains("lefthook-local.yml"),
        "says what it wrote: {stderr}"
    );
    assert!(s.repo().join("lefthook-local.yml").exists());
    commit_and_push_with(&s, "a.txt", "lefthook");
    let out = s.entire(&["disable"]);
    let stderr = assert_code(&out, 0, "disable");
    assert_no_warning(&stderr, "disable");
    assert_said_what_it_removed(&text(&out.stdout), "disable");
    assert!(!s.repo().join("lefthook-local.yml").exists());
}

/// A committed `lefthook.yml` that lefthook has not installed yet, and the user's own `pre-push`
/// in the hooks directory: `enable` runs `lefthook install`, which moves a hook that is not its
/// own to `pre-push.old` and never runs it. enable keeps the user's hook running (lefthook runs
/// it from `lefthook-local.yml`, before ours) and says so; it still refuses pushes. Uninstalling
/// ours leaves it running.
#[test]
fn enable_never_disables_the_users_own_hook_when_lefthook_installs() {
    if !require("lefthook") {
        return;
    }
    let s = Scenario::new();
    lefthook_config(&s, "");
    let dir = hooks_dir(&s.env);
    write_executable(&dir.join("pre-push"), &s.user_hook("user-push"));
    let out = s.entire(&["enable"]);
    let stderr = assert_code(&out, 0, "enable");
    assert!(
        stderr.contains("pre-push.old") && stderr.contains("lefthook-local.yml"),
        "enable says what it did with the user's hook:\n{stderr}"
    );
    assert_no_warning(&stderr, "enable");
    let id = s.commit("a.txt");
    s.push(&id);
    let mut ran = s.take_ran();
    ran.sort();
    assert_eq!(ran, ["lefthook-commit", "lefthook-push", "user-push"]);
    s.assert_push_refused();
    s.take_ran();

    let out = s.entire(&["hooks", "uninstall"]);
    let stderr = assert_code(&out, 0, "hooks uninstall");
    assert_no_warning(&stderr, "hooks uninstall");
    assert_said_what_it_removed(&text(&out.stdout), "hooks uninstall");
    s.env.write_file("b.txt", b"b\n");
    assert_code(&s.git(&["add", "b.txt"]), 0, "git add");
    assert_code(&s.git(&["commit", "-q", "-m", "b"]), 0, "git commit");
    s.take_ran();
    assert_code(&s.git(&["push", "-q", "origin", "main"]), 0, "git push");
    assert!(
        s.take_ran().contains(&"user-push".to_owned()),
        "the user's hook still runs after hooks uninstall:\n{stderr}"
    );
}

/// Asserts `stderr` of a successful `what` holds no `warning:` line.
fn assert_no_warning(stderr: &str, what: &str) {
    assert!(
        !stderr.lines().any(|l| l.contains("warning:")),
        "{what} succeeded without a warning:\n{stderr}"
    );
}

/// Asserts `stdout` of `what` (disable, hooks uninstall) says in one line which of our hooks it
/// removed, and prints no status table.
fn assert_said_what_it_removed(stdout: &str, what: &str) {
    let removed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("removed our hooks: "))
        .collect();
    assert_eq!(removed.len(), 1, "{what}:\n{stdout}");
    for hook in [
        "pre-push",
        "post-commit",
        "prepare-commit-msg",
        "post-rewrite",
    ] {
        assert!(removed[0].contains(hook), "{what}:\n{stdout}");
    }
    assert!(
        !stdout.contains("directory") && !stdout.contains("foreign") && stdout.lines().count() <= 3,
        "{what} prints no status table:\n{stdout}"
    );
}

/// Quiet success with husky: `enable` says what it added to husky's scripts without a warning,
/// `git push --mirror` (which sends the checkpoint refs itself) warns of nothing, and
/// `hooks uninstall` says in one line what it removed.
#[test]
fn enable_push_mirror_and_uninstall_with_husky_print_no_warning() {
    if !require("husky") {
        return;
    }
    let s = Scenario::new();
    husky_scripts(&s);
    assert_code(&s.program("husky", &[]), 0, "husky");
    let stderr = assert_code(&s.entire(&["enable"]), 0, "enable");
    assert_no_warning(&stderr, "enable");
    assert!(
        stderr.contains("added ours to husky's scripts"),
        "says what it changed: {stderr}"
    );
    let id = s.commit("a.txt");
    s.take_ran();
    let stderr = assert_code(
        &s.git(&["push", "--mirror", "origin"]),
        0,
        "git push --mirror",
    );
    assert_no_warning(&stderr, "git push --mirror");
    assert_eq!(
        rev_in(&s.env, &s.origin, &checkpoint_ref(&id)),
        s.env.rev(&checkpoint_ref(&id)),
        "the mirror carried the checkpoint:\n{stderr}"
    );
    let out = s.entire(&["hooks", "uninstall"]);
    let stderr = assert_code(&out, 0, "hooks uninstall");
    assert_no_warning(&stderr, "hooks uninstall");
    assert_said_what_it_removed(&text(&out.stdout), "hooks uninstall");
}

/// `PATH` for [`Scenario::program_with_path`] without git-lfs: each directory of [`tool_path`]
/// that holds it is replaced by one of links to everything else in it.
fn path_without_git_lfs(s: &Scenario) -> std::ffi::OsString {
    let mut dirs = Vec::new();
    for (n, dir) in std::env::split_paths(&tool_path()).enumerate() {
        if !dir.join("git-lfs").exists() {
            dirs.push(dir);
            continue;
        }
        let shadow = s.env.root().join("no-lfs").join(n.to_string());
        std::fs::create_dir_all(&shadow).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_name() != "git-lfs" {
                let _ = std::os::unix::fs::symlink(entry.path(), shadow.join(entry.file_name()));
            }
        }
        dirs.push(shadow);
    }
    std::env::join_paths(dirs).unwrap()
}

/// git-lfs first, then ours (chaining LFS's pre-push and post-commit), then `git lfs
/// uninstall`, which stops at our pre-push and leaves LFS's hooks: the next of ours to run
/// removes what that uninstall left (the LFS hooks ours chains, LFS's post-checkout and
/// post-merge), saying so in one line. A push on a machine without git-lfs then delivers the
/// checkpoint, where LFS's chained hook failed it before.
#[test]
fn git_lfs_uninstall_after_ours_leaves_no_lfs_hook_behind() {
    if !require("git-lfs") || !lfs_can_push_locally() {
        return;
    }
    let s = Scenario::new();
    assert_code(&s.git(&["lfs", "install"]), 0, "git lfs install");
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    assert_code(&s.git(&["lfs", "uninstall"]), 0, "git lfs uninstall");
    let dir = hooks_dir(&s.env);
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    s.env.write_file("a.txt", b"a\n");
    assert_code(&s.git(&["add", "a.txt"]), 0, "git add");
    let stderr = assert_code(&s.git(&["commit", "-q", "-m", "a"]), 0, "git commit");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("git-lfs")).collect();
    assert_eq!(
        said,
        ["entire: git-lfs was uninstalled; removed the hooks its uninstall left behind ours: pre-push.pre-entire, post-commit.pre-entire, post-checkout, post-merge"],
        "{stderr}"
    );
    for gone in [
        "pre-push.pre-entire",
        "post-commit.pre-entire",
        "post-checkout",
        "post-merge",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} is gone");
    }
    assert!(is_ours(&dir.join("pre-push")) && is_ours(&dir.join("post-commit")));
    let id = the_trailer(&s.env, "HEAD");
    let out = s.program_with_path(
        "git",
        &["push", "-q", "origin", "main"],
        &path_without_git_lfs(&s),
    );
    let stderr = assert_code(&out, 0, "git push without git-lfs");
    assert_eq!(
        rev_in(&s.env, &s.origin, &checkpoint_ref(&id)),
        s.env.rev(&checkpoint_ref(&id)),
        "the checkpoint reached the remote:\n{stderr}"
    );
}

/// Ours (chaining the user's own pre-push), then husky, which moves `core.hooksPath` to
/// `.husky/_`: `hooks uninstall` cleans the directory ours was installed in too, not only the one
/// git uses now. The user's hook is back byte for byte, nothing of ours is left, and once the
/// setting is unset the user's hook runs alone.
#[test]
fn hooks_uninstall_cleans_every_directory_it_installed_into() {
    if !require("husky") {
        return;
    }
    let s = Scenario::new();
    let dir = hooks_dir(&s.env);
    let users = s.user_hook("user-push");
    write_executable(&dir.join("pre-push"), &users);
    let before = std::fs::read_dir(&dir).unwrap().count();
    assert_code(&s.entire(&["hooks", "install"]), 0, "hooks install");
    husky_scripts(&s);
    assert_code(&s.program("husky", &[]), 0, "husky");
    let stderr = assert_code(&s.entire(&["hooks", "uninstall"]), 0, "hooks uninstall");
    assert!(
        stderr.contains(path_str(&dir)),
        "says what it cleaned:\n{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        users
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| is_ours(&e.path()) || e.file_name().to_string_lossy().contains(".pre-entire"))
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "nothing of ours is left: {left:?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);

    assert_code(
        &s.git(&["config", "--unset", "core.hooksPath"]),
        0,
        "git config",
    );
    s.env.write_file("b.txt", b"b\n");
    assert_code(&s.git(&["add", "b.txt"]), 0, "git add");
    assert_code(&s.git(&["commit", "-q", "-m", "b"]), 0, "git commit");
    s.take_ran();
    assert_code(&s.git(&["push", "-q", "origin", "main"]), 0, "git push");
    assert_eq!(s.take_ran(), ["user-push"]);
}

// ---------------------------------------------------------------------------------------------
// The whole dance
// ---------------------------------------------------------------------------------------------

/// A hook manager of the dance, or none (plain hooks: the user's own only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Theirs {
    Plain,
    PreCommit,
    Husky,
    Lefthook,
    GitLfs,
}

impl Theirs {
    /// The name its hooks of the test are known by (`<name>-commit`, `<name>-push`).
    fn name(self) -> &'static str {
        match self {
            Theirs::Plain => "plain",
            Theirs::PreCommit => "pre-commit",
            Theirs::Husky => "husky",
            Theirs::Lefthook => "lefthook",
            Theirs::GitLfs => "git-lfs",
        }
    }

    /// Commits its configuration with the test's hooks (nothing for plain hooks).
    fn configure(self, s: &Scenario) {
        match self {
            Theirs::Plain => {}
            Theirs::PreCommit => pre_commit_config(s),
            Theirs::Husky => {
                husky_scripts(s);
            }
            Theirs::Lefthook => lefthook_config(s, ""),
            Theirs::GitLfs => {
                // `git lfs install`, even refused, writes this to the repository's config, and
                // `git lfs uninstall` leaves it: git-lfs's own state, set first as if git-lfs
                // had been used here before, so that the config compared is ours to keep.
                s.env.git(&["config", "lfs.repositoryformatversion", "0"]);
                s.env.write_file(
                    ".gitattributes",
                    b"*.bin filter=lfs diff=lfs merge=lfs -text\n",
                );
                assert_code(&s.git(&["add", ".gitattributes"]), 0, "git add");
                assert_code(&s.git(&["commit", "-q", "-m", "lfs"]), 0, "git commit");
            }
        }
    }

    /// Its own install, as its documentation says to run it. Returns whether it is installed
    /// now. `git lfs install` refuses (exit 2, nothing changed) where a hook it did not write is
    /// in its way, the user's included; with ours `installed`, the user takes the way out its
    /// message offers, `--force` (ours heals and keeps running the user's hook, which `--force`
    /// alone would delete; without ours the user keeps their hook and goes without LFS).
    fn install(self, s: &Scenario, ours: bool, installed: bool) -> bool {
        let (program, args): (&str, &[&str]) = match self {
            Theirs::Plain => return true,
            Theirs::PreCommit => ("pre-commit", &["install"]),
            Theirs::Husky => ("husky", &[]),
            Theirs::Lefthook => ("lefthook", &["install"]),
            Theirs::GitLfs => {
                let out = s.git(&["lfs", "install"]);
                if out.status.success() {
                    return true;
                }
                assert_code(&out, 2, "git lfs install over a hook it did not write");
                if !ours {
                    return installed;
                }
                ("git", &["lfs", "install", "--force"])
            }
        };
        assert_code(&s.program(program, args), 0, &format!("{program} install"));
        true
    }

    /// Its own uninstall, as its documentation says (husky 9 has none: unset `core.hooksPath`
    /// and remove the `.husky/_` it generated).
    fn uninstall(self, s: &Scenario) {
        match self {
            Theirs::Plain => {}
            Theirs::PreCommit => {
                assert_code(
                    &s.program("pre-commit", &["uninstall"]),
                    0,
                    "pre-commit uninstall",
                );
            }
            Theirs::Husky => {
                assert_code(
                    &s.git(&["config", "--unset", "core.hooksPath"]),
                    0,
                    "git config --unset core.hooksPath",
                );
                std::fs::remove_dir_all(s.repo().join(".husky/_")).unwrap();
            }
            Theirs::Lefthook => {
                assert_code(
                    &s.program("lefthook", &["uninstall"]),
                    0,
                    "lefthook uninstall",
                );
            }
            Theirs::GitLfs => {
                assert_code(&s.git(&["lfs", "uninstall"]), 0, "git lfs uninstall");
            }
        }
    }
}

/// Every file of the hooks directories a manager or ours may write (`.git/hooks`, `.husky`,
/// `lefthook-local.yml`) and the repository's git config, with their bytes and whether they are
/// executable: what uninstalling everything must give back.
fn hooks_snapshot(s: &Scenario) -> Vec<(String, bool, Vec<u8>)> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, bool, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                out.push((
                    path.strip_prefix(root).unwrap().display().to_string(),
                    mode & 0o111 != 0,
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    let git = s.repo().join(".git");
    let mut out = Vec::new();
    for dir in [git.join("hooks"), s.repo().join(".husky")] {
        walk(s.repo(), &dir, &mut out);
    }
    for file in [git.join("config"), s.repo().join("lefthook-local.yml")] {
        if let Ok(bytes) = std::fs::read(&file) {
            let name = file.strip_prefix(s.repo()).unwrap().display().to_string();
            out.push((name, false, bytes));
        }
    }
    out.sort();
    out
}

/// After a step of the dance, with ours and theirs installed or not: a commit with a staged
/// session gets its checkpoint (only with ours), the push delivers it, every hook of the user's
/// that git or the manager runs ran (the user's own pre-push unless `users_hidden`: the manager
/// itself stopped running it), and the user's refusing pre-push still refuses.
fn after_step(
    s: &Scenario,
    theirs: Theirs,
    (ours, theirs_in, users_hidden): (bool, bool, bool),
    step: &str,
) {
    s.take_ran();
    record(&s.env, s.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let file = format!("{}.txt", s.env.git(&["rev-list", "--count", "HEAD"]).trim());
    s.env.write_file(&file, b"step\n");
    assert_code(&s.git(&["add", "--", &file]), 0, "git add");
    // With git-lfs installed, an LFS-tracked file: its object must reach the remote too.
    let lfs_object = (theirs == Theirs::GitLfs && theirs_in).then(|| {
        let content = format!("large {step}\n").repeat(100);
        let bin = file.replace(".txt", ".bin");
        s.env.write_file(&bin, content.as_bytes());
        assert_code(&s.git(&["add", "--", &bin]), 0, "git add");
        sha256_hex(content.as_bytes())
    });
    let out = s.git(&["commit", "-q", "-m", step]);
    let stderr = assert_code(&out, 0, &format!("git commit after {step}"));
    let trailers = crate::commit_hooks::trailer_ids(&s.env, "HEAD");
    if ours {
        assert_eq!(trailers.len(), 1, "after {step}: one link\n{stderr}");
        s.push(&trailers[0]);
    } else {
        assert!(trailers.is_empty(), "after {step}: no link without ours");
        assert_code(&s.git(&["push", "-q", "origin", "main"]), 0, "git push");
        assert_code(
            &s.entire(&["session", "discard", SESSION]),
            0,
            "session discard",
        );
    }
    if let Some(oid) = lfs_object {
        s.assert_lfs_pushed(&oid);
    }
    let ran = s.take_ran();
    let manager_runs = theirs_in && !matches!(theirs, Theirs::Plain | Theirs::GitLfs);
    let mut expected = Vec::new();
    if manager_runs {
        expected.push(format!("{}-commit", theirs.name()));
        expected.push(format!("{}-push", theirs.name()));
    }
    if !users_hidden {
        expected.push("user-push".to_owned());
    }
    for hook in &expected {
        assert!(
            ran.contains(hook),
            "after {step}: {hook} ran (ran: {ran:?})\n{stderr}"
        );
    }
    s.assert_push_refused();
    s.take_ran();
}

/// The whole dance for `theirs`: from a repository with the user's refusing pre-push hook and
/// the manager's committed configuration, every order of installing ours and theirs twice each,
/// then uninstalling both (in one order or the other, alternately): after each step a commit
/// gets its checkpoint while ours is installed, the push delivers it, the user's hooks run and
/// the refusing one refuses; at the end the hooks directories and the git config are
/// byte-identical to before.
fn dance(theirs: Theirs) {
    if theirs != Theirs::Plain
        && !require(if theirs == Theirs::PreCommit {
            "pre-commit"
        } else {
            theirs.name()
        })
        || theirs == Theirs::GitLfs && !lfs_can_push_locally()
    {
        return;
    }
    let orders: &[&str] = if theirs == Theirs::Plain {
        &["OO"]
    } else {
        &["TTOO", "TOTO", "TOOT", "OTTO", "OTOT", "OOTT"]
    };
    for (n, order) in orders.iter().enumerate() {
        let s = Scenario::new();
        write_executable(
            &s.repo().join(".git/hooks/pre-push"),
            &s.user_hook("user-push"),
        );
        theirs.configure(&s);
        let before = hooks_snapshot(&s);
        let (mut ours, mut theirs_in) = (false, false);
        // Whether the manager hides the user's own pre-push while installed: husky's hooks
        // directory is its own; lefthook moves the hook to `pre-push.old` and never runs it,
        // unless ours was installed first (ours then has lefthook run it, before ours: ours
        // never starts running a hook the user's tools had stopped running).
        let hidden_by_theirs = match theirs {
            Theirs::Husky => true,
            Theirs::Lefthook => order.starts_with('T'),
            Theirs::Plain | Theirs::PreCommit | Theirs::GitLfs => false,
        };
        for (i, step) in order.chars().enumerate() {
            let name = format!(
                "{order} step {i} ({})",
                if step == 'O' { "ours" } else { theirs.name() }
            );
            if step == 'O' {
                assert_code(
                    &s.entire(&["hooks", "install"]),
                    0,
                    &format!("hooks install, {name}"),
                );
                ours = true;
            } else {
                theirs_in = theirs.install(&s, ours, theirs_in);
            }
            // A manager installed after ours may displace it; ours heals at the next commit,
            // which the step's commit is.
            after_step(
                &s,
                theirs,
                (ours, theirs_in, theirs_in && hidden_by_theirs),
                &name,
            );
        }
        let uninstalls = if n % 2 == 0 { ["O", "T"] } else { ["T", "O"] };
        // Whether `hooks uninstall` left a chain: git-lfs's pre-push (forced over ours) and the
        // user's both ran through ours, and git runs one.
        let mut chain_left = false;
        for step in uninstalls {
            let name = format!(
                "{order} uninstall {}",
                if step == "O" { "ours" } else { theirs.name() }
            );
            if step == "O" {
                let stderr = assert_code(&s.entire(&["hooks", "uninstall"]), 0, &name);
                chain_left = theirs == Theirs::GitLfs && theirs_in;
                assert_eq!(
                    stderr.contains("pre-push is now a chain"),
                    chain_left,
                    "{name}: a chain is left only where git-lfs's pre-push ran beside the user's:\n{stderr}"
                );
                ours = false;
            } else {
                theirs.uninstall(&s);
                theirs_in = false;
            }
            after_step(
                &s,
                theirs,
                (ours, theirs_in, theirs_in && hidden_by_theirs),
                &name,
            );
        }
        if chain_left {
            // `git lfs uninstall` stops at the chain, as at any hook not its own; the chain's
            // message says what ends it: `hooks uninstall` again, which removes what git-lfs's
            // uninstall left and puts the user's hook back.
            let stderr = assert_code(
                &s.entire(&["hooks", "uninstall"]),
                0,
                &format!("{order}: hooks uninstall again"),
            );
            assert!(
                stderr.contains("git-lfs was uninstalled") && stderr.contains("put back"),
                "{order}: {stderr}"
            );
            after_step(&s, theirs, (false, false, false), &format!("{order} end"));
        }
        let after = hooks_snapshot(&s);
        let differ: Vec<&String> = before
            .iter()
            .chain(&after)
            .filter(|f| !(before.contains(f) && after.contains(f)))
            .map(|(name, _, _)| name)
            .collect();
        // What cannot be as before (docs/hooks.md, lefthook): `hooks uninstall` while lefthook
        // runs the user's pre-push that ours had it run (ours came first, when the hook was
        // running) keeps the job in lefthook-local.yml, or the hook would stop running; nothing
        // of ours runs after `lefthook uninstall` to delete the file.
        let left_behind = theirs == Theirs::Lefthook && !hidden_by_theirs && uninstalls[0] == "O";
        if left_behind {
            let local =
                std::fs::read_to_string(s.repo().join("lefthook-local.yml")).unwrap_or_default();
            assert!(
                local.contains("pre-push.old") && !local.contains("name: entire-checkpoints"),
                "{order}: lefthook-local.yml runs only the user's pre-push:\n{local}"
            );
            assert_eq!(differ, ["lefthook-local.yml"], "{order}: only it differs");
        } else {
            assert!(differ.is_empty(), "{order}: not as before: {differ:?}");
        }
    }
}

#[test]
fn the_whole_dance_with_plain_hooks() {
    dance(Theirs::Plain);
}

#[test]
fn the_whole_dance_with_pre_commit() {
    dance(Theirs::PreCommit);
}

#[test]
fn the_whole_dance_with_husky() {
    dance(Theirs::Husky);
}

#[test]
fn the_whole_dance_with_lefthook() {
    dance(Theirs::Lefthook);
}

#[test]
fn the_whole_dance_with_git_lfs() {
    dance(Theirs::GitLfs);
}
