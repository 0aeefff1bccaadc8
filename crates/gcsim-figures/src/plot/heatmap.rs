//! `trace --plot`: a heatmap of workers (rows) × steps (columns), each cell
//! coloured by the worker's time relative to its step's median on a log
//! scale, with ColorBrewer's diverging RdBu scale (Brewer 2003; safe for
//! the common colour-vision deficiencies): blue faster, white the median,
//! red slower. A persistent straggler is a red row, a step-wide slowdown
//! leaves no mark (each step is divided by its own median).
//!
//! More workers or steps than the plot has pixels for are binned: a cell
//! then shows the most extreme ratio of its bin, so that no straggler
//! disappears in an average.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{Canvas, Drawn, Render, draw_figure};
use super::data::PlotRow;
use super::style::hex;
use super::ticks::AxisFormat;
use super::{FigureStyle, PlotError};
use gcsim::trace::Trace;
use gcsim::trace::stats::relative_to_step_median;

/// ColorBrewer RdBu (11 classes), from the fastest to the slowest colour.
const RD_BU: [(u8, u8, u8); 11] = [
    (5, 48, 97),
    (33, 102, 172),
    (67, 147, 195),
    (146, 197, 222),
    (209, 229, 240),
    (247, 247, 247),
    (253, 219, 199),
    (244, 165, 130),
    (214, 96, 77),
    (178, 24, 43),
    (103, 0, 31),
];

/// Most cells drawn across and down; more steps or workers are binned.
const MAX_COLUMNS: usize = 700;
const MAX_ROWS: usize = 500;
/// The colour scale spans at least ratios 1/1.1 to 1.1, at most 1/10 to 10.
const MIN_SPAN: f64 = 0.095_310_179_804_324_87;
const MAX_SPAN: f64 = std::f64::consts::LN_10;

/// The colour of `v` in [-1, 1] (−1 fastest, 0 the median, 1 slowest).
fn color(v: f64) -> RGBColor {
    let x = (v.clamp(-1.0, 1.0) + 1.0) * 0.5 * (RD_BU.len() - 1) as f64;
    let i = (x.floor() as usize).min(RD_BU.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + f * (b as f64 - a as f64)).round() as u8;
    let (a, b) = (RD_BU[i], RD_BU[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Bins of `count` items into at most `max`: `(first, end)` index pairs.
fn bins(count: usize, max: usize) -> Vec<(usize, usize)> {
    let per = count.div_ceil(max).max(1);
    (0..count).step_by(per).map(|a| (a, (a + per).min(count))).collect()
}

/// Draws the heatmap of `trace` to `path` (`.png`, `.svg` or `.pdf`) in `style`.
pub fn heatmap_figure(trace: &Trace, path: &Path, style: &FigureStyle) -> Result<(), PlotError> {
    draw_figure(&Heatmap(trace), path, style)
}

/// Every cell of the heatmap at full resolution (a binned figure shows the
/// most extreme of each bin): series `worker ID`, x the step id, y the
/// time / step median, with the cell's colour.
pub fn heatmap_rows(trace: &Trace, figure: &str) -> Result<Vec<PlotRow>, PlotError> {
    let (logs, span) = scaled_logs(trace).ok_or_else(|| PlotError::Empty(figure.to_string()))?;
    let n = trace.workers();
    let mut rows = Vec::with_capacity(logs.len());
    for (w, &worker) in trace.worker_ids().iter().enumerate() {
        for (t, &step) in trace.step_ids().iter().enumerate() {
            let l = logs[t * n + w];
            rows.push(PlotRow {
                figure: figure.to_string(),
                series: format!("worker {worker}"),
                scheme: None,
                kind: "cell",
                segment: 0,
                x: step as f64,
                y: l.exp(),
                y_lo: None,
                y_hi: None,
                inexact: false,
                color: hex(color(l / span)),
                marker: "",
            });
        }
    }
    Ok(rows)
}

/// The log of each time over its step's median, and the half-width of the
/// colour scale; None if a ratio is not finite.
fn scaled_logs(trace: &Trace) -> Option<(Vec<f64>, f64)> {
    let logs: Vec<f64> = relative_to_step_median(trace).iter().map(|r| r.ln()).collect();
    if logs.iter().any(|l| !l.is_finite()) {
        return None;
    }
    let span = logs
        .iter()
        .fold(0.0f64, |m, l| m.max(l.abs()))
        .clamp(MIN_SPAN, MAX_SPAN);
    Some((logs, span))
}

/// The heatmap of a trace, as a figure.
struct Heatmap<'a>(&'a Trace);

impl Render for Heatmap<'_> {
    fn render<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        canvas: &Canvas,
        path: &str,
    ) -> Result<(), PlotError> {
        render(self.0, root, canvas, path)
    }
}

