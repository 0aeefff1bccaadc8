//! Figures a paper can use: every format valid at the size asked for, one
//! colour per scheme whatever the figure, gaps where a scheme admits no
//! value, inexact strategies marked, one tick format per axis, and the
//! plotted series exported exactly as drawn.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use gcsim::scheme::SchemeKind;
use gcsim_figures::plot::style::{hex, scheme_style, tint};
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// `sweep --n N --s S --scheme SCHEMES --trials 2000 --format csv --out
/// <dir>/rows.csv` plus `extra`; returns the rows' CSV.
fn sweep(dir: &Path, n: &str, s: &str, schemes: &str, extra: &[&str]) -> String {
    let rows = dir.join("rows.csv");
    gcsim()
        .args([
            "sweep", "--n", n, "--s", s, "--scheme", schemes, "--trials", "2000", "-q",
        ])
        .args(["--format", "csv", "--out"])
        .arg(&rows)
        .args(extra)
        .assert()
        .success();
    std::fs::read_to_string(rows).unwrap()
}

/// The rows of a `--plot-data` file, as maps from column to value.
fn data(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header.join(","),
        "figure,series,scheme,kind,segment,x,y,y_lo,y_hi,inexact,color,marker"
    );
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Every element of an SVG (which must parse as XML) as (tag, attributes).
fn svg_elements(path: &Path) -> Vec<(String, BTreeMap<String, String>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: not XML: {e}", path.display()));
    doc.descendants()
        .filter(|n| n.is_element())
        .map(|n| {
            let attrs = n
                .attributes()
                .map(|a| (a.name().to_string(), a.value().to_string()))
                .collect();
            (n.tag_name().name().to_string(), attrs)
        })
        .collect()
}

fn texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

fn count(elements: &[(String, BTreeMap<String, String>)], tag: &str, attrs: &[(&str, &str)]) -> usize {
    elements
        .iter()
        .filter(|(t, a)| t == tag && attrs.iter().all(|(k, v)| a.get(*k).map(String::as_str) == Some(*v)))
        .count()
}

fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    (frame.width, frame.height)
}

/// PNG, SVG and PDF, each by its extension and at the size asked for.
#[test]
fn every_format_is_valid_at_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (png, svg, pdf) = (d.join("f.png"), d.join("f.svg"), d.join("f.pdf"));
    let size = ["--plot-size", "6×4"];
    sweep(
        d,
        "20",
        "0..4",
        "uncoded,crc",
        &[&["--plot", png.to_str().unwrap(), "--dpi", "150"], &size[..]].concat(),
    );
    assert_eq!(png_size(&png), (900, 600));
    sweep(
        d,
        "20",
        "0..4",
        "uncoded,crc",
        &[&["--plot", svg.to_str().unwrap()], &size[..]].concat(),
    );
    let root = &svg_elements(&svg)[0];
    assert_eq!(root.0, "svg");
    assert_eq!((root.1["width"].as_str(), root.1["height"].as_str()), ("6in", "4in"));
    sweep(
        d,
        "20",
        "0..4",
        "uncoded,crc",
        &[&["--plot", pdf.to_str().unwrap()], &size[..]].concat(),
    );
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF-"), "no PDF header");
    let text = String::from_utf8_lossy(&bytes);
    let pages = text.matches("/Type /Page").count() - text.matches("/Type /Pages").count();
    assert_eq!(pages, 1, "pages");
    assert!(text.contains("/Count 1"));
    assert!(text.contains("/MediaBox [0 0 432 288]"), "a 6x4-inch page");
    assert!(text.trim_end().ends_with("%%EOF"));
    // The default PNG keeps its 1100 x 720 pixels; `run` draws PDF too.
    let tail = d.join("tail.pdf");
    gcsim()
        .args([
            "run", "--n", "20", "--scheme", "crc", "--s", "3", "--trials", "3000", "-q", "--format", "csv",
        ])
        .arg("--plot")
        .arg(&tail)
        .assert()
        .success();
    assert!(std::fs::read(&tail).unwrap().starts_with(b"%PDF-"));
    let default = d.join("d.png");
    sweep(d, "20", "0..2", "crc", &["--plot", default.to_str().unwrap()]);
    assert_eq!(png_size(&default), gcsim_figures::plot::SIZE);
}

