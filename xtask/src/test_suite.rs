//! `cargo xtask test`: the project's whole test set, ending with a summary.
//!
//! 1. The tool's own tests, `lint` (upstream's rustfmt, clippy and rustdoc
//!    bar on our code), the code names the docs use ([`doc_names`]) and the
//!    plans the docs show ([`doc_plans`]).
//! 2. Our tests (unit tests of our modules, and every test, example and
//!    bench of ours a manifest declares), as [`crate_tests`] lists them.
//!    The PostgreSQL oracle among them starts a server of its own; the
//!    server programs are installed first where missing ([`postgres`]).
//! 3. Every sqllogictest file, upstream's and ours, with upstream's runner:
//!    upstream's are the regression gate against pristine behaviour.
//! 4. The same files again with each of [`FORCED_OPTIONS`] on: an option
//!    that is off by default must not break a query that works without it.
//!    A file that then fails only in `EXPLAIN` output is expected (the plan
//!    shows the option at work; for the labels option, in projections
//!    only, and never a plan that fails: see
//!    [`slt::FailedRecords::expected_differences`]); any other failure
//!    fails the run.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::config::ForkConfig;
use crate::doc_names;
use crate::doc_plans;
use crate::fsutil::list_files;
use crate::label_check;
use crate::lint;
use crate::postgres;
use crate::slt::{self, FileResult, Origin, SltRun, Status};
use crate::targets::{self, TargetKind};
use crate::test_build::{self, Kind, Target};
use crate::upstream;

/// The unit tests of ours in each library, with the arguments its test
/// executable runs with (a name filter for our modules' tests where the
/// library's other tests are upstream's).
const LIBRARY_TESTS: &[(&str, &[&str])] = &[
    // Readable column labels, output columns of one name, rows compared,
    // and upstream's own tests of the SQL planner we patch (all fast)
    ("datafusion-sql", &[]),
    ("datafusion-expr", &[]),
    // Single join and correlated subqueries
    ("datafusion-optimizer", &[]),
    // The crates below are upstream's with our patches: all their tests
    // run. Four of upstream's spill tests compare the bytes a spill file
    // takes with a count that the Arrow IPC writer this build resolves
    // does not give (312 for 320, 424 for 440). Two are in code we do not
    // patch (`spill/mod.rs`), two in a file whose writing we do not change
    // (`spill_pool.rs`, whose reader we replace); none was run on a
    // pristine build, so they are skipped by name, not listed as passing.
    ("datafusion-common", &[]),
    ("datafusion-physical-expr", &[]),
    (
        "datafusion-physical-plan",
        &[
            "--skip",
            "spill::tests::test_in_progress_spill_file_append_and_finish",
            "--skip",
            "spill::tests::test_real_time_spill_metrics",
            "--skip",
            "spill::spill_pool::tests::test_rotation_triggered_by_size",
            "--skip",
            "spill::spill_pool::tests::test_writer_drop_finalizes_file",
        ],
    ),
    ("datafusion-physical-optimizer", &[]),
    ("datafusion-datasource", &[]),
    ("datafusion-proto-models", &[]),
    ("datafusion-substrait", &["producer::rel::join"]),
    // Every TPC-H and TPC-DS query plans
    ("fork-benches", &[]),
    // Ballista's scheduler tests with our patches, ours among them
    ("ballista-scheduler", &[]),
    // The CLI writes every row of a result
    ("datafusion-cli", &["result_output"]),
];

/// Upstream's test targets that the fork runs too: the CLI's, whose output
/// our labels change, and the SQL planner's, whose name resolution and
/// `USING` joins are ours (its two expectations of the key a right join or
/// `SELECT *` shows are patched to PostgreSQL's). The `datafusion` crate as
/// published on crates.io has no `tests/` folder, so upstream's
/// `core_integration` and the other integration tests of the core crate
/// cannot run from the pinned crates; the slt suite, which does ship, is
/// the core crate's regression gate.
const UPSTREAM_TESTS: &[(&str, &str)] = &[
    ("datafusion-cli", "cli_integration"),
    ("datafusion-sql", "sql_integration"),
];

