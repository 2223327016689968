//! Opening the topology from the settings: the primary and mirrors the checkpoints block names
//! (checked against the backend registry), the redactor of the `redaction` block, the stores
//! and the network they are handed, and which mirrors await the user's approval.

use super::{Topology, TopologyError};
use crate::config::settings::{BackendSpec, ConfigSource, ResolvedConfig, SettingsFiles};
use crate::git::repo::Repo;
use crate::model::redact::Redactor;
use crate::store::branch::GitBranchStore;
use crate::store::refs::GitRefsStore;
use crate::store::registry::{Backend, MirrorConfigError, Registry};
use crate::store::{CheckpointWriter, StoreKind};

/// Whether the mirrors of `resolved` come from the committed settings file and the user has
/// not approved it.
fn awaits_approval(files: &SettingsFiles, resolved: &ResolvedConfig) -> bool {
    resolved.source == ConfigSource::Settings && !files.approval().approved()
}

/// What the settings make of the topology, checked as opening it checks them, with no store
/// opened and nothing built: what [`Topology::open`] fails with, this fails with.
pub(super) struct Plan<'c> {
    /// The primary's kind.
    pub(super) primary: StoreKind,
    /// Each mirror in settings order with its index there; no backend for a mirror left out
    /// until the user approves the committed settings file.
    mirrors: Vec<(usize, &'c BackendSpec, Option<Backend>)>,
    /// The redactor of the `redaction` block.
    redactor: Redactor,
}

/// The plan of `resolved` (no checkpoints block: a git-branch primary without mirrors), its
/// backend types looked up in `registry` and each mirror-only backend's settings checked
/// ([`crate::store::registry::MirrorBackend::check`]); the redaction rules of `files` compiled.
/// With `consent`, a mirror outside git (the fs mirror) that the committed settings file asks for
/// is left out, unchecked, until the user approves that file ([`mirrors_needing_approval`]): it
/// writes checkpoints where the user did not choose.
pub(super) fn plan<'c>(
    registry: &Registry,
    files: &SettingsFiles,
    resolved: &'c ResolvedConfig,
    consent: bool,
) -> Result<Plan<'c>, TopologyError> {
    let redactor = files.redactor().map_err(TopologyError::Redaction)?;
    let gated = consent && awaits_approval(files, resolved);
    let Some(config) = &resolved.config else {
        return Ok(Plan {
            primary: StoreKind::GitBranch,
            mirrors: Vec::new(),
            redactor,
        });
    };
    let unknown = |location: String, kind: &str| TopologyError::UnknownBackend {
        location,
        kind: kind.to_owned(),
        registered: registry.names().join(", "),
    };
    let primary = match registry.lookup(&config.primary.kind) {
        Some(Backend::Git(kind)) => kind,
        Some(Backend::MirrorOnly(_)) => {
            return Err(TopologyError::NotGitBacked {
                kind: config.primary.kind.clone(),
            })
        }
        None => return Err(unknown("checkpoints.primary".into(), &config.primary.kind)),
    };
    let mut used = vec![config.primary.kind.clone()];
    let mut mirrors = Vec::new();
    for (index, spec) in config.mirrors.iter().enumerate() {
        if used.contains(&spec.kind) {
            return Err(TopologyError::DuplicateType {
                index,
                kind: spec.kind.clone(),
            });
        }
        used.push(spec.kind.clone());
        let backend = match registry.lookup(&spec.kind) {
            Some(Backend::MirrorOnly(_)) if gated => None,
            Some(Backend::MirrorOnly(backend)) => {
                (backend.check)(spec.config.as_ref())
                    .map_err(|source| construct(index, spec, source))?;
                Some(Backend::MirrorOnly(backend))
            }
            Some(git) => Some(git),
            None => return Err(unknown(format!("checkpoints.mirrors[{index}]"), &spec.kind)),
        };
        mirrors.push((index, spec, backend));
    }
    Ok(Plan {
        primary,
        mirrors,
        redactor,
    })
}

/// Mirror `index` (`spec`) refused its settings.
fn construct(index: usize, spec: &BackendSpec, source: MirrorConfigError) -> TopologyError {
    TopologyError::Construct {
        index,
        kind: spec.kind.clone(),
        source,
    }
}

/// The mirrors of the committed settings file that need the user's approval of the file
/// (`git entire-checkpoint trust`), which [`Topology::open`] leaves out until then: those
/// outside git (`fs`), which write checkpoints somewhere the user did not choose. Empty when the
/// committed file does not choose the store.
pub fn mirrors_needing_approval(files: &SettingsFiles) -> Result<Vec<BackendSpec>, TopologyError> {
    let resolved = files.checkpoints_config()?;
    if resolved.source != ConfigSource::Settings {
        return Ok(Vec::new());
    }
    let registry = Registry::builtin();
    Ok(resolved
        .config
        .map(|c| c.mirrors)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| matches!(registry.lookup(&m.kind), Some(Backend::MirrorOnly(_))))
        .collect())
}

