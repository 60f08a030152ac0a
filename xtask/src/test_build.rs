//! One `cargo test --no-run` for every test target the suite runs.
//!
//! Cargo resolves the features of a dependency from the packages an
//! invocation selects. A `cargo test -p X` per target therefore compiled the
//! DataFusion crates once for each distinct selection: in a cold run, the
//! `datafusion` crate seven times. Every build here selects the same
//! packages, [`PACKAGES`], so that features resolve alike and each crate is
//! compiled once; the tests then run the executables cargo reports.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result, bail};

/// The packages every build selects: each one that holds a test target the
/// suite runs.
pub const PACKAGES: &[(&str, &str)] = &[
    ("datafusion", "datafusion/core"),
    ("datafusion-cli", "datafusion-cli"),
    ("datafusion-common", "datafusion/common"),
    ("datafusion-datasource", "datafusion/datasource"),
    ("datafusion-expr", "datafusion/expr"),
    ("datafusion-optimizer", "datafusion/optimizer"),
    ("datafusion-physical-expr", "datafusion/physical-expr"),
    (
        "datafusion-physical-optimizer",
        "datafusion/physical-optimizer",
    ),
    ("datafusion-physical-plan", "datafusion/physical-plan"),
    ("datafusion-proto-models", "datafusion/proto-models"),
    ("datafusion-sql", "datafusion/sql"),
    ("datafusion-sqllogictest", "datafusion/sqllogictest"),
    ("datafusion-substrait", "datafusion/substrait"),
    ("fork-benches", "benches"),
    ("fork-ballista", "ballista"),
    ("fork-oracle", "oracle"),
    ("ballista-scheduler", "ballista/scheduler"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Lib,
    Test,
    Example,
    Bench,
    /// The unit tests of a binary (`src/main.rs` and its modules).
    Bin,
}

impl Kind {
    fn of(cargo_kinds: &serde_json::Value) -> Option<Self> {
        let kinds: Vec<&str> = cargo_kinds
            .as_array()?
            .iter()
            .filter_map(|kind| kind.as_str())
            .collect();
        Some(match kinds.as_slice() {
            ["test"] => Kind::Test,
            ["example"] => Kind::Example,
            ["bench"] => Kind::Bench,
            ["bin"] => Kind::Bin,
            _ if kinds.iter().any(|k| k.ends_with("lib")) => Kind::Lib,
            _ => return None,
        })
    }
}

/// A test target: its package, kind and name (empty for a library).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub package: String,
    pub kind: Kind,
    pub name: String,
}

impl Target {
    /// The unit tests of `package`'s library.
    pub fn lib(package: &str) -> Self {
        Self {
            package: package.to_string(),
            kind: Kind::Lib,
            name: String::new(),
        }
    }

    /// The test `name` of `package`.
    pub fn test(package: &str, name: &str) -> Self {
        Self {
            package: package.to_string(),
            kind: Kind::Test,
            name: name.to_string(),
        }
    }

    /// The unit tests of the binary `name` of `package`.
    pub fn bin(package: &str, name: &str) -> Self {
        Self {
            package: package.to_string(),
            kind: Kind::Bin,
            name: name.to_string(),
        }
    }
}

/// The executable of each built target.
pub type Executables = BTreeMap<Target, PathBuf>;

/// Builds `targets` (and, as cargo selects by kind and name across all
/// [`PACKAGES`], every target of those packages that matches) and returns
/// their executables.
pub fn build(root: &Path, targets: &[Target]) -> Result<Executables> {
    for target in targets {
        if !PACKAGES
            .iter()
            .any(|(package, _)| *package == target.package)
        {
            bail!(
                "{} is not among the packages every test build selects",
                target.package
            );
        }
    }
    let mut args = vec![
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ];
    for (package, _) in PACKAGES {
        args.extend(["-p", package]);
    }
    if targets.iter().any(|t| t.kind == Kind::Lib) {
        args.push("--lib");
    }
    for target in targets {
        let flag = match target.kind {
            Kind::Lib => continue,
            Kind::Test => "--test",
            Kind::Example => "--example",
            Kind::Bench => "--bench",
            Kind::Bin => "--bin",
        };
        args.extend([flag, target.name.as_str()]);
    }
    eprintln!("== cargo {}", args.join(" "));
    let mut child = crate::cargo::command(root)?
        .args(&args)
        .stdout(Stdio::piped())
        .spawn()
        .context("running cargo test --no-run")?;
    let mut built = Executables::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        if !line.contains("\"compiler-artifact\"") {
            continue;
        }
        let message: serde_json::Value = serde_json::from_str(&line)?;
        let Some(executable) = message["executable"].as_str() else {
            continue;
        };
        let Some(package) = package_of(root, message["manifest_path"].as_str()) else {
            continue;
        };
        let Some(kind) = Kind::of(&message["target"]["kind"]) else {
            continue;
        };
        // A binary is also built as itself (for the tests that run it);
        // only its test build runs its unit tests
        if kind == Kind::Bin && message["profile"]["test"].as_bool() != Some(true) {
            continue;
        }
        let name = message["target"]["name"].as_str().unwrap_or_default();
        if let Some(target) = targets.iter().find(|target| {
            target.package == package
                && target.kind == kind
                && (kind == Kind::Lib || target.name == name)
        }) {
            built.insert(target.clone(), PathBuf::from(executable));
        }
    }
    if !child.wait()?.success() {
        bail!("building the tests failed");
    }
    for target in targets {
        if !built.contains_key(target) {
            bail!("cargo built no executable for {target:?}");
        }
    }
    Ok(built)
}

/// The package whose manifest is `manifest_path`.
fn package_of(root: &Path, manifest_path: Option<&str>) -> Option<&'static str> {
    let manifest_path = Path::new(manifest_path?);
    PACKAGES
        .iter()
        .find(|(_, dir)| manifest_path == root.join(dir).join("Cargo.toml"))
        .map(|(package, _)| *package)
}

/// The folder of `package`, where cargo runs its tests.
pub fn package_dir(root: &Path, package: &str) -> PathBuf {
    PACKAGES
        .iter()
        .find(|(name, _)| *name == package)
        .map_or_else(|| root.to_path_buf(), |(_, dir)| root.join(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cargo_target_kinds() {
        let kind = |json: &str| Kind::of(&serde_json::from_str(json).unwrap());
        assert_eq!(kind(r#"["lib"]"#), Some(Kind::Lib));
        assert_eq!(kind(r#"["rlib", "cdylib"]"#), Some(Kind::Lib));
        assert_eq!(kind(r#"["test"]"#), Some(Kind::Test));
        assert_eq!(kind(r#"["bench"]"#), Some(Kind::Bench));
        assert_eq!(kind(r#"["example"]"#), Some(Kind::Example));
        assert_eq!(kind(r#"["bin"]"#), Some(Kind::Bin));
        assert_eq!(kind(r#"["proc-macro"]"#), None);
    }

    #[test]
    fn finds_packages_by_manifest() {
        let root = Path::new("/r");
        assert_eq!(
            package_of(root, Some("/r/datafusion/core/Cargo.toml")),
            Some("datafusion")
        );
        assert_eq!(
            package_of(root, Some("/r/benches/Cargo.toml")),
            Some("fork-benches")
        );
        assert_eq!(package_of(root, Some("/elsewhere/Cargo.toml")), None);
    }
}