/// Upstream's unit tests of a binary that the fork runs too: the CLI's table
/// functions read a double-quoted path (`parquet_metadata("f.parquet")`), a
/// name no column has, which the fork's lateral table functions once took
/// for a column.
const UPSTREAM_BIN_TESTS: &[(&str, &str)] = &[("datafusion-cli", "datafusion-cli")];

/// Every test target the suite runs, with the arguments of each: our
/// libraries' unit tests ([`LIBRARY_TESTS`]), every test, example and bench
/// of ours that a manifest declares ([`targets::find`]; a bench runs once,
/// in criterion's test mode), and [`UPSTREAM_TESTS`]. All are built in one
/// cargo invocation ([`test_build`]).
fn crate_tests(root: &Path) -> Result<Vec<(Target, &'static [&'static str])>> {
    let mut tests: Vec<(Target, &[&str])> = LIBRARY_TESTS
        .iter()
        .map(|(package, args)| (Target::lib(package), *args))
        .collect();
    for target in targets::find(root)? {
        let kind = match target.kind {
            TargetKind::Test => Kind::Test,
            TargetKind::Example => Kind::Example,
            TargetKind::Bench => Kind::Bench,
            TargetKind::Bin => continue,
        };
        let target = Target {
            package: target.package,
            kind,
            name: target.name,
        };
        tests.push((target, &[]));
    }
    for (package, name) in UPSTREAM_TESTS {
        tests.push((Target::test(package, name), &[]));
    }
    for (package, name) in UPSTREAM_BIN_TESTS {
        tests.push((Target::bin(package, name), &[]));
    }
    Ok(tests)
}

/// Upstream's sqllogictest runner.
fn slt_runner() -> Target {
    Target::test("datafusion-sqllogictest", "sqllogictests")
}

/// Options that are off by default, with which the slt files run a second
/// time: `(option, value)`, handed to the runner in
/// [`slt::SESSION_OPTIONS_ENV`].
const FORCED_OPTIONS: &[(&str, &str)] = &[
    ("datafusion.sql_parser.pretty_column_names", "true"),
    (
        "datafusion.optimizer.restrict_aggregate_to_join_keys",
        "true",
    ),
];

pub struct TestOptions {
    slt: bool,
    /// Whether an slt file skipped for want of its test data fails the run
    /// (`--require-test-data`, as CI runs it: there the data is beside the
    /// repository, so a missing root is a broken layout, not a machine
    /// without the data).
    require_test_data: bool,
    filters: Vec<String>,
}

impl TestOptions {
    pub fn parse(args: &[String]) -> Result<Self> {
        let mut options = Self {
            slt: true,
            require_test_data: false,
            filters: Vec::new(),
        };
        for arg in args {
            match arg.as_str() {
                "--no-slt" => options.slt = false,
                "--require-test-data" => options.require_test_data = true,
                flag if flag.starts_with('-') => {
                    bail!("unknown option `{flag}` for `test`")
                }
                filter => options.filters.push(filter.to_string()),
            }
        }
        Ok(options)
    }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    lines: Vec<String>,
}

