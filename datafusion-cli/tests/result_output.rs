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

//! `datafusion-cli` writes every row of a result in the formats a result is
//! exported in (CSV, TSV, JSON, NDJSON), whatever `--maxrows` and the batch
//! size; the table shows at most `--maxrows` and says how many it left out.
//! Run through the binary, as a user exports a result.

use std::process::Command;

use insta_cmd::get_cargo_bin;

/// Runs the CLI with `args` and returns what it printed on stdout.
fn run(args: &[&str]) -> String {
    let output = Command::new(get_cargo_bin("datafusion-cli"))
        .args(args)
        .output()
        .expect("datafusion-cli runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn series(rows: usize) -> String {
    format!("SELECT value FROM generate_series(1, {rows}) ORDER BY value")
}

/// The values of the one-column result `printed` in `format`, in order.
fn values(format: &str, printed: &str) -> Vec<u64> {
    let value_of = |line: &str| {
        line.trim_matches(|c: char| !c.is_ascii_digit())
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("not a value: {line}"))
    };
    match format {
        "csv" | "tsv" => {
            let mut lines = printed.lines();
            assert_eq!(lines.next(), Some("value"), "one header first");
            lines.map(value_of).collect()
        }
        "nd-json" => printed.lines().map(value_of).collect(),
        "json" => {
            assert_eq!(printed.lines().count(), 1, "one array: {printed:.200}");
            let array = printed.trim_end();
            assert!(array.starts_with('[') && array.ends_with(']'));
            array[1..array.len() - 1]
                .split("},{")
                .map(value_of)
                .collect()
        }
        _ => unreachable!(),
    }
}

#[test]
fn exported_formats_write_every_row() {
    // Many small batches, and the default batch size past the default
    // `--maxrows` of 40 many times over
    for (rows, batch_size) in [(1000, "7"), (100_000, "8192"), (3, "1")] {
        for format in ["csv", "tsv", "json", "nd-json"] {
            let printed = run(&[
                "-q",
                "--format",
                format,
                "-b",
                batch_size,
                "-c",
                &series(rows),
            ]);
            let expected: Vec<u64> = (1..=rows as u64).collect();
            assert_eq!(
                values(format, &printed),
                expected,
                "{format}, {rows} rows in batches of {batch_size}"
            );
        }
    }
}

#[test]
fn maxrows_does_not_limit_exported_formats() {
    let printed = run(&[
        "-q",
        "--format",
        "csv",
        "--maxrows",
        "2",
        "-b",
        "1",
        "-c",
        &series(5),
    ]);
    assert_eq!(printed, "value\n1\n2\n3\n4\n5\n");
}

#[test]
fn footer_counts_every_row_written() {
    let printed = run(&["--format", "nd-json", "-b", "7", "-c", &series(1000)]);
    assert_eq!(printed.lines().filter(|l| l.starts_with('{')).count(), 1000);
    assert!(printed.contains("1000 row(s) fetched."), "{printed}");
}

#[test]
fn table_shows_maxrows_and_says_how_many_it_did_not() {
    let printed = run(&["--maxrows", "4", "-b", "3", "-c", &series(10)]);
    let shown: Vec<&str> = printed
        .lines()
        .filter(|line| line.starts_with("| "))
        .map(|line| line.trim_matches(|c| c == '|' || c == ' '))
        .collect();
    assert_eq!(shown, ["value", "1", "2", "3", "4", ".", ".", "."]);
    assert!(
        printed.contains(
            "10 row(s) fetched. (First 4 displayed, 6 not shown. Use --maxrows to adjust)"
        ),
        "{printed}"
    );

    // Exactly `maxrows` rows: all shown, no marker
    let printed = run(&["--maxrows", "4", "-b", "2", "-c", &series(4)]);
    assert!(!printed.contains("| . "), "{printed}");
    assert!(printed.contains("4 row(s) fetched. \n"), "{printed}");
}

#[test]
fn empty_results_print_as_before() {
    for format in ["csv", "tsv", "json", "nd-json"] {
        let printed = run(&["-q", "--format", format, "-c", "SELECT 1 AS a WHERE false"]);
        assert_eq!(printed, "", "{format}");
    }
    let printed = run(&["-q", "-c", "SELECT 1 AS a WHERE false"]);
    assert_eq!(printed, "+---+\n| a |\n+---+\n+---+\n");
}
