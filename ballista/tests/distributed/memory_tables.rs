//! The client's in-memory tables on Ballista: a table made with
//! `CREATE TABLE ... AS` is read by distributed queries, its
//! correlated subqueries included, with the rows a local session gives; and
//! a change to it through Ballista fails before any row is written, since
//! the scheduler holds only a copy.

use ballista::prelude::SessionConfigExt;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::Result;
use datafusion::prelude::SessionContext;

const SETUP: &[&str] = &[
    "CREATE TABLE t AS SELECT * FROM (VALUES (1, 10), (2, 20), (3, NULL), (NULL, 40)) v(k, x)",
    "CREATE TABLE d (k INT, y INT)",
];

const QUERIES: &[&str] = &[
    "SELECT k, x FROM t ORDER BY k NULLS LAST",
    "SELECT t.k, (SELECT count(*) FROM t t2 WHERE t2.x > t.x) AS c FROM t ORDER BY t.k NULLS LAST",
    "SELECT k FROM t WHERE k NOT IN (SELECT k FROM t WHERE x IS NULL) ORDER BY k",
    "SELECT t.k AS k, d.y AS y FROM t LEFT JOIN d ON t.k = d.k ORDER BY t.k NULLS LAST",
];

async fn rows(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Ok(frame) => match frame.collect().await {
            Ok(batches) => pretty_format_batches(&batches).unwrap().to_string(),
            Err(e) => format!("error: {e}"),
        },
        Err(e) => format!("error: {e}"),
    }
}

/// A standalone Ballista session of two task slots.
async fn distributed_context() -> Result<SessionContext> {
    let config = fork_ballista::session_config()?
        .with_target_partitions(2)
        .with_ballista_standalone_parallelism(2);
    fork_ballista::standalone_context(config).await
}

async fn set_up(ctx: &SessionContext) -> Result<()> {
    for statement in SETUP {
        ctx.sql(statement).await?.collect().await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_tables_answer_as_locally() -> Result<()> {
    let distributed = distributed_context().await?;
    let local = SessionContext::new();
    set_up(&distributed).await?;
    set_up(&local).await?;
    for sql in QUERIES {
        let expected = rows(&local, sql).await;
        assert!(!expected.starts_with("error"), "{sql}: {expected}");
        assert_eq!(rows(&distributed, sql).await, expected, "{sql}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn changes_to_a_memory_table_fail_on_ballista() -> Result<()> {
    let distributed = distributed_context().await?;
    set_up(&distributed).await?;
    for statement in [
        "INSERT INTO t VALUES (5, 50)",
        "DELETE FROM t WHERE k = 1",
        "UPDATE t SET x = 0 WHERE k = 2",
    ] {
        let answer = rows(&distributed, statement).await;
        assert!(
            answer.contains("of table t through Ballista")
                && answer.contains("read-only copy")
                && !answer.contains("Internal"),
            "{statement}: {answer}"
        );
    }
    let unchanged = rows(&distributed, "SELECT count(*) AS n, sum(x) AS s FROM t").await;
    assert!(unchanged.contains("| 4 | 70 |"), "{unchanged}");
    Ok(())
}
