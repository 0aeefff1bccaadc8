//! `--format markdown` and `--format latex`: the CSV's columns and values
//! as a document's table.

use gcsim::export::{Digits, table_cell};

use super::{HEADER, gcsim, stdout_of};

const SWEEP: [&str; 9] = [
    "sweep", "--n", "20", "--s", "0..3", "--scheme", "crc,frc", "--trials", "2000",
];

fn with_format(format: &str) -> Vec<&str> {
    let mut args = SWEEP.to_vec();
    args.extend(["--format", format]);
    args
}

/// The cells of a Markdown table row, `\|` unescaped.
fn markdown_cells(line: &str) -> Vec<String> {
    let inner = line.strip_prefix("| ").and_then(|l| l.strip_suffix(" |")).expect(line);
    inner.split(" | ").map(|c| c.replace("\\|", "|")).collect()
}

#[test]
fn markdown_has_one_row_per_configuration_with_the_csv_values() {
    let csv = stdout_of(&with_format("csv"));
    let markdown = stdout_of(&with_format("markdown"));
    let mut lines = markdown.lines();
    assert_eq!(markdown_cells(lines.next().unwrap()).join(","), HEADER);
    let rule = lines.next().unwrap();
    assert!(rule.starts_with("|---|---:|"), "{rule}");
    assert_eq!(rule.matches('|').count(), HEADER.split(',').count() + 1);
    let rows: Vec<Vec<String>> = lines.map(markdown_cells).collect();
    let csv_rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // crc at s = 0..3 and frc at s = 0, 1, 3 (s + 1 divides 20).
    assert_eq!(rows.len(), 7);
    assert_eq!(rows.len(), csv_rows.len());
    for (row, csv_row) in rows.iter().zip(&csv_rows) {
        let expected: Vec<String> = csv_row.iter().map(|c| table_cell(c, &Digits::TABLE)).collect();
        assert_eq!(row, &expected);
    }
    assert_eq!(rows[0][..3], ["crc", "20", "0"]);
}

#[test]
fn latex_escapes_column_names_and_balances_braces() {
    let latex = stdout_of(&with_format("latex"));
    let lines: Vec<&str> = latex.lines().collect();
    assert!(lines[0].starts_with("\\begin{tabular}{lrrr"), "{}", lines[0]);
    assert_eq!(lines[1], "\\toprule");
    assert!(lines[2].contains(" & std\\_err & "), "{}", lines[2]);
    assert!(!lines[2].replace("\\_", "").contains('_'), "{}", lines[2]);
    assert_eq!(lines[3], "\\midrule");
    assert_eq!(lines[lines.len() - 2], "\\bottomrule");
    assert_eq!(lines[lines.len() - 1], "\\end{tabular}");
    assert_eq!(lines.len(), 4 + 7 + 2);
    let columns = HEADER.split(',').count();
    for row in &lines[4..lines.len() - 2] {
        assert!(row.ends_with(" \\\\"), "{row}");
        assert_eq!(row.matches(" & ").count(), columns - 1, "{row}");
    }
    let mut depth = 0i64;
    for c in latex.replace("\\{", "").replace("\\}", "").chars() {
        depth += match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        };
        assert!(depth >= 0, "a `}}` closes nothing in\n{latex}");
    }
    assert_eq!(depth, 0, "unbalanced braces in\n{latex}");
}

#[test]
fn the_extension_chooses_markdown_or_latex() {
    let dir = tempfile::tempdir().unwrap();
    for (file, first) in [("t.md", "| scheme | n |"), ("t.tex", "\\begin{tabular}")] {
        let path = dir.path().join(file);
        let mut args = SWEEP.to_vec();
        args.extend(["--columns", "scheme,n", "--out", path.to_str().unwrap()]);
        gcsim().args(&args).assert().success();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(first), "{file}: {text}");
    }
}
