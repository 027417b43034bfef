//! The detail report: sections of fields, lists and aligned tables, printed as markdown
//! that reads well in a plain terminal.
//!
//! A view builds a [`Report`] from a packet; [`Report::to_markdown`] lays it out. Tables
//! are pipe tables padded to the widest cell of each column (numbers right-aligned), so
//! they line up in a terminal and still render as tables in a markdown viewer. Nothing
//! is coloured. Cell text is kept on one line and `|` is escaped.

use crate::wire::json::Value;
use crate::wire::pyfmt;

/// A detail report: titled sections in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub sections: Vec<Section>,
}

/// One `## title` section.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
}

/// The content of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// `- label: value` lines.
    Fields(Vec<(String, String)>),
    /// `- item` lines.
    List(Vec<String>),
    /// `1. item` lines.
    Numbered(Vec<String>),
    /// An aligned table.
    Table(Table),
    /// One paragraph.
    Text(String),
    /// A fenced code block of shell lines, for commands to copy or run.
    Shell(Vec<String>),
}

/// A table: a header row and data rows of the same width.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Report {
    /// Starts a new section and returns it for filling.
    pub fn section(&mut self, title: &str) -> &mut Section {
        self.sections.push(Section {
            title: title.to_owned(),
            blocks: Vec::new(),
        });
        let last = self.sections.len() - 1;
        &mut self.sections[last]
    }

    /// The report as markdown: each section is `## title`, a blank line, its blocks
    /// separated by blank lines, and a trailing blank line.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        for section in self.sections.iter().filter(|s| !s.blocks.is_empty()) {
            out.push_str("## ");
            out.push_str(&section.title);
            out.push_str("\n\n");
            for block in &section.blocks {
                out.push_str(&block.to_markdown());
                out.push('\n');
            }
        }
        out
    }
}

impl Section {
    /// Adds `- label: value` lines; pairs whose value is empty are skipped.
    pub fn fields<L: Into<String>>(&mut self, pairs: impl IntoIterator<Item = (L, String)>) {
        let pairs: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(l, v)| (l.into(), v))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        if !pairs.is_empty() {
            self.blocks.push(Block::Fields(pairs));
        }
    }

    /// Adds a bullet list (nothing when empty).
    pub fn list(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
    }

    /// Adds a numbered list (nothing when empty).
    pub fn numbered(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::Numbered(items));
        }
    }

    /// Adds a table (a `(none)` line when it has no rows).
    pub fn table(&mut self, header: &[&str], rows: Vec<Vec<String>>) {
        if rows.is_empty() {
            self.blocks.push(Block::Text("(none)".to_owned()));
            return;
        }
        self.blocks.push(Block::Table(Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows,
        }));
    }

    /// Adds a paragraph.
    pub fn text(&mut self, text: &str) {
        self.blocks.push(Block::Text(text.to_owned()));
    }

    /// Adds a ```` ```sh ```` block of shell lines (each kept on one line).
    pub fn shell(&mut self, lines: Vec<String>) {
        self.blocks.push(Block::Shell(lines));
    }
}

impl Block {
    fn to_markdown(&self) -> String {
        match self {
            Block::Fields(pairs) => pairs
                .iter()
                .map(|(label, value)| format!("- {label}: {}\n", one_line(value)))
                .collect(),
            Block::List(items) => items
                .iter()
                .map(|item| format!("- {}\n", one_line(item)))
                .collect(),
            Block::Numbered(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| format!("{}. {}\n", i + 1, one_line(item)))
                .collect(),
            Block::Table(table) => table.to_markdown(),
            Block::Text(text) => format!("{}\n", one_line(text)),
            Block::Shell(lines) => {
                // Kept as they are (quoting may hold runs of spaces); a newline would
                // end the command early, so none is kept.
                let body: String = lines
                    .iter()
                    .map(|l| format!("{}\n", l.replace(['\n', '\r'], " ")))
                    .collect();
                format!("```sh\n{body}```\n")
            }
        }
    }
}

