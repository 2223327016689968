//! Real servers on `127.0.0.1`, started by the tests: an OpenSSH server run as the test user
//! (key authentication), gitolite behind it, Apache (apache2) serving `git http-backend` with
//! basic authentication, and the tests' own smart HTTP server (`git http-backend` as CGI). What the
//! user configured for ssh carries our pushes and reads; a hook never asks for credentials nor
//! holds the user's push; no file of ours keeps a password (docs/reliability.md, "Repositories and remotes").

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::env::{
    assert_code, checkpoint_ref, path_str, rev_in, skip, stderr, stdout, write_executable,
    write_settings, Apache, ApacheAccess, HttpBackend, SshServer, Store, TestEnv,
};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2};

/// An ssh command of the user's own (a per-repository deploy key): a script that logs each
/// call to `<root>/ssh.log` and runs `ssh` with the server's key. Returns the script.
fn deploy_key_ssh(env: &TestEnv, sshd: &SshServer) -> PathBuf {
    let script = env.root().join("bin/deploy-ssh");
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\necho \"$*\" >>'{}'\nexec ssh -i '{}' -o IdentitiesOnly=yes \
             -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \"$@\"\n",
            ssh_log(env).display(),
            sshd.key.display()
        ),
    );
    script
}

/// What [`deploy_key_ssh`] logged: one line per ssh connection.
fn ssh_log(env: &TestEnv) -> PathBuf {
    env.root().join("ssh.log")
}

/// How many connections the user's ssh command made that ran `service` on the server.
fn ssh_calls(env: &TestEnv, service: &str) -> usize {
    std::fs::read_to_string(ssh_log(env))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(service))
        .count()
}

/// An sshd of the test and a bare repository `origin` on it, added as the remote `origin`; the
/// server, the repository and its URL. `None` where no sshd is installed.
fn ssh_origin(env: &TestEnv) -> Option<(SshServer, PathBuf, String)> {
    let sshd = SshServer::start(&env.root().join("sshd"))?;
    let origin = env.new_bare("origin");
    let url = sshd.url(&origin);
    env.git(&["remote", "add", "origin", &url]);
    Some((sshd, origin, url))
}

/// Asserts that the server's repository `origin` holds the checkpoints `ids` at our tips;
/// `context` is shown when it does not.
fn assert_landed(env: &TestEnv, origin: &Path, ids: &[&str], context: &str) {
    for id in ids {
        assert_eq!(
            rev_in(env, origin, &checkpoint_ref(id)),
            env.rev(&checkpoint_ref(id)),
            "{id} is on the server:\n{context}"
        );
    }
}

/// Installs our hooks in `dir`.
fn install_hooks(env: &TestEnv, dir: &Path) {
    let out = env.run_in(Store::Refs, dir, &["hooks", "install"]);
    assert_code(&out, 0, "hooks install");
}

/// A `core.sshCommand` holding the key (a deploy key) carries every checkpoint push, on-demand
/// read and `git entire-fetch`: without it the server lets nobody in, so none of them could
/// work without the user's command.
#[test]
fn core_ssh_command_carries_every_checkpoint_push_and_read() {
    let env = TestEnv::new();
    let Some((sshd, origin, url)) = ssh_origin(&env) else {
        return;
    };
    let ssh = deploy_key_ssh(&env, &sshd);
    env.git(&["config", "core.sshCommand", path_str(&ssh)]);
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);

    // The user's push carries both checkpoints, over the user's ssh command.
    let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    assert_landed(&env, &origin, &[HEX_ID, HEX_ID_2], &err);
    assert!(ssh_calls(&env, "git-receive-pack") >= 2, "{err}");
    assert_eq!(env.queued(), 0, "{err}");

    // A clone that keeps the same setting reads one on demand and fetches the other.
    let clone = env.root().join("clone");
    let config = format!("core.sshCommand={}", ssh.display());
    env.git_in(
        env.root(),
        &["clone", "-q", "-c", &config, &url, path_str(&clone)],
    );
    let reads = ssh_calls(&env, "git-upload-pack");
    let out = env.run_in(Store::Refs, &clone, &["show", HEX_ID, "--json"]);
    let err = assert_code(&out, 0, "show reads on demand over the user's ssh command");
    assert!(ssh_calls(&env, "git-upload-pack") > reads, "{err}");
    assert_eq!(
        rev_in(&env, &clone, &checkpoint_ref(HEX_ID)),
        env.rev(&checkpoint_ref(HEX_ID))
    );

    let reads = ssh_calls(&env, "git-upload-pack");
    let out = env.fetch_in(&clone, &["origin", HEX_ID_2]);
    let err = assert_code(&out, 0, "git entire-fetch over the user's ssh command");
    assert!(ssh_calls(&env, "git-upload-pack") > reads, "{err}");
    assert_eq!(
        rev_in(&env, &clone, &checkpoint_ref(HEX_ID_2)),
        env.rev(&checkpoint_ref(HEX_ID_2))
    );
}

