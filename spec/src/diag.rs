//! Diagnostics: errors located in the spec sources, rendered like rustc's.

use std::fmt;

use crate::ast::Span;

/// One error, located at a token of a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as it was named to the loader (a path for [`crate::load_dir`]).
    pub file: String,
    /// 1-based line of the offending token; 0 when the error is not about a position
    /// (e.g. an unreadable file).
    pub line: u32,
    /// 1-based column (in characters) of the offending token.
    pub col: u32,
    /// Number of characters to underline (at least 1, at most to the end of the line).
    pub width: u32,
    pub message: String,
    /// Short text printed after the carets.
    pub label: String,
    pub help: Option<String>,
    /// The text of line `line`, for rendering.
    pub source_line: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // Not about a source position (see `Diagnostics::io`).
            return write!(f, "error: {}\n --> {}", self.message, self.file);
        }
        let line_no = self.line.to_string();
        let gutter = " ".repeat(line_no.len());
        writeln!(f, "error: {}", self.message)?;
        writeln!(f, "{gutter}--> {}:{}:{}", self.file, self.line, self.col)?;
        writeln!(f, "{gutter} |")?;
        writeln!(f, "{line_no} | {}", self.source_line)?;
        // Tabs before the caret are kept so that the caret lines up under the token.
        let lead: String = self
            .source_line
            .chars()
            .take(self.col.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let carets = "^".repeat(self.width.max(1) as usize);
        let label = if self.label.is_empty() {
            String::new()
        } else {
            format!(" {}", self.label)
        };
        write!(f, "{gutter} | {lead}{carets}{label}")?;
        if let Some(help) = &self.help {
            write!(f, "\n{gutter} = help: {help}")?;
        }
        Ok(())
    }
}

/// All the errors found while loading a spec (never empty when returned as an error).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics {
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn len(&self) -> usize {
        self.list.len()
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.list.iter()
    }
    /// A diagnostic that is not about a source position (e.g. an unreadable directory).
    pub fn io(file: &str, message: String) -> Diagnostics {
        Diagnostics {
            list: vec![Diagnostic {
                file: file.to_string(),
                line: 0,
                col: 0,
                width: 0,
                message,
                label: String::new(),
                help: None,
                source_line: String::new(),
            }],
        }
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.list.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
}

/// An error found by the parser or the validator, located by byte offsets. Turned into a
/// [`Diagnostic`] by a [`SourceMap`] once all errors are known.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    pub span: Span,
    pub message: String,
    pub label: String,
    pub help: Option<String>,
}

impl Report {
    pub fn new(span: Span, message: impl Into<String>, label: impl Into<String>) -> Report {
        Report {
            span,
            message: message.into(),
            label: label.into(),
            help: None,
        }
    }
}

/// The loaded source files, to turn byte offsets into lines and columns.
pub(crate) struct SourceMap<'a> {
    /// (name shown in diagnostics, text) per file index.
    files: Vec<(&'a str, &'a str)>,
    /// Byte offsets where each file's lines start: a line number is a binary search, not
    /// a count of the newlines before it for each diagnostic.
    line_starts: Vec<Vec<usize>>,
}

impl<'a> SourceMap<'a> {
    /// The map of `files`: (name shown in diagnostics, text) per file index.
    pub fn new(files: Vec<(&'a str, &'a str)>) -> Self {
        let line_starts = files
            .iter()
            .map(|(_, text)| {
                std::iter::once(0)
                    .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                    .collect()
            })
            .collect();
        SourceMap { files, line_starts }
    }

    /// 1-based line and column (in characters) of a byte offset, and the line's text.
    pub fn locate(&self, file: usize, offset: usize) -> (u32, u32, &str) {
        let text = self.files.get(file).map_or("", |f| f.1);
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let starts = self.line_starts.get(file).map_or(&[0][..], Vec::as_slice);
        // The lines that start at or before the offset: at least the first.
        let line = starts.partition_point(|&s| s <= offset).max(1);
        let line_start = starts[line - 1];
        let line_end = text[offset..].find('\n').map_or(text.len(), |p| offset + p);
        let col = text[line_start..offset].chars().count() + 1;
        let line_text = text[line_start..line_end].trim_end_matches('\r');
        (line as u32, col as u32, line_text)
    }

    pub fn file_name(&self, file: usize) -> &str {
        self.files.get(file).map_or("<unknown>", |f| f.0)
    }

    pub fn diagnostic(&self, report: Report) -> Diagnostic {
        let Span { file, lo, hi } = report.span;
        let (line, col, source_line) = self.locate(file, lo);
        let text = self.files.get(file).map_or("", |f| f.1);
        let hi = floor_char_boundary(text, hi.max(lo).min(text.len()));
        let lo = floor_char_boundary(text, lo.min(hi));
        // Underline the span, but not past the end of its first line.
        let spanned = text[lo..hi]
            .split('\n')
            .next()
            .unwrap_or("")
            .chars()
            .count();
        let to_line_end = source_line.chars().count() + 1 - col as usize;
        let width = spanned.min(to_line_end).max(1);
        Diagnostic {
            file: self.file_name(file).to_string(),
            line,
            col,
            width: width as u32,
            message: report.message,
            label: report.label,
            help: report.help,
            source_line: source_line.to_string(),
        }
    }

    pub fn diagnostics(&self, reports: Vec<Report>) -> Diagnostics {
        Diagnostics {
            list: reports.into_iter().map(|r| self.diagnostic(r)).collect(),
        }
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
