//! Small file-system helpers shared by the commands.

use std::path::Path;

use anyhow::{Context, Result};

/// Every regular file under `dir`, as sorted paths relative to it with `/`
/// separators. `.cargo-ok` is cargo's unpack marker, not part of a crate.
pub fn list_files(dir: &Path) -> Result<Vec<String>> {
    list_files_except(dir, &[])
}

/// As [`list_files`], without the folders named `skipped` at any depth. A
/// symbolic link is listed, never followed.
pub fn list_files_except(dir: &Path, skipped: &[&str]) -> Result<Vec<String>> {
    let mut files = Vec::new();
    walk(dir, "", skipped, &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(dir: &Path, prefix: &str, skipped: &[&str], out: &mut Vec<String>) -> Result<()> {
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?
    {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !skipped.contains(&name.as_str()) {
                walk(&entry.path(), &rel, skipped, out)?;
            }
        } else if prefix.is_empty() && name == ".cargo-ok" {
            continue;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

/// Reads a file, or `None` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes a file, creating its folder.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// 64-bit FNV-1a: a stable content fingerprint for the sync state, which
/// must mean the same across toolchains.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
