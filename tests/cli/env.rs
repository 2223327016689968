//! A hermetic test environment: a temp dir with its own `HOME`, a global git config holding
//! only what the run's [`Profile`] sets (nothing by default), a fixed identity and clock, and a
//! repository with one commit. Every process the tests start (real `git` and our binaries) runs
//! with this environment and nothing inherited from the machine that could change git's
//! behaviour (`GIT_*`, `ENTIRE_*`); the profile also decides which git comes first on `PATH`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tempfile::TempDir;

/// Fixed clock for every commit the tests make with `git`.
pub const FIXED_DATE: &str = "@1767225600 +0000";
pub const AUTHOR_NAME: &str = "Test Author";
pub const AUTHOR_EMAIL: &str = "test@example.com";

/// The branch the git-branch store writes to.
pub const V1_BRANCH: &str = "refs/heads/entire/checkpoints/v1";
/// The namespace of the git-refs store.
pub const REFS_PREFIX: &str = "refs/entire/checkpoints/";

/// Path of the main binary under test (set by cargo for integration tests).
pub fn checkpoint_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-entire-checkpoint"))
}

/// Path of `git-entire-prepush`.
pub fn prepush_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-entire-prepush"))
}

/// Path of `git-entire-fetch`.
pub fn fetch_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-entire-fetch"))
}

/// A temp path as `&str` (they are always UTF-8 here).
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// `PATH` with the directory of our binaries first, so git and installed hooks find
/// `git entire-*`, then [`profile_path`].
pub fn path_with_bins() -> std::ffi::OsString {
    let dir = checkpoint_bin().parent().expect("binary dir").to_path_buf();
    let mut paths = vec![dir];
    paths.extend(std::env::split_paths(&profile_path()));
    std::env::join_paths(paths).expect("join PATH")
}

/// The git profile the suite runs under, `ENTIRE_TEST_PROFILE` (.ci/run runs the suite under
/// several): which git every process the tests start finds first on `PATH`, and what the
/// global git config of every [`TestEnv`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `default` (or unset): the git on `PATH`, an empty global config.
    Default,
    /// `old-git`: the oldest git the suite is run with, first on `PATH`: the directory of
    /// `ENTIRE_TEST_OLD_GIT` (default `/usr/bin/git`, 2.39 as Debian 12 and Apple ship it), so
    /// its `git-upload-pack` and `git-receive-pack` serve local remotes too.
    OldGit,
    /// `safe-bare`: `safe.bareRepository=explicit` in the global config (git 2.38+ knows it;
    /// Git 3.0 makes it the default).
    SafeBare,
    /// `git3`: Git 3.0's announced defaults in the global config: SHA-256 and reftable for new
    /// repositories, and `safe.bareRepository=explicit`.
    Git3,
}

impl Profile {
    /// The profile of this run (`ENTIRE_TEST_PROFILE`); panics on a name it does not know, so a
    /// typo in .ci/run cannot run the default profile twice.
    pub fn current() -> Profile {
        static PROFILE: std::sync::OnceLock<Profile> = std::sync::OnceLock::new();
        *PROFILE.get_or_init(|| {
            let name = std::env::var("ENTIRE_TEST_PROFILE").unwrap_or_default();
            let name = if name.is_empty() { "default" } else { &name };
            [
                Profile::Default,
                Profile::OldGit,
                Profile::SafeBare,
                Profile::Git3,
            ]
            .into_iter()
            .find(|p| p.name() == name)
            .unwrap_or_else(|| {
                panic!("ENTIRE_TEST_PROFILE={name:?}: expected default, old-git, safe-bare or git3")
            })
        })
    }

    /// Its name, as `ENTIRE_TEST_PROFILE` says it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::OldGit => "old-git",
            Profile::SafeBare => "safe-bare",
            Profile::Git3 => "git3",
        }
    }

    /// The global git config entries of this profile, `(section, key, value)`.
    pub fn global_config(self) -> &'static [(&'static str, &'static str, &'static str)] {
        match self {
            Profile::Default | Profile::OldGit => &[],
            Profile::SafeBare => &[("safe", "bareRepository", "explicit")],
            Profile::Git3 => &[
                ("safe", "bareRepository", "explicit"),
                ("init", "defaultObjectFormat", "sha256"),
                ("init", "defaultRefFormat", "reftable"),
            ],
        }
    }

    /// The global config file of this profile.
    fn global_config_text(self) -> String {
        self.global_config()
            .iter()
            .map(|(section, key, value)| format!("[{section}]\n\t{key} = {value}\n"))
            .collect()
    }
}

/// `PATH` for every process the tests start: the test's own, after the profile's git
/// directory ([`Profile::OldGit`]).
pub fn profile_path() -> OsString {
    static PATH: std::sync::OnceLock<OsString> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let mut paths = Vec::new();
        if Profile::current() == Profile::OldGit {
            let git =
                std::env::var_os("ENTIRE_TEST_OLD_GIT").unwrap_or_else(|| "/usr/bin/git".into());
            let dir = Path::new(&git)
                .parent()
                .expect("ENTIRE_TEST_OLD_GIT names a file");
            assert!(
                dir.join("git").is_file(),
                "the old-git profile needs {}",
                dir.join("git").display()
            );
            paths.push(dir.to_path_buf());
        }
        if let Some(p) = std::env::var_os("PATH") {
            paths.extend(std::env::split_paths(&p));
        }
        std::env::join_paths(paths).expect("join PATH")
    })
    .clone()
}

/// The version of the git the tests run (the profile's), `(major, minor)`, asked once.
pub fn git_version() -> (u32, u32) {
    static VERSION: std::sync::OnceLock<(u32, u32)> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        let out = StdCommand::new("git")
            .arg("--version")
            .env("PATH", profile_path())
            .output()
            .expect("run git --version");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parts = text.trim().trim_start_matches("git version ").split('.');
        let mut next = || {
            parts
                .next()
                .and_then(|p| p.parse().ok())
                .expect("git version x.y")
        };
        (next(), next())
    })
}

/// The `git init` options that choose the files ref backend: `--ref-format=files` where git
/// knows another one (2.45+; the git3 profile makes reftable the default), none before.
pub fn files_refs() -> &'static [&'static str] {
    match git_version() >= (2, 45) {
        true => &["--ref-format=files"],
        false => &[],
    }
}

/// Whether the profile's git is at least `major.minor`. When it is not, the test says it is
/// skipped and why (on stderr, and as a line of the file `ENTIRE_TEST_SKIPS` names, which
/// .ci/run prints), and returns at once: `if !git_at_least(2, 45, "reftable") { return; }`.
pub fn git_at_least(major: u32, minor: u32, why: &str) -> bool {
    let have = git_version();
    if have >= (major, minor) {
        return true;
    }
    skip(&format!(
        "needs git {major}.{minor}+ for {why}; this profile's git is {}.{}",
        have.0, have.1
    ));
    false
}

/// Says that the running test is skipped and why (see [`git_at_least`]), as
/// [`tool_available`] does, and adds the line to the file `ENTIRE_TEST_SKIPS` names.
pub fn skip(reason: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let line = format!(
        "SKIPPED {test} ({} profile): {reason}",
        Profile::current().name()
    );
    // Written to the stream itself: the harness captures `eprintln!` of a passing test.
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(file) = std::env::var_os("ENTIRE_TEST_SKIPS") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .expect("open ENTIRE_TEST_SKIPS");
        writeln!(f, "{line}").expect("write ENTIRE_TEST_SKIPS");
    }
}

/// Writes an executable script (creating its directory).
pub fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create script dir");
    }
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod script");
}

/// The two checkpoint stores, selected per command through `ENTIRE_CHECKPOINTS_PRIMARY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    Refs,
    Branch,
}

impl Store {
    pub const ALL: [Store; 2] = [Store::Refs, Store::Branch];

