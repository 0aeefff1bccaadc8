//! Every example of the README and of the user guide (`docs/guide/src`)
//! runs, and prints what the page shows: the `console` blocks are trycmd
//! cases (`$ gcsim …` and its output, `? 2` for an exit status). A page's
//! inputs are in `<page>.in/`; a page whose commands write files has a
//! `<page>.out/` (with a `.keep`), so that they run in a scratch copy.
//!
//! `TRYCMD=overwrite cargo test --release --test it guide` rewrites the
//! pages' outputs after a deliberate change; `-- guide trycmd=tutorial`
//! runs one page.

#[test]
fn guide_and_readme_examples_run_as_shown() {
    trycmd::TestCases::new()
        .register_bin("gcsim", trycmd::cargo::cargo_bin("gcsim"))
        // `--help` wraps at the terminal's width, which COLUMNS sets.
        .env("COLUMNS", "100")
        .case("README.md")
        .case("docs/guide/src/*.md")
        .case("docs/guide/src/*/*.md");
}

/// The guide's table of output columns names every column a `run` row
/// has, the cost view's included: a column added to `Row` must be
/// documented there (`docs/guide/src/output.md`).
#[test]
fn the_guide_documents_every_output_column() {
    let page = std::fs::read_to_string("docs/guide/src/output.md").unwrap();
    // The first cell of each table row: one column name or several.
    let documented: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .flat_map(|cell| cell.split(", "))
        .map(|name| name.trim_matches('`'))
        .collect();
    let out = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args(["run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "100"])
        .args([
            "--time-unit",
            "s",
            "--iterations-per-run",
            "1000",
            "--gpu-hour-price",
            "2",
        ])
        .args(["--dataset-size", "1e9", "--gradient-size", "1e6", "--format", "csv"])
        .args(["--aggregation", "ring", "--bandwidth", "1GB/s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let header = csv.lines().next().unwrap();
    let missing: Vec<&str> = header.split(',').filter(|c| !documented.contains(c)).collect();
    assert!(header.split(',').count() > 40, "{header}");
    assert!(missing.is_empty(), "output.md does not document: {missing:?}");
}

/// The LaTeX output the guide shows (a `latex` block, which trycmd cannot
/// compare: it turns backslashes into slashes) is what the command prints.
#[test]
fn the_guide_s_latex_example_is_the_output() {
    let page = std::fs::read_to_string("docs/guide/src/output.md").unwrap();
    let start = page.find("```latex\n").expect("the latex block") + "```latex\n".len();
    let shown = &page[start..start + page[start..].find("```").unwrap()];
    let out = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args(["sweep", "--n", "20", "--s", "0..2", "--trials", "5000"])
        .args(["--columns", "scheme,s,mean,std_err", "--format", "latex"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), shown);
}