/// The user and password of the servers behind basic authentication.
const USER: &str = "alice";
const PASSWORD: &str = "s3cr3t-pw";

/// A bare repository `<root>/served/<name>.git`, served over smart HTTP behind basic
/// authentication ([`USER`], [`PASSWORD`]); the server and the repository.
fn served_with_auth(env: &TestEnv, name: &str) -> (HttpBackend, PathBuf) {
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let bare = served.join(format!("{name}.git"));
    env.git_in(env.root(), &["init", "-q", "--bare", path_str(&bare)]);
    (
        HttpBackend::start_with_basic_auth(env, &served, USER, PASSWORD),
        bare,
    )
}

/// A checkpoint remote behind basic authentication with no stored credentials, and an askpass
/// program (as IDEs and GUI clients set, in both variables) that answers slowly: the hook never
/// runs it, so the user's push is not held; the warning says how to store credentials. An
/// interactive `git entire-checkpoint push` may ask, and delivers.
#[test]
fn a_hook_never_asks_for_credentials_nor_holds_the_push() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let (server, checkpoints) = served_with_auth(&env, "checkpoints");
    write_settings(
        &env,
        "settings.local.json",
        &serde_json::json!({"strategy_options": {"checkpoint_remote": {
            "url": server.url("checkpoints.git")}}}),
    );
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let asked = env.root().join("askpass.log");
    let askpass = env.root().join("bin/askpass");
    write_executable(
        &askpass,
        &format!(
            "#!/bin/sh\necho \"$1\" >>'{}'\nsleep \"${{ASKPASS_DELAY:-0}}\"\n\
             case $1 in Username*) echo {USER} ;; *) echo {PASSWORD} ;; esac\n",
            asked.display()
        ),
    );

    let start = Instant::now();
    let out = env
        .git_hooked_command(Some(Store::Refs), env.repo(), &["push", "origin", "main"])
        .env("GIT_ASKPASS", &askpass)
        .env("SSH_ASKPASS", &askpass)
        .env("ASKPASS_DELAY", "20")
        .output()
        .expect("run git push");
    let took = start.elapsed();
    let err = assert_code(&out, 0, "the user's push");
    assert!(!asked.exists(), "the hook ran the askpass program:\n{err}");
    assert!(
        took < Duration::from_secs(15),
        "the push was held {took:?}:\n{err}"
    );
    assert!(err.contains("credential helper"), "{err}");
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert!(env.checkpoint_refs_in(&checkpoints).is_empty());
    assert_eq!(env.queued(), 1, "the checkpoint stays queued: {err}");

    let out = env
        .cmd_as(Store::Refs)
        .current_dir(env.repo())
        .env("GIT_ASKPASS", &askpass)
        .args(["push"])
        .output()
        .expect("run git entire-checkpoint push");
    let err = assert_code(&out, 0, "an interactive push");
    assert!(asked.exists(), "an interactive push may ask:\n{err}");
    assert_eq!(
        rev_in(&env, &checkpoints, &checkpoint_ref(HEX_ID)),
        env.rev(&checkpoint_ref(HEX_ID)),
        "{err}"
    );
    assert_eq!(env.queued(), 0, "{err}");
}

