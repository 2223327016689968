//! Where checkpoints travel: the dedicated checkpoint remote of `strategy_options.checkpoint_remote`,
//! else the code remote.
//!
//! [`resolve`] is the one decision every network operation on checkpoints goes through: pushes
//! (pre-push and `push`), on-demand fetches, `list --remote`, `git entire-fetch` and `gc`. With a
//! checkpoint remote configured, checkpoint refs go there and nowhere else, so the code remote
//! never carries them (privacy: a public repository would publish its session transcripts; cost:
//! every `git push` downloads one advertisement line per ref the remote holds).
//!
//! Two forms are accepted (docs/cli.md):
//! - `{"provider": "github"|"gitlab", "repo": "owner/name"}`: the URL is derived from the code
//!   push remote's scheme and host (scp-like ssh `git@host:owner/name.git`, `ssh://git@host[:port]/owner/name.git`,
//!   `https://host[:port]/owner/name.git`), or the provider's public host when the code remote
//!   has no recognisable host (a path, no remote at all).
//! - `{"url": "<any git URL or path>"}`, used as it is.
//!
//! A present but invalid value is an error, never silently ignored: ignoring it would send the
//! checkpoints to the code remote, which is what the setting exists to prevent. A URL carrying
//! credentials is refused (and never printed): settings files are committed, and credentials
//! belong in a credential helper.

use serde::Deserialize;
use serde_json::Value;

use crate::config::settings::{Approval, ConfigSource};
use crate::git::repo::Repo;
use crate::git::url::{self as remote, Remote, RemoteError};

/// The settings key under `strategy_options`.
pub const SETTING: &str = crate::config::settings::CHECKPOINT_REMOTE_SETTING;

/// Errors of a present but invalid `checkpoint_remote`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointRemoteError {
    /// The value does not decode (wrong type, unknown field, both or neither form).
    #[error("invalid strategy_options.checkpoint_remote in {file}: {message}; expected {{\"provider\": \"github\"|\"gitlab\", \"repo\": \"owner/name\"}} or {{\"url\": \"<git URL or path>\"}}")]
    Malformed {
        /// The settings file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// `provider` names no known forge.
    #[error("invalid strategy_options.checkpoint_remote in {file}: unknown provider {provider:?} (known: github, gitlab); use {{\"url\": ...}} for any other server")]
    UnknownProvider {
        /// The settings file.
        file: String,
        /// The value given.
        provider: String,
    },
    /// `repo` is empty or not `owner/name`.
    #[error("invalid strategy_options.checkpoint_remote in {file}: repo {repo:?} is not of the form owner/name")]
    BadRepo {
        /// The settings file.
        file: String,
        /// The value given.
        repo: String,
    },
    /// The URL is empty.
    #[error("invalid strategy_options.checkpoint_remote in {file}: url is empty")]
    EmptyUrl {
        /// The settings file.
        file: String,
    },
    /// The URL could be read by git as an option or a command, or uses a transport that is
    /// not allowed (see [`crate::git::url`]). The value is shown escaped and cut.
    #[error(
        "invalid strategy_options.checkpoint_remote in {file}: url {shown} is refused: {reason}"
    )]
    Refused {
        /// The settings file.
        file: String,
        /// The value as shown ([`crate::git::url::shown`]).
        shown: String,
        /// Why.
        #[source]
        reason: RemoteError,
    },
    /// A URL derived from the code remote is not one git may be given.
    #[error("checkpoint remote {shown} derived from the code remote is refused: {reason}")]
    Derived {
        /// The URL as shown.
        shown: String,
        /// Why.
        #[source]
        reason: RemoteError,
    },
    /// The code remote (a remote name or URL) is not one git may be given.
    #[error("remote {shown} is refused: {reason}")]
    Code {
        /// The remote as shown.
        shown: String,
        /// Why.
        #[source]
        reason: RemoteError,
    },
    /// The URL carries a password or token. The URL itself is deliberately not part of the
    /// message.
    #[error("invalid strategy_options.checkpoint_remote in {file}: the url carries credentials; remove them from the settings file and use a git credential helper instead")]
    Credentials {
        /// The settings file.
        file: String,
    },
}

