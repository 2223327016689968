//! The settings: `.entire/settings.json`, `.entire/settings.local.json` and the environment,
//! parsed into typed values, and the editing of those files. Below everything that reads a
//! setting; knows nothing of stores.

pub mod edit;
pub mod settings;
