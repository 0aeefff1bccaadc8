//! A result as a Markdown table or a LaTeX `tabular`, for a document, as
//! hyperfine's `--export-markdown`: the columns are the CSV's (read from
//! the CSV the result writes, so they never drift from the row type), the
//! values as the terminal table shows them ([`table_cell`]).

use std::io::{self, Write};

use super::{Columns, Digits, Export, table_cell};

/// The header and rows of `report`'s CSV (only `columns` where given),
/// the values as a table with `digits` shows them.
pub fn markup_cells<R: Export + ?Sized>(
    report: &R,
    columns: Option<&Columns>,
    digits: &Digits,
) -> io::Result<Vec<Vec<String>>> {
    let mut cells = match columns {
        Some(c) => c.cells(report)?,
        None => {
            let mut csv = Vec::new();
            report.write_csv(&mut csv)?;
            let mut reader = csv::Reader::from_reader(csv.as_slice());
            let header: Vec<String> = reader
                .headers()
                .map_err(io::Error::other)?
                .iter()
                .map(String::from)
                .collect();
            let mut cells = vec![header];
            for record in reader.records() {
                cells.push(record.map_err(io::Error::other)?.iter().map(String::from).collect());
            }
            cells
        }
    };
    for row in cells.iter_mut().skip(1) {
        for cell in row.iter_mut() {
            *cell = table_cell(cell, digits);
        }
    }
    Ok(cells)
}

/// Whether column `i` holds numbers (or `-`, `inf`) in every row: such a
/// column is aligned right.
fn right_aligned(cells: &[Vec<String>], i: usize) -> bool {
    cells[1..].iter().all(|row| {
        row.get(i)
            .is_some_and(|c| matches!(c.as_str(), "-" | "inf" | "-inf") || c.parse::<f64>().is_ok())
    })
}

/// A Markdown table: a header row, an alignment row (`---:` for numbers)
/// and one row per result row; `|` in a cell is escaped.
pub fn write_markdown(cells: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let Some(header) = cells.first() else {
        return Ok(());
    };
    let line = |row: &[String]| {
        let escaped: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |", escaped.join(" | "))
    };
    writeln!(out, "{}", line(header))?;
    let rule: Vec<&str> = (0..header.len())
        .map(|i| if right_aligned(cells, i) { "---:" } else { "---" })
        .collect();
    writeln!(out, "|{}|", rule.join("|"))?;
    for row in &cells[1..] {
        writeln!(out, "{}", line(row))?;
    }
    Ok(())
}

/// `text` with LaTeX's special characters escaped, so that it prints as
/// written in a `tabular`.
pub(crate) fn latex_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => escaped.push_str("\\textbackslash{}"),
            '~' => escaped.push_str("\\textasciitilde{}"),
            '^' => escaped.push_str("\\textasciicircum{}"),
            '_' | '%' | '&' | '#' | '$' | '{' | '}' => {
                escaped.push('\\');
                escaped.push(c);
            }
            c => escaped.push(c),
        }
    }
    escaped
}

/// A LaTeX `tabular` with booktabs rules (`\toprule`, `\midrule`,
/// `\bottomrule`; `\usepackage{booktabs}`), numbers aligned right.
pub(crate) fn write_latex(cells: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let Some(header) = cells.first() else {
        return Ok(());
    };
    let spec: String = (0..header.len())
        .map(|i| if right_aligned(cells, i) { 'r' } else { 'l' })
        .collect();
    let line = |row: &[String]| {
        let escaped: Vec<String> = row.iter().map(|c| latex_escape(c)).collect();
        format!("{} \\\\", escaped.join(" & "))
    };
    writeln!(out, "\\begin{{tabular}}{{{spec}}}")?;
    writeln!(out, "\\toprule")?;
    writeln!(out, "{}", line(header))?;
    writeln!(out, "\\midrule")?;
    for row in &cells[1..] {
        writeln!(out, "{}", line(row))?;
    }
    writeln!(out, "\\bottomrule")?;
    writeln!(out, "\\end{{tabular}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells() -> Vec<Vec<String>> {
        [
            ["scheme", "std_err", "note"],
            ["crc", "0.5000", "a|b"],
            ["frc", "-", "50% & #1"],
        ]
        .map(|r| r.map(String::from).to_vec())
        .to_vec()
    }

    #[test]
    fn markdown_aligns_numbers_right_and_escapes_bars() {
        let mut out = Vec::new();
        write_markdown(&cells(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "| scheme | std_err | note |\n|---|---:|---|\n| crc | 0.5000 | a\\|b |\n| frc | - | 50% & #1 |\n"
        );
    }

    #[test]
    fn latex_escapes_and_rules() {
        assert_eq!(
            latex_escape("std_err 5% a&b #1 $x$ {y} \\"),
            "std\\_err 5\\% a\\&b \\#1 \\$x\\$ \\{y\\} \\textbackslash{}"
        );
        let mut out = Vec::new();
        write_latex(&cells(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\\begin{tabular}{lrl}\n\\toprule\nscheme & std\\_err & note \\\\\n\\midrule\ncrc & 0.5000 & a|b \\\\\nfrc & - & 50\\% \\& \\#1 \\\\\n\\bottomrule\n\\end{tabular}\n"
        );
    }
}
