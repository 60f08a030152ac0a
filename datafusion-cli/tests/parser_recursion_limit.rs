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

//! `datafusion-cli` parses with the session's
//! `datafusion.sql_parser.recursion_limit`, as `SessionContext::sql` does;
//! it parsed with the parser's fixed default of 50, so a query nested
//! deeper than that failed whatever the setting. Run through the binary.

use std::process::{Command, Output};

use insta_cmd::get_cargo_bin;

/// Runs each of `commands` (`-c`), one after the other in one session.
fn run(commands: &[&str]) -> Output {
    let mut cli = Command::new(get_cargo_bin("datafusion-cli"));
    cli.args(["-q", "--format", "csv"]);
    for command in commands {
        cli.args(["-c", command]);
    }
    cli.output().expect("datafusion-cli runs")
}

/// `1` in `levels` parentheses: each level is one step of the parser's
/// recursion. (Past the limit, nested `CASE`s and `CAST`s also fail, after
/// a time that grows with the depth: see `docs/sql-semantics.md`.)
fn nested(levels: usize) -> String {
    format!("{}1{}", "(".repeat(levels), ")".repeat(levels))
}

#[test]
fn the_session_recursion_limit_applies() {
    let query = format!("SELECT {} AS deep", nested(60));

    let refused = run(&[&query]);
    let error = String::from_utf8_lossy(&refused.stderr).to_string()
        + &String::from_utf8_lossy(&refused.stdout);
    assert!(
        error.contains("RecursionLimitExceeded (current limit: 50)"),
        "{refused:?}"
    );

    let raised = run(&["SET datafusion.sql_parser.recursion_limit = 200", &query]);
    assert!(raised.status.success(), "{raised:?}");
    assert_eq!(String::from_utf8(raised.stdout).unwrap(), "deep\n1\n");
}