    /// The value of `ENTIRE_CHECKPOINTS_PRIMARY` and of `store` in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Store::Refs => "git-refs",
            Store::Branch => "git-branch",
        }
    }
}

/// The git-refs shard of an ID: its last two characters.
pub fn shard(id: &str) -> &str {
    &id[id.len() - 2..]
}

/// The canonical git-refs ref name of an ID.
pub fn checkpoint_ref(id: &str) -> String {
    format!("{REFS_PREFIX}{}/{id}", shard(id))
}

/// The directory of a checkpoint inside the v1 branch tree: `<id[..2]>/<id[2..]>`.
pub fn branch_dir(id: &str) -> String {
    format!("{}/{}", &id[..2], &id[2..])
}

/// The path prefix of checkpoint `id` inside its store's commit tree, as the root summary's
/// `sessions[]` paths start: `""` for git-refs, `/<id[..2]>/<id[2..]>` for the branch.
pub fn tree_prefix(store: Store, id: &str) -> String {
    match store {
        Store::Refs => String::new(),
        Store::Branch => format!("/{}", branch_dir(id)),
    }
}

/// Whether `dir` is a bare repository: a `HEAD` and a config that says `bare = true`.
pub fn is_bare_repository(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && std::fs::read_to_string(dir.join("config")).is_ok_and(|c| {
            c.lines()
                .any(|l| l.split_whitespace().eq(["bare", "=", "true"]))
        })
}

/// Numbers the files [`TestEnv::input`] writes.
static INPUTS: AtomicUsize = AtomicUsize::new(0);

pub struct TestEnv {
    root: TempDir,
    home: PathBuf,
    repo: PathBuf,
}

impl TestEnv {
    /// A repository at `<tmp>/repo` (`git init -b main`) with one commit on `main`.
    pub fn new() -> Self {
        let env = Self::without_repo();
        env.init_repo(&[]);
        env.write_file("README.md", b"hello\n");
        env.git(&["add", "README.md"]);
        env.git(&["commit", "-q", "-m", "initial commit"]);
        env
    }

    /// [`TestEnv::new`] whose repository keeps its refs in files (loose and `packed-refs`)
    /// whatever the profile's default, in the profile's object format: for tests of our own
    /// files-backend reader and writer, of what they leave on disk, and of gits that know no
    /// other backend.
    pub fn with_files_refs() -> Self {
        let env = Self::without_repo();
        env.init_repo(files_refs());
        env.write_file("README.md", b"hello\n");
        env.git(&["add", "README.md"]);
        env.git(&["commit", "-q", "-m", "initial commit"]);
        env
    }

    /// The hermetic home and temp dir, but `repo` is an existing, empty, non-repository dir.
    pub fn without_repo() -> Self {
        let root = tempfile::Builder::new()
            .prefix("entire-cli-test")
            .tempdir()
            .expect("create temp dir");
        let home = root.path().join("home");
        let repo = root.path().join("repo");
        std::fs::create_dir_all(home.join(".config")).expect("create home");
        std::fs::create_dir_all(&repo).expect("create repo dir");
        std::fs::create_dir_all(root.path().join("inputs")).expect("create inputs dir");
        std::fs::write(
            home.join(".gitconfig"),
            Profile::current().global_config_text(),
        )
        .expect("write global gitconfig");
        TestEnv { root, home, repo }
    }

