//! `cargo xtask lint`: upstream's CI bar, applied to the code we wrote.
//!
//! Upstream DataFusion checks every change with `rustfmt`, `cargo clippy
//! -D warnings` and warning-free `cargo doc`. Its workspace lint settings do
//! not ship with the crates, so its pristine code does not pass `clippy`
//! here; rather than copy those settings, the fork holds to the bar only what
//! it wrote: its own files, and the lines its patches add to upstream files.
//!
//! - **rustfmt**, with upstream's settings (`rustfmt.toml`): our files, and
//!   every patched upstream file as a whole. A pristine file formats to
//!   itself, so a patched one must too: then our hunks follow upstream's
//!   style. (Upstream's generated files do not; their patches are exempt.)
//! - **clippy** on the patched crates (their libraries with their unit tests)
//!   and our own targets, in one run so that each crate is checked once, and
//!   on the tool itself: no diagnostic may point into our code.
//! - **rustdoc** with private items on every crate that holds a module of
//!   ours: no warning may point into our code.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use crate::config::ForkConfig;
use crate::git;
use crate::patch::FilePatch;
use crate::targets;
use crate::upstream::{self, PristineDirs};

/// Our own crates in the workspace.
const OUR_PACKAGES: &[&str] = &["fork-benches", "fork-ballista", "fork-oracle"];

/// Features our targets need to be checked whole: the two Ballista servers'
/// command line options.
const OUR_TARGET_FEATURES: &[&str] = &["--features", "fork-ballista/servers"];

/// What we wrote: our own Rust files, and for each patched upstream Rust
/// file the lines its patch adds. Paths are relative to the root.
#[derive(Debug, Default)]
pub struct OurCode {
    files: BTreeSet<String>,
    patched: BTreeMap<String, BTreeSet<usize>>,
}

impl OurCode {
    pub fn find(root: &Path) -> Result<Self> {
        let mut code = Self::default();
        for file in git::tracked_files(root)? {
            if let Some(target) = file
                .strip_prefix("patches/")
                .and_then(|f| f.strip_suffix(".patch"))
            {
                if target.ends_with(".rs") {
                    let text = std::fs::read_to_string(root.join(&file))?;
                    let patch = FilePatch::parse(&text)
                        .with_context(|| format!("parsing {file}"))?;
                    code.patched.insert(
                        target.to_string(),
                        patch.added_lines().into_iter().collect(),
                    );
                }
            } else if file.ends_with(".rs") {
                code.files.insert(file);
            }
        }
        Ok(code)
    }

    /// Whether a diagnostic at `file`, lines `first..=last`, points into our
    /// code.
    fn contains(&self, file: &str, first: usize, last: usize) -> bool {
        self.files.contains(file)
            || self
                .patched
                .get(file)
                .is_some_and(|added| added.range(first..=last).next().is_some())
    }

    /// Our code in the tool's own workspace, relative to `xtask/`.
    fn in_tool(&self) -> Self {
        Self {
            files: self
                .files
                .iter()
                .filter_map(|f| f.strip_prefix("xtask/").map(str::to_string))
                .collect(),
            patched: BTreeMap::new(),
        }
    }
}

/// The outcome of one of the three checks.
pub struct Finding {
    pub check: &'static str,
    pub problems: Vec<String>,
    pub seconds: f64,
}

/// What the checks need to know.
struct Context<'a> {
    root: &'a Path,
    config: ForkConfig,
    pristine: PristineDirs,
    code: OurCode,
}

