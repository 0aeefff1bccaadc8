//! The grids gcsim draws as heatmaps: a measured trace's workers × steps,
//! and a what-if analysis's dp ranks × stages.

use std::path::Path;

use super::{Grid, Scale};
use gcsim::trace::Trace;
use gcsim::trace::stats::relative_to_step_median;
use gcsim::whatif::Analysis;

/// The ratio scale spans at least 1/1.1 to 1.1, at most 1/10 to 10.
const MIN_SPAN: f64 = 0.095_310_179_804_324_87;
const MAX_SPAN: f64 = std::f64::consts::LN_10;

/// The what-if scale's darkest value, unless a cell is larger: the
/// artifact's (Lin et al.'s `heatmap.py`: Reds from 1 to 1.5).
const WORST: f64 = 1.5;

/// A file's name without its directories.
fn base_name(file: &str) -> String {
    Path::new(file)
        .file_name()
        .map_or_else(|| file.to_string(), |f| f.to_string_lossy().into_owned())
}

/// Workers (rows) × steps (columns) of `trace`, each cell the worker's time
/// over its step's median on a log scale; None if a ratio is not finite
/// (a step whose median is 0).
pub fn trace_grid(trace: &Trace) -> Option<Grid> {
    let values = relative_to_step_median(trace);
    if values.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return None;
    }
    let span = values
        .iter()
        .fold(0.0f64, |m, r| m.max(r.ln().abs()))
        .clamp(MIN_SPAN, MAX_SPAN);
    let (n, steps) = (trace.workers(), trace.steps());
    Some(Grid {
        title: format!("Worker times relative to the step median: {}", base_name(trace.file())),
        caption: format!("{n} workers x {steps} complete steps; colour: time / step median, log scale"),
        x_label: "step".into(),
        y_label: "worker".into(),
        x_ids: trace.step_ids().to_vec(),
        y_ids: trace.worker_ids().to_vec(),
        values,
        value_label: "time / step median".into(),
        scale: Scale::Ratio { span },
        bar_ends: Some(("slower".into(), "faster".into())),
    })
}

/// Dp ranks (columns) × pipeline stages (rows) of a what-if analysis, each
/// cell the worker's min(S_dp, S_stage) (Fig. 14 of Lin et al.), coloured
/// from 1 upward.
pub fn worker_grid(analysis: &Analysis) -> Grid {
    let (dp, pp) = (analysis.layout.dp, analysis.layout.pp);
    let values: Vec<f64> = analysis.worker_scores.iter().flatten().copied().collect();
    let hi = values.iter().copied().fold(WORST, f64::max);
    Grid {
        title: format!("Slowdown per worker, min(S_dp, S_stage): {}", base_name(&analysis.file)),
        caption: format!(
            "{dp} dp ranks x {pp} stages; S = {:.3}; colour from 1 (no straggling) to {hi:.2}",
            analysis.slowdown
        ),
        x_label: "dp rank".into(),
        y_label: "stage".into(),
        x_ids: (0..dp as u64).collect(),
        y_ids: (0..pp as u64).collect(),
        values,
        value_label: "min(S_dp, S_stage)".into(),
        scale: Scale::Sequential { lo: 1.0, hi },
        bar_ends: None,
    }
}
