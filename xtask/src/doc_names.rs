//! The code names our docs use are names the code has.
//!
//! A doc under `docs/` names the code it explains in backticks: a file
//! (`dependent_join/join.rs`), a module path (`correlation::handoff`), a
//! function (`pins_correlated_subquery`) or a type (`DependentJoin`,
//! `JoinType::LeftSingle`). When the code is renamed or moved and the doc
//! is not, a newcomer follows a name to nothing. So every backticked span
//! that reads as a code name must exist in the tree after `sync`, in our
//! code or upstream's:
//!
//! - a path with a `/` that ends in a file extension is a file, whose path
//!   is that or ends with `/` and that;
//! - a Rust path (`a::b::C`, `f()`), a `snake_case` name with an `_`, or a
//!   `CamelCase` name is found word for word in a Rust file, each of its
//!   segments (a segment may also be a module's file or folder).
//!
//! Anything else in backticks (SQL, a config key, a value, a plan line) is
//! not a code name and is not checked. [`NOT_CODE`] lists the spans that
//! read as code names but are SQL or an example of a name the planner makes.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};

use crate::fsutil::list_files_except;
use crate::git;

/// Spans that read as code names but are not: names the planner makes up,
/// shown as the plan shows them, a benchmark's id that the bench builds
/// with `format!`, and a file of upstream's repository that its crates do
/// not ship.
const NOT_CODE: &[&str] = &[
    "__correlated_sq_1",
    "__scalar_sq_1",
    "__scalar_sq_2",
    "outer_column_over_aggregate_planning",
    "docs/source/contributor-guide/specification/output-field-name-semantic.md",
];

/// Crates outside the tree whose items a doc may name (`arrow_row::Rows`).
const EXTERNAL_CRATES: &[&str] = &[
    "arrow",
    "arrow_row",
    "arrow_array",
    "arrow_schema",
    "sqlparser",
    "parquet",
    "object_store",
    "tokio",
];

/// The folders the tree's files are searched in for names, and those left
/// out (build output, git's own, the patch set, which holds upstream text).
const SKIPPED_DIRS: &[&str] = &["target", ".git", "patches", "node_modules"];

/// The problems found: each backticked code name of a doc that the tree
/// does not have.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let tree = Tree::read(root)?;
    let mut problems = vec![];
    for doc in git::tracked_files(root)?
        .iter()
        .filter(|f| f.starts_with("docs/") && f.ends_with(".md"))
    {
        let text = std::fs::read_to_string(root.join(doc))
            .with_context(|| format!("reading {doc}"))?;
        for (line, span) in code_spans(&text) {
            if let Some(name) = CodeName::of(&span)
                && !tree.has(&name)
            {
                problems
                    .push(format!("{doc}:{line}: `{span}` names nothing in the code"));
            }
        }
    }
    Ok(problems)
}

/// What a backticked span names.
#[derive(Debug, PartialEq, Eq)]
enum CodeName {
    /// A file, by its path or the end of it.
    File(String),
    /// A Rust item or module, by its path's segments.
    Item(Vec<String>),
}

impl CodeName {
    /// The code name `span` reads as, if it reads as one.
    fn of(span: &str) -> Option<Self> {
        if NOT_CODE.contains(&span)
            || EXTERNAL_CRATES
                .iter()
                .any(|c| span.starts_with(&format!("{c}::")))
        {
            return None;
        }
        if is_file_path(span) {
            return Some(Self::File(span.trim_start_matches("./").to_string()));
        }
        let path = span.strip_suffix("()").unwrap_or(span);
        let segments: Vec<&str> = path.split("::").collect();
        if !segments.iter().all(|segment| is_identifier(segment)) {
            return None;
        }
        let reads_as_code = segments.len() > 1
            || span.ends_with("()")
            || is_snake_case_name(path)
            || is_camel_case_name(path);
        reads_as_code
            .then(|| Self::Item(segments.iter().map(|s| s.to_string()).collect()))
    }
}

/// The files and Rust words of the tree.
struct Tree {
    files: Vec<String>,
    words: BTreeSet<String>,
}

