//! Our test targets, read back from the manifests that declare them.
//!
//! Cargo builds a test, example, bench or binary only where a manifest
//! declares it: upstream's published manifests turn target discovery off, so
//! a target of ours in an upstream crate is a `[[test]]` (or `[[example]]`,
//! `[[bench]]`) section that the crate's manifest patch adds, and one in our
//! own packages a file cargo finds. That declaration is the one list: `lint`
//! and `test` ask `cargo metadata` for every target of the workspace and take
//! as ours each one whose source file is a file of ours (tracked by git), so
//! adding a target means declaring it once, where cargo needs it anyway.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result, bail};

use crate::git;

/// The kinds of target besides a library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TargetKind {
    Test,
    Example,
    Bench,
    Bin,
}

impl TargetKind {
    /// The kind cargo metadata names `kinds`, if it is one of these.
    fn of(kinds: &[&str]) -> Option<Self> {
        Some(match kinds {
            ["test"] => Self::Test,
            ["example"] => Self::Example,
            ["bench"] => Self::Bench,
            ["bin"] => Self::Bin,
            _ => return None,
        })
    }

    /// The cargo flag that selects a target of this kind by name.
    pub fn flag(self) -> &'static str {
        match self {
            Self::Test => "--test",
            Self::Example => "--example",
            Self::Bench => "--bench",
            Self::Bin => "--bin",
        }
    }
}

/// A target of ours: its package, kind and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct OurTarget {
    pub package: String,
    pub kind: TargetKind,
    pub name: String,
}

/// Every target of the workspace at `root` whose source file is ours.
pub fn find(root: &Path) -> Result<Vec<OurTarget>> {
    let output = crate::cargo::command(root)?
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed");
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("reading cargo metadata")?;
    let ours = git::tracked_files(root)?;
    Ok(ours_in(&metadata, root, &ours))
}

/// The targets of `metadata` whose source file, relative to `root`, is one
/// of `ours`, in the order of their packages, kinds and names.
fn ours_in(
    metadata: &serde_json::Value,
    root: &Path,
    ours: &BTreeSet<String>,
) -> Vec<OurTarget> {
    let mut found = BTreeSet::new();
    let packages = metadata["packages"].as_array().into_iter().flatten();
    for package in packages {
        let Some(package_name) = package["name"].as_str() else {
            continue;
        };
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|kind| kind.as_str())
                .collect();
            let (Some(kind), Some(name), Some(source)) = (
                TargetKind::of(&kinds),
                target["name"].as_str(),
                target["src_path"].as_str(),
            ) else {
                continue;
            };
            let is_ours = Path::new(source)
                .strip_prefix(root)
                .ok()
                .and_then(|relative| relative.to_str())
                .is_some_and(|relative| ours.contains(relative));
            if is_ours {
                found.insert(OurTarget {
                    package: package_name.to_string(),
                    kind,
                    name: name.to_string(),
                });
            }
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_ours_where_its_source_file_is() {
        let metadata = serde_json::json!({
            "packages": [
                {
                    "name": "datafusion",
                    "targets": [
                        {"kind": ["lib"], "name": "datafusion",
                         "src_path": "/r/datafusion/core/src/lib.rs"},
                        {"kind": ["test"], "name": "core_integration",
                         "src_path": "/r/datafusion/core/tests/core_integration.rs"},
                        {"kind": ["test"], "name": "single_join",
                         "src_path": "/r/datafusion/core/tests/single_join.rs"},
                        {"kind": ["example"], "name": "single_join",
                         "src_path": "/r/datafusion/core/examples/single_join.rs"}
                    ]
                },
                {
                    "name": "fork-ballista",
                    "targets": [
                        {"kind": ["bin"], "name": "fork-ballista",
                         "src_path": "/r/ballista/src/bin/fork-ballista.rs"},
                        {"kind": ["custom-build"], "name": "build-script-build",
                         "src_path": "/r/ballista/build.rs"}
                    ]
                }
            ]
        });
        let ours: BTreeSet<String> = [
            "datafusion/core/tests/single_join.rs",
            "datafusion/core/examples/single_join.rs",
            "ballista/src/bin/fork-ballista.rs",
            "ballista/build.rs",
        ]
        .map(str::to_string)
        .into();
        let found = ours_in(&metadata, Path::new("/r"), &ours);
        let described: Vec<String> = found
            .iter()
            .map(|t| format!("{} {} {}", t.package, t.kind.flag(), t.name))
            .collect();
        assert_eq!(
            described,
            [
                "datafusion --test single_join",
                "datafusion --example single_join",
                "fork-ballista --bin fork-ballista",
            ]
        );
    }
}
