//! Figures (plotters), each a function from data and a path to `Result`
//! (criterion's `plotters_backend` pattern). PNG, SVG or PDF by the
//! extension, at a [`FigureStyle`]'s size, resolution and font size.
//!
//! A line chart is data first: [`LineChart`] holds the series, [`layers`]
//! turns them into what is drawn (segments split where a sweep has no
//! value for a scheme, flat lines spread across the axis, points a log
//! axis cannot show left out), and both the renderer ([`line`]) and the
//! tidy export ([`data`]) read those layers, so `--plot-data` writes
//! exactly what the figure shows.
//!
//! Text is drawn with a bundled copy of DejaVu Sans (Bitstream Vera licence,
//! `assets/fonts/`) through plotters' ab_glyph backend, so a figure is legible
//! on a machine with no system fonts and the binary links no font library.

pub mod canvas;
pub mod data;
pub mod heatmap;
pub mod layers;
mod line;
pub mod loss;
pub mod style;
pub mod survival;
pub mod sweep;
pub mod ticks;

use std::path::Path;
use std::sync::Once;

use plotters::style::FontStyle;
use thiserror::Error;

pub use canvas::{FigureFormat, FigureSize, FigureStyle};

use gcsim::scheme::SchemeKind;

/// Why a figure could not be drawn.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The file name does not end in `.png`, `.svg` or `.pdf`.
    #[error("{0}: a figure must be a .png, .svg or .pdf file")]
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

/// One labelled line: simulated points (markers joined by a line) and the
/// exact curve (a thin dashed line on top), either of which may be empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text (" (inexact)" is added for an inexact strategy).
    pub label: String,
    /// The scheme, which gives the colour and marker.
    pub scheme: SchemeKind,
    /// Simulated points.
    pub points: Vec<Point>,
    /// The exact curve.
    pub exact: Vec<(f64, f64)>,
    /// A value that does not depend on x (uncoded in a sweep over s): its one
    /// point is drawn as a horizontal line across the axis.
    pub flat: bool,
    /// An inexact strategy (its update holds part of the data): hollow
    /// markers, a dotted line and "(inexact)" in the legend, so that it is
    /// not read as an exact speedup.
    pub inexact: bool,
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
    /// The x values are a sweep's grid: a series is broken where the grid
    /// has a value it lacks (frc at the s it does not admit), not drawn
    /// straight across it.
    pub gaps: bool,
}

/// The default figure size in pixels (a PNG at the default style).
pub const SIZE: (u32, u32) = (1100, 720);

impl canvas::Render for LineChart {
    fn render<DB: plotters::prelude::DrawingBackend>(
        &self,
        root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
        canvas: &canvas::Canvas,
        path: &str,
    ) -> Result<(), PlotError> {
        line::render(self, root, canvas, path)
    }
}

impl LineChart {
    /// The chart as `style` asks for it (a logarithmic y axis with
    /// `log_y`): what is drawn and what `--plot-data` writes.
    pub fn styled(mut self, style: &FigureStyle) -> Self {
        self.log_y |= style.log_y();
        self
    }
}

/// Draws `chart` to `path` (`.png`, `.svg` or `.pdf`).
pub fn draw(chart: &LineChart, path: &Path, style: &FigureStyle) -> Result<(), PlotError> {
    canvas::draw_figure(chart, path, style)
}