type Check = fn(&Context<'_>) -> Result<Vec<String>>;

pub fn run(root: &Path) -> Result<Vec<Finding>> {
    let config = ForkConfig::load(root)?;
    let context = Context {
        root,
        pristine: upstream::resolve(root, &config)?,
        config,
        code: OurCode::find(root)?,
    };
    let checks: [(&'static str, Check); 3] = [
        ("rustfmt", rustfmt),
        ("clippy", clippy),
        ("rustdoc", rustdoc),
    ];
    let mut findings = Vec::new();
    for (check, run_check) in checks {
        eprintln!("== lint: {check}");
        let start = Instant::now();
        let problems = run_check(&context)?;
        findings.push(Finding {
            check,
            problems,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    Ok(findings)
}

/// Our files and patched files that do not format to themselves.
fn rustfmt(context: &Context<'_>) -> Result<Vec<String>> {
    let code = &context.code;
    let files: Vec<String> = code
        .files
        .iter()
        .chain(code.patched.keys())
        .cloned()
        .collect();
    let mut problems = Vec::new();
    for file in unformatted(context.root, context.root, &files)? {
        if code.patched.contains_key(&file) {
            // Judge a patched file only where its pristine file formats to
            // itself (generated code does not)
            let pristine = context.pristine_file(&file)?;
            let dir = pristine.parent().context("a file has a folder")?;
            let name = pristine.file_name().context("a file has a name")?;
            let name = name.to_string_lossy().into_owned();
            if !unformatted(context.root, dir, &[name])?.is_empty() {
                continue;
            }
        } else if !code.files.contains(&file) {
            // rustfmt also walks into the modules a file declares
            continue;
        }
        problems.push(format!(
            "{file}: does not format to itself (run `rustfmt --edition 2024 \
             --config-path rustfmt.toml {file}`)"
        ));
    }
    Ok(problems)
}

/// The files, relative to `dir`, that rustfmt would change: of `files`
/// (relative to `dir`) and the modules they declare.
fn unformatted(root: &Path, dir: &Path, files: &[String]) -> Result<BTreeSet<String>> {
    let output = Command::new("rustfmt")
        .current_dir(dir)
        .args(["--check", "--edition", "2024", "--config-path"])
        .arg(root.join("rustfmt.toml"))
        .args(files)
        .output()
        .context("running rustfmt (`rustup component add rustfmt`)")?;
    let mut unformatted = BTreeSet::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        // `Diff in /abs/path.rs:12:`, or `... at line 12:` in older versions
        let Some(rest) = line.strip_prefix("Diff in ") else {
            continue;
        };
        let path = rest.split(" at line").next().unwrap_or(rest);
        let path = match path.trim_end_matches(':').rsplit_once(".rs:") {
            Some((stem, _line)) => format!("{stem}.rs"),
            None => path.trim_end_matches(':').to_string(),
        };
        let relative = Path::new(&path)
            .strip_prefix(dir)
            .map_or(path.clone(), |p| p.to_string_lossy().into_owned());
        unformatted.insert(relative);
    }
    if !output.status.success() && unformatted.is_empty() {
        bail!(
            "rustfmt failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(unformatted)
}

impl Context<'_> {
    /// The pristine source of the upstream file at `path`.
    fn pristine_file(&self, path: &str) -> Result<PathBuf> {
        for krate in &self.config.crates {
            if let Some(rest) = path.strip_prefix(&format!("{}/", krate.path)) {
                let dir = self
                    .pristine
                    .get(&krate.name)
                    .with_context(|| format!("no pristine source for {}", krate.name))?;
                return Ok(dir.join(rest));
            }
        }
        bail!("{path} is in no upstream crate")
    }

    /// The patched crates that hold a module of ours.
    fn crates_with_modules(&self) -> Vec<&str> {
        self.config
            .crates
            .iter()
            .filter(|c| {
                let prefix = format!("{}/src/", c.path);
                self.code.files.iter().any(|f| f.starts_with(&prefix))
            })
            .map(|c| c.name.as_str())
            .collect()
    }
}

/// Clippy's diagnostics in our code.
fn clippy(context: &Context<'_>) -> Result<Vec<String>> {
    // The libraries with their unit tests, and our other targets
    let mut args = vec!["clippy", "--profile", "test", "--lib"];
    for krate in &context.config.crates {
        args.extend(["-p", krate.name.as_str()]);
    }
    for package in OUR_PACKAGES {
        args.extend(["-p", package]);
    }
    // Our targets besides the libraries, each selected by name in every
    // package that has one ([`targets::find`])
    let our_targets: BTreeSet<(&str, String)> = targets::find(context.root)?
        .into_iter()
        .map(|target| (target.kind.flag(), target.name))
        .collect();
    for (flag, name) in &our_targets {
        args.extend([*flag, name.as_str()]);
    }
    args.extend(OUR_TARGET_FEATURES);
    let mut problems = diagnostics(context.root, &args, &context.code)?;
    // The tool is ours throughout, and has its own workspace
    let args = ["clippy", "--all-targets"];
    let tool = context.code.in_tool();
    problems.extend(
        diagnostics(&context.root.join("xtask"), &args, &tool)?
            .into_iter()
            .map(|problem| format!("xtask/{problem}")),
    );
    Ok(problems)
}

/// Rustdoc's warnings in our code.
fn rustdoc(context: &Context<'_>) -> Result<Vec<String>> {
    let mut args = vec!["doc", "--no-deps", "--document-private-items"];
    for package in context.crates_with_modules() {
        args.extend(["-p", package]);
    }
    diagnostics(context.root, &args, &context.code)
}

/// Runs `cargo ARGS` in `dir` and returns its diagnostics in `code`, one
/// line each. Fails if cargo fails for another reason.
fn diagnostics(dir: &Path, args: &[&str], code: &OurCode) -> Result<Vec<String>> {
    eprintln!("   cargo {}", args.join(" "));
    let mut child = crate::cargo::command(dir)?
        .args(args)
        .arg("--message-format=json")
        .stdout(Stdio::piped())
        .spawn()
        .context("running cargo")?;
    let mut found = BTreeSet::new();
    let mut errors = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        if !line.contains("\"compiler-message\"") {
            continue;
        }
        let message: serde_json::Value = serde_json::from_str(&line)?;
        let message = &message["message"];
        let level = message["level"].as_str().unwrap_or_default();
        if !matches!(level, "warning" | "error") {
            continue;
        }
        let rendered = || message["rendered"].as_str().unwrap_or_default().to_string();
        let primary = message["spans"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|span| span["is_primary"].as_bool() == Some(true));
        let Some(span) = primary else {
            if level == "error" {
                errors.push(rendered());
            }
            continue;
        };
        let file = span["file_name"].as_str().unwrap_or_default();
        let line_of = |key: &str| span[key].as_u64().unwrap_or(0) as usize;
        let (first, last) = (line_of("line_start"), line_of("line_end"));
        if code.contains(file, first, last) {
            let text = message["message"].as_str().unwrap_or_default();
            found.insert(format!("{file}:{first}: {level}: {text}"));
        } else if level == "error" {
            errors.push(rendered());
        }
    }
    let status = child.wait()?;
    if !status.success() && found.is_empty() {
        bail!(
            "cargo {} failed outside our code:\n{}",
            args.join(" "),
            errors.join("\n")
        );
    }
    Ok(found.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_code_is_our_files_and_the_lines_patches_add() {
        let code = OurCode {
            files: BTreeSet::from([
                "a/ours.rs".to_string(),
                "xtask/src/x.rs".to_string(),
            ]),
            patched: BTreeMap::from([(
                "a/upstream.rs".to_string(),
                BTreeSet::from([10, 11, 40]),
            )]),
        };
        assert!(code.contains("a/ours.rs", 1, 1));
        assert!(code.contains("a/upstream.rs", 11, 11));
        assert!(code.contains("a/upstream.rs", 30, 45));
        assert!(!code.contains("a/upstream.rs", 12, 39));
        assert!(!code.contains("b/other.rs", 10, 10));
        assert!(code.in_tool().contains("src/x.rs", 1, 1));
        assert!(!code.in_tool().contains("a/ours.rs", 1, 1));
    }

    #[test]
    fn rustfmt_names_the_files_it_would_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rustfmt.toml"), "edition = \"2024\"\n").unwrap();
        std::fs::write(dir.path().join("good.rs"), "fn main() {}\n").unwrap();
        std::fs::write(dir.path().join("bad.rs"), "fn  main( ) {  }\n").unwrap();
        let files = ["good.rs".to_string(), "bad.rs".to_string()];
        assert_eq!(
            unformatted(dir.path(), dir.path(), &files).unwrap(),
            BTreeSet::from(["bad.rs".to_string()])
        );
    }
}
