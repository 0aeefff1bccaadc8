//! Heatmaps: a [`Grid`] of cells (columns along x, rows along y, each
//! with an id), each coloured by its value on a [`Scale`], with a colour
//! bar. Two grids are drawn (`grids`):
//! - `trace --plot`: workers (rows) × steps (columns), each cell the
//!   worker's time relative to its step's median on a log scale (RdBu:
//!   blue faster, white the median, red slower). A persistent straggler is
//!   a red row, a step-wide slowdown leaves no mark;
//! - `whatif --plot`: dp ranks (columns) × pipeline stages (rows), each
//!   cell min(S_dp, S_stage) from 1 upward (Reds), Fig. 14 of Lin et al.
//!   (OSDI 2025).
//!
//! More columns or rows than the plot has pixels for are binned: a cell
//! then shows the most extreme value of its bin, so that no straggler
//! disappears in an average. Where every cell is large enough for its
//! value at the tick labels' size, the value is written in it.

mod grids;
mod scale;

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

pub use grids::{trace_grid, worker_grid};
pub use scale::Scale;

use super::canvas::{Canvas, Drawn, Render, draw_figure};
use super::data::PlotRow;
use super::style::hex;
use super::{FigureStyle, PlotError};

/// Most cells drawn across and down; more columns or rows are binned.
const MAX_COLUMNS: usize = 700;
const MAX_ROWS: usize = 500;

/// A heatmap's cells and how they are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// First line of the heading.
    pub title: String,
    /// Second line.
    pub caption: String,
    /// What the columns are (`step`): the x axis, and the data rows' x.
    pub x_label: String,
    /// What the rows are (`worker`): the y axis, and the data rows' series.
    pub y_label: String,
    /// Each column's id.
    pub x_ids: Vec<u64>,
    /// Each row's id.
    pub y_ids: Vec<u64>,
    /// Each cell's value, column by column: `values[x * rows + y]`.
    pub values: Vec<f64>,
    /// What a value is: the colour bar's title.
    pub value_label: String,
    /// How a value becomes a colour.
    pub scale: Scale,
    /// Words beyond the colour bar's top and bottom ends (`slower`, `faster`).
    pub bar_ends: Option<(String, String)>,
}

/// Bins of `count` items into at most `max`: `(first, end)` index pairs.
fn bins(count: usize, max: usize) -> Vec<(usize, usize)> {
    let per = count.div_ceil(max).max(1);
    (0..count).step_by(per).map(|a| (a, (a + per).min(count))).collect()
}

impl Grid {
    fn rows(&self) -> usize {
        self.y_ids.len()
    }

    /// The value of column `x`, row `y`.
    pub fn value(&self, x: usize, y: usize) -> f64 {
        self.values[x * self.rows() + y]
    }

    /// Every cell at full resolution (a binned figure shows the most
    /// extreme of each bin): series `<y_label> <row id>`, x the column's
    /// id, y the value, with the cell's colour; row by row.
    pub fn data_rows(&self, figure: &str) -> Vec<PlotRow> {
        let mut rows = Vec::with_capacity(self.values.len());
        for (y, id) in self.y_ids.iter().enumerate() {
            for (x, &column) in self.x_ids.iter().enumerate() {
                let v = self.value(x, y);
                rows.push(PlotRow {
                    figure: figure.to_string(),
                    series: format!("{} {id}", self.y_label),
                    scheme: None,
                    kind: "cell",
                    segment: 0,
                    x: column as f64,
                    y: v,
                    y_lo: None,
                    y_hi: None,
                    inexact: false,
                    color: hex(self.scale.color(v)),
                    marker: "",
                });
            }
        }
        rows
    }

    /// Draws the heatmap to `path` (`.png`, `.svg` or `.pdf`) in `style`.
    pub fn draw(&self, path: &Path, style: &FigureStyle) -> Result<(), PlotError> {
        if self.values.is_empty() || self.values.iter().any(|v| !v.is_finite()) {
            return Err(PlotError::Empty(path.display().to_string()));
        }
        draw_figure(self, path, style)
    }
}

impl Render for Grid {
    fn render<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        canvas: &Canvas,
        path: &str,
    ) -> Result<(), PlotError> {
        render(self, root, canvas).map_err(|e| PlotError::Draw {
            path: path.to_string(),
            reason: e,
        })
    }
}

/// The label of the tick at `v` (an index into `ids`), or none between cells.
fn id_label(ids: &[u64], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < ids.len() {
        ids[i as usize].to_string()
    } else {
        String::new()
    }
}