impl Tally {
    /// One check of the tree: its summary line and each problem found; it
    /// passes where there is none.
    fn check(&mut self, summary: String, problems: &[String]) {
        self.lines.push(summary);
        self.lines
            .extend(problems.iter().map(|problem| format!("  {problem}")));
        if problems.is_empty() {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }
}

pub fn run(root: &Path, options: &TestOptions) -> Result<ExitCode> {
    let start = Instant::now();
    let mut tally = Tally::default();

    if options.filters.is_empty() {
        cargo_test(
            root,
            "tool",
            &["--manifest-path", "xtask/Cargo.toml"],
            &mut tally,
        )?;
        for finding in lint::run(root)? {
            tally.lines.push(format!(
                "lint {}: {} problem(s) in our code ({:.0}s)",
                finding.check,
                finding.problems.len(),
                finding.seconds
            ));
            for problem in &finding.problems {
                tally.lines.push(format!("  {problem}"));
            }
            if finding.problems.is_empty() {
                tally.passed += 1;
            } else {
                tally.failed += 1;
            }
        }
        let unknown = doc_names::check(root)?;
        tally.check(
            format!(
                "code names in the docs: {} that the code does not have",
                unknown.len()
            ),
            &unknown,
        );
        let stale = doc_plans::check(root)?;
        tally.check(
            format!(
                "plans in the docs: {} not pinned by an EXPLAIN of our slt files",
                stale.len()
            ),
            &stale,
        );
    }
    // One build of every test target the run needs
    let crate_tests = if options.filters.is_empty() {
        crate_tests(root)?
    } else {
        vec![]
    };
    let mut targets: Vec<Target> = crate_tests.iter().map(|(t, _)| t.clone()).collect();
    if options.slt {
        targets.push(slt_runner());
    }
    let build_start = Instant::now();
    let executables = match test_build::build(root, &targets) {
        Ok(executables) => executables,
        Err(e) => {
            tally.failed += 1;
            tally
                .lines
                .push(format!("build of the tests: FAILED: {e:#}"));
            return finish(start, tally);
        }
    };
    tally.lines.push(format!(
        "build of the tests: {} targets ({:.0}s)",
        targets.len(),
        build_start.elapsed().as_secs_f64()
    ));
    // The PostgreSQL oracle's server programs, installed where missing
    let mut test_env = vec![];
    if !crate_tests.is_empty() {
        match postgres::server_programs() {
            Ok(bin) => test_env.push(("FORK_POSTGRES_BIN", bin.into_os_string())),
            Err(e) => {
                tally.failed += 1;
                tally
                    .lines
                    .push(format!("PostgreSQL for the oracle: FAILED: {e:#}"));
            }
        }
    }
    for (target, args) in &crate_tests {
        run_test(
            root,
            target,
            &executables[target],
            args,
            &test_env,
            &mut tally,
        )?;
    }

    if options.slt {
        let config = ForkConfig::load(root)?;
        let pristine = upstream::resolve(root, &config)?;
        let slt_pristine = pristine
            .get("datafusion-sqllogictest")
            .context("datafusion-sqllogictest is not in the patched crate set")?;
        let upstream_files: BTreeSet<String> =
            list_files(&slt_pristine.join("test_files"))?
                .into_iter()
                .collect();
        let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
        let runner = &executables[&slt_runner()];
        let results = SltRun {
            root,
            runner,
            upstream_files: &upstream_files,
            filters: &options.filters,
            jobs,
            env: Vec::new(),
            label: "slt",
        }
        .run()?;
        summarize_slt(root, &results, options.require_test_data, &mut tally)?;

        for (option, value) in FORCED_OPTIONS {
            eprintln!("== slt files again with {option} = {value}");
            let label_dir = root.join("target").join("xtask").join("labels");
            if label_dir.exists() {
                std::fs::remove_dir_all(&label_dir)?;
            }
            std::fs::create_dir_all(&label_dir)?;
            let forced = SltRun {
                root,
                runner,
                upstream_files: &upstream_files,
                filters: &options.filters,
                jobs,
                env: vec![
                    (
                        slt::SESSION_OPTIONS_ENV.to_string(),
                        format!("{option}={value}"),
                    ),
                    // Print every failure, so that each one can be judged.
                    (
                        slt::ERRS_PER_FILE_LIMIT_ENV.to_string(),
                        "1000000".to_string(),
                    ),
                    // Log every label, for the check below.
                    (
                        label_check::RECORD_LABELS_ENV.to_string(),
                        label_dir.display().to_string(),
                    ),
                ],
                label: &format!("slt-{option}"),
            }
            .run()?;
            summarize_forced(root, option, value, &results, &forced, &mut tally)?;
            if *option == label_check::OPTION {
                summarize_labels(&label_dir, &mut tally)?;
            }
        }
    }

    finish(start, tally)
}

/// Prints the summary, ending with the line CI reads.
fn finish(start: Instant, tally: Tally) -> Result<ExitCode> {
    println!();
    println!(
        "== cargo xtask test: summary ({:.0}s)",
        start.elapsed().as_secs_f64()
    );
    for line in &tally.lines {
        println!("{line}");
    }
    // The closing line, in the form CI reads.
    println!(
        "total: {} passed, {} failed, {} skipped",
        tally.passed, tally.failed, tally.skipped
    );
    Ok(if tally.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs `cargo test ARGS`, streaming its output, and adds its counts.
fn cargo_test(root: &Path, label: &str, args: &[&str], tally: &mut Tally) -> Result<()> {
    eprintln!("== cargo test {}", args.join(" "));
    let start = Instant::now();
    let mut command = crate::cargo::command(root)?;
    without_snapshot_updates(&mut command);
    let output = command
        .arg("test")
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running cargo test")?;
    count_results(label, &output, start, tally);
    Ok(())
}

/// Runs a test executable of `target` as `cargo test` would (in its
/// package's folder), and adds its counts.
fn run_test(
    root: &Path,
    target: &Target,
    executable: &Path,
    args: &[&str],
    env: &[(&str, std::ffi::OsString)],
    tally: &mut Tally,
) -> Result<()> {
    let label = match target.kind {
        Kind::Lib => format!("{} lib {}", target.package, args.join(" ")),
        kind => format!("{} {kind:?} {}", target.package, target.name).to_lowercase(),
    };
    eprintln!("== {label}");
    let start = Instant::now();
    let dir = test_build::package_dir(root, &target.package);
    // A name filter that selects no test would pass with nothing run
    let skipped: Vec<&&str> = args
        .windows(2)
        .filter(|pair| pair[0] == "--skip")
        .map(|pair| &pair[1])
        .collect();
    for filter in args
        .iter()
        .filter(|arg| !arg.starts_with('-') && !skipped.contains(arg))
    {
        let listed = std::process::Command::new(executable)
            .current_dir(&dir)
            .args(["--list", filter])
            .output()
            .with_context(|| format!("listing the tests of {}", executable.display()))?;
        let selected = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter(|line| line.ends_with(": test"))
            .count();
        if selected == 0 {
            tally.failed += 1;
            tally.lines.push(format!(
                "  FAILED {}: the filter `{filter}` selects no test",
                label.trim_end()
            ));
        }
    }
    let mut command = std::process::Command::new(executable);
    without_snapshot_updates(&mut command);
    let output = command
        .current_dir(&dir)
        .env("CARGO_MANIFEST_DIR", &dir)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", executable.display()))?;
    count_results(label.trim_end(), &output, start, tally);
    Ok(())
}

/// Clears the variables that let a test accept a changed snapshot instead of
/// failing (`INSTA_UPDATE`, `INSTA_FORCE_PASS`, ...; `UPDATE_EXPECT`), so a
/// developer's shell never turns a regression into a pass.
fn without_snapshot_updates(command: &mut std::process::Command) {
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if key_text.starts_with("INSTA_") || key_text == "UPDATE_EXPECT" {
            command.env_remove(&key);
        }
    }
    command.env("INSTA_UPDATE", "no");
}

/// Adds the counts a test executable printed.
fn count_results(
    label: &str,
    output: &std::process::Output,
    start: Instant,
    tally: &mut Tally,
) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    print!("{stdout}");
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("test result: ") {
            passed += count(rest, " passed");
            failed += count(rest, " failed");
            ignored += count(rest, " ignored");
        } else if line == "Success" {
            // A criterion benchmark run once in test mode.
            passed += 1;
        }
    }
    if !output.status.success() && failed == 0 {
        failed = 1; // a build failure: count it, so the run fails
    }
    tally.passed += passed;
    tally.failed += failed;
    tally.skipped += ignored;
    tally.lines.push(format!(
        "{label}: {passed} passed, {failed} failed, {ignored} ignored ({:.0}s)",
        start.elapsed().as_secs_f64()
    ));
}

