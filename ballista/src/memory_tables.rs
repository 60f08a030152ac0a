//! In-memory tables of the client, carried to Ballista's scheduler.
//!
//! A table made with `CREATE TABLE t AS SELECT ...` or `register_batch`
//! lives in the client's memory as a [`MemTable`]. A query runs on the
//! scheduler, which receives the logical plan through `datafusion-proto`;
//! Ballista's own codec encodes only tables of files, so the first query of
//! such a table failed with an internal error (`LogicalExtensionCodec is not
//! provided`).
//!
//! [`MemoryTableCodec`] wraps Ballista's codec and encodes a memory table
//! with its rows (Arrow IPC, one stream per partition). The scheduler, which
//! uses the same codec, plans a scan of those rows, and the executors get
//! them inside the physical plan as any memory scan. The rows travel with
//! every query, so this suits the small tables users make by hand; a large
//! table belongs in files (`CREATE EXTERNAL TABLE`), and a plan larger than
//! the gRPC message limit (`ballista.grpc_client_max_message_size`) fails
//! with gRPC's error.
//!
//! The scheduler holds a copy, not the table: a change made there would be
//! lost. So `INSERT`, `DELETE` and `UPDATE` of a memory table through
//! Ballista fail before any row is written, with an error that says why:
//! the client refuses them when it analyzes the statement
//! ([`RefuseChangesToMemoryTables`]), and a scheduler that receives one
//! anyway holds a copy whose writes fail the same way.

use std::io::Cursor;
use std::sync::Arc;

use async_trait::async_trait;
use ballista_core::serde::BallistaLogicalExtensionCodec;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Constraints, TableReference, internal_err, plan_err};
use datafusion::datasource::MemTable;
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{
    DmlStatement, Expr, Extension, LogicalPlan, TableProviderFilterPushDown, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;

/// What an encoded memory table begins with, so that decoding tells it from
/// the tables Ballista's codec encodes.
const MAGIC: &[u8] = b"fork-memory-table/1\0";

/// Ballista's logical codec, plus the client's memory tables (module doc).
#[derive(Debug, Default)]
pub struct MemoryTableCodec {
    ballista: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for MemoryTableCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.ballista.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.ballista.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.strip_prefix(MAGIC) {
            Some(partitions) => Ok(Arc::new(ClientMemoryTable {
                name: table_ref.clone(),
                rows: decode_partitions(partitions, schema)?,
            })),
            None => self
                .ballista
                .try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let memory = node.downcast_ref::<MemTable>().or_else(|| {
            node.downcast_ref::<ClientMemoryTable>()
                .map(|copy| &copy.rows)
        });
        match memory {
            Some(memory) => {
                buf.extend_from_slice(MAGIC);
                encode_partitions(table_ref, memory, buf)
            }
            None => self
                .ballista
                .try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.ballista.try_encode_file_format(buf, node)
    }
}

/// The partition count, then for each partition the length of its Arrow IPC
/// stream and the stream.
fn encode_partitions(
    table_ref: &TableReference,
    memory: &MemTable,
    buf: &mut Vec<u8>,
) -> Result<()> {
    buf.extend_from_slice(&(memory.batches.len() as u64).to_le_bytes());
    for partition in &memory.batches {
        let Ok(batches) = partition.try_read() else {
            return plan_err!(
                "Table {table_ref} is being written to; it can be sent to Ballista's \
                 scheduler once the write has finished"
            );
        };
        let mut stream = Vec::new();
        let mut writer = StreamWriter::try_new(&mut stream, &memory.schema())?;
        for batch in batches.iter() {
            writer.write(batch)?;
        }
        writer.finish()?;
        drop(writer);
        buf.extend_from_slice(&(stream.len() as u64).to_le_bytes());
        buf.extend_from_slice(&stream);
    }
    Ok(())
}

fn decode_partitions(buf: &[u8], schema: SchemaRef) -> Result<MemTable> {
    let mut rest = buf;
    let count = take_length(&mut rest)?;
    let mut partitions = Vec::new();
    for _ in 0..count {
        let len = take_length(&mut rest)?;
        if rest.len() < len {
            return internal_err!("an encoded memory table ends early");
        }
        let (stream, after) = rest.split_at(len);
        rest = after;
        let reader = StreamReader::try_new(Cursor::new(stream), None)?;
        partitions.push(reader.collect::<std::result::Result<Vec<RecordBatch>, _>>()?);
    }
    MemTable::try_new(schema, partitions)
}

/// A little-endian `u64` from the front of `buf`.
fn take_length(buf: &mut &[u8]) -> Result<usize> {
    let Some((head, rest)) = buf.split_first_chunk::<8>() else {
        return internal_err!("an encoded memory table ends early");
    };
    *buf = rest;
    Ok(u64::from_le_bytes(*head) as usize)
}

/// Refuses a statement that writes to an in-memory table of a client whose
/// queries run on Ballista (module doc).
#[derive(Debug, Default)]
pub struct RefuseChangesToMemoryTables;

impl AnalyzerRule for RefuseChangesToMemoryTables {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.apply(|node| {
            if let LogicalPlan::Dml(DmlStatement {
                table_name,
                target,
                op,
                ..
            }) = node
                && let Some(statement) = statement_that_writes(op)
                && let Ok(provider) = source_as_provider(target)
                && (provider.downcast_ref::<MemTable>().is_some()
                    || provider.downcast_ref::<ClientMemoryTable>().is_some())
            {
                return refuse_change(statement, table_name);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        "refuse_changes_to_memory_tables"
    }
}

fn statement_that_writes(op: &WriteOp) -> Option<&'static str> {
    match op {
        WriteOp::Insert(_) => Some("INSERT"),
        WriteOp::Delete => Some("DELETE"),
        WriteOp::Update => Some("UPDATE"),
        WriteOp::Truncate => Some("TRUNCATE"),
        WriteOp::MergeInto(_) => Some("MERGE"),
        _ => None,
    }
}

fn refuse_change<T>(statement: &str, table: &TableReference) -> Result<T> {
    plan_err!(
        "{statement} of table {table} through Ballista: it is an in-memory table of \
         the client, and Ballista's scheduler would change a read-only copy of it; \
         change it in a local session, or make it a table of files (CREATE EXTERNAL TABLE)"
    )
}

/// The scheduler's read-only copy of a client's memory table.
#[derive(Debug)]
struct ClientMemoryTable {
    name: TableReference,
    rows: MemTable,
}

impl ClientMemoryTable {
    fn read_only<T>(&self, statement: &str) -> Result<T> {
        refuse_change(statement, &self.name)
    }
}

#[async_trait]
impl TableProvider for ClientMemoryTable {
    fn schema(&self) -> SchemaRef {
        self.rows.schema()
    }

    fn constraints(&self) -> Option<&Constraints> {
        self.rows.constraints()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.rows.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.rows.supports_filters_pushdown(filters)
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        _input: Arc<dyn ExecutionPlan>,
        _insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.read_only("INSERT")
    }

    async fn delete_from(
        &self,
        _state: &dyn Session,
        _filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.read_only("DELETE")
    }

    async fn update(
        &self,
        _state: &dyn Session,
        _assignments: Vec<(String, Expr)>,
        _filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.read_only("UPDATE")
    }
}
