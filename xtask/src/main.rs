//! `cargo xtask`: the fork's tool.
//!
//! The fork is Apache DataFusion at a pinned release plus a patch set. No
//! upstream source is committed: `sync` takes the pristine crates from
//! crates.io through cargo, lays them out at upstream's own paths and applies
//! `patches/`; `save` turns edits of those files back into patches; `check`
//! guards the boundary between upstream's files and ours. `test` and `cli`
//! are the two commands a user runs.

mod bench;
mod cargo;
mod config;
mod doc_names;
mod doc_plans;
mod fsutil;
mod git;
mod label_check;
mod lint;
mod patch;
mod postgres;
mod slt;
mod targets;
mod test_build;
mod test_data;
mod test_suite;
mod tree;
mod upstream;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::config::ForkConfig;
use crate::tree::Workspace;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  sync [--force]        lay out the pinned upstream crates and apply patches/
                        (--force overwrites unsaved edits of upstream files)
  save                  rewrite patches/ from the edits of upstream files
  check                 fail on unsaved edits, patches that do not apply, and
                        tracked copies of upstream files
  test [--no-slt] [--require-test-data] [SLT_FILTER...]
                        sync, then run the project's tests and the upstream
                        sqllogictest suite; filters restrict the slt files;
                        --require-test-data fails a file that lacks its data
  cli [--release] [-- ARGS...]
                        sync, then build and run the patched datafusion-cli
  ballista [--release] [scheduler|executor] [-- ARGS...]
                        sync, then build and run on the fork's crates the
                        Ballista client `fork-ballista` (a standalone
                        scheduler and executor in process, or --remote
                        df://HOST:PORT), or Ballista's scheduler or executor
  lint                  sync, then hold our code to upstream's bar: rustfmt,
                        clippy and rustdoc without warnings (run by test)
  bench NAME [CRITERION_ARGS...]
                        sync, run benches/benches/NAME.rs (release build) and
                        report each variant's median as a ratio to its baseline
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode> {
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return Ok(ExitCode::FAILURE);
    };
    let root = repo_root()?;
    match command.as_str() {
        "sync" => {
            let force = parse_flags(rest, &["--force"])?.contains(&"--force");
            sync(&root, force)?;
            Ok(ExitCode::SUCCESS)
        }
        "save" => {
            parse_flags(rest, &[])?;
            let ws = workspace(&root)?;
            let report = ws.save()?;
            println!("{report}");
            Ok(ExitCode::SUCCESS)
        }
        "check" => {
            parse_flags(rest, &[])?;
            let ws = workspace(&root)?;
            let release = upstream::release_dirs(&root, &ForkConfig::load(&root)?)?;
            let problems = ws.check(&release)?;
            if problems.is_empty() {
                println!("check: ok ({} patches)", ws.patch_count()?);
                Ok(ExitCode::SUCCESS)
            } else {
                for problem in &problems {
                    eprintln!("check: {problem}");
                }
                eprintln!("check: {} problem(s)", problems.len());
                Ok(ExitCode::FAILURE)
            }
        }
        "test" => {
            let options = test_suite::TestOptions::parse(rest)?;
            sync(&root, false)?;
            test_suite::run(&root, &options)
        }
        "cli" => {
            let (flags, passthrough) = match rest.iter().position(|a| a == "--") {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &[][..]),
            };
            let release = parse_flags(flags, &["--release"])?.contains(&"--release");
            sync(&root, false)?;
            run_binary(&root, &DATAFUSION_CLI, release, passthrough)
        }
        "ballista" => {
            let (flags, passthrough) = match rest.iter().position(|a| a == "--") {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &[][..]),
            };
            let flags = parse_flags(flags, &["--release", "scheduler", "executor"])?;
            let binary = if flags.contains(&"scheduler") {
                &BALLISTA_SCHEDULER
            } else if flags.contains(&"executor") {
                &BALLISTA_EXECUTOR
            } else {
                &BALLISTA_CLIENT
            };
            sync(&root, false)?;
            run_binary(&root, binary, flags.contains(&"--release"), passthrough)
        }
        "lint" => {
            parse_flags(rest, &[])?;
            sync(&root, false)?;
            let findings = lint::run(&root)?;
            let mut failed = false;
            for finding in &findings {
                println!(
                    "lint: {}: {} problem(s) in our code ({:.0}s)",
                    finding.check,
                    finding.problems.len(),
                    finding.seconds
                );
                for problem in &finding.problems {
                    println!("  {problem}");
                }
                failed |= !finding.problems.is_empty();
            }
            Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        "bench" => {
            sync(&root, false)?;
            bench::run(&root, rest)
        }
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => bail!("unknown command `{other}`\n{USAGE}"),
    }
}

/// Accepts only the flags in `allowed`, so that a typo is an error rather
/// than a silently ignored option.
fn parse_flags<'a>(args: &'a [String], allowed: &[&str]) -> Result<Vec<&'a str>> {
    args.iter()
        .map(|a| {
            if allowed.contains(&a.as_str()) {
                Ok(a.as_str())
            } else {
                bail!("unexpected argument `{a}`\n{USAGE}")
            }
        })
        .collect()
}

fn sync(root: &Path, force: bool) -> Result<()> {
    let start = Instant::now();
    let ws = workspace(root)?;
    let report = ws.sync(force)?;
    let links = test_data::link(root)?;
    ws.write_git_excludes(&links)?;
    println!(
        "sync: {report}; {}; {:.1}s",
        links.summary(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

fn workspace(root: &Path) -> Result<Workspace> {
    let config = ForkConfig::load(root)?;
    let pristine = upstream::resolve(root, &config)?;
    Workspace::new(root, &config, &pristine)
}

/// A program `cargo xtask` builds from the workspace and runs.
struct Binary {
    package: &'static str,
    bin: &'static str,
    /// Features of `package` the binary needs
    features: &'static str,
}

const DATAFUSION_CLI: Binary = Binary {
    package: "datafusion-cli",
    bin: "datafusion-cli",
    features: "",
};

const BALLISTA_CLIENT: Binary = Binary {
    package: "fork-ballista",
    bin: "fork-ballista",
    features: "",
};

/// Ballista's scheduler and executor servers, built on the fork's crates
const BALLISTA_SCHEDULER: Binary = Binary {
    package: "fork-ballista",
    bin: "fork-ballista-scheduler",
    features: "servers",
};

const BALLISTA_EXECUTOR: Binary = Binary {
    package: "fork-ballista",
    bin: "fork-ballista-executor",
    features: "servers",
};

fn run_binary(
    root: &Path,
    binary: &Binary,
    release: bool,
    args: &[String],
) -> Result<ExitCode> {
    let mut cmd = cargo::command(root)?;
    cmd.args(["run", "--quiet", "-p", binary.package, "--bin", binary.bin]);
    if !binary.features.is_empty() {
        cmd.args(["--features", binary.features]);
    }
    if release {
        cmd.arg("--release");
    }
    cmd.arg("--").args(args);
    let status = cmd
        .status()
        .with_context(|| format!("running cargo for {}", binary.bin))?;
    Ok(ExitCode::from(
        status.code().unwrap_or(1).clamp(0, 255) as u8
    ))
}

/// The repository root: the parent of this tool's manifest directory.
fn repo_root() -> Result<PathBuf> {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .context("xtask has no parent directory")?
        .to_path_buf();
    if !root.join("Cargo.toml").is_file() {
        bail!("no Cargo.toml at the repository root {}", root.display());
    }
    Ok(root)
}
