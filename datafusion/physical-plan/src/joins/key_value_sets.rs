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

//! Which join keys a set of their values may stand for.
//!
//! A hash join's dynamic filter tells the probe side which keys the build
//! side holds. For a small build side it lists them: an `IN` list over the
//! build keys, whose set finds a value by its bits. The join itself, `=`
//! and `GROUP BY` do not compare floating point values by their bits: they
//! take `0.0` and `-0.0` as the same value, as PostgreSQL and DuckDB do. A
//! build side holding `0.0` then lists `0.0`, and the list drops the probe
//! row with `-0.0` that the join would match:
//!
//! ```sql
//! -- a holds 0.0 and -0.0, b holds 0.0: the -0.0 row was lost
//! SELECT * FROM a WHERE k IN (SELECT k FROM b);
//! ```
//!
//! A key of such a type is checked against the join's hash table instead,
//! which hashes and compares the way the join does. The filter's bounds
//! need no such care: `>=` and `<=` also take the two zeros as equal.

use arrow::datatypes::DataType;

/// Whether two values of `data_type` that the join matches always have the
/// same bits, so that a set of build keys finds every probe key the join
/// would match. Only the types known to hold this are taken: a type added to
/// arrow later is refused until it is listed here.
pub fn equal_keys_have_equal_bits(data_type: &DataType) -> bool {
    match data_type {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Decimal32(_, _)
        | DataType::Decimal64(_, _)
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_)
        | DataType::Date32
        | DataType::Date64
        | DataType::Time32(_)
        | DataType::Time64(_)
        | DataType::Timestamp(_, _)
        | DataType::Duration(_) => true,
        DataType::Dictionary(_, values) => equal_keys_have_equal_bits(values),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, Fields, TimeUnit};
    use std::sync::Arc;

    #[test]
    fn integers_strings_and_times_are_taken() {
        for data_type in [
            DataType::Int64,
            DataType::UInt8,
            DataType::Decimal128(15, 2),
            DataType::Utf8View,
            DataType::Date32,
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        ] {
            assert!(equal_keys_have_equal_bits(&data_type), "{data_type}");
        }
    }

    #[test]
    fn floats_and_what_may_hold_them_are_refused() {
        let float_struct = DataType::Struct(Fields::from(vec![Field::new(
            "f",
            DataType::Float64,
            true,
        )]));
        for data_type in [
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Float32)),
            float_struct,
            DataType::List(Arc::new(Field::new_list_field(DataType::Float64, true))),
        ] {
            assert!(!equal_keys_have_equal_bits(&data_type), "{data_type}");
        }
    }
}
