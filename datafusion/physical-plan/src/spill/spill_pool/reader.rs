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

//! The reading end of a spill pool.
//!
//! A pool with several writers ([`mpsc_channel`]) can have several files open
//! for writing at once: two writers that spill at the same moment each get a
//! file. A reader that only reads the oldest file waits for that file's writer
//! once it has read all the file holds, even when the batch it was told about
//! sits in a newer file. In `RepartitionExec` that wait is a deadlock: the
//! output partition waits for the batch, the writer of the oldest file waits
//! for the output partition to take what it already sent, and a query under a
//! memory limit stops with no error and no CPU use. So the reader of such a
//! pool reads a batch from any file that has one ([`ReadOrder::Any`]).
//!
//! A pool with one writer ([`spsc_channel`]) has at most one file open for
//! writing, the newest, and its files are read one after another, oldest
//! first, which keeps the order the batches were written in
//! ([`ReadOrder::Written`]).
//!
//! [`mpsc_channel`]: super::mpsc_channel
//! [`spsc_channel`]: super::spsc_channel

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use datafusion_common::Result;
use datafusion_execution::{RecordBatchStream, SendableRecordBatchStream};
use futures::{Stream, StreamExt};
use parking_lot::Mutex;

use super::{SpillManager, SpillPoolFile, SpillPoolShared, SpillPoolSink};

/// The order in which a [`SpillPoolReader`] returns the batches of its pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadOrder {
    /// The order they were written in. Only for a pool with one writer, whose
    /// files are written one at a time: the reader waits on the oldest file
    /// until it is finished.
    Written,
    /// Any order: the next batch comes from the oldest file that has an unread
    /// one, so a file whose writer is idle never holds up the others.
    Any,
}

/// Creates the writer and reader of a new pool, read in `order`.
pub(super) fn pool_channel(
    max_file_size_bytes: usize,
    spill_manager: Arc<SpillManager>,
    order: ReadOrder,
) -> (SpillPoolSink, SendableRecordBatchStream) {
    let schema = Arc::clone(spill_manager.schema());
    let shared = Arc::new(Mutex::new(SpillPoolShared::new(spill_manager)));
    let writer = SpillPoolSink {
        max_file_size_bytes,
        shared: Arc::clone(&shared),
    };
    let reader = SpillPoolReader {
        shared,
        files: VecDeque::new(),
        order,
        schema,
    };
    (writer, Box::pin(reader))
}

/// A stream that reads the batches of a spill pool, created by
/// [`spsc_channel`](super::spsc_channel) (in the order they were written) or
/// [`mpsc_channel`](super::mpsc_channel) (in no particular order).
///
/// When no batch is available, it returns `Poll::Pending` and is woken when a
/// writer adds one. It ends only once every writer has been dropped and every
/// batch has been read.
pub struct SpillPoolReader {
    /// Shared state of the pool
    shared: Arc<Mutex<SpillPoolShared>>,
    /// A reader for each file of the pool's queue seen so far: `files[i]`
    /// reads the pool's `files[i]`. Only this reader removes files from the
    /// queue, from both lists at once, so the two stay aligned.
    files: VecDeque<SpillPoolFile>,
    /// Which files may be read while an older one waits for its writer
    order: ReadOrder,
    /// Schema of the spilled batches
    schema: SchemaRef,
}

impl SpillPoolReader {
    /// Opens a reader for each file the pool's queue gained since last time.
    fn open_new_files(&mut self) {
        let shared = self.shared.lock();
        for file in shared.files.iter().skip(self.files.len()) {
            self.files.push_back(SpillPoolFile {
                shared: Arc::clone(file),
                reader: None,
                spill_manager: Arc::clone(&shared.spill_manager),
            });
        }
    }

    /// Forgets the file at `index`, which is finished and fully read, so its
    /// disk space is released.
    fn remove_file(&mut self, index: usize) {
        if let Some(done) = self.files.remove(index) {
            self.shared
                .lock()
                .files
                .retain(|file| !Arc::ptr_eq(file, &done.shared));
        }
    }
}

impl Stream for SpillPoolReader {
    type Item = Result<RecordBatch>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            this.open_new_files();

            let mut index = 0;
            while index < this.files.len() {
                match this.files[index].poll_next_unpin(cx) {
                    Poll::Ready(Some(batch)) => return Poll::Ready(Some(batch)),
                    Poll::Ready(None) => {
                        let finished = this.files[index].shared.lock().writer_finished;
                        if !finished {
                            // The file's stream ended before its writer did,
                            // which the file's bookkeeping rules out.
                            return Poll::Ready(None);
                        }
                        // The next file now has this index.
                        this.remove_file(index);
                    }
                    // The file's waker is registered: its writer wakes us.
                    Poll::Pending => match this.order {
                        ReadOrder::Written => break,
                        ReadOrder::Any => index += 1,
                    },
                }
            }

