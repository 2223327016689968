//! What `config` and `status` report besides the settings (`ops::settings`): the topology by
//! name, where checkpoints travel, and for `status` the push queue and the checkpoint refs
//! counted. Nothing here uses the network: the remote's count is the one last recorded.

use serde::Serialize;

use crate::git::repo::Repo;
use crate::remote::checkpoint_remote::{self, CheckpointRemote, CheckpointRemoteError};
use crate::remote::{destination, scale};
use crate::topology::Topology;

/// The topology by name (`config --json` starts with it).
#[derive(Debug, Serialize)]
pub struct TopologyNames {
    /// The primary store.
    pub primary: &'static str,
    /// The mirrors, in order.
    pub mirrors: Vec<String>,
    /// Which settings chose them.
    pub source: &'static str,
    /// The rollout stage.
    pub rollout: &'static str,
}

/// The dedicated checkpoint remote, its URL with credentials redacted.
#[derive(Debug, Serialize)]
pub struct DedicatedRemote {
    /// The URL, redacted.
    pub url: String,
    /// Which setting named it.
    pub source: &'static str,
    /// The forge, for a remote named by forge and repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<&'static str>,
    /// The repository on the forge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

/// Where checkpoints travel: `checkpoint_remote` (the dedicated checkpoint remote, or `null`)
/// and `checkpoint_delivery` (the remote checkpoint refs are pushed to and fetched from by
/// default, or `null` without any remote).
#[derive(Debug, Serialize)]
pub struct Delivery {
    /// The dedicated checkpoint remote.
    pub checkpoint_remote: Option<DedicatedRemote>,
    /// The remote checkpoints are delivered to, as shown.
    pub checkpoint_delivery: Option<String>,
}

/// How many checkpoint refs there are: here, and on the delivery remote as last recorded.
#[derive(Debug, Serialize)]
pub struct RefCounts {
    /// Here.
    pub local_count: usize,
    /// On the delivery remote, when a command has counted them.
    pub remote_count: Option<u64>,
    /// When that was.
    pub remote_counted_at: Option<String>,
}

/// What `status` shows of the topology and the delivery.
#[derive(Debug)]
pub struct Status {
    /// The topology.
    pub topology: TopologyNames,
    /// How many checkpoint refs wait to be pushed.
    pub queued: usize,
    /// Where they go.
    pub delivery: Delivery,
    /// The checkpoint refs counted.
    pub checkpoint_refs: RefCounts,
    /// What a large remote costs, when it is large.
    pub scale_warning: Option<String>,
}

/// The topology `topo` resolved, by name.
pub fn topology(topo: &Topology<'_>) -> TopologyNames {
    TopologyNames {
        primary: topo.primary().name(),
        mirrors: topo.mirror_names(),
        source: topo.source().name(),
        rollout: topo.rollout().name(),
    }
}

/// Where checkpoints travel; an invalid `checkpoint_remote` setting is an error.
pub fn delivery(repo: &Repo) -> Result<Delivery, CheckpointRemoteError> {
    let configured = checkpoint_remote::configured(repo)?;
    let target = checkpoint_remote::resolve(repo, None)?;
    let checkpoint_remote = match (&configured, &target) {
        (Some((remote, source)), Some(t)) => {
            let (provider, repo) = match remote {
                CheckpointRemote::Forge { provider, repo } => {
                    (Some(provider.name()), Some(repo.as_str().to_owned()))
                }
                _ => (None, None),
            };
            Some(DedicatedRemote {
                url: t.display.clone(),
                source: source.name(),
                provider,
                repo,
            })
        }
        _ => None,
    };
    Ok(Delivery {
        checkpoint_remote,
        checkpoint_delivery: target.map(|t| t.display),
    })
}

/// `status`'s topology, queue, delivery and counts; an invalid `checkpoint_remote` setting is
/// an error.
pub fn status(repo: &Repo, topo: &Topology<'_>) -> Result<Status, CheckpointRemoteError> {
    let topology = topology(topo);
    let queued = destination::pending_count(repo, topo.refs_store());
    let delivery = delivery(repo)?;
    let target = checkpoint_remote::resolve(repo, None)?;
    let known = target
        .as_ref()
        .and_then(|t| scale::last_remote_count(repo, &t.target));
    Ok(Status {
        topology,
        queued,
        delivery,
        checkpoint_refs: RefCounts {
            local_count: scale::local_count(repo),
            remote_count: known.as_ref().map(|k| k.count),
            remote_counted_at: known.map(|k| k.at),
        },
        scale_warning: target.as_ref().and_then(|t| scale::warning(repo, t)),
    })
}
