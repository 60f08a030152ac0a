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

//! Duplicate detection for single joins ([`JoinType::LeftSingle`] and
//! [`JoinType::RightSingle`]).
//!
//! A single join is an outer join whose preserved side may match at most one
//! row: it decorrelates a scalar subquery, and a second match means the
//! subquery returned more than one row. The operators that implement it
//! ([`HashJoinExec`] and [`NestedLoopJoinExec`]) already keep a bitmap of the
//! matched rows of the preserved side to emit its unmatched rows; that bitmap
//! doubles as the detector, so the check is one bit test per matched row and
//! covers matches spread over batches and partitions.
//!
//! A row of the preserved side may leave the join only once every row that
//! could match it has been seen: otherwise a `LIMIT` above the join stops
//! reading before the second match, and the query returns a row it should
//! have failed on. So the operators hold back their matched rows:
//!
//! - when the preserved side is the build side ([`JoinType::LeftSingle`]), a
//!   build row can be matched by any probe row of any partition, so its match
//!   waits in [`DeferredMatches`] until the last probe partition finishes and
//!   emits it with the unmatched rows;
//! - when the preserved side is the probe side ([`JoinType::RightSingle`]), a
//!   probe row meets every build row while its own probe batch is processed,
//!   so the output of that batch waits in [`HeldProbeRows`] until the whole
//!   batch is done, even when its matches span several `batch_size` chunks.
//!
//! Holding back costs memory: the matched rows of the whole build side, with
//! the probe side's columns, where the outer join with the same answer holds
//! only its hash table. It is needed only where something above the join may
//! stop reading early; everywhere else the join reads its probe side to the
//! end, a second match fails the query before it completes, and the rows
//! can go out as they are found ([`SingleJoinOutput::Streamed`]). The physical
//! optimizer decides which (`StreamSingleJoinMatches`); a join built without
//! it holds back.
//!
//! [`HashJoinExec`]: super::HashJoinExec
//! [`NestedLoopJoinExec`]: super::NestedLoopJoinExec

use std::sync::Arc;

use arrow::array::{
    ArrayRef, AsArray, BooleanBufferBuilder, RecordBatch, RecordBatchOptions,
    UInt32Array, UInt64Array,
};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::DataType;
use datafusion_common::utils::memory::RecordBatchMemoryCounter;
use datafusion_common::{JoinType, Result, exec_err, not_impl_err};
use datafusion_execution::memory_pool::MemoryReservation;
use parking_lot::Mutex;

use crate::coalesce::{LimitedBatchCoalescer, PushBatchStatus};

/// The error a single join raises on a second match, the same as
/// `ScalarSubqueryExec` raises for an uncorrelated subquery.
pub(crate) fn more_than_one_row<T>() -> Result<T> {
    exec_err!("Scalar subquery returned more than one row")
}

/// Rejects single joins in an operator that does not implement them.
pub(crate) fn reject_single_join(operator: &str, join_type: JoinType) -> Result<()> {
    if is_single_join(join_type) {
        return not_impl_err!(
            "{operator} does not support {join_type} joins; \
             use HashJoinExec or NestedLoopJoinExec"
        );
    }
    Ok(())
}

/// Whether `join_type` is a single join.
pub fn is_single_join(join_type: JoinType) -> bool {
    matches!(join_type, JoinType::LeftSingle | JoinType::RightSingle)
}

/// When a single join lets a matched row of its preserved side go out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SingleJoinOutput {
    /// Once every row that could match it has been seen, so that a consumer
    /// that stops reading early (a `LIMIT` above the join, or a fetch in it)
    /// still sees a second match fail the query. Costs the memory of the
    /// rows held back.
    #[default]
    Held,
    /// As soon as it matches. Right only where the join's output is read to
    /// the end, so that a second match still fails the query; the join then
    /// holds no more than the outer join with the same answer.
    Streamed,
}

