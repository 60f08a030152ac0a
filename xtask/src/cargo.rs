//! The `cargo` the tool runs, with what the build needs from the tool.
//!
//! `datafusion-substrait`'s build script runs `prost-build`, which needs a
//! `protoc` binary. A fresh machine has none, so the tool hands the build the
//! one the `protoc-bin-vendored` crate ships, through `PROTOC`, unless the
//! caller set `PROTOC` already. With that, the README's commands need nothing
//! but a Rust toolchain.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

/// A `cargo` command run in `root`.
pub fn command(root: &Path) -> Result<Command> {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()));
    command.current_dir(root);
    if std::env::var_os("PROTOC").is_none() {
        command.env("PROTOC", vendored_protoc()?);
    }
    Ok(command)
}

fn vendored_protoc() -> Result<OsString> {
    let path = protoc_bin_vendored::protoc_bin_path()
        .context("protoc-bin-vendored has no protoc for this platform; set PROTOC")?;
    Ok(path.into_os_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_protoc_runs() {
        let output = Command::new(vendored_protoc().unwrap())
            .arg("--version")
            .output()
            .unwrap();
        assert!(output.status.success());
        assert!(
            String::from_utf8_lossy(&output.stdout).starts_with("libprotoc"),
            "{output:?}"
        );
    }
}