    /// `git init -b main <extra args>` in the repo dir, plus a repo-local identity.
    pub fn init_repo(&self, extra: &[&str]) {
        let mut args = vec!["init", "-q", "-b", "main"];
        args.extend_from_slice(extra);
        self.git(&args);
        self.git(&["config", "user.name", AUTHOR_NAME]);
        self.git(&["config", "user.email", AUTHOR_EMAIL]);
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn repo(&self) -> &Path {
        &self.repo
    }

    /// The git common dir of the repository at `dir`, absolute.
    pub fn common_dir_in(&self, dir: &Path) -> PathBuf {
        let out = self.git_in(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        );
        PathBuf::from(out.trim())
    }

    /// The object format of the repository at `dir` (`sha1` or `sha256`: the profile's default
    /// unless the test chose one).
    pub fn object_format_in(&self, dir: &Path) -> String {
        self.git_in(dir, &["rev-parse", "--show-object-format"])
            .trim()
            .to_owned()
    }

    /// git's empty tree in the test repository's object format, written to its object store as
    /// every git and the reference implementation write it (git reads it even when it is not
    /// stored; libgit2 only in SHA-1 repositories).
    pub fn empty_tree(&self) -> String {
        self.git_stdin(&["hash-object", "-w", "-t", "tree", "--stdin"], b"")
    }

    /// The all-zero object ID of the test repository's format (git's "no object").
    pub fn zero_oid(&self) -> String {
        let len = match self.object_format_in(&self.repo).as_str() {
            "sha256" => 64,
            _ => 40,
        };
        "0".repeat(len)
    }

    /// The git common dir of the test repository, absolute.
    pub fn common_dir(&self) -> PathBuf {
        self.common_dir_in(self.repo())
    }

    /// The variables every child process gets: `(name, Some(value))` to set, `(name, None)` to
    /// remove.
    pub fn env_vars(&self) -> Vec<(OsString, Option<OsString>)> {
        let mut vars: Vec<(OsString, Option<OsString>)> = std::env::vars_os()
            .filter(|(k, _)| {
                let k = k.to_string_lossy();
                k.starts_with("GIT_") || k.starts_with("ENTIRE_")
            })
            .map(|(k, _)| (k, None))
            .collect();
        // How output looks is the test's choice: no color, width or terminal type from outside.
        for k in ["TERM", "NO_COLOR", "COLUMNS"] {
            vars.push((OsString::from(k), None));
        }
        let set = |vars: &mut Vec<(OsString, Option<OsString>)>, k: &str, v: OsString| {
            vars.push((OsString::from(k), Some(v)));
        };
        set(&mut vars, "HOME", self.home.clone().into_os_string());
        set(&mut vars, "PATH", profile_path());
        set(
            &mut vars,
            "XDG_CONFIG_HOME",
            self.home.join(".config").into_os_string(),
        );
        set(&mut vars, "GIT_CONFIG_NOSYSTEM", "1".into());
        set(
            &mut vars,
            "GIT_CONFIG_GLOBAL",
            self.home.join(".gitconfig").into_os_string(),
        );
        set(
            &mut vars,
            "GIT_CEILING_DIRECTORIES",
            self.root.path().as_os_str().to_owned(),
        );
        set(&mut vars, "LC_ALL", "C".into());
        // Human output shows local times: one zone for every test (a test may set another).
        set(&mut vars, "TZ", "UTC0".into());
        set(&mut vars, "LANG", "C".into());
        set(&mut vars, "GIT_TERMINAL_PROMPT", "0".into());
        set(&mut vars, "GIT_AUTHOR_NAME", AUTHOR_NAME.into());
        set(&mut vars, "GIT_AUTHOR_EMAIL", AUTHOR_EMAIL.into());
        set(&mut vars, "GIT_COMMITTER_NAME", AUTHOR_NAME.into());
        set(&mut vars, "GIT_COMMITTER_EMAIL", AUTHOR_EMAIL.into());
        set(&mut vars, "GIT_AUTHOR_DATE", FIXED_DATE.into());
        set(&mut vars, "GIT_COMMITTER_DATE", FIXED_DATE.into());
        vars
    }

    fn apply_std(&self, cmd: &mut StdCommand) {
        for (k, v) in self.env_vars() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
    }

    fn apply_assert(&self, cmd: &mut assert_cmd::Command) {
        for (k, v) in self.env_vars() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
    }

    /// `program` with the hermetic environment (git's identity, dates, config, HOME), run in
    /// `dir`: an agent or a shell that runs git as a user's does.
    pub fn program_in(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> StdCommand {
        let mut cmd = StdCommand::new(program);
        self.apply_std(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    /// A `git` process with the hermetic environment, run in `dir`. A bare repository (a test's
    /// remote) is addressed explicitly (`GIT_DIR`), as `safe.bareRepository=explicit` (Git
    /// 3.0's default) wants.
    pub fn git_command_in(&self, dir: &Path, args: &[&str]) -> StdCommand {
        let mut cmd = StdCommand::new("git");
        self.apply_std(&mut cmd);
        cmd.current_dir(dir).args(args).stdin(Stdio::null());
        if is_bare_repository(dir) {
            cmd.env("GIT_DIR", dir);
        }
        cmd
    }

    /// Runs `git` in `dir`; panics (with stderr) unless it succeeds; returns raw stdout.
    pub fn git_bytes_in(&self, dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = self
            .git_command_in(dir, args)
            .output()
            .expect("run git (is it on PATH?)");
        assert!(
            out.status.success(),
            "git {args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        String::from_utf8(self.git_bytes_in(dir, args)).expect("git output is UTF-8")
    }

    /// `git <args>` in the repo; asserts success and returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.repo, args)
    }

    pub fn git_bytes(&self, args: &[&str]) -> Vec<u8> {
        self.git_bytes_in(&self.repo, args)
    }

    /// `git <args>` in the repo, with the output whatever the exit status.
    pub fn git_output(&self, args: &[&str]) -> Output {
        self.git_command_in(&self.repo, args)
            .output()
            .expect("run git")
    }

    /// `git <args>` in the repo with `input` on stdin; asserts success, returns trimmed stdout.
    pub fn git_stdin(&self, args: &[&str], input: &[u8]) -> String {
        self.git_stdin_in(&self.repo, args, input)
    }

    /// [`TestEnv::git_stdin`] in `dir`.
    pub fn git_stdin_in(&self, dir: &Path, args: &[&str], input: &[u8]) -> String {
        use std::io::Write;
        let mut cmd = self.git_command_in(dir, args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write git stdin");
        let out = child.wait_with_output().expect("wait for git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_string()
    }

    /// `git-entire-checkpoint`, cwd = repo, hermetic env, primary left to the default.
    pub fn cmd(&self) -> assert_cmd::Command {
        self.bin_cmd(&checkpoint_bin())
    }

    /// `git-entire-checkpoint` with `ENTIRE_CHECKPOINTS_PRIMARY` set to `store`.
    pub fn cmd_as(&self, store: Store) -> assert_cmd::Command {
        self.cmd_primary(Some(store))
    }

    /// `git-entire-checkpoint` with `ENTIRE_CHECKPOINTS_PRIMARY` set to `primary`, or with none
    /// (`None`: the settings files decide).
    pub fn cmd_primary(&self, primary: Option<Store>) -> assert_cmd::Command {
        let mut cmd = self.cmd();
        if let Some(store) = primary {
            cmd.env("ENTIRE_CHECKPOINTS_PRIMARY", store.name());
        }
        cmd
    }

    /// `git-entire-checkpoint` as a plain process (for spawning several at once), primary
    /// `store`, piped output.
    pub fn std_cmd(&self, store: Store) -> StdCommand {
        self.std_program(&checkpoint_bin(), store)
    }

    /// Any executable as a plain process: hermetic env, cwd = repo, primary `store`, stdin
    /// detached, piped output.
    pub fn std_program(&self, program: &Path, store: Store) -> StdCommand {
        let mut cmd = StdCommand::new(program);
        self.apply_std(&mut cmd);
        cmd.current_dir(&self.repo)
            .env("ENTIRE_CHECKPOINTS_PRIMARY", store.name())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Any executable with the hermetic env, cwd = repo.
    pub fn bin_cmd(&self, program: &Path) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(program);
        self.apply_assert(&mut cmd);
        cmd.current_dir(&self.repo);
        cmd
    }

    /// Runs `git-entire-checkpoint <args>` in `dir` under `primary` (as for
    /// [`cmd_primary`](Self::cmd_primary)); returns the raw output.
    pub fn run_primary_in(&self, primary: Option<Store>, dir: &Path, args: &[&str]) -> Output {
        self.cmd_primary(primary)
            .current_dir(dir)
            .args(args)
            .output()
            .expect("run git-entire-checkpoint")
    }

    /// Runs `git-entire-checkpoint <args>` under `store`; returns the raw output.
    pub fn run(&self, store: Store, args: &[&str]) -> Output {
        self.run_in(store, &self.repo, args)
    }

    /// Runs `git-entire-checkpoint <args>` under `store` in `dir` (another clone); returns the
    /// raw output.
    pub fn run_in(&self, store: Store, dir: &Path, args: &[&str]) -> Output {
        self.run_primary_in(Some(store), dir, args)
    }

    /// Runs `git-entire-checkpoint <args>` with no `ENTIRE_CHECKPOINTS_PRIMARY` (the settings
    /// files decide); returns the raw output.
    pub fn run_default(&self, args: &[&str]) -> Output {
        self.run_primary_in(None, &self.repo, args)
    }

    /// Like [`run_primary_in`](Self::run_primary_in), asserting success; returns stdout.
    pub fn ok_primary_in(&self, primary: Option<Store>, dir: &Path, args: &[&str]) -> String {
        let out = self.run_primary_in(primary, dir, args);
        assert_success(&out, args);
        stdout(&out)
    }

    /// Runs `git-entire-checkpoint <args>` under `store`, asserting success; returns stdout.
    pub fn ok(&self, store: Store, args: &[&str]) -> String {
        self.ok_in(store, &self.repo, args)
    }

    /// [`ok`](Self::ok) in `dir`.
    pub fn ok_in(&self, store: Store, dir: &Path, args: &[&str]) -> String {
        self.ok_primary_in(Some(store), dir, args)
    }

    /// [`ok`](Self::ok) with no `ENTIRE_CHECKPOINTS_PRIMARY` (the settings files decide).
    pub fn ok_default(&self, args: &[&str]) -> String {
        self.ok_primary_in(None, &self.repo, args)
    }

    /// Like [`ok`](Self::ok) for a `--json` command: parses stdout as exactly one JSON document.
    pub fn ok_json(&self, store: Store, args: &[&str]) -> Value {
        let out = self.run(store, args);
        assert_success(&out, args);
        parse_json(&out.stdout)
    }

    /// [`ok_json`](Self::ok_json) with no `ENTIRE_CHECKPOINTS_PRIMARY` (the settings files
    /// decide).
    pub fn ok_json_default(&self, args: &[&str]) -> Value {
        let out = self.run_default(args);
        assert_success(&out, args);
        parse_json(&out.stdout)
    }

    /// Runs `git-entire-fetch <args>` in `dir` under the git-refs primary; returns the raw
    /// output.
    pub fn fetch_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.bin_cmd(&fetch_bin())
            .current_dir(dir)
            .env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name())
            .args(args)
            .output()
            .expect("run git-entire-fetch")
    }

    /// `git-entire-fetch --json <args>` in `dir`, primary left to the default, asserting
    /// success; returns the one JSON document it printed.
    pub fn entire_fetch(&self, dir: &Path, args: &[&str]) -> Value {
        let out = self
            .bin_cmd(&fetch_bin())
            .current_dir(dir)
            .args(["--json"])
            .args(args)
            .output()
            .expect("run git-entire-fetch");
        assert_code(&out, 0, &format!("entire-fetch {args:?}"));
        parse_json(&out.stdout)
    }

    /// A `git-entire-checkpoint write --session <session>` in the repository under `primary`
    /// (`None`: the settings files decide): the builder every shared helper that writes a
    /// checkpoint through the binary runs. Add arguments with [`WriteCheckpoint`]'s methods,
    /// then run it.
    pub fn write(&self, primary: impl Into<Option<Store>>, session: &str) -> WriteCheckpoint<'_> {
        WriteCheckpoint {
            env: self,
            primary: primary.into(),
            dir: self.repo.clone(),
            args: vec!["write".into(), "--session".into(), session.into()],
        }
    }

    /// Writes `bytes` to `<tmp>/inputs/<name>` (outside the work tree); returns the path.
    pub fn input_file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root.path().join("inputs").join(name);
        std::fs::write(&path, bytes).expect("write input file");
        path
    }

    /// Writes `bytes` to a new file of `<tmp>/inputs/` (outside the work tree); returns the path.
    pub fn input(&self, bytes: &[u8]) -> PathBuf {
        let n = INPUTS.fetch_add(1, Ordering::Relaxed);
        self.input_file(&format!("input-{n}"), bytes)
    }

    /// Writes a file in the work tree.
    pub fn write_file(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.repo.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(&path, bytes).expect("write file");
        path
    }

    /// Creates a bare repository `<tmp>/<name>.git` (branch `main`), not added as a remote.
    pub fn new_bare(&self, name: &str) -> PathBuf {
        self.new_bare_with(name, &[])
    }

    /// [`TestEnv::new_bare`] with more `git init` options (`extra`).
    pub fn new_bare_with(&self, name: &str, extra: &[&str]) -> PathBuf {
        let path = self.root.path().join(format!("{name}.git"));
        let mut args = vec!["init", "-q", "--bare", "-b", "main"];
        args.extend_from_slice(extra);
        args.push(path_str(&path));
        self.git_in(self.root.path(), &args);
        path
    }

    /// Creates a bare repository `<tmp>/<name>.git` and adds it as remote `name`.
    pub fn bare_remote(&self, name: &str) -> PathBuf {
        let path = self.new_bare(name);
        self.git(&["remote", "add", name, path_str(&path)]);
        path
    }

    /// `git clone -q <extra> <remote> <tmp>/<name>`; returns the clone's path.
    pub fn clone_of(&self, remote: &Path, name: &str, extra: &[&str]) -> PathBuf {
        let dir = self.root.path().join(name);
        let mut args = vec!["clone", "-q"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[path_str(remote), path_str(&dir)]);
        self.git_in(self.root.path(), &args);
        dir
    }

    /// A real `git <args>` in `dir` with our binaries on `PATH` (so installed hooks find `git
    /// entire-*`) and, when given, the primary selected through `ENTIRE_CHECKPOINTS_PRIMARY`
    /// (`None`: the repository's own settings); piped output.
    pub fn git_hooked_command(
        &self,
        primary: Option<Store>,
        dir: &Path,
        args: &[&str],
    ) -> StdCommand {
        let mut cmd = self.git_command_in(dir, args);
        cmd.env("PATH", path_with_bins())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(store) = primary {
            cmd.env("ENTIRE_CHECKPOINTS_PRIMARY", store.name());
        }
        cmd
    }

    /// Runs [`git_hooked_command`](Self::git_hooked_command); returns the raw output.
    pub fn git_hooked(&self, primary: Option<Store>, dir: &Path, args: &[&str]) -> Output {
        self.git_hooked_command(primary, dir, args)
            .output()
            .expect("run git")
    }

    /// Like [`git_hooked`](Self::git_hooked), asserting exit 0; returns stderr.
    pub fn git_hooked_ok(&self, primary: Option<Store>, dir: &Path, args: &[&str]) -> String {
        let out = self.git_hooked(primary, dir, args);
        assert_code(&out, 0, &format!("git {args:?}"))
    }

    /// Approves the committed `.entire/settings.json` of the work tree at `dir` with
    /// `git entire-checkpoint trust`, as a user does after cloning a repository whose settings
    /// choose a checkpoint remote or a mirror outside git; returns what `trust` printed.
    pub fn trust_in(&self, dir: &Path) -> String {
        self.ok_primary_in(None, dir, &["trust"])
    }

    /// Whether `older` is an ancestor of (or the same commit as) `newer` in the repository at
    /// `dir`.
    pub fn is_ancestor_in(&self, dir: &Path, older: &str, newer: &str) -> bool {
        self.git_command_in(dir, &["merge-base", "--is-ancestor", older, newer])
            .status()
            .expect("run git merge-base")
            .success()
    }

    /// [`is_ancestor_in`](Self::is_ancestor_in) the test repository.
    pub fn is_ancestor(&self, older: &str, newer: &str) -> bool {
        self.is_ancestor_in(&self.repo, older, newer)
    }

    /// The checkpoint refs (git-refs namespace) of the repository at `dir`, with their commits.
    pub fn checkpoint_tips_in(&self, dir: &Path) -> BTreeMap<String, String> {
        refs_in(self, dir, REFS_PREFIX)
    }

    /// The test repository's checkpoint refs (git-refs namespace), with their commits.
    pub fn checkpoint_tips(&self) -> BTreeMap<String, String> {
        self.checkpoint_tips_in(&self.repo)
    }

    /// The names of the checkpoint refs (git-refs namespace) of the repository at `dir`, sorted.
    pub fn checkpoint_refs_in(&self, dir: &Path) -> Vec<String> {
        self.checkpoint_tips_in(dir).into_keys().collect()
    }

    /// The names of the test repository's checkpoint refs (git-refs namespace), sorted.
    pub fn checkpoint_refs(&self) -> Vec<String> {
        self.checkpoint_refs_in(&self.repo)
    }

    /// The field `queued` of `status --json` in `dir` under `primary` (as for
    /// [`cmd_primary`](Self::cmd_primary)): how many checkpoint refs wait to be pushed.
    pub fn queued_in(&self, primary: Option<Store>, dir: &Path) -> u64 {
        let out = self.run_primary_in(primary, dir, &["status", "--json"]);
        assert_code(&out, 0, "status --json");
        let v = parse_json(&out.stdout);
        v["queued"]
            .as_u64()
            .unwrap_or_else(|| panic!("status --json has no numeric `queued`: {v}"))
    }

    /// [`queued_in`](Self::queued_in) the test repository, under the git-refs primary.
    pub fn queued(&self) -> u64 {
        self.queued_in(Some(Store::Refs), &self.repo)
    }

    /// The object a ref or rev points to, or `None` when it does not resolve.
    pub fn rev(&self, rev: &str) -> Option<String> {
        let out = self.git_output(&["rev-parse", "--verify", "--quiet", rev]);
        if out.status.success() {
            Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            None
        }
    }

    /// Every ref with its object, one per line (`git for-each-ref`), for before/after checks.
    pub fn refs_snapshot(&self) -> String {
        self.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
    }

    /// The names of all refs under `prefix`.
    pub fn refs_under(&self, prefix: &str) -> Vec<String> {
        self.git(&["for-each-ref", "--format=%(refname)", prefix])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The ref a store keeps `id` in.
    pub fn store_ref(&self, store: Store, id: &str) -> String {
        match store {
            Store::Refs => checkpoint_ref(id),
            Store::Branch => V1_BRANCH.to_string(),
        }
    }

    /// The rev spec of `rel` inside checkpoint `id` of `store` (`<ref>:<path>`).
    pub fn spec(&self, store: Store, id: &str, rel: &str) -> String {
        match store {
            Store::Refs => format!("{}:{rel}", checkpoint_ref(id)),
            Store::Branch if rel.is_empty() => format!("{V1_BRANCH}:{}", branch_dir(id)),
            Store::Branch => format!("{V1_BRANCH}:{}/{rel}", branch_dir(id)),
        }
    }

    /// The tip commit of the ref that holds `id`.
    pub fn tip(&self, store: Store, id: &str) -> String {
        let r = self.store_ref(store, id);
        self.rev(&r)
            .unwrap_or_else(|| panic!("ref {r} does not exist"))
    }

    /// The raw bytes of `rel` in checkpoint `id`, read with `git cat-file blob`.
    pub fn blob(&self, store: Store, id: &str, rel: &str) -> Vec<u8> {
        self.git_bytes(&["cat-file", "blob", &self.spec(store, id, rel)])
    }

    pub fn blob_text(&self, store: Store, id: &str, rel: &str) -> String {
        String::from_utf8(self.blob(store, id, rel)).expect("blob is UTF-8")
    }

    /// `rel` of checkpoint `id` parsed as JSON (key order preserved).
    pub fn json(&self, store: Store, id: &str, rel: &str) -> Value {
        parse_json(&self.blob(store, id, rel))
    }

    /// Whether `rel` exists in checkpoint `id`.
    pub fn exists(&self, store: Store, id: &str, rel: &str) -> bool {
        self.git_output(&["cat-file", "-e", &self.spec(store, id, rel)])
            .status
            .success()
    }

    /// The names in the tree at `spec` (`git ls-tree --name-only`).
    pub fn ls_tree(&self, spec: &str) -> Vec<String> {
        self.git(&["ls-tree", "--name-only", spec])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The parents of a commit.
    pub fn parents(&self, commit: &str) -> Vec<String> {
        let line = self.git(&["rev-list", "--parents", "-n", "1", commit]);
        line.split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect()
    }

    /// The raw commit message (everything after the header of `git cat-file commit`).
    pub fn message(&self, commit: &str) -> String {
        let raw = self.git(&["cat-file", "commit", commit]);
        let (_, msg) = raw.split_once("\n\n").expect("commit has a message");
        msg.to_string()
    }

    /// The subject (first line) of a commit.
    pub fn subject(&self, commit: &str) -> String {
        self.git(&["log", "-1", "--format=%s", commit])
            .trim_end()
            .to_string()
    }
}

/// A `git-entire-checkpoint write` being built by [`TestEnv::write`]: `write --session
/// <session>`, then the arguments in the order they were added.
pub struct WriteCheckpoint<'e> {
    env: &'e TestEnv,
    primary: Option<Store>,
    dir: PathBuf,
    args: Vec<String>,
}

impl WriteCheckpoint<'_> {
    /// `--id <id>`.
    pub fn id(self, id: &str) -> Self {
        self.args(&["--id", id])
    }

    /// `--transcript <file>`.
    pub fn transcript(self, file: &Path) -> Self {
        self.args(&["--transcript", path_str(file)])
    }

    /// `--transcript` of `bytes` written to a new input file ([`TestEnv::input`]).
    pub fn transcript_bytes(self, bytes: &[u8]) -> Self {
        let file = self.env.input(bytes);
        self.transcript(&file)
    }

    /// `--prompt <prompt>`.
    pub fn prompt(self, prompt: &str) -> Self {
        self.args(&["--prompt", prompt])
    }

    /// `--files-touched <file>` for each of `files`, in order.
    pub fn files_touched(mut self, files: &[&str]) -> Self {
        for file in files {
            self = self.args(&["--files-touched", file]);
        }
        self
    }

    /// `--created-at <at>`.
    pub fn created_at(self, at: &str) -> Self {
        self.args(&["--created-at", at])
    }

    /// Any other arguments, as given.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Runs it in `dir` (another clone) instead of the repository.
    pub fn in_dir(mut self, dir: &Path) -> Self {
        self.dir = dir.to_path_buf();
        self
    }

    /// The whole argument list, `write` first: for a caller that runs it its own way (another
    /// environment, a spawned process).
    pub fn argv(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    /// Runs it; returns the raw output.
    pub fn run(&self) -> Output {
        self.env
            .run_primary_in(self.primary, &self.dir, &self.argv())
    }

    /// Runs it, asserting success; returns stdout (the checkpoint ID line).
    pub fn ok(&self) -> String {
        self.env
            .ok_primary_in(self.primary, &self.dir, &self.argv())
    }
}

/// Bytes as text, invalid UTF-8 replaced (for messages and `contains` checks).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A process's stderr as text ([`text`]).
pub fn stderr(out: &Output) -> String {
    text(&out.stderr)
}

/// The state of hook `name` in a `status --json` or `hooks status --json` document
/// (`installed`, `chained`, `managed`, `foreign`, `missing`).
pub fn hook_state<'v>(doc: &'v Value, name: &str) -> &'v str {
    let hooks = doc
        .get("hooks")
        .and_then(|h| h.get("hooks"))
        .unwrap_or(&doc["hooks"]);
    hooks
        .as_array()
        .and_then(|all| all.iter().find(|h| h["name"] == name))
        .and_then(|h| h["state"].as_str())
        .unwrap_or_else(|| panic!("no hook {name} in {doc}"))
}

/// Whether ours runs as hook `name` in a `status --json` document ([`hook_state`]).
pub fn hook_is_ours(doc: &Value, name: &str) -> bool {
    matches!(hook_state(doc, name), "installed" | "chained" | "managed")
}

/// The directory `tests/tools.sh` installs the tools the tests run into (the hook managers, the
/// agents).
pub fn tools_dir() -> PathBuf {
    match std::env::var_os("ENTIRE_TEST_HOOK_TOOLS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
            .join(".cache/entire-checkpoints/hook-tools"),
    }
}

/// Whether `tool`, which a test runs for real, is installed (`found`). Under `./test.sh`
/// (`ENTIRE_TEST_REQUIRE_TOOLS` set) a missing tool fails the test, so that a run that proves the
/// suite skips nothing; under a plain `cargo test` the test is skipped, and says so in a line the
/// harness does not capture.
pub fn tool_available(tool: &str, found: bool) -> bool {
    if found {
        return true;
    }
    if std::env::var_os("ENTIRE_TEST_REQUIRE_TOOLS").is_some() {
        panic!("{tool} is not installed: tests/tools.sh installs it (./test.sh runs it first)");
    }
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    // Written to the stream itself: the harness captures `eprintln!` of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {tool} is not installed (./test.sh installs what the tests need)"
    );
    false
}

