//! The work tree as the tool sees it: upstream crates laid out at their
//! paths, `patches/` mirroring the upstream files we change, and our own
//! files around and inside them.
//!
//! The three operations keep one invariant: every upstream file in the tree
//! equals its pristine content with its patch applied. `sync` establishes it,
//! `save` re-establishes it after an edit by rewriting the patch, and `check`
//! reports every place it does not hold, along with tracked files that are
//! upstream's and so must not be committed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::config::ForkConfig;
use crate::fsutil::{self, fingerprint, list_files, read_optional};
use crate::git;
use crate::patch::{self, FilePatch};
use crate::test_data::Links;
use crate::upstream::PristineDirs;

/// Patches live under `patches/`, one per upstream file, at the file's path
/// plus this extension: `patches/datafusion/sql/src/planner.rs.patch`.
const PATCH_EXTENSION: &str = ".patch";

/// Files smaller than this are too generic (an empty `mod.rs`, a one-line
/// `.gitignore`) to call a copy of an upstream file.
const MIN_COPY_SIZE: usize = 64;

pub struct Workspace {
    root: PathBuf,
    version: String,
    crates: Vec<CrateLayout>,
}

struct CrateLayout {
    /// Where the crate lives, relative to the root.
    path: String,
    pristine: PathBuf,
    /// The crate's files, relative to `pristine` (and to `path`).
    files: Vec<String>,
}

/// An upstream file: where it lives in the tree, and its pristine source.
struct UpstreamFile<'a> {
    path: String,
    pristine: PathBuf,
    crate_path: &'a str,
}

