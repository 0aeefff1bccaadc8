//! The comma-separated text both trace readers (`trace`, `fit::load`)
//! take: a header naming the columns, then one row per line, blank lines
//! skipped, and a UTF-8 byte-order mark (which spreadsheet programs write
//! first) ignored.

/// A table's header and its rows, each split on commas and trimmed.
pub(crate) struct Table<'a> {
    /// The header's line number, from 1.
    pub header_line: usize,
    /// The header as written.
    pub header: &'a str,
    /// The header's column names.
    pub columns: Vec<&'a str>,
    lines: Box<dyn Iterator<Item = (usize, &'a str)> + 'a>,
}

impl<'a> Table<'a> {
    /// The table in `text`, or `None` if it holds no header (nothing but
    /// blank lines).
    pub fn new(text: &'a str) -> Option<Self> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (h, header) = lines.next()?;
        Some(Self {
            header_line: h + 1,
            header,
            columns: header.split(',').map(str::trim).collect(),
            lines: Box::new(lines.map(|(i, l)| (i + 1, l))),
        })
    }
}

impl<'a> Iterator for Table<'a> {
    /// A row's line number (from 1) and its cells, or, for a row whose
    /// count of fields is not the header's, its line number and why.
    type Item = Result<(usize, Vec<&'a str>), (usize, String)>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line, l) = self.lines.next()?;
        let cells: Vec<&str> = l.split(',').map(str::trim).collect();
        Some(if cells.len() == self.columns.len() {
            Ok((line, cells))
        } else {
            Err((
                line,
                format!("{} fields, the header has {}", cells.len(), self.columns.len()),
            ))
        })
    }
}