impl SingleJoinOutput {
    /// Whether matched rows wait until their matches are all seen
    pub fn is_held(self) -> bool {
        self == Self::Held
    }

    /// The output a serialized plan names by whether it streams its matches.
    pub fn from_streams_matches(streams: bool) -> Self {
        if streams { Self::Streamed } else { Self::Held }
    }
}

/// Marks the matched rows of the preserved build side in `visited`, failing
/// if one was already marked: by an earlier batch, another partition, or an
/// earlier position in `build_indices`.
pub(crate) fn mark_build_rows_once(
    visited: &mut BooleanBufferBuilder,
    build_indices: &UInt64Array,
) -> Result<()> {
    for index in build_indices.iter().flatten() {
        let index = index as usize;
        if visited.get_bit(index) {
            return more_than_one_row();
        }
        visited.set_bit(index, true);
    }
    Ok(())
}

/// Checks that a row of the preserved side of `join_type`, one of
/// `preserved` (`LeftSingle` for a left row, `RightSingle` for a right one),
/// matches at most once: it had no match before (`matched_before`) and
/// matches at most one row now (`matches`). Other join types always pass.
pub(crate) fn check_one_match(
    join_type: JoinType,
    preserved: JoinType,
    matched_before: bool,
    matches: usize,
) -> Result<()> {
    if join_type == preserved && (matched_before || matches > 1) {
        return more_than_one_row();
    }
    Ok(())
}

/// Checks that each row of the preserved probe side matched at most once.
///
/// `probe_indices` are the matches of one chunk of a probe batch, in
/// ascending order; `last_matched` is the last probe row matched by an earlier
/// chunk of the same batch.
pub(crate) fn check_probe_rows_once(
    probe_indices: &UInt32Array,
    last_matched: Option<usize>,
) -> Result<()> {
    let values = probe_indices.values();
    if let (Some(first), Some(last)) = (values.first(), last_matched)
        && *first as usize == last
    {
        return more_than_one_row();
    }
    if values.windows(2).any(|pair| pair[0] == pair[1]) {
        return more_than_one_row();
    }
    Ok(())
}

/// Checks that no row set in `new_matches` is already set in `matched`.
pub(crate) fn check_disjoint_matches(
    matched: &BooleanBuffer,
    new_matches: &BooleanBuffer,
) -> Result<()> {
    if (matched & new_matches).count_set_bits() > 0 {
        return more_than_one_row();
    }
    Ok(())
}

/// The matched rows of a [`JoinType::LeftSingle`] join, shared by all probe
/// partitions of one build side and emitted by the partition that finishes
/// probing last.
///
/// There is at most one matched row per build row (a second one is an
/// error), so these batches are never larger than the build side, but with
/// the probe side's columns they can be larger than the build side's own
/// memory; they count in the build side's reservation, so a join under a
/// memory limit fails with `Resources exhausted` instead of growing past it.
#[derive(Debug)]
pub(crate) struct DeferredMatches {
    batches: Mutex<HeldBatches>,
    /// The memory of `batches`; and the source of the reservations of the
    /// rows each probe partition holds back ([`HeldProbeRows`])
    reservation: MemoryReservation,
    /// The build side's rows, whose buffers the build side has reserved
    build_batch: RecordBatch,
}

impl DeferredMatches {
    /// No matched rows yet; `reservation` is a new, empty reservation of the
    /// consumer that holds `build_batch`, the build side's rows.
    pub(crate) fn new(reservation: MemoryReservation, build_batch: RecordBatch) -> Self {
        Self {
            batches: Mutex::default(),
            reservation,
            build_batch,
        }
    }

    /// Holds back `batch` of matched rows, reserving its memory.
    ///
    /// The batch's string and binary views are compacted first: they point
    /// into the data buffers of the probe batch they were taken from, which
    /// would otherwise stay alive, unmatched rows and all, until the end.
    pub(crate) fn defer(&self, batch: RecordBatch) -> Result<()> {
        let batch = compact_views(batch)?;
        self.batches.lock().hold(batch, &self.reservation)
    }