impl crate::base::error::ExitStatus for CheckpointRemoteError {
    /// A refused remote from a settings file is a failure of the command (the same refusal of a
    /// command-line value, a bare `RemoteError`, is a usage error).
    fn exit_code(&self) -> i32 {
        match self {
            CheckpointRemoteError::Malformed { .. }
            | CheckpointRemoteError::UnknownProvider { .. }
            | CheckpointRemoteError::BadRepo { .. }
            | CheckpointRemoteError::EmptyUrl { .. }
            | CheckpointRemoteError::Refused { .. }
            | CheckpointRemoteError::Derived { .. }
            | CheckpointRemoteError::Code { .. }
            | CheckpointRemoteError::Credentials { .. } => crate::base::error::FAILURE,
        }
    }
}

/// A forge whose `owner/name` form we can turn into a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// GitHub.
    GitHub,
    /// GitLab.
    GitLab,
}

impl Provider {
    fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "github" => Some(Provider::GitHub),
            "gitlab" => Some(Provider::GitLab),
            _ => None,
        }
    }

    /// The settings spelling.
    pub fn name(self) -> &'static str {
        match self {
            Provider::GitHub => "github",
            Provider::GitLab => "gitlab",
        }
    }

    fn public_host(self) -> &'static str {
        match self {
            Provider::GitHub => "github.com",
            Provider::GitLab => "gitlab.com",
        }
    }
}

/// A validated `owner/name` (GitLab subgroups allowed: `group/sub/name`), without `.git`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoPath(String);

impl RepoPath {
    fn parse(raw: &str) -> Option<Self> {
        let s = raw.trim().trim_matches('/');
        let s = s.strip_suffix(".git").unwrap_or(s);
        let segments: Vec<&str> = s.split('/').collect();
        let good = |seg: &&str| {
            !seg.is_empty()
                && !seg.starts_with('.')
                && !seg.starts_with('-')
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        (segments.len() >= 2 && segments.iter().all(good)).then(|| RepoPath(s.to_owned()))
    }

    /// `owner/name`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A configured checkpoint remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointRemote {
    /// A forge repository whose URL follows the code remote's scheme and host.
    Forge {
        /// The forge.
        provider: Provider,
        /// `owner/name`.
        repo: RepoPath,
    },
    /// A URL or path given as it is (credential-free, validated).
    Url(Remote),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    provider: Option<String>,
    repo: Option<String>,
    url: Option<String>,
}

/// Whether a URL carries a secret in any spelling: a password in its userinfo, whatever it holds
/// (`scheme://user:pass@host`, `user%3Apass@`, quotes, `@` or whitespace inside, an IPv6 host,
/// scp-like `user:pass@host:path`), or a lone user part over http(s) (usually a token). The
/// whole value is one URL here, so whitespace does not end it.
fn has_credentials(url: &str) -> bool {
    crate::git::url::redact_url(url) != url
}

impl CheckpointRemote {
    /// Validates a `checkpoint_remote` value read from `file`.
    pub fn parse(value: &Value, file: &str) -> Result<Self, CheckpointRemoteError> {
        let malformed = |message: String| CheckpointRemoteError::Malformed {
            file: file.to_owned(),
            message,
        };
        if !value.is_object() {
            return Err(malformed("must be a JSON object".into()));
        }
        let raw: Raw =
            serde_json::from_value(value.clone()).map_err(|e| malformed(e.to_string()))?;
        match raw {
            Raw {
                url: Some(url),
                provider: None,
                repo: None,
            } => {
                if url.is_empty() {
                    return Err(CheckpointRemoteError::EmptyUrl {
                        file: file.to_owned(),
                    });
                }
                if has_credentials(&url) {
                    return Err(CheckpointRemoteError::Credentials {
                        file: file.to_owned(),
                    });
                }
                // Untrusted: never trimmed into shape, refused unless git reads it as a URL.
                let url = Remote::parse(&url).map_err(|reason| CheckpointRemoteError::Refused {
                    file: file.to_owned(),
                    shown: remote::shown(&url),
                    reason,
                })?;
                Ok(CheckpointRemote::Url(url))
            }
            Raw {
                url: None,
                provider: Some(provider),
                repo: Some(repo),
            } => {
                let provider = Provider::parse(provider.trim()).ok_or_else(|| {
                    CheckpointRemoteError::UnknownProvider {
                        file: file.to_owned(),
                        provider: provider.clone(),
                    }
                })?;
                let repo =
                    RepoPath::parse(&repo).ok_or_else(|| CheckpointRemoteError::BadRepo {
                        file: file.to_owned(),
                        repo: repo.clone(),
                    })?;
                Ok(CheckpointRemote::Forge { provider, repo })
            }
            Raw { url: Some(_), .. } => Err(malformed(
                "give either url, or provider and repo, not both".into(),
            )),
            Raw { provider: None, .. } => Err(malformed("provider is required with repo".into())),
            Raw { repo: None, .. } => Err(malformed("repo is required with provider".into())),
        }
    }