impl Workspace {
    pub fn new(
        root: &Path,
        config: &ForkConfig,
        pristine: &PristineDirs,
    ) -> Result<Self> {
        let crates = config
            .crates
            .iter()
            .map(|c| {
                let dir = pristine
                    .get(&c.name)
                    .with_context(|| format!("no pristine source for {}", c.name))?;
                Ok(CrateLayout {
                    path: c.path.clone(),
                    pristine: dir.clone(),
                    files: list_files(dir)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            root: root.to_path_buf(),
            version: config.version.clone(),
            crates,
        })
    }

    fn upstream_files(&self) -> impl Iterator<Item = UpstreamFile<'_>> {
        self.crates.iter().flat_map(|c| {
            c.files.iter().map(move |f| UpstreamFile {
                path: format!("{}/{f}", c.path),
                pristine: c.pristine.join(f),
                crate_path: &c.path,
            })
        })
    }

    fn patches_dir(&self) -> PathBuf {
        self.root.join("patches")
    }

    /// Where the tool records what it last wrote: in the git folder, which
    /// `cargo clean` leaves alone and which belongs to this clone only.
    fn state_path(&self) -> Result<PathBuf> {
        Ok(git::git_path(&self.root, "xtask/sync-state")?
            .unwrap_or_else(|| self.legacy_state_path()))
    }

    /// Where the state lived before it moved into the git folder.
    fn legacy_state_path(&self) -> PathBuf {
        self.root.join("target").join("xtask").join("sync-state")
    }

    pub fn patch_count(&self) -> Result<usize> {
        Ok(self.patch_files()?.len())
    }

    /// Patch files under `patches/`, relative to it.
    fn patch_files(&self) -> Result<Vec<String>> {
        let dir = self.patches_dir();
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        Ok(list_files(&dir)?
            .into_iter()
            .filter(|f| f.ends_with(PATCH_EXTENSION))
            .collect())
    }

    /// Every patch, applied to its pristine file: the content each patched
    /// upstream file must have. Errors name the patch and the file.
    fn patched_contents(&self) -> Result<BTreeMap<String, Vec<u8>>, Vec<String>> {
        let upstream: HashMap<String, PathBuf> = self
            .upstream_files()
            .map(|f| (f.path, f.pristine))
            .collect();
        let mut contents = BTreeMap::new();
        let mut errors = Vec::new();
        let patch_files = self.patch_files().map_err(|e| vec![format!("{e:#}")])?;
        for patch_file in patch_files {
            let target = patch_file.trim_end_matches(PATCH_EXTENSION).to_string();
            let shown = format!("patches/{patch_file}");
            let result = (|| -> Result<Vec<u8>> {
                let pristine = upstream.get(&target).with_context(|| {
                    format!(
                        "{target} is not a file of the upstream crates at {}",
                        self.version
                    )
                })?;
                let text = std::fs::read_to_string(self.patches_dir().join(&patch_file))?;
                let patch = FilePatch::parse(&text)?;
                if patch.path != target {
                    bail!("it patches {} but is stored for {target}", patch.path);
                }
                let old = std::fs::read_to_string(pristine)
                    .with_context(|| format!("{target} is not a text file"))?;
                Ok(patch.apply(&old)?.into_bytes())
            })();
            match result {
                Ok(bytes) => {
                    contents.insert(target, bytes);
                }
                Err(e) => errors.push(format!(
                    "patch {shown} does not apply to pristine {target} ({}): {e:#}",
                    self.version
                )),
            }
        }
        if errors.is_empty() {
            Ok(contents)
        } else {
            Err(errors)
        }
    }

    /// Lays out every upstream file with its patch applied. Files already
    /// right are left alone, so cargo sees no change. An upstream file edited
    /// since the last sync or save is never overwritten unless `force`.
    pub fn sync(&self, force: bool) -> Result<SyncReport> {
        let tracked = git::tracked_files(&self.root)?;
        let tracked_upstream: Vec<_> = self
            .upstream_files()
            .filter(|f| tracked.contains(&f.path))
            .map(|f| f.path)
            .collect();
        if !tracked_upstream.is_empty() {
            bail!(
                "git tracks upstream files, which sync would overwrite; untrack them \
                 (`git rm --cached`) and keep changes as patches:\n  {}",
                tracked_upstream.join("\n  ")
            );
        }
        // Apply every patch before writing anything, so that a failing patch
        // leaves the tree as it was.
        let patched = self.patched_contents().map_err(|errors| {
            anyhow::anyhow!("{}\nnothing was written", errors.join("\n"))
        })?;

        let state = self.load_state();
        let mut new_state = BTreeMap::new();
        let mut writes = Vec::new();
        let mut conflicts = Vec::new();
        for file in self.upstream_files() {
            let want = match patched.get(&file.path) {
                Some(bytes) => bytes.clone(),
                None => std::fs::read(&file.pristine)
                    .with_context(|| format!("reading {}", file.pristine.display()))?,
            };
            let have = read_optional(&self.root.join(&file.path))?;
            new_state.insert(file.path.clone(), fingerprint(&want));
            match have {
                Some(have) if have == want => {}
                Some(have) if !force && self.is_edit(&file, &have, &state)? => {
                    conflicts.push(file.path);
                }
                _ => writes.push((file.path, want)),
            }
        }
        if !conflicts.is_empty() {
            bail!(
                "these upstream files have edits that are not in patches/; run \
                 `cargo xtask save` to keep them, or `cargo xtask sync --force` to drop them:\n  {}",
                conflicts.join("\n  ")
            );
        }
        for (path, bytes) in &writes {
            fsutil::write(&self.root.join(path), bytes)?;
        }
        self.store_state(&new_state)?;
        Ok(SyncReport {
            crates: self.crates.len(),
            files: new_state.len(),
            written: writes.len(),
            patches: patched.len(),
        })
    }

    /// Rewrites `patches/` from the difference between the pristine crates
    /// and the tree. Only upstream files are looked at: our own new files are
    /// tracked as they are.
    pub fn save(&self) -> Result<SaveReport> {
        self.check_patches_unchanged_since_sync()?;
        let mut wanted = BTreeSet::new();
        let mut report = SaveReport::default();
        let mut new_state = BTreeMap::new();
        let mut missing = Vec::new();
        for file in self.upstream_files() {
            let Some(have) = read_optional(&self.root.join(&file.path))? else {
                missing.push(file.path);
                continue;
            };
            new_state.insert(file.path.clone(), fingerprint(&have));
            let pristine = std::fs::read(&file.pristine)?;
            if have == pristine {
                continue;
            }
            let (Ok(old), Ok(new)) =
                (std::str::from_utf8(&pristine), std::str::from_utf8(&have))
            else {
                bail!(
                    "{} is not UTF-8 text and cannot be kept as a patch",
                    file.path
                );
            };
            let text = patch::diff(&file.path, old, new).expect("contents differ");
            let patch_file = format!("{}{PATCH_EXTENSION}", file.path);
            let dest = self.patches_dir().join(&patch_file);
            match read_optional(&dest)? {
                Some(old_text) if old_text == text.as_bytes() => {}
                Some(_) => {
                    report.changed.push(patch_file.clone());
                    fsutil::write(&dest, text.as_bytes())?;
                }
                None => {
                    report.added.push(patch_file.clone());
                    fsutil::write(&dest, text.as_bytes())?;
                }
            }
            wanted.insert(patch_file);
        }
        if !missing.is_empty() {
            bail!(
                "upstream files are missing from the tree (removing an upstream file is not \
                 supported; `cargo xtask sync` restores them):\n  {}",
                missing.join("\n  ")
            );
        }
        for existing in self.patch_files()? {
            if !wanted.contains(&existing) {
                std::fs::remove_file(self.patches_dir().join(&existing))?;
                report.removed.push(existing);
            }
        }
        if remove_empty_dirs(&self.patches_dir())? {
            std::fs::remove_dir(self.patches_dir())?;
        }
        report.total = wanted.len();
        self.store_state(&new_state)?;
        Ok(report)
    }

    /// Whether `have`, an upstream file's content that differs from what the
    /// patches make of it, is the user's edit, rather than what the tool
    /// wrote from an earlier version of the patches (before a pull, say).
    ///
    /// The state says what the tool last wrote. Where it has no record of
    /// the file (a state lost, or never kept), the file is an edit unless it
    /// equals the pristine file with some committed version of its patch
    /// applied, or without one.
    fn is_edit(
        &self,
        file: &UpstreamFile<'_>,
        have: &[u8],
        state: &HashMap<String, u64>,
    ) -> Result<bool> {
        match state.get(&file.path) {
            Some(written) => Ok(*written != fingerprint(have)),
            None => Ok(!self.is_earlier_materialization(file, have)?),
        }
    }

    /// Whether `have` is what `sync` made of `file` from a committed version
    /// of its patch, or from no patch before the first one.
    fn is_earlier_materialization(
        &self,
        file: &UpstreamFile<'_>,
        have: &[u8],
    ) -> Result<bool> {
        let patch_file = format!("patches/{}{PATCH_EXTENSION}", file.path);
        let versions = git::committed_versions(&self.root, &patch_file)?;
        if versions.is_empty() {
            return Ok(false);
        }
        let pristine = std::fs::read(&file.pristine)?;
        // The patch has a history, so before its first commit there was none
        if have == pristine {
            return Ok(true);
        }
        let Ok(old) = std::str::from_utf8(&pristine) else {
            return Ok(false);
        };
        for text in versions.into_iter().flatten() {
            let applied = std::str::from_utf8(&text)
                .ok()
                .and_then(|text| FilePatch::parse(text).ok())
                .and_then(|patch| patch.apply(old).ok());
            if applied.is_some_and(|content| content.as_bytes() == have) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Refuses to save while the tree is behind `patches/`: where a patch
    /// changed after the tool last wrote its file (a pull, a checkout), the
    /// file still holds the old version, and saving it would silently undo
    /// the change.
    fn check_patches_unchanged_since_sync(&self) -> Result<()> {
        // Patches that no longer apply (a new upstream release being
        // adopted) cannot be compared; their files are saved as they are
        let Ok(patched) = self.patched_contents() else {
            return Ok(());
        };
        let state = self.load_state();
        let mut behind = Vec::new();
        for file in self.upstream_files() {
            let Some(have) = read_optional(&self.root.join(&file.path))? else {
                continue;
            };
            let want = match patched.get(&file.path) {
                Some(bytes) => bytes.clone(),
                None => std::fs::read(&file.pristine)?,
            };
            if have == want {
                continue;
            }
            let patch_changed = match state.get(&file.path) {
                Some(written) => *written != fingerprint(&want),
                None => self.is_earlier_materialization(&file, &have)?,
            };
            if patch_changed {
                behind.push(file.path);
            }
        }
        if !behind.is_empty() {
            bail!(
                "patches/ changed since these files were last synced (a pull or a \
                 checkout?), so saving them would undo that change; nothing was saved. \
                 Run `cargo xtask sync` first (an edit of yours to one of them then \
                 shows as a conflict: keep a copy, `sync --force`, redo the edit):\n  {}",
                behind.join("\n  ")
            );
        }
        Ok(())
    }

    /// Every way the tree breaks the invariant, and every tracked file that
    /// is upstream's. `release` holds the pristine folders of all the
    /// release's crates, patched or not.
    pub fn check(&self, release: &[PathBuf]) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let patched = match self.patched_contents() {
            Ok(patched) => patched,
            Err(errors) => {
                problems.extend(errors);
                BTreeMap::new()
            }
        };
        let unapplied: BTreeSet<String> = self
            .patch_files()?
            .into_iter()
            .map(|p| p.trim_end_matches(PATCH_EXTENSION).to_string())
            .filter(|p| !patched.contains_key(p))
            .collect();

        // Crates with no upstream file in the tree have not been laid out yet
        // (a fresh clone): there is nothing to compare.
        let laid_out: BTreeSet<&str> = self
            .upstream_files()
            .filter(|f| self.root.join(&f.path).exists())
            .map(|f| f.crate_path)
            .collect();
        for file in self.upstream_files() {
            if !laid_out.contains(file.crate_path) || unapplied.contains(&file.path) {
                continue;
            }
            let want = match patched.get(&file.path) {
                Some(bytes) => bytes.clone(),
                None => std::fs::read(&file.pristine)?,
            };
            match read_optional(&self.root.join(&file.path))? {
                None => problems
                    .push(format!("{}: missing; run `cargo xtask sync`", file.path)),
                Some(have) if have != want => problems.push(format!(
                    "{}: edited, but the edit is not in patches/; run `cargo xtask save`",
                    file.path
                )),
                Some(_) => {}
            }
        }

        let upstream_paths: BTreeSet<String> =
            self.upstream_files().map(|f| f.path).collect();
        let tracked = git::tracked_files(&self.root)?;
        let release_files = release_fingerprints(release)?;
        for path in &tracked {
            if upstream_paths.contains(path) {
                problems.push(format!(
                    "{path}: an upstream file is tracked by git; untrack it and keep changes as a patch"
                ));
                continue;
            }
            let Some(bytes) = read_optional(&self.root.join(path))? else {
                continue;
            };
            if bytes.len() < MIN_COPY_SIZE {
                continue;
            }
            if let Some(sources) = release_files.get(&fingerprint(&bytes)) {
                for source in sources {
                    if std::fs::read(source)? == bytes {
                        problems.push(format!(
                            "{path}: tracked, but its content is upstream's {}",
                            source.display()
                        ));
                        break;
                    }
                }
            }
        }
        Ok(problems)
    }

    /// Hides every upstream file and test-data link from `git status`.
    pub fn write_git_excludes(&self, links: &Links) -> Result<()> {
        let Some(file) = git::exclude_file(&self.root)? else {
            return Ok(());
        };
        let mut paths: Vec<String> = self.upstream_files().map(|f| f.path).collect();
        paths.extend(links.paths.iter().cloned());
        paths.sort();
        git::write_excludes(&file, &paths)
    }

    /// The fingerprint of each upstream file as the tool last wrote or saved it.
    fn load_state(&self) -> HashMap<String, u64> {
        let text = self
            .state_path()
            .ok()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .or_else(|| std::fs::read_to_string(self.legacy_state_path()).ok())
            .unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let (hash, path) = line.split_once(' ')?;
                Some((path.to_string(), u64::from_str_radix(hash, 16).ok()?))
            })
            .collect()
    }

