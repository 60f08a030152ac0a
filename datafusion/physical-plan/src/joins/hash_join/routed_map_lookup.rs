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

//! The dynamic filter of a partitioned hash join whose partitions report
//! hash tables: each probe row is looked up in the one table its key is
//! routed to, with no copy of the batch.
//!
//! In a partitioned hash join, build partition `p` holds the keys whose
//! repartitioning hash is `p` modulo the partition count, and reports its
//! own membership for the join's dynamic filter. Upstream combines the
//! partitions' filters into
//!
//! ```text
//! CASE hash_repartition(k) % n WHEN 0 THEN bounds_0 AND hash_lookup_0
//!                              WHEN 1 THEN bounds_1 AND hash_lookup_1 ... END
//! ```
//!
//! A `CASE` evaluates each branch on a copy of the rows routed to it and
//! then merges the answers: every probe batch is copied once more, in all
//! its columns. Below an aggregate, where
//! `JoinDynamicFilterBelowAggregates` puts the filter over every row of a
//! large table, that copy is most of the filter's cost: on TPC-H q20 at
//! SF1 the `FilterExec` over `lineitem` took 65.5 ms of compute with the
//! `CASE` and 39.0 ms with the one table of a `CollectLeft` join.
//!
//! [`RoutedMapLookupExpr`] keeps only what decides the answer: the same
//! routing hash, and the lookup of each row's key in its partition's table
//! (by the join's hash for a hash table, by the key for an array map). The
//! lookup alone is exact up to hash collisions, as each branch's lookup
//! is. The partitions' bounds are left out: they can only drop more rows
//! (a key outside them is not in the table, save a collision; a `NULL`
//! key, which a join that does not match `NULL`s drops anyway), and a
//! dynamic filter may keep any row the join then drops.
//! A partition with no rows keeps none of its rows; a partition whose
//! build was canceled, and so is unknown, keeps all of them, as the `CASE`
//! does.
//!
//! The join uses it where every partition reports a table, no rows, or
//! nothing known; where any partition lists its keys (an `IN` list, for a
//! small build side) the `CASE` stays.

use std::fmt::{self, Display};
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, BooleanBufferBuilder, UInt32Array};
use arrow::compute::take;
use arrow::datatypes::{DataType, Schema};
use arrow::record_batch::RecordBatch;
use datafusion_common::Result;
use datafusion_common::hash_utils::create_hashes;
use datafusion_expr::ColumnarValue;
use datafusion_physical_expr_common::physical_expr::{
    DynHash, PhysicalExpr, PhysicalExprRef,
};

use crate::joins::Map;
use crate::joins::hash_join::partitioned_hash_eval::SeededRandomState;
use crate::joins::hash_join::shared_bounds::PushdownStrategy;

/// What one build partition tells the filter about the probe rows routed
/// to it.
#[derive(Clone)]
pub(crate) enum RoutedMembership {
    /// Keep a row whose key is in this table.
    Lookup(Arc<Map>),
    /// The partition has no rows: keep none.
    Nothing,
    /// The partition's build was canceled: keep every row.
    Everything,
}

impl RoutedMembership {
    /// What a partition's reported membership routes to: `None` for keys it
    /// lists, which the `CASE` of `IN` lists keeps answering.
    pub(crate) fn of(pushdown: &PushdownStrategy) -> Option<Self> {
        match pushdown {
            PushdownStrategy::Map(map) => Some(Self::Lookup(Arc::clone(map))),
            PushdownStrategy::Empty => Some(Self::Nothing),
            PushdownStrategy::InList(_) => None,
        }
    }

    /// Whether this partition has a table to look keys up in; without any,
    /// the `CASE` of constants stays.
    pub(crate) fn is_table(&self) -> bool {
        matches!(self, Self::Lookup(_))
    }

    fn same_as(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Lookup(a), Self::Lookup(b)) => Arc::ptr_eq(a, b),
            (Self::Nothing, Self::Nothing) | (Self::Everything, Self::Everything) => true,
            _ => false,
        }
    }
}

/// `true` for a probe row whose key the build partition it is routed to may
/// hold, see the module documentation.
pub(crate) struct RoutedMapLookupExpr {
    /// The probe side's join keys
    on_columns: Vec<PhysicalExprRef>,
    /// The hash that routed the build rows to their partitions
    routing: SeededRandomState,
    /// The hash the partitions' hash tables are keyed by
    lookup: SeededRandomState,
    /// One per partition, in partition order
    partitions: Vec<RoutedMembership>,
}

impl RoutedMapLookupExpr {
    pub(crate) fn new(
        on_columns: Vec<PhysicalExprRef>,
        routing: SeededRandomState,
        lookup: SeededRandomState,
        partitions: Vec<RoutedMembership>,
    ) -> Self {
        Self {
            on_columns,
            routing,
            lookup,
            partitions,
        }
    }