    /// The URL to use when the code goes to `code_url` (a remote's push URL, if any).
    pub fn url_for(&self, code_url: Option<&str>) -> String {
        match self {
            CheckpointRemote::Url(u) => u.as_str().to_owned(),
            CheckpointRemote::Forge { provider, repo } => {
                let repo = repo.as_str();
                match code_url.and_then(parse_host) {
                    Some(Host::Scp { host }) => format!("git@{host}:{repo}.git"),
                    Some(Host::Ssh { host }) => format!("ssh://git@{host}/{repo}.git"),
                    Some(Host::Http { scheme, host }) => format!("{scheme}://{host}/{repo}.git"),
                    None => format!("https://{}/{repo}.git", provider.public_host()),
                }
            }
        }
    }
}

/// The scheme and host (with port) of a remote URL.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    /// `user@host:path` (scp-like ssh).
    Scp { host: String },
    /// `ssh://[user@]host[:port]/path`.
    Ssh { host: String },
    /// `http(s)://[cred@]host[:port]/path` (credentials dropped).
    Http { scheme: &'static str, host: String },
}

fn parse_host(url: &str) -> Option<Host> {
    let authority = |rest: &str| -> Option<String> {
        let end = rest.find('/').unwrap_or(rest.len());
        let a = &rest[..end];
        let host = a.rsplit_once('@').map_or(a, |(_, h)| h);
        (!host.is_empty()).then(|| host.to_owned())
    };
    if let Some(rest) = url.strip_prefix("ssh://") {
        return authority(rest).map(|host| Host::Ssh { host });
    }
    for scheme in ["https", "http"] {
        if let Some(rest) = url.strip_prefix(&format!("{scheme}://")) {
            return authority(rest).map(|host| Host::Http { scheme, host });
        }
    }
    if url.contains("://") {
        return None;
    }
    // scp-like: a colon before any slash, and something before it that is not a drive letter.
    let colon = url.find(':')?;
    if url[..colon].contains('/') || colon < 2 {
        return None;
    }
    let host = url[..colon]
        .rsplit_once('@')
        .map_or(&url[..colon], |(_, h)| h);
    (!host.is_empty()).then(|| Host::Scp {
        host: host.to_owned(),
    })
}

/// The host of a remote URL (no port, no user), for judging whether it is a public forge.
pub fn host_of(url: &str) -> Option<String> {
    let host = match parse_host(url)? {
        Host::Scp { host } | Host::Ssh { host } | Host::Http { host, .. } => host,
    };
    let host = host.split(':').next().unwrap_or("").to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// Hosts of public forges: a repository there may be public, so pushing checkpoints to it may
/// publish them. Judged offline from the URL alone; a self-hosted server is never flagged.
pub const PUBLIC_FORGE_HOSTS: [&str; 6] = [
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "git.sr.ht",
    "gitee.com",
];

/// The public forge `url` is hosted on, if any.
pub fn public_forge(url: &str) -> Option<&'static str> {
    let host = host_of(url)?;
    PUBLIC_FORGE_HOSTS
        .iter()
        .find(|h| host == **h || host.ends_with(&format!(".{h}")))
        .copied()
}

/// The configured checkpoint remote and the file it came from, if any. The local file's key
/// wins over the committed file's (key by key, so a per-clone file that sets other
/// `strategy_options` does not drop the team's checkpoint remote).
pub fn configured(
    repo: &Repo,
) -> Result<Option<(CheckpointRemote, ConfigSource)>, CheckpointRemoteError> {
    let Some((value, source, file)) = repo.settings().strategy_option(SETTING) else {
        return Ok(None);
    };
    Ok(Some((CheckpointRemote::parse(&value, &file)?, source)))
}

/// The checkpoint remote the committed settings file asks for, approved or not, as its URL
/// would be pushed to (credentials redacted), or why the value is invalid; with the file as
/// shown. `None` when it asks for none, or the per-clone file sets the key (it wins).
pub fn asked(repo: &Repo) -> Option<(Result<String, CheckpointRemoteError>, String)> {
    let (value, source, file) = repo.settings().strategy_option_as_written(SETTING)?;
    if source != ConfigSource::Settings {
        return None;
    }
    let url = CheckpointRemote::parse(&value, &file).map(|remote| {
        let code = crate::remote::destination::default_remote(repo)
            .map(|c| remote_push_url(repo, &c).unwrap_or(c));
        crate::git::url::redact(&remote.url_for(code.as_deref()))
    });
    Some((url, file))
}

/// A checkpoint remote the settings in force ask for that cannot be used now: the committed
/// file's, not approved (never, or the file changed where it sends checkpoints since). Pushes
/// hold: checkpoints stay queued and go to no other destination (the code remote least of
/// all) until the user approves it or chooses another destination.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} asks to push them to {remote}, {}; until you approve it they go nowhere else: `git entire-checkpoint trust` shows what it asks for and approves it", if *.lapsed { "and that changed since you approved the file" } else { "which you have not approved" })]
pub struct AwaitingApproval {
    /// The committed file, as shown.
    pub file: String,
    /// The checkpoint remote it asks for, as shown (or why its value is invalid).
    pub remote: String,
    /// The user approved an earlier version of the file.
    pub lapsed: bool,
}

/// The committed file's checkpoint remote when it awaits the user's approval (see
/// [`AwaitingApproval`]).
pub fn awaiting_approval(repo: &Repo) -> Option<AwaitingApproval> {
    let Approval::NotApproved { lapsed, .. } = repo.settings().approval() else {
        return None;
    };
    let (url, file) = asked(repo)?;
    Some(AwaitingApproval {
        file,
        remote: url.unwrap_or_else(|e| format!("an invalid checkpoint remote ({e})")),
        lapsed: *lapsed,
    })
}

/// Where checkpoint refs are pushed to and fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointTarget {
    /// What git is given: a remote name or a URL.
    pub target: Remote,
    /// How it is shown: the remote name, or the URL with credentials redacted.
    pub display: String,
    /// `Some` when this is the dedicated checkpoint remote (and where it is configured).
    pub dedicated: Option<ConfigSource>,
}