/// crc is blue whether it is the first series or the fourth, in the data
/// and in the drawing; frc's line breaks at the s it does not admit; ignore
/// is hollow, dotted and "(inexact)"; and the markers drawn are the points
/// exported.
#[test]
fn a_scheme_looks_the_same_in_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (svg_a, data_a) = (d.join("a.svg"), d.join("a.csv"));
    let (svg_b, data_b) = (d.join("b.svg"), d.join("b.csv"));
    let rows = sweep(
        d,
        "20",
        "0..4",
        "uncoded,ignore,frc,crc",
        &[
            "--plot",
            svg_a.to_str().unwrap(),
            "--plot-data",
            data_a.to_str().unwrap(),
        ],
    );
    sweep(
        d,
        "20",
        "1..3",
        "crc,uncoded",
        &[
            "--plot",
            svg_b.to_str().unwrap(),
            "--plot-data",
            data_b.to_str().unwrap(),
        ],
    );
    let colour_of = |rows: &[BTreeMap<String, String>], scheme: &str| {
        let colours: std::collections::BTreeSet<&str> = rows
            .iter()
            .filter(|r| r["scheme"] == scheme)
            .map(|r| r["color"].as_str())
            .collect();
        assert_eq!(colours.len(), 1, "{scheme}: {colours:?}");
        colours.into_iter().next().unwrap().to_string()
    };
    let (a, b) = (data(&data_a), data(&data_b));
    let crc = colour_of(&a, "crc");
    assert_eq!(crc, colour_of(&b, "crc"));
    assert_eq!(crc, hex(scheme_style(SchemeKind::Crc).color));
    assert_ne!(crc, colour_of(&a, "frc"));
    let (ea, eb) = (svg_elements(&svg_a), svg_elements(&svg_b));
    // crc's markers: one per exported simulated point, and the legend's.
    let simulated = |rows: &[BTreeMap<String, String>], scheme: &str| {
        rows.iter()
            .filter(|r| r["scheme"] == scheme && r["kind"] == "simulated")
            .count()
    };
    assert_eq!(simulated(&a, "crc"), 5);
    assert_eq!(count(&ea, "circle", &[("fill", &crc)]), simulated(&a, "crc") + 1);
    assert_eq!(count(&eb, "circle", &[("fill", &crc)]), simulated(&b, "crc") + 1);

    // The exported values are the sweep's: crc's speedup at each s.
    let mut reader = csv::Reader::from_reader(rows.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for r in reader.records().map(Result::unwrap) {
        let (scheme, s, speedup) = (&r[col("scheme")], &r[col("s")], &r[col("speedup")]);
        if scheme != "crc" {
            continue;
        }
        let plotted = a
            .iter()
            .find(|p| {
                p["scheme"] == "crc"
                    && p["kind"] == "simulated"
                    && p["x"].parse::<f64>().unwrap() == s.parse::<f64>().unwrap()
            })
            .unwrap_or_else(|| panic!("crc at s={s} not exported"));
        assert_eq!(plotted["y"].parse::<f64>().unwrap(), speedup.parse::<f64>().unwrap());
    }

    // frc on n = 20 admits s = 0, 1, 3, 4: two pieces, 0-1 and 3-4.
    let frc: Vec<(String, String)> = a
        .iter()
        .filter(|r| r["scheme"] == "frc" && r["kind"] == "simulated")
        .map(|r| (r["x"].clone(), r["segment"].clone()))
        .collect();
    let pairs = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(x, s)| (x.to_string(), s.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(frc, pairs(&[("0.0", "0"), ("1.0", "0"), ("3.0", "1"), ("4.0", "1")]));
    let frc_line = hex(tint(scheme_style(SchemeKind::Frc).color, 0.45));
    // Two lines in the plot (not one across s = 2) and the legend's.
    assert_eq!(count(&ea, "polyline", &[("stroke", &frc_line)]), 3);

    // ignore: hollow markers (outlines, never filled), marked inexact.
    let ignore = hex(scheme_style(SchemeKind::Ignore).color);
    // (Its band, a pale polygon of the same colour, is not a marker.)
    let opaque = ea
        .iter()
        .filter(|(t, at)| t == "polygon" && at.get("fill") == Some(&ignore))
        .filter(|(_, at)| at.get("opacity").is_none_or(|o| o.parse::<f64>().unwrap() > 0.5))
        .count();
    assert_eq!(opaque, 0);
    let outlines = ea
        .iter()
        .filter(|(t, at)| {
            t == "polyline" && at["stroke"] == ignore && at["points"].split(' ').filter(|p| !p.is_empty()).count() == 5
        })
        .count();
    assert_eq!(outlines, simulated(&a, "ignore") + 1);
    assert!(
        a.iter()
            .filter(|r| r["scheme"] == "ignore")
            .all(|r| r["inexact"] == "true")
    );
    assert!(texts(&svg_a).contains(&"ignore (inexact)".to_string()));
    assert!(!texts(&svg_a).contains(&"crc (inexact)".to_string()));
}

/// The survival plot's log axis: every tick as a power of ten (no
/// `0.001` beside `1e-4`); the data has both curves and their kinds.
#[test]
fn a_log_axis_has_one_tick_format_and_survival_curves_are_exported() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, csv) = (dir.path().join("t.svg"), dir.path().join("t.csv"));
    gcsim()
        .args([
            "run", "--n", "30", "--scheme", "crc", "--s", "4", "--trials", "20000", "-q", "--format", "csv",
        ])
        .arg("--plot")
        .arg(&svg)
        .arg("--plot-data")
        .arg(&csv)
        .assert()
        .success();
    let labels = texts(&svg);
    for decade in ["10⁰", "10⁻¹", "10⁻²", "10⁻³", "10⁻⁴"] {
        assert!(labels.iter().any(|l| l == decade), "no tick {decade}: {labels:?}");
    }
    assert!(!labels.iter().any(|l| l == "0.001" || l == "1e-4"), "{labels:?}");
    let rows = data(&csv);
    for (scheme, kind) in [
        ("crc", "simulated"),
        ("crc", "exact"),
        ("uncoded", "simulated"),
        ("uncoded", "exact"),
    ] {
        assert!(
            rows.iter().any(|r| r["scheme"] == scheme && r["kind"] == kind),
            "{scheme} {kind}"
        );
    }
}