impl Table {
    /// The aligned pipe table.
    pub fn to_markdown(&self) -> String {
        let columns = self.header.len();
        let cell = |row: &[String], i: usize| cell_text(row.get(i).map(String::as_str));
        let header: Vec<String> = (0..columns).map(|i| cell(&self.header, i)).collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| (0..columns).map(|i| cell(row, i)).collect())
            .collect();
        let numeric: Vec<bool> = (0..columns)
            .map(|i| rows.iter().all(|r| is_number(&r[i])))
            .collect();
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                rows.iter()
                    .map(|r| width(&r[i]))
                    .chain([width(&header[i]), 3])
                    .max()
                    .unwrap_or(3)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| pad(c, widths[i], numeric[i]))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let rule: Vec<String> = (0..columns)
            .map(|i| {
                if numeric[i] {
                    format!("{}:", "-".repeat(widths[i] - 1))
                } else {
                    "-".repeat(widths[i])
                }
            })
            .collect();
        let mut out = line(&header);
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in &rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// Display width of a cell: one column per character (the packets hold ASCII tokens).
fn width(text: &str) -> usize {
    text.chars().count()
}

fn pad(text: &str, to: usize, right: bool) -> String {
    let fill = " ".repeat(to.saturating_sub(width(text)));
    if right {
        format!("{fill}{text}")
    } else {
        format!("{text}{fill}")
    }
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.parse::<f64>().is_ok()
}

/// A table cell: one line, `|` escaped, `-` when empty.
fn cell_text(text: Option<&str>) -> String {
    let text = one_line(text.unwrap_or_default()).replace('|', "\\|");
    if text.is_empty() {
        "-".to_owned()
    } else {
        text
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A JSON value as text for a person: strings as they are, `true`/`false`, numbers as
/// printed in the packet, `-` for null or absent, lists of scalars comma-separated (`-`
/// when empty), objects by their `status`.
pub fn show(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::Str(s)) => s.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Array(items)) if items.is_empty() => "-".to_owned(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| show(Some(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::Object(map)) => show(map.get("status")),
        Some(other) => pyfmt::py_str_value(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_columns_are_padded_and_numbers_right_aligned() {
        let mut report = Report::default();
        report.section("Cases").table(
            &["case", "n"],
            vec![
                vec!["a_long_case".into(), "4".into()],
                vec!["b".into(), "31".into()],
            ],
        );
        assert_eq!(
            report.to_markdown(),
            "## Cases\n\n\
             | case        |   n |\n\
             | ----------- | --: |\n\
             | a_long_case |   4 |\n\
             | b           |  31 |\n\n"
        );
    }

    #[test]
    fn cells_are_single_line_escaped_and_never_empty() {
        let table = Table {
            header: vec!["x".into(), "y".into()],
            rows: vec![vec!["a|b".into(), "".into()], vec!["c\nd".into()]],
        };
        assert_eq!(
            table.to_markdown(),
            "| x    | y   |\n| ---- | --- |\n| a\\|b | -   |\n| c d  | -   |\n"
        );
    }

    #[test]
    fn empty_fields_and_sections_are_left_out() {
        let mut report = Report::default();
        report.section("Empty");
        report
            .section("Gate")
            .fields([("status", "hold".to_owned()), ("reasons", String::new())]);
        report.section("Rows").table(&["a"], Vec::new());
        assert_eq!(
            report.to_markdown(),
            "## Gate\n\n- status: hold\n\n## Rows\n\n(none)\n\n"
        );
    }

    #[test]
    fn values_read_like_json_tokens() {
        let v =
            crate::wire::json::parse(r#"[1.0, true, null, "x", {"status": "ok"}]"#).expect("valid");
        assert_eq!(show(Some(&v)), "1.0, true, -, x, ok");
        assert_eq!(show(None), "-");
        assert_eq!(show(Some(&Value::Array(Box::default()))), "-");
    }
}
