//! Runs sqllogictest files with upstream's own runner, one process per file.
//!
//! The runner reports all failures of a run together; a process per file
//! gives each file an exact status, its own log and its own time limit, at
//! the cost of a process start. Files are judged against a tracked list of
//! files that fail on pristine upstream too: any other failure, and any
//! listed file that now passes, fails the run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::fsutil::{self, list_files};
use crate::test_data::DATA_ROOTS;

pub const SLT_CRATE: &str = "datafusion/sqllogictest";
const TEST_FILES: &str = "test_files";
/// Tracked list of upstream files that fail on pristine upstream as well.
pub const EXPECTED_FAILURES: &str = "xtask/slt-expected-failures.txt";
/// A file that runs longer than this is stopped and counted as failed.
const FILE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    Upstream,
    Ours,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed,
    /// Failed, and listed as failing on pristine upstream too.
    FailedAsExpected,
    /// Listed as failing on pristine upstream, but passed: the list is stale.
    PassedUnexpectedly,
    Skipped(String),
}

#[derive(Debug)]
pub struct FileResult {
    pub file: String,
    pub origin: Origin,
    pub status: Status,
    pub elapsed: Duration,
    pub log: PathBuf,
    /// The log of a first run that ran out of memory under the load of the
    /// whole run, where the file ran again alone ([`SltRun::run`]).
    pub first_log: Option<PathBuf>,
}

pub struct SltRun<'a> {
    pub root: &'a Path,
    /// Upstream's runner, built (`sqllogictests` test target).
    pub runner: &'a Path,
    /// slt files of the pristine upstream crate, relative to `test_files/`.
    pub upstream_files: &'a BTreeSet<String>,
    pub filters: &'a [String],
    pub jobs: usize,
    /// Extra environment for the runner, e.g. a forced configuration.
    pub env: Vec<(String, String)>,
    /// Where logs go, under `target/xtask/`.
    pub label: &'a str,
}

impl SltRun<'_> {
    pub fn run(&self) -> Result<Vec<FileResult>> {
        let exe = self.runner;
        let crate_dir = self.root.join(SLT_CRATE);
        let expected = load_expected_failures(self.root)?;
        let log_dir = self.root.join("target").join("xtask").join(self.label);
        if log_dir.exists() {
            std::fs::remove_dir_all(&log_dir)?;
        }

        let mut results = Vec::new();
        let mut queue = Vec::new();
        for file in default_files(&crate_dir)? {
            if !self.filters.is_empty()
                && !self.filters.iter().any(|f| file.contains(f.as_str()))
            {
                continue;
            }
            let origin = if self.upstream_files.contains(&file) {
                Origin::Upstream
            } else {
                Origin::Ours
            };
            let log = log_dir.join(format!("{file}.log"));
            match missing_data(self.root, &crate_dir.join(TEST_FILES).join(&file))? {
                Some(root) => results.push(FileResult {
                    file,
                    origin,
                    status: Status::Skipped(format!("needs test data at {root}")),
                    elapsed: Duration::ZERO,
                    log,
                    first_log: None,
                }),
                None => queue.push((file, origin, log)),
            }
        }

        let total = queue.len();
        let queue = Mutex::new(queue.into_iter());
        let done = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.max(1) {
                scope.spawn(|| {
                    loop {
                        let next = queue.lock().unwrap().next();
                        let Some((file, origin, log)) = next else {
                            break;
                        };
                        let start = Instant::now();
                        let passed = run_file(exe, &crate_dir, &file, &log, &self.env);
                        let status = match (passed, expected.get(&file)) {
                            (Ok(true), None) => Status::Passed,
                            (Ok(true), Some(_)) => Status::PassedUnexpectedly,
                            (Ok(false), Some(listed)) => {
                                let log =
                                    std::fs::read_to_string(&log).unwrap_or_default();
                                if FailedRecords::from_log(&log).are_exactly(listed) {
                                    Status::FailedAsExpected
                                } else {
                                    Status::Failed
                                }
                            }
                            (Ok(false), None) => Status::Failed,
                            (Err(e), _) => {
                                let _ = fsutil::write(
                                    &log,
                                    format!("xtask: {e:#}\n").as_bytes(),
                                );
                                Status::Failed
                            }
                        };
                        let mut done = done.lock().unwrap();
                        if matches!(status, Status::Failed | Status::PassedUnexpectedly) {
                            eprintln!("slt: {status:?}: {file} (log: {})", log.display());
                        }
                        done.push(FileResult {
                            file,
                            origin,
                            status,
                            elapsed: start.elapsed(),
                            log,
                            first_log: None,
                        });
                        if done.len() % 50 == 0 || done.len() == total {
                            eprintln!("slt: {}/{total} files run", done.len());
                        }
                    }
                });
            }
        });
        let mut done = done.into_inner().unwrap();
        // A file that sets a memory limit and ran out of memory under the
        // load of the whole run, in every record that failed, runs again,
        // once, alone: upstream's spill tests give a few partitions a pool of
        // a few hundred KB, and which of them takes it first is decided by
        // how busy the machine is. The summary names and counts such files.
        for result in &mut done {
            let source = crate_dir.join(TEST_FILES).join(&result.file);
            if result.status != Status::Failed
                || !sets_memory_limit(&source)
                || !ran_out_of_memory(&result.log)
            {
                continue;
            }
            let first_log = result.log.with_extension("first.log");
            std::fs::rename(&result.log, &first_log)?;
            eprintln!(
                "slt: {} ran out of memory; running it again alone",
                result.file
            );
            let start = Instant::now();
            let passed = run_file(exe, &crate_dir, &result.file, &result.log, &self.env);
            result.elapsed += start.elapsed();
            if let Ok(true) = passed {
                result.status = if expected.contains_key(&result.file) {
                    Status::PassedUnexpectedly
                } else {
                    Status::Passed
                };
            }
            result.first_log = Some(first_log);
        }
        results.extend(done);
        results.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(results)
    }
}