/// Every file of ours, under `.git/entire*`, with its text.
fn our_files(env: &TestEnv) -> Vec<(PathBuf, String)> {
    fn walk(path: &Path, out: &mut Vec<(PathBuf, String)>) {
        match std::fs::read_dir(path) {
            Ok(entries) => entries.flatten().for_each(|e| walk(&e.path(), out)),
            Err(_) => out.push((
                path.to_owned(),
                String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned(),
            )),
        }
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(env.common_dir()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("entire") {
            walk(&e.path(), &mut out);
        }
    }
    out
}

/// A remote URL with a password in it, pushed to through the hook (which then has nothing left
/// to do, the case it remembers): no file of ours keeps the password.
#[test]
fn no_file_of_ours_keeps_a_password_from_a_remote_url() {
    let env = TestEnv::new();
    let (server, origin) = served_with_auth(&env, "origin");
    let url =
        server
            .url("origin.git")
            .replacen("http://", &format!("http://{USER}:{PASSWORD}@"), 1);
    env.git(&["remote", "add", "origin", &url]);
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    for round in ["first", "second"] {
        let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
        assert_code(&out, 0, &format!("the {round} push"));
        assert_password_kept_nowhere(&env, &out, PASSWORD);
    }
    assert_eq!(
        rev_in(&env, &origin, &checkpoint_ref(HEX_ID)),
        env.rev(&checkpoint_ref(HEX_ID))
    );
    assert!(!our_files(&env).is_empty());
}

/// Asserts that neither `out` nor any file of ours holds `password`.
fn assert_password_kept_nowhere(env: &TestEnv, out: &std::process::Output, password: &str) {
    let said = format!("{}{}", stdout(out), stderr(out));
    assert!(
        !said.contains(password),
        "the password was printed:\n{said}"
    );
    for (path, text) in our_files(env) {
        assert!(
            !text.contains(password),
            "{} keeps the password",
            path.display()
        );
    }
}

/// A read over ssh that the server refuses (no key it accepts): `git entire-fetch --all` names
/// what it fetched (the checkpoint refs, not a ref named by their prefix) and ssh's own reason,
/// not only git's "Could not read from remote repository".
#[test]
fn a_refused_read_names_the_checkpoint_refs_and_says_what_ssh_said() {
    let env = TestEnv::new();
    let Some(_server) = ssh_origin(&env) else {
        return;
    };
    // Trusts the server's host key, but offers no key of the server's.
    let ssh = env.root().join("bin/no-key-ssh");
    write_executable(
        &ssh,
        "#!/bin/sh\nexec ssh -o IdentitiesOnly=yes -o IdentityFile=none \
         -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \"$@\"\n",
    );
    env.git(&["config", "core.sshCommand", path_str(&ssh)]);
    let out = env.fetch_in(env.repo(), &["--all"]);
    let err = assert_code(&out, 1, "git entire-fetch --all, refused");
    assert!(
        err.contains("the checkpoint refs (refs/entire/checkpoints/*)"),
        "{err}"
    );
    assert!(err.contains("Permission denied (publickey"), "{err}");
    assert!(err.contains("unauthenticated"), "{err}");

    // A push that ssh refuses the same way is said as such, not as an unreachable server.
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    let err = assert_code(&out, 1, "git entire-checkpoint push, refused by ssh");
    assert!(err.contains("origin did not let us in"), "{err}");
    assert!(!err.contains("couldn't reach"), "{err}");
    assert_eq!(env.queued(), 1, "{err}");
}

/// A reader whose committed settings keep checkpoints at a checkpoint remote it has not
/// approved: a commit's checkpoint is not on `origin`, and the hint says to approve the
/// checkpoint remote with `trust`, not that the author may not have pushed it; once approved,
/// the read finds it there.
#[test]
fn a_read_while_the_checkpoint_remote_awaits_approval_says_to_approve_it() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let checkpoints = env.new_bare("checkpoints");
    write_settings(
        &env,
        "settings.json",
        &serde_json::json!({"strategy_options": {"checkpoint_remote": {
            "url": path_str(&checkpoints)}}}),
    );
    env.trust_in(env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    assert_code(&out, 0, "the author's push to the checkpoint remote");
    env.git(&["add", ".entire"]);
    let message = format!("work\n\nEntire-Checkpoint: {HEX_ID}");
    env.git(&["commit", "-q", "-m", &message]);
    env.git(&["push", "-q", "origin", "main"]);

    let mate = env.clone_of(&origin, "mate", &[]);
    let out = env.run_in(Store::Refs, &mate, &["show", "HEAD"]);
    let err = assert_code(&out, 3, "show while the checkpoint remote awaits approval");
    assert!(
        err.lines().any(|l| l.starts_with("hint: ")
            && l.contains("approve it with `git entire-checkpoint trust`")),
        "{err}"
    );
    assert!(!err.contains("may not have pushed"), "{err}");

    env.trust_in(&mate);
    let out = env.run_in(Store::Refs, &mate, &["show", "HEAD"]);
    assert_code(&out, 0, "show once the checkpoint remote is approved");
}

/// A server whose `pre-receive` hook refuses checkpoint refs with a message: the user's push
/// goes through, the checkpoint stays queued, and the warning shows the server's words once.
#[test]
fn a_refusal_shows_the_servers_own_words_once() {
    let env = TestEnv::new();
    let origin = served_bare(&env, "origin");
    pre_receive(&origin, true);
    let server = HttpBackend::start(&env, &env.root().join("served"));
    env.git(&["remote", "add", "origin", &server.url("origin.git")]);
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    let err = assert_code(&out, 0, "the user's push");
    assert_eq!(err.matches(POLICY).count(), 1, "{err}");
    assert_eq!(env.queued(), 1, "{err}");
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert_eq!(rev_in(&env, &origin, &checkpoint_ref(HEX_ID)), None);
}

/// A bare repository `<root>/served/<name>.git` that takes pushes over smart HTTP.
fn served_bare(env: &TestEnv, name: &str) -> PathBuf {
    let served = env.root().join("served");
    let bare = served.join(format!("{name}.git"));
    env.git_in(
        env.root(),
        &["init", "-q", "--bare", "-b", "main", path_str(&bare)],
    );
    env.git_in(&bare, &["config", "http.receivepack", "true"]);
    bare
}

/// What the `pre-receive` hook of [`pre_receive`] says when it refuses.
const POLICY: &str = "policy: checkpoints are not kept here, ask #infra";

/// Gives the server's repository `bare` a `pre-receive` hook that logs each push it sees to
/// `<bare>/pushes` and, with `refuse`, refuses every push holding a ref under `refs/entire/`
/// with [`POLICY`].
fn pre_receive(bare: &Path, refuse: bool) {
    let refusal = format!(
        "while read -r old new name; do\n  case $name in refs/entire/*) echo '{POLICY}' >&2; \
         exit 1 ;; esac\ndone\n"
    );
    write_executable(
        &bare.join("hooks/pre-receive"),
        &format!(
            "#!/bin/sh\necho push >>pushes\n{}exit 0\n",
            if refuse { refusal.as_str() } else { "" }
        ),
    );
}

/// How many pushes the hook of [`pre_receive`] saw.
fn pushes_seen(bare: &Path) -> usize {
    std::fs::read_to_string(bare.join("pushes"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// A transcript of about `bytes` bytes that compresses poorly (digits from a fixed
/// pseudo-random sequence), so that its checkpoint's pack is about that large.
fn bulky_transcript(bytes: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(bytes + 200);
    while out.len() < bytes {
        let digits: String = (0..40)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'0' + (state % 10) as u8)
            })
            .collect();
        out.extend_from_slice(
            format!("{{\"type\":\"user\",\"message\":\"count {digits}\"}}\n").as_bytes(),
        );
    }
    out
}

/// The shapes of a server's limit on a push's size: git's own (`receive.maxInputSize`, the
/// push refused as an unpacker error), and a web server's limit on a request's body (HTTP 413:
/// git's push of the batch fails whole, as a transport error), imitated by the tests' server
/// and Apache's own; what the warning names of each.
const SIZE_LIMITS: [(&str, &str); 3] = [
    ("receive.maxInputSize", "receive.maxInputSize"),
    ("body limit", "LimitRequestBody"),
    ("apache", "LimitRequestBody"),
];

/// A server that counts the pushes it was sent.
trait CountsPushes {
    fn pushes(&self) -> usize;
}

impl CountsPushes for HttpBackend {
    fn pushes(&self) -> usize {
        HttpBackend::pushes(self)
    }
}

impl CountsPushes for Apache {
    fn pushes(&self) -> usize {
        Apache::pushes(self)
    }
}

/// A checkpoint larger than the HTTP server accepts blocks no other: the batch is split, so
/// the small ones land; the big one stays queued with the server's size limit named, and the
/// next push of the hook does not send it again; `git entire-checkpoint push` tries it again
/// and fails.
#[test]
fn an_oversized_checkpoint_blocks_no_other_over_http() {
    for (shape, named) in SIZE_LIMITS {
        let env = TestEnv::new();
        let served = env.root().join("served");
        let (origin, server, url): (PathBuf, Box<dyn CountsPushes>, String) = match shape {
            "apache" => {
                let Some((apache, origin)) = apache_served(&env, "origin", Some(60_000)) else {
                    continue;
                };
                let url = apache.url("origin.git");
                store_credentials(&env, &url, USER, PASSWORD);
                (origin, Box::new(apache), url)
            }
            "body limit" => {
                let origin = served_bare(&env, "origin");
                let server = HttpBackend::start_with_body_limit(&env, &served, 60_000);
                let url = server.url("origin.git");
                (origin, Box::new(server), url)
            }
            _ => {
                let origin = served_bare(&env, "origin");
                env.git_in(&origin, &["config", "receive.maxInputSize", "60000"]);
                let server = HttpBackend::start(&env, &served);
                let url = server.url("origin.git");
                (origin, Box::new(server), url)
            }
        };
        env.git(&["remote", "add", "origin", &url]);
        install_hooks(&env, env.repo());
        const BIG: &str = "0123456789ab";
        write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
        write_std(&env, Store::Refs, BIG, "big", &bulky_transcript(400_000));
        write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);

        let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
        assert_landed(
            &env,
            &origin,
            &[HEX_ID, HEX_ID_2],
            &format!("{shape}: {err}"),
        );
        assert_eq!(rev_in(&env, &origin, &checkpoint_ref(BIG)), None, "{err}");
        assert_eq!(env.queued(), 1, "{shape}: the big one stays queued:\n{err}");
        assert_eq!(err.matches(named).count(), 1, "{shape}: {err}");

        // The next push of the hook does not send it again: only the user's push reaches
        // the server.
        let pushes = server.pushes();
        env.git(&["commit", "-q", "--allow-empty", "-m", "more"]);
        let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
        assert_eq!(server.pushes(), pushes + 1, "{shape}: {err}");
        assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
        assert_eq!(env.queued(), 1, "{shape}: {err}");

        // Asked explicitly, it is tried again, and the server's limit is said again.
        let out = env.run_in(Store::Refs, env.repo(), &["push"]);
        let err = assert_code(&out, 1, "git entire-checkpoint push, refused");
        assert!(err.contains(named), "{shape}: {err}");
        assert_eq!(env.queued(), 1, "{shape}: {err}");
        assert_eq!(
            env.checkpoint_tips_in(&origin).len(),
            2,
            "{shape}: nothing lost:\n{err}"
        );
    }
}

