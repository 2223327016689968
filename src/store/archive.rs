//! Layouts the reference shipped and rolled back, read-only (docs/format.md, "Layouts read but
//! never written"): the v1 store kept as the unsharded ref [`V1_REF`] (or [`V1_1_REF`], the
//! reference's "checkpoints v1.1") instead of the branch, and
//! "checkpoints v2", whose documents are on [`V2_MAIN`] and whose raw transcripts are on
//! generation refs under [`V2_FULL`] (`current`, then archived `<13 digits>` generations).
//!
//! Both keep each checkpoint at `<id[:2]>/<id[2:]>/`, as the v1 branch does, so the git-branch
//! store reads them as further copies of itself; this module knows their names and what v2 keeps
//! elsewhere: a session's raw transcript (`raw_transcript`, `raw_transcript.001`, ..., or in
//! older archived generations `full.jsonl` and its chunks) and its hash
//! (`raw_transcript_hash.txt`, or `content_hash.txt`), from the first generation that holds
//! them: `current`, then the archived ones, newest first. These refs are never written,
//! pushed or deleted; a remote's copies live under a private prefix (`remote::on_demand`).

use crate::git::objects::Oid;
use crate::git::objects::{ObjectKind, Tree};

use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::model::transcript;
use crate::store::{git_err, tree, StoreError};

/// The v1 store as one unsharded ref (instead of the branch `refs/heads/entire/checkpoints/v1`).
pub const V1_REF: &str = "refs/entire/checkpoints/v1";
/// The v1 store under the reference's "checkpoints v1.1" ref: the same tree as [`V1_REF`].
pub const V1_1_REF: &str = "refs/entire/checkpoints/v1.1";
/// The v2 documents (metadata, prompts, compact transcripts).
pub const V2_MAIN: &str = "refs/entire/checkpoints/v2/main";
/// The prefix of the v2 raw-transcript generations.
pub const V2_FULL: &str = "refs/entire/checkpoints/v2/full/";
/// What the archived refs' names share, and a remote's copies replace.
const PREFIX: &str = "refs/entire/checkpoints/";

/// The name a remote's copy of the archived ref `name` takes under `copies` (its copy prefix,
/// ending in `/`): `<copies>v1`, `<copies>v2/main`, `<copies>v2/full/current`.
pub fn copy_name(copies: &str, name: &str) -> String {
    format!("{copies}{}", name.strip_prefix(PREFIX).unwrap_or(name))
}

/// Whether `leaf` names a v2 generation: `current`, or an archived one (13 digits).
pub fn is_generation(leaf: &str) -> bool {
    leaf == "current" || (leaf.len() == 13 && leaf.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `name` is an archived ref of a remote (under its `PREFIX`) that copies keep:
/// [`V1_REF`], [`V1_1_REF`], [`V2_MAIN`] or a generation.
pub fn is_archived(name: &str) -> bool {
    name == V1_REF
        || name == V1_1_REF
        || name == V2_MAIN
        || name.strip_prefix(V2_FULL).is_some_and(is_generation)
}

/// What layout the ref `name` a checkpoint was read from has, when it is an archived one (the
/// reference's own ref, or a remote's copy of it): for people, `show` says it.
pub fn layout_of(name: &str) -> Option<&'static str> {
    if generations_of(name).is_some() {
        Some("checkpoints v2, read-only")
    } else if name == V1_REF || name.ends_with("/archive/v1") {
        Some("the v1 store as one ref, read-only")
    } else if name == V1_1_REF || name.ends_with("/archive/v1.1") {
        Some("the v1 store as the v1.1 ref, read-only")
    } else {
        None
    }
}

/// The prefix of the generations beside the v2 documents ref `main` (the reference's own, or a
/// remote's copy of it), if `main` is one.
pub(crate) fn generations_of(main: &str) -> Option<String> {
    main.strip_suffix("v2/main")
        .map(|base| format!("{base}v2/full/"))
}

/// What a v2 session keeps in its generation instead of beside its documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawFile {
    /// The raw transcript (`N/full.jsonl` to readers).
    Transcript,
    /// Its hash (`N/content_hash.txt` to readers).
    Hash,
}

impl RawFile {
    /// The file a reader asks for at `path` (inside a checkpoint), when v2 keeps it in a
    /// generation: the session directory and which file.
    pub(crate) fn of(path: &str) -> Option<(&str, RawFile)> {
        let (dir, name) = path.trim_start_matches('/').rsplit_once('/')?;
        match name {
            transcript::TRANSCRIPT_FILE => Some((dir, RawFile::Transcript)),
            "content_hash.txt" => Some((dir, RawFile::Hash)),
            _ => None,
        }
    }
}

/// The generations under `prefix`, `current` first, then the archived ones newest first.
fn generations(repo: &Repo, prefix: &str) -> Result<Vec<(String, Option<Oid>)>, StoreError> {
    let mut refs: Vec<(String, Option<Oid>)> = repo
        .refs_under(prefix)?
        .into_iter()
        .filter(|(name, _)| name.strip_prefix(prefix).is_some_and(is_generation))
        .collect();
    // "current" sorts after every number; the archived ones newest (largest) first.
    refs.sort_by(|a, b| {
        let key = |n: &str| n.strip_prefix(prefix).map(|l| l != "current");
        key(&a.0).cmp(&key(&b.0)).then_with(|| b.0.cmp(&a.0))
    });
    Ok(refs)
}