/// Whether the run logged in `log` failed on a memory limit alone: the log
/// shows every failure the runner counted, and each is `Resources
/// exhausted`.
fn ran_out_of_memory(log: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(log) else {
        return false;
    };
    let count = FailedRecords::from_log(&text).count;
    let failures: Vec<&str> = text
        .lines()
        .filter(|line| {
            line.split_once(". ").is_some_and(|(number, _)| {
                !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .collect();
    count > 0
        && failures.len() == count
        && failures
            .iter()
            .all(|line| line.contains("Resources exhausted"))
}

/// Whether the slt file `source` sets a memory limit, the one setting under
/// which the load of the whole run can change a file's answer.
fn sets_memory_limit(source: &Path) -> bool {
    std::fs::read_to_string(source).is_ok_and(|text| text.contains("memory_limit"))
}

/// The files upstream's runner runs by default, relative to `test_files/`:
/// all `.slt` files but `tpch/` (needs `INCLUDE_TPCH` and generated data) and
/// `encrypted_parquet.slt` (needs the `parquet_encryption` feature).
pub fn default_files(crate_dir: &Path) -> Result<Vec<String>> {
    Ok(list_files(&crate_dir.join(TEST_FILES))?
        .into_iter()
        .filter(|f| f.ends_with(".slt"))
        .filter(|f| !f.starts_with("tpch") && !f.starts_with("encrypted_parquet.slt"))
        .collect())
}

/// The data root a file reads but the tree lacks, if any.
fn missing_data(root: &Path, file: &Path) -> Result<Option<&'static str>> {
    let text = std::fs::read_to_string(file)?;
    for data_root in DATA_ROOTS {
        if root.join(data_root).exists() {
            continue;
        }
        // Relative to the slt crate, `datafusion/x` is `../x` and a root-level
        // folder is `../../x`.
        let relative = match data_root.strip_prefix("datafusion/") {
            Some(inside) => format!("../{inside}"),
            None => format!("../../{data_root}"),
        };
        if text.contains(&format!("{relative}/"))
            || text.contains(&format!("../../{data_root}/"))
        {
            return Ok(Some(data_root));
        }
    }
    Ok(None)
}

/// Filters that select the records of the files `file` includes
/// (`include ./join.slt.part`). The runner takes the file's path as a
/// filter, and a filter skips every query whose record lies in a file the
/// filter does not name: without these, the included records never ran.
/// Each filter is the included path from its last directory on, up to a
/// glob's first `*` (`answers/q`), which names no `.slt` file itself.
fn include_filters(file: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("reading {}", file.display()))?;
    Ok(text
        .lines()
        .filter_map(|line| line.strip_prefix("include "))
        .map(|included| {
            let included = included.trim().trim_start_matches("./");
            let literal = included.split('*').next().unwrap_or(included);
            let start = literal
                .rfind('/')
                .and_then(|slash| literal[..slash].rfind('/').map(|s| s + 1))
                .unwrap_or(0);
            literal[start..].to_string()
        })
        .filter(|filter| !filter.is_empty())
        .collect())
}

fn run_file(
    exe: &Path,
    crate_dir: &Path,
    file: &str,
    log: &Path,
    env: &[(String, String)],
) -> Result<bool> {
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let out = std::fs::File::create(log)?;
    let mut command = Command::new(exe);
    // The run is the same whatever the caller's shell holds: its options
    // come from `env` alone
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if key_text.starts_with("DATAFUSION_") || key_text == SESSION_OPTIONS_ENV {
            command.env_remove(&key);
        }
    }
    let mut child = command
        .current_dir(crate_dir)
        .arg(format!("{TEST_FILES}/{file}"))
        .args(include_filters(&crate_dir.join(TEST_FILES).join(file))?)
        .args(["--test-threads", "1", "--color", "never"])
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status.success());
        }
        if start.elapsed() > FILE_TIMEOUT {
            child.kill()?;
            child.wait()?;
            bail!(
                "{file} ran longer than {}s and was stopped",
                FILE_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `file  reason` lines; `#` starts a comment line.
pub fn load_expected_failures(root: &Path) -> Result<BTreeMap<String, ExpectedFailure>> {
    let path = root.join(EXPECTED_FAILURES);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut map = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (place, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if reason.trim().is_empty() {
            bail!("{EXPECTED_FAILURES}:{}: `{place}` has no reason", i + 1);
        }
        let lines = place
            .split_once(':')
            .map(|(_, lines)| lines.split(',').map(str::parse).collect::<Result<_, _>>())
            .transpose()
            .ok()
            .flatten()
            .filter(|lines: &BTreeSet<u32>| !lines.is_empty());
        let (Some((file, _)), Some(lines)) = (place.split_once(':'), lines) else {
            bail!(
                "{EXPECTED_FAILURES}:{}: `{place}` names no records: write \
                 FILE:LINE,LINE,... with the line of each record that fails",
                i + 1
            );
        };
        map.insert(
            file.to_string(),
            ExpectedFailure {
                lines,
                reason: reason.trim().to_string(),
            },
        );
    }
    Ok(map)
}

/// The records of an slt file that fail on pristine upstream too, by the
/// line each starts at, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedFailure {
    pub lines: BTreeSet<u32>,
    pub reason: String,
}

/// Environment variable of the runner that sets how many failures of a
/// file it prints (10 by default).
pub const ERRS_PER_FILE_LIMIT_ENV: &str = "SLT_ERRS_PER_FILE_LIMIT";

/// Environment variable of the runner that sets session options for every
/// file: `key=value` pairs separated by `;` (read by the patched
/// `TestContext`).
pub const SESSION_OPTIONS_ENV: &str = "SLT_SESSION_OPTIONS";

/// A failed record, as a file's log shows it.
#[derive(Debug, PartialEq, Eq)]
pub struct FailedRecord {
    /// Whether the record ran and returned other rows than expected (the
    /// runner's `query result mismatch`), rather than failing to run.
    pub result_mismatch: bool,
    pub sql: String,
    /// The `-`/`+` lines of its result diff.
    pub changed: Vec<String>,
    /// Every line of its result diff, the unchanged ones (`    `) too.
    pub diff: Vec<String>,
    /// The line of the slt file the record starts at.
    pub line: Option<u32>,
}

/// The option that only renames a query's output columns.
pub const LABELS_OPTION: &str = "datafusion.sql_parser.pretty_column_names";

/// Whether `diff`, an `EXPLAIN` result's diff, changes only projections:
/// the operators of the expected plan and of the actual one, each without
/// its projections, are the same, in the same order. An expected line
/// `<slt:ignore>` stands for any operators.
fn differs_in_projections_only(diff: &[String]) -> bool {
    let operators = |kept: char| -> Vec<Operator> {
        diff.iter()
            .filter(|line| line.starts_with(' ') || line.starts_with(kept))
            .filter_map(|line| line.get(1..))
            .flat_map(|line| operators_of(line.trim()))
            .filter(|operator| {
                !matches!(operator, Operator::Named(name) if name.starts_with("Projection"))
            })
            .collect()
    };
    matches_operators(&operators('-'), &operators('+'))
}

/// An operator of an `EXPLAIN` result, or `<slt:ignore>`, which stands for
/// any operators.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Operator {
    Named(String),
    Any,
}