/// What the first push to a server refusing `refs/entire/*` says to do, once.
const ADVICE: &str = "ask its admin to allow refs/entire/*";

/// A server whose `pre-receive` hook refuses `refs/entire/*`, over HTTP and over ssh: the
/// first push says the server's words and what to do once; later pushes of the hook send it
/// no checkpoint (the server sees only the user's pushes) and repeat neither; `doctor` says
/// the same and proposes no push; `git entire-checkpoint push` sends them again and exits 1
/// while they are refused, and delivers every one once the server takes them.
#[test]
fn a_server_refusing_checkpoint_refs_costs_one_push() {
    for shape in ["http", "ssh"] {
        let env = TestEnv::new();
        let (origin, _server): (PathBuf, Box<dyn std::any::Any>) = if shape == "http" {
            let origin = served_bare(&env, "origin");
            let server = HttpBackend::start(&env, &env.root().join("served"));
            env.git(&["remote", "add", "origin", &server.url("origin.git")]);
            (origin, Box::new(server))
        } else {
            let Some((sshd, origin, _)) = ssh_origin(&env) else {
                continue;
            };
            let ssh = deploy_key_ssh(&env, &sshd);
            env.git(&["config", "core.sshCommand", path_str(&ssh)]);
            (origin, Box::new(sshd))
        };
        pre_receive(&origin, true);
        install_hooks(&env, env.repo());
        write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
        write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);

        let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
        assert_eq!(err.matches(POLICY).count(), 1, "{shape}: {err}");
        assert_eq!(err.matches(ADVICE).count(), 1, "{shape}: {err}");
        assert!(err.contains("checkpoint_remote"), "{shape}: {err}");
        assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
        assert_eq!(env.queued(), 2, "{shape}: {err}");

        // The next pushes send no checkpoint, and say neither the server's words nor the
        // advice again.
        for (round, id) in [("second", "b0b0b0b0b0b1"), ("third", "b0b0b0b0b0b2")] {
            write_std(&env, Store::Refs, id, round, TRANSCRIPT);
            env.git(&["commit", "-q", "--allow-empty", "-m", round]);
            let seen = pushes_seen(&origin);
            let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
            assert_eq!(
                pushes_seen(&origin),
                seen + 1,
                "{shape}: only the user's push:\n{err}"
            );
            assert!(
                !err.contains(POLICY) && !err.contains(ADVICE),
                "{shape}: {err}"
            );
            assert!(!err.contains("warning:"), "{shape}: {err}");
        }
        assert_eq!(env.queued(), 4, "{shape}");
        assert!(env.checkpoint_refs_in(&origin).is_empty());

        // doctor says why and what to do, and proposes no push, also for a commit that links
        // a checkpoint the server lacks.
        let message = format!("work\n\nEntire-Checkpoint: {HEX_ID}");
        env.git(&["commit", "-q", "--allow-empty", "-m", &message]);
        let out = env.run_in(Store::Refs, env.repo(), &["doctor"]);
        let doctor = format!("{}{}", crate::env::stdout(&out), stderr(&out));
        assert!(doctor.contains("push-refused"), "{shape}: {doctor}");
        assert!(doctor.contains("checkpoint-unpushed"), "{shape}: {doctor}");
        assert!(doctor.contains(POLICY), "{shape}: {doctor}");
        assert_eq!(doctor.matches(ADVICE).count(), 2, "{shape}: {doctor}");
        assert!(
            !doctor.contains("repair: git entire-checkpoint push"),
            "{shape}: {doctor}"
        );

        // Asked explicitly, they are sent again: still refused, exit 1.
        let seen = pushes_seen(&origin);
        let out = env.run_in(Store::Refs, env.repo(), &["push", "--json"]);
        let err = assert_code(&out, 1, "git entire-checkpoint push, refused");
        assert!(pushes_seen(&origin) > seen, "{shape}: {err}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("push --json");
        assert_eq!(
            doc["rejected"].as_array().map(Vec::len),
            Some(4),
            "{shape}: {doc}"
        );

        // The server takes them now: an explicit push delivers every one, once.
        std::fs::remove_file(origin.join("hooks/pre-receive")).unwrap();
        let out = env.run_in(Store::Refs, env.repo(), &["push"]);
        let err = assert_code(&out, 0, "git entire-checkpoint push, taken");
        assert_eq!(
            env.checkpoint_tips_in(&origin),
            env.checkpoint_tips(),
            "{shape}: {err}"
        );
        assert_eq!(env.queued(), 0, "{shape}: {err}");
    }
}

