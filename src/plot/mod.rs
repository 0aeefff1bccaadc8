//! Figures (plotters), each a function from data and a path to `Result`
//! (criterion's `plotters_backend` pattern). PNG or SVG by the extension.
//!
//! Text is drawn with a bundled copy of DejaVu Sans (Bitstream Vera licence,
//! `assets/fonts/`) through plotters' ab_glyph backend, so a figure is legible
//! on a machine with no system fonts and the binary links no font library.

pub mod heatmap;
pub mod survival;
pub mod sweep;

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use thiserror::Error;

/// Why a figure could not be drawn.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The file name does not end in `.png` or `.svg`.
    #[error("{0}: a figure must be a .png or .svg file")]
    Extension(String),
    /// The drawing backend failed (e.g. the file cannot be written).
    #[error("{path}: cannot draw the figure: {reason}")]
    Draw {
        /// The figure's path.
        path: String,
        /// What the backend said.
        reason: String,
    },
    /// Nothing to draw.
    #[error("{0}: no finite values to plot")]
    Empty(String),
    /// Rows that share no x axis (deadlines beside tolerances).
    #[error("{0}")]
    Axes(String),
}

const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

fn register_font() {
    REGISTER.call_once(|| {
        // The bundled font is a valid TrueType file; a failure here is a build defect.
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES)
            .unwrap_or_else(|_| panic!("the bundled DejaVu Sans does not parse"));
    });
}

/// One point of a simulated series, with an optional 95% band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
    /// Lower and upper end of the band at x.
    pub band: Option<(f64, f64)>,
}

/// One labelled line: simulated points (solid, with markers) and the exact
/// curve (dashed), either of which may be empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Simulated points.
    pub points: Vec<Point>,
    /// The exact curve.
    pub exact: Vec<(f64, f64)>,
    /// A value that does not depend on x (uncoded in a sweep over s): its one
    /// point is drawn as a horizontal line across the axis.
    pub flat: bool,
    /// An inexact strategy (its update holds part of the data): the
    /// simulated line is dotted, so that it is not read as an exact speedup.
    pub inexact: bool,
}

impl Series {
    /// The points and exact curve, with a flat series stretched across `[x0, x1]`.
    fn spread(&self, x0: f64, x1: f64) -> (Vec<Point>, Vec<(f64, f64)>) {
        if !self.flat {
            return (self.points.clone(), self.exact.clone());
        }
        let points = self
            .points
            .first()
            .map_or(Vec::new(), |p| vec![Point { x: x0, ..*p }, Point { x: x1, ..*p }]);
        let exact = self.exact.first().map_or(Vec::new(), |e| vec![(x0, e.1), (x1, e.1)]);
        (points, exact)
    }
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// First line of the heading.
    pub title: String,
    /// Second line: the parameters that produced the data.
    pub caption: String,
    /// x-axis label, with units.
    pub x_label: String,
    /// y-axis label, with units.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// A horizontal reference line (speedup 1).
    pub reference_y: Option<f64>,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Lower bound of the y axis, if fixed (e.g. the smallest probability shown).
    pub y_floor: Option<f64>,
    /// Tick labels on x are whole numbers.
    pub integer_x: bool,
}

/// Figure size in pixels.
pub const SIZE: (u32, u32) = (1100, 720);

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// A figure that draws itself on any plotters backend.
pub(crate) trait Render {
    /// Draws onto `root`; `path` names the file in errors.
    fn render<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &str) -> Result<(), PlotError>;
}

impl Render for LineChart {
    fn render<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &str) -> Result<(), PlotError> {
        render(self, root, path)
    }
}

/// Draws `chart` to `path` (`.png` or `.svg`).
pub fn draw(chart: &LineChart, path: &Path) -> Result<(), PlotError> {
    draw_figure(chart, path)
}

/// Draws `figure` to `path`, a bitmap for `.png` and a vector figure for `.svg`.
pub(crate) fn draw_figure(figure: &impl Render, path: &Path) -> Result<(), PlotError> {
    register_font();
    let shown = path.display().to_string();
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: shown.clone(),
        reason: e.to_string(),
    };
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("png") => {
            let root = BitMapBackend::new(path, SIZE).into_drawing_area();
            figure.render(&root, &shown)?;
            root.present().map_err(|e| err(&e))
        }
        Some("svg") => {
            let root = SVGBackend::new(path, SIZE).into_drawing_area();
            figure.render(&root, &shown)?;
            root.present().map_err(|e| err(&e))
        }
        _ => Err(PlotError::Extension(shown)),
    }
}