/// The number before `word` in `ok. 3 passed; 0 failed; ...`.
fn count(text: &str, word: &str) -> usize {
    text.split(';')
        .find_map(|part| {
            part.trim()
                .trim_start_matches("ok. ")
                .trim_start_matches("FAILED. ")
                .strip_suffix(word.trim_start())
                .map(str::trim)
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn summarize_slt(
    root: &Path,
    results: &[FileResult],
    require_test_data: bool,
    tally: &mut Tally,
) -> Result<()> {
    let expected = slt::load_expected_failures(root)?;
    for origin in [Origin::Upstream, Origin::Ours] {
        let of: Vec<_> = results.iter().filter(|r| r.origin == origin).collect();
        if of.is_empty() {
            continue;
        }
        let n = |f: &dyn Fn(&Status) -> bool| of.iter().filter(|r| f(&r.status)).count();
        let passed = n(&|s| *s == Status::Passed);
        let failed = n(&|s| matches!(s, Status::Failed | Status::PassedUnexpectedly));
        let expected_failures = n(&|s| *s == Status::FailedAsExpected);
        let skipped = n(&|s| matches!(s, Status::Skipped(_)));
        let retried = of.iter().filter(|r| r.first_log.is_some()).count();
        let name = match origin {
            Origin::Upstream => "upstream slt files",
            Origin::Ours => "our slt files",
        };
        tally.lines.push(format!(
            "{name}: {passed} passed, {failed} failed, {expected_failures} failed as on \
             pristine upstream ({}), {skipped} skipped; {retried} ran again alone after \
             running out of memory",
            slt::EXPECTED_FAILURES
        ));
        tally.passed += passed;
        tally.failed += failed;
        tally.skipped += expected_failures;
        if require_test_data {
            tally.failed += skipped;
        } else {
            tally.skipped += skipped;
        }
    }
    ran_again(results, tally);
    for r in results {
        match &r.status {
            Status::Failed => tally.lines.push(format!(
                "  FAILED {} (log: {})",
                r.file,
                r.log.display()
            )),
            Status::PassedUnexpectedly => tally.lines.push(format!(
                "  PASSED, but listed in {}: {} (remove it from the list)",
                slt::EXPECTED_FAILURES,
                r.file
            )),
            Status::FailedAsExpected => tally.lines.push(format!(
                "  failed as on pristine upstream: {} ({})",
                r.file,
                expected.get(&r.file).map_or("", |e| e.reason.as_str())
            )),
            Status::Skipped(why) if require_test_data => tally
                .lines
                .push(format!("  FAILED {}: {why} (--require-test-data)", r.file)),
            Status::Skipped(why) => {
                tally.lines.push(format!("  skipped {}: {why}", r.file))
            }
            Status::Passed => {}
        }
    }
    let slowest = results.iter().max_by_key(|r| r.elapsed);
    if let Some(r) = slowest {
        tally.lines.push(format!(
            "  slowest file: {} ({:.1}s)",
            r.file,
            r.elapsed.as_secs_f64()
        ));
    }
    Ok(())
}

/// Compares the run with `option` forced on against the normal run: a file
/// that passed normally must pass, or differ only in `EXPLAIN` output and in
/// `SHOW` output of the option itself.
fn summarize_forced(
    root: &Path,
    option: &str,
    value: &str,
    normal: &[FileResult],
    forced: &[FileResult],
    tally: &mut Tally,
) -> Result<()> {
    use slt::ExpectedDifference::{OptionValue, PlanText};
    let expected = slt::load_expected_failures(root)?;
    let mut passed = 0;
    let (mut plan_files, mut plan_queries) = (0, 0);
    let (mut show_files, mut show_queries) = (0, 0);
    let mut real = Vec::new();
    for (before, after) in normal.iter().zip(forced) {
        debug_assert_eq!(before.file, after.file);
        // A file that fails as on pristine upstream is held to its other
        // records, which must pass as in a file that passes
        let listed = match (&before.status, expected.get(&before.file)) {
            (Status::Passed, _) => None,
            (Status::FailedAsExpected, Some(listed)) => Some(listed),
            _ => continue,
        };
        if after.status == Status::Passed {
            passed += 1;
            continue;
        }
        let log = std::fs::read_to_string(&after.log).unwrap_or_default();
        let mut records = slt::FailedRecords::from_log(&log);
        if let Some(listed) = listed {
            records = records.without(listed);
            if records.count == 0 {
                passed += 1;
                continue;
            }
        }
        match records.expected_differences(option) {
            Some(kinds) => {
                let plan = kinds.iter().filter(|k| **k == PlanText).count();
                let show = kinds.iter().filter(|k| **k == OptionValue).count();
                plan_files += usize::from(plan > 0);
                plan_queries += plan;
                show_files += usize::from(show > 0);
                show_queries += show;
            }
            None => real.push(after),
        }
    }
    tally.lines.push(format!(
        "slt files with {option} = {value}: {passed} passed unchanged, {plan_files} \
         differ in EXPLAIN output ({plan_queries} queries), {show_files} in SHOW output \
         of the option ({show_queries} queries), {} failed; {} ran again alone after \
         running out of memory",
        real.len(),
        forced.iter().filter(|r| r.first_log.is_some()).count()
    ));
    ran_again(forced, tally);
    for r in &real {
        tally
            .lines
            .push(format!("  FAILED {} (log: {})", r.file, r.log.display()));
    }
    tally.failed += real.len();
    Ok(())
}

/// Names the files that ran out of memory under the load of the whole run
/// and ran again alone (see [`slt::SltRun::run`]).
fn ran_again(results: &[FileResult], tally: &mut Tally) {
    for r in results {
        if let Some(first_log) = &r.first_log {
            tally.lines.push(format!(
                "  ran out of memory under load, then ran again alone: {} (first log: {})",
                r.file,
                first_log.display()
            ));
        }
    }
}

/// Checks every label the forced run logged (see [`label_check`]), and lists
/// them in `target/xtask/labels.txt`.
fn summarize_labels(dir: &Path, tally: &mut Tally) -> Result<()> {
    let report = label_check::read(dir)?;
    let listing: String = report
        .labels
        .iter()
        .map(|(label, name)| format!("{label}\t{name}\n"))
        .collect();
    let list = dir.with_file_name("labels.txt");
    std::fs::write(&list, listing)?;
    tally.lines.push(format!(
        "column labels of the slt files: {} distinct labels and {} names kept, {} \
         read worse than the name they replace or show a made-up name (list: {})",
        report.labels.len(),
        report.kept,
        report.faults.len(),
        list.display()
    ));
    for (label, why) in &report.faults {
        tally.lines.push(format!("  FAILED label `{label}`: {why}"));
    }
    if report.labels.is_empty() {
        tally
            .lines
            .push("  FAILED no label was logged: the check saw nothing".to_string());
        tally.failed += 1;
    } else if report.faults.is_empty() {
        tally.passed += 1;
    }
    tally.failed += report.faults.len();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cargo_test_counts() {
        let line = "ok. 12 passed; 1 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.01s";
        assert_eq!(count(line, " passed"), 12);
        assert_eq!(count(line, " failed"), 1);
        assert_eq!(count(line, " ignored"), 3);
        assert_eq!(count("FAILED. 2 passed; 4 failed", " failed"), 4);
    }
}