/// The operators one line of an `EXPLAIN` result shows: in the indented
/// form, the word or words before its `:` or first space after the `NN)--`
/// of its place in the tree (`Cross Join`, `TableScan`, `CrossJoinExec`), or
/// the plan type of a line that names only that (`physical_plan`); in the
/// tree form, each `...Exec` in its boxes.
fn operators_of(line: &str) -> Vec<Operator> {
    if line == "<slt:ignore>" {
        return vec![Operator::Any];
    }
    if line.contains(['│', '┌', '└']) {
        return line
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|word| word.len() > 4 && word.ends_with("Exec"))
            .map(|word| Operator::Named(word.to_string()))
            .collect();
    }
    let node = match line.split_once(')') {
        Some((head, rest))
            if head.rsplit(' ').next().is_some_and(|n| {
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
            }) =>
        {
            rest.trim_start_matches('-')
        }
        _ => line,
    };
    let end = node.find(':').unwrap_or(node.len());
    let operator = node[..end].trim();
    let operator = match operator.split_once(' ') {
        Some((first, _)) if first.ends_with("Exec") => first,
        _ => operator,
    };
    if operator.is_empty() {
        vec![]
    } else {
        vec![Operator::Named(operator.to_string())]
    }
}

/// Whether `actual` matches `expected`, where [`Operator::Any`] matches
/// any run of operators.
fn matches_operators(expected: &[Operator], actual: &[Operator]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((Operator::Any, rest)) => {
            (0..=actual.len()).any(|skip| matches_operators(rest, &actual[skip..]))
        }
        Some((operator, rest)) => actual.split_first().is_some_and(|(first, others)| {
            first == operator && matches_operators(rest, others)
        }),
    }
}