/// A process's stdout, which must be UTF-8.
pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// A process's stdout followed by its stderr, as text ([`text`]).
pub fn output_text(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// Panics with the command's stderr unless it succeeded.
pub fn assert_success(out: &Output, args: &[&str]) {
    assert!(
        out.status.success(),
        "git-entire-checkpoint {args:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts the command failed with `code`; returns its stderr.
pub fn assert_code(out: &Output, code: i32, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: expected exit {code}, got {}\nstdout:\n{}\nstderr:\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// Asserts the command failed (any non-zero exit) and wrote a message to stderr; returns it.
pub fn assert_failed(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success() && out.status.code().is_some(),
        "{what}: expected a non-zero exit, got {}\nstdout:\n{}\nstderr:\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !stderr.trim().is_empty(),
        "{what}: failed without a message on stderr"
    );
    stderr
}

/// Parses bytes as exactly one JSON document (trailing data other than whitespace fails).
pub fn parse_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "not a single JSON document ({e}):\n{}",
            String::from_utf8_lossy(bytes)
        )
    })
}

/// The `checkpoint_id`s of `list --json` entries, in order.
pub fn checkpoint_ids(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            e["checkpoint_id"]
                .as_str()
                .expect("checkpoint_id")
                .to_string()
        })
        .collect()
}