/// `file` of the session in `dir` of v2 checkpoint `id`, whose documents are on `main`, with
/// the generation it came from: the first generation beside it that holds the session.
/// `Ok(None)` when none does. A generation whose ref is not a commit is skipped, and named in
/// the error when no other generation holds the file; a chunk missing from the middle of a
/// transcript is an error.
pub(crate) fn read_raw(
    repo: &Repo,
    main: &str,
    id: &CheckpointId,
    dir: &str,
    file: RawFile,
) -> Result<Option<(Vec<u8>, String)>, StoreError> {
    let Some(prefix) = generations_of(main) else {
        return Ok(None);
    };
    let path = match file {
        RawFile::Transcript => format!("{dir}/{}", transcript::TRANSCRIPT_FILE),
        RawFile::Hash => format!("{dir}/content_hash.txt"),
    };
    let limits = repo.settings().limits();
    let mut skipped = None;
    for (name, tip) in generations(repo, &prefix)? {
        let tree = tip
            .and_then(|t| repo.objects().find_commit(t).ok())
            .and_then(|c| c.tree().ok());
        let Some(root) = tree else {
            skipped.get_or_insert(name);
            continue;
        };
        let session = format!("{}/{dir}", id.v1_path());
        let slot = match root.get_path(&session) {
            Ok(e) if e.kind() == Some(ObjectKind::Tree) => repo
                .objects()
                .find_tree(e.id())
                .map_err(git_err(format!("read {session} of {name}")))?,
            _ => continue,
        };
        let found = match file {
            RawFile::Transcript => ["raw_transcript", transcript::TRANSCRIPT_FILE]
                .into_iter()
                .find_map(|base| {
                    tree::read_chunks(repo.objects(), &slot, id, &path, base, &limits).transpose()
                })
                .transpose()?,
            RawFile::Hash => ["raw_transcript_hash.txt", "content_hash.txt"]
                .into_iter()
                .find_map(|name| {
                    tree::read_blob_in(repo.objects(), &slot, id, &path, name, &limits).transpose()
                })
                .transpose()?,
        };
        if let Some(bytes) = found {
            return Ok(Some((bytes, name)));
        }
    }
    match skipped {
        Some(reference) => Err(StoreError::Generation {
            id: id.clone(),
            path,
            reference,
        }),
        None => Ok(None),
    }
}

/// The files of a checkpoints-v2 checkpoint: its documents' tree, and each session's raw
/// transcript and hash from its generation ([`read_raw`]; read whole, within the limit on
/// bytes read into memory, and streamed from there).
pub(crate) struct V2Files<'r> {
    repo: &'r Repo,
    main: String,
    id: CheckpointId,
    documents: tree::TreeFiles<'r>,
}

impl<'r> V2Files<'r> {
    /// The files of v2 checkpoint `id`, whose documents (from `main`) are `documents`.
    pub(crate) fn new(
        repo: &'r Repo,
        main: &str,
        id: &CheckpointId,
        documents: tree::TreeFiles<'r>,
    ) -> Self {
        V2Files {
            repo,
            main: main.to_owned(),
            id: id.clone(),
            documents,
        }
    }

    /// The file at `path` when v2 keeps it in a generation: `None` for the documents.
    fn raw(&self, path: &str) -> Option<Result<Vec<u8>, StoreError>> {
        let (dir, file) = RawFile::of(path)?;
        Some(
            read_raw(self.repo, &self.main, &self.id, dir, file).and_then(|found| {
                found
                    .map(|(bytes, _)| bytes)
                    .ok_or_else(|| StoreError::FileNotFound {
                        id: self.id.clone(),
                        path: path.to_owned(),
                    })
            }),
        )
    }
}

impl crate::store::CheckpointFiles for V2Files<'_> {
    fn read(&self, path: &str) -> Result<Vec<u8>, StoreError> {
        match self.raw(path) {
            Some(found) => found,
            None => self.documents.read(path),
        }
    }

    fn stream(&self, path: &str) -> Result<Box<dyn std::io::Read + '_>, StoreError> {
        match self.raw(path) {
            Some(found) => Ok(Box::new(std::io::Cursor::new(found?))),
            None => self.documents.stream(path),
        }
    }
}

/// A checkpoints-v2 checkpoint in the v1 layout, for `migrate`.
pub(crate) struct Imported {
    /// The checkpoint subtree: the documents with each session's raw transcript (as
    /// `full.jsonl` and its chunks) and hash (`content_hash.txt`) beside them.
    pub tree: Oid,
    /// Each session whose transcript was found: its slot and the generation it came from.
    pub transcripts: Vec<(usize, String)>,
}

