//! What git knows about the work tree: tracked files, and the exclude file
//! through which the tool hides upstream files from `git status`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Files git tracks (in the index), relative to the root. Empty outside a
/// git repository.
pub fn tracked_files(root: &Path) -> Result<BTreeSet<String>> {
    if !is_repository(root) {
        return Ok(BTreeSet::new());
    }
    let output = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z", "--cached"])
        .output()
        .context("running git ls-files")?;
    if !output.status.success() {
        bail!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

fn is_repository(root: &Path) -> bool {
    root.join(".git").exists()
}

/// The repository's `info/exclude` file, or `None` outside a repository.
pub fn exclude_file(root: &Path) -> Result<Option<PathBuf>> {
    git_path(root, "info/exclude")
}

/// `path` inside the repository's git folder (which survives `cargo clean`
/// and belongs to this clone alone), or `None` outside a repository.
pub fn git_path(root: &Path, path: &str) -> Result<Option<PathBuf>> {
    if !is_repository(root) {
        return Ok(None);
    }
    let output = Command::new("git")
        .current_dir(root)
        .args(["rev-parse", "--git-path", path])
        .output()
        .context("running git rev-parse")?;
    if !output.status.success() {
        bail!(
            "git rev-parse failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    Ok(Some(if path.is_absolute() {
        path
    } else {
        root.join(path)
    }))
}

/// Every committed version of `path` in the history of `HEAD`, newest first:
/// `Some(bytes)`, or `None` for a commit that deleted it. Empty outside a
/// repository or for a path git never held.
pub fn committed_versions(root: &Path, path: &str) -> Result<Vec<Option<Vec<u8>>>> {
    if !is_repository(root) {
        return Ok(Vec::new());
    }
    let output = Command::new("git")
        .current_dir(root)
        .args(["log", "--format=%H", "--full-history", "--", path])
        .output()
        .context("running git log")?;
    if !output.status.success() {
        // A repository without commits has no history to read
        return Ok(Vec::new());
    }
    let mut versions = Vec::new();
    for commit in String::from_utf8_lossy(&output.stdout).lines() {
        let shown = Command::new("git")
            .current_dir(root)
            .args(["show", &format!("{commit}:{path}")])
            .output()
            .context("running git show")?;
        versions.push(shown.status.success().then_some(shown.stdout));
    }
    Ok(versions)
}

const BEGIN: &str = "# BEGIN cargo xtask sync: upstream files and test-data links";
const END: &str = "# END cargo xtask sync";

/// Replaces the tool's block in the exclude file with one anchored entry per
/// path, keeping whatever else the file holds. Writes only on change.
pub fn write_excludes(file: &Path, paths: &[String]) -> Result<()> {
    let old = std::fs::read_to_string(file).unwrap_or_default();
    let mut kept = Vec::new();
    let mut inside = false;
    for line in old.lines() {
        match line {
            BEGIN => inside = true,
            END => inside = false,
            _ if !inside => kept.push(line.to_string()),
            _ => {}
        }
    }
    let mut text = kept.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(BEGIN);
    text.push('\n');
    for path in paths {
        text.push('/');
        text.push_str(&escape_pattern(path));
        text.push('\n');
    }
    text.push_str(END);
    text.push('\n');
    if text != old {
        crate::fsutil::write(file, text.as_bytes())?;
    }
    Ok(())
}

/// Escapes a literal path for a gitignore pattern.
fn escape_pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#') || c == ' ' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_glob_characters() {
        assert_eq!(escape_pattern("a/[x]*?.slt"), r"a/\[x\]\*\?.slt");
        assert_eq!(escape_pattern("#name with space"), r"\#name\ with\ space");
    }

    #[test]
    fn replaces_only_its_own_block() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("exclude");
        std::fs::write(&file, "*.swp\n").unwrap();
        write_excludes(&file, &["a/b.rs".into()]).unwrap();
        write_excludes(&file, &["c.rs".into()]).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("*.swp\n{BEGIN}\n/c.rs\n{END}\n"));
    }
}