/// Asserts `bytes` are UTF-8 and every non-empty line of them is one JSON document.
pub fn assert_jsonl(bytes: &[u8], what: &str) {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"));
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("{what}: corrupt JSONL line {line:?}: {e}"));
    }
}

/// The keys of a JSON object, in document order.
pub fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not a JSON object: {v}"))
        .keys()
        .cloned()
        .collect()
}

/// The arguments after `git` of a doctor finding's `repair` argv (which must start with `git`),
/// to run as given; `None` when the finding names no command.
pub fn repair_args(finding: &Value) -> Option<Vec<String>> {
    if finding["repair"].is_null() {
        return None;
    }
    let argv: Vec<String> = finding["repair"]
        .as_array()
        .unwrap_or_else(|| panic!("repair is an argv: {finding}"))
        .iter()
        .map(|w| w.as_str().expect("argv words are strings").to_owned())
        .collect();
    assert_eq!(argv.first().map(String::as_str), Some("git"), "{finding}");
    Some(argv[1..].to_vec())
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// How many network commands (`git fetch`, `git ls-remote`) a run with `ENTIRE_LOG=debug` made,
/// from its stderr.
pub fn network_calls(err: &str) -> usize {
    err.lines()
        .filter(|l| l.contains("run git fetch ") || l.contains("run git ls-remote "))
        .count()
}

/// Generates one test per store for a body `fn(Store)`: `<name>::refs` and `<name>::branch`.
macro_rules! both_stores {
    ($($name:ident => $body:ident;)+) => {
        $(
            mod $name {
                #[test]
                fn refs() {
                    super::$body($crate::env::Store::Refs)
                }
                #[test]
                fn branch() {
                    super::$body($crate::env::Store::Branch)
                }
            }
        )+
    };
}

/// Generates one test per primary for a body `fn(Option<Store>)`: `<name>::refs`,
/// `<name>::branch`, and `<name>::no_settings` (the default primary, nothing configured).
macro_rules! every_primary {
    ($($name:ident;)+) => {
        $(
            mod $name {
                #[test]
                fn refs() {
                    super::$name(Some($crate::env::Store::Refs))
                }
                #[test]
                fn branch() {
                    super::$name(Some($crate::env::Store::Branch))
                }
                #[test]
                fn no_settings() {
                    super::$name(None)
                }
            }
        )+
    };
}

/// Every ref of the repository at `dir` under `prefix`, with its object.
pub fn refs_in(env: &TestEnv, dir: &Path, prefix: &str) -> BTreeMap<String, String> {
    env.git_in(
        dir,
        &["for-each-ref", "--format=%(refname) %(objectname)", prefix],
    )
    .lines()
    .map(|l| {
        let (r, o) = l.split_once(' ').expect("refname objectname");
        (r.to_string(), o.to_string())
    })
    .collect()
}

/// `rev` resolved in the repository at `dir`, `None` when it does not resolve.
pub fn rev_in(env: &TestEnv, dir: &Path, rev: &str) -> Option<String> {
    let out = env
        .git_command_in(dir, &["rev-parse", "--verify", "--quiet", rev])
        .output()
        .expect("run git rev-parse");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Asserts that the repository at `remote` holds every checkpoint of `ids` at the commit its
/// local ref names.
pub fn assert_checkpoints_reached(env: &TestEnv, remote: &Path, ids: &[&str]) {
    for id in ids {
        assert_eq!(
            rev_in(env, remote, &checkpoint_ref(id)),
            env.rev(&checkpoint_ref(id)),
            "{id} reached {}",
            remote.display()
        );
    }
}

/// A JSON blob of the repository at `dir` (`<rev>:<path>`).
pub fn json_in(env: &TestEnv, dir: &Path, spec: &str) -> Value {
    parse_json(&env.git_bytes_in(dir, &["cat-file", "blob", spec]))
}

/// Whether `s` has the shape of a legacy checkpoint ID (12 lowercase hex).
pub fn is_hex12(s: &str) -> bool {
    s.len() == 12 && s.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
}

/// Whether `s` has the shape of a ULID checkpoint ID.
pub fn is_ulid(s: &str) -> bool {
    s.len() == 26
        && s.chars()
            .all(|c| c.is_ascii_digit() || (c.is_ascii_uppercase() && !"ILOU".contains(c)))
}

/// The directory git runs the test repository's hooks from.
pub fn hooks_dir(env: &TestEnv) -> PathBuf {
    let p = PathBuf::from(env.git(&["rev-parse", "--git-path", "hooks"]).trim());
    if p.is_absolute() {
        p
    } else {
        env.repo().join(p)
    }
}

/// Asserts `git fsck --strict` finds nothing wrong in the repository at `dir` (unreachable
/// objects, such as a crashed write's, are not errors).
pub fn assert_fsck_clean(env: &TestEnv, dir: &Path) {
    let out = env
        .git_command_in(dir, &["fsck", "--strict", "--no-progress"])
        .output()
        .expect("run git fsck");
    assert!(
        out.status.success(),
        "git fsck in {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A server on `127.0.0.1` (port 0) whose thread hands each connection to a handler, until it
/// is dropped or its lifetime is over, so no test can hang on it for longer than that.
struct LocalServer {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LocalServer {
    fn start(
        lifetime: std::time::Duration,
        mut handle: impl FnMut(std::net::TcpStream) + Send + 'static,
    ) -> Self {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let port = listener.local_addr().expect("local address").port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let until = std::time::Instant::now() + lifetime;
            while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                match listener.accept() {
                    Ok((conn, _)) => handle(conn),
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            }
        });
        LocalServer {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A remote that accepts connections and never answers: a TCP listener on `127.0.0.1` whose
/// thread accepts every connection and holds it open without reading or writing. It gives up by
/// itself after [`StalledServer::LIFETIME`], or when dropped.
pub struct StalledServer(LocalServer);

impl StalledServer {
    /// How long the server holds connections at most.
    pub const LIFETIME: std::time::Duration = std::time::Duration::from_secs(60);

    pub fn start() -> Self {
        let mut held = Vec::new();
        StalledServer(LocalServer::start(Self::LIFETIME, move |conn| {
            held.push(conn)
        }))
    }

    /// `http://127.0.0.1:<port>/r.git`.
    pub fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}/r.git", self.0.port)
    }
}

/// A git server over smart HTTP on `127.0.0.1`: `git http-backend` run as a CGI program for each
/// request, serving the bare repositories of one directory (anonymous pushes allowed where a
/// repository sets `http.receivepack`, as a collector an attacker runs would). One request at a
/// time, each on its own connection, each logged (a counting remote). It stops when dropped,
/// and by itself after [`HttpBackend::LIFETIME`].
pub struct HttpBackend(LocalServer, std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl HttpBackend {
    /// How long the server serves at most.
    pub const LIFETIME: std::time::Duration = std::time::Duration::from_secs(300);

    /// Serves the bare repositories under `root` (as `http://127.0.0.1:<port>/<name>.git`), with
    /// the environment of `env`.
    pub fn start(env: &TestEnv, root: &Path) -> Self {
        Self::start_with(env, root, None, None)
    }

    /// [`HttpBackend::start`] behind a web server's limit on a request's body, as Apache's
    /// `LimitRequestBody`: a request whose body is larger than `limit` bytes gets `413`.
    pub fn start_with_body_limit(env: &TestEnv, root: &Path, limit: usize) -> Self {
        Self::start_with(env, root, None, Some(limit))
    }

    /// [`HttpBackend::start`] behind HTTP basic authentication: requests without `user` and
    /// `password` get `401`; with them, pushes are allowed (as `REMOTE_USER`).
    pub fn start_with_basic_auth(env: &TestEnv, root: &Path, user: &str, password: &str) -> Self {
        let out = env
            .program_in("base64", root)
            .args(["-w", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut b| {
                b.stdin
                    .take()
                    .expect("piped stdin")
                    .write_all(format!("{user}:{password}").as_bytes())?;
                b.wait_with_output()
            })
            .expect("run base64");
        let expected = format!("Basic {}", text(&out.stdout).trim());
        Self::start_with(env, root, Some((expected, user.to_owned())), None)
    }

    /// `auth`: the `Authorization` header required, and the user it names; `body_limit`: the
    /// largest request body served.
    fn start_with(
        env: &TestEnv,
        root: &Path,
        auth: Option<(String, String)>,
        body_limit: Option<usize>,
    ) -> Self {
        let vars = env.env_vars();
        let root = root.to_path_buf();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let logged = log.clone();
        let server = LocalServer::start(Self::LIFETIME, move |conn| {
            let _ = serve_cgi(conn, &root, &vars, auth.as_ref(), body_limit, &logged);
        });
        HttpBackend(server, log)
    }

    /// How many requests for git-upload-pack (ref advertisements and fetches) were served so
    /// far: what reads asked of the network.
    pub fn upload_pack_requests(&self) -> usize {
        let log = self.1.lock().expect("request log");
        log.iter().filter(|r| r.contains("git-upload-pack")).count()
    }

    /// How many pushes (git-receive-pack requests that send a pack) were served so far.
    pub fn pushes(&self) -> usize {
        let log = self.1.lock().expect("request log");
        log.iter()
            .filter(|r| r.starts_with("POST ") && r.contains("git-receive-pack"))
            .count()
    }

    /// The URL of the repository `<root>/<name>`.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.0.port)
    }
}

/// Answers one HTTP request on `conn` by running `git http-backend` (CGI/1.1) over `root`.
fn serve_cgi(
    mut conn: std::net::TcpStream,
    root: &Path,
    vars: &[(OsString, Option<OsString>)],
    auth: Option<&(String, String)>,
    body_limit: Option<usize>,
    log: &std::sync::Mutex<Vec<String>>,
) -> std::io::Result<()> {
    use std::io::{BufRead, Read, Write};
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut reader = std::io::BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let (method, target) = (
        words.next().unwrap_or("GET").to_owned(),
        words.next().unwrap_or("/").to_owned(),
    );
    log.lock()
        .expect("request log")
        .push(format!("{method} {target}"));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if let Some(n) = header("content-length").and_then(|n| n.parse::<usize>().ok()) {
        body.resize(n, 0);
        reader.read_exact(&mut body)?;
    } else if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    if auth.is_some_and(|(expected, _)| header("authorization").as_ref() != Some(expected)) {
        conn.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n\
              Content-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return conn.flush();
    }
    if body_limit.is_some_and(|limit| body.len() > limit) {
        conn.write_all(
            b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 0\r\n\
              Connection: close\r\n\r\n",
        )?;
        return conn.flush();
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cmd = StdCommand::new("git");
    if let Some((_, user)) = auth {
        cmd.env("REMOTE_USER", user);
    }
    cmd.arg("http-backend");
    for (k, v) in vars {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, var) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "GIT_PROTOCOL"),
    ] {
        if let Some(v) = header(name) {
            cmd.env(var, v);
        }
    }
    let mut child = cmd.spawn()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output()?;
    let _ = writer.join();
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        });
    let (head, rest) = match split {
        Some((i, n)) => (
            String::from_utf8_lossy(&out.stdout[..i]).into_owned(),
            &out.stdout[i + n..],
        ),
        None => (String::new(), &out.stdout[..]),
    };
    let mut status = "200 OK".to_owned();
    let mut response = Vec::new();
    for h in head.lines() {
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
            _ => response.extend_from_slice(format!("{h}\r\n").as_bytes()),
        }
    }
    let mut reply = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        rest.len()
    )
    .into_bytes();
    reply.extend_from_slice(&response);
    reply.extend_from_slice(b"\r\n");
    reply.extend_from_slice(rest);
    conn.write_all(&reply)?;
    conn.flush()
}

