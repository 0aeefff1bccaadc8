//! `gcsim scenario FILE --report`: the scenario's page as `README.md` and
//! a self-contained `index.html`.

use std::path::Path;

use gcsim::export::{Digits, table_cell};

use super::gcsim;

/// The study's CSV as its report table shows it.
fn csv_cells(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let mut cells = vec![reader.headers().unwrap().iter().map(String::from).collect::<Vec<_>>()];
    for record in reader.records() {
        cells.push(record.unwrap().iter().map(|c| table_cell(c, &Digits::TABLE)).collect());
    }
    cells
}

#[test]
fn a_scenario_report_holds_every_table_and_figure() {
    let out = tempfile::tempdir().unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/comm-tradeoff.toml");
    gcsim()
        .args(["scenario", scenario, "--trials", "2000", "-q", "--report", "--out-dir"])
        .arg(out.path())
        .assert()
        .success();
    let dir = out.path().join("comm-tradeoff");
    let markdown = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let config = std::fs::read_to_string(scenario).unwrap();

    assert!(markdown.starts_with("# comm-tradeoff\n"), "{markdown}");
    assert!(markdown.contains(&format!("gcsim {}", env!("CARGO_PKG_VERSION"))));
    assert!(markdown.contains("--trials 2000 --report"));
    assert!(markdown.contains(config.trim_end()));
    let figures: Vec<&str> = markdown
        .lines()
        .filter_map(|l| {
            l.strip_prefix("![")
                .and_then(|l| l.split_once("]("))
                .map(|(_, f)| f.trim_end_matches(')'))
        })
        .collect();
    assert_eq!(
        figures,
        ["dedicated-mean.png", "shared-mean.png", "dedicated-vs-shared-mean.png"]
    );
    for figure in &figures {
        assert!(dir.join(figure).is_file(), "{figure} is referenced but not written");
    }

    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("index.html is well-formed XHTML");
    let elements = |name: &'static str| doc.descendants().filter(move |n| n.has_tag_name(name));
    assert!(elements("code").any(|p| p.text().is_some_and(|t| t.contains("[[study]]"))));
    let images: Vec<&str> = elements("img").map(|i| i.attribute("src").unwrap()).collect();
    assert_eq!(images.len(), 3);
    for (src, figure) in images.iter().zip(&figures) {
        let png = std::fs::read(dir.join(figure)).unwrap();
        let data = src.strip_prefix("data:image/png;base64,").expect("a PNG embedded");
        assert_eq!(data.len(), png.len().div_ceil(3) * 4, "{figure}");
    }

    let tables: Vec<_> = elements("table").collect();
    assert_eq!(tables.len(), 2);
    for (table, label) in tables.iter().zip(["dedicated", "shared"]) {
        let rows: Vec<Vec<String>> = table
            .descendants()
            .filter(|n| n.has_tag_name("tr"))
            .map(|tr| {
                tr.children()
                    .filter(|c| c.is_element())
                    .map(|c| c.text().unwrap_or("").to_string())
                    .collect()
            })
            .collect();
        let csv = csv_cells(&dir.join(format!("{label}.csv")));
        assert!(csv.len() > 2, "{label}");
        assert_eq!(rows, csv, "{label}: the HTML table is not the CSV");
        let md_rows = markdown.lines().filter(|l| l.starts_with("| ")).count();
        assert!(md_rows >= csv.len(), "{label}");
    }
}

#[test]
fn without_report_no_page_is_written() {
    let out = tempfile::tempdir().unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/comm-tradeoff.toml");
    gcsim()
        .args(["scenario", scenario, "--trials", "500", "-q", "--out-dir"])
        .arg(out.path())
        .assert()
        .success();
    let dir = out.path().join("comm-tradeoff");
    assert!(dir.join("dedicated.csv").is_file());
    assert!(!dir.join("index.html").exists() && !dir.join("README.md").exists());
}
