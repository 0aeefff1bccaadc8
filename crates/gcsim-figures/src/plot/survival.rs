//! `run --plot`: the survival function P(T > t) of one configuration against
//! uncoded on a log axis, so the tail is visible; exact curves dashed.

use std::path::Path;

use super::{FigureStyle, LineChart, PlotError, Point, Series};
use gcsim::report::RunConfig;
use gcsim::scheme::SchemeKind;

/// One curve of a survival figure.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    /// The scheme, which gives the colour.
    pub scheme: SchemeKind,
    /// Simulated `(t, P(T > t))`.
    pub simulated: Vec<(f64, f64)>,
    /// Exact `(t, P(T > t))`, if the theory gives it.
    pub exact: Vec<(f64, f64)>,
}

/// The chart of the survival curves; probabilities below 1/trials are cut.
pub fn survival_chart(config: &RunConfig, curves: &[Curve]) -> LineChart {
    let floor = if config.trials > 0 {
        1.0 / config.trials as f64
    } else {
        1e-6
    };
    let series = curves
        .iter()
        .map(|c| Series {
            label: c.label.clone(),
            scheme: c.scheme,
            points: c
                .simulated
                .iter()
                .filter(|p| p.1 > 0.0)
                .map(|&(x, y)| Point { x, y, band: None })
                .collect(),
            exact: c.exact.iter().copied().filter(|p| p.1 >= floor / 10.0).collect(),
            flat: false,
            inexact: false,
        })
        .collect();
    LineChart {
        title: "Distribution of the iteration time: P(T > t)".into(),
        caption: super::sweep::caption(config),
        x_label: format!("iteration time t ({})", gcsim::units::label(config.time_unit)),
        y_label: "P(T > t), log scale".into(),
        series,
        reference_y: None,
        log_y: true,
        y_floor: Some(floor / 2.0),
        integer_x: false,
        gaps: false,
    }
}

/// Draws the survival curves to `path` in `style`.
pub fn survival_figure(
    config: &RunConfig,
    curves: &[Curve],
    path: &Path,
    style: &FigureStyle,
) -> Result<(), PlotError> {
    super::draw(&survival_chart(config, curves).styled(style), path, style)
}
