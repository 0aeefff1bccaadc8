//! What a line chart draws, as data: each series cut into connected
//! segments, flat series spread across the data's x range, and every value
//! the axis cannot show (non-finite; non-positive on a log axis; below the
//! chart's floor) left out.
//! The renderer and the `--plot-data` export both read these layers.
//!
//! A sweep's grid is the set of x values any series has. A series is
//! broken between two of its points when the grid has a value between
//! them: frc on n = 100 admits s = 0, 1, 3, 4, 9, so its line has the
//! pieces 0–1, 3–4 and 9, and nothing is drawn where no value exists.

use plotters::style::RGBColor;

use super::style::{Marker, scheme_style, tint};
use super::{LineChart, Point};

/// What a layer shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// Monte Carlo values (with their band, where the figure shades one).
    Simulated,
    /// The closed form.
    Exact,
    /// The reference line (speedup 1).
    Reference,
}

impl LayerKind {
    /// Its name in `--plot-data`.
    pub fn name(self) -> &'static str {
        match self {
            LayerKind::Simulated => "simulated",
            LayerKind::Exact => "exact",
            LayerKind::Reference => "reference",
        }
    }
}

/// One connected piece of a series, drawn as one line.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// The series (index into the chart's), None for the reference line.
    pub series: Option<usize>,
    /// What it shows.
    pub kind: LayerKind,
    /// The piece's number within its series and kind, from 0; a new one
    /// starts after each gap.
    pub segment: usize,
    /// The points, by x; exact points have no band.
    pub points: Vec<Point>,
}

/// How one series looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// The scheme's colour.
    pub color: RGBColor,
    /// The line between simulated markers: pale where markers or an exact
    /// curve carry the full colour, so that the exact curve shows on it.
    pub line: RGBColor,
    /// The marker (the scheme's, or the next one for a second series of
    /// the same scheme in one figure).
    pub marker: Marker,
    /// Whether simulated points are drawn as markers (not when they are a
    /// dense curve, nor on a flat line).
    pub markers: bool,
    /// Hollow markers and a dotted line: an inexact strategy.
    pub inexact: bool,
}

/// Most simulated points a series may have and still get markers.
pub const MAX_MARKERS: usize = 60;

/// How much a connecting line is paled towards white.
const PALE: f64 = 0.45;

/// The look of series `i` of `chart`.
pub fn look(chart: &LineChart, i: usize) -> Look {
    let s = &chart.series[i];
    let base = scheme_style(s.scheme);
    let variant = chart.series[..i].iter().filter(|o| o.scheme == s.scheme).count();
    let start = Marker::ALL.iter().position(|&m| m == base.marker).unwrap_or(0);
    let marker = Marker::ALL[(start + variant) % Marker::ALL.len()];
    let markers = !s.flat && s.points.len() <= MAX_MARKERS;
    let pale = !s.inexact && (markers || !s.exact.is_empty());
    Look {
        color: base.color,
        line: if pale { tint(base.color, PALE) } else { base.color },
        marker,
        markers,
        inexact: s.inexact,
    }
}