    fn store_state(&self, state: &BTreeMap<String, u64>) -> Result<()> {
        let text: String = state
            .iter()
            .map(|(p, h)| format!("{h:016x} {p}\n"))
            .collect();
        fsutil::write(&self.state_path()?, text.as_bytes())
    }
}

/// Content fingerprints of every file in the release's crates.
fn release_fingerprints(release: &[PathBuf]) -> Result<HashMap<u64, Vec<PathBuf>>> {
    let mut map: HashMap<u64, Vec<PathBuf>> = HashMap::new();
    for dir in release {
        for file in list_files(dir)? {
            let path = dir.join(&file);
            let bytes = std::fs::read(&path)?;
            if bytes.len() >= MIN_COPY_SIZE {
                map.entry(fingerprint(&bytes)).or_default().push(path);
            }
        }
    }
    Ok(map)
}

fn remove_empty_dirs(dir: &Path) -> Result<bool> {
    if !dir.is_dir() {
        return Ok(false);
    }
    let mut empty = true;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            if remove_empty_dirs(&entry.path())? {
                std::fs::remove_dir(entry.path())?;
            } else {
                empty = false;
            }
        } else {
            empty = false;
        }
    }
    Ok(empty)
}

#[derive(Debug)]
pub struct SyncReport {
    crates: usize,
    files: usize,
    written: usize,
    patches: usize,
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} crates, {} upstream files, {} written, {} patches applied",
            self.crates, self.files, self.written, self.patches
        )
    }
}

