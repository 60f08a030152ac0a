//! Ballista's executor, built on the fork's crates: it runs the fork's
//! operators, the single joins among them. Takes Ballista's executor options
//! (`--help`).

use std::sync::Arc;

use ballista_core::error::Result;
use ballista_executor::config::Config;
use ballista_executor::executor_process::{
    ExecutorProcessConfig, start_executor_process,
};
use clap::Parser;

#[tokio::main]
async fn main() -> Result<()> {
    env_logger::init();
    let config = ExecutorProcessConfig::try_from(Config::parse())?;
    start_executor_process(Arc::new(config)).await
}
