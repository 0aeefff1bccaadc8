//! Comma-separated text as gcsim's readers take it (traces, load traces,
//! a user's code matrix, training data), read by the `csv` crate: one
//! record per line, fields trimmed and possibly quoted, blank lines
//! skipped, and a UTF-8 byte-order mark (which spreadsheet programs write
//! first) ignored.

use std::path::Path;

use csv::StringRecord;
use thiserror::Error;

/// Why a trace file's text cannot be had, or one of its lines used: the
/// faults the two trace readers ([`crate::trace`], [`crate::fit::load`])
/// share.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TraceFileError {
    /// The file cannot be read.
    #[error("{file}: cannot read the trace: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        reason: String,
    },
    /// Not UTF-8 text.
    #[error("{file}: the trace is not UTF-8 text")]
    NotText {
        /// The file.
        file: String,
    },
    /// A bad header or row.
    #[error("{file}:{line}: {reason}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// A trace file's contents as UTF-8 text; `file` names it in errors.
pub fn trace_text<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, TraceFileError> {
    std::str::from_utf8(bytes).map_err(|_| TraceFileError::NotText { file: file.to_string() })
}

/// The longest line a streaming reader takes ([`LineLimit`]): a table's
/// rows are short, and a file without newlines (`/dev/zero`, a binary file)
/// would otherwise grow one record until the allocation aborts.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A reader that fails, with an error that says why, once a line passes
/// [`MAX_LINE_BYTES`].
pub struct LineLimit<R> {
    inner: R,
    line: usize,
}

impl<R> LineLimit<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        Self { inner, line: 0 }
    }
}

impl<R: std::io::Read> std::io::Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let got = self.inner.read(buf)?;
        for &b in &buf[..got] {
            self.line = if b == b'\n' { 0 } else { self.line + 1 };
            if self.line > MAX_LINE_BYTES {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "a line longer than {} MiB; a table has short lines (is this a CSV file?)",
                        MAX_LINE_BYTES >> 20
                    ),
                ));
            }
        }
        Ok(got)
    }
}

/// A trace file's name as errors give it, and its bytes.
pub fn read_trace(path: &Path) -> Result<(String, Vec<u8>), TraceFileError> {
    let file = path.display().to_string();
    // Through [`LineLimit`]: a file without newlines (`/dev/zero`) is
    // refused at its first megabyte rather than read until memory runs out.
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| std::io::Read::read_to_end(&mut LineLimit::new(f), &mut bytes));
    match read {
        Ok(_) => Ok((file, bytes)),
        Err(e) => Err(TraceFileError::Read {
            file,
            reason: e.to_string(),
        }),
    }
}

/// The rows of a text, read one at a time into one buffer: no header row
/// (the caller takes the first row as it needs), rows of any length (the
/// caller says which length is wrong), `#` lines skipped if asked.
pub(crate) struct Rows<'a> {
    text: &'a str,
    reader: csv::Reader<&'a [u8]>,
    record: StringRecord,
    comment: bool,
    /// The byte where the last row started, and its line.
    counted: (usize, usize),
}

impl<'a> Rows<'a> {
    /// The rows of `text`, skipping `#` lines if `comment`.
    pub fn new(text: &'a str, comment: bool) -> Self {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .comment(comment.then_some(b'#'))
            .from_reader(text.as_bytes());
        Self {
            text,
            reader,
            record: StringRecord::new(),
            comment,
            counted: (0, 1),
        }
    }

    /// The line (from 1) of the row that starts at `byte` or after the line
    /// breaks and comment lines there: csv's own line count misses the
    /// lines it skips before a record.
    fn line_at(&mut self, byte: u64) -> usize {
        let mut start = (byte as usize).max(self.counted.0);
        loop {
            let rest = &self.text[start..];
            let row = rest.trim_start_matches(['\r', '\n']);
            start += rest.len() - row.len();
            match row.find('\n') {
                Some(end) if self.comment && row.starts_with('#') => start += end,
                _ => break,
            }
        }
        let lines = self.text[self.counted.0..start].bytes().filter(|&b| b == b'\n').count();
        self.counted = (start, self.counted.1 + lines);
        self.counted.1
    }