/// `--no-title`, `--font-size`, `--log-y` each change the drawing; the
/// bands of a mean figure are exported.
#[test]
fn the_style_flags_reach_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let svg = d.join("f.svg");
    // frc's speedup spans a decade (1 to about 50): log ticks are 10⁰, 10¹.
    let plain = |extra: &[&str]| {
        let args = [
            &[
                "--plot",
                svg.to_str().unwrap(),
                "--dist",
                "exp:rate=1,p_slow=0.05,slowdown=8",
            ],
            extra,
        ]
        .concat();
        sweep(d, "100", "0..9", "uncoded,frc", &args);
        (texts(&svg), std::fs::read_to_string(&svg).unwrap())
    };
    let (labels, text) = plain(&[]);
    assert!(labels.iter().any(|l| l.starts_with("Speedup over uncoded")));
    // 11 pt at 144 units per inch: 22 units.
    assert!(text.contains("font-size=\"22\""));
    assert!(!labels.iter().any(|l| l == "10⁰"));
    let (labels, text) = plain(&["--no-title", "--font-size", "9", "--log-y"]);
    assert!(
        !labels.iter().any(|l| l.starts_with("Speedup over uncoded")),
        "{labels:?}"
    );
    assert!(text.contains("font-size=\"18\"") && !text.contains("font-size=\"22\""));
    assert!(labels.iter().any(|l| l == "10⁰"), "{labels:?}");
    let csv = d.join("mean.csv");
    sweep(
        d,
        "20",
        "0..4",
        "uncoded,crc",
        &[
            "--plot",
            svg.to_str().unwrap(),
            "--plot-metric",
            "mean",
            "--plot-data",
            csv.to_str().unwrap(),
        ],
    );
    let rows = data(&csv);
    let crc: Vec<_> = rows
        .iter()
        .filter(|r| r["scheme"] == "crc" && r["kind"] == "simulated")
        .collect();
    assert_eq!(crc.len(), 5);
    for r in crc {
        let (lo, y, hi) = (&r["y_lo"], &r["y"], &r["y_hi"]);
        let (lo, y, hi): (f64, f64, f64) = (lo.parse().unwrap(), y.parse().unwrap(), hi.parse().unwrap());
        assert!(lo < y && y < hi, "{lo} {y} {hi}");
    }
}

/// The heatmap's data: one cell per worker and step.
#[test]
fn the_trace_heatmap_exports_its_cells() {
    let dir = tempfile::tempdir().unwrap();
    let (pdf, csv) = (dir.path().join("h.pdf"), dir.path().join("h.csv"));
    gcsim()
        .args(["trace", "data/trace-llm-8w.csv", "-q", "--plot"])
        .arg(&pdf)
        .arg("--plot-data")
        .arg(&csv)
        .args(["--plot-size", "5x3", "--no-title"])
        .assert()
        .success();
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
    let rows = data(&csv);
    assert_eq!(rows.len(), 8 * 32);
    assert!(
        rows.iter()
            .all(|r| r["kind"] == "cell" && r["y"].parse::<f64>().unwrap() > 0.0)
    );
}