impl Tree {
    fn read(root: &Path) -> Result<Self> {
        let files = list_files_except(root, SKIPPED_DIRS)?;
        let mut words = BTreeSet::new();
        // This file's tests plant wrong names, which the tree must not have
        let this_file = "xtask/src/doc_names.rs";
        for file in files
            .iter()
            .filter(|f| f.ends_with(".rs") && *f != this_file)
        {
            let Ok(text) = std::fs::read_to_string(root.join(file)) else {
                continue;
            };
            words.extend(
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|word| !word.is_empty())
                    .map(str::to_string),
            );
        }
        Ok(Self { files, words })
    }

    fn has(&self, name: &CodeName) -> bool {
        match name {
            CodeName::File(path) => self.has_file(path) || self.has_folder(path),
            CodeName::Item(segments) => segments.iter().all(|segment| {
                self.words.contains(segment)
                    || self.has_file(&format!("{segment}.rs"))
                    || self.has_folder(segment)
            }),
        }
    }

    /// Whether a file's path is `path`, or ends with `/` and `path`.
    fn has_file(&self, path: &str) -> bool {
        self.files
            .iter()
            .any(|file| file == path || file.ends_with(&format!("/{path}")))
    }

    /// Whether a folder's path is `path`, or ends with `/` and `path`.
    fn has_folder(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        self.files.iter().any(|file| {
            file.starts_with(&format!("{path}/")) || file.contains(&format!("/{path}/"))
        })
    }
}

/// The backticked spans of a Markdown text outside fenced blocks, with the
/// line each is on.
fn code_spans(doc: &str) -> Vec<(usize, String)> {
    let mut spans = vec![];
    let mut fenced = false;
    for (index, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Double backticks quote a span that holds a backtick: not a name
        let mut parts = line.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            spans.push((index + 1, span.to_string()));
        }
    }
    spans
}

/// Whether `span` is a path to a file: a `/` (or a Rust file's name alone),
/// no space, and a file name with an extension (`joins/single_join.rs`,
/// `xtask/slt-expected-failures.txt`). A path into the build output
/// (`target/...`) or with a wildcard is not checked.
fn is_file_path(span: &str) -> bool {
    let file = match span.rsplit_once('/') {
        Some((_, file)) => file,
        // A Rust file may go by its name alone (`count_bug.rs`)
        None if span.ends_with(".rs") => span,
        None => return false,
    };
    !span.contains(char::is_whitespace)
        && !span.contains("://")
        && !span.contains('*')
        && !span.starts_with("../")
        && !span.starts_with("target/")
        && file.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && matches!(ext, "rs" | "md" | "toml" | "txt" | "py" | "slt")
        })
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `pins_correlated_subquery`: lowercase, with an `_` between words.
fn is_snake_case_name(text: &str) -> bool {
    let inner = text.trim_matches('_');
    inner.contains('_')
        && inner
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `DependentJoin`: an uppercase letter, lowercase ones, then another
/// uppercase letter.
fn is_camel_case_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && text.chars().any(|c| c.is_ascii_lowercase())
        && text.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && text.chars().all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_code_names_and_leaves_the_rest() {
        let item = |segments: &[&str]| {
            Some(CodeName::Item(
                segments.iter().map(|s| s.to_string()).collect(),
            ))
        };
        assert_eq!(
            CodeName::of("pins_correlated_subquery"),
            item(&["pins_correlated_subquery"])
        );
        assert_eq!(CodeName::of("DependentJoin"), item(&["DependentJoin"]));
        assert_eq!(
            CodeName::of("JoinType::LeftSingle"),
            item(&["JoinType", "LeftSingle"])
        );
        assert_eq!(CodeName::of("push()"), item(&["push"]));
        assert_eq!(
            CodeName::of("dependent_join/join.rs"),
            Some(CodeName::File("dependent_join/join.rs".to_string()))
        );
        for not_code in [
            "SELECT a FROM t",
            "datafusion.sql_parser.pretty_column_names",
            "k",
            "LIMIT",
            "NULL",
            "a + 1",
            "__correlated_sq_1",
            "../shared",
        ] {
            assert_eq!(CodeName::of(not_code), None, "{not_code}");
        }
    }

    #[test]
    fn a_name_the_tree_lacks_is_found() {
        let tree = Tree {
            files: vec!["datafusion/optimizer/src/correlation/handoff.rs".to_string()],
            words: [
                "pins_correlated_subquery",
                "DependentJoin",
                "JoinType",
                "LeftSingle",
            ]
            .into_iter()
            .map(str::to_string)
            .collect(),
        };
        let has = |span: &str| tree.has(&CodeName::of(span).unwrap());
        assert!(has("pins_correlated_subquery"));
        assert!(has("correlation/handoff.rs"));
        assert!(has("correlation::handoff::pins_correlated_subquery"));
        assert!(has("JoinType::LeftSingle"));
        // A planted wrong name
        assert!(!has("renames_for_correlated_subquery"));
        assert!(!has("correlation/renames.rs"));
        assert!(!has("JoinType::LeftMark2"));
    }

    #[test]
    fn spans_are_read_outside_fenced_blocks() {
        let doc = "See `a_b` and `C`.\n```text\n`not_this`\n```\n`d_e`\n";
        assert_eq!(
            code_spans(doc),
            [
                (1, "a_b".to_string()),
                (1, "C".to_string()),
                (5, "d_e".to_string())
            ]
        );
    }
}