/// The smallest and largest finite (and, on a log axis, positive) values.
fn extent(values: impl Iterator<Item = f64>, log: bool) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .fold(None, |acc, v| {
            Some(acc.map_or((v, v), |(a, b): (f64, f64)| (a.min(v), b.max(v))))
        })
}

fn padded(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        let (lo, hi) = if hi > lo { (lo, hi) } else { (lo / 2.0, hi * 2.0) };
        return (lo / 1.5, hi * 1.5);
    }
    let span = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
    (lo - 0.05 * span, hi + 0.05 * span)
}

fn render<DB: DrawingBackend>(chart: &LineChart, root: &DrawingArea<DB, Shift>, path: &str) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: path.to_string(),
        reason: e.to_string(),
    };
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (head, body) = root.split_vertically(74);
    head.draw_text(&chart.title, &(FONT, 26).into_font().color(&BLACK), (28, 10))
        .map_err(|e| err(&e))?;
    head.draw_text(
        &chart.caption,
        &(FONT, 17).into_font().color(&RGBColor(80, 80, 80)),
        (28, 44),
    )
    .map_err(|e| err(&e))?;

    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x).chain(s.exact.iter().map(|e| e.0)));
    let (x0, x1) = extent(xs, false).ok_or_else(|| PlotError::Empty(path.to_string()))?;
    let ys = chart.series.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|p| [Some(p.y), p.band.map(|b| b.0), p.band.map(|b| b.1)])
            .flatten()
            .chain(s.exact.iter().map(|e| e.1))
    });
    let (y0, y1) =
        extent(ys.chain(chart.reference_y), chart.log_y).ok_or_else(|| PlotError::Empty(path.to_string()))?;
    let (x0, x1) = if x1 > x0 { (x0, x1) } else { (x0 - 1.0, x1 + 1.0) };
    let (x0, x1) = (x0 - 0.02 * (x1 - x0), x1 + 0.02 * (x1 - x0));
    let (y0, y1) = padded(y0, y1, chart.log_y);
    let y0 = chart.y_floor.map_or(y0, |f| f.max(y0).min(y1 / 10.0));

    let (plot_area, legend_area) = body.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    draw_legend(chart, &legend_area).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&plot_area);
    builder
        .margin_left(20)
        .margin_right(36)
        .margin_bottom(16)
        .x_label_area_size(64)
        .y_label_area_size(96);
    if chart.log_y {
        let mut ctx = builder
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(|e| err(&e))?;
        fill(chart, &mut ctx, (x0, x1)).map_err(|e| err(&e))
    } else {
        let mut ctx = builder.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| err(&e))?;
        fill(chart, &mut ctx, (x0, x1)).map_err(|e| err(&e))
    }
}

/// Width of the legend column, right of the plot, in pixels.
const LEGEND_WIDTH: u32 = 250;

