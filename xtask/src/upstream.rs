//! Obtains the pristine upstream crates through cargo.
//!
//! A helper manifest under `target/xtask/upstream/` depends on every patched
//! crate at `=VERSION`. `cargo metadata` on it makes cargo download, verify
//! and unpack the crates from crates.io, and names the folder of each one.
//! Those folders are the pristine sources that `sync` lays out and `save`
//! diffs against. The answer is cached so that `sync` stays fast when
//! nothing changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::config::ForkConfig;

/// Pristine source folders, by crate name.
pub type PristineDirs = BTreeMap<String, PathBuf>;

/// Every crate of the pinned release that cargo resolved for the helper
/// manifest, patched or not: the patched crates and all the `datafusion*`
/// crates they pull in.
#[derive(Debug, Default)]
struct Resolved {
    dirs: PristineDirs,
}

fn helper_dir(root: &Path) -> PathBuf {
    root.join("target").join("xtask").join("upstream")
}

/// The pristine folder of each crate in `config`.
pub fn resolve(root: &Path, config: &ForkConfig) -> Result<PristineDirs> {
    let all = resolve_release(root, config)?;
    config
        .crates
        .iter()
        .map(|c| {
            let dir = all.dirs.get(&c.name).with_context(|| {
                format!("cargo did not resolve {} {}", c.name, c.version)
            })?;
            Ok((c.name.clone(), dir.clone()))
        })
        .collect()
}

/// The pristine folders of every `datafusion*` crate of the release, for the
/// check that no tracked file is a copy of an upstream file.
pub fn release_dirs(root: &Path, config: &ForkConfig) -> Result<Vec<PathBuf>> {
    Ok(resolve_release(root, config)?.dirs.into_values().collect())
}

fn resolve_release(root: &Path, config: &ForkConfig) -> Result<Resolved> {
    let dir = helper_dir(root);
    let manifest = helper_manifest(config);
    let cache_path = dir.join("resolved.json");
    let manifest_path = dir.join("Cargo.toml");

    // Fast path: same helper manifest as last time, folders still unpacked.
    if std::fs::read_to_string(&manifest_path).ok().as_deref() == Some(manifest.as_str())
        && let Some(cached) = read_cache(&cache_path)
        && cached.dirs.values().all(|d| d.join("Cargo.toml").is_file())
    {
        return Ok(cached);
    }

    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("lib.rs"), "")?;
    std::fs::write(&manifest_path, &manifest)?;
    let output = Command::new(std::env::var("CARGO").unwrap_or("cargo".into()))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest_path)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo could not fetch the upstream crates at {}:\n{}",
            config.version,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: Value = serde_json::from_slice(&output.stdout)?;
    let resolved = parse_metadata(&metadata, config)?;
    std::fs::write(&cache_path, cache_text(&resolved))?;
    Ok(resolved)
}

fn helper_manifest(config: &ForkConfig) -> String {
    let mut text = String::from(
        "# Written by `cargo xtask`: resolves the pinned upstream crates.\n\
         [package]\nname = \"fork-upstream\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\
         [lib]\npath = \"lib.rs\"\n[workspace]\n[dependencies]\n",
    );
    for c in &config.crates {
        text.push_str(&format!("{} = \"={}\"\n", c.name, c.version));
    }
    text
}

/// The registry crates of `metadata` that are patched, at their pinned
/// release, or that belong to the pinned DataFusion release.
fn parse_metadata(metadata: &Value, config: &ForkConfig) -> Result<Resolved> {
    let packages = metadata["packages"]
        .as_array()
        .context("no packages in cargo metadata")?;
    let mut dirs = PristineDirs::new();
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        let from_registry = package["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("registry+") || s.starts_with("sparse+"));
        let version = package["version"].as_str().unwrap_or_default();
        let of_the_release = name.starts_with("datafusion") && version == config.version;
        let patched = config
            .crates
            .iter()
            .any(|c| c.name == name && c.version == version);
        if (of_the_release || patched) && from_registry {
            let manifest = package["manifest_path"]
                .as_str()
                .context("no manifest_path")?;
            let dir = Path::new(manifest)
                .parent()
                .context("manifest has no folder")?;
            dirs.insert(name.to_string(), dir.to_path_buf());
        }
    }
    Ok(Resolved { dirs })
}

fn cache_text(resolved: &Resolved) -> String {
    let map: serde_json::Map<String, Value> = resolved
        .dirs
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.to_string_lossy().into_owned())))
        .collect();
    serde_json::to_string_pretty(&map).unwrap_or_default()
}

fn read_cache(path: &Path) -> Option<Resolved> {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let dirs = value
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), PathBuf::from(v.as_str()?))))
        .collect::<Option<PristineDirs>>()?;
    (!dirs.is_empty()).then_some(Resolved { dirs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_release_and_the_patched_crates_at_their_versions() {
        let metadata = serde_json::json!({"packages": [
            {"name": "datafusion-sql", "version": "55.2.0",
             "source": "registry+https://github.com/rust-lang/crates.io-index",
             "manifest_path": "/reg/datafusion-sql-55.2.0/Cargo.toml"},
            {"name": "datafusion-sql", "version": "54.0.0",
             "source": "registry+https://github.com/rust-lang/crates.io-index",
             "manifest_path": "/reg/datafusion-sql-54.0.0/Cargo.toml"},
            {"name": "fork-upstream", "version": "0.0.0", "source": null,
             "manifest_path": "/x/Cargo.toml"},
            {"name": "ballista-core", "version": "55.0.0",
             "source": "registry+https://github.com/rust-lang/crates.io-index",
             "manifest_path": "/reg/ballista-core-55.0.0/Cargo.toml"},
            {"name": "ballista-executor", "version": "55.0.0",
             "source": "registry+https://github.com/rust-lang/crates.io-index",
             "manifest_path": "/reg/ballista-executor-55.0.0/Cargo.toml"},
            {"name": "arrow", "version": "55.2.0",
             "source": "registry+https://github.com/rust-lang/crates.io-index",
             "manifest_path": "/reg/arrow/Cargo.toml"}
        ]});
        let config = ForkConfig::parse(
            "[workspace.metadata.fork]\nupstream-version = \"55.2.0\"\n\
             [workspace.metadata.fork.crate-versions]\nballista-core = \"55.0.0\"\n\
             [patch.crates-io]\ndatafusion-sql = { path = \"datafusion/sql\" }\n\
             ballista-core = { path = \"ballista/core\" }\n",
        )
        .unwrap();
        let resolved = parse_metadata(&metadata, &config).unwrap();
        assert_eq!(
            resolved.dirs,
            PristineDirs::from([
                (
                    "ballista-core".to_string(),
                    PathBuf::from("/reg/ballista-core-55.0.0")
                ),
                (
                    "datafusion-sql".to_string(),
                    PathBuf::from("/reg/datafusion-sql-55.2.0")
                )
            ])
        );
    }
}
