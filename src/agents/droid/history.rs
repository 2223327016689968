//! Where Factory Droid keeps its sessions: `~/.factory/sessions/<the directory it ran in, `/`
//! as ->/<session>.jsonl`, beside a `<session>.settings.json` that holds the session's token
//! usage (`tokenUsage`, its totals: the transcript records none, as 0.215.0 writes them).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::history::{stem_with, History, UsageBeside};
use crate::agents::id::TranscriptFormat;
use crate::agents::turns::json::int;
use crate::model::documents::TokenUsage;

fn places(home: &Path, worktree: &Path) -> Vec<PathBuf> {
    let dir = worktree.to_string_lossy().replace('/', "-");
    vec![home.join(".factory").join("sessions").join(dir)]
}

fn session(path: &Path, _head: &[u8], _worktree: &Path) -> Option<String> {
    stem_with(path, "jsonl")
}

/// `<session>.settings.json` beside the transcript `<session>.jsonl`.
fn settings_file(transcript: &Path) -> Option<PathBuf> {
    let stem = stem_with(transcript, "jsonl")?;
    Some(transcript.with_file_name(format!("{stem}.settings.json")))
}

/// The session's `tokenUsage` in its settings file.
fn settings_usage(bytes: &[u8]) -> Option<TokenUsage> {
    let settings: Value = serde_json::from_slice(bytes).ok()?;
    let t = settings.get("tokenUsage").filter(|t| t.is_object())?;
    Some(TokenUsage {
        input_tokens: int(t, "/inputTokens"),
        cache_creation_tokens: int(t, "/cacheCreationTokens"),
        cache_read_tokens: int(t, "/cacheReadTokens"),
        output_tokens: int(t, "/outputTokens"),
        ..TokenUsage::default()
    })
}

/// Droid's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "droid",
    format: TranscriptFormat::Droid,
    places,
    depth: 1,
    session,
    usage_beside: Some(UsageBeside {
        file: settings_file,
        read: settings_usage,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_token_usage_is_read_from_the_settings_beside_it() {
        let file = settings_file(Path::new("/h/.factory/sessions/-w/abc.jsonl")).unwrap();
        assert_eq!(file, Path::new("/h/.factory/sessions/-w/abc.settings.json"));
        // As Droid 0.215.0 writes it, trimmed.
        let settings = br#"{"model": "custom:Scripted-0", "tokenUsage": {"inputTokens": 30,
            "outputTokens": 164, "cacheCreationTokens": 2, "cacheReadTokens": 5,
            "thinkingTokens": 0, "factoryCredits": 0},
            "lastCallTokenUsage": {"inputTokens": 10, "outputTokens": 4}}"#;
        let usage = settings_usage(settings).unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (30, 164));
        assert_eq!(
            (usage.cache_creation_tokens, usage.cache_read_tokens),
            (2, 5)
        );
        assert!(settings_usage(b"{}").is_none());
    }
}
