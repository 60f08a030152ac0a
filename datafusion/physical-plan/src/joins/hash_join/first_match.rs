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

//! The probe of a hash join that asks only whether a probe row has a match.
//!
//! A right semi, anti or mark join without a filter outputs each probe row
//! once, by whether any build row has its key. The general probe pairs a
//! probe row with every build row of its hash and then compares their keys:
//! where the build side repeats a key, as the rows of a correlated `EXISTS`
//! do when few outer values have many rows each, that is the product of
//! both sides (10,000 probe rows against 10,000 build rows of 4 keys are 25
//! million pairs, for 10,000 answers).
//!
//! All build rows of one hash are on one chain of the hash map, so the
//! first row of a probe row's chain has its key unless two keys share a
//! 64-bit hash. The probe pairs each probe row with that first row only,
//! compares the keys of all pairs at once, and walks the whole chain only
//! of the rows whose first pair differed.
//!
//! A left semi, anti or mark join outputs build rows instead, each once, by
//! whether a probe row matched it; a probe row whose key's build rows are
//! all marked already is left out of the lookup
//! ([`skip_keys_marked_already`]).

use std::collections::HashSet;

use arrow::array::{
    Array, ArrayRef, BooleanBufferBuilder, UInt32Array, UInt64Array, make_array,
};
use arrow::buffer::NullBuffer;
use datafusion_common::{JoinType, NullEquality, Result};

use super::exec::JoinLeftData;
use crate::joins::Map;

use crate::joins::MapOffset;
use crate::joins::array_map::ArrayMap;
use crate::joins::join_hash_map::JoinHashMapType;
use crate::joins::utils::equal_rows_arr;

/// Whether a join of `join_type`, with a filter or not, over `build`, is
/// served better by the first match of each probe row than by all of them:
/// where its build side repeats keys.
pub(super) fn needs_first_match_only(
    join_type: JoinType,
    has_filter: bool,
    build: &JoinLeftData,
) -> bool {
    !has_filter
        && matches!(
            join_type,
            JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark
        )
        && repeats_keys(build)
}

/// Whether the build side has at least two rows per key on average: with
/// fewer, a probe row has about one candidate, and the lookups of one pair
/// at a time only add to the batched lookup of all pairs.
fn repeats_keys(build: &JoinLeftData) -> bool {
    build.map().num_of_distinct_key() * 2 <= build.batch().num_rows()
}

