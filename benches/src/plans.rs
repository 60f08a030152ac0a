//! Digests of the TPC-H and TPC-DS plans, to show that a planner change
//! leaves them as they were.
//!
//! `tpc-plan-digests.txt` holds one digest per query of its optimized logical
//! plan and its physical plan's operators and schemas, computed on pristine DataFusion 55.2.0 with the
//! same code (see `docs/single-join.md`). The test below recomputes them on
//! the fork: a query whose digest differs planned differently.
//!
//! `tpc-plan-changes.txt` lists the queries the fork plans differently on
//! purpose, each with the fork's digest and the rule that changes it: their
//! new plans are pinned as the others are.

use std::collections::BTreeMap;

use datafusion::error::Result;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;

use crate::tpc;

/// The settings the digests are taken with: fixed, since plans depend on the
/// partition count.
pub fn config() -> SessionConfig {
    SessionConfig::new()
        .with_target_partitions(4)
        .with_batch_size(8192)
}

/// `(query, plan text)` for every TPC-H and TPC-DS query: the optimized
/// logical plan followed by the physical plan.
pub async fn plan_texts() -> Result<Vec<(String, String)>> {
    let mut texts = vec![];
    for (suite, tables, queries) in [
        ("tpch", tpc::tpch_schemas(), tpc::tpch_queries()),
        ("tpcds", tpc::tpcds_schemas(), tpc::tpcds_queries()),
    ] {
        let ctx = tpc::context_with(config(), tables)?;
        for (name, sql) in queries {
            let df = ctx.sql(&sql).await?;
            let logical = df.logical_plan().clone();
            let optimized = ctx.state().optimize(&logical)?;
            let physical = ctx.state().create_physical_plan(&logical).await?;
            let text = format!(
                "{}\n{}",
                optimized.display_indent(),
                physical_shape(physical.as_ref())
            );
            texts.push((format!("{suite}/{name}"), text));
        }
    }
    Ok(texts)
}

/// The physical plan's operators with their output schemas, one per line,
/// indented by depth. Expressions are left out: their display is not the
/// plan (the fork's readable column labels change how an aggregate's
/// arguments are parenthesized in `AggregateExec`'s display, not the plan).
pub fn physical_shape(plan: &dyn ExecutionPlan) -> String {
    fn walk(plan: &dyn ExecutionPlan, depth: usize, out: &mut String) {
        let fields: Vec<String> = plan
            .schema()
            .fields()
            .iter()
            .map(|f| format!("{}:{}:{}", f.name(), f.data_type(), f.is_nullable()))
            .collect();
        out.push_str(&format!(
            "{}{} [{}]\n",
            "  ".repeat(depth),
            plan.name(),
            fields.join(", ")
        ));
        for child in plan.children() {
            walk(child.as_ref(), depth + 1, out);
        }
    }
    let mut out = String::new();
    walk(plan, 0, &mut out);
    out
}

/// FNV-1a: a digest that is the same on every platform and Rust version.
pub fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The digest file's text for `plan_texts`.
pub fn digest_file(texts: &[(String, String)]) -> String {
    texts
        .iter()
        .map(|(name, text)| format!("{name} {:016x}\n", digest(text)))
        .collect()
}

/// Writes each plan text to `dir/<suite>_<query>.txt`, to diff two builds'
/// plans when their digests differ.
pub fn write_texts(dir: &std::path::Path, texts: &[(String, String)]) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in texts {
        std::fs::write(dir.join(format!("{}.txt", name.replace('/', "_"))), text)?;
    }
    Ok(())
}

/// Parses the digest file into `query -> digest`.
pub fn parse_digest_file(file: &str) -> BTreeMap<String, String> {
    file.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| line.split_once(' '))
        .map(|(name, digest)| (name.to_string(), digest.trim().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRISTINE_DIGESTS: &str = include_str!("../tpc-plan-digests.txt");
    const PLANNED_CHANGES: &str = include_str!("../tpc-plan-changes.txt");

    /// No TPC query plans a single join, and every plan is pristine 55.2.0's
    /// but those `tpc-plan-changes.txt` lists, which are as it says.
    #[tokio::test]
    async fn tpc_plans_have_no_single_join_and_are_unchanged() -> Result<()> {
        let texts = plan_texts().await?;
        if let Some(dir) = std::env::var_os("PLAN_TEXTS_DIR") {
            write_texts(std::path::Path::new(&dir), &texts)?;
        }
        // 22 TPC-H queries; 99 TPC-DS queries, four of them in two parts
        assert_eq!(texts.len(), 22 + 103);
        for (name, text) in &texts {
            assert!(
                !text.contains("LeftSingle") && !text.contains("RightSingle"),
                "{name} plans a single join:\n{text}"
            );
        }
        let pristine = parse_digest_file(PRISTINE_DIGESTS);
        let planned = parse_digest_file(PLANNED_CHANGES);
        let fork = parse_digest_file(&digest_file(&texts));
        assert_eq!(pristine.len(), texts.len());
        let mut unexpected = vec![];
        for (name, digest) in &fork {
            // The first word of a planned change is the fork's digest
            let expected = match planned.get(name) {
                Some(change) => change.split_whitespace().next(),
                None => pristine.get(name).map(String::as_str),
            };
            if expected != Some(digest.as_str()) {
                unexpected.push(format!("{name} {digest}"));
            }
        }
        assert!(
            unexpected.is_empty(),
            "plans differ from 55.2.0's and from tpc-plan-changes.txt: {unexpected:?}"
        );
        let stale: Vec<&String> = planned
            .keys()
            .filter(|name| pristine.get(*name) == fork.get(*name))
            .collect();
        assert!(
            stale.is_empty(),
            "planned changes that change nothing: {stale:?}"
        );
        Ok(())
    }

    #[test]
    fn digest_is_fnv1a() {
        assert_eq!(digest(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(digest("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
