//! The operations commands run: staged sessions, the commit hooks and their installation, the
//! rewrite map, gc, migration, doctor, fetching many checkpoints, resolving what `show` names,
//! the push policy, the one hook runner, consent to the committed settings (`trust`), what
//! `config` and `status` show, the git a binary runs around its command (`process`),
//! `blame`/`why` (which checkpoint and prompt wrote a line), and `stats`/`verify` (how much of a
//! range an agent wrote; whether the checkpoints it links can be fetched). Each is one entry
//! point over the layers below.
//!
//! The binaries name nothing below `ops` but `base`, `model` and the repository handle: the
//! types of the lower layers that they pass or render are re-exported here (the topology every
//! command opens, a validated remote, the errors they map to exit codes), or in the module of
//! the operation that returns them.

pub mod agent_hooks;
pub mod blame;
pub mod capture;
pub mod commit_hooks;
pub mod doctor;
pub mod enable;
pub mod fetch_many;
pub mod gc;
pub mod help_viewer;
pub mod hook_runner;
pub mod hooks;
pub mod import;
pub mod lost_links;
pub mod migrate;
pub mod process;
pub mod range;
pub mod read;
pub mod resolve;
pub mod rewrites;
pub mod session;
pub mod settings;
pub mod side_links;
pub mod stats;
pub mod status;
pub mod sync;
pub mod trust;
pub mod verify;
pub mod write;
pub mod writes_cache;

pub use crate::config::settings::SettingsError;
pub use crate::git::url::Remote;
pub use crate::remote::checkpoint_remote::CheckpointRemoteError;
pub use crate::store::StoreError;
pub use crate::topology::{Topology, TopologyError};
