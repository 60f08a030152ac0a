//! Physical plans holding single joins through `datafusion-proto`'s physical
//! plan serialization, with its default codec and with Ballista's, the one
//! that carries stages from the scheduler to the executors.

use std::collections::BTreeSet;
use std::sync::Arc;

use ballista_core::serde::BallistaPhysicalExtensionCodec;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::error::Result;
use datafusion::physical_plan::joins::{HashJoinExec, NestedLoopJoinExec};
use datafusion::physical_plan::{ExecutionPlan, collect, displayable};
use datafusion::prelude::SessionContext;
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec,
    physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec,
};

use crate::data;

/// Lookups whose plans hold, between them, a hash join and a nested loop
/// join of each single join type: the small side is the build side, so the
/// preserved side is built on for a small outer table and the lookup side for
/// a small lookup table.
const QUERIES: &[&str] = &[
    "SELECT o.id, (SELECT s.v FROM s_big s WHERE s.k = o.k) FROM o_small o",
    "SELECT o.id, (SELECT s.v FROM s_small s WHERE s.k = o.k) FROM o_big o",
    "SELECT o.id, (SELECT s.v FROM s_big s WHERE s.k > o.k - 1 AND s.k < o.k + 1) FROM o_small o",
    "SELECT o.id, (SELECT s.v FROM s_small s WHERE s.k > o.k - 1 AND s.k < o.k + 1) FROM o_big o",
];

/// The single joins in `plan`, as `operator join_type`.
fn single_joins(plan: &Arc<dyn ExecutionPlan>) -> Vec<String> {
    let mut found = vec![];
    plan.apply(|node| {
        let join_type = if let Some(join) = node.downcast_ref::<HashJoinExec>() {
            Some(join.join_type())
        } else {
            node.downcast_ref::<NestedLoopJoinExec>()
                .map(|join| join.join_type())
        };
        if let Some(join_type) =
            join_type.filter(|t| format!("{t:?}").ends_with("Single"))
        {
            found.push(format!("{} {join_type:?}", node.name()));
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    found
}

fn sorted_rows(batches: &[datafusion::arrow::record_batch::RecordBatch]) -> Vec<String> {
    let text = datafusion::arrow::util::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string();
    let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
    rows.sort();
    rows
}

async fn round_trip(
    ctx: &SessionContext,
    plan: &Arc<dyn ExecutionPlan>,
    codec: &dyn PhysicalExtensionCodec,
) -> Result<Arc<dyn ExecutionPlan>> {
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(plan), codec)?;
    physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), codec)
}

#[tokio::test]
async fn single_joins_survive_serialization() -> Result<()> {
    let ctx = data::local_context().await?;
    let codecs: [(&str, Arc<dyn PhysicalExtensionCodec>); 2] = [
        (
            "datafusion-proto",
            Arc::new(DefaultPhysicalExtensionCodec {}),
        ),
        (
            "ballista",
            Arc::new(BallistaPhysicalExtensionCodec::default()),
        ),
    ];
    let mut seen = BTreeSet::new();
    for sql in QUERIES {
        let plan = ctx.sql(sql).await?.create_physical_plan().await?;
        let joins = single_joins(&plan);
        assert!(!joins.is_empty(), "no single join in the plan of {sql}");
        seen.extend(joins);
        let expected_plan = displayable(plan.as_ref()).indent(true).to_string();
        let expected_rows =
            sorted_rows(&collect(Arc::clone(&plan), ctx.task_ctx()).await?);
        for (name, codec) in &codecs {
            let decoded = round_trip(&ctx, &plan, codec.as_ref()).await?;
            assert_eq!(
                displayable(decoded.as_ref()).indent(true).to_string(),
                expected_plan,
                "{name} codec changed the plan of {sql}"
            );
            let rows = sorted_rows(&collect(decoded, ctx.task_ctx()).await?);
            assert_eq!(
                rows, expected_rows,
                "{name} codec changed the rows of {sql}"
            );
        }
    }
    let expected: BTreeSet<String> = [
        "HashJoinExec LeftSingle",
        "HashJoinExec RightSingle",
        "NestedLoopJoinExec LeftSingle",
        "NestedLoopJoinExec RightSingle",
    ]
    .map(String::from)
    .into();
    assert_eq!(seen, expected);
    Ok(())
}
