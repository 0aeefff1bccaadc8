//! Reading the table that nccl-tests' `all_reduce_perf` prints.
//!
//! Comment lines start with `#`. One of them is the column header, e.g.
//! `#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw
//! busbw #wrong` (out-of-place, then in-place); versions before 2.13 lack
//! `root` and call `#wrong` `error`. Others list the devices, one
//! `#  Rank  N …` line per rank, which gives the number of ranks. A data
//! row starts with the size in bytes, a whole number. Any other line is
//! text that NCCL or the launcher wrote into the same stream (`NCCL INFO`
//! lines, library warnings, the shell's command line) and is skipped.

use super::NcclError;

/// One data row: the size and the times of the chosen column.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// 1-based line of the row in the file.
    pub line: usize,
    /// S: the size summed, in bytes.
    pub size_bytes: u64,
    /// The all-reduce's time, in seconds.
    pub time: f64,
    /// The same time as the table writes it, in microseconds.
    pub time_us: f64,
    /// The table's bus bandwidth for that time, in GB/s, where the column is there.
    pub busbw_gbps: Option<f64>,
}

/// The table as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The data rows, in file order.
    pub rows: Vec<Measurement>,
    /// The rank numbers of the `# Rank N` lines, with their lines.
    pub ranks: Vec<(usize, usize)>,
    /// Lines that are neither comments nor data rows.
    pub skipped: usize,
}

/// Where the columns of one data row are, from the header.
struct Layout {
    line: usize,
    names: Vec<String>,
    time: usize,
    busbw: Option<usize>,
    redop: Option<usize>,
}

/// The header's column names: `size` first and at least one `time`.
fn header_names(comment: &str) -> Option<Vec<String>> {
    let names: Vec<String> = comment.split_whitespace().map(str::to_string).collect();
    (names.first().map(String::as_str) == Some("size") && names.iter().any(|n| n == "time")).then_some(names)
}

impl Layout {
    fn new(file: &str, line: usize, names: Vec<String>, in_place: bool) -> Result<Self, NcclError> {
        let times: Vec<usize> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| *n == "time")
            .map(|(i, _)| i)
            .collect();
        let time = match (in_place, times.as_slice()) {
            (false, [first, ..]) => *first,
            (true, [_, second, ..]) => *second,
            _ => {
                return Err(NcclError::line(
                    file,
                    line,
                    "the header names one time column; --in-place needs the in-place group (a second `time`)",
                ));
            }
        };
        let busbw = names.iter().skip(time).position(|n| n == "busbw").map(|i| i + time);
        let redop = names.iter().position(|n| n == "redop");
        Ok(Self {
            line,
            names,
            time,
            busbw,
            redop,
        })
    }

    fn row(&self, file: &str, line: usize, fields: &[&str]) -> Result<Measurement, NcclError> {
        if fields.len() != self.names.len() {
            return Err(NcclError::line(
                file,
                line,
                format!(
                    "{} fields, but the header at line {} names {} ({})",
                    fields.len(),
                    self.line,
                    self.names.len(),
                    self.names.join(" ")
                ),
            ));
        }
        if let Some(r) = self.redop
            && fields[r] == "none"
        {
            return Err(NcclError::line(
                file,
                line,
                "redop `none`: this is not an all-reduce table; accepted: the output of all_reduce_perf",
            ));
        }
        let size_bytes = fields[0].parse::<u64>().map_err(|_| {
            NcclError::line(
                file,
                line,
                format!("size `{}` is not a whole number of bytes", fields[0]),
            )
        })?;
        let text = fields[self.time];
        let time_us = match text.parse::<f64>() {
            Ok(t) if t.is_finite() && t > 0.0 => t,
            _ => {
                return Err(NcclError::line(
                    file,
                    line,
                    format!(
                        "time {} is not a number of microseconds > 0",
                        crate::param::quoted(text)
                    ),
                ));
            }
        };
        let busbw_gbps = self.busbw.and_then(|b| fields[b].parse::<f64>().ok());
        Ok(Measurement {
            line,
            size_bytes,
            time: time_us / 1e6,
            time_us,
            busbw_gbps,
        })
    }
}

/// Reads the table in `text` (of `file`); `in_place` picks the in-place times.
pub fn read(file: &str, text: &str, in_place: bool) -> Result<Table, NcclError> {
    if text.trim().is_empty() {
        return Err(NcclError::Empty { file: file.to_string() });
    }
    let mut layout: Option<Layout> = None;
    let mut table = Table {
        rows: Vec::new(),
        ranks: Vec::new(),
        skipped: 0,
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            comment_line(file, line, comment, in_place, &mut layout, &mut table)?;
            continue;
        }
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        match fields.first() {
            Some(first) if first.bytes().all(|b| b.is_ascii_digit()) => match &layout {
                Some(l) => table.rows.push(l.row(file, line, &fields)?),
                None => {
                    return Err(NcclError::line(
                        file,
                        line,
                        "a data row before the column header (`# size count type redop ... time algbw busbw ...`)",
                    ));
                }
            },
            Some(_) => table.skipped += 1,
            None => {}
        }
    }
    if table.rows.is_empty() {
        return Err(NcclError::NoRows { file: file.to_string() });
    }
    Ok(table)
}

/// A `#` line: the header, a `Rank` line, the name of the test, or other notes.
fn comment_line(
    file: &str,
    line: usize,
    comment: &str,
    in_place: bool,
    layout: &mut Option<Layout>,
    table: &mut Table,
) -> Result<(), NcclError> {
    let words: Vec<&str> = comment.split_whitespace().collect();
    if let Some(names) = header_names(comment) {
        if let Some(first) = layout {
            return Err(NcclError::line(
                file,
                line,
                format!(
                    "a second column header (the first is at line {}); accepted: the output of one all_reduce_perf run",
                    first.line
                ),
            ));
        }
        *layout = Some(Layout::new(file, line, names, in_place)?);
    } else if let ["Rank", n, ..] = words.as_slice()
        && let Ok(rank) = n.parse::<usize>()
    {
        table.ranks.push((rank, line));
    } else if let ["Collective", "test", "starting:", name, ..] = words.as_slice()
        && *name != "all_reduce_perf"
    {
        return Err(NcclError::line(
            file,
            line,
            format!("the output of {name}; accepted: the output of all_reduce_perf"),
        ));
    }
    Ok(())
}