/// Writes `text` as the settings file `file` of the test repository: `.entire/settings.json`,
/// or the per-clone `settings.local.json` where it lives, in the common dir
/// (`.git/entire/`).
pub fn write_settings_text(env: &TestEnv, file: &str, text: &str) {
    if file == "settings.local.json" {
        let path = local_settings_path(env);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create .git/entire");
        std::fs::write(path, text).expect("write the per-clone settings");
    } else {
        env.write_file(&format!(".entire/{file}"), text.as_bytes());
    }
}

/// The per-clone settings file of the test repository (`.git/entire/settings.local.json`).
pub fn local_settings_path(env: &TestEnv) -> PathBuf {
    env.common_dir().join("entire/settings.local.json")
}

/// Writes `text` as the committed `.entire/settings.json` of the test repository and records
/// the user's approval of that content, as `git entire-checkpoint trust` does (the SHA-256 of
/// the file in `entire.trustedSettings`): for tests of what approved settings do.
pub fn write_approved_settings(env: &TestEnv, text: &str) {
    write_settings_text(env, "settings.json", text);
    env.git(&[
        "config",
        "--local",
        "entire.trustedSettings",
        &sha256_hex(text.as_bytes()),
    ]);
}

/// Writes `{"strategy_options": options}` (compact JSON) as `.entire/settings.json`.
pub fn write_strategy_options(env: &TestEnv, options: Value) {
    let doc = serde_json::json!({ "strategy_options": options });
    write_settings_text(env, "settings.json", &doc.to_string());
}