    /// The probe rows routed to each partition, in row order.
    fn rows_by_partition(
        &self,
        keys: &[ArrayRef],
        num_rows: usize,
    ) -> Result<Vec<Vec<u32>>> {
        let mut hashes = vec![0; num_rows];
        create_hashes(keys, self.routing.random_state(), &mut hashes)?;
        let partition_count = self.partitions.len() as u64;
        let mut rows = vec![Vec::new(); self.partitions.len()];
        for (row, hash) in hashes.iter().enumerate() {
            rows[(hash % partition_count) as usize].push(row as u32);
        }
        Ok(rows)
    }
}

impl fmt::Debug for RoutedMapLookupExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let columns = self
            .on_columns
            .iter()
            .map(|column| column.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        write!(
            f,
            "routed_hash_lookup({columns}, [{}, {}], {} partitions)",
            self.routing.seed(),
            self.lookup.seed(),
            self.partitions.len()
        )
    }
}

impl Display for RoutedMapLookupExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "hash_lookup(hash_repartition % {})",
            self.partitions.len()
        )
    }
}

impl Hash for RoutedMapLookupExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.on_columns.dyn_hash(state);
        self.routing.seed().hash(state);
        self.lookup.seed().hash(state);
        // The tables by identity, as `HashTableLookupExpr` takes them: a
        // join builds its own for each run
        for partition in &self.partitions {
            match partition {
                RoutedMembership::Lookup(map) => Arc::as_ptr(map).hash(state),
                RoutedMembership::Nothing => 0u8.hash(state),
                RoutedMembership::Everything => 1u8.hash(state),
            }
        }
    }
}

impl PartialEq for RoutedMapLookupExpr {
    fn eq(&self, other: &Self) -> bool {
        self.on_columns == other.on_columns
            && self.routing.seed() == other.routing.seed()
            && self.lookup.seed() == other.lookup.seed()
            && self.partitions.len() == other.partitions.len()
            && self
                .partitions
                .iter()
                .zip(&other.partitions)
                .all(|(a, b)| a.same_as(b))
    }
}

impl Eq for RoutedMapLookupExpr {}