impl CheckpointTarget {
    /// Whether the target also carries the code (no dedicated checkpoint remote).
    pub fn carries_code(&self) -> bool {
        self.dedicated.is_none()
    }
}

/// The push URL of a configured remote as written in the config (`remote.<name>.pushurl`, else
/// `.url`), before `insteadOf` rewriting: what the user chose, so a host judged or derived from
/// it is the one they see in `git remote -v`.
pub fn remote_push_url(repo: &Repo, name: &str) -> Option<String> {
    repo.config_string(&format!("remote.{name}.pushurl"))
        .or_else(|| repo.config_string(&format!("remote.{name}.url")))
}

/// The one resolution of the checkpoint delivery and fetch remote.
///
/// `via` is the code remote the operation goes through: the remote pre-push was called for, or
/// the remote named to `push`. With a checkpoint remote configured the answer is always that
/// remote (a forge form derives its URL from `via`'s host, else from the default remote's);
/// otherwise `via`, else `origin`, else the only remote. `Ok(None)`: no remote at all.
pub fn resolve(
    repo: &Repo,
    via: Option<&str>,
) -> Result<Option<CheckpointTarget>, CheckpointRemoteError> {
    let code = via
        .map(str::to_owned)
        .or_else(|| crate::remote::destination::default_remote(repo));
    if let Some((remote, source)) = configured(repo)? {
        let code_url = code
            .as_deref()
            .map(|c| remote_push_url(repo, c).unwrap_or_else(|| c.to_owned()));
        let url = remote.url_for(code_url.as_deref());
        let target = Remote::parse(&url).map_err(|reason| CheckpointRemoteError::Derived {
            shown: remote::shown(&url),
            reason,
        })?;
        return Ok(Some(CheckpointTarget {
            display: crate::git::url::redact(&url),
            target,
            dedicated: Some(source),
        }));
    }
    code.map(|c| {
        let target = Remote::parse(&c).map_err(|reason| CheckpointRemoteError::Code {
            shown: remote::shown(&c),
            reason,
        })?;
        Ok(CheckpointTarget {
            display: crate::git::url::redact(&c),
            target,
            dedicated: None,
        })
    })
    .transpose()
}