/// Writes `value` (pretty JSON) as `.entire/<file>` of the test repository.
pub fn write_settings(env: &TestEnv, file: &str, value: &Value) {
    write_settings_text(
        env,
        file,
        &serde_json::to_string_pretty(value).expect("settings JSON"),
    );
}

/// `git-entire-checkpoint <args>` run on a pseudo-terminal (util-linux `script`, `TERM=xterm`)
/// in the repository, with a pager that marks each line it receives, and `extra` environment;
/// what the terminal showed.
pub fn on_terminal(env: &TestEnv, args: &str, extra: &[(&str, &str)]) -> String {
    on_terminal_in(env, env.repo(), &checkpoint_bin(), args, extra)
}

/// [`on_terminal`] of the binary `program` in `dir`.
pub fn on_terminal_in(
    env: &TestEnv,
    dir: &std::path::Path,
    program: &std::path::Path,
    args: &str,
    extra: &[(&str, &str)],
) -> String {
    let command = format!("'{}' {args}", program.display());
    let mut cmd = env.bin_cmd(std::path::Path::new("script"));
    cmd.current_dir(dir)
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name())
        .env("GIT_PAGER", "sed 's/^/PAGED: /'")
        .env("TERM", "xterm")
        .write_stdin("");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_success(&out, &["script", args]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fixture transcript of `tests/fixtures/transcripts/` (small synthetic ones, in the shapes
/// real transcripts of each agent have).
pub fn transcript_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(name)
}

/// An OpenSSH server on `127.0.0.1` (a free port), run by the test as the test user: key
/// authentication only (the key [`SshServer::key`], made for it), its host key and
/// configuration in a directory of the test, `AcceptEnv GIT_PROTOCOL`. Killed when dropped.
pub struct SshServer {
    sshd: std::process::Child,
    port: u16,
    user: String,
    /// The private key the server accepts.
    pub key: PathBuf,
}

impl SshServer {
    /// Starts one with its files under `dir`; `None` (with a SKIPPED line) where no `sshd` is
    /// installed (tests/tools.sh installs it).
    pub fn start(dir: &Path) -> Option<Self> {
        let Some(sshd) = ["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
        else {
            skip("no sshd (openssh-server) installed");
            return None;
        };
        std::fs::create_dir_all(dir).expect("create the sshd dir");
        let keygen = |name: &str| {
            let key = dir.join(name);
            let out = StdCommand::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f", path_str(&key)])
                .output()
                .expect("run ssh-keygen");
            assert!(out.status.success(), "ssh-keygen: {}", text(&out.stderr));
            key
        };
        let (host_key, key) = (keygen("host_key"), keygen("client_key"));
        let authorized = dir.join("authorized_keys");
        std::fs::copy(key.with_extension("pub"), &authorized).expect("authorized_keys");
        let user = text(
            &StdCommand::new("id")
                .arg("-un")
                .output()
                .expect("id")
                .stdout,
        );
        // sshd run by root separates privileges in this empty directory (made by its service).
        if user.trim() == "root" {
            std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation dir");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1:{port}\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
                 AcceptEnv GIT_PROTOCOL\nSetEnv GIT_CONFIG_NOSYSTEM=1\nLogLevel ERROR\n",
                host_key.display(),
                authorized.display()
            ),
        )
        .expect("write sshd_config");
        let child = StdCommand::new(&sshd)
            .args(["-D", "-e", "-f", path_str(&config)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sshd");
        let server = SshServer {
            sshd: child,
            port,
            user: user.trim().to_owned(),
            key,
        };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < until, "sshd never listened");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(server)
    }

    /// Lets the key in only to run `command` (as gitolite's `authorized_keys` lines do; the
    /// client's command is in `SSH_ORIGINAL_COMMAND`). sshd reads the file at each connection.
    pub fn force_command(&self, command: &str) {
        let public = std::fs::read_to_string(self.key.with_extension("pub")).expect("public key");
        std::fs::write(
            self.key.with_file_name("authorized_keys"),
            format!("command=\"{command}\",no-pty {public}"),
        )
        .expect("authorized_keys");
    }

    /// `ssh://<user>@127.0.0.1:<port><path>` (an absolute path on this machine).
    pub fn url(&self, path: &Path) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            path.display()
        )
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }
}