fn render<DB: DrawingBackend>(
    trace: &Trace,
    root: &DrawingArea<DB, Shift>,
    c: &Canvas,
    path: &str,
) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: path.to_string(),
        reason: e.to_string(),
    };
    let (n, steps) = (trace.workers(), trace.steps());
    let (logs, span) = scaled_logs(trace).ok_or_else(|| PlotError::Empty(path.to_string()))?;
    let (columns, rows) = (bins(steps, MAX_COLUMNS), bins(n, MAX_ROWS));
    let binned = columns.len() < steps || rows.len() < n;

    root.fill(&WHITE).map_err(|e| err(&e))?;
    let name = Path::new(trace.file())
        .file_name()
        .map_or_else(|| trace.file().to_string(), |f| f.to_string_lossy().into_owned());
    let caption = format!(
        "{n} workers x {steps} complete steps; colour: time / step median, log scale{}",
        if binned {
            "; each cell the most extreme of its bin"
        } else {
            ""
        }
    );
    let body = c
        .heading(
            root,
            &format!("Worker times relative to the step median: {name}"),
            &caption,
        )
        .map_err(|e| err(&e))?;
    let bar_width = c.measure(root, "time / step median", 1.0).0 + c.em(1.6);
    let (plot_area, bar_area) = body.split_horizontally(c.size.0 as i32 - bar_width);
    draw_bar(&bar_area, c, span).map_err(|e| err(&e))?;
    let (plot_w, plot_h) = plot_area.dim_in_pixel();
    let fits = |size: u32, per_em: f64| ((size as f64 / c.em(per_em) as f64) as usize).max(2);
    let label_w = trace
        .worker_ids()
        .iter()
        .map(|w| c.measure(root, &w.to_string(), 1.0).0)
        .max()
        .unwrap_or(0);
    let mut ctx = ChartBuilder::on(&plot_area)
        .margin_left(c.em(0.5))
        .margin_right(c.em(0.8))
        .margin_top(c.em(if c.title { 0.4 } else { 1.0 }))
        .margin_bottom(c.em(0.6))
        .x_label_area_size(c.em(3.4))
        .y_label_area_size(label_w + c.em(2.8))
        .build_cartesian_2d(-0.5..steps as f64 - 0.5, -0.5..n as f64 - 0.5)
        .map_err(|e| err(&e))?;
    let id = |ids: &[u64], v: f64| {
        let i = v.round();
        if (v - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < ids.len() {
            ids[i as usize].to_string()
        } else {
            String::new()
        }
    };
    let (step_ids, worker_ids) = (trace.step_ids(), trace.worker_ids());
    ctx.configure_mesh()
        .disable_mesh()
        .x_desc("step")
        .y_desc("worker")
        .x_labels(steps.min(fits(plot_w, 6.0)).min(12))
        .y_labels(n.min(fits(plot_h, 2.0)).min(16))
        .x_label_formatter(&|x| id(step_ids, *x))
        .y_label_formatter(&|y| id(worker_ids, *y))
        .axis_desc_style(c.font(1.1))
        .label_style(c.font(1.0))
        .set_all_tick_mark_size(c.em(0.35))
        .axis_style(c.stroke(BLACK, 0.8))
        .draw()
        .map_err(|e| err(&e))?;
    let logs = &logs;
    let cells = rows.iter().flat_map(|&(w0, w1)| {
        columns.iter().map(move |&(t0, t1)| {
            let extreme = (w0..w1)
                .flat_map(|w| (t0..t1).map(move |t| logs[t * n + w]))
                .fold(0.0f64, |m, l| if l.abs() > m.abs() { l } else { m });
            Rectangle::new(
                [(t0 as f64 - 0.5, w0 as f64 - 0.5), (t1 as f64 - 0.5, w1 as f64 - 0.5)],
                color(extreme / span).filled(),
            )
        })
    });
    ctx.draw_series(cells).map_err(|e| err(&e))?;
    Ok(())
}

