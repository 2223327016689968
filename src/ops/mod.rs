//! The operations commands run: staged sessions, the commit hooks and their installation, the
//! rewrite map, gc, migration, doctor, fetching many checkpoints, resolving what `show` names,
//! the push policy, the one hook runner, consent to the committed settings (`trust`), and `blame`/`why` (which checkpoint and prompt wrote a line). Each is one entry point over the layers below.

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
pub mod range;
pub mod read;
pub mod resolve;
pub mod rewrites;
pub mod session;
pub mod settings;
pub mod sync;
pub mod trust;
pub mod write;
pub mod writes_cache;
