//! Integration tests: real `git`, the real binaries, real repositories in temp dirs.
//! The modules live in `tests/cli/`.

#[macro_use]
#[path = "cli/env.rs"]
mod env;
#[path = "cli/fixtures.rs"]
mod fixtures;

#[path = "cli/agents.rs"]
mod agents;
#[path = "cli/archives.rs"]
mod archives;
#[path = "cli/ask_once.rs"]
mod ask_once;
#[path = "cli/backfill.rs"]
mod backfill;
#[path = "cli/bad_input.rs"]
mod bad_input;
#[path = "cli/binaries.rs"]
mod binaries;
#[path = "cli/blame.rs"]
mod blame;
#[path = "cli/capture.rs"]
mod capture;
#[path = "cli/case_fold.rs"]
mod case_fold;
#[path = "cli/cat.rs"]
mod cat;
#[path = "cli/checkpoint_remote.rs"]
mod checkpoint_remote;
#[path = "cli/commit_hooks.rs"]
mod commit_hooks;
#[path = "cli/compat.rs"]
mod compat;
#[path = "cli/completion.rs"]
mod completion;
#[path = "cli/concurrency.rs"]
mod concurrency;
#[path = "cli/config_cmd.rs"]
mod config_cmd;
#[path = "cli/conversation.rs"]
mod conversation;
#[path = "cli/crash.rs"]
mod crash;
#[path = "cli/credentials.rs"]
mod credentials;
#[path = "cli/deadlines.rs"]
mod deadlines;
#[path = "cli/doctor.rs"]
mod doctor;
#[path = "cli/enable.rs"]
mod enable;
#[path = "cli/evasion.rs"]
mod evasion;
#[path = "cli/exit_codes.rs"]
mod exit_codes;
#[path = "cli/fetch.rs"]
mod fetch;
#[path = "cli/first_day.rs"]
mod first_day;
#[path = "cli/formats.rs"]
mod formats;
#[path = "cli/fresh_clone.rs"]
mod fresh_clone;
#[path = "cli/gc.rs"]
mod gc;
#[path = "cli/git_support.rs"]
mod git_support;
#[path = "cli/hook_managers.rs"]
mod hook_managers;
#[path = "cli/hostile_data.rs"]
mod hostile_data;
#[path = "cli/human_output.rs"]
mod human_output;
#[path = "cli/idle_hooks.rs"]
mod idle_hooks;
#[path = "cli/linked_commits.rs"]
mod linked_commits;
#[path = "cli/list.rs"]
mod list;
#[path = "cli/list_range.rs"]
mod list_range;
#[path = "cli/log.rs"]
mod log;
#[path = "cli/maintenance.rs"]
mod maintenance;
#[path = "cli/many_trailers.rs"]
mod many_trailers;
#[path = "cli/messages.rs"]
mod messages;
#[path = "cli/migrate.rs"]
mod migrate;
#[path = "cli/misshapen_refs.rs"]
mod misshapen_refs;
#[path = "cli/packed_refs.rs"]
mod packed_refs;
#[path = "cli/partial_clone.rs"]
mod partial_clone;
#[path = "cli/partial_fetch.rs"]
mod partial_fetch;
#[path = "cli/push.rs"]
mod push;
#[path = "cli/real_agents/mod.rs"]
mod real_agents;
#[path = "cli/redaction.rs"]
mod redaction;
#[path = "cli/remote_fetch.rs"]
mod remote_fetch;
#[path = "cli/report.rs"]
mod report;
#[path = "cli/rewrite.rs"]
mod rewrite;
#[path = "cli/scale.rs"]
mod scale;
#[path = "cli/schemas.rs"]
mod schemas;
#[path = "cli/servers.rs"]
mod servers;
#[path = "cli/session_import.rs"]
mod session_import;
#[path = "cli/settings_errors.rs"]
mod settings_errors;
#[path = "cli/shallow_clone.rs"]
mod shallow_clone;
#[path = "cli/shapes.rs"]
mod shapes;
#[path = "cli/show.rs"]
mod show;
#[path = "cli/sparse_checkout.rs"]
mod sparse_checkout;
#[path = "cli/stats.rs"]
mod stats;
#[path = "cli/summary_index.rs"]
mod summary_index;
#[path = "cli/token_usage.rs"]
mod token_usage;
#[path = "cli/topology.rs"]
mod topology;
#[path = "cli/trust.rs"]
mod trust;
#[path = "cli/untrusted.rs"]
mod untrusted;
#[path = "cli/verify.rs"]
mod verify;
#[path = "cli/write.rs"]
mod write;