fn render<DB: DrawingBackend>(g: &Grid, root: &DrawingArea<DB, Shift>, c: &Canvas) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let (columns, rows) = (g.x_ids.len(), g.rows());
    let (column_bins, row_bins) = (bins(columns, MAX_COLUMNS), bins(rows, MAX_ROWS));
    let binned = column_bins.len() < columns || row_bins.len() < rows;

    root.fill(&WHITE).map_err(|e| err(&e))?;
    let binned_note = if binned {
        "; each cell the most extreme of its bin"
    } else {
        ""
    };
    let body = c
        .heading(root, &g.title, &format!("{}{binned_note}", g.caption))
        .map_err(|e| err(&e))?;
    let bar_width = c.measure(root, &g.value_label, 1.0).0 + c.em(1.6);
    let (plot_area, bar_area) = body.split_horizontally(c.size.0 as i32 - bar_width);
    let ends = g.bar_ends.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
    scale::draw_bar(&bar_area, c, &g.scale, &g.value_label, ends).map_err(|e| err(&e))?;
    let (plot_w, plot_h) = plot_area.dim_in_pixel();
    let fits = |size: u32, per_em: f64| ((size as f64 / c.em(per_em) as f64) as usize).max(2);
    let widest = |ids: &[u64]| {
        ids.iter()
            .map(|w| c.measure(root, &w.to_string(), 1.0).0)
            .max()
            .unwrap_or(0)
    };
    let label_w = widest(&g.y_ids);
    let x_fit = (plot_w as i32 / (widest(&g.x_ids) + c.em(1.5)).max(1)).max(2) as usize;
    let mut ctx = ChartBuilder::on(&plot_area)
        .margin_left(c.em(0.5))
        .margin_right(c.em(0.8))
        .margin_top(c.em(if c.title { 0.4 } else { 1.0 }))
        .margin_bottom(c.em(0.6))
        .x_label_area_size(c.em(3.4))
        .y_label_area_size(label_w + c.em(2.8))
        .build_cartesian_2d(-0.5..columns as f64 - 0.5, -0.5..rows as f64 - 0.5)
        .map_err(|e| err(&e))?;
    ctx.configure_mesh()
        .disable_mesh()
        .x_desc(g.x_label.as_str())
        .y_desc(g.y_label.as_str())
        .x_labels(columns.min(x_fit).min(40))
        .y_labels(rows.min(fits(plot_h, 2.0)).min(16))
        .x_label_formatter(&|x| id_label(&g.x_ids, *x))
        .y_label_formatter(&|y| id_label(&g.y_ids, *y))
        .axis_desc_style(c.font(1.1))
        .label_style(c.font(1.0))
        .set_all_tick_mark_size(c.em(0.35))
        .axis_style(c.stroke(BLACK, 0.8))
        .draw()
        .map_err(|e| err(&e))?;
    let cells = row_bins.iter().flat_map(|&(y0, y1)| {
        column_bins.iter().map(move |&(x0, x1)| {
            let extreme = (y0..y1)
                .flat_map(|y| (x0..x1).map(move |x| g.value(x, y)))
                .reduce(|a, b| g.scale.extreme(a, b))
                .unwrap_or(f64::NAN);
            Rectangle::new(
                [(x0 as f64 - 0.5, y0 as f64 - 0.5), (x1 as f64 - 0.5, y1 as f64 - 0.5)],
                g.scale.color(extreme).filled(),
            )
        })
    });
    ctx.draw_series(cells).map_err(|e| err(&e))?;
    if !binned {
        annotate(g, c, &ctx.plotting_area().strip_coord_spec()).map_err(|e| err(&e))?;
    }
    Ok(())
}

/// Writes each cell's value in it, two decimals, where every cell is large
/// enough for its text (white on the dark cells).
fn annotate<DB: DrawingBackend>(g: &Grid, c: &Canvas, area: &DrawingArea<DB, Shift>) -> Drawn<DB> {
    let (w, h) = area.dim_in_pixel();
    let (columns, rows) = (g.x_ids.len(), g.rows());
    let (cell_w, cell_h) = (w as f64 / columns as f64, h as f64 / rows as f64);
    let text = |v: f64| format!("{v:.2}");
    let em = 0.85;
    let widest = g
        .values
        .iter()
        .map(|&v| c.measure(area, &text(v), em).0)
        .max()
        .unwrap_or(0);
    let (_, tall) = c.measure(area, "1.0", em);
    if widest as f64 + c.em(0.4) as f64 > cell_w || tall as f64 + c.em(0.3) as f64 > cell_h {
        return Ok(());
    }
    for x in 0..columns {
        for y in 0..rows {
            let v = g.value(x, y);
            let color = if g.scale.dark(v) { WHITE } else { BLACK };
            let s = text(v);
            let (tw, th) = c.measure(area, &s, em);
            let cx = ((x as f64 + 0.5) * cell_w) as i32 - tw / 2;
            // Row 0 is at the bottom.
            let cy = ((rows - y) as f64 - 0.5) * cell_h;
            area.draw_text(&s, &c.font(em).color(&color), (cx, cy as i32 - th / 2))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_every_index_once() {
        assert_eq!(bins(5, 10), [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]);
        assert_eq!(bins(7, 3), [(0, 3), (3, 6), (6, 7)]);
        assert_eq!(bins(0, 3), []);
    }
}
