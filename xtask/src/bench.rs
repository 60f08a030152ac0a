//! `cargo xtask bench NAME`: runs one of our criterion benchmarks and reports
//! each comparison as a ratio of two variants measured in the same run.
//!
//! Every benchmark group in `benches/` measures variants of one workload
//! (`off`/`on`, `forced_aggregate`/`single_join`, ...). The report reads
//! criterion's estimates for each group and divides each variant's median by
//! the group's baseline variant.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

/// Variant names that are the baseline of their group, in order of priority.
const BASELINES: &[&str] = &["off", "forced_aggregate", "hand_written"];

pub fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    let Some((name, criterion_args)) = args.split_first() else {
        bail!("usage: cargo xtask bench NAME [CRITERION_ARGS...]");
    };
    let status = crate::cargo::command(root)?
        .args(["bench", "-p", "fork-benches", "--bench", name, "--"])
        .args(criterion_args)
        .status()
        .context("running cargo bench")?;
    if !status.success() {
        bail!("cargo bench failed");
    }
    println!("\n{}", report(&root.join("target").join("criterion"))?);
    Ok(ExitCode::SUCCESS)
}

/// A table of every group's variants: median, and ratio to the baseline.
pub fn report(criterion_dir: &Path) -> Result<String> {
    let mut out = String::from(
        "| benchmark | variant | median | ratio to baseline |\n|---|---|---|---|\n",
    );
    let mut groups: Vec<_> = std::fs::read_dir(criterion_dir)
        .with_context(|| format!("reading {}", criterion_dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir() && e.file_name() != "report")
        .collect();
    groups.sort_by_key(|e| e.file_name());
    for group in groups {
        let mut variants = Vec::new();
        for entry in std::fs::read_dir(group.path())?.filter_map(|e| e.ok()) {
            let estimates = entry.path().join("new").join("estimates.json");
            if let Ok(text) = std::fs::read_to_string(&estimates) {
                let json: serde_json::Value = serde_json::from_str(&text)?;
                if let Some(median) = json["median"]["point_estimate"].as_f64() {
                    variants
                        .push((entry.file_name().to_string_lossy().into_owned(), median));
                }
            }
        }
        variants.sort_by(|a, b| a.0.cmp(&b.0));
        let baseline = BASELINES
            .iter()
            .find_map(|b| variants.iter().find(|(name, _)| name == b))
            .map(|(_, median)| *median);
        for (variant, median) in &variants {
            let ratio = baseline.map_or("".into(), |b| format!("{:.3}", median / b));
            out.push_str(&format!(
                "| {} | {variant} | {} | {ratio} |\n",
                group.file_name().to_string_lossy(),
                human_time(*median)
            ));
        }
    }
    Ok(out)
}

fn human_time(nanos: f64) -> String {
    match nanos {
        n if n >= 1e9 => format!("{:.3} s", n / 1e9),
        n if n >= 1e6 => format!("{:.3} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.3} µs", n / 1e3),
        n => format!("{n:.1} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_to_the_baseline_variant() {
        let dir = tempfile::tempdir().unwrap();
        for (group, variant, median) in [
            ("q", "off", 2.0e6),
            ("q", "on", 2.1e6),
            ("j", "forced_aggregate", 3.0e9),
            ("j", "single_join", 1.5e9),
        ] {
            let path = dir
                .path()
                .join(group)
                .join(variant)
                .join("new/estimates.json");
            let json = format!(r#"{{"median": {{"point_estimate": {median}}}}}"#);
            crate::fsutil::write(&path, json.as_bytes()).unwrap();
        }
        let table = report(dir.path()).unwrap();
        assert!(table.contains("| q | on | 2.100 ms | 1.050 |"), "{table}");
        assert!(
            table.contains("| j | single_join | 1.500 s | 0.500 |"),
            "{table}"
        );
    }
}
