//! Links upstream's test data into the tree, never copying it.
//!
//! Upstream's slt files and tests read data by paths relative to their crate
//! (`../../testing/data/csv/...`, `../core/tests/data/...`). The data is not
//! ours to commit; when a copy laid out as upstream's repository root has it
//! sits beside the repository (`../shared/test-data`, or `$FORK_TEST_DATA`),
//! each of its entries is symlinked at the same path in the tree, descending
//! into folders that already exist (an upstream crate) so that nothing there
//! is shadowed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Upstream's data roots, relative to the repository root: without them the
/// slt files that read them cannot pass.
pub const DATA_ROOTS: &[&str] = &[
    "testing",
    "parquet-testing",
    "datafusion/core/tests/data",
    "datafusion/core/tests/tpch-csv",
    "datafusion/core/tests/tpc-ds",
    "datafusion/datasource-arrow/tests/data",
    "benchmarks/queries",
];

/// The links in the tree, and where the data came from.
#[derive(Debug, Default)]
pub struct Links {
    pub source: Option<PathBuf>,
    pub paths: Vec<String>,
}

impl Links {
    pub fn summary(&self) -> String {
        match &self.source {
            Some(source) => format!("{} test-data links to {}", self.paths.len(), source.display()),
            None => "no test data found (set FORK_TEST_DATA or place it at ../shared/test-data)"
                .to_string(),
        }
    }
}

/// The test-data folder, if there is one.
pub fn source(root: &Path) -> Option<PathBuf> {
    let candidate = match std::env::var_os("FORK_TEST_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => root.parent()?.join("shared").join("test-data"),
    };
    candidate.canonicalize().ok().filter(|d| d.is_dir())
}

pub fn link(root: &Path) -> Result<Links> {
    let Some(source) = source(root) else {
        return Ok(Links::default());
    };
    let mut paths = Vec::new();
    link_dir(&source, root, "", &mut paths)?;
    paths.sort();
    Ok(Links {
        source: Some(source),
        paths,
    })
}

fn link_dir(src: &Path, root: &Path, rel: &str, out: &mut Vec<String>) -> Result<()> {
    for entry in
        std::fs::read_dir(src).with_context(|| format!("reading {}", src.display()))?
    {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child_rel = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let target = entry.path();
        let dest = root.join(&child_rel);
        match std::fs::symlink_metadata(&dest) {
            Err(_) => {
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                symlink(&target, &dest)?;
                out.push(child_rel);
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                // Ours from an earlier sync (possibly to a moved copy): relink.
                if std::fs::read_link(&dest)? != target {
                    if dest.exists() && !is_test_data_link(&dest) {
                        continue;
                    }
                    std::fs::remove_file(&dest)?;
                    symlink(&target, &dest)?;
                }
                out.push(child_rel);
            }
            Ok(meta) if meta.is_dir() && entry.file_type()?.is_dir() => {
                link_dir(&target, root, &child_rel, out)?;
            }
            // A real file of upstream's or ours is never shadowed.
            Ok(_) => {}
        }
    }
    Ok(())
}

/// A dangling link, or one into some `test-data` folder, is the tool's.
fn is_test_data_link(link: &Path) -> bool {
    std::fs::read_link(link)
        .map(|t| t.components().any(|c| c.as_os_str() == "test-data"))
        .unwrap_or(false)
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link)
        .with_context(|| format!("linking {} to {}", link.display(), target.display()))
}
