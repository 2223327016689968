use super::*;
use serde_json::json;

fn decode(v: Value) -> Result<CheckpointsConfig, SettingsError> {
    decode_block(v, ".entire/settings.json")
}

#[test]
fn primary_and_mirrors_with_config_kept_verbatim() {
    let c = decode(json!({"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": "/x", "n": [1]}}]})).unwrap();
    assert_eq!(c.primary.kind, "git-refs");
    assert_eq!(c.mirrors[0].config, Some(json!({"dir": "/x", "n": [1]})));
}

#[test]
fn strict_block() {
    let err = decode(json!({"primary": {"type": "git-refs"}, "mirorrs": []})).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "invalid checkpoints config in .entire/settings.json: unknown field `mirorrs`"
        ),
        "{err}"
    );
    assert!(err.to_string().contains("newer CLI"));
    assert_eq!(
        decode(json!({"primary": {}})).unwrap_err().to_string(),
        "invalid checkpoints config: checkpoints.primary.type is required"
    );
    assert_eq!(
        decode(json!({"primary": {"type": "git-refs"}, "mirrors": [{"config": {}}]}))
            .unwrap_err()
            .to_string(),
        "invalid checkpoints config: checkpoints.mirrors[0].type is required"
    );
    assert!(decode(json!({"primary": {"type": 7}})).is_err());
    assert!(decode(json!({"primary": "git-refs"})).is_err());
}

/// A work tree (with a `.git` common dir) holding `.entire/<name>` for each of `files`;
/// the settings files as read (the per-clone one moved into the common dir).
fn work_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SettingsFiles) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(SETTINGS_DIR)).unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(SETTINGS_DIR).join(name), text).unwrap();
    }
    let read = read_again(dir.path());
    (dir, read)
}

/// The settings files of the work tree [`work_tree`] made, read again.
fn read_again(root: &Path) -> SettingsFiles {
    SettingsFiles::read(Some(root), Some(&root.join(".git")), &NoContext)
}

#[test]
fn files_fail_soft_and_local_wins() {
    let (dir, files) = work_tree(&[]);
    let root = dir.path();
    assert_eq!(
        files.checkpoints_config().unwrap().source,
        ConfigSource::Default
    );
    let resolved = || read_again(root).checkpoints_config();
    std::fs::write(root.join(".entire/settings.json"), "{not json").unwrap();
    assert_eq!(resolved().unwrap().config, None);
    std::fs::write(
        root.join(".entire/settings.json"),
        r#"{"enabled": "yes", "checkpoints": null}"#,
    )
    .unwrap();
    assert_eq!(resolved().unwrap().config, None);
    std::fs::write(
        root.join(".entire/settings.json"),
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}], "bogus": 1}}"#,
    )
    .unwrap();
    assert!(resolved().is_err(), "invalid base block is an error");
    std::fs::write(
        root.join(".entire/settings.local.json"),
        r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#,
    )
    .unwrap();
    let r = resolved().unwrap();
    assert_eq!(r.source, ConfigSource::SettingsLocal);
    let c = r.config.unwrap();
    assert_eq!(c.primary.kind, "git-branch");
    assert!(
        c.mirrors.is_empty(),
        "the local block replaces the base block wholesale"
    );
}

#[test]
fn settings_files_are_never_read_through_a_link() {
    let (dir, _) = work_tree(&[]);
    let root = dir.path();
    let outside = root.join("outside.json");
    std::fs::write(
        &outside,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, root.join(".entire/settings.json")).unwrap();
    std::fs::create_dir(root.join(".git/entire")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join(".git/entire/settings.local.json")).unwrap();
    let files = read_again(root);
    assert_eq!(files.checkpoints_config().unwrap().config, None);
    assert_eq!(
        files.warnings(),
        [SettingsWarning::Link {
            path: ".entire/settings.json".into()
        }]
    );
}

#[test]
fn the_users_per_clone_file_moves_into_the_common_dir() {
    let local = r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#;
    let (dir, files) = work_tree(&[(LOCAL_SETTINGS_FILE, local)]);
    let root = dir.path();
    assert_eq!(
        files.warnings(),
        [SettingsWarning::Moved { replacing: false }]
    );
    assert!(!root.join(".entire/settings.local.json").exists());
    assert_eq!(
        std::fs::read_to_string(root.join(".git/entire/settings.local.json")).unwrap(),
        local
    );
    assert_eq!(files.local(), Some(&serde_json::from_str(local).unwrap()));
    // Written again at the old place, it is the newer word: it replaces the one moved, which
    // is kept beside it.
    let newer = r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#;
    std::fs::write(root.join(".entire/settings.local.json"), newer).unwrap();
    let files = read_again(root);
    assert_eq!(
        files.warnings(),
        [SettingsWarning::Moved { replacing: true }]
    );
    assert_eq!(
        files
            .checkpoints_config()
            .unwrap()
            .config
            .unwrap()
            .primary
            .kind,
        "git-branch"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/entire/settings.local.json.replaced")).unwrap(),
        local
    );
    assert!(read_again(root).warnings().is_empty(), "moved once");
}