/// Apache (Debian's apache2, prefork with mod_cgi) on `127.0.0.1` (a free port), started by the
/// test with its own configuration, logs and pid file under a directory of the test: the bare
/// repositories of one directory served by `git http-backend` (the profile's git) at
/// `http://127.0.0.1:<port>/git/<name>`, behind HTTP basic authentication (`htpasswd`). Stopped
/// (`apache2 -k stop`) when dropped.
pub struct Apache {
    apache: std::process::Child,
    config: PathBuf,
    port: u16,
    log: PathBuf,
}

/// Who may do what on an [`Apache`], and the largest request body it takes.
pub struct ApacheAccess<'a> {
    /// Each user and password that may read.
    pub users: &'a [(&'a str, &'a str)],
    /// The users who may also push (`Require user` on `git-receive-pack` only).
    pub pushers: &'a [&'a str],
    /// `LimitRequestBody`, in bytes: a larger request gets HTTP 413.
    pub body_limit: Option<usize>,
}

impl Apache {
    const APACHE2: &'static str = "/usr/sbin/apache2";
    const MODULES: &'static str = "/usr/lib/apache2/modules";

    /// Serves the bare repositories under `served` with its files under `dir`; `None` (with a
    /// SKIPPED line) where apache2 or apache2-utils is not installed (tests/tools.sh installs
    /// them). Run by root, Apache serves as Debian's `www-data`: `served` becomes that user's
    /// (create its repositories first) and each directory above it and `dir` searchable by others.
    pub fn start(env: &TestEnv, dir: &Path, served: &Path, access: &ApacheAccess) -> Option<Self> {
        if !Path::new(Self::APACHE2).exists() || !Path::new("/usr/bin/htpasswd").exists() {
            skip("no apache2 and apache2-utils installed");
            return None;
        }
        std::fs::create_dir_all(dir).expect("create the apache dir");
        let run = |cmd: &mut StdCommand, what: &str| {
            let out = cmd.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
            assert!(out.status.success(), "{what}: {}", text(&out.stderr));
            text(&out.stdout)
        };
        let htpasswd = dir.join("htpasswd");
        for (i, (user, password)) in access.users.iter().enumerate() {
            let create = if i == 0 { "-bcB" } else { "-bB" };
            run(
                StdCommand::new("htpasswd").args([create, path_str(&htpasswd), user, password]),
                "htpasswd",
            );
        }
        let root_user = run(StdCommand::new("id").arg("-u"), "id -u").trim() == "0";
        let user = if root_user {
            // Apache refuses to serve as root; its children (and so git) run as www-data.
            run(
                StdCommand::new("chown").args(["-R", "www-data:www-data", path_str(served)]),
                "chown",
            );
            // www-data must reach the served repositories and the password file: each
            // directory above them that others cannot search (the test's root, a private
            // TMPDIR made by `mktemp -d`) gets search permission only, never listing.
            for above in served.ancestors().chain(dir.ancestors()) {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(above).expect("stat").permissions().mode();
                if mode & 0o001 == 0 {
                    std::fs::set_permissions(above, PermissionsExt::from_mode(mode | 0o001))
                        .expect("let others search the directory");
                }
            }
            "User www-data\nGroup www-data\n"
        } else {
            ""
        };
        let exec_path = run(
            env.program_in("git", dir).arg("--exec-path"),
            "git --exec-path",
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let modules = [
            "mpm_prefork",
            "cgi",
            "alias",
            "env",
            "auth_basic",
            "authn_core",
            "authn_file",
            "authz_core",
            "authz_user",
        ]
        .map(|m| format!("LoadModule {m}_module {}/mod_{m}.so\n", Self::MODULES))
        .concat();
        let limit = access
            .body_limit
            .map(|n| format!("    LimitRequestBody {n}\n"))
            .unwrap_or_default();
        let (d, log) = (dir.display(), dir.join("access.log"));
        let config = dir.join("httpd.conf");
        std::fs::write(
            &config,
            format!(
                "ServerRoot {d}\nServerName 127.0.0.1\nListen 127.0.0.1:{port}\n\
                 PidFile {d}/httpd.pid\nDefaultRuntimeDir {d}\nDocumentRoot {d}\n\
                 ErrorLog {d}/error.log\nLogFormat \"%r %>s\" git\nCustomLog {} git\n\
                 {user}{modules}StartServers 2\n\
                 SetEnv GIT_PROJECT_ROOT {}\nSetEnv GIT_HTTP_EXPORT_ALL 1\n\
                 SetEnv GIT_CONFIG_NOSYSTEM 1\nSetEnv GIT_CONFIG_GLOBAL /dev/null\n\
                 ScriptAlias /git/ {}/git-http-backend/\n\
                 <Location /git/>\n    AuthType Basic\n    AuthName git\n    AuthUserFile {}\n\
                 {limit}    <If \"%{{QUERY_STRING}} =~ /service=git-receive-pack/ \
                 || %{{REQUEST_URI}} =~ m#/git-receive-pack$#\">\n        Require user {}\n    \
                 </If>\n    <Else>\n        Require valid-user\n    </Else>\n</Location>\n",
                log.display(),
                served.display(),
                exec_path.trim(),
                htpasswd.display(),
                access.pushers.join(" "),
            ),
        )
        .expect("write httpd.conf");
        // In a process group of its own: stopping, Apache signals its whole group.
        let apache = std::os::unix::process::CommandExt::process_group(
            env.program_in(Self::APACHE2, dir)
                .args(["-f", path_str(&config), "-DFOREGROUND"]),
            0,
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start apache2");
        let mut server = Apache {
            apache,
            config,
            port,
            log,
        };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = server.apache.try_wait().expect("apache2's status");
            assert!(
                exited.is_none() && std::time::Instant::now() < until,
                "apache2 never listened ({exited:?}):\n{}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(server)
    }

    /// `http://127.0.0.1:<port>/git/<name>`.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/git/{name}", self.port)
    }

    /// How many pushes (POSTs to git-receive-pack, whatever their answer) it was sent so far.
    pub fn pushes(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("POST ") && l.contains("/git-receive-pack "))
            .count()
    }
}

impl Drop for Apache {
    fn drop(&mut self) {
        // A graceful stop ends its children too, which killing the parent would leave behind.
        let _ = StdCommand::new(Self::APACHE2)
            .args(["-f", path_str(&self.config), "-k", "stop"])
            .output();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while matches!(self.apache.try_wait(), Ok(None)) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.apache.kill();
        let _ = self.apache.wait();
    }
}
