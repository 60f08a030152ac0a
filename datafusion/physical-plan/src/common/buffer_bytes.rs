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

//! The memory a set of arrays holds, with each shared buffer split between
//! the arrays that share it.
//!
//! [`Array::get_array_memory_size`] counts every buffer an array references,
//! in full. Arrays that share buffers then count them once per array: the
//! slices of one batch, and above all `Utf8View` arrays, whose views point
//! into data buffers that the parquet reader (and so `CREATE TABLE ... AS
//! SELECT` over a parquet file) shares between many batches. Summed over the
//! batches of an in-memory table, a table of 150K short strings reported four
//! times the bytes of one of 1.5M rows, and join selection, which compares
//! byte sizes first, built the hash table on the large side.
//!
//! Here a buffer shared by different arrays is split between them by their
//! row counts, so it adds up to its size once. The same array listed twice
//! (one batch in several partitions) is read twice, as its rows are counted
//! twice, and pays its share each time.
//!
//! [`Array::get_array_memory_size`]: arrow::array::Array::get_array_memory_size

use std::ops::Range;

use arrow::array::{Array, ArrayData};
use datafusion_common::{HashMap, HashSet};

/// The memory `arrays` hold, as [`Array::get_array_memory_size`] counts it,
/// except that a buffer (values, views, offsets, validity, children's
/// buffers) shared by different arrays is split between them by rows. For
/// arrays that share nothing, it is the sum of `get_array_memory_size`.
///
/// [`Array::get_array_memory_size`]: arrow::array::Array::get_array_memory_size
pub(crate) fn memory_size_sharing_buffers<'a>(
    arrays: impl IntoIterator<Item = &'a dyn Array>,
) -> usize {
    let mut structs = 0;
    // One flat list of buffers and one of identities for all arrays, rather
    // than a few small vectors per array: an in-memory table has thousands
    // of arrays.
    let mut nodes = Nodes::default();
    for array in arrays {
        // What `get_array_memory_size` adds to the buffers: the arrays'
        // own structures.
        structs += array
            .get_array_memory_size()
            .saturating_sub(array.get_buffer_memory_size());
        nodes.collect(&array.to_data());
    }
    structs + nodes.shares()
}

/// Every array and child array of the input, with the buffers each
/// references, in flat lists.
#[derive(Default)]
struct Nodes {
    nodes: Vec<Node>,
    /// What tells one array from another that shares its buffers: the
    /// slices of them it reads, as `(offset, len)` and then a
    /// `(pointer, len)` per buffer.
    identities: Vec<(usize, usize)>,
    buffers: Vec<BufferUse>,
}

/// One array, or one child of an array.
struct Node {
    /// At least 1, so that an empty array still takes a share.
    rows: usize,
    identity: Range<usize>,
    buffers: Range<usize>,
}

struct BufferUse {
    /// The start of the allocation, which all its slices share.
    allocation: usize,
    capacity: usize,
}

impl Nodes {
    fn collect(&mut self, data: &ArrayData) {
        let identity_start = self.identities.len();
        let buffers_start = self.buffers.len();
        self.identities.push((data.offset(), data.len()));
        let buffers = data
            .buffers()
            .iter()
            .chain(data.nulls().map(|nulls| nulls.buffer()));
        for buffer in buffers {
            self.identities
                .push((buffer.as_ptr() as usize, buffer.len()));
            self.buffers.push(BufferUse {
                allocation: buffer.data_ptr().as_ptr() as usize,
                capacity: buffer.capacity(),
            });
        }
        self.nodes.push(Node {
            rows: data.len().max(1),
            identity: identity_start..self.identities.len(),
            buffers: buffers_start..self.buffers.len(),
        });
        for child in data.child_data() {
            self.collect(child);
        }
    }

