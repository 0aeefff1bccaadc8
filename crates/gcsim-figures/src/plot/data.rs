//! `--plot-data`: every plotted value as a tidy CSV row, so that a figure
//! can be redrawn elsewhere (pgfplots, matplotlib, R): one row per drawn
//! point of each simulated, exact and reference line, with its shaded
//! interval, its segment (a new one after each gap) and the colour and
//! marker of its scheme. The rows come from the same [`layers`] the
//! renderer draws.

use std::io::Write;

use serde::Serialize;

use super::LineChart;
use super::layers::{LayerKind, layers, look};
use super::style::hex;
use gcsim::scheme::SchemeKind;

/// One plotted point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlotRow {
    /// The figure's file name.
    pub figure: String,
    /// The series as the legend names it (without " (inexact)"); `reference`
    /// for the reference line; `worker ID` in a trace heatmap.
    pub series: String,
    /// The scheme, which sets colour and marker; empty where none does.
    pub scheme: Option<SchemeKind>,
    /// `simulated`, `exact` (closed form), `reference`, or `cell` (heatmap).
    pub kind: &'static str,
    /// The connected piece of the line, from 0; a new one starts after
    /// each gap (a parameter value the scheme does not admit).
    pub segment: usize,
    /// Abscissa, in the unit of the x axis (s, m, k, a time; the step id
    /// in a heatmap).
    pub x: f64,
    /// Ordinate, in the unit of the y axis (time / step median in a heatmap).
    pub y: f64,
    /// Lower end of the shaded 95% interval at x, where the figure shades one.
    pub y_lo: Option<f64>,
    /// Upper end of that interval.
    pub y_hi: Option<f64>,
    /// Whether the strategy's update is inexact (drawn hollow and dotted).
    pub inexact: bool,
    /// Colour as `#RRGGBB`.
    pub color: String,
    /// Marker of the simulated points (`circle`, `square`, ...); empty for
    /// lines drawn without markers.
    pub marker: &'static str,
}

/// Every point `chart` draws, as rows naming `figure`.
pub fn chart_rows(chart: &LineChart, figure: &str) -> Vec<PlotRow> {
    let mut rows = Vec::new();
    for layer in layers(chart) {
        let (series, scheme, inexact, color, marker) = match layer.series {
            Some(i) => {
                let s = &chart.series[i];
                let l = look(chart, i);
                let marker = match layer.kind {
                    LayerKind::Simulated if l.markers => l.marker.name(),
                    _ => "",
                };
                (s.label.clone(), Some(s.scheme), s.inexact, hex(l.color), marker)
            }
            None => ("reference".to_string(), None, false, hex(super::line::REFERENCE), ""),
        };
        for p in &layer.points {
            rows.push(PlotRow {
                figure: figure.to_string(),
                series: series.clone(),
                scheme,
                kind: layer.kind.name(),
                segment: layer.segment,
                x: p.x,
                y: p.y,
                y_lo: p.band.map(|b| b.0),
                y_hi: p.band.map(|b| b.1),
                inexact,
                color: color.clone(),
                marker,
            });
        }
    }
    rows
}

/// Writes `rows` as CSV with a header.
pub fn write_rows(rows: &[PlotRow], out: impl Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for row in rows {
        w.serialize(row).map_err(std::io::Error::other)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{Point, Series};

    #[test]
    fn rows_carry_segments_bands_and_the_scheme_look() {
        let point = |x: f64| Point {
            x,
            y: 2.0 * x,
            band: Some((x, 3.0 * x)),
        };
        let chart = LineChart {
            title: String::new(),
            caption: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            series: vec![
                Series {
                    label: "crc".into(),
                    scheme: SchemeKind::Crc,
                    points: [1.0, 2.0, 3.0].map(point).to_vec(),
                    exact: vec![],
                    flat: false,
                    inexact: false,
                },
                Series {
                    label: "ignore".into(),
                    scheme: SchemeKind::Ignore,
                    points: [1.0, 3.0].map(point).to_vec(),
                    exact: vec![(1.0, 2.0)],
                    flat: false,
                    inexact: true,
                },
            ],
            reference_y: Some(1.0),
            log_y: false,
            y_floor: None,
            integer_x: true,
            gaps: true,
        };
        let rows = chart_rows(&chart, "f.svg");
        let mut csv = Vec::new();
        write_rows(&rows, &mut csv).unwrap();
        let text = String::from_utf8(csv).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "figure,series,scheme,kind,segment,x,y,y_lo,y_hi,inexact,color,marker"
        );
        assert_eq!(
            lines[1],
            "f.svg,crc,crc,simulated,0,1.0,2.0,1.0,3.0,false,#0072B2,circle"
        );
        assert_eq!(
            lines[5],
            "f.svg,ignore,ignore,simulated,1,3.0,6.0,3.0,9.0,true,#CC79A7,diamond"
        );
        assert_eq!(lines[6], "f.svg,ignore,ignore,exact,0,1.0,2.0,,,true,#CC79A7,");
        assert_eq!(lines[7], "f.svg,reference,,reference,0,1.0,1.0,,,false,#666666,");
        assert_eq!(lines.len(), 9);
    }
}