/// The v2 checkpoint `id` whose documents are the subtree `docs` of `main`, in the v1 layout:
/// each session directory gains its raw transcript, chunked as a session write chunks it, and
/// its hash (computed when the generation has none), from the generation that holds it; the
/// root summary's `sessions[]` entries then name `full.jsonl` and `content_hash.txt` as their
/// `transcript` and `content_hash`, and the compact `transcript.jsonl` as `compact_transcript`
/// (every other key as stored). A session whose transcript no generation holds is kept as it is.
/// Writes objects, never a ref.
pub(crate) fn import_v2(
    repo: &Repo,
    main: &str,
    id: &CheckpointId,
    docs: &Tree<'_>,
) -> Result<Imported, StoreError> {
    let git = repo.objects();
    let limits = repo.settings().limits();
    let read =
        tree::read_documents(git, docs, id, &limits)?.ok_or_else(|| StoreError::FileNotFound {
            id: id.clone(),
            path: "metadata.json".to_owned(),
        })?;
    let mut root = git
        .tree_builder(Some(docs))
        .map_err(git_err("start tree"))?;
    let mut transcripts = Vec::new();
    for (slot, dir) in read.dirs.iter().enumerate() {
        let Some((bytes, generation)) = read_raw(repo, main, id, dir, RawFile::Transcript)? else {
            continue;
        };
        let hash = match read_raw(repo, main, id, dir, RawFile::Hash)? {
            Some((h, _)) => h,
            None => transcript::content_hash(&bytes).into_bytes(),
        };
        let session = docs
            .get_name(dir)
            .and_then(|e| git.find_tree(e.id()).ok())
            .ok_or_else(|| StoreError::MissingSession {
                id: id.clone(),
                slot,
                dir: dir.clone(),
            })?;
        let mut b = git
            .tree_builder(Some(&session))
            .map_err(git_err("start tree"))?;
        let chunks = transcript::split(&bytes, transcript::MAX_CHUNK_SIZE).map_err(|source| {
            StoreError::Transcript {
                id: id.clone(),
                source,
            }
        })?;
        for (n, chunk) in chunks.iter().enumerate() {
            tree::insert_blob(git, &mut b, &transcript::chunk_name(n), chunk)?;
        }
        tree::insert_blob(git, &mut b, "content_hash.txt", &hash)?;
        let oid = b.write().map_err(git_err("write session tree"))?;
        root.insert(dir, oid, 0o040000)
            .map_err(git_err(format!("insert {dir}")))?;
        transcripts.push((slot, generation));
    }
    let summary = docs
        .get_name("metadata.json")
        .and_then(|e| git.read_blob(e.id()).ok())
        .unwrap_or_default();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&summary).map_err(|e| StoreError::Corrupt {
            id: id.clone(),
            path: "metadata.json".to_owned(),
            source: crate::model::documents::ModelError::Json {
                what: "root metadata.json",
                source: e,
            },
        })?;
    if let Some(entries) = doc.get_mut("sessions").and_then(|v| v.as_array_mut()) {
        for (slot, _) in &transcripts {
            let (Some(entry), Some(dir)) = (
                entries.get_mut(*slot).and_then(|e| e.as_object_mut()),
                read.dirs.get(*slot),
            ) else {
                continue;
            };
            let base = format!("/{}/{dir}", id.v1_path());
            if let Some(compact) = entry.get("transcript").and_then(|v| v.as_str()) {
                if compact.ends_with("/transcript.jsonl") {
                    let compact = compact.to_owned();
                    entry.insert("compact_transcript".into(), compact.into());
                }
            }
            let full = format!("{base}/{}", transcript::TRANSCRIPT_FILE);
            entry.insert("transcript".into(), full.into());
            entry.insert(
                "content_hash".into(),
                format!("{base}/content_hash.txt").into(),
            );
        }
    }
    tree::insert_blob(
        git,
        &mut root,
        "metadata.json",
        &crate::model::documents::to_json_bytes(&doc),
    )?;
    let tree = root.write().map_err(git_err("write checkpoint tree"))?;
    Ok(Imported { tree, transcripts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            copy_name("refs/x/origin/", V2_MAIN),
            "refs/x/origin/v2/main"
        );
        assert_eq!(copy_name("refs/x/origin/", V1_REF), "refs/x/origin/v1");
        assert!(is_archived("refs/entire/checkpoints/v2/full/0000000000001"));
        assert!(is_archived("refs/entire/checkpoints/v2/full/current"));
        assert!(!is_archived("refs/entire/checkpoints/v2/full/12"));
        assert!(!is_archived("refs/entire/checkpoints/v1/main"));
        assert_eq!(
            generations_of("refs/x/origin/v2/main").as_deref(),
            Some("refs/x/origin/v2/full/")
        );
        assert_eq!(generations_of(V1_REF), None);
        assert_eq!(
            RawFile::of("0/full.jsonl"),
            Some(("0", RawFile::Transcript))
        );
        assert_eq!(
            RawFile::of("/1/content_hash.txt"),
            Some(("1", RawFile::Hash))
        );
        assert_eq!(RawFile::of("1/prompt.txt"), None);
    }
}