/// `probe_values` and `valid_keys` of a probe batch of a left semi, anti or
/// mark join without a filter, where a probe row whose key's build rows are
/// marked matched already is made to match nothing.
///
/// Such a join outputs each build row once, by whether a probe row matched
/// it: a second probe row of a key only marks its build rows again, and
/// where the build side repeats keys, each one pairs with all of them. A
/// build row is marked only by a probe row of its key, which marks every
/// build row of that key (the rows of its chain of that key, in this probe
/// or in the probe of another partition, before the join's end). So where
/// the first build row of a probe row's chain is marked and has its key,
/// every build row of that key is or will be marked: the probe row is left
/// out, as is a probe row whose first build row, of its key, is that of an
/// earlier row of the batch. A left-out row is one the lookups skip, as one of a NULL key, which
/// matches nothing: in `valid_keys` for a hash map, in the key column's
/// nulls for an array map.
#[expect(clippy::too_many_arguments)]
pub(super) fn skip_keys_marked_already(
    join_type: JoinType,
    has_filter: bool,
    null_aware: bool,
    build: &JoinLeftData,
    null_equality: NullEquality,
    hashes: &[u64],
    probe_values: Vec<ArrayRef>,
    valid_keys: Option<NullBuffer>,
) -> Result<(Vec<ArrayRef>, Option<NullBuffer>)> {
    let marks_build_rows = !has_filter
        && !null_aware
        && matches!(
            join_type,
            JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark
        );
    let rows = probe_values.first().map_or(0, |values| values.len());
    if !marks_build_rows || rows == 0 || !repeats_keys(build) {
        return Ok((probe_values, valid_keys));
    }
    let (mut probe_buffer, mut build_buffer) = (vec![], vec![]);
    let (builds, probes) = match build.map() {
        Map::HashMap(map) => {
            let (builds, probes) = first_candidates(
                |limit, offset, probes, builds| {
                    Ok(map.get_matched_indices_with_limit_offset(
                        hashes,
                        valid_keys.as_ref(),
                        limit,
                        offset,
                        probes,
                        builds,
                    ))
                },
                &mut probe_buffer,
                &mut build_buffer,
            )?;
            equal_rows_arr(
                &builds,
                &probes,
                build.values(),
                &probe_values,
                null_equality,
            )?
        }
        Map::ArrayMap(map) => array_map_first_matches(
            map,
            &probe_values,
            &mut probe_buffer,
            &mut build_buffer,
        )?,
    };
    let mut kept = BooleanBufferBuilder::new(rows);
    kept.append_n(rows, true);
    let mut skipped = false;
    {
        // Probe rows of one first build row, that have its key, have one
        // key: the first of them marks the build rows for all
        let mut first_build_rows = HashSet::new();
        let marked = build.visited_indices_bitmap().lock();
        for (&build_row, &probe_row) in builds.values().iter().zip(probes.values()) {
            if marked.get_bit(build_row as usize) || !first_build_rows.insert(build_row) {
                kept.set_bit(probe_row as usize, false);
                skipped = true;
            }
        }
    }
    if !skipped {
        return Ok((probe_values, valid_keys));
    }
    let kept = NullBuffer::new(kept.finish());
    match build.map() {
        Map::HashMap(_) => {
            let valid = NullBuffer::union(valid_keys.as_ref(), Some(&kept));
            Ok((probe_values, valid))
        }
        Map::ArrayMap(_) => {
            // An array map has one key column
            let values = probe_values
                .into_iter()
                .map(|values| {
                    let nulls = NullBuffer::union(values.nulls(), Some(&kept));
                    let data = values.into_data().into_builder().nulls(nulls).build()?;
                    Ok(make_array(data))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((values, valid_keys))
        }
    }
}

/// The first `(build, probe)` pair of each probe row that `lookup` pairs
/// with build rows, in the order of the probe rows. `lookup` is a map's
/// `get_matched_indices_with_limit_offset`: it fills the buffers with the
/// pairs from an offset on, at most `limit` of them, and returns the offset
/// to go on from.
fn first_candidates(
    mut lookup: impl FnMut(
        usize,
        MapOffset,
        &mut Vec<u32>,
        &mut Vec<u64>,
    ) -> Result<Option<MapOffset>>,
    probe_buffer: &mut Vec<u32>,
    build_buffer: &mut Vec<u64>,
) -> Result<(UInt64Array, UInt32Array)> {
    // A lookup for one pair at a time, which then skips the rest of the
    // row's chain
    let (mut builds, mut probes) = (vec![], vec![]);
    let mut offset: MapOffset = (0, None);
    loop {
        let next = lookup(1, offset, probe_buffer, build_buffer)?;
        probes.extend_from_slice(probe_buffer);
        builds.extend_from_slice(build_buffer);
        offset = match next {
            None => break,
            // `Some(0)` stands for a probe row whose chain is done
            Some((row, Some(_))) => (row, Some(0)),
            Some(next) => next,
        };
    }
    Ok((UInt64Array::from(builds), UInt32Array::from(probes)))
}

/// One `(build, probe)` pair for each probe row whose key is in `map`, in
/// the order of the probe rows. Its keys are exact: a chain holds the rows
/// of one key.
pub(super) fn array_map_first_matches(
    map: &ArrayMap,
    probe_values: &[ArrayRef],
    probe_buffer: &mut Vec<u32>,
    build_buffer: &mut Vec<u64>,
) -> Result<(UInt64Array, UInt32Array)> {
    first_candidates(
        |limit, offset, probes, builds| {
            map.get_matched_indices_with_limit_offset(
                probe_values,
                limit,
                offset,
                probes,
                builds,
            )
        },
        probe_buffer,
        build_buffer,
    )
}

/// One `(build, probe)` pair for each probe row whose key is in `map`, in
/// the order of the probe rows. The arguments are those of
/// `lookup_join_hashmap`, which pairs every match.
#[expect(clippy::too_many_arguments)]
pub(super) fn hash_map_first_matches(
    map: &dyn JoinHashMapType,
    build_values: &[ArrayRef],
    probe_values: &[ArrayRef],
    null_equality: NullEquality,
    hashes: &[u64],
    valid_keys: Option<&NullBuffer>,
    probe_buffer: &mut Vec<u32>,
    build_buffer: &mut Vec<u64>,
) -> Result<(UInt64Array, UInt32Array)> {
    let candidates = first_candidates(
        |limit, offset, probes, builds| {
            Ok(map.get_matched_indices_with_limit_offset(
                hashes, valid_keys, limit, offset, probes, builds,
            ))
        },
        probe_buffer,
        build_buffer,
    )?;
    let (builds, probes) = equal_rows_arr(
        &candidates.0,
        &candidates.1,
        build_values,
        probe_values,
        null_equality,
    )?;
    if probes.len() == candidates.1.len() {
        return Ok((builds, probes));
    }

    // A row whose first candidate has another key: its whole chain
    let mut matched: Vec<(u32, u64)> = probes
        .values()
        .iter()
        .copied()
        .zip(builds.values().iter().copied())
        .collect();
    let mut first_matched = probes.values().iter().copied().peekable();
    let chain_limit = build_values.first().map_or(0, |values| values.len()).max(1);
    for &row in candidates.1.values() {
        if first_matched.next_if_eq(&row).is_some() {
            continue;
        }
        let row = row as usize;
        map.get_matched_indices_with_limit_offset(
            &hashes[..=row],
            valid_keys,
            chain_limit,
            (row, None),
            probe_buffer,
            build_buffer,
        );
        let (chain_builds, chain_probes) = equal_rows_arr(
            &UInt64Array::from(build_buffer.clone()),
            &UInt32Array::from(probe_buffer.clone()),
            build_values,
            probe_values,
            null_equality,
        )?;
        if let (Some(&probe), Some(&build)) =
            (chain_probes.values().first(), chain_builds.values().first())
        {
            matched.push((probe, build));
        }
    }
    matched.sort_unstable_by_key(|&(probe, _)| probe);
    let (probes, builds): (Vec<u32>, Vec<u64>) = matched.into_iter().unzip();
    Ok((UInt64Array::from(builds), UInt32Array::from(probes)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int32Array;

    use super::*;
    use crate::joins::join_hash_map::JoinHashMapU32;

    /// A hash map of build rows with the given hashes, as a join builds it.
    fn hash_map(hashes: &[u64]) -> JoinHashMapU32 {
        let mut map = JoinHashMapU32::with_capacity(hashes.len());
        map.update_from_iter(Box::new(hashes.iter().enumerate()), 0);
        map
    }

    fn first_matches(
        map: &JoinHashMapU32,
        build: Vec<i32>,
        probe: Vec<Option<i32>>,
        probe_hashes: &[u64],
    ) -> Result<(Vec<u64>, Vec<u32>)> {
        let build: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(build))];
        let probe: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(probe))];
        let valid = probe[0].nulls().cloned();
        let (builds, probes) = hash_map_first_matches(
            map,
            &build,
            &probe,
            NullEquality::NullEqualsNothing,
            probe_hashes,
            valid.as_ref(),
            &mut vec![],
            &mut vec![],
        )?;
        Ok((builds.values().to_vec(), probes.values().to_vec()))
    }

    #[test]
    fn a_probe_row_pairs_with_the_first_build_row_of_its_key() -> Result<()> {
        // Keys 1, 1, 2, 1: the chain of key 1 is rows 3, 1, 0
        let map = hash_map(&[10, 10, 20, 10]);
        let (builds, probes) = first_matches(
            &map,
            vec![1, 1, 2, 1],
            vec![Some(1), Some(3), Some(2), Some(1), None],
            &[10, 30, 20, 10, 10],
        )?;
        assert_eq!(builds, vec![3, 2, 3]);
        assert_eq!(probes, vec![0, 2, 3]);
        Ok(())
    }

    #[test]
    fn keys_that_share_a_hash_are_told_apart_by_their_values() -> Result<()> {
        // Keys 1, 2, 1 of one hash: the chain is rows 2, 1, 0, and the
        // first row of the chain does not have key 2
        let map = hash_map(&[7, 7, 7]);
        let (builds, probes) = first_matches(
            &map,
            vec![1, 2, 1],
            vec![Some(2), Some(1), Some(3), Some(2)],
            &[7, 7, 7, 7],
        )?;
        assert_eq!(builds, vec![1, 2, 1]);
        assert_eq!(probes, vec![0, 1, 3]);
        Ok(())
    }
}