/// The legend, in its own column so that it never covers data: one entry
/// per series, then what the line styles mean.
fn draw_legend<DB: DrawingBackend>(
    chart: &LineChart,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let text = (FONT, 16).into_font().color(&BLACK);
    let mut y = 24;
    let line = |area: &DrawingArea<DB, Shift>, y: i32, style: ShapeStyle, dashed: bool| {
        let pieces: Vec<(i32, i32)> = if dashed {
            vec![(0, 8), (13, 21), (26, 32)]
        } else {
            vec![(0, 32)]
        };
        pieces
            .into_iter()
            .try_for_each(|(a, b)| area.draw(&PathElement::new(vec![(10 + a, y), (10 + b, y)], style)))
    };
    let dotted = |area: &DrawingArea<DB, Shift>, y: i32, style: ShapeStyle| {
        (0..5).try_for_each(|d| area.draw(&PathElement::new(vec![(10 + 7 * d, y), (12 + 7 * d, y)], style)))
    };
    for (i, s) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        if s.inexact && !s.points.is_empty() {
            dotted(area, y, color.stroke_width(3))?;
        } else {
            line(area, y, color.stroke_width(3), s.points.is_empty())?;
        }
        area.draw_text(&s.label, &text, (52, y - 9))?;
        y += 26;
    }
    y += 10;
    let grey = RGBColor(90, 90, 90);
    let has_sim = chart.series.iter().any(|s| !s.points.is_empty() && !s.inexact);
    let has_inexact = chart.series.iter().any(|s| !s.points.is_empty() && s.inexact);
    let has_exact = chart.series.iter().any(|s| !s.exact.is_empty());
    let has_band = chart.series.iter().any(|s| s.points.iter().any(|p| p.band.is_some()));
    if has_sim {
        line(area, y, grey.stroke_width(2), false)?;
        area.draw_text("simulated", &text, (52, y - 9))?;
        y += 24;
    }
    if has_inexact {
        dotted(area, y, grey.stroke_width(2))?;
        area.draw_text("simulated, inexact", &text, (52, y - 9))?;
        y += 24;
    }
    if has_exact {
        line(area, y, grey.stroke_width(2), true)?;
        area.draw_text("exact", &text, (52, y - 9))?;
        y += 24;
    }
    if has_band {
        area.draw(&Rectangle::new([(10, y - 7), (42, y + 7)], grey.mix(0.25).filled()))?;
        area.draw_text("95% interval", &text, (52, y - 9))?;
        y += 24;
    }
    if let Some(r) = chart.reference_y {
        line(area, y, BLACK.mix(0.6).stroke_width(1), true)?;
        area.draw_text(&format!("reference: {}", short(r)), &text, (52, y - 9))?;
    }
    Ok(())
}

type Ctx<'a, 'b, DB, Y> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>;

fn fill<'a, DB, Y>(
    chart: &LineChart,
    ctx: &mut Ctx<'a, 'a, DB, Y>,
    (x0, x1): (f64, f64),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let integer = chart.integer_x;
    let x_fmt = move |x: &f64| if integer { format!("{x:.0}") } else { short(*x) };
    ctx.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_labels(if integer {
            ((x1 - x0).round() as usize + 1).clamp(2, 11)
        } else {
            10
        })
        .y_labels(10)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|y| short(*y))
        .axis_desc_style((FONT, 20))
        .label_style((FONT, 16))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;

    for (i, s) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let (spread_points, spread_exact) = s.spread(x0, x1);
        let band: Vec<(f64, f64, f64)> = spread_points
            .iter()
            .filter_map(|p| p.band.map(|(lo, hi)| (p.x, lo, hi)))
            .collect();
        if band.len() > 1 {
            let outline: Vec<(f64, f64)> = band
                .iter()
                .map(|b| (b.0, b.2))
                .chain(band.iter().rev().map(|b| (b.0, b.1)))
                .collect();
            ctx.draw_series(std::iter::once(Polygon::new(outline, color.mix(0.18).filled())))?;
        }
        let solid = color.stroke_width(2);
        let points: Vec<(f64, f64)> = spread_points
            .iter()
            .filter(|p| p.y.is_finite())
            .map(|p| (p.x, p.y))
            .collect();
        if !points.is_empty() {
            if s.inexact {
                ctx.draw_series(DashedLineSeries::new(points.iter().copied(), 2, 5, solid))?;
            } else {
                ctx.draw_series(LineSeries::new(points.clone(), solid))?;
            }
            if points.len() <= 60 && !s.flat {
                ctx.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
        }
        if !spread_exact.is_empty() {
            let dashed = DashedLineSeries::new(spread_exact.iter().copied(), 8, 5, color.stroke_width(2));
            ctx.draw_series(dashed)?;
        }
    }
    if let Some(y) = chart.reference_y {
        ctx.draw_series(DashedLineSeries::new(
            [(x0, y), (x1, y)],
            4,
            4,
            BLACK.mix(0.6).stroke_width(1),
        ))?;
    }
    Ok(())
}

/// Tick labels: few significant digits, no trailing noise.
fn short(v: f64) -> String {
    crate::export::short(v, &crate::export::Digits::TICK)
}