            // Nothing to read now. Wait for a writer to add a file or to go
            // away, unless a file was added since `open_new_files`.
            let mut shared = this.shared.lock();
            if shared.files.len() > this.files.len() {
                continue;
            }
            if this.files.is_empty() && shared.remaining_writer_count == 0 {
                return Poll::Ready(None);
            }
            shared.register_waker(cx.waker().clone());
            return Poll::Pending;
        }
    }
}

impl RecordBatchStream for SpillPoolReader {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use arrow::array::{ArrayRef, Int32Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_execution::runtime_env::RuntimeEnv;

    use super::super::{SpillPoolWriter, mpsc_channel, spsc_channel};
    use super::*;
    use crate::metrics::{ExecutionPlanMetricsSet, SpillMetrics};

    fn spill_manager() -> Arc<SpillManager> {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
        Arc::new(SpillManager::new(
            Arc::new(RuntimeEnv::default()),
            SpillMetrics::new(&ExecutionPlanMetricsSet::new(), 0),
            schema,
        ))
    }

    fn batch(value: i32) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
        let column: ArrayRef = Arc::new(Int32Array::from(vec![value]));
        RecordBatch::try_new(schema, vec![column]).unwrap()
    }

    fn value(batch: &RecordBatch) -> i32 {
        batch
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap()
            .value(0)
    }

    /// The next batch, or an error if none comes within a second: the
    /// reader would wait forever.
    async fn next_value(reader: &mut SendableRecordBatchStream) -> Result<Option<i32>> {
        match tokio::time::timeout(Duration::from_secs(1), reader.next()).await {
            Ok(Some(batch)) => Ok(Some(value(&batch?))),
            Ok(None) => Ok(None),
            Err(_) => datafusion_common::exec_err!("the reader is waiting for a batch"),
        }
    }

    /// The next `count` batches, sorted.
    async fn next_values(
        reader: &mut SendableRecordBatchStream,
        count: usize,
    ) -> Result<Vec<i32>> {
        let mut values = vec![];
        for _ in 0..count {
            match next_value(reader).await? {
                Some(value) => values.push(value),
                None => break,
            }
        }
        values.sort();
        Ok(values)
    }

    /// Spills `value` through `spilling` while `busy` is in the middle of a
    /// write of its own: `busy`'s file is out of the queue of files open for
    /// writing, as during its write, so `spilling` opens a second file.
    fn spill_beside_a_busy_writer(
        pool: &SpillPoolWriter,
        spilling: &SpillPoolSink,
        value: i32,
    ) -> Result<()> {
        let busy = pool.inner.shared.lock().open_write_files.pop_front();
        spilling.push_batch(&batch(value))?;
        pool.inner.shared.lock().open_write_files.extend(busy);
        Ok(())
    }

    #[tokio::test]
    async fn a_batch_in_a_newer_file_is_read_while_an_older_file_waits() -> Result<()> {
        let (pool, mut reader) = mpsc_channel(1024 * 1024, spill_manager());
        let first = pool.new_sink();
        let second = pool.new_sink();

        first.push_batch(&batch(1))?;
        spill_beside_a_busy_writer(&pool, &second, 2)?;
        assert_eq!(pool.inner.shared.lock().files.len(), 2);

        // Every batch written is readable, in some order, though neither
        // file is finished.
        assert_eq!(next_values(&mut reader, 2).await?, vec![1, 2]);

        // Both files stay open for writing.
        first.push_batch(&batch(3))?;
        second.push_batch(&batch(4))?;
        assert_eq!(next_values(&mut reader, 2).await?, vec![3, 4]);

        drop((first, second, pool));
        assert_eq!(next_value(&mut reader).await?, None);
        Ok(())
    }

    #[tokio::test]
    async fn files_read_to_the_end_leave_the_pool() -> Result<()> {
        // Files of one batch each: each write finishes its file.
        let (pool, mut reader) = mpsc_channel(1, spill_manager());
        let shared = Arc::clone(&pool.inner.shared);
        let other = pool.new_sink();
        pool.push_batch(&batch(1))?;
        spill_beside_a_busy_writer(&pool, &other, 2)?;
        pool.push_batch(&batch(3))?;
        assert_eq!(shared.lock().files.len(), 3);

        assert_eq!(next_values(&mut reader, 3).await?, vec![1, 2, 3]);
        drop((pool, other));
        assert_eq!(next_value(&mut reader).await?, None);
        assert!(shared.lock().files.is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn one_writer_is_read_in_the_order_it_wrote() -> Result<()> {
        // Rotates files after every second batch.
        let size = batch(0).get_array_memory_size();
        let (writer, mut reader) = spsc_channel(size + 1, spill_manager());
        for value in 0..7 {
            writer.push_batch(&batch(value))?;
        }
        for value in 0..7 {
            assert_eq!(next_value(&mut reader).await?, Some(value));
        }
        drop(writer);
        assert_eq!(next_value(&mut reader).await?, None);
        Ok(())
    }
}
