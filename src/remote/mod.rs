//! The network: where checkpoints travel (checkpoint remote, destinations and their delivery
//! records), fetching (on demand, named, all, partial; what a remote lacked, remembered),
//! pushing with recovery, and the cost
//! awareness of large remotes. Above the stores, which it fills and drains.

pub mod checkpoint_remote;
pub mod destination;
pub mod fetch;
pub mod held;
pub mod misses;
pub mod on_demand;
pub mod partial;
pub mod push;
pub mod scale;