/// A backlog on a slow server (its `pre-receive` hook takes seconds over checkpoint refs, as
/// gitolite's per-ref checks do over many): the hook's budget runs out, the user's push goes
/// through, and the warning says that `git entire-checkpoint push` drains the backlog now,
/// which it does: every checkpoint on the server, once, none left queued.
#[test]
fn a_backlog_on_a_slow_server_names_the_push_that_drains_it() {
    let env = TestEnv::new();
    let origin = served_bare(&env, "origin");
    write_executable(
        &origin.join("hooks/pre-receive"),
        "#!/bin/sh\nif grep -q refs/entire/; then sleep 4; fi\nexit 0\n",
    );
    let server = HttpBackend::start(&env, &env.root().join("served"));
    env.git(&["remote", "add", "origin", &server.url("origin.git")]);
    install_hooks(&env, env.repo());
    let ids = [HEX_ID, HEX_ID_2, "b0b0b0b0b0b1"];
    for id in ids {
        write_std(&env, Store::Refs, id, id, TRANSCRIPT);
    }

    let out = env
        .git_hooked_command(Some(Store::Refs), env.repo(), &["push", "origin", "main"])
        .env("ENTIRE_HOOK_BUDGET_SECONDS", "1")
        .output()
        .expect("run git push");
    let err = assert_code(&out, 0, "the user's push");
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning:") && l.contains("`git entire-checkpoint push` drains")),
        "{err}"
    );
    assert_eq!(env.queued(), 3, "{err}");

    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    let err = assert_code(&out, 0, "git entire-checkpoint push drains the backlog");
    assert_landed(&env, &origin, &ids, &err);
    assert_eq!(
        env.checkpoint_tips_in(&origin),
        env.checkpoint_tips(),
        "{err}"
    );
    assert_eq!(env.queued(), 0, "{err}");
}

