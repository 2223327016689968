//! The `apply_patch` form of a patch (Codex's tool, and OpenCode's and others' of that name):
//! what each file it names gains and loses. Codex's reader and the arguments of any agent's
//! file-writing call ([`super::tool_args`]) both read it.

/// A file an `apply_patch` patch changes: the lines it adds and removes (without their `+`
/// and `-`), in order.
pub(crate) struct PatchFile<'p> {
    pub(crate) file: String,
    pub(crate) added: Vec<&'p str>,
    pub(crate) removed: Vec<&'p str>,
}

/// The files an `apply_patch` patch (Codex's, and OpenCode's tool of that name) adds lines to,
/// in order.
pub(crate) fn patch_files(patch: &str) -> Vec<PatchFile<'_>> {
    let mut files: Vec<PatchFile<'_>> = Vec::new();
    let mut current: Option<usize> = None;
    for l in patch.lines() {
        if let Some(path) = l
            .strip_prefix("*** Add File: ")
            .or_else(|| l.strip_prefix("*** Update File: "))
        {
            files.push(PatchFile {
                file: path.trim().to_owned(),
                added: Vec::new(),
                removed: Vec::new(),
            });
            current = Some(files.len() - 1);
        } else if let Some(path) = l.strip_prefix("*** Move to: ") {
            if let Some(i) = current {
                files[i].file = path.trim().to_owned();
            }
        } else if l.starts_with("*** Delete File: ") {
            current = None;
        } else if let (Some(added), Some(i)) = (l.strip_prefix('+'), current) {
            files[i].added.push(added);
        } else if let (Some(removed), Some(i)) = (l.strip_prefix('-'), current) {
            files[i].removed.push(removed);
        }
    }
    files.retain(|f| !f.added.is_empty());
    files
}
