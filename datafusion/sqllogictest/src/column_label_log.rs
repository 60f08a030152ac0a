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

//! A log of the column labels that `datafusion.sql_parser.pretty_column_names`
//! gives the queries of a run.
//!
//! slt files compare values, never column names, so a run with the option
//! forced on says nothing about the labels themselves. With
//! [`RECORD_LABELS_ENV`] naming a directory, each query's output names are
//! compared with the names the same statement gets with the option off, and
//! each output name is appended to a file of that directory, one per
//! process, as `name with the option<TAB>name without it`. `cargo xtask test`
//! reads them back and checks every label (a name that differs), and that no
//! name, label or not, shows a name the planner made up (a subquery's
//! `__correlated_sq_1`): a shape that the option does not label at all would
//! otherwise show its rewrite unseen.

use std::io::Write;
use std::path::PathBuf;

use datafusion::common::DFSchema;
use datafusion::prelude::SessionContext;

/// The directory to write the log to; unset, nothing is recorded.
pub const RECORD_LABELS_ENV: &str = "SLT_RECORD_COLUMN_LABELS";

/// Records the labels among `names`, the output schema `sql` got in `ctx`.
/// Best effort: a statement that does not plan again is left out.
pub(crate) async fn record(ctx: &SessionContext, sql: &str, names: &DFSchema) {
    let Some(dir) = std::env::var_os(RECORD_LABELS_ENV) else {
        return;
    };
    let mut state = ctx.state();
    if !state.config().options().sql_parser.pretty_column_names {
        return;
    }
    state
        .config_mut()
        .options_mut()
        .sql_parser
        .pretty_column_names = false;
    let Ok(plan) = state.create_logical_plan(sql).await else {
        return;
    };
    let unlabeled = plan.schema();
    if unlabeled.fields().len() != names.fields().len() {
        return;
    }
    let one_line = |name: &str| name.replace('\n', "\\n").replace('\t', "\\t");
    let mut lines = String::new();
    for (label, name) in names.fields().iter().zip(unlabeled.fields()) {
        lines.push_str(&format!(
            "{}\t{}\n",
            one_line(label.name()),
            one_line(name.name())
        ));
    }
    if lines.is_empty() {
        return;
    }
    let path = PathBuf::from(dir).join(format!("labels-{}.tsv", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(lines.as_bytes()));
    if let Err(e) = written {
        panic!("{RECORD_LABELS_ENV}: cannot write {}: {e}", path.display());
    }
}