    /// Takes every matched row held so far, releasing their memory to the
    /// operators downstream. Called once, when no probe partition can add a
    /// match any more.
    pub(crate) fn take(&self) -> Vec<RecordBatch> {
        self.batches.lock().release(&self.reservation)
    }

    /// Moves every matched row into `output`, stopping when its limit is
    /// reached.
    pub(crate) fn emit(
        &self,
        output: &mut LimitedBatchCoalescer,
    ) -> Result<PushBatchStatus> {
        push_all(self.take(), output)
    }

    /// A new, empty reservation of the same consumer.
    pub(crate) fn new_reservation(&self) -> MemoryReservation {
        self.reservation.new_empty()
    }
}

/// The output of a [`JoinType::RightSingle`] join for the probe batch being
/// processed, released once the whole batch has been matched.
///
/// Each probe row matches at most once, so this is at most one probe batch's
/// worth of output rows; they count in the build side's reservation all the
/// same, through [`DeferredMatches::new_reservation`].
#[derive(Debug, Default)]
pub(crate) struct HeldProbeRows {
    batches: HeldBatches,
    /// The memory of `batches`, taken from the build side on the first hold
    reservation: Option<MemoryReservation>,
}

impl HeldProbeRows {
    /// Holds back `batch`, output for the current probe batch, reserving its
    /// memory with the consumer of `build_side`'s reservation.
    pub(crate) fn hold(
        &mut self,
        batch: RecordBatch,
        build_side: &DeferredMatches,
    ) -> Result<()> {
        let reservation = self
            .reservation
            .get_or_insert_with(|| build_side.new_reservation());
        if self.batches.batches.is_empty() {
            // Output columns taken from the build side can share its
            // buffers (string views do), which the build side has reserved.
            self.batches.buffers.count_batch(&build_side.build_batch);
        }
        self.batches.hold(batch, reservation)
    }

    /// Takes the output held for the probe batch, which is now complete,
    /// releasing its memory to the operators downstream.
    pub(crate) fn release(&mut self) -> Vec<RecordBatch> {
        match &self.reservation {
            Some(reservation) => self.batches.release(reservation),
            None => vec![],
        }
    }

    /// Holds back `batch`, and moves everything held into `output` once
    /// `probe_batch_done`.
    pub(crate) fn push(
        &mut self,
        batch: RecordBatch,
        probe_batch_done: bool,
        build_side: &DeferredMatches,
        output: &mut LimitedBatchCoalescer,
    ) -> Result<PushBatchStatus> {
        self.hold(batch, build_side)?;
        if probe_batch_done {
            push_all(self.release(), output)
        } else {
            Ok(PushBatchStatus::Continue)
        }
    }
}

/// Batches a single join holds back, with their memory in a reservation.
#[derive(Debug, Default)]
struct HeldBatches {
    batches: Vec<RecordBatch>,
    /// Counts each buffer once: output batches share buffers, as string
    /// views taken from one probe batch share its data buffers.
    buffers: RecordBatchMemoryCounter,
    /// The bytes reserved for `batches`
    reserved: usize,
}

impl HeldBatches {
    fn hold(
        &mut self,
        batch: RecordBatch,
        reservation: &MemoryReservation,
    ) -> Result<()> {
        if batch.num_rows() > 0 {
            let size = self.buffers.count_batch(&batch);
            reservation.try_grow(size)?;
            self.reserved += size;
            self.batches.push(batch);
        }
        Ok(())
    }

    fn release(&mut self, reservation: &MemoryReservation) -> Vec<RecordBatch> {
        reservation.shrink(std::mem::take(&mut self.reserved));
        self.buffers = RecordBatchMemoryCounter::new();
        std::mem::take(&mut self.batches)
    }
}

