//! The check over every column label that upstream's slt suite produces with
//! `datafusion.sql_parser.pretty_column_names` forced on.
//!
//! The runner logs each output name next to the name the column has without
//! the option (`datafusion/sqllogictest/src/column_label_log.rs`). A label (a
//! name the option changed) must never read worse than that name: it must
//! not contain Rust debug text (`IntervalMonthDayNano { months: .. }`), a
//! type wrapper (`Int64(1)`), `<subquery>`, the internal function the
//! planner makes of syntax the user typed (`array_element(a, 1)` for
//! `a[1]`), a name the planner made up (`__correlated_sq_1.b`), or an
//! ordering's default (`DESC NULLS FIRST`). A name the option left as it was
//! must not show a made-up name either: that is a shape the labels do not
//! know, showing the planner's rewrite of it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};

/// The runner's variable naming the log directory.
pub const RECORD_LABELS_ENV: &str = "SLT_RECORD_COLUMN_LABELS";

/// The option whose labels are checked.
pub const OPTION: &str = "datafusion.sql_parser.pretty_column_names";

/// Functions that stand for syntax (`a[1]`, `a[1:2]`, `s['f']`, `[1, 2]`).
const SYNTAX_FUNCTIONS: &[&str] = &[
    "array_element(",
    "array_slice(",
    "get_field(",
    "make_array(",
];

/// Names of `ScalarValue` variants, which wrap a literal in a planner name.
const TYPE_WRAPPERS: &[&str] = &[
    "Boolean",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "Float16",
    "Float32",
    "Float64",
    "Decimal32",
    "Decimal64",
    "Decimal128",
    "Decimal256",
    "Utf8",
    "LargeUtf8",
    "Utf8View",
    "Binary",
    "LargeBinary",
    "BinaryView",
    "FixedSizeBinary",
    "Date32",
    "Date64",
    "Time32Second",
    "Time32Millisecond",
    "Time64Microsecond",
    "Time64Nanosecond",
    "TimestampSecond",
    "TimestampMillisecond",
    "TimestampMicrosecond",
    "TimestampNanosecond",
    "IntervalYearMonth",
    "IntervalDayTime",
    "IntervalMonthDayNano",
    "DurationSecond",
    "DurationMillisecond",
    "DurationMicrosecond",
    "DurationNanosecond",
    "List",
    "LargeList",
    "FixedSizeList",
    "Struct",
    "Map",
    "Dictionary",
    "Union",
];

/// What the labels of a run came to.
pub struct LabelReport {
    /// Distinct labels, each with the name it replaced.
    pub labels: BTreeMap<String, String>,
    /// Distinct names that the option left as they were.
    pub kept: usize,
    /// `(name, why)` for each label that breaks the rule, and each kept
    /// name that shows a name the planner made up.
    pub faults: Vec<(String, &'static str)>,
}

/// Why `label` reads worse than a name, if it does.
pub fn fault(label: &str) -> Option<&'static str> {
    if label.contains("<subquery>") {
        return Some("shows <subquery>");
    }
    if SYNTAX_FUNCTIONS.iter().any(|f| label.contains(f)) {
        return Some("shows the function the planner made of typed syntax");
    }
    if has_type_wrapper(label) {
        return Some("wraps a literal in its type");
    }
    if label.contains(" { ") && label.contains(": ") {
        return Some("contains Rust debug text");
    }
    if let Some(why) = made_up_name(label) {
        return Some(why);
    }
    if ["ASC NULLS LAST", "DESC NULLS FIRST"]
        .iter()
        .any(|default| unquoted_matches(label, default))
    {
        return Some("shows an ordering's default");
    }
    None
}

/// The prefixes of the names the planner makes up for what it rewrites:
/// subqueries decorrelated into joins, their domains and markers, set
/// comparisons, `QUALIFY`, `unnest` and common subexpressions.
const MADE_UP_NAMES: &[&str] = &[
    "__correlated_sq",
    "__scalar_sq",
    "__always_true",
    "__subquery",
    "__row_subquery",
    "__set_comparison",
    "__set_operation_occurrence",
    "__qualify_subquery",
    "__domain",
    "__unnest_placeholder",
    "__common_expr",
];

