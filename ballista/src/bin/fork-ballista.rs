//! `fork-ballista`: runs SQL on Ballista built from the fork and prints the
//! results the way `datafusion-cli` does.
//!
//! Without `--remote`, it starts a scheduler and an executor in this process
//! on loopback; with `--remote df://host:port` it connects to running ones.
//! Statements come from `-c` and `-f`, or from the interactive prompt when
//! neither is given.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use ballista::prelude::SessionConfigExt;
use clap::Parser;
use datafusion::error::{DataFusionError, Result};
use datafusion_cli::exec;
use datafusion_cli::object_storage::instrumented::InstrumentedObjectStoreRegistry;
use datafusion_cli::print_format::PrintFormat;
use datafusion_cli::print_options::{MaxRows, PrintOptions};

#[derive(Debug, Parser)]
#[command(version, about = "Run SQL on Ballista built from the DataFusion fork")]
struct Args {
    /// Scheduler to connect to, as `df://host:port`; without it a scheduler
    /// and an executor start in this process
    #[arg(long)]
    remote: Option<String>,

    /// Execute the given SQL statement(s), then exit
    #[arg(short = 'c', long, num_args = 1..)]
    command: Vec<String>,

    /// Execute the statements of the given file(s), then exit
    #[arg(short = 'f', long, num_args = 1..)]
    file: Vec<String>,

    /// Partitions per stage (`datafusion.execution.target_partitions`)
    #[arg(long)]
    partitions: Option<usize>,

    /// Task slots of the in-process executor (ignored with `--remote`)
    #[arg(long, default_value_t = 4)]
    slots: usize,

    #[arg(long, value_enum, default_value_t = PrintFormat::Automatic)]
    format: PrintFormat,

    /// Print only the results
    #[arg(short, long)]
    quiet: bool,

    /// Rows to display for the table format (a number, or `inf`)
    #[arg(long, default_value = "40")]
    maxrows: MaxRows,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<()> {
    if let Some(missing) = args.file.iter().find(|f| !Path::new(f).is_file()) {
        return Err(DataFusionError::Configuration(format!(
            "no such file: {missing}"
        )));
    }
    let mut config =
        fork_ballista::session_config()?.with_ballista_standalone_parallelism(args.slots);
    if let Some(partitions) = args.partitions {
        if partitions == 0 {
            return Err(DataFusionError::Configuration(
                "--partitions must be greater than 0".to_string(),
            ));
        }
        config = config.with_target_partitions(partitions);
    }
    let ctx = match &args.remote {
        Some(url) => fork_ballista::remote_context(url, config).await?,
        None => fork_ballista::standalone_context(config).await?,
    };
    if !args.quiet {
        match &args.remote {
            Some(url) => {
                println!("Ballista client of the DataFusion fork, scheduler {url}")
            }
            None => println!(
                "Ballista of the DataFusion fork, standalone: scheduler and executor in process"
            ),
        }
    }

    let mut print_options = PrintOptions {
        format: args.format,
        quiet: args.quiet,
        maxrows: args.maxrows,
        color: false,
        instrumented_registry: Arc::new(InstrumentedObjectStoreRegistry::new()),
    };
    if args.command.is_empty() && args.file.is_empty() {
        return exec::exec_from_repl(&ctx, &mut print_options)
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)));
    }
    if !args.file.is_empty() {
        exec::exec_from_files(&ctx, args.file, &print_options).await?;
    }
    if !args.command.is_empty() {
        exec::exec_from_commands(&ctx, args.command, &print_options).await?;
    }
    Ok(())
}
