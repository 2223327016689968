//! The settings: `.entire/settings.json`, `.entire/settings.local.json` and the environment,
//! parsed into typed values. Below everything that reads a setting; knows nothing of stores.

pub mod settings;