/// Why `name`, an output name whether the option changed it or not, reads
/// as a rewrite: it holds, outside quotes, a name the planner made up
/// ([`MADE_UP_NAMES`]). Other names that start with `__` may be the user's
/// (`__foo__`, a column of upstream's tests).
pub fn made_up_name(name: &str) -> Option<&'static str> {
    let bytes = name.as_bytes();
    MADE_UP_NAMES
        .iter()
        .flat_map(|prefix| name.match_indices(prefix))
        .any(|(at, _)| {
            let starts_word = at == 0
                || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
            starts_word && !is_quoted(&name[..at])
        })
        .then_some("shows a name the planner made up")
}

/// Whether `needle` occurs in `label` outside quotes.
fn unquoted_matches(label: &str, needle: &str) -> bool {
    label
        .match_indices(needle)
        .any(|(at, _)| !is_quoted(&label[..at]))
}

/// Whether the text after `before` is inside '...' (a string's text) or
/// "..." (a column's name, which a subquery's SQL must spell as the plan
/// has it).
fn is_quoted(before: &str) -> bool {
    before.matches('\'').count() % 2 == 1 || before.matches('"').count() % 2 == 1
}

/// Whether `label` holds `Variant(`, a `ScalarValue` variant name used as a
/// wrapper, outside quotes (a string, or a quoted column name).
fn has_type_wrapper(label: &str) -> bool {
    let bytes = label.as_bytes();
    TYPE_WRAPPERS.iter().any(|wrapper| {
        label.match_indices(&format!("{wrapper}(")).any(|(at, _)| {
            let starts_word = at == 0
                || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
            starts_word && !is_quoted(&label[..at])
        })
    })
}

/// Reads every log file of `dir`.
pub fn read(dir: &Path) -> Result<LabelReport> {
    let mut labels = BTreeMap::new();
    let mut kept = BTreeSet::new();
    if dir.exists() {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            for line in text.lines() {
                match line.split_once('\t') {
                    Some((label, name)) if label == name => {
                        kept.insert(name.to_string());
                    }
                    Some((label, name)) => {
                        labels.insert(label.to_string(), name.to_string());
                    }
                    None => {}
                }
            }
        }
    }
    let faults = labels
        .keys()
        .filter_map(|label| fault(label).map(|why| (label.clone(), why)))
        .chain(
            kept.iter()
                .filter_map(|name| made_up_name(name).map(|why| (name.clone(), why))),
        )
        .collect();
    Ok(LabelReport {
        labels,
        kept: kept.len(),
        faults,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_found() {
        assert!(
            fault("ts + IntervalMonthDayNano { months: 0, days: 1, nanoseconds: 0 }")
                .is_some()
        );
        assert!(fault("(<subquery>)").is_some());
        assert!(fault("array_element(a, 1)").is_some());
        assert!(fault("get_field(s, f)").is_some());
        assert!(fault("t.a + Int64(1)").is_some());
        assert!(fault("Utf8(\"x\")").is_some());
        assert!(fault("(SELECT __correlated_sq_1.b FROM t)").is_some());
        assert!(fault("__always_true").is_some());
        assert!(fault("max(__domain_tag_1)").is_some());
        assert!(fault("ARRAY(SELECT a FROM t ORDER BY a DESC NULLS FIRST)").is_some());
        assert!(fault("row_number() OVER (ORDER BY a ASC NULLS LAST)").is_some());
        assert!(made_up_name("x + __scalar_sq_1.c").is_some());
    }

    #[test]
    fn readable_labels_pass() {
        for label in [
            "a + 1",
            "a[1]",
            "s['f']",
            "ts + INTERVAL '1 day'",
            "(SELECT max(sub.v) FROM sub)",
            "my_Int64(a)",
            "'Int64(' || a",
            r#"(SELECT cte."Int64(42)" FROM (SELECT 42) AS cte)"#,
            "CASE WHEN a > 0 THEN pos ELSE neg END",
            "named_struct(a, 1)",
            "my__name",
            "coalesce(a, __null__)",
            "'__x' || a",
            "ARRAY(SELECT a FROM t ORDER BY a DESC)",
            "row_number() OVER (ORDER BY a DESC NULLS LAST)",
        ] {
            assert_eq!(fault(label), None, "{label}");
        }
        assert_eq!(made_up_name(r#"(SELECT s."__x" FROM s)"#), None);
    }
}