/// A server that runs a hook per ref (gitolite's update hook does) and a backlog longer than
/// the hook's budget at its rate: the flush sizes each `git push` by the rate the ones before
/// went at, so every push ends within the budget and what landed is recorded (one push of the
/// whole backlog was killed at the deadline half delivered, and nothing was recorded).
#[test]
fn batches_to_a_slow_server_fit_the_budget_at_its_rate() {
    let env = TestEnv::new();
    let origin = served_bare(&env, "origin");
    write_executable(
        &origin.join("hooks/update"),
        "#!/bin/sh\ncase $1 in refs/entire/*) sleep 0.2 ;; esac\nexit 0\n",
    );
    let server = HttpBackend::start(&env, &env.root().join("served"));
    env.git(&["remote", "add", "origin", &server.url("origin.git")]);
    env.git(&["push", "-q", "origin", "main"]);
    install_hooks(&env, env.repo());
    let ids: Vec<String> = (0..48)
        .map(|i| format!("{:012x}", 0xc0ffee000000u64 + i))
        .collect();
    for id in &ids {
        write_std(&env, Store::Refs, id, id, TRANSCRIPT);
    }

    let out = env
        .git_hooked_command(Some(Store::Refs), env.repo(), &["push", "origin", "main"])
        // 48 refs at 0.2 s each do not fit; the first batch (16) leaves half the budget spare
        // for a loaded machine.
        .env("ENTIRE_HOOK_BUDGET_SECONDS", "8")
        .output()
        .expect("run git push");
    let err = assert_code(&out, 0, "the user's push");
    let queued = env.queued();
    assert!(queued < 48, "nothing recorded as delivered: {err}");
    // What is not queued any more is on the server at our tip, and nothing else was sent.
    let ours = env.checkpoint_tips();
    let theirs = env.checkpoint_tips_in(&origin);
    assert_eq!(theirs.len() as u64, 48 - queued, "{err}");
    for (name, tip) in &theirs {
        assert_eq!(ours.get(name), Some(tip), "{name}: {err}");
    }
    assert!(
        !err.contains("timed out"),
        "a push was killed at the deadline: {err}"
    );

    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    let err = assert_code(&out, 0, "git entire-checkpoint push drains the rest");
    assert_eq!(
        env.checkpoint_tips_in(&origin),
        env.checkpoint_tips(),
        "{err}"
    );
    assert_eq!(env.queued(), 0, "{err}");
}