/// `batch` with each `Utf8View` / `BinaryView` column copied into data
/// buffers that hold only its own values.
fn compact_views(batch: RecordBatch) -> Result<RecordBatch> {
    let has_views = batch.columns().iter().any(|column| {
        matches!(
            column.data_type(),
            DataType::Utf8View | DataType::BinaryView
        )
    });
    if !has_views {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .map(|column| match column.data_type() {
            DataType::Utf8View => Arc::new(column.as_string_view().gc()) as ArrayRef,
            DataType::BinaryView => Arc::new(column.as_binary_view().gc()),
            _ => Arc::clone(column),
        })
        .collect();
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        batch.schema(),
        columns,
        &options,
    )?)
}

fn push_all(
    batches: Vec<RecordBatch>,
    output: &mut LimitedBatchCoalescer,
) -> Result<PushBatchStatus> {
    for batch in batches {
        if output.push_batch(batch)? == PushBatchStatus::LimitReached {
            return Ok(PushBatchStatus::LimitReached);
        }
    }
    Ok(PushBatchStatus::Continue)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, Int32Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use arrow::util::pretty::pretty_format_batches;
    use datafusion_common::{JoinSide, NullEquality};
    use datafusion_execution::TaskContext;
    use datafusion_execution::config::SessionConfig;
    use datafusion_expr::Operator;
    use datafusion_physical_expr::Partitioning;
    use datafusion_physical_expr::expressions::{BinaryExpr, Column};

    use super::*;
    use crate::ExecutionPlan;
    use crate::coalesce_partitions::CoalescePartitionsExec;
    use crate::joins::utils::{ColumnIndex, JoinFilter};
    use crate::joins::{HashJoinExec, NestedLoopJoinExec, PartitionMode};
    use crate::limit::GlobalLimitExec;
    use crate::repartition::RepartitionExec;
    use crate::test::TestMemoryExec;

    const PARTITIONS: usize = 3;

    fn visited(len: usize) -> BooleanBufferBuilder {
        let mut bitmap = BooleanBufferBuilder::new(len);
        bitmap.append_n(len, false);
        bitmap
    }

    #[test]
    fn build_rows_matched_once_are_marked() -> Result<()> {
        let mut bitmap = visited(4);
        mark_build_rows_once(&mut bitmap, &UInt64Array::from(vec![0, 2]))?;
        mark_build_rows_once(&mut bitmap, &UInt64Array::from(vec![3]))?;
        assert_eq!(
            (0..4).map(|i| bitmap.get_bit(i)).collect::<Vec<_>>(),
            vec![true, false, true, true]
        );
        Ok(())
    }

    #[test]
    fn build_row_matched_twice_fails() {
        let mut bitmap = visited(4);
        let err = mark_build_rows_once(&mut bitmap, &UInt64Array::from(vec![1, 1]))
            .unwrap_err();
        assert!(err.to_string().contains("more than one row"), "{err}");

        let mut bitmap = visited(4);
        mark_build_rows_once(&mut bitmap, &UInt64Array::from(vec![1])).unwrap();
        assert!(mark_build_rows_once(&mut bitmap, &UInt64Array::from(vec![1])).is_err());
    }

    #[test]
    fn probe_rows_matched_twice_fail() {
        assert!(check_probe_rows_once(&UInt32Array::from(vec![0, 1, 3]), None).is_ok());
        assert!(check_probe_rows_once(&UInt32Array::from(vec![0, 1, 1]), None).is_err());
        // A probe row whose matches continue from the previous chunk
        assert!(check_probe_rows_once(&UInt32Array::from(vec![2, 4]), Some(2)).is_err());
        assert!(check_probe_rows_once(&UInt32Array::from(vec![3, 4]), Some(2)).is_ok());
        assert!(
            check_probe_rows_once(&UInt32Array::from(Vec::<u32>::new()), Some(2)).is_ok()
        );
    }

    #[test]
    fn overlapping_matches_fail() {
        let matched = BooleanBuffer::from(vec![true, false, false]);
        let disjoint = BooleanBuffer::from(vec![false, true, true]);
        assert!(check_disjoint_matches(&matched, &disjoint).is_ok());
        assert!(check_disjoint_matches(&matched, &matched).is_err());
    }

    fn reservation() -> MemoryReservation {
        let pool: Arc<dyn datafusion_execution::memory_pool::MemoryPool> =
            Arc::new(datafusion_execution::memory_pool::UnboundedMemoryPool::default());
        datafusion_execution::memory_pool::MemoryConsumer::new("test").register(&pool)
    }

    /// One row of a batch of 1,000 strings of 100 bytes, as a join's `take`
    /// leaves it: its view still points into the whole data buffer.
    fn one_matched_string() -> RecordBatch {
        let strings = arrow::array::StringViewArray::from_iter_values(
            (0..1000).map(|i| format!("{i:0>100}")),
        );
        let matched =
            arrow::compute::take(&strings, &UInt32Array::from(vec![7]), None).unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "s",
            DataType::Utf8View,
            false,
        )]));
        RecordBatch::try_new(schema, vec![matched]).unwrap()
    }

    #[test]
    fn deferred_matches_are_reserved_and_keep_only_their_own_strings() -> Result<()> {
        let batch = one_matched_string();
        assert!(batch.get_array_memory_size() > 100_000);

        let matches = DeferredMatches::new(reservation(), one_matched_string());
        matches.defer(batch.clone())?;
        let held = matches.reservation.size();
        assert!(held > 0 && held < 1_000, "reserved {held} bytes");

        let taken = matches.take();
        assert_eq!(matches.reservation.size(), 0);
        assert_eq!(taken.len(), 1);
        assert_eq!(
            taken[0].column(0).as_string_view().value(0),
            format!("{:0>100}", 7)
        );
        Ok(())
    }

    #[test]
    fn held_probe_rows_do_not_reserve_the_build_sides_buffers_again() -> Result<()> {
        let build_batch = one_matched_string();
        let build_side = DeferredMatches::new(reservation(), build_batch.clone());
        let mut held = HeldProbeRows::default();
        // Output rows taken from the build side share its data buffer.
        held.hold(build_batch.clone(), &build_side)?;
        let reserved = held.reservation.as_ref().map(MemoryReservation::size);
        assert_eq!(reserved, Some(0));
        held.release();
        held.hold(build_batch, &build_side)?;
        let reserved = held.reservation.as_ref().map(MemoryReservation::size);
        assert_eq!(reserved, Some(0));
        Ok(())
    }

    #[test]
    fn held_probe_rows_are_reserved_until_released() -> Result<()> {
        let build_side = DeferredMatches::new(
            reservation(),
            RecordBatch::new_empty(Arc::new(Schema::empty())),
        );
        let mut held = HeldProbeRows::default();
        let batch = one_matched_string();
        held.hold(batch.clone(), &build_side)?;
        held.hold(batch, &build_side)?;
        let reserved = held.reservation.as_ref().map(MemoryReservation::size);
        // The two batches share one data buffer: it counts once.
        let buffer = one_matched_string().get_array_memory_size();
        assert!(
            reserved > Some(0) && reserved < Some(2 * buffer),
            "{reserved:?}"
        );
        assert_eq!(held.release().len(), 2);
        assert_eq!(
            held.reservation.as_ref().map(MemoryReservation::size),
            Some(0)
        );
        Ok(())
    }

    #[test]
    fn only_single_joins_are_rejected() {
        assert!(reject_single_join("SortMergeJoinExec", JoinType::Left).is_ok());
        let err = reject_single_join("SortMergeJoinExec", JoinType::RightSingle)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("SortMergeJoinExec does not support RightSingle"),
            "{err}"
        );
    }

    /// The join keys of a test table's rows.
    type Keys = Vec<Option<i32>>;

    /// The operator running a single join in a test.
    #[derive(Debug, Clone, Copy)]
    enum JoinOperator {
        Hash(PartitionMode),
        NestedLoop,
    }

    /// A table `(<prefix>_key, <prefix>_row)` in batches of two rows, with
    /// `<prefix>_row` numbering the rows.
    fn table(prefix: &str, keys: &[Option<i32>]) -> Result<Arc<dyn ExecutionPlan>> {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new(format!("{prefix}_key"), DataType::Int32, true),
            Field::new(format!("{prefix}_row"), DataType::Int32, false),
        ]));
        let batches = keys
            .chunks(2)
            .enumerate()
            .map(|(chunk, keys)| {
                let rows = (0..keys.len()).map(|i| (chunk * 2 + i) as i32);
                RecordBatch::try_new(
                    Arc::clone(&schema),
                    vec![
                        Arc::new(Int32Array::from(keys.to_vec())),
                        Arc::new(Int32Array::from_iter_values(rows)),
                    ],
                )
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(TestMemoryExec::try_new_exec(&[batches], schema, None)?)
    }

    fn hash_partitioned(input: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
        let key = Arc::new(Column::new_with_schema(
            input.schema().field(0).name(),
            &input.schema(),
        )?);
        Ok(Arc::new(RepartitionExec::try_new(
            input,
            Partitioning::Hash(vec![key], PARTITIONS),
        )?))
    }

    fn single_join(
        operator: JoinOperator,
        join_type: JoinType,
        left: Arc<dyn ExecutionPlan>,
        right: Arc<dyn ExecutionPlan>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let left_key = Arc::new(Column::new_with_schema("l_key", &left.schema())?);
        let right_key = Arc::new(Column::new_with_schema("r_key", &right.schema())?);
        Ok(match operator {
            JoinOperator::Hash(mode) => {
                let (left, right) = match mode {
                    PartitionMode::Partitioned => {
                        (hash_partitioned(left)?, hash_partitioned(right)?)
                    }
                    _ => (
                        Arc::new(CoalescePartitionsExec::new(left)) as _,
                        Arc::new(RepartitionExec::try_new(
                            right,
                            Partitioning::RoundRobinBatch(PARTITIONS),
                        )?) as _,
                    ),
                };
                Arc::new(HashJoinExec::try_new(
                    left,
                    right,
                    vec![(left_key as _, right_key as _)],
                    None,
                    &join_type,
                    None,
                    mode,
                    NullEquality::NullEqualsNothing,
                    false,
                )?)
            }
            JoinOperator::NestedLoop => {
                let filter_schema = Arc::new(Schema::new(vec![
                    Field::new("l_key", DataType::Int32, true),
                    Field::new("r_key", DataType::Int32, true),
                ]));
                let filter = JoinFilter::new(
                    Arc::new(BinaryExpr::new(
                        Arc::new(Column::new("l_key", 0)),
                        Operator::Eq,
                        Arc::new(Column::new("r_key", 1)),
                    )),
                    vec![
                        ColumnIndex {
                            index: 0,
                            side: JoinSide::Left,
                        },
                        ColumnIndex {
                            index: 0,
                            side: JoinSide::Right,
                        },
                    ],
                    filter_schema,
                );
                let right = Arc::new(RepartitionExec::try_new(
                    right,
                    Partitioning::RoundRobinBatch(PARTITIONS),
                )?);
                Arc::new(NestedLoopJoinExec::try_new(
                    Arc::new(CoalescePartitionsExec::new(left)),
                    right,
                    Some(filter),
                    &join_type,
                    None,
                )?)
            }
        })
    }

    /// The single join computed naively: one line `l_row,r_row` per row of the
    /// preserved side (empty where nothing matched), sorted, or `None` for the
    /// error.
    fn expected(
        join_type: JoinType,
        left: &[Option<i32>],
        right: &[Option<i32>],
    ) -> Option<Vec<String>> {
        let mut lines = expected_rows(join_type, left, right)
            .into_iter()
            .collect::<Option<Vec<_>>>()?;
        lines.sort();
        Some(lines)
    }

    /// The line of each preserved row, or `None` for a row that meets a
    /// second match.
    fn expected_rows(
        join_type: JoinType,
        left: &[Option<i32>],
        right: &[Option<i32>],
    ) -> Vec<Option<String>> {
        let (preserved, other) = match join_type {
            JoinType::LeftSingle => (left, right),
            _ => (right, left),
        };
        preserved
            .iter()
            .enumerate()
            .map(|(row, key)| {
                let matches: Vec<usize> = other
                    .iter()
                    .enumerate()
                    .filter(|(_, other_key)| key.is_some() && *other_key == key)
                    .map(|(other_row, _)| other_row)
                    .collect();
                if matches.len() > 1 {
                    return None;
                }
                let matched = matches.first().map(|m| m.to_string()).unwrap_or_default();
                Some(match join_type {
                    JoinType::LeftSingle => format!("{row},{matched}"),
                    _ => format!("{matched},{row}"),
                })
            })
            .collect()
    }

    fn actual(batches: &[RecordBatch]) -> Vec<String> {
        let mut lines = vec![];
        for batch in batches {
            let rows = |name: &str| {
                let column = batch.column(batch.schema().index_of(name).unwrap());
                column
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .iter()
                    .map(|row| row.map(|row| row.to_string()).unwrap_or_default())
                    .collect::<Vec<_>>()
            };
            for (l_row, r_row) in rows("l_row").into_iter().zip(rows("r_row")) {
                lines.push(format!("{l_row},{r_row}"));
            }
        }
        lines.sort();
        lines
    }

    async fn collect_in_batches(
        plan: Arc<dyn ExecutionPlan>,
        batch_size: usize,
    ) -> Result<Vec<RecordBatch>> {
        let config = SessionConfig::new().with_batch_size(batch_size);
        let ctx = Arc::new(TaskContext::default().with_session_config(config));
        crate::collect(plan, ctx).await
    }

    /// Runs every case through both directions, both hash join partition
    /// modes and the nested loop join, at several batch sizes, and compares
    /// with the naive result; then again under `LIMIT 1`, where a case with a
    /// second match must still fail.
    #[tokio::test]
    async fn single_joins_match_naive_evaluation() -> Result<()> {
        let cases: Vec<(&str, Keys, Keys)> = vec![
            (
                "unique keys, NULLs, unmatched rows",
                vec![Some(1), Some(2), Some(3), None, Some(5)],
                vec![Some(1), Some(3), Some(4), None, Some(6)],
            ),
            (
                "duplicate on the right",
                vec![Some(1), Some(2), Some(3)],
                vec![Some(2), Some(7), Some(8), Some(2)],
            ),
            (
                "duplicate on the left",
                vec![Some(2), Some(7), Some(8), Some(2)],
                vec![Some(1), Some(2), Some(3)],
            ),
            (
                "duplicates nobody reaches",
                vec![Some(1), Some(2)],
                vec![Some(9), Some(1), Some(9), None, None],
            ),
            (
                "all-NULL build keys",
                vec![None, None, None],
                vec![None, Some(1), Some(2)],
            ),
            ("empty left", vec![], vec![Some(1), Some(1)]),
            ("empty right", vec![Some(1), Some(1)], vec![]),
        ];
        let operators = [
            JoinOperator::Hash(PartitionMode::CollectLeft),
            JoinOperator::Hash(PartitionMode::Partitioned),
            JoinOperator::NestedLoop,
        ];
        let mut checked = 0;
        for (case, left_keys, right_keys) in &cases {
            for join_type in [JoinType::LeftSingle, JoinType::RightSingle] {
                let want = expected(join_type, left_keys, right_keys);
                for operator in operators {
                    for batch_size in [1, 2, 3, 8192] {
                        let join = || {
                            single_join(
                                operator,
                                join_type,
                                table("l", left_keys)?,
                                table("r", right_keys)?,
                            )
                        };
                        let got = collect_in_batches(join()?, batch_size).await;
                        let context = format!(
                            "{case}: {join_type} with {operator:?}, batch_size {batch_size}"
                        );
                        match (&want, got) {
                            (Some(want), Ok(batches)) => {
                                assert_eq!(
                                    &actual(&batches),
                                    want,
                                    "{context}\n{}",
                                    pretty_format_batches(&batches)?
                                );
                            }
                            (None, Err(err)) => assert!(
                                err.to_string().contains(
                                    "Scalar subquery returned more than one row"
                                ),
                                "{context}: {err}"
                            ),
                            (Some(_), Err(err)) => panic!("{context}: {err}"),
                            (None, Ok(batches)) => panic!(
                                "{context}: expected an error, got\n{}",
                                pretty_format_batches(&batches)?
                            ),
                        }
                        checked += 1;

                        // A limit above the join stops reading early, but
                        // never emits a preserved row before its second match:
                        // the row it returns is right, and it fails only if a
                        // row has a second match
                        let rows = expected_rows(join_type, left_keys, right_keys);
                        let join = join()?;
                        let join = join.with_fetch(Some(1)).unwrap_or(join);
                        let limited = Arc::new(GlobalLimitExec::new(
                            Arc::new(CoalescePartitionsExec::new(join)),
                            0,
                            Some(1),
                        ));
                        match collect_in_batches(limited, batch_size).await {
                            Ok(batches) => {
                                let got = actual(&batches);
                                let correct: Vec<&String> =
                                    rows.iter().flatten().collect();
                                assert_eq!(
                                    got.len(),
                                    rows.len().min(1),
                                    "{context} with LIMIT 1"
                                );
                                assert!(
                                    got.iter().all(|line| correct.contains(&line)),
                                    "{context} with LIMIT 1: {got:?} is not among \
                                     {correct:?}"
                                );
                            }
                            Err(err) => {
                                assert!(
                                    rows.iter().any(Option::is_none),
                                    "{context} with LIMIT 1: {err}"
                                );
                                assert!(
                                    err.to_string().contains(
                                        "Scalar subquery returned more than one row"
                                    ),
                                    "{context} with LIMIT 1: {err}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(checked, cases.len() * 2 * operators.len() * 4);
        Ok(())
    }

    /// `JoinSelection` swaps the build side: the swapped join runs the other
    /// direction and gives the same rows.
    #[tokio::test]
    async fn swapped_hash_join_keeps_single_semantics() -> Result<()> {
        let left_keys = vec![Some(1), Some(2), Some(3), None];
        let right_keys = vec![Some(2), Some(3), Some(3)];
        for (right_keys, fails) in [(vec![Some(2), Some(3)], false), (right_keys, true)] {
            let join = single_join(
                JoinOperator::Hash(PartitionMode::Partitioned),
                JoinType::LeftSingle,
                table("l", &left_keys)?,
                table("r", &right_keys)?,
            )?;
            let join = join.downcast_ref::<HashJoinExec>().unwrap();
            let swapped = join.swap_inputs(PartitionMode::Partitioned)?;
            assert!(format!("{swapped:?}").contains("RightSingle"));
            let got = crate::collect(swapped, Arc::new(TaskContext::default())).await;
            match (fails, got) {
                (false, Ok(batches)) => assert_eq!(
                    actual(&batches),
                    expected(JoinType::LeftSingle, &left_keys, &right_keys).unwrap()
                ),
                (true, Err(err)) => {
                    assert!(err.to_string().contains("more than one row"), "{err}")
                }
                (_, other) => panic!("unexpected result: {other:?}"),
            }
        }
        Ok(())
    }
}