impl PhysicalExpr for RoutedMapLookupExpr {
    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        self.on_columns.iter().collect()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(RoutedMapLookupExpr::new(
            children,
            self.routing.clone(),
            self.lookup.clone(),
            self.partitions.clone(),
        )))
    }

    fn data_type(&self, _input_schema: &Schema) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, _input_schema: &Schema) -> Result<bool> {
        Ok(false)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let num_rows = batch.num_rows();
        let keys = self
            .on_columns
            .iter()
            .map(|column| column.evaluate(batch)?.into_array(num_rows))
            .collect::<Result<Vec<_>>>()?;
        let rows_by_partition = self.rows_by_partition(&keys, num_rows)?;

        // The join's hashes of every row, once, if any partition has a
        // hash table to look them up in
        let lookup_hashes = if self.partitions.iter().any(|partition| {
            matches!(partition, RoutedMembership::Lookup(map) if matches!(map.as_ref(), Map::HashMap(_)))
        }) {
            let mut hashes = vec![0; num_rows];
            create_hashes(&keys, self.lookup.random_state(), &mut hashes)?;
            hashes
        } else {
            vec![]
        };

        let mut kept = BooleanBufferBuilder::new(num_rows);
        kept.append_n(num_rows, false);
        for (partition, rows) in self.partitions.iter().zip(&rows_by_partition) {
            if rows.is_empty() {
                continue;
            }
            let found = match partition {
                RoutedMembership::Nothing => continue,
                RoutedMembership::Everything => {
                    rows.iter()
                        .for_each(|&row| kept.set_bit(row as usize, true));
                    continue;
                }
                RoutedMembership::Lookup(map) => match map.as_ref() {
                    Map::HashMap(table) => {
                        let hashes = rows
                            .iter()
                            .map(|&row| lookup_hashes[row as usize])
                            .collect::<Vec<_>>();
                        table.contain_hashes(&hashes)
                    }
                    Map::ArrayMap(array_map) => {
                        let indices = UInt32Array::from(rows.clone());
                        let routed_keys = keys
                            .iter()
                            .map(|key| take(key.as_ref(), &indices, None))
                            .collect::<std::result::Result<Vec<_>, _>>()?;
                        array_map.contain_keys(&routed_keys)?
                    }
                },
            };
            for (i, &row) in rows.iter().enumerate() {
                if found.value(i) {
                    kept.set_bit(row as usize, true);
                }
            }
        }
        Ok(ColumnarValue::Array(Arc::new(BooleanArray::new(
            kept.finish(),
            None,
        ))))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }

    #[cfg(feature = "proto")]
    fn try_to_proto(
        &self,
        _ctx: &datafusion_physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx<'_>,
    ) -> Result<Option<datafusion_proto_models::protobuf::PhysicalExprNode>> {
        use datafusion_proto_models::protobuf;
        use datafusion_proto_models::protobuf::physical_expr_node::ExprType;

        // The tables are the running join's and cannot travel: as
        // `HashTableLookupExpr` does, the filter goes as `true`, which keeps
        // every row; a plan run again rebuilds its filters.
        let value = datafusion_proto_common::ScalarValue {
            value: Some(datafusion_proto_common::scalar_value::Value::BoolValue(
                true,
            )),
        };
        Ok(Some(protobuf::PhysicalExprNode {
            expr_id: None,
            expr_type: Some(ExprType::Literal(value)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::joins::array_map::ArrayMap;
    use crate::joins::hash_join::exec::HASH_JOIN_SEED;
    use crate::joins::hash_join::partitioned_hash_eval::{HashExpr, HashTableLookupExpr};
    use crate::joins::join_hash_map::{JoinHashMapType, JoinHashMapU32};
    use crate::repartition::REPARTITION_RANDOM_STATE;
    use arrow::array::{Array, Int64Array, StringArray};
    use arrow::compute::filter_record_batch;
    use arrow::datatypes::Field;
    use datafusion_common::ScalarValue;
    use datafusion_expr::Operator;
    use datafusion_physical_expr::expressions::{BinaryExpr, CaseExpr, Column, lit};

    const PARTITIONS: usize = 3;

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]))
    }

    fn keys() -> Vec<PhysicalExprRef> {
        vec![Arc::new(Column::new("k", 0)), Arc::new(Column::new("s", 1))]
    }

    /// Rows with duplicates and NULLs in both key columns: `k` from 0 to
    /// `count / 2`, `s` the text of `k % 7`.
    fn batch(count: i64) -> RecordBatch {
        let k = Int64Array::from_iter((0..count).map(|i| (i % 11 != 5).then_some(i / 2)));
        let s = StringArray::from_iter(
            (0..count).map(|i| (i % 13 != 4).then(|| format!("s{}", (i / 2) % 7))),
        );
        RecordBatch::try_new(schema(), vec![Arc::new(k), Arc::new(s)]).unwrap()
    }

    /// The build rows split as a hash repartition splits them, each part's
    /// keys in a hash table keyed by the join's hash.
    fn partition_tables(build: &RecordBatch) -> Vec<RoutedMembership> {
        let routes = HashExpr::new(keys(), REPARTITION_RANDOM_STATE, "route".into())
            .evaluate(build)
            .unwrap()
            .into_array(build.num_rows())
            .unwrap();
        let routes = routes
            .as_any()
            .downcast_ref::<arrow::array::UInt64Array>()
            .unwrap();
        (0..PARTITIONS as u64)
            .map(|partition| {
                let mask = BooleanArray::from_iter(
                    routes
                        .iter()
                        .map(|r| Some(r.unwrap() % PARTITIONS as u64 == partition)),
                );
                let part = filter_record_batch(build, &mask).unwrap();
                if part.num_rows() == 0 {
                    return RoutedMembership::Nothing;
                }
                let mut hashes = vec![0; part.num_rows()];
                create_hashes(part.columns(), HASH_JOIN_SEED.random_state(), &mut hashes)
                    .unwrap();
                let mut table = JoinHashMapU32::with_capacity(part.num_rows());
                table.update_from_iter(Box::new(hashes.iter().enumerate()), 0);
                RoutedMembership::Lookup(Arc::new(Map::HashMap(Box::new(table))))
            })
            .collect()
    }

    /// Upstream's form of the same filter: a `CASE` on the routing hash
    /// with one lookup per partition.
    fn case_form(partitions: &[RoutedMembership]) -> Arc<dyn PhysicalExpr> {
        let route = Arc::new(BinaryExpr::new(
            Arc::new(HashExpr::new(
                keys(),
                REPARTITION_RANDOM_STATE,
                "hash_repartition".into(),
            )),
            Operator::Modulo,
            lit(ScalarValue::UInt64(Some(partitions.len() as u64))),
        ));
        let branches = partitions
            .iter()
            .enumerate()
            .map(|(partition, membership)| {
                let then: Arc<dyn PhysicalExpr> = match membership {
                    RoutedMembership::Lookup(map) => Arc::new(HashTableLookupExpr::new(
                        keys(),
                        HASH_JOIN_SEED,
                        Arc::clone(map),
                        "hash_lookup".into(),
                    )),
                    RoutedMembership::Nothing => lit(false),
                    RoutedMembership::Everything => lit(true),
                };
                (lit(ScalarValue::UInt64(Some(partition as u64))), then)
            })
            .collect();
        Arc::new(CaseExpr::try_new(Some(route), branches, Some(lit(false))).unwrap())
    }

    fn evaluate(expr: &dyn PhysicalExpr, batch: &RecordBatch) -> BooleanArray {
        let result = expr
            .evaluate(batch)
            .unwrap()
            .into_array(batch.num_rows())
            .unwrap();
        result
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap()
            .clone()
    }

    fn routed(partitions: Vec<RoutedMembership>) -> RoutedMapLookupExpr {
        RoutedMapLookupExpr::new(
            keys(),
            REPARTITION_RANDOM_STATE,
            HASH_JOIN_SEED,
            partitions,
        )
    }

    #[test]
    fn keeps_the_rows_whose_keys_the_build_side_holds() {
        // The build side: every other key of the probe side's range
        let build = filter_record_batch(
            &batch(400),
            &BooleanArray::from_iter((0..400).map(|i| Some(i % 4 < 2))),
        )
        .unwrap();
        let probe = batch(600);
        let expr = routed(partition_tables(&build));
        let kept = evaluate(&expr, &probe);

        let build_keys: std::collections::HashSet<(Option<i64>, Option<String>)> = (0
            ..build.num_rows())
            .map(|row| key_of(&build, row))
            .collect();
        for row in 0..probe.num_rows() {
            let key = key_of(&probe, row);
            // A hash collision may keep a row the build side lacks, never
            // the other way round; with these few keys there is none
            assert_eq!(
                kept.value(row),
                build_keys.contains(&key),
                "row {row}: {key:?}"
            );
        }
        assert!(kept.true_count() > 0 && kept.false_count() > 0);
    }

    fn key_of(batch: &RecordBatch, row: usize) -> (Option<i64>, Option<String>) {
        let k = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let s = batch
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        (
            (!k.is_null(row)).then(|| k.value(row)),
            (!s.is_null(row)).then(|| s.value(row).to_string()),
        )
    }

    #[test]
    fn answers_as_the_case_of_lookups_does() {
        let build = batch(300);
        let mut partitions = partition_tables(&build);
        let probe = batch(1000);
        assert_eq!(
            evaluate(&routed(partitions.clone()), &probe),
            evaluate(case_form(&partitions).as_ref(), &probe)
        );

        // An empty partition keeps none of its rows, a canceled one all
        partitions[0] = RoutedMembership::Nothing;
        partitions[2] = RoutedMembership::Everything;
        let kept = evaluate(&routed(partitions.clone()), &probe);
        assert_eq!(kept, evaluate(case_form(&partitions).as_ref(), &probe));
        assert!(kept.true_count() > 0 && kept.false_count() > 0);

        // No rows
        let empty = probe.slice(0, 0);
        assert_eq!(evaluate(&routed(partitions), &empty).len(), 0);
    }

    #[test]
    fn looks_up_array_maps_by_key() {
        let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true)]));
        let key: Vec<PhysicalExprRef> = vec![Arc::new(Column::new("k", 0))];
        // Build keys 10, 12, ..., 40, routed as a hash repartition routes them
        let build: ArrayRef =
            Arc::new(Int64Array::from_iter_values((10..=40).step_by(2)));
        let mut routes = vec![0; build.len()];
        create_hashes(
            &[Arc::clone(&build)],
            REPARTITION_RANDOM_STATE.random_state(),
            &mut routes,
        )
        .unwrap();
        let partitions = (0..PARTITIONS as u64)
            .map(|partition| {
                let mask = BooleanArray::from_iter(
                    routes
                        .iter()
                        .map(|r| Some(r % PARTITIONS as u64 == partition)),
                );
                let part = arrow::compute::filter(&build, &mask).unwrap();
                let map = ArrayMap::try_new(&part, 10, 40).unwrap();
                RoutedMembership::Lookup(Arc::new(Map::ArrayMap(map)))
            })
            .collect();
        let expr = RoutedMapLookupExpr::new(
            key,
            REPARTITION_RANDOM_STATE,
            HASH_JOIN_SEED,
            partitions,
        );
        let probe = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from_iter(
                (0..50).map(|k| (k != 20).then_some(k)),
            ))],
        )
        .unwrap();
        let kept = evaluate(&expr, &probe);
        let expected = BooleanArray::from_iter(
            (0..50).map(|k| Some(k != 20 && (10..=40).contains(&k) && k % 2 == 0)),
        );
        assert_eq!(kept, expected);
    }
}
