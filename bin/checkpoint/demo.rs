//! `git entire-checkpoint demo`: the whole story, end to end, in a scratch directory.
//!
//! Every git command runs with its own `HOME` and no system config, so the demo can never touch
//! the user's configuration or hooks, and with this binary's directory first on `PATH` so the
//! installed hooks find it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::context::Context;
use crate::common::error::Result;

struct Demo {
    root: PathBuf,
    path: std::ffi::OsString,
}

impl Demo {
    fn cmd(&self, program: &str, dir: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.args(args)
            .current_dir(dir)
            .env("PATH", &self.path)
            .env("HOME", &self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "Entire Demo")
            .env("GIT_AUTHOR_EMAIL", "demo@example.invalid")
            .env("GIT_COMMITTER_NAME", "Entire Demo")
            .env("GIT_COMMITTER_EMAIL", "demo@example.invalid")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("ENTIRE_CHECKPOINTS_PRIMARY")
            .env_remove("ENTIRE_CHECKPOINTS_MIRRORS");
        c
    }

    /// Runs a step, printing it (quoted for a POSIX shell, so it can be pasted; with the
    /// directory it runs in) and its output; fails the demo on a non-zero exit.
    fn step(&self, dir: &Path, args: &[&str]) -> Result<String> {
        let quoted = |s: &str| {
            shlex::try_quote(s)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| s.to_owned())
        };
        let line: Vec<String> = args.iter().map(|a| quoted(a)).collect();
        println!(
            "$ (cd {} && git {})",
            quoted(&dir.to_string_lossy()),
            line.join(" ")
        );
        let out = self
            .cmd("git", dir, args)
            .output()
            .with_context(|| format!("run git {}", args.join(" ")))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        for line in stdout
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
        {
            println!("    {line}");
        }
        if !out.status.success() {
            return Err(format!("demo step `git {}` failed", args.join(" ")).into());
        }
        Ok(stdout)
    }
}

/// Runs the demo.
pub fn run(keep: bool) -> Result<()> {
    let exe = std::env::current_exe().context("find this binary")?;
    let bin_dir = exe
        .parent()
        .context("find this binary's directory")?
        .to_path_buf();
    let mut paths = vec![bin_dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let root = std::env::temp_dir().join(format!("entire-demo-{:016x}", rand::random::<u64>()));
    std::fs::create_dir_all(&root).with_context(|| format!("create {}", root.display()))?;
    let demo = Demo {
        root: root.clone(),
        path: std::env::join_paths(paths).map_err(|e| e.to_string())?,
    };
    let result = story(&demo);
    if keep {
        println!("scratch directory kept: {}", root.display());
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
    result
}

fn story(d: &Demo) -> Result<()> {
    let root = &d.root;
    let repo = root.join("repo");
    let clone = root.join("clone");
    println!("# A bare remote and a repository that uses it");
    d.step(root, &["init", "-q", "--bare", "-b", "main", "remote.git"])?;
    d.step(root, &["init", "-q", "-b", "main", "repo"])?;
    std::fs::create_dir_all(repo.join(".entire"))?;
    std::fs::write(
        repo.join(".entire/settings.json"),
        "{\n  \"checkpoints\": { \"primary\": { \"type\": \"git-refs\" } }\n}\n",
    )?;
    std::fs::write(repo.join("README.md"), "# demo\n")?;
    d.step(&repo, &["add", "README.md", ".entire/settings.json"])?;
    d.step(&repo, &["commit", "-q", "-m", "Start the project"])?;
    d.step(&repo, &["remote", "add", "origin", "../remote.git"])?;
    d.step(&repo, &["push", "-q", "origin", "main"])?;

    println!("# Install the hooks");
    d.step(&repo, &["entire-checkpoint", "hooks", "install"])?;

    println!("# An agent session works and records itself");
    std::fs::write(repo.join("hello.txt"), "hello\n")?;
    let transcript = root.join("session.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"user\",\"text\":\"add hello.txt\"}\n{\"type\":\"assistant\",\"text\":\"done\"}\n",
    )?;
    let t = transcript.display().to_string();
    d.step(
        &repo,
        &[
            "entire-checkpoint",
            "session",
            "record",
            "--session",
            "demo-session",
            "--transcript",
            &t,
            "--prompt",
            "add hello.txt",
            "--files-touched",
            "hello.txt",
            "--agent",
            "Demo Agent",
        ],
    )?;

    println!("# The developer commits: the hooks link and write the checkpoint");
    d.step(&repo, &["add", "hello.txt"])?;
    d.step(&repo, &["commit", "-q", "-m", "Add hello.txt"])?;
    d.step(&repo, &["log", "-1", "--format=%B"])?;

    println!("# ...and pushes: the checkpoint ref travels with the branch");
    d.step(&repo, &["push", "-q", "origin", "main"])?;

    println!("# A teammate clones and reads the checkpoint of HEAD, fetched on demand");
    d.step(root, &["clone", "-q", "remote.git", "clone"])?;
    let shown = d.step(&clone, &["entire-checkpoint", "show", "HEAD"])?;
    if !shown.contains("demo-session") {
        return Err("the clone did not show the demo session".to_owned().into());
    }
    println!("# Done: the checkpoint was recorded, pushed and read back.");
    Ok(())
}
