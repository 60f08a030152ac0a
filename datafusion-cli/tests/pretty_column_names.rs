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

//! `datafusion-cli` turns on `datafusion.sql_parser.pretty_column_names` by
//! default: the headers a user sees, and the two ways to turn it off.

use std::process::Command;

use insta_cmd::get_cargo_bin;

const QUERY: &str = "SELECT 1 + 2, sum(x), x * 2 FROM (VALUES (1)) t(x) GROUP BY x";

/// Runs the CLI quietly with CSV output and returns what it printed.
fn run(commands: &[&str], env: Option<(&str, &str)>) -> String {
    let mut cmd = Command::new(get_cargo_bin("datafusion-cli"));
    cmd.args(["-q", "--format", "csv"])
        .env_remove("DATAFUSION_SQL_PARSER_PRETTY_COLUMN_NAMES");
    for command in commands {
        cmd.args(["--command", command]);
    }
    if let Some((key, value)) = env {
        cmd.env(key, value);
    }
    let output = cmd.output().expect("datafusion-cli runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn labels_are_on_by_default() {
    assert_eq!(run(&[QUERY], None), "1 + 2,sum(x),x * 2\n3,1,2\n");
    assert_eq!(
        run(&["SHOW datafusion.sql_parser.pretty_column_names"], None),
        "name,value\ndatafusion.sql_parser.pretty_column_names,true\n"
    );
}

#[test]
fn set_false_turns_labels_off() {
    let printed = run(
        &[
            "SET datafusion.sql_parser.pretty_column_names = false",
            QUERY,
        ],
        None,
    );
    assert_eq!(
        printed,
        "Int64(1) + Int64(2),sum(t.x),t.x * Int64(2)\n3,1,2\n"
    );
}

#[test]
fn environment_turns_labels_off() {
    let printed = run(
        &[QUERY],
        Some(("DATAFUSION_SQL_PARSER_PRETTY_COLUMN_NAMES", "false")),
    );
    assert_eq!(
        printed,
        "Int64(1) + Int64(2),sum(t.x),t.x * Int64(2)\n3,1,2\n"
    );
}

/// The forms the planner writes as other expressions are labelled as typed:
/// a row `IN` a subquery (planned as a `CASE` over two `EXISTS`) and
/// `ARRAY(subquery)` (an aggregate); a `DESC` key in a subquery shows no
/// default `NULLS FIRST`.
#[test]
fn rewritten_forms_are_labelled_as_typed() {
    let printed = run(
        &[
            "CREATE TABLE t (a INT, b INT) AS VALUES (1, 2), (2, 1)",
            "SELECT (a, b) IN (SELECT b, a FROM t x), \
             cardinality(ARRAY(SELECT b FROM t x WHERE x.a >= t.a ORDER BY b DESC)), \
             (SELECT x.b FROM t x WHERE x.a <> t.a ORDER BY x.b DESC LIMIT 1) \
             FROM t ORDER BY a",
        ],
        None,
    );
    assert_eq!(
        printed,
        "\"(a, b) IN (SELECT b, a FROM t x)\",\
         cardinality(ARRAY(SELECT b FROM t x WHERE x.a >= t.a ORDER BY b DESC)),\
         (SELECT x.b FROM t AS x WHERE x.a <> t.a ORDER BY x.b DESC LIMIT 1)\n\
         true,2,1\ntrue,1,2\n"
    );
}