/// gitolite (Debian's gitolite3) behind the test's sshd, its home under the test's root: the
/// repository `app` with the rules `rules` (lines of `gitolite.conf`), the user `alice` holding
/// the server's key. The server, the repository on disk and its URL; `None` (with a SKIPPED
/// line) where gitolite3 or sshd is not installed.
fn gitolite(env: &TestEnv, rules: &str) -> Option<(SshServer, PathBuf, String)> {
    const SHELL: &str = "/usr/share/gitolite3/gitolite-shell";
    if !Path::new(SHELL).exists() {
        skip("no gitolite3 installed");
        return None;
    }
    let sshd = SshServer::start(&env.root().join("sshd"))?;
    let home = env.root().join("gitolite");
    std::fs::create_dir_all(&home).unwrap();
    let key = home.join("alice.pub");
    std::fs::copy(sshd.key.with_extension("pub"), &key).unwrap();
    let gitolite = |args: &[&str]| {
        // The server's git reads the server's configuration, not the test profile's (whose
        // safe.bareRepository=explicit would stop gitolite in its own bare repositories).
        let out = env
            .program_in("gitolite", &home)
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
            .args(args)
            .output()
            .expect("run gitolite");
        assert!(out.status.success(), "gitolite {args:?}: {}", stderr(&out));
    };
    gitolite(&["setup", "-pk", path_str(&key)]);
    std::fs::write(
        home.join(".gitolite/conf/gitolite.conf"),
        format!("repo gitolite-admin\n    RW+ = alice\n\nrepo app\n{rules}"),
    )
    .unwrap();
    gitolite(&["compile"]);
    gitolite(&["setup"]);
    sshd.force_command(&format!("HOME={} exec {SHELL} alice", home.display()));
    let url = sshd.url(Path::new("/app"));
    Some((sshd, home.join("repositories/app.git"), url))
}

/// gitolite denying `refs/entire/*` to a user who may push branches: the user's push lands,
/// the first shows gitolite's own words (`DENIED by refs/entire/`) and what to do once, and
/// later pushes of the hook send it no checkpoint.
#[test]
fn gitolite_denying_checkpoint_refs_costs_one_push() {
    let env = TestEnv::new();
    let Some((sshd, app, url)) = gitolite(&env, "    -   refs/entire/ = alice\n    RW+ = alice\n")
    else {
        return;
    };
    pre_receive(&app, false);
    let ssh = deploy_key_ssh(&env, &sshd);
    env.git(&["config", "core.sshCommand", path_str(&ssh)]);
    env.git(&["remote", "add", "origin", &url]);
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);

    let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    assert_eq!(err.matches("DENIED by refs/entire/").count(), 1, "{err}");
    assert_eq!(err.matches(ADVICE).count(), 1, "{err}");
    assert_eq!(rev_in(&env, &app, "refs/heads/main"), env.rev("main"));
    assert!(env.checkpoint_refs_in(&app).is_empty());

    env.git(&["commit", "-q", "--allow-empty", "-m", "more"]);
    let seen = pushes_seen(&app);
    let err = env.git_hooked_ok(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    assert_eq!(pushes_seen(&app), seen + 1, "only the user's push:\n{err}");
    assert!(
        !err.contains("DENIED") && !err.contains("warning:"),
        "{err}"
    );
    assert_eq!(rev_in(&env, &app, "refs/heads/main"), env.rev("main"));
    assert_eq!(env.queued(), 2, "{err}");
}

/// A user of the Apache of the tests who may read but not push.
const READER: (&str, &str) = ("bob", "r3ad-0nly-pw");

/// Apache serving the bare repository `<root>/served/<name>.git` to [`USER`] (who may push)
/// and [`READER`], with `body_limit` as its `LimitRequestBody`; the server and the repository.
/// `None` (with a SKIPPED line) where apache2 is not installed.
fn apache_served(
    env: &TestEnv,
    name: &str,
    body_limit: Option<usize>,
) -> Option<(Apache, PathBuf)> {
    let served = env.root().join("served");
    let bare = served.join(format!("{name}.git"));
    env.git_in(
        env.root(),
        &["init", "-q", "--bare", "-b", "main", path_str(&bare)],
    );
    let access = ApacheAccess {
        users: &[(USER, PASSWORD), READER],
        pushers: &[USER],
        body_limit,
    };
    let apache = Apache::start(env, &env.root().join("apache"), &served, &access)?;
    Some((apache, bare))
}

