//! The fork's plans on [Ballista], DataFusion's distributed engine.
//!
//! Ballista 55.0.0 depends on `datafusion = "55"`; the workspace's
//! `[patch.crates-io]` resolves it onto the fork's crates, so its scheduler
//! plans with the fork's optimizer (the single join, the decorrelation rules)
//! and its executors run the fork's operators. Physical plans travel between
//! them through `datafusion-proto`, which carries both single join types.
//!
//! This crate is the client side of that: a session that talks to an
//! in-process scheduler and executor on loopback ([`standalone_context`]) or
//! to running ones ([`remote_context`]), with the options a `datafusion-cli`
//! user has ([`session_config`]), and the `fork-ballista` command that prints
//! results the way `datafusion-cli` does. The client's in-memory tables
//! travel to the scheduler with the plan ([`memory_tables`]).
//!
//! [Ballista]: https://datafusion.apache.org/ballista/

pub mod memory_tables;

use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::common::config::ConfigOptions;
use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::memory_tables::{MemoryTableCodec, RefuseChangesToMemoryTables};

/// The options a session of the `fork-ballista` client starts with.
///
/// Ballista's own defaults, then what `datafusion-cli` sets for its users:
/// readable column labels and `NULL` printed as such, each unless its
/// `DATAFUSION_*` environment variable says otherwise, like any other option
/// read from the environment; and the codec that carries the client's
/// in-memory tables to the scheduler.
pub fn session_config() -> Result<SessionConfig> {
    let mut options = ConfigOptions::from_env()?;
    if std::env::var_os("DATAFUSION_SQL_PARSER_PRETTY_COLUMN_NAMES").is_none() {
        options.sql_parser.pretty_column_names = true;
    }
    if std::env::var_os("DATAFUSION_FORMAT_NULL").is_none() {
        options.format.null = String::from("NULL");
    }
    Ok(SessionConfig::from(options)
        .upgrade_for_ballista()
        .with_ballista_logical_extension_codec(Arc::new(MemoryTableCodec::default()))
        .with_information_schema(true))
}

/// A session whose queries run on a scheduler and an executor started in
/// this process, talking gRPC over loopback.
///
/// The executor offers `config`'s `ballista.standalone.parallelism` task
/// slots. Both servers live as long as the process.
pub async fn standalone_context(config: SessionConfig) -> Result<SessionContext> {
    SessionContext::standalone_with_state(session_state(config)).await
}

/// A session whose queries run on the Ballista scheduler at `url`
/// (`df://host:port`), which should have been built from this fork: a
/// scheduler built from upstream DataFusion cannot decode a single join.
pub async fn remote_context(url: &str, config: SessionConfig) -> Result<SessionContext> {
    SessionContext::remote_with_state(url, session_state(config)).await
}

fn session_state(config: SessionConfig) -> datafusion::execution::SessionState {
    SessionStateBuilder::new()
        .with_default_features()
        .with_config(config)
        .with_analyzer_rule(Arc::new(RefuseChangesToMemoryTables))
        .build()
}
