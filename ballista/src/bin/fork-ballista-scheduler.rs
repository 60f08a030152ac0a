//! Ballista's scheduler, built on the fork's crates: it plans with the
//! fork's optimizer, so it accepts single joins and the subqueries they
//! decorrelate; and it reads the client's in-memory tables sent with a plan
//! (`fork_ballista::memory_tables`). Takes Ballista's scheduler options
//! (`--help`).

use std::sync::Arc;

use ballista_core::error::{BallistaError, Result};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{Config, SchedulerConfig};
use ballista_scheduler::scheduler_process::start_server;
use clap::Parser;
use fork_ballista::memory_tables::MemoryTableCodec;

fn main() -> Result<()> {
    env_logger::init();
    let options = Config::parse();
    // Planning recurses over the plan tree: give it the stack Ballista's own
    // scheduler gives it.
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 * 1024 * 1024)
        .build()?
        .block_on(async {
            let address = format!("{}:{}", options.bind_host, options.bind_port)
                .parse()
                .map_err(|e| BallistaError::Configuration(format!("{e}")))?;
            let mut config = SchedulerConfig::try_from(options)?;
            config.override_logical_codec = Some(Arc::new(MemoryTableCodec::default()));
            let cluster = BallistaCluster::new_from_config(&config).await?;
            start_server(cluster, address, Arc::new(config)).await
        })
}
