//! The tables of the tests: parquet files written once per test process,
//! four files a table, so that every scan has four partitions.
//!
//! Outer tables `o(id, k)` hold NULL keys and keys the lookup side lacks;
//! lookup tables `s(k, v)` have unique keys, and each `_dup` variant adds a
//! second row for key 3 in another file than the first, so that the two
//! matches start in different partitions.

use std::path::{Path, PathBuf};

use datafusion::error::Result;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use tokio::sync::OnceCell;

/// Files per table, and partitions per stage in every session of the tests.
pub const PARTITIONS: usize = 4;

/// The key that has two rows in the `_dup` lookup tables; every outer table
/// holds it.
pub const DUPLICATED_KEY: i64 = 3;

/// Each table, as one query per file (`{i}` is the file's number).
const TABLES: &[(&str, &str)] = &[
    // 24 rows: every sixth key NULL, keys that are multiples of 15 unmatched
    (
        "o_small",
        "SELECT value AS id, CASE WHEN value % 6 = 0 THEN NULL ELSE value * 3 END AS k \
         FROM generate_series(1, 24) WHERE value % 4 = {i}",
    ),
    // 4000 rows over 60 keys: every ninth key NULL
    (
        "o_big",
        "SELECT value AS id, CASE WHEN value % 9 = 0 THEN NULL ELSE value % 60 END AS k \
         FROM generate_series(1, 4000) WHERE value % 4 = {i}",
    ),
    // 800 unique keys in 1..1000, none a multiple of 5
    (
        "s_big",
        "SELECT value AS k, value * 10 AS v FROM generate_series(1, 1000) \
         WHERE value % 5 <> 0 AND value % 4 = {i}",
    ),
    // 32 unique keys in 1..40, none a multiple of 5
    (
        "s_small",
        "SELECT value AS k, value * 10 AS v FROM generate_series(1, 40) \
         WHERE value % 5 <> 0 AND value % 4 = {i}",
    ),
];

/// The folder holding one sub-folder of parquet files per table.
pub async fn folder() -> &'static Path {
    static FOLDER: OnceCell<PathBuf> = OnceCell::const_new();
    FOLDER
        .get_or_init(|| async {
            let dir = std::env::temp_dir()
                .join(format!("fork-ballista-tests-{}", std::process::id()));
            write_tables(&dir).await.expect("writing the test tables");
            dir
        })
        .await
}

async fn write_tables(dir: &Path) -> Result<()> {
    let ctx = SessionContext::new();
    for (name, query) in TABLES {
        for duplicated in [false, true] {
            let table = if duplicated {
                format!("{name}_dup")
            } else {
                name.to_string()
            };
            if duplicated && name.starts_with('o') {
                continue;
            }
            let table_dir = dir.join(&table);
            std::fs::create_dir_all(&table_dir)?;
            for i in 0..PARTITIONS {
                let mut select = query.replace("{i}", &i.to_string());
                // The first row of key 3 is in file 3; its second goes to file 0.
                if duplicated && i == 0 {
                    select = format!(
                        "{select} UNION ALL SELECT {DUPLICATED_KEY}, -{DUPLICATED_KEY}"
                    );
                }
                let file = table_dir.join(format!("part-{i}.parquet"));
                ctx.sql(&format!(
                    "COPY ({select}) TO '{}' STORED AS PARQUET",
                    file.display()
                ))
                .await?
                .collect()
                .await?;
            }
        }
    }
    Ok(())
}

/// The names of the tables [`register`] adds.
pub fn table_names() -> Vec<String> {
    TABLES
        .iter()
        .flat_map(|(name, _)| {
            let dup = name.starts_with('s').then(|| format!("{name}_dup"));
            std::iter::once(name.to_string()).chain(dup)
        })
        .collect()
}

/// Registers every table with `ctx`.
pub async fn register(ctx: &SessionContext) -> Result<()> {
    let dir = folder().await;
    for name in table_names() {
        let path = dir.join(&name);
        ctx.register_parquet(
            &name,
            path.to_str().unwrap(),
            ParquetReadOptions::default(),
        )
        .await?;
    }
    Ok(())
}

/// A local session with the same options as the Ballista ones: the oracle.
pub async fn local_context() -> Result<SessionContext> {
    let config = fork_ballista::session_config()?.with_target_partitions(PARTITIONS);
    let ctx = SessionContext::new_with_config(config);
    register(&ctx).await?;
    Ok(ctx)
}
