// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Writing a query's result: every row in the formats a result is exported
//! in, at most `--maxrows` in the table a person reads.
//!
//! `--maxrows` is a display setting of the table format. The CLI used to
//! stop keeping batches past it whatever the format, so a result written as
//! CSV or JSON lost its rows past the first batches without a word (and the
//! footer said every row was fetched). Here the CSV, TSV, JSON and NDJSON
//! formats write each batch as it arrives, holding none of them, and the
//! table keeps only the batches it shows while counting every row, so that
//! its footer can say how many it left out.

use std::io::Write;

use arrow::csv::writer::{Writer as CsvWriter, WriterBuilder};
use arrow::datatypes::SchemaRef;
use arrow::json::{ArrayWriter, LineDelimitedWriter};
use arrow::record_batch::RecordBatch;
use datafusion::common::instant::Instant;
use datafusion::common::internal_err;
use datafusion::config::FormatOptions;
use datafusion::error::Result;
use datafusion::execution::memory_pool::MemoryReservation;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::spill::get_record_batch_memory_size;
use futures::{Stream, StreamExt};

use crate::print_format::PrintFormat;
use crate::print_options::{MaxRows, PrintOptions};

/// Writes the result `stream` in `print_options.format`, followed by the
/// footer (unless quiet). Batches the table keeps are accounted in
/// `reservation`.
pub async fn print_result(
    print_options: &PrintOptions,
    schema: SchemaRef,
    mut stream: SendableRecordBatchStream,
    query_start_time: Instant,
    format_options: &FormatOptions,
    reservation: &mut MemoryReservation,
) -> Result<()> {
    if print_options.format == PrintFormat::Table {
        let max_rows = match print_options.maxrows {
            MaxRows::Unlimited => usize::MAX,
            MaxRows::Limited(n) => n,
        };
        let mut shown = vec![];
        let mut row_count = 0_usize;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let batch_rows = batch.num_rows();
            // Keep the batches up to the first one past the limit: the
            // table marks a result it cuts short by the rows past it
            if row_count <= max_rows {
                reservation.try_grow(get_record_batch_memory_size(&batch))?;
                shown.push(batch);
            }
            row_count += batch_rows;
        }
        print_options.print_batches(
            schema,
            &shown,
            query_start_time,
            row_count,
            format_options,
        )?;
        reservation.free();
        return Ok(());
    }

    let row_count = write_every_row(print_options.format, stream).await?;
    print_options.print_footer(row_count, query_start_time)
}

/// Writes every row of `stream` to stdout in `format` (not the table) as
/// the batches arrive, and returns how many there were.
pub async fn write_every_row(
    format: PrintFormat,
    mut stream: impl Stream<Item = Result<RecordBatch>> + Unpin,
) -> Result<usize> {
    let stdout = std::io::stdout();
    let mut out = StreamedOutput::new(format, stdout.lock())?;
    let mut row_count = 0_usize;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        row_count += batch.num_rows();
        out.write(&batch)?;
    }
    out.finish()?.flush()?;
    Ok(row_count)
}

/// A writer of one result in a format that is exported rather than
/// displayed: the header (CSV and TSV) and the brackets (JSON) once, around
/// every row.
#[expect(
    clippy::large_enum_variant,
    reason = "one per result, made once: boxing the larger writer saves nothing"
)]
pub enum StreamedOutput<W: Write> {
    Separated(CsvWriter<W>),
    Json { writer: ArrayWriter<W>, rows: usize },
    NdJson(LineDelimitedWriter<W>),
}

impl<W: Write> StreamedOutput<W> {
    /// A writer of `format` into `writer`; `Automatic`, outside the table
    /// display, is CSV, as for a streamed result.
    pub fn new(format: PrintFormat, writer: W) -> Result<Self> {
        let separated = |delimiter, writer| {
            Self::Separated(
                WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(delimiter)
                    .build(writer),
            )
        };
        Ok(match format {
            PrintFormat::Csv | PrintFormat::Automatic => separated(b',', writer),
            PrintFormat::Tsv => separated(b'\t', writer),
            PrintFormat::Json => Self::Json {
                writer: ArrayWriter::new(writer),
                rows: 0,
            },
            PrintFormat::NdJson => Self::NdJson(LineDelimitedWriter::new(writer)),
            PrintFormat::Table => {
                return internal_err!("the table format is displayed, not streamed");
            }
        })
    }

    /// Writes the rows of `batch`. A result without rows writes nothing, as
    /// the CLI always did for these formats.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        match self {
            Self::Separated(writer) => writer.write(batch)?,
            Self::Json { writer, rows } => {
                writer.write(batch)?;
                *rows += batch.num_rows();
            }
            Self::NdJson(writer) => writer.write(batch)?,
        }
        Ok(())
    }

    /// Ends the result (the closing bracket of a JSON array) and returns the
    /// underlying writer.
    pub fn finish(self) -> Result<W> {
        Ok(match self {
            Self::Separated(writer) => writer.into_inner(),
            Self::Json { mut writer, rows } => {
                if rows == 0 {
                    return Ok(writer.into_inner());
                }
                writer.finish()?;
                let mut inner = writer.into_inner();
                writeln!(inner)?;
                inner
            }
            Self::NdJson(mut writer) => {
                writer.finish()?;
                writer.into_inner()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int32Array;
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    fn batches(sizes: &[i32]) -> Vec<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
        let mut next = 0;
        sizes
            .iter()
            .map(|&size| {
                let values: Int32Array = (next..next + size).map(Some).collect();
                next += size;
                RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(values)]).unwrap()
            })
            .collect()
    }

    fn written(format: PrintFormat, sizes: &[i32]) -> String {
        let mut out = StreamedOutput::new(format, Vec::new()).unwrap();
        for batch in batches(sizes) {
            out.write(&batch).unwrap();
        }
        String::from_utf8(out.finish().unwrap()).unwrap()
    }

    #[test]
    fn csv_has_one_header_and_every_row() {
        assert_eq!(written(PrintFormat::Csv, &[2, 0, 1]), "a\n0\n1\n2\n");
        assert_eq!(written(PrintFormat::Tsv, &[1, 1]), "a\n0\n1\n");
    }

    #[test]
    fn json_is_one_array_over_every_batch() {
        assert_eq!(
            written(PrintFormat::Json, &[1, 2]),
            "[{\"a\":0},{\"a\":1},{\"a\":2}]\n"
        );
        assert_eq!(
            written(PrintFormat::NdJson, &[1, 2]),
            "{\"a\":0}\n{\"a\":1}\n{\"a\":2}\n"
        );
    }

    #[test]
    fn no_rows_write_nothing() {
        for format in [
            PrintFormat::Csv,
            PrintFormat::Tsv,
            PrintFormat::Json,
            PrintFormat::NdJson,
        ] {
            assert_eq!(written(format, &[0]), "", "{format:?}");
            assert_eq!(written(format, &[]), "", "{format:?}");
        }
    }
}