    /// The next row that holds more than blanks, with its line number, or
    /// the line where the `csv` crate cannot read on and why.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Row<'_>> {
        loop {
            match self.reader.read_record(&mut self.record) {
                Ok(false) => return None,
                Ok(true) => {
                    // Trimmed here, and only where a field has blanks
                    // around it: csv's own trimming rebuilds every record.
                    let padded = |f: &str| f.starts_with(char::is_whitespace) || f.ends_with(char::is_whitespace);
                    if self.record.iter().any(padded) {
                        self.record.trim();
                    }
                    if self.record.len() == 1 && self.record[0].is_empty() {
                        continue;
                    }
                    let line = self.line_at(self.record.position().map_or(0, csv::Position::byte));
                    return Some(Ok((line, &self.record)));
                }
                Err(e) => {
                    let line = self.line_at(e.position().map_or(0, csv::Position::byte));
                    return Some(Err((line, e.to_string())));
                }
            }
        }
    }
}

/// A row's line number (from 1) and its fields, or the line of a row that
/// cannot be read and why.
pub(crate) type Row<'a> = Result<(usize, &'a StringRecord), (usize, String)>;

/// A table: a header naming the columns, then rows of as many fields.
pub(crate) struct Table<'a> {
    /// The header's line number, from 1.
    pub header_line: usize,
    /// The header's line as written.
    pub header: &'a str,
    /// The header's column names.
    pub columns: Vec<String>,
    rows: Rows<'a>,
}

impl<'a> Table<'a> {
    /// The table in `text`, or `None` if it holds no header (nothing but
    /// blank lines).
    pub fn new(text: &'a str) -> Option<Self> {
        let mut rows = Rows::new(text, false);
        let (header_line, columns) = match rows.next()? {
            Ok((line, record)) => (line, record.iter().map(str::to_string).collect()),
            Err((line, _)) => (line, Vec::new()),
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Some(Self {
            header_line,
            header: text.lines().nth(header_line.saturating_sub(1)).unwrap_or_default(),
            columns,
            rows,
        })
    }

    /// The table in `text` as [`Self::new`] reads it, refused where its
    /// header names a column twice (a reader that looks columns up by name
    /// would silently use the first): then the header's line and why.
    pub fn checked(text: &'a str) -> Option<Result<Self, (usize, String)>> {
        let table = Self::new(text)?;
        let columns = &table.columns;
        let repeated = columns.iter().enumerate().find(|(i, c)| columns[..*i].contains(c));
        Some(match repeated {
            Some((_, name)) => Err((
                table.header_line,
                format!(
                    "the header {} names {} twice; give each column once",
                    crate::param::quoted(table.header),
                    crate::param::quoted(name)
                ),
            )),
            None => Ok(table),
        })
    }

    /// The next row with its line number (from 1), or, for a row whose
    /// count of fields is not the header's, its line number and why.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Row<'_>> {
        let width = self.columns.len();
        Some(match self.rows.next()? {
            Ok((line, cells)) if cells.len() != width => {
                Err((line, format!("{} fields, the header has {width}", cells.len())))
            }
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blank lines and a byte-order mark are skipped, fields trimmed and
    /// unquoted, line numbers kept, and a short row named.
    #[test]
    fn rows_with_their_lines() {
        let text = "\u{feff}step, worker ,time\n\n1,2,\"3.5\"\n   \n4,5\n";
        let mut table = Table::new(text).unwrap();
        assert_eq!((table.header_line, table.header), (1, "step, worker ,time"));
        assert_eq!(table.columns, ["step", "worker", "time"]);
        let (line, cells) = table.next().unwrap().unwrap();
        assert_eq!((line, &cells[2]), (3, "3.5"));
        assert_eq!(
            table.next().unwrap().unwrap_err(),
            (5, "2 fields, the header has 3".to_string())
        );
        assert!(table.next().is_none());
        assert!(Table::new("\n \n").is_none());
        let mut rows = Rows::new("# a comment\n1,2\n\n\n3,4\n", true);
        assert_eq!(rows.next().unwrap().unwrap().0, 2);
        assert_eq!(rows.next().unwrap().unwrap().0, 5);
    }
}
