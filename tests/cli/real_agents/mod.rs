//! The real agents, offline (docs/agents.md, "How it is tested"): each agent, installed from npm
//! by `tests/tools.sh` at the version `tests/agents.versions` pins, runs whole sessions here
//! against a scripted model endpoint on 127.0.0.1 (`tests/model_endpoint/`, one module per wire
//! format), so that its own hooks fire with their real payloads, it writes its real transcript,
//! and it runs `git commit` itself before its turn ends. That, not a payload typed from
//! documentation, proves capture. One file per agent.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};

use serde_json::Value;

use crate::env::{tools_dir, TestEnv};

mod claude_code;
mod codex;
mod copilot;
mod droid;
mod gemini;
mod opencode;
mod session;

/// The scripted endpoint, killed when dropped.
pub struct Endpoint {
    child: Child,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    log: PathBuf,
}

impl Endpoint {
    /// Starts the endpoint with `script` (see `tests/model_endpoint/__main__.py`).
    pub fn start(env: &TestEnv, script: &Value) -> Endpoint {
        let file = env.input_file("model-script.json", script.to_string().as_bytes());
        let log = env.root().join("model-requests.jsonl");
        let mut child = StdCommand::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/model_endpoint"))
            .args([&file, &log])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run python3 tests/model_endpoint");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the endpoint prints its port");
        Endpoint { child, port, log }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request the endpoint received, one JSON line each (`path`, `body`).
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where `tests/tools.sh` installs the npm package `package` at the version
/// `tests/agents.versions` pins for it (its `node_modules` is inside), if it is installed.
pub fn agent_package(package: &str) -> Option<PathBuf> {
    let pins = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents.versions"),
    )
    .expect("read tests/agents.versions");
    let version = pins
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .find(|(p, _)| *p == package)
        .map(|(_, v)| v.trim())
        .unwrap_or_else(|| panic!("tests/agents.versions pins no {package}"));
    let prefix = tools_dir()
        .join("agents")
        .join(format!("{}@{version}", package.replace('/', "+")));
    prefix.join("node_modules").is_dir().then_some(prefix)
}