#[test]
fn bad_figure_flags_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (png, svg, out) = (p("f.png"), p("f.svg"), p("o.csv"));
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--plot".into(), p("f.jpg")],
            "the figure must be a .png, .svg or .pdf file".into(),
        ),
        (
            vec!["--plot".into(), png.clone(), "--plot-size".into(), "6".into()],
            "invalid value '6' for '--plot-size <WxH>': `6` is not WxH in inches; accepted: e.g. 6x4 or 6×4".into(),
        ),
        (
            vec!["--plot".into(), png.clone(), "--plot-size".into(), "100x4".into()],
            "`100x4` is out of range; accepted: width and height from 1.5 to 50 inches".into(),
        ),
        (
            vec!["--plot".into(), png.clone(), "--dpi".into(), "10".into()],
            "invalid value '10' for '--dpi <DPI>': `10` is out of range; accepted: a whole number from 30 to 1200"
                .into(),
        ),
        (
            vec!["--plot".into(), svg.clone(), "--dpi".into(), "300".into()],
            "--dpi 300 sets the pixels of a PNG; --plot".into(),
        ),
        (
            vec!["--plot".into(), png.clone(), "--font-size".into(), "x".into()],
            "`x` is not a number; accepted: a number of points from 4 to 40".into(),
        ),
        (
            vec!["--plot".into(), png.clone(), "--font-size".into(), "80".into()],
            "`80` is out of range; accepted: a number of points from 4 to 40".into(),
        ),
        (
            vec!["--plot-size".into(), "6x4".into()],
            "--plot-size shapes a figure: give --plot FILE too".into(),
        ),
        (
            vec!["--log-y".into()],
            "--log-y shapes a figure: give --plot FILE too".into(),
        ),
        (
            vec!["--plot".into(), png.clone(), "--plot-data".into(), p("d.txt")],
            "the series are written as CSV; give a .csv file".into(),
        ),
        (
            vec![
                "--plot".into(),
                png.clone(),
                "--plot-data".into(),
                out.clone(),
                "--out".into(),
                out.clone(),
            ],
            "--out and --plot-data both name".into(),
        ),
        (
            vec![
                "--plot".into(),
                png.clone(),
                "--plot-size".into(),
                "50x50".into(),
                "--dpi".into(),
                "1200".into(),
            ],
            "--dpi 1200 with --plot-size 50x50 makes a 60000x60000-pixel PNG".into(),
        ),
    ];
    for (extra, expected) in cases {
        let out = gcsim()
            .args(["sweep", "--n", "10", "--s", "0..2", "--trials", "100"])
            .args(&extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&expected), "{extra:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            !Path::new(&png).exists() && !Path::new(&svg).exists(),
            "a figure was written"
        );
    }
    // Scenario keys, each error naming its key.
    let toml = dir.path().join("s.toml");
    let base = "name = \"x\"\nn = 10\ntrials = 100\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\"]\ns = 1\n";
    for (figure, expected) in [
        (
            "{ file = \"a.png\", size = \"6\" }",
            "s.toml:8: key `size`: `6` is not WxH in inches",
        ),
        (
            "{ file = \"a.svg\", dpi = 300 }",
            "s.toml:8: key `dpi`: sets the pixels of a PNG",
        ),
        (
            "{ file = \"a.png\", font_size = 1 }",
            "s.toml:8: key `font_size`: font_size 1 is out of range",
        ),
        ("{ file = \"a.jpg\" }", "must be a plain .png, .svg or .pdf file name"),
    ] {
        std::fs::write(&toml, format!("{base}figures = [{figure}]\n")).unwrap();
        gcsim()
            .arg("scenario")
            .arg(&toml)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
}

/// A scenario writes each figure's series beside it, and takes the style keys.
#[test]
fn scenario_figures_take_style_keys_and_write_their_series() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("s.toml");
    std::fs::write(
        &toml,
        "name = \"x\"\nn = 12\ntrials = 500\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\", \"frc\"]\ns = \"0..5\"\n\
         figures = [{ file = \"a.pdf\", size = \"3.5x2.5\", font_size = 7, title = false, log_y = true },\n\
         { file = \"a.png\", size = \"4x3\", dpi = 200, metric = \"mean\" }]\n",
    )
    .unwrap();
    gcsim()
        .args(["scenario", "-q", "--out-dir"])
        .arg(dir.path())
        .arg(&toml)
        .assert()
        .success();
    let out = dir.path().join("x");
    let bytes = std::fs::read(out.join("a.pdf")).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("/MediaBox [0 0 252 180]"));
    assert_eq!(png_size(&out.join("a.png")), (800, 600));
    let rows = data(&out.join("a.png.csv"));
    assert!(
        rows.iter().any(|r| r["scheme"] == "frc" && r["segment"] == "1"),
        "frc breaks at s=4"
    );
    assert!(rows.iter().all(|r| r["figure"] == "a.png"));
    assert!(!data(&out.join("a.pdf.csv")).is_empty());
}
