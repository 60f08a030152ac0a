//! PostgreSQL's server programs, which the fork's PostgreSQL differential
//! test (`oracle/tests/postgres.rs`) starts a throwaway server with.
//!
//! The test runs a real server, so the programs must be on the machine.
//! Where they are missing, the tool installs Debian's `postgresql` package
//! when it can (as root, with `apt-get`), so that `cargo xtask test` and CI
//! need nothing done by hand; otherwise it fails and says what to install.
//! It hands the folder of the programs to the tests in
//! `FORK_POSTGRES_BIN`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Where Debian's packages put each version's server programs.
const VERSIONS: &str = "/usr/lib/postgresql";

/// The folder of PostgreSQL's server programs (`initdb`, `pg_ctl`),
/// installing them first where they are missing and the tool can.
pub fn server_programs() -> Result<PathBuf> {
    if let Some(bin) = installed(Path::new(VERSIONS)) {
        return Ok(bin);
    }
    if !is_root() || !has_apt_get() {
        bail!(
            "PostgreSQL's server programs (initdb, pg_ctl) are not installed, and this \
             tool can install them only as root with apt-get: install Debian's \
             `postgresql` package (apt-get install postgresql)"
        );
    }
    eprintln!("== installing Debian's postgresql package for the PostgreSQL oracle");
    for args in [
        &["update"][..],
        &["install", "-y", "--no-install-recommends", "postgresql"][..],
    ] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .context("running apt-get")?;
        if !status.success() {
            bail!("apt-get {} failed", args.join(" "));
        }
    }
    installed(Path::new(VERSIONS)).with_context(|| {
        format!("apt-get installed postgresql, but no initdb is under {VERSIONS}")
    })
}

/// The `bin` folder of the newest version under `versions` that has
/// `initdb` and `pg_ctl`.
fn installed(versions: &Path) -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(versions)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").exists() && bin.join("pg_ctl").exists())
                .then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

fn has_apt_get() -> bool {
    Command::new("apt-get")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_version_with_both_programs_is_found() {
        let root = std::env::temp_dir().join(format!("xtask-pg-{}", std::process::id()));
        let make = |version: &str, programs: &[&str]| {
            let bin = root.join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            for program in programs {
                std::fs::write(bin.join(program), "").unwrap();
            }
        };
        make("13", &["initdb", "pg_ctl"]);
        make("15", &["initdb", "pg_ctl"]);
        make("16", &["initdb"]);
        assert_eq!(installed(&root), Some(root.join("15").join("bin")));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(installed(&root), None);
    }
}