fn shown(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// `points` (sorted by x) cut wherever `gap` says two neighbours have a
/// value of x between them at which the series has no point.
fn segments(points: Vec<Point>, gap: &dyn Fn(f64, f64) -> bool) -> Vec<Vec<Point>> {
    let mut out = Vec::new();
    let mut piece: Vec<Point> = Vec::new();
    for p in points {
        if let Some(last) = piece.last()
            && gap(last.x, p.x)
        {
            out.push(std::mem::take(&mut piece));
        }
        piece.push(p);
    }
    out.push(piece);
    out
}

/// The chart's layers: per series its simulated then its exact segments,
/// then the reference line.
pub fn layers(chart: &LineChart) -> Vec<Layer> {
    let log = chart.log_y;
    let floor = chart.y_floor.unwrap_or(f64::NEG_INFINITY);
    let keep = |p: &Point| shown(p.x, false) && shown(p.y, log) && p.y >= floor;
    let band = |p: Point| Point {
        band: p.band.filter(|b| shown(b.0, log) && shown(b.1, log)),
        ..p
    };
    let cleaned: Vec<(Vec<Point>, Vec<Point>)> = chart
        .series
        .iter()
        .map(|s| {
            let mut sim: Vec<Point> = s.points.iter().copied().filter(keep).map(band).collect();
            let mut exact: Vec<Point> = s
                .exact
                .iter()
                .map(|&(x, y)| Point { x, y, band: None })
                .filter(keep)
                .collect();
            sim.sort_by(|a, b| a.x.total_cmp(&b.x));
            exact.sort_by(|a, b| a.x.total_cmp(&b.x));
            (sim, exact)
        })
        .collect();
    // The x range of the data: of the series that vary with x, else of all.
    let range = |flat: Option<bool>| {
        chart
            .series
            .iter()
            .zip(&cleaned)
            .filter(|(s, _)| flat.is_none_or(|f| s.flat == f))
            .flat_map(|(_, (sim, exact))| sim.iter().chain(exact).map(|p| p.x))
            .fold(None, |acc: Option<(f64, f64)>, x| {
                Some(acc.map_or((x, x), |(a, b)| (a.min(x), b.max(x))))
            })
    };
    let x_range = range(Some(false)).or_else(|| range(None));
    let mut grid: Vec<f64> = chart
        .series
        .iter()
        .zip(&cleaned)
        .filter(|(s, _)| !s.flat)
        .flat_map(|(_, (sim, exact))| sim.iter().chain(exact).map(|p| p.x))
        .collect();
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    let gap = |a: f64, b: f64| chart.gaps && grid.partition_point(|&g| g <= a) < grid.partition_point(|&g| g < b);

    let mut out = Vec::new();
    for (i, (s, (sim, exact))) in chart.series.iter().zip(cleaned).enumerate() {
        for (kind, points) in [(LayerKind::Simulated, sim), (LayerKind::Exact, exact)] {
            if points.is_empty() {
                continue;
            }
            if s.flat {
                let (x0, x1) = x_range.unwrap_or((points[0].x, points[0].x));
                let p = points[0];
                let spread = if x1 > x0 {
                    vec![Point { x: x0, ..p }, Point { x: x1, ..p }]
                } else {
                    vec![p]
                };
                out.push(Layer {
                    series: Some(i),
                    kind,
                    segment: 0,
                    points: spread,
                });
                continue;
            }
            out.extend(
                segments(points, &gap)
                    .into_iter()
                    .enumerate()
                    .map(|(segment, points)| Layer {
                        series: Some(i),
                        kind,
                        segment,
                        points,
                    }),
            );
        }
    }
    if let (Some(y), Some((x0, x1))) = (chart.reference_y.filter(|&y| shown(y, log)), x_range) {
        let p = |x| Point { x, y, band: None };
        out.push(Layer {
            series: None,
            kind: LayerKind::Reference,
            segment: 0,
            points: vec![p(x0), p(x1)],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::Series;
    use gcsim::scheme::SchemeKind;

    fn series(scheme: SchemeKind, xs: &[f64]) -> Series {
        Series {
            label: scheme.to_string(),
            scheme,
            points: xs
                .iter()
                .map(|&x| Point {
                    x,
                    y: x + 1.0,
                    band: None,
                })
                .collect(),
            exact: xs.iter().map(|&x| (x, x + 1.0)).collect(),
            flat: false,
            inexact: false,
        }
    }

    fn chart(series: Vec<Series>) -> LineChart {
        LineChart {
            title: String::new(),
            caption: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            series,
            reference_y: Some(1.0),
            log_y: false,
            y_floor: None,
            integer_x: true,
            gaps: true,
        }
    }

    fn pieces(layers: &[Layer], series: usize, kind: LayerKind) -> Vec<Vec<f64>> {
        layers
            .iter()
            .filter(|l| l.series == Some(series) && l.kind == kind)
            .map(|l| l.points.iter().map(|p| p.x).collect())
            .collect()
    }

    /// frc on n = 100 has no value at s = 2, 5..8: its line breaks there.
    #[test]
    fn a_series_breaks_where_the_grid_has_values_it_lacks() {
        let all: Vec<f64> = (0..=10).map(f64::from).collect();
        let c = chart(vec![
            series(SchemeKind::Crc, &all),
            series(SchemeKind::Frc, &[0.0, 1.0, 3.0, 4.0, 9.0]),
        ]);
        let l = layers(&c);
        assert_eq!(pieces(&l, 0, LayerKind::Simulated), [all]);
        let frc = vec![vec![0.0, 1.0], vec![3.0, 4.0], vec![9.0]];
        assert_eq!(pieces(&l, 1, LayerKind::Simulated), frc);
        assert_eq!(pieces(&l, 1, LayerKind::Exact), frc);
        let segments: Vec<usize> = l
            .iter()
            .filter(|l| l.series == Some(1) && l.kind == LayerKind::Simulated)
            .map(|l| l.segment)
            .collect();
        assert_eq!(segments, [0, 1, 2]);
        // A chart over a continuous axis is never broken.
        let c = LineChart { gaps: false, ..c };
        assert_eq!(pieces(&layers(&c), 1, LayerKind::Simulated).len(), 1);
    }

    #[test]
    fn flat_series_span_the_data_and_log_axes_drop_what_they_cannot_show() {
        let mut flat = series(SchemeKind::Uncoded, &[0.0]);
        flat.flat = true;
        let mut c = chart(vec![series(SchemeKind::Crc, &[2.0, 5.0]), flat]);
        c.series[0].points[0].y = -1.0;
        let l = layers(&c);
        assert_eq!(pieces(&l, 1, LayerKind::Simulated), [vec![2.0, 5.0]]);
        assert_eq!(pieces(&l, 0, LayerKind::Simulated), [vec![2.0, 5.0]]);
        let reference: Vec<_> = l.iter().filter(|l| l.kind == LayerKind::Reference).collect();
        assert_eq!(reference.len(), 1);
        c.log_y = true;
        assert_eq!(pieces(&layers(&c), 0, LayerKind::Simulated), [vec![5.0]]);
    }

    #[test]
    fn a_second_series_of_a_scheme_keeps_its_colour_and_takes_another_marker() {
        let c = chart(vec![
            series(SchemeKind::Crc, &[0.0]),
            series(SchemeKind::Frc, &[0.0]),
            series(SchemeKind::Crc, &[0.0]),
        ]);
        let (a, b) = (look(&c, 0), look(&c, 2));
        assert_eq!(a.color, b.color);
        assert_ne!(a.marker, b.marker);
        assert_eq!(look(&c, 1).color, scheme_style(SchemeKind::Frc).color);
    }
}
