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

//! The statistics of a [`MemorySourceConfig`], computed once.
//!
//! The physical optimizer asks a scan for its statistics many times while it
//! plans one query: join selection asks again at every join above the scan,
//! and each ask walks every batch of the table (TPC-H q8 asked the `lineitem`
//! scan 205 times). [`StatisticsContext`] keeps the answers for one walk of
//! the plan only. The batches of a memory source never change, so the answer
//! for a given projection and partition is the same each time; this cache
//! computes it on the first ask.
//!
//! The key holds the projection, not only the partition: a copy of the
//! source with a narrower projection (projection pushdown) shares this cache
//! and must not read the wider projection's figures. A source built over
//! other batches is built by a constructor, with a cache of its own.
//!
//! [`MemorySourceConfig`]: super::MemorySourceConfig
//! [`StatisticsContext`]: datafusion_physical_plan::statistics::StatisticsContext

use std::fmt;
use std::sync::{Arc, Mutex};

use datafusion_common::HashMap;
use datafusion_physical_plan::Statistics;

/// What was asked: the projection and the partition (`None` for all).
type Key = (Option<Vec<usize>>, Option<usize>);

/// Statistics by projection and partition, shared by the copies of one
/// memory source.
#[derive(Default, Clone)]
pub(super) struct StatisticsCache {
    computed: Arc<Mutex<HashMap<Key, Arc<Statistics>>>>,
}

impl StatisticsCache {
    /// The statistics of `partition` under `projection`: those computed
    /// before, or `compute`'s, kept for the next ask.
    pub(super) fn get_or_compute(
        &self,
        projection: &Option<Vec<usize>>,
        partition: Option<usize>,
        compute: impl FnOnce() -> Statistics,
    ) -> Arc<Statistics> {
        let key = (projection.clone(), partition);
        if let Some(statistics) = self.lock().get(&key) {
            return Arc::clone(statistics);
        }
        // Computed without the lock held: two threads that ask at once
        // compute the same figures, and either may be kept.
        let statistics = Arc::new(compute());
        Arc::clone(self.lock().entry(key).or_insert(statistics))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<Statistics>>> {
        // The map is only read or extended whole, so a panic elsewhere while
        // it was locked cannot have left it half-written.
        self.computed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Shows nothing of what was computed: a plan prints the same whether or not
/// the optimizer asked for its statistics (plans are compared by their
/// `Debug` text, after a round trip through protobuf for one).
impl fmt::Debug for StatisticsCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatisticsCache").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use datafusion_common::stats::Precision;

    use super::*;

    fn rows(n: usize) -> Statistics {
        Statistics {
            num_rows: Precision::Exact(n),
            ..Statistics::default()
        }
    }

    #[test]
    fn computes_each_projection_and_partition_once() {
        let cache = StatisticsCache::default();
        let calls = Cell::new(0);
        let ask = |projection: Option<Vec<usize>>, partition, n| {
            cache
                .get_or_compute(&projection, partition, || {
                    calls.set(calls.get() + 1);
                    rows(n)
                })
                .num_rows
        };
        assert_eq!(ask(None, None, 10), Precision::Exact(10));
        assert_eq!(ask(None, None, 99), Precision::Exact(10));
        assert_eq!(calls.get(), 1);
        // Another partition or projection is another question.
        assert_eq!(ask(None, Some(0), 4), Precision::Exact(4));
        assert_eq!(ask(Some(vec![1]), None, 7), Precision::Exact(7));
        assert_eq!(ask(Some(vec![1]), None, 99), Precision::Exact(7));
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn copies_share_what_was_computed() {
        let cache = StatisticsCache::default();
        let copy = cache.clone();
        cache.get_or_compute(&None, None, || rows(3));
        let seen = copy.get_or_compute(&None, None, || rows(99));
        assert_eq!(seen.num_rows, Precision::Exact(3));
    }
}
