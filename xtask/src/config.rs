//! The fork's configuration, read from the root `Cargo.toml`.
//!
//! The root manifest's `[patch.crates-io]` table is the one declaration of the
//! patched crate set: each entry names an upstream crate and the path, under
//! the repository root, where it is laid out. `[workspace.metadata.fork]`
//! pins the upstream release. Keeping both in the manifest cargo reads means
//! the tool and the build can never disagree about which crates are patched.
//! A patched crate of another project (Ballista) is pinned at its own release
//! in `[workspace.metadata.fork.crate-versions]`.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

/// An upstream crate that the fork lays out and may patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamCrate {
    /// The crate's name on crates.io, e.g. `datafusion-sql`.
    pub name: String,
    /// Where it lives in the work tree, relative to the root, using `/`.
    pub path: String,
    /// The exact release taken from crates.io: the pinned upstream release,
    /// unless `crate-versions` names another.
    pub version: String,
}

#[derive(Debug, Clone)]
pub struct ForkConfig {
    /// The pinned upstream release, e.g. `55.2.0`.
    pub version: String,
    pub crates: Vec<UpstreamCrate>,
}

impl ForkConfig {
    pub fn load(root: &Path) -> Result<Self> {
        let path = root.join("Cargo.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in {}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Self> {
        let manifest: toml::Table = text.parse()?;
        let fork = manifest
            .get("workspace")
            .and_then(|w| w.get("metadata"))
            .and_then(|m| m.get("fork"));
        let version = fork
            .and_then(|f| f.get("upstream-version"))
            .and_then(|v| v.as_str())
            .context("missing `workspace.metadata.fork.upstream-version`")?
            .to_string();
        check_exact(&version).context("`upstream-version`")?;
        let crate_versions = fork
            .and_then(|f| f.get("crate-versions"))
            .and_then(|v| v.as_table())
            .cloned()
            .unwrap_or_default();
        let patches = manifest
            .get("patch")
            .and_then(|p| p.get("crates-io"))
            .and_then(|p| p.as_table())
            .context("missing `[patch.crates-io]`")?;
        let mut crates = Vec::with_capacity(patches.len());
        for (name, entry) in patches {
            let path = entry
                .get("path")
                .and_then(|p| p.as_str())
                .with_context(|| {
                    format!("`[patch.crates-io]` entry `{name}` has no `path`")
                })?;
            let crate_version = match crate_versions.get(name) {
                Some(v) => {
                    let v = v.as_str().unwrap_or_default().to_string();
                    check_exact(&v)
                        .with_context(|| format!("`crate-versions.{name}`"))?;
                    v
                }
                None => version.clone(),
            };
            crates.push(UpstreamCrate {
                name: name.clone(),
                path: normalize_relative(path)
                    .with_context(|| format!("`[patch.crates-io]` entry `{name}`"))?,
                version: crate_version,
            });
        }
        if let Some(name) = crate_versions.keys().find(|n| !patches.contains_key(*n)) {
            bail!("`crate-versions` names `{name}`, which is not in `[patch.crates-io]`");
        }
        if crates.is_empty() {
            bail!("`[patch.crates-io]` is empty: there is nothing to lay out");
        }
        for (i, a) in crates.iter().enumerate() {
            for b in &crates[i + 1..] {
                if Path::new(&a.path).starts_with(&b.path)
                    || Path::new(&b.path).starts_with(&a.path)
                {
                    bail!(
                        "crates `{}` and `{}` overlap at `{}`",
                        a.name,
                        b.name,
                        a.path
                    );
                }
            }
        }
        Ok(Self { version, crates })
    }
}

/// Fails unless `version` is an exact release such as `55.2.0`.
fn check_exact(version: &str) -> Result<()> {
    if version.is_empty() || !version.chars().all(|c| c.is_ascii_digit() || c == '.') {
        bail!("must be an exact release such as 55.2.0, not `{version}`");
    }
    Ok(())
}

/// A path inside the repository, as `a/b/c`: no `..`, not absolute.
fn normalize_relative(path: &str) -> Result<String> {
    let mut parts = Vec::new();
    for component in PathBuf::from(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => bail!("path `{path}` must stay inside the repository"),
        }
    }
    if parts.is_empty() {
        bail!("path `{path}` names the repository root");
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[workspace]
members = ["datafusion/sql"]
[workspace.metadata.fork]
upstream-version = "55.2.0"
[patch.crates-io]
datafusion-sql = { path = "datafusion/sql" }
datafusion-cli = { path = "./datafusion-cli" }
"#;

    #[test]
    fn reads_version_and_crates() {
        let config = ForkConfig::parse(MANIFEST).unwrap();
        assert_eq!(config.version, "55.2.0");
        let paths: Vec<_> = config
            .crates
            .iter()
            .map(|c| (c.name.as_str(), c.path.as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                ("datafusion-cli", "datafusion-cli"),
                ("datafusion-sql", "datafusion/sql")
            ]
        );
        assert!(config.crates.iter().all(|c| c.version == "55.2.0"));
    }

    #[test]
    fn reads_the_release_of_a_crate_of_another_project() {
        let text = format!(
            "{MANIFEST}ballista-scheduler = {{ path = \"ballista/scheduler\" }}\n\
             [workspace.metadata.fork.crate-versions]\nballista-scheduler = \"55.0.0\"\n"
        );
        let config = ForkConfig::parse(&text).unwrap();
        let versions: Vec<_> = config
            .crates
            .iter()
            .map(|c| (c.name.as_str(), c.version.as_str()))
            .collect();
        assert_eq!(
            versions,
            [
                ("ballista-scheduler", "55.0.0"),
                ("datafusion-cli", "55.2.0"),
                ("datafusion-sql", "55.2.0")
            ]
        );
        let unknown =
            text.replace("\nballista-scheduler = \"55", "\nballista-core = \"55");
        let err = ForkConfig::parse(&unknown).unwrap_err();
        assert!(
            format!("{err:#}").contains("not in `[patch.crates-io]`"),
            "{err:#}"
        );
    }

    #[test]
    fn rejects_paths_outside_the_repository() {
        let text = MANIFEST.replace("./datafusion-cli", "../elsewhere");
        let err = ForkConfig::parse(&text).unwrap_err();
        assert!(
            format!("{err:#}").contains("must stay inside the repository"),
            "{err:#}"
        );
    }

    #[test]
    fn rejects_a_version_range() {
        let text = MANIFEST.replace("\"55.2.0\"", "\"^55\"");
        let err = ForkConfig::parse(&text).unwrap_err();
        assert!(format!("{err:#}").contains("exact release"), "{err:#}");
    }

    #[test]
    fn rejects_nested_crates() {
        let text = MANIFEST.replace("./datafusion-cli", "datafusion/sql/inner");
        let err = ForkConfig::parse(&text).unwrap_err();
        assert!(format!("{err:#}").contains("overlap"), "{err:#}");
    }
}