/// Stores `user`'s `password` for the server of `url` in git's credential store (the test
/// HOME's `.git-credentials`, through `credential.helper store`), in place of any other user's.
fn store_credentials(env: &TestEnv, url: &str, user: &str, password: &str) {
    env.git(&["config", "--global", "credential.helper", "store"]);
    let host = url.trim_start_matches("http://");
    let host = &host[..host.find('/').unwrap_or(host.len())];
    let credential = |username: &str| format!("protocol=http\nhost={host}\nusername={username}\n");
    env.git_stdin(&["credential", "reject"], credential("").as_bytes());
    let approve = format!("{}password={password}\n", credential(user));
    env.git_stdin(&["credential", "approve"], approve.as_bytes());
}

/// Through Apache with basic authentication (the user's credentials in git's credential
/// store), one `git push` lands the code and both checkpoints, and no password is printed or
/// kept by us. A read-only user's push is refused by Apache before our hook runs: the user's
/// push fails as git says, the checkpoint stays queued, and `git entire-checkpoint push` says
/// the server did not let us in rather than that it could not be reached.
#[test]
fn code_and_checkpoints_land_in_one_push_through_apache() {
    let env = TestEnv::new();
    let Some((apache, origin)) = apache_served(&env, "origin", None) else {
        return;
    };
    let url = apache.url("origin.git");
    env.git(&["remote", "add", "origin", &url]);
    store_credentials(&env, &url, USER, PASSWORD);
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);

    let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    let err = assert_code(&out, 0, "the user's push through apache");
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert_landed(&env, &origin, &[HEX_ID, HEX_ID_2], &err);
    assert_eq!(env.queued(), 0, "{err}");
    assert_password_kept_nowhere(&env, &out, PASSWORD);

    // The read-only user: Apache refuses the push itself.
    store_credentials(&env, &url, READER.0, READER.1);
    const THIRD: &str = "b0b0b0b0b0b1";
    write_std(&env, Store::Refs, THIRD, "s3", TRANSCRIPT);
    env.git(&["commit", "-q", "--allow-empty", "-m", "more"]);
    let pushes = apache.pushes();
    let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    let err = assert_code(&out, 128, "the read-only user's push");
    assert!(err.contains("Authentication failed"), "{err}");
    assert_eq!(apache.pushes(), pushes, "{err}");
    assert_ne!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert_eq!(rev_in(&env, &origin, &checkpoint_ref(THIRD)), None);
    assert_eq!(env.queued(), 1, "{err}");

    // git forgets credentials that failed; the user stores them again and asks us to push.
    store_credentials(&env, &url, READER.0, READER.1);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    let err = assert_code(&out, 1, "git entire-checkpoint push as the read-only user");
    assert!(err.contains("origin did not let us in"), "{err}");
    assert!(!err.contains("couldn't reach"), "{err}");
    assert_eq!(env.queued(), 1, "{err}");
    assert_eq!(rev_in(&env, &origin, &checkpoint_ref(THIRD)), None);
    assert_password_kept_nowhere(&env, &out, READER.1);
}

/// A dedicated checkpoint remote on a second Apache with other credentials (both users'
/// in git's credential store, each for its own server): the user's push lands the code on
/// `origin` and the checkpoint on the checkpoint remote only; neither password is printed or
/// kept by us.
#[test]
fn a_checkpoint_remote_on_a_second_apache_takes_the_checkpoints() {
    const KEEPER: (&str, &str) = ("carol", "k33per-pw");
    let env = TestEnv::new();
    let Some((apache, origin)) = apache_served(&env, "origin", None) else {
        return;
    };
    let served = env.root().join("kept");
    let checkpoints = served.join("checkpoints.git");
    env.git_in(
        env.root(),
        &["init", "-q", "--bare", path_str(&checkpoints)],
    );
    let access = ApacheAccess {
        users: &[KEEPER],
        pushers: &[KEEPER.0],
        body_limit: None,
    };
    let keeper = Apache::start(&env, &env.root().join("apache-kept"), &served, &access)
        .expect("apache2 started once already");
    let url = apache.url("origin.git");
    let kept_url = keeper.url("checkpoints.git");
    env.git(&["remote", "add", "origin", &url]);
    store_credentials(&env, &url, USER, PASSWORD);
    store_credentials(&env, &kept_url, KEEPER.0, KEEPER.1);
    write_settings(
        &env,
        "settings.local.json",
        &serde_json::json!({"strategy_options": {"checkpoint_remote": {"url": kept_url}}}),
    );
    install_hooks(&env, env.repo());
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);

    let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    let err = assert_code(&out, 0, "the user's push");
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert_landed(&env, &checkpoints, &[HEX_ID], &err);
    assert!(env.checkpoint_refs_in(&origin).is_empty(), "{err}");
    assert_eq!(env.queued(), 0, "{err}");
    assert_eq!(keeper.pushes(), 1, "{err}");
    assert_password_kept_nowhere(&env, &out, PASSWORD);
    assert_password_kept_nowhere(&env, &out, KEEPER.1);
}
