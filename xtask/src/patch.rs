//! Unified diffs of single upstream files: made by `save`, applied by `sync`.
//!
//! Application is strict: every hunk must match the pristine file at exactly
//! the line numbers it names, with all its context, so a patch either means
//! precisely what it meant when it was saved or fails to apply. That is the
//! property a patch set over a pinned release needs; fuzz and offsets are for
//! moving between releases, which is a deliberate, reviewed step.

use anyhow::{Context, Result, bail};
use similar::TextDiff;

/// Lines of context around each change, as `diff -u` and `git diff` use.
const CONTEXT_LINES: usize = 3;

/// A parsed patch of one file.
#[derive(Debug, PartialEq, Eq)]
pub struct FilePatch {
    /// The file's path relative to the repository root.
    pub path: String,
    hunks: Vec<Hunk>,
}

#[derive(Debug, PartialEq, Eq)]
struct Hunk {
    /// 1-based first line of the hunk in the pristine file (0 for an empty file).
    old_start: usize,
    old_len: usize,
    new_len: usize,
    lines: Vec<HunkLine>,
}

#[derive(Debug, PartialEq, Eq)]
enum HunkLine {
    Context(String),
    Remove(String),
    Add(String),
}

/// The unified diff from `old` to `new` for the file at `path`, or `None`
/// when they are equal.
pub fn diff(path: &str, old: &str, new: &str) -> Option<String> {
    if old == new {
        return None;
    }
    let text = TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    Some(text)
}

impl FilePatch {
    pub fn parse(text: &str) -> Result<Self> {
        let mut lines = text.split_inclusive('\n').peekable();
        let mut path = None;
        for line in lines.by_ref() {
            if let Some(rest) = line.strip_prefix("+++ ") {
                let name = rest.trim_end().split('\t').next().unwrap_or_default();
                path = Some(name.strip_prefix("b/").unwrap_or(name).to_string());
                break;
            }
        }
        let path = path.context("no `+++` header")?;
        let mut hunks = Vec::new();
        while let Some(line) = lines.next() {
            let header = line.trim_end();
            if header.is_empty() {
                continue;
            }
            let (old_start, old_len, new_len) = parse_hunk_header(header)?;
            let mut hunk = Hunk {
                old_start,
                old_len,
                new_len,
                lines: Vec::new(),
            };
            let (mut old_seen, mut new_seen) = (0, 0);
            while old_seen < old_len || new_seen < new_len {
                let line = lines
                    .next()
                    .with_context(|| format!("hunk `{header}` ends early"))?;
                let (tag, content) = line.split_at(1.min(line.len()));
                let content = content.to_string();
                match tag {
                    " " => {
                        old_seen += 1;
                        new_seen += 1;
                        hunk.lines.push(HunkLine::Context(content));
                    }
                    "-" => {
                        old_seen += 1;
                        hunk.lines.push(HunkLine::Remove(content));
                    }
                    "+" => {
                        new_seen += 1;
                        hunk.lines.push(HunkLine::Add(content));
                    }
                    _ => bail!("unexpected line in hunk `{header}`: {line:?}"),
                }
                // The marker applies to the line just read.
                if lines.peek().is_some_and(|l| l.starts_with('\\')) {
                    lines.next();
                    strip_newline(hunk.lines.last_mut().expect("a line was just pushed"));
                }
            }
            hunks.push(hunk);
        }
        if hunks.is_empty() {
            bail!("patch of {path} has no hunks");
        }
        Ok(Self { path, hunks })
    }

    /// Applies the patch to the pristine text, exactly or not at all.
    pub fn apply(&self, old: &str) -> Result<String> {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::with_capacity(old.len() + 256);
        let mut cursor = 0;
        for hunk in &self.hunks {
            // A hunk that removes nothing and has no context names the line
            // after which it inserts; any other hunk names its first line.
            let start = if hunk.old_len == 0 {
                hunk.old_start
            } else {
                hunk.old_start - 1
            };
            if start < cursor || start + hunk.old_len > old_lines.len() {
                bail!(
                    "hunk at line {} lies outside the file or overlaps the previous hunk",
                    hunk.old_start
                );
            }
            out.extend(old_lines[cursor..start].iter().copied());
            let mut line_no = start;
            for line in &hunk.lines {
                match line {
                    HunkLine::Context(text) | HunkLine::Remove(text) => {
                        if old_lines[line_no] != text {
                            bail!(
                                "line {} does not match the patch: expected {:?}, found {:?}",
                                line_no + 1,
                                text,
                                old_lines[line_no]
                            );
                        }
                        if let HunkLine::Context(text) = line {
                            out.push_str(text);
                        }
                        line_no += 1;
                    }
                    HunkLine::Add(text) => out.push_str(text),
                }
            }
            debug_assert_eq!(line_no - start, hunk.old_len);
            let _ = hunk.new_len;
            cursor = line_no;
        }
        out.extend(old_lines[cursor..].iter().copied());
        Ok(out)
    }
}