/// Why a file that passes normally fails with an option forced on, when the
/// failure is the option's visible effect rather than a broken query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedDifference {
    /// Only `EXPLAIN` output differs: the plan shows the option at work.
    PlanText,
    /// Only `SHOW` output differs, in lines that name the forced option.
    OptionValue,
}

/// What a failing file's log says about its failed records: how many the
/// runner counted, and those it printed.
#[derive(Debug, PartialEq, Eq)]
pub struct FailedRecords {
    pub count: usize,
    pub records: Vec<FailedRecord>,
}

impl FailedRecords {
    pub fn from_log(log: &str) -> Self {
        let count = log
            .lines()
            .find_map(|l| {
                let (n, rest) = l.strip_prefix("External error: ")?.split_once(' ')?;
                rest.starts_with("errors in file").then(|| n.parse().ok())?
            })
            .unwrap_or(0);
        let mut records: Vec<FailedRecord> = Vec::new();
        // The runner heads each failure `N. <kind>:`, then prints its SQL
        let mut result_mismatch = false;
        for line in log.lines() {
            if let Some((number, kind)) = line.split_once(". ")
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
            {
                result_mismatch = kind.starts_with("query result mismatch");
            } else if let Some(sql) = line.strip_prefix("[SQL] ") {
                records.push(FailedRecord {
                    result_mismatch,
                    sql: sql.to_string(),
                    changed: Vec::new(),
                    diff: Vec::new(),
                    line: None,
                });
                result_mismatch = false;
            } else if (line.starts_with("-   ") || line.starts_with("+   "))
                && let Some(record) = records.last_mut()
            {
                record.changed.push(line.to_string());
                record.diff.push(line.to_string());
            } else if line.starts_with("    ")
                && let Some(record) = records.last_mut()
            {
                record.diff.push(line.to_string());
            } else if let Some(place) = line.strip_prefix("at ")
                && let Some((_, number)) = place.rsplit_once(':')
                && let Some(record) = records.last_mut()
            {
                record.line = number.trim().parse().ok();
            }
        }
        Self { count, records }
    }