/// Every destination checkpoint refs are delivered to: the checkpoint remote (as derived for
/// each configured remote), else every configured remote. Used to keep only live delivery
/// queues, so a code remote stops collecting a queue once a checkpoint remote is set.
pub fn delivery_targets(repo: &Repo) -> Vec<String> {
    let names = repo.remote_names();
    match configured(repo) {
        Ok(Some((remote, _))) => {
            let mut urls: Vec<String> = names
                .iter()
                .map(|n| remote.url_for(remote_push_url(repo, n).as_deref()))
                .collect();
            urls.push(remote.url_for(None));
            urls.sort();
            urls.dedup();
            urls
        }
        // An invalid setting pushes nowhere; keep every queue until it is fixed.
        _ => names.to_vec(),
    }
}

/// The marker in `<common>/entire/` that remembers the public-forge warning was shown.
const PUBLIC_WARNED_MARKER: &str = "public-remote-warned";

/// The once-per-clone warning for checkpoints about to be pushed to a code remote on a public
/// forge: `Some(text)` the first time (the marker is written then), `None` afterwards, for a
/// dedicated checkpoint remote, or for a host that is not a public forge.
pub fn public_remote_warning(repo: &Repo, target: &CheckpointTarget) -> Option<String> {
    if !target.carries_code() {
        return None;
    }
    let url =
        remote_push_url(repo, &target.target).unwrap_or_else(|| target.target.as_str().to_owned());
    let host = public_forge(&url)?;
    let marker = repo.common_dir().join("entire").join(PUBLIC_WARNED_MARKER);
    if marker.exists() {
        return None;
    }
    let written = std::fs::create_dir_all(repo.common_dir().join("entire"))
        .and_then(|()| crate::base::fs::write_atomic(&marker, host.as_bytes(), 0o644));
    if let Err(e) = written {
        log::info!("could not remember the public-remote warning: {e}");
    }
    let provider = if host == "gitlab.com" {
        "gitlab"
    } else {
        "github"
    };
    Some(format!(
        "checkpoints (AI session transcripts) are being pushed to {}, hosted on {host}: if that repository is public, so are they. \
To keep them in a separate private repository, set \"strategy_options\": {{\"checkpoint_remote\": {{\"provider\": \"{provider}\", \"repo\": \"<owner>/<private-repo>\"}}}} \
in .entire/settings.json (or .entire/settings.local.json for this clone only); \"push_sessions\": false stops pushing checkpoints. \
This warning is shown once per clone.",
        target.display
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<CheckpointRemote, CheckpointRemoteError> {
        CheckpointRemote::parse(&v, ".entire/settings.json")
    }

    fn forge(p: &str, r: &str) -> CheckpointRemote {
        parse(json!({"provider": p, "repo": r})).unwrap()
    }

    #[test]
    fn forge_url_follows_the_code_remote() {
        let f = forge("github", "acme/checkpoints");
        assert_eq!(
            f.url_for(Some("git@github.com:acme/code.git")),
            "git@github.com:acme/checkpoints.git"
        );
        assert_eq!(
            f.url_for(Some("https://tok:x@github.example.com:8443/acme/code")),
            "https://github.example.com:8443/acme/checkpoints.git"
        );
        assert_eq!(
            f.url_for(Some("ssh://me@git.corp:2222/acme/code.git")),
            "ssh://git@git.corp:2222/acme/checkpoints.git"
        );
        assert_eq!(
            f.url_for(Some("/srv/code.git")),
            "https://github.com/acme/checkpoints.git"
        );
        assert_eq!(
            forge("gitlab", "g/sub/cp.git").url_for(None),
            "https://gitlab.com/g/sub/cp.git"
        );
    }

    #[test]
    fn bad_values_are_errors() {
        for (v, want) in [
            (
                json!({"provider": "github", "repo": ""}),
                "is not of the form owner/name",
            ),
            (
                json!({"provider": "github", "repo": "noslash"}),
                "is not of the form owner/name",
            ),
            (
                json!({"provider": "github", "repo": "a//b"}),
                "is not of the form owner/name",
            ),
            (
                json!({"provider": "github", "repo": "a/b c"}),
                "is not of the form owner/name",
            ),
            (
                json!({"provider": "github", "repo": "../x"}),
                "is not of the form owner/name",
            ),
            (
                json!({"provider": "bitbucket", "repo": "a/b"}),
                "unknown provider \"bitbucket\"",
            ),
            (json!({"repo": "a/b"}), "provider is required"),
            (json!({"provider": "github"}), "repo is required"),
            (json!({"url": "x", "repo": "a/b"}), "not both"),
            (json!({"url": ""}), "url is empty"),
            (
                json!({"url": "  "}),
                "is refused: it starts or ends with white space",
            ),
            (json!({"url": " --upload-pack=x"}), "is refused"),
            (json!({"url": "ext::sh -c x"}), "is refused: remote helper"),
            (json!({"url": 7}), "invalid type"),
            (json!("a/b"), "must be a JSON object"),
            (json!({"uri": "x"}), "unknown field `uri`"),
        ] {
            let err = parse(v.clone()).unwrap_err().to_string();
            assert!(err.contains(want), "{v}: {err}");
            assert!(err.contains(".entire/settings.json"), "{err}");
        }
    }

    #[test]
    fn credentials_are_refused_and_never_echoed() {
        for url in [
            "https://user:hunter2@host/x.git",
            "https://hunter2@host/x.git",
            "http://user:hun'ter2@127.0.0.1:1/r.git",
            "http://user:hun ter2@host/r.git",
            "https://user:p@hunter2@host/r.git",
            "https://user%3Ahunter2@host/r.git",
            "HTTPS://user:hunter2@[::1]:8443/r.git",
            "git://user:hunter2@host/r.git",
            "ssh://git:hunter2@host/r.git",
            "git:hunter2@host:o/r.git",
        ] {
            let err = parse(json!({ "url": url })).unwrap_err();
            assert!(matches!(err, CheckpointRemoteError::Credentials { .. }));
            assert!(!err.to_string().contains("hunter2"), "{err}");
        }
        for url in [
            "ssh://git@host/x.git",
            "git@host:o/x.git",
            "/srv/a:b@c/x.git",
        ] {
            assert_eq!(
                parse(json!({ "url": url })).unwrap(),
                CheckpointRemote::Url(Remote::parse(url).unwrap())
            );
        }
    }

    #[test]
    fn public_forges_are_judged_from_the_host() {
        assert_eq!(public_forge("git@github.com:a/b.git"), Some("github.com"));
        assert_eq!(public_forge("https://GitLab.com/a/b"), Some("gitlab.com"));
        assert_eq!(
            public_forge("ssh://git@ssh.github.com:443/a/b"),
            Some("github.com")
        );
        assert_eq!(public_forge("https://git.corp.example/a/b"), None);
        assert_eq!(public_forge("/srv/git/a.git"), None);
        assert_eq!(public_forge("C:/repos/a.git"), None);
        assert_eq!(public_forge("notgithub.com:a/b"), None);
    }
}