impl<'r> Topology<'r> {
    /// Opens the topology of `repo` from the environment override or the settings files, with
    /// the built-in registry. No configuration means a git-branch primary without mirrors. A
    /// settings file that does not parse is left out, and the topology then refuses writes
    /// ([`Topology::check_writable`]).
    pub fn open(repo: &'r Repo) -> Result<Self, TopologyError> {
        Self::open_with(repo, &Registry::builtin())
    }

    /// Like [`Topology::open`] with a given registry.
    pub fn open_with(repo: &'r Repo, registry: &Registry) -> Result<Self, TopologyError> {
        let files = repo.settings();
        Self::build(repo, registry, files, files.checkpoints_config()?, true)
    }

    /// Checks that `files` (settings about to be written) open a topology with the built-in
    /// registry, as every command would open it; the environment override is left out, since
    /// the files outlive it.
    pub fn validate_files(repo: &'r Repo, files: &SettingsFiles) -> Result<(), TopologyError> {
        let resolved = files.files_checkpoints_config()?;
        Self::build(repo, &Registry::builtin(), files, resolved, false).map(drop)
    }

    /// The topology `resolved` describes ([`plan`]), its stores opened and its mirrors built.
    fn build(
        repo: &'r Repo,
        registry: &Registry,
        files: &SettingsFiles,
        resolved: ResolvedConfig,
        consent: bool,
    ) -> Result<Self, TopologyError> {
        let plan = plan(registry, files, &resolved, consent)?;
        let refused = files.refuse_writes().err();
        let mut mirrors: Vec<Box<dyn CheckpointWriter + 'r>> = Vec::new();
        for (index, spec, backend) in plan.mirrors {
            let mirror: Box<dyn CheckpointWriter + 'r> = match backend {
                Some(Backend::Git(StoreKind::GitBranch)) => Box::new(GitBranchStore::mirror(repo)),
                Some(Backend::Git(StoreKind::GitRefs)) => Box::new(GitRefsStore::new(repo)),
                Some(Backend::MirrorOnly(backend)) => {
                    (backend.build)(repo, spec.config.as_ref(), resolved.source)
                        .map_err(|source| construct(index, spec, source))?
                }
                None => {
                    log::info!(
                        "checkpoints.mirrors[{index}] ({}) of the committed settings awaits approval (git entire-checkpoint trust)",
                        spec.kind
                    );
                    continue;
                }
            };
            mirrors.push(mirror);
        }
        let mut t = Self::with_primary(repo, plan.primary, mirrors, resolved.source);
        t.redactor = plan.redactor;
        t.refused = refused;
        Ok(t)
    }

    /// A topology with an explicit primary and mirrors.
    pub fn with_primary(
        repo: &'r Repo,
        primary: StoreKind,
        mirrors: Vec<Box<dyn CheckpointWriter + 'r>>,
        source: ConfigSource,
    ) -> Self {
        let mut branch = match primary {
            StoreKind::GitBranch => GitBranchStore::primary(repo),
            StoreKind::GitRefs => GitBranchStore::mirror(repo),
        };
        // Offline, reads still see the default remote's copy of the branch (a fresh clone has
        // it as a remote-tracking branch); fetching it needs `enable_fetch_with`.
        if let Some(remote) = crate::remote::destination::default_remote(repo) {
            branch.set_remote(crate::remote::on_demand::remote_copy(repo, &remote, None));
        }
        // Every remote's copies are local data: a read finds them before it fetches.
        for remote in repo.remote_names() {
            branch.add_local_copy(crate::remote::on_demand::remote_copy(repo, remote, None));
        }
        // A partial clone completes what a read needs from its promisor remote, as git does.
        if let Some(promisor) = crate::remote::on_demand::promisor(repo) {
            branch.set_promised(Box::new(promisor));
        }
        let mut refs = GitRefsStore::new(repo);
        refs.set_on_demand(Box::new(crate::remote::on_demand::Network::offline(repo)));
        Topology {
            primary,
            source,
            redactor: Redactor::builtin(),
            refused: None,
            refs,
            branch,
            mirrors,
            fetching: None,
            refresh: false,
            asked_now: std::sync::Mutex::default(),
        }
    }

    /// Makes reads of checkpoints missing locally fetch them through `fetcher`; partially (into
    /// the partial cache, transcripts on read) when `strategy_options.filtered_fetches` is set.
    pub fn enable_fetch_with(&mut self, fetcher: crate::remote::fetch::Fetcher<'r>) {
        let repo = fetcher.repo();
        self.fetching = Some((repo, fetcher.remote().clone()));
        self.branch
            .set_remote(crate::remote::on_demand::remote_copy(
                repo,
                fetcher.remote(),
                Some(fetcher.sibling()),
            ));
        let filter = repo
            .settings()
            .filtered_fetches_enabled()
            .then_some(crate::remote::fetch::FetchFilter::BlobNone);
        self.refs
            .set_on_demand(Box::new(crate::remote::on_demand::Network::fetching(
                fetcher.with_filter(filter),
            )));
    }
}