#[derive(Debug, Default)]
pub struct SaveReport {
    total: usize,
    added: Vec<String>,
    changed: Vec<String>,
    removed: Vec<String>,
}

impl fmt::Display for SaveReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "save: {} patches ({} new, {} changed, {} removed)",
            self.total,
            self.added.len(),
            self.changed.len(),
            self.removed.len()
        )?;
        for (label, list) in [
            ("new", &self.added),
            ("changed", &self.changed),
            ("removed", &self.removed),
        ] {
            for p in list {
                write!(f, "\n  {label}: patches/{p}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::config::UpstreamCrate;

    /// A repository beside a fake pristine release of one crate.
    struct Fixture {
        _dir: tempfile::TempDir,
        pristine: PathBuf,
        repo: PathBuf,
    }

    const LIB: &str = "//! A library.\n\npub fn one() -> i32 {\n    1\n}\n\npub fn two() -> i32 {\n    2\n}\n";
    const README: &str =
        "# fake crate\n\nThis readme is long enough to count as a real upstream file.\n";

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let pristine = dir.path().join("registry/fake-1.0.0");
            fsutil::write(&pristine.join("src/lib.rs"), LIB.as_bytes()).unwrap();
            fsutil::write(&pristine.join("README.md"), README.as_bytes()).unwrap();
            let repo = dir.path().join("repo");
            let fixture = Self {
                pristine,
                repo,
                _dir: dir,
            };
            fixture.init_repo(&fixture.repo);
            fixture
        }

        fn init_repo(&self, repo: &Path) {
            std::fs::create_dir_all(repo).unwrap();
            git(repo, &["init", "-q"]);
            std::fs::write(repo.join(".gitignore"), "/target/\n").unwrap();
        }

        fn workspace(&self, repo: &Path) -> Workspace {
            let config = ForkConfig {
                version: "1.0.0".into(),
                crates: vec![UpstreamCrate {
                    name: "fake".into(),
                    path: "crates/fake".into(),
                    version: "1.0.0".into(),
                }],
            };
            let pristine =
                PristineDirs::from([("fake".to_string(), self.pristine.clone())]);
            Workspace::new(repo, &config, &pristine).unwrap()
        }

        fn read(&self, repo: &Path, path: &str) -> String {
            std::fs::read_to_string(repo.join(path)).unwrap()
        }
    }

    fn git(repo: &Path, args: &[&str]) {
        let status = Command::new("git")
            .current_dir(repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn edit_save_and_fresh_sync_give_the_same_bytes() {
        let f = Fixture::new();
        let ws = f.workspace(&f.repo);
        ws.sync(false).unwrap();
        assert_eq!(f.read(&f.repo, "crates/fake/src/lib.rs"), LIB);

        let edited = LIB.replace("    2\n", "    // ours\n    2\n");
        std::fs::write(f.repo.join("crates/fake/src/lib.rs"), &edited).unwrap();
        let report = ws.save().unwrap();
        assert_eq!(report.added, ["crates/fake/src/lib.rs.patch"]);
        assert!(ws.check(&[]).unwrap().is_empty());

        // A fresh clone holds only what is tracked: the patches.
        let clone = f.repo.parent().unwrap().join("clone");
        f.init_repo(&clone);
        fsutil::write(
            &clone.join("patches/crates/fake/src/lib.rs.patch"),
            &std::fs::read(f.repo.join("patches/crates/fake/src/lib.rs.patch")).unwrap(),
        )
        .unwrap();
        let fresh = f.workspace(&clone);
        fresh.sync(false).unwrap();
        assert_eq!(f.read(&clone, "crates/fake/src/lib.rs"), edited);
        assert_eq!(f.read(&clone, "crates/fake/README.md"), README);

        // Reverting the edit and saving again removes the patch.
        std::fs::write(f.repo.join("crates/fake/src/lib.rs"), LIB).unwrap();
        let report = ws.save().unwrap();
        assert_eq!(report.removed, ["crates/fake/src/lib.rs.patch"]);
        assert!(!f.repo.join("patches").exists());
    }

    #[test]
    fn sync_keeps_unsaved_edits_unless_forced() {
        let f = Fixture::new();
        let ws = f.workspace(&f.repo);
        ws.sync(false).unwrap();
        std::fs::write(f.repo.join("crates/fake/src/lib.rs"), "edited\n").unwrap();

        let err = ws.sync(false).unwrap_err().to_string();
        assert!(err.contains("crates/fake/src/lib.rs"), "{err}");
        assert_eq!(f.read(&f.repo, "crates/fake/src/lib.rs"), "edited\n");
        let problems = ws.check(&[]).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("not in patches/"), "{problems:?}");

        ws.sync(true).unwrap();
        assert_eq!(f.read(&f.repo, "crates/fake/src/lib.rs"), LIB);
    }

    /// Two clones of one repository: B changes a patch and commits it; A,
    /// synced before, loses its `target/` (or its whole sync state) and
    /// pulls. Neither `sync` nor `save` in A may undo B's change.
    #[test]
    fn a_pulled_patch_change_survives_cargo_clean_sync_and_save() {
        const PATCH: &str = "patches/crates/fake/src/lib.rs.patch";
        let f = Fixture::new();
        let a = f.repo.clone();
        let ws_a = f.workspace(&a);
        ws_a.sync(false).unwrap();
        let first = LIB.replace("    1\n", "    // first\n    1\n");
        std::fs::write(a.join("crates/fake/src/lib.rs"), &first).unwrap();
        ws_a.save().unwrap();
        git(&a, &["add", ".gitignore", "patches"]);
        git(&a, &["commit", "-q", "-m", "first"]);

        let b = f.repo.parent().unwrap().join("b");
        git(f.repo.parent().unwrap(), &["clone", "-q", "repo", "b"]);
        let ws_b = f.workspace(&b);
        ws_b.sync(false).unwrap();
        let second = first.replace("    2\n", "    // second\n    2\n");
        std::fs::write(b.join("crates/fake/src/lib.rs"), &second).unwrap();
        ws_b.save().unwrap();
        git(&b, &["commit", "-q", "-am", "second"]);
        let pulled_patch = f.read(&b, PATCH);

        // `cargo clean`, then a pull: the state in the git folder survives
        std::fs::remove_dir_all(a.join("target")).ok();
        git(
            &a,
            &["pull", "-q", "--no-rebase", &b.to_string_lossy(), "HEAD"],
        );
        // Saving before syncing would write the old tree over the new patch
        let err = ws_a.save().unwrap_err().to_string();
        assert!(err.contains("crates/fake/src/lib.rs"), "{err}");
        assert_eq!(f.read(&a, PATCH), pulled_patch);
        ws_a.sync(false).unwrap();
        assert_eq!(f.read(&a, "crates/fake/src/lib.rs"), second);
        ws_a.save().unwrap();
        assert_eq!(f.read(&a, PATCH), pulled_patch);

        // With no state at all (a clone that kept it in `target/`), the
        // history of the patch tells an old materialization from an edit
        git(&a, &["reset", "-q", "--hard", "HEAD~1"]);
        ws_a.sync(false).unwrap();
        assert_eq!(f.read(&a, "crates/fake/src/lib.rs"), first);
        std::fs::remove_file(ws_a.state_path().unwrap()).unwrap();
        git(
            &a,
            &["pull", "-q", "--no-rebase", &b.to_string_lossy(), "HEAD"],
        );
        let err = ws_a.save().unwrap_err().to_string();
        assert!(err.contains("crates/fake/src/lib.rs"), "{err}");
        ws_a.sync(false).unwrap();
        assert_eq!(f.read(&a, "crates/fake/src/lib.rs"), second);
        ws_a.save().unwrap();
        assert_eq!(f.read(&a, PATCH), pulled_patch);

        // A real edit is still kept from `sync`, state or not
        std::fs::remove_file(ws_a.state_path().unwrap()).unwrap();
        std::fs::write(a.join("crates/fake/src/lib.rs"), "edited\n").unwrap();
        let err = ws_a.sync(false).unwrap_err().to_string();
        assert!(err.contains("not in patches/"), "{err}");
        assert_eq!(f.read(&a, "crates/fake/src/lib.rs"), "edited\n");
    }

    #[test]
    fn a_patch_that_does_not_apply_fails_and_writes_nothing() {
        let f = Fixture::new();
        let ws = f.workspace(&f.repo);
        ws.sync(false).unwrap();
        std::fs::write(
            f.repo.join("crates/fake/src/lib.rs"),
            LIB.replace("1\n", "10\n"),
        )
        .unwrap();
        std::fs::write(
            f.repo.join("crates/fake/README.md"),
            README.replace("fake", "our"),
        )
        .unwrap();
        ws.save().unwrap();

        // Upstream moves on under the patch of lib.rs, e.g. a new release.
        std::fs::write(
            f.pristine.join("src/lib.rs"),
            LIB.replace("pub fn one", "pub fn uno"),
        )
        .unwrap();
        let clone = f.repo.parent().unwrap().join("clone");
        f.init_repo(&clone);
        for p in ["src/lib.rs.patch", "README.md.patch"] {
            let path = format!("patches/crates/fake/{p}");
            fsutil::write(
                &clone.join(&path),
                &std::fs::read(f.repo.join(&path)).unwrap(),
            )
            .unwrap();
        }
        let err = f.workspace(&clone).sync(false).unwrap_err().to_string();
        assert!(
            err.contains("patches/crates/fake/src/lib.rs.patch"),
            "{err}"
        );
        assert!(err.contains("does not match the patch"), "{err}");
        // The patch that applies was not written either: no half-patched crate.
        assert!(!clone.join("crates/fake/README.md").exists());

        let problems = f.workspace(&f.repo).check(&[]).unwrap();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("src/lib.rs.patch does not apply")),
            "{problems:?}"
        );
    }

    #[test]
    fn check_finds_tracked_upstream_files_and_copies() {
        let f = Fixture::new();
        let ws = f.workspace(&f.repo);
        ws.sync(false).unwrap();
        // A copy of an upstream file under a new name, and an upstream file
        // itself forced into the index.
        fsutil::write(&f.repo.join("src/copied.rs"), LIB.as_bytes()).unwrap();
        fsutil::write(
            &f.repo.join("src/ours.rs"),
            b"// our own code, nothing like upstream's.\n\n\n",
        )
        .unwrap();
        git(&f.repo, &["add", "src/copied.rs", "src/ours.rs"]);
        git(&f.repo, &["add", "-f", "crates/fake/README.md"]);

        let problems = ws.check(std::slice::from_ref(&f.pristine)).unwrap();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| {
            p.starts_with("crates/fake/README.md: an upstream file is tracked")
        }));
        assert!(problems.iter().any(|p| {
            p.starts_with("src/copied.rs: tracked, but its content is upstream's")
        }));

        let err = ws.sync(false).unwrap_err().to_string();
        assert!(err.contains("git tracks upstream files"), "{err}");
    }

    #[test]
    fn upstream_files_are_hidden_from_git_but_new_files_are_not() {
        let f = Fixture::new();
        let ws = f.workspace(&f.repo);
        ws.sync(false).unwrap();
        ws.write_git_excludes(&Links::default()).unwrap();
        fsutil::write(&f.repo.join("crates/fake/src/new_module.rs"), b"// ours\n")
            .unwrap();
        let out = Command::new("git")
            .current_dir(&f.repo)
            .args(["status", "--porcelain", "-uall"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "?? .gitignore\n?? crates/fake/src/new_module.rs\n"
        );
    }
}