    /// Whether the failed records are exactly those `expected` lists: the
    /// log shows every failure, and their lines are the listed ones.
    pub fn are_exactly(&self, expected: &ExpectedFailure) -> bool {
        self.count == self.records.len()
            && self.records.iter().map(|r| r.line).collect::<BTreeSet<_>>()
                == expected.lines.iter().copied().map(Some).collect()
    }

    /// The failed records without those `expected` lists, for a file that
    /// fails as on pristine upstream.
    pub fn without(self, expected: &ExpectedFailure) -> Self {
        let listed =
            |r: &FailedRecord| r.line.is_some_and(|l| expected.lines.contains(&l));
        let printed = self.records.len();
        let records: Vec<FailedRecord> =
            self.records.into_iter().filter(|r| !listed(r)).collect();
        Self {
            count: self.count.saturating_sub(printed - records.len()),
            records,
        }
    }

    /// The kind of each failed record, if every one is an expected
    /// difference for `option` and the log shows them all. Only records
    /// that ran and returned other rows qualify: an error never does, nor
    /// an `EXPLAIN` whose plan failed only with the option (a
    /// `..._plan_error` row). With [`LABELS_OPTION`], which only renames
    /// output columns, an `EXPLAIN` may differ in projections alone: every
    /// other operator is the same, in the same order.
    pub fn expected_differences(&self, option: &str) -> Option<Vec<ExpectedDifference>> {
        if self.count == 0 || self.count != self.records.len() {
            return None;
        }
        self.records
            .iter()
            .map(|record| {
                let sql = record.sql.trim_start().to_ascii_lowercase();
                if !record.result_mismatch {
                    None
                } else if sql.starts_with("explain") {
                    let failed = record.changed.iter().any(|line| {
                        line.starts_with('+') && line.contains("_plan_error")
                    });
                    let renames_only = option != LABELS_OPTION
                        || differs_in_projections_only(&record.diff);
                    (!failed && renames_only).then_some(ExpectedDifference::PlanText)
                } else if sql.starts_with("show")
                    && !record.changed.is_empty()
                    && record.changed.iter().all(|line| line.contains(option))
                {
                    Some(ExpectedDifference::OptionValue)
                } else {
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn included_files_get_filters_of_their_own() -> Result<()> {
        let dir =
            std::env::temp_dir().join(format!("xtask-include-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("includes.slt");
        std::fs::write(
            &file,
            "include ./join.slt.part\nquery I\nSELECT 1\n----\n1\n\n\
             include ./answers/q*.slt.part\ninclude ../string/init_data.slt.part\n",
        )?;
        let filters = include_filters(&file)?;
        std::fs::remove_dir_all(&dir)?;
        assert_eq!(
            filters,
            ["join.slt.part", "answers/q", "string/init_data.slt.part"]
        );
        Ok(())
    }

    fn explain_failure(diff: &str) -> String {
        format!(
            "External error: 1 errors in file x.slt\n\n1. query result mismatch:\n\
             [SQL] EXPLAIN SELECT a FROM t\n[Diff] (-expected|+actual)\n{diff}"
        )
    }

    #[test]
    fn labels_may_change_an_explain_in_projections_only() {
        let renamed = explain_failure(
            "    logical_plan\n\
             -   01)Cross Join: \n\
             -   02)--TableScan: j1 projection=[a]\n\
             +   01)Projection: j1.a, j2.Int64(1) AS 1\n\
             +   02)--Cross Join:\n\
             +   03)----TableScan: j1 projection=[a]\n\
             \x20   physical_plan\n\
             -   01)CrossJoinExec\n\
             +   01)ProjectionExec: expr=[a@0 as a]\n\
             +   02)--CrossJoinExec\n",
        );
        let records = FailedRecords::from_log(&renamed);
        assert_eq!(
            records.expected_differences(LABELS_OPTION),
            Some(vec![ExpectedDifference::PlanText])
        );

        // Another operator: the option changed the plan, not a name
        let replanned = explain_failure(
            "    logical_plan\n\
             -   01)Inner Join: t.a = u.a\n\
             +   01)Left Join: t.a = u.a\n",
        );
        let records = FailedRecords::from_log(&replanned);
        assert_eq!(records.expected_differences(LABELS_OPTION), None);
        // which an option that changes plans may do
        assert_eq!(
            records.expected_differences("datafusion.optimizer.other"),
            Some(vec![ExpectedDifference::PlanText])
        );

        // `<slt:ignore>` stands for any operators; the tree form names its
        // operators in boxes
        let ignored = explain_failure(
            "    Plan with Metrics\n\
             -   01)AggregateExec: mode=Final,<slt:ignore>metrics=[<slt:ignore>]\n\
             -   <slt:ignore>\n\
             +   01)ProjectionExec: expr=[v1@0 as v1]\n\
             +   02)--AggregateExec: mode=Final, metrics=[output_rows=2]\n\
             +   03)----RepartitionExec: partitioning=Hash([v1@0], 2)\n",
        );
        let records = FailedRecords::from_log(&ignored);
        assert_eq!(
            records.expected_differences(LABELS_OPTION),
            Some(vec![ExpectedDifference::PlanText])
        );
        let tree = explain_failure(
            "    physical_plan\n\
             \x20   01)┌───────────────────────────┐\n\
             -   02)│       AggregateExec       │\n\
             +   02)│       ProjectionExec      │\n\
             +   03)│       AggregateExec       │\n\
             \x20   04)│ HashJoinExec ││ DataSourceExec │\n",
        );
        let records = FailedRecords::from_log(&tree);
        assert_eq!(
            records.expected_differences(LABELS_OPTION),
            Some(vec![ExpectedDifference::PlanText])
        );
        let tree_replanned =
            tree.replace("+   03)│       AggregateExec", "+   03)│       SortExec");
        let records = FailedRecords::from_log(&tree_replanned);
        assert_eq!(records.expected_differences(LABELS_OPTION), None);

        // A plan that fails only with the option is never expected
        let failed = explain_failure(
            "    logical_plan\n\
             -   01)TableScan: t projection=[a]\n\
             +   physical_plan_error This feature is not implemented: x\n",
        );
        let records = FailedRecords::from_log(&failed);
        assert_eq!(records.expected_differences(LABELS_OPTION), None);
        assert_eq!(
            records.expected_differences("datafusion.optimizer.other"),
            None
        );
    }

    #[test]
    fn expected_failures_are_records() -> Result<()> {
        let dir =
            std::env::temp_dir().join(format!("xtask-expected-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("xtask"))?;
        let list = dir.join(EXPECTED_FAILURES);
        std::fs::write(&list, "# comment\na.slt:12,30  no data\n")?;
        let expected = load_expected_failures(&dir)?;
        let listed = &expected["a.slt"];
        assert_eq!(listed.lines, BTreeSet::from([12, 30]));
        assert_eq!(listed.reason, "no data");
        std::fs::write(&list, "a.slt  a whole file\n")?;
        assert!(load_expected_failures(&dir).is_err());
        std::fs::remove_dir_all(&dir)?;

        let failure = |line: u32| {
            format!(
                "1. query result mismatch:\n[SQL] SELECT {line}\nat /x/a.slt:{line}\n"
            )
        };
        let log = |lines: &[u32]| {
            format!(
                "External error: {} errors in file /x/a.slt\n\n",
                lines.len()
            ) + &lines.iter().map(|l| failure(*l)).collect::<String>()
        };
        assert!(FailedRecords::from_log(&log(&[12, 30])).are_exactly(listed));
        assert!(!FailedRecords::from_log(&log(&[12])).are_exactly(listed));
        assert!(!FailedRecords::from_log(&log(&[12, 30, 40])).are_exactly(listed));
        let others = FailedRecords::from_log(&log(&[12, 30, 40])).without(listed);
        assert_eq!(others.count, 1);
        assert_eq!(others.records[0].line, Some(40));
        Ok(())
    }

    #[test]
    fn tells_a_memory_limit_from_other_failures() {
        let dir =
            std::env::temp_dir().join(format!("xtask-slt-oom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let oom = dir.join("oom.log");
        let mismatch = dir.join("mismatch.log");
        let oom_text = "External error: 1 errors in file /x/a.slt\n\n\
                        5. query failed: DataFusion error: Resources exhausted: \
                        Additional allocation failed\n[SQL] SELECT 1\n";
        std::fs::write(&oom, oom_text).unwrap();
        std::fs::write(
            &mismatch,
            "External error: 1 errors in file /x/a.slt\n\n1. query result mismatch:\n",
        )
        .unwrap();
        assert!(ran_out_of_memory(&oom));
        assert!(!ran_out_of_memory(&mismatch));
        assert!(!ran_out_of_memory(&dir.join("absent.log")));
        // A log that mentions the error beside another failure
        let both = dir.join("both.log");
        std::fs::write(
            &both,
            oom_text.replace("1 errors", "2 errors")
                + "6. query result mismatch:\n[SQL] SELECT 2\n",
        )
        .unwrap();
        assert!(!ran_out_of_memory(&both));
        // A file that sets no memory limit never runs again
        let source = dir.join("a.slt");
        std::fs::write(&source, "query I\nSELECT 1\n----\n1\n").unwrap();
        assert!(!sets_memory_limit(&source));
        std::fs::write(
            &source,
            "statement ok\nSET datafusion.runtime.memory_limit = '1M'\n",
        )
        .unwrap();
        assert!(sets_memory_limit(&source));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn failed_records_tell_expected_differences_from_broken_queries() {
        use ExpectedDifference::*;
        let log = "External error: 3 errors in file /x/a.slt\n\n\
                   1. query result mismatch:\n[SQL] EXPLAIN SELECT 1\n[Diff]\n-   a\n+   b\n\
                   2. query result mismatch:\n[SQL]   explain select 2;\n\
                   3. query result mismatch:\n[SQL] SHOW x.y\n-   x.y false\n+   x.y true\n";
        let records = FailedRecords::from_log(log);
        assert_eq!(records.count, 3);
        assert_eq!(records.records[0].changed, ["-   a", "+   b"]);
        assert_eq!(
            records.expected_differences("x.y"),
            Some(vec![PlanText, PlanText, OptionValue])
        );
        // A SHOW that differs elsewhere is not the option's effect.
        assert_eq!(records.expected_differences("x.z"), None);

        let log = log.replace("[SQL]   explain select 2;", "[SQL] SELECT 2");
        assert_eq!(
            FailedRecords::from_log(&log).expected_differences("x.y"),
            None
        );

        // An EXPLAIN that fails to run is a broken query, not a plan text
        let log = "External error: 2 errors in file /x/a.slt\n\n\
                   1. query failed: DataFusion error: Schema error: no field\n\
                   [SQL] EXPLAIN SELECT 1\n\
                   2. query result mismatch:\n[SQL] EXPLAIN SELECT 2\n-   a\n+   b\n";
        let records = FailedRecords::from_log(log);
        assert!(!records.records[0].result_mismatch);
        assert!(records.records[1].result_mismatch);
        assert_eq!(records.expected_differences("x.y"), None);

        // More failures than the runner printed: not provably expected.
        let log = "External error: 12 errors in file /x/a.slt\n[SQL] EXPLAIN SELECT 1\n";
        assert_eq!(
            FailedRecords::from_log(log).expected_differences("x.y"),
            None
        );
    }

    #[test]
    fn data_roots_are_found_by_their_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.slt");
        std::fs::write(
            &file,
            "CREATE EXTERNAL TABLE t LOCATION '../core/tests/data/x.csv';\n",
        )
        .unwrap();
        assert_eq!(
            missing_data(dir.path(), &file).unwrap(),
            Some("datafusion/core/tests/data")
        );
        std::fs::create_dir_all(dir.path().join("datafusion/core/tests/data")).unwrap();
        assert_eq!(missing_data(dir.path(), &file).unwrap(), None);

        std::fs::write(&file, "LOCATION '../../testing/data/csv/a.csv'\n").unwrap();
        assert_eq!(missing_data(dir.path(), &file).unwrap(), Some("testing"));
    }

    #[test]
    fn default_files_leave_out_what_upstream_leaves_out() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "a.slt",
            "sub/b.slt",
            "tpch/q1.slt",
            "encrypted_parquet.slt",
            "notes.txt",
        ] {
            fsutil::write(&dir.path().join(TEST_FILES).join(f), b"").unwrap();
        }
        assert_eq!(default_files(dir.path()).unwrap(), ["a.slt", "sub/b.slt"]);
    }
}