/// The colour bar: the scale from 1/e^span to e^span, ticks at round ratios.
fn draw_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, c: &Canvas, span: f64) -> Drawn<DB> {
    let text = c.font(1.0).color(&BLACK);
    let grey = c.font(0.95).color(&RGBColor(90, 90, 90));
    let (_, area_h) = area.dim_in_pixel();
    area.draw_text("time / step median", &text, (c.em(0.6), c.em(0.4)))?;
    area.draw_text("slower", &grey, (c.em(1.0), c.em(2.0)))?;
    let (x0, x1, top) = (c.em(1.0), c.em(2.8), c.em(3.4));
    let bottom = (area_h as i32 - c.em(4.0)).max(top + c.em(4.0));
    let height = bottom - top;
    for py in 0..height {
        // Top: slowest.
        let v = 1.0 - 2.0 * (py as f64 + 0.5) / height as f64;
        area.draw(&Rectangle::new([(x0, top + py), (x1, top + py + 1)], color(v).filled()))?;
    }
    area.draw(&Rectangle::new([(x0, top), (x1, bottom)], c.stroke(BLACK, 0.6)))?;
    // Round ratios, the more important first; each kept 1.3 em clear of those kept.
    let ticks = [
        1.0, 2.0, 0.5, 1.5, 4.0, 0.25, 10.0, 0.1, 1.25, 0.8, 1.1, 0.9, 3.0, 0.7, 6.0, 0.6, 1.05, 0.95, 8.0, 0.125,
    ];
    let mut kept: Vec<(f64, i32)> = Vec::new();
    for r in ticks {
        let v = f64::ln(r) / span;
        if v.abs() > 1.0 + 1e-9 {
            continue;
        }
        let y = top + ((1.0 - v) * 0.5 * height as f64).round() as i32;
        if kept.iter().any(|k| (k.1 - y).abs() < c.em(1.3)) {
            continue;
        }
        kept.push((r, y));
    }
    // One format for every label of the bar.
    let format = AxisFormat::for_ticks(&kept.iter().map(|k| k.0).collect::<Vec<_>>(), false);
    for (r, y) in kept {
        area.draw(&PathElement::new(
            vec![(x1, y), (x1 + c.em(0.4), y)],
            c.stroke(BLACK, 0.6),
        ))?;
        let (_, h) = c.measure(area, "1", 1.0);
        area.draw_text(&format.format(r), &text, (x1 + c.em(0.6), y - h / 2))?;
    }
    area.draw_text("faster", &grey, (x0, bottom + c.em(0.5)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_runs_from_blue_through_white_to_red() {
        assert_eq!(color(-1.0), RGBColor(5, 48, 97));
        assert_eq!(color(0.0), RGBColor(247, 247, 247));
        assert_eq!(color(1.0), RGBColor(103, 0, 31));
        assert_eq!(color(7.0), color(1.0));
    }

    #[test]
    fn bins_cover_every_index_once() {
        assert_eq!(bins(5, 10), [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]);
        assert_eq!(bins(7, 3), [(0, 3), (3, 6), (6, 7)]);
        assert_eq!(bins(0, 3), []);
    }
}