#[test]
fn a_per_clone_file_under_a_foreign_settings_dir_stays_unread() {
    let local = r#"{"redaction": {"enabled": false}}"#;
    // .entire a link to a directory of the work tree.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("conf")).unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join("conf/settings.local.json"), local).unwrap();
    std::fs::write(
        root.join("conf/settings.json"),
        r#"{"redaction": {"enabled": false}}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink("conf", root.join(".entire")).unwrap();
    let files = read_again(root);
    assert!(files.redactor().unwrap().is_enabled());
    assert_eq!(files.local(), None);
    assert!(files.committed().is_some(), "read as the committed file is");
    assert!(matches!(
        files.warnings(),
        [SettingsWarning::ForeignLocalFile {
            why: ForeignDir::Symlink,
            ..
        }]
    ));
    assert!(root.join("conf/settings.local.json").exists(), "left alone");
    // .entire a repository of its own (a submodule).
    let (dir, files) = work_tree(&[]);
    std::fs::remove_dir(dir.path().join(".entire")).unwrap();
    std::fs::create_dir_all(dir.path().join(".entire/.git")).unwrap();
    std::fs::write(dir.path().join(".entire/settings.local.json"), local).unwrap();
    drop(files);
    let files = read_again(dir.path());
    assert!(files.redactor().unwrap().is_enabled());
    assert!(matches!(
        files.warnings(),
        [SettingsWarning::ForeignLocalFile {
            why: ForeignDir::Submodule,
            ..
        }]
    ));
}

#[test]
fn approval_is_of_what_the_file_asks_for() {
    let doc = |v: &str| -> Value { serde_json::from_str(v).unwrap() };
    let remote = r#"{"strategy_options": {"checkpoint_remote": {"url": "https://a/b"}, "push_sessions": true}, "redaction": {"rules": []}}"#;
    let a = asks_digest(&doc(remote));
    // Other keys, their order and white space do not change it.
    assert_eq!(
        a,
        asks_digest(&doc(
            r#"{"redaction": {"rules": [{"name": "x", "pattern": "y"}]},
                "strategy_options": {"push_sessions": false, "checkpoint_remote": {"url": "https://a/b"}}}"#
        ))
    );
    // Where checkpoints go does.
    assert_ne!(
        a,
        asks_digest(&doc(
            r#"{"strategy_options": {"checkpoint_remote": {"url": "https://a/c"}}}"#
        ))
    );
    assert_ne!(
        a,
        asks_digest(&doc(
            r#"{"strategy_options": {"checkpoint_remote": {"url": "https://a/b"}}, "checkpoints": {"mirrors": [{"type": "fs"}]}}"#
        ))
    );
    assert_ne!(a, asks_digest(&doc("{}")));
}

#[test]
fn a_file_that_does_not_parse_is_reported_and_refuses_writes() {
    for (_dir, files) in [work_tree(&[]), work_tree(&[(SETTINGS_FILE, " \n")])] {
        assert!(files.unparseable().is_empty());
        assert_eq!(files.refuse_writes(), Ok(()));
    }
    let (_dir, files) = work_tree(&[
        (
            SETTINGS_FILE,
            r#"{"checkpoints": {"primary": {"type": "git-refs"}},}"#,
        ),
        (LOCAL_SETTINGS_FILE, "{"),
    ]);
    let paths: Vec<String> = files
        .unparseable()
        .iter()
        .map(|e| match e {
            SettingsError::Syntax { path, message } => {
                assert!(message.contains("line 1"), "{message}");
                path.clone()
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        paths,
        [".git/entire/settings.local.json", ".entire/settings.json"]
    );
    assert!(files.unparseable()[1]
        .to_string()
        .starts_with(".entire/settings.json is not valid JSON: trailing comma"));
    let refused = files.refuse_writes().unwrap_err();
    assert!(
        refused.to_string().starts_with(
            "refusing to write checkpoints: .git/entire/settings.local.json and .entire/settings.json cannot be parsed"
        ),
        "{refused}"
    );
    // Reads go on without them: the default store.
    assert_eq!(files.checkpoints_config().unwrap().config, None);
}

#[test]
fn redaction_is_never_off_while_a_file_does_not_parse() {
    let off = r#"{"redaction": {"enabled": false, "rules": [{"name": "corp", "pattern": "CORPSECRET-[0-9]+"}]}}"#;
    let (_dir, files) = work_tree(&[(LOCAL_SETTINGS_FILE, off)]);
    assert!(!files.redactor().unwrap().is_enabled());
    let (_dir, files) = work_tree(&[(LOCAL_SETTINGS_FILE, off), (SETTINGS_FILE, "{,}")]);
    let r = files.redactor().unwrap();
    assert!(r.is_enabled());
    assert_eq!(
        r.redact_str("CORPSECRET-42 and AKIAIOSFODNN7EXAMPLE").0,
        "REDACTED and REDACTED"
    );
}

#[test]
fn the_committed_file_cannot_turn_redaction_off_nor_fail_on_a_rule() {
    let committed = r#"{"redaction": {"enabled": false, "rules": [{"name": "corp", "pattern": "CORPSECRET-[0-9]+"}, {"name": "all", "pattern": ".*"}]}}"#;
    let (_dir, files) = work_tree(&[(SETTINGS_FILE, committed)]);
    let r = files.redactor().unwrap();
    assert!(r.is_enabled());
    assert_eq!(r.redact_str("CORPSECRET-42 x").0, "REDACTED x");
    let warnings: Vec<String> = files
        .redaction_warnings()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("cannot turn redaction off"));
    assert!(warnings[1].contains("\"all\"") && warnings[1].contains("empty string"));
}

#[test]
fn a_refused_rule_names_its_file() {
    let (_dir, files) = work_tree(&[(
        LOCAL_SETTINGS_FILE,
        r#"{"redaction": {"rules": [{"name": "greedy", "pattern": ".*"}]}}"#,
    )]);
    let err = files.redactor().err().unwrap();
    assert_eq!(
        err,
        SettingsError::Rule {
            path: ".git/entire/settings.local.json".into(),
            source: crate::model::redact::RedactError::MatchesEmpty {
                name: "greedy".into()
            }
        }
    );
}