impl FilePatch {
    /// The 1-based numbers, in the patched file, of the lines the patch adds.
    pub fn added_lines(&self) -> Vec<usize> {
        let mut added = Vec::new();
        // How far the patched file's lines have moved against the pristine's
        let mut shift: isize = 0;
        for hunk in &self.hunks {
            // As in `apply`: an insertion with no context names the line
            // before it
            let first_old = if hunk.old_len == 0 {
                hunk.old_start + 1
            } else {
                hunk.old_start
            };
            let mut line = first_old.strict_add_signed(shift);
            for hunk_line in &hunk.lines {
                match hunk_line {
                    HunkLine::Context(_) => line += 1,
                    HunkLine::Add(_) => {
                        added.push(line);
                        line += 1;
                    }
                    HunkLine::Remove(_) => {}
                }
            }
            shift += hunk.new_len as isize - hunk.old_len as isize;
        }
        added
    }
}

fn strip_newline(line: &mut HunkLine) {
    let (HunkLine::Context(text) | HunkLine::Remove(text) | HunkLine::Add(text)) = line;
    if text.ends_with('\n') {
        text.pop();
    }
}

/// Parses `@@ -A,B +C,D @@`, where a missing length means 1.
fn parse_hunk_header(header: &str) -> Result<(usize, usize, usize)> {
    let inner = header
        .strip_prefix("@@ -")
        .and_then(|h| h.split(" @@").next())
        .with_context(|| format!("expected a hunk header, found {header:?}"))?;
    let (old, new) = inner
        .split_once(" +")
        .with_context(|| format!("malformed hunk header {header:?}"))?;
    let range = |r: &str| -> Result<(usize, usize)> {
        let (start, len) = r.split_once(',').unwrap_or((r, "1"));
        Ok((start.parse()?, len.parse()?))
    };
    let (old_start, old_len) = range(old).with_context(|| format!("in {header:?}"))?;
    let (_, new_len) = range(new).with_context(|| format!("in {header:?}"))?;
    Ok((old_start, old_len, new_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(old: &str, new: &str) {
        let text = diff("x/y.rs", old, new).expect("texts differ");
        let patch = FilePatch::parse(&text).unwrap();
        assert_eq!(patch.path, "x/y.rs");
        assert_eq!(patch.apply(old).unwrap(), new, "patch:\n{text}");
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn equal_texts_make_no_patch() {
        assert_eq!(diff("a", "x\n", "x\n"), None);
    }

    #[test]
    fn round_trips_edits_anywhere() {
        let old = numbered(40);
        round_trip(&old, &old.replace("line 1\n", "first\n"));
        round_trip(&old, &old.replace("line 20\n", "line 20\ninserted\n"));
        round_trip(&old, &old.replace("line 40\n", ""));
        round_trip(
            &old,
            &old.replace("line 5\n", "").replace("line 30\n", "thirty\n"),
        );
        round_trip(&old, &format!("{old}appended\n"));
        round_trip("", "new content\n");
    }

    #[test]
    fn round_trips_missing_final_newline() {
        round_trip("a\nb", "a\nc");
        round_trip("a\nb\n", "a\nb");
        round_trip("a\nb", "a\nb\n");
    }

    #[test]
    fn refuses_a_moved_context() {
        let old = numbered(40);
        let text = diff("f", &old, &old.replace("line 20\n", "twenty\n")).unwrap();
        let patch = FilePatch::parse(&text).unwrap();
        // The same text one line lower: a fuzzy patch tool would apply it.
        let shifted = format!("line 0\n{old}");
        let err = patch.apply(&shifted).unwrap_err().to_string();
        assert!(err.contains("does not match the patch"), "{err}");
    }

    #[test]
    fn refuses_changed_context() {
        let old = numbered(10);
        let text = diff("f", &old, &old.replace("line 5\n", "five\n")).unwrap();
        let patch = FilePatch::parse(&text).unwrap();
        let err = patch
            .apply(&old.replace("line 6\n", "six\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 6 does not match"), "{err}");
    }

    #[test]
    fn names_the_lines_it_adds() {
        let old = numbered(40);
        let new = old
            .replace("line 3\n", "")
            .replace("line 10\n", "line 10\nten and a half\n")
            .replace("line 30\n", "thirty\n");
        let patch = FilePatch::parse(&diff("f", &old, &new).unwrap()).unwrap();
        let lines: Vec<&str> = new.lines().collect();
        let added: Vec<&str> = patch
            .added_lines()
            .into_iter()
            .map(|n| lines[n - 1])
            .collect();
        assert_eq!(added, ["ten and a half", "thirty"]);
        let patch = FilePatch::parse(&diff("f", "", "a\nb\n").unwrap()).unwrap();
        assert_eq!(patch.added_lines(), [1, 2]);
    }

    #[test]
    fn refuses_a_truncated_patch() {
        let old = numbered(10);
        let text = diff("f", &old, &old.replace("line 5\n", "five\n")).unwrap();
        let cut: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
        let err = FilePatch::parse(&cut).unwrap_err().to_string();
        assert!(err.contains("ends early"), "{err}");
    }
}