    /// Each buffer's capacity, split between the nodes that reference it by
    /// their rows, summed over the nodes. A node listed more than once takes
    /// its share each time, but counts once in the split.
    fn shares(&self) -> usize {
        // The rows of the distinct nodes that reference each allocation.
        let mut distinct = HashSet::with_capacity(self.nodes.len());
        let mut rows_per_allocation: HashMap<usize, usize> =
            HashMap::with_capacity(self.buffers.len());
        for node in &self.nodes {
            if distinct.insert(&self.identities[node.identity.clone()]) {
                for buffer in &self.buffers[node.buffers.clone()] {
                    *rows_per_allocation.entry(buffer.allocation).or_default() +=
                        node.rows;
                }
            }
        }
        let shares: f64 = self
            .nodes
            .iter()
            .flat_map(|node| {
                self.buffers[node.buffers.clone()].iter().map(|buffer| {
                    let rows = rows_per_allocation[&buffer.allocation];
                    buffer.capacity as f64 * node.rows as f64 / rows as f64
                })
            })
            .sum();
        shares.round() as usize
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int64Array, StringViewArray, StructArray};
    use arrow::datatypes::{DataType, Field};

    use super::*;

    fn size(arrays: &[&dyn Array]) -> usize {
        memory_size_sharing_buffers(arrays.iter().copied())
    }

    /// What `get_array_memory_size` adds to the buffers, for `n` arrays like
    /// `array`.
    fn structs(array: &dyn Array, n: usize) -> usize {
        n * (array.get_array_memory_size() - array.get_buffer_memory_size())
    }

    #[test]
    fn arrays_that_share_nothing_count_as_get_array_memory_size() {
        let a = Int64Array::from(vec![Some(1), None, Some(3)]);
        let s = StringViewArray::from_iter_values([
            "short",
            "a string of more than 12 bytes",
        ]);
        let expected = a.get_array_memory_size() + s.get_array_memory_size();
        assert_eq!(size(&[&a, &s]), expected);
    }

    #[test]
    fn slices_of_one_buffer_split_it() {
        let values = Int64Array::from_iter_values(0..1024);
        let slices: Vec<_> = (0..4).map(|i| values.slice(i * 256, 256)).collect();
        let slices: Vec<&dyn Array> = slices.iter().map(|s| s as &dyn Array).collect();
        // Each slice alone reports the whole buffer.
        let per_slice: usize = slices.iter().map(|s| s.get_array_memory_size()).sum();
        assert!(per_slice >= 4 * 1024 * 8);
        let buffer = values.values().inner().capacity();
        assert_eq!(size(&slices), buffer + structs(slices[0], 4));
        // The buffer is split between the arrays counted together: two of
        // the slices, counted alone (one partition's statistics), hold it all.
        assert_eq!(size(&slices[..2]), buffer + structs(slices[0], 2));
    }

    #[test]
    fn string_views_sharing_data_buffers_split_them() {
        // Strings longer than 12 bytes live in the data buffers.
        let strings = StringViewArray::from_iter_values(
            (0..1000).map(|i| format!("customer name number {i:06}")),
        );
        let batches: Vec<_> = (0..10).map(|i| strings.slice(i * 100, 100)).collect();
        let batches: Vec<&dyn Array> = batches.iter().map(|b| b as &dyn Array).collect();
        let per_batch: usize = batches.iter().map(|b| b.get_array_memory_size()).sum();
        let data: usize = strings.data_buffers().iter().map(|b| b.capacity()).sum();
        let views = strings.views().inner().capacity();
        let expected = data + views + structs(batches[0], 10);
        let counted = size(&batches);
        // Shares are rounded once, at the end.
        assert!(counted.abs_diff(expected) <= 1, "{counted} vs {expected}");
        assert!(per_batch > 5 * counted, "{per_batch} vs {counted}");
    }

    #[test]
    fn an_array_listed_twice_counts_twice() {
        let a = Int64Array::from(vec![Some(1), None, Some(3)]);
        assert_eq!(size(&[&a, &a]), 2 * a.get_array_memory_size());
        let fields = vec![Arc::new(Field::new("a", DataType::Int64, true))];
        let nested = StructArray::new(fields.into(), vec![Arc::new(a.clone())], None);
        assert_eq!(size(&[&nested]), nested.get_array_memory_size());
        assert_eq!(
            size(&[&nested, &nested]),
            2 * nested.get_array_memory_size()
        );
    }
}
