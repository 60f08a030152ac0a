//! The plans our docs show are plans our slt files pin.
//!
//! A doc that shows a plan (a ```` ```text ```` block in `docs/*.md` whose
//! first line is a plan node, such as `Projection: ...`) tells the reader
//! what the planner does. Written by hand, it drifts as the planner changes.
//! So each one must be the plan of an `EXPLAIN` in one of our slt files,
//! which the slt run checks against the planner: line for line, with the
//! indentation the slt file writes as `NN)--`.
//!
//! A doc may shorten a plan: a line holding `...` stands for any line that
//! begins with the text before it (`SubqueryAlias: __scalar_sq_1 ...`), and
//! such a plan matches where its lines appear in the `EXPLAIN`'s order.

use std::path::Path;

use anyhow::{Context, Result};

use crate::git;

/// Where our slt files are.
const TEST_FILES: &str = "datafusion/sqllogictest/test_files/";

/// The first words of a line that starts a plan.
const PLAN_NODES: &[&str] = &[
    "Projection:",
    "Filter:",
    "Aggregate:",
    "Sort:",
    "Limit:",
    "Dml:",
    "SubqueryAlias:",
    "Union",
    "WindowAggr:",
    "Left",
    "Right",
    "Inner",
    "Full",
];

/// The problems found: each plan of a doc that no slt file of ours pins.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let tracked = git::tracked_files(root)?;
    let mut explained: Vec<Vec<String>> = vec![];
    for file in tracked
        .iter()
        .filter(|f| f.starts_with(TEST_FILES) && f.ends_with(".slt"))
    {
        let text = std::fs::read_to_string(root.join(file))
            .with_context(|| format!("reading {file}"))?;
        explained.extend(explain_plans(&text));
    }
    let mut problems = vec![];
    for doc in tracked
        .iter()
        .filter(|f| f.starts_with("docs/") && f.ends_with(".md"))
    {
        let text = std::fs::read_to_string(root.join(doc))
            .with_context(|| format!("reading {doc}"))?;
        for (line, plan) in doc_plans(&text) {
            if !explained.iter().any(|pinned| shows(&plan, pinned)) {
                problems.push(format!(
                    "{doc}:{line}: no EXPLAIN of our slt files has the plan `{}`",
                    plan[0]
                ));
            }
        }
    }
    Ok(problems)
}

/// The plans of the `EXPLAIN` results in an slt file: each run of lines
/// numbered `NN)`, with the `-` of the indentation turned back into spaces.
fn explain_plans(slt: &str) -> Vec<Vec<String>> {
    let mut plans = vec![];
    let mut current: Vec<String> = vec![];
    for line in slt.lines() {
        match plan_line(line) {
            Some(node) => current.push(node),
            None if !current.is_empty() => plans.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        plans.push(current);
    }
    plans
}

/// `01)--Left Join: ...` as `  Left Join: ...`.
fn plan_line(line: &str) -> Option<String> {
    let (number, rest) = line.split_once(')')?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let node = rest.trim_start_matches('-');
    let indent = rest.len() - node.len();
    Some(format!("{}{node}", " ".repeat(indent)))
}

/// The plans a doc shows, with the line each begins on.
fn doc_plans(doc: &str) -> Vec<(usize, Vec<String>)> {
    let mut plans = vec![];
    let mut block: Option<(usize, Vec<String>)> = None;
    for (index, line) in doc.lines().enumerate() {
        match &mut block {
            None if line.trim_start() == "```text" => block = Some((index + 2, vec![])),
            None => {}
            Some(_) if line.trim_start() == "```" => {
                if let Some((start, lines)) = block.take()
                    && lines.first().is_some_and(|first| {
                        PLAN_NODES.iter().any(|node| first.starts_with(node))
                    })
                {
                    plans.push((start, lines));
                }
            }
            Some((_, lines)) => lines.push(line.to_string()),
        }
    }
    plans
}

/// Whether `pinned`, a plan an slt file checks, is the plan `shown` in a doc.
fn shows(shown: &[String], pinned: &[String]) -> bool {
    if !shown.iter().any(|line| line.contains("...")) {
        return shown == pinned;
    }
    let mut pinned = pinned.iter();
    shown.iter().all(|line| match line.split_once("...") {
        // A line of `...` alone stands for lines left out
        Some((prefix, _)) if prefix.trim().is_empty() => true,
        Some((prefix, _)) => pinned.any(|p| p.starts_with(prefix.trim_end())),
        None => pinned.any(|p| p == line),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLT: &str = "\
query TT
EXPLAIN SELECT ...;
----
logical_plan
01)Projection: o.id
02)--Left Join: o.k = s.k
03)----TableScan: o projection=[id, k]
04)----TableScan: s projection=[k]

query I
SELECT 1;
----
1
";

    fn doc(plan: &str) -> String {
        format!("A plan:\n\n```text\n{plan}```\n\nand a result:\n\n```text\n1\n```\n")
    }

    #[test]
    fn a_plan_in_a_doc_is_found_in_the_explain_of_an_slt_file() {
        let pinned = explain_plans(SLT);
        assert_eq!(pinned.len(), 1);
        assert_eq!(pinned[0][1], "  Left Join: o.k = s.k");
        let plans = doc_plans(&doc(
            "Projection: o.id\n  Left Join: o.k = s.k\n    TableScan: o projection=[id, k]\n    TableScan: s projection=[k]\n",
        ));
        assert_eq!(plans.len(), 1, "the result block is not a plan");
        assert_eq!(plans[0].0, 4);
        assert!(shows(&plans[0].1, &pinned[0]));
    }

    #[test]
    fn a_plan_that_drifted_is_not_found() {
        let pinned = explain_plans(SLT);
        let plans = doc_plans(&doc(
            "Projection: o.id\n  Inner Join: o.k = s.k\n    TableScan: o projection=[id, k]\n    TableScan: s projection=[k]\n",
        ));
        assert!(!shows(&plans[0].1, &pinned[0]));
    }

    #[test]
    fn a_shortened_plan_matches_the_lines_it_keeps() {
        let pinned = explain_plans(SLT);
        let kept = doc_plans(&doc("Projection: o.id\n  Left Join: o.k = s.k\n    ...\n"));
        assert!(shows(&kept[0].1, &pinned[0]));
        let prefix = doc_plans(&doc("Projection: o.id\n    TableScan: o ...\n"));
        assert!(shows(&prefix[0].1, &pinned[0]));
        let wrong = doc_plans(&doc("Projection: o.id\n    TableScan: t ...\n"));
        assert!(!shows(&wrong[0].1, &pinned[0]));
    }
}
