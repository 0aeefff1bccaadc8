//! Draws a [`LineChart`] from its [`layers`]: the heading, the plot, and
//! the legend in a column of its own so that it never covers data. Every
//! length is in points (see [`Canvas`]).
//!
//! Drawing order: shaded intervals, the lines between simulated markers
//! (an inexact strategy's dotted line after the others), the markers
//! (hollow ones, larger, after the filled), then the exact curves on top,
//! so that a closed form stays visible where it lies on the simulation and
//! a strategy that coincides with another (ignore and crc under `fixed`)
//! still shows.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::canvas::{Canvas, Drawn};
use super::layers::{Layer, LayerKind, Look, layers, look};
use super::style::{Marker, tint};
use super::ticks::AxisFormat;
use super::{LineChart, PlotError};

/// Colour of the reference line.
pub(crate) const REFERENCE: RGBColor = RGBColor(102, 102, 102);
/// Colour of the legend's key to the line styles.
const KEY: RGBColor = RGBColor(90, 90, 90);

/// Widths and sizes, points.
const SIMULATED_PT: f64 = 2.0;
const INEXACT_PT: f64 = 1.4;
const EXACT_PT: f64 = 1.1;
const REFERENCE_PT: f64 = 0.8;
const MARKER_EM: f64 = 0.34;
/// A hollow marker is this much larger, so that it rings a filled one at the same point.
const HOLLOW_SCALE: f64 = 1.5;

/// The smallest and largest finite values.
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite()).fold(None, |acc, v| {
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

pub(super) fn render<DB: DrawingBackend>(
    chart: &LineChart,
    root: &DrawingArea<DB, Shift>,
    canvas: &Canvas,
    path: &str,
) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: path.to_string(),
        reason: e.to_string(),
    };
    let layers = layers(chart);
    let [(x0, x1), (y0, y1)] = bounds(chart, &layers, path)?;

    root.fill(&WHITE).map_err(|e| err(&e))?;
    let body = canvas
        .heading(root, &chart.title, &chart.caption)
        .map_err(|e| err(&e))?;
    let entries = legend_entries(chart);
    let widths: Vec<i32> = entries.iter().map(|e| canvas.measure(root, &e.text, 1.0).0).collect();
    let width = canvas.size.0 as i32;
    let beside_w = canvas.em(4.0) + widths.iter().copied().max().unwrap_or(0);
    // Beside the plot while it takes at most a third of the width; else
    // below it, in rows (a column figure of a paper).
    let (plot_area, legend_area, places) = if beside_w <= width / 3 {
        let (plot, legend) = body.split_horizontally(width - beside_w);
        (plot, legend, beside(&entries, canvas))
    } else {
        let (places, height) = below(&entries, &widths, canvas, width);
        let (_, body_h) = body.dim_in_pixel();
        let (plot, legend) = body.split_vertically(body_h as i32 - height);
        (plot, legend, places)
    };
    draw_legend(chart, &entries, &places, &legend_area, canvas).map_err(|e| err(&e))?;

    let (plot_w, plot_h) = plot_area.dim_in_pixel();
    let fits = |size: u32, per_em: f64| ((size as f64 / canvas.em(per_em) as f64) as usize).max(2);
    let n_y = fits(plot_h, 2.4).clamp(3, 10);
    let n_x = if chart.integer_x {
        (((x1 - x0).round() as usize) + 1).clamp(2, 11).min(fits(plot_w, 2.2))
    } else {
        fits(plot_w, 6.0).clamp(3, 10)
    };
    let x_ticks = RangedCoordf64::from(x0..x1).key_points(n_x);
    let y_ticks = y_ticks(chart, (y0, y1), n_y, plot_h, canvas);
    let (x_fmt, y_fmt) = (
        AxisFormat::for_ticks(&x_ticks, false),
        AxisFormat::for_ticks(&y_ticks, chart.log_y),
    );
    let y_label_w = y_ticks
        .iter()
        .map(|&t| canvas.measure(root, &y_fmt.format(t), 1.0).0)
        .max()
        .unwrap_or(0);
    let mut builder = ChartBuilder::on(&plot_area);
    builder
        .margin_left(canvas.em(0.5))
        .margin_right(canvas.em(1.0))
        .margin_top(canvas.em(if canvas.title { 0.4 } else { 1.0 }))
        .margin_bottom(canvas.em(0.6))
        .x_label_area_size(canvas.em(3.4))
        .y_label_area_size(y_label_w + canvas.em(2.8));
    let axes = Axes {
        canvas,
        n: (n_x, n_y),
        fmt: (x_fmt, y_fmt),
        y_ticks: y_ticks.clone(),
        desc_em: desc_em(chart, root, canvas, plot_area.dim_in_pixel(), y_label_w),
    };
    if chart.log_y {
        let mut ctx = builder
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(|e| err(&e))?;
        fill(chart, &layers, &mut ctx, root, &axes).map_err(|e| err(&e))
    } else {
        let mut ctx = builder.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| err(&e))?;
        fill(chart, &layers, &mut ctx, root, &axes).map_err(|e| err(&e))
    }
}

/// The plotted ranges of x and y: every point and band with a margin, y
/// held above the chart's floor.
fn bounds(chart: &LineChart, layers: &[Layer], path: &str) -> Result<[(f64, f64); 2], PlotError> {
    let points = || layers.iter().flat_map(|l| &l.points);
    let (x0, x1) = extent(points().map(|p| p.x)).ok_or_else(|| PlotError::Empty(path.to_string()))?;
    let ys = points().flat_map(|p| {
        [Some(p.y), p.band.map(|b| b.0), p.band.map(|b| b.1)]
            .into_iter()
            .flatten()
    });
    let (y0, y1) = extent(ys).ok_or_else(|| PlotError::Empty(path.to_string()))?;
    let (x0, x1) = if x1 > x0 { (x0, x1) } else { (x0 - 1.0, x1 + 1.0) };
    let (x0, x1) = (x0 - 0.02 * (x1 - x0), x1 + 0.02 * (x1 - x0));
    let (y0, y1) = padded(y0, y1, chart.log_y);
    let y0 = chart.y_floor.map_or(y0, |f| f.max(y0).min(y1 / 10.0));
    Ok([(x0, x1), (y0, y1)])
}

/// The y axis' labelled ticks: plotters' key points, thinned on a log axis.
fn y_ticks(chart: &LineChart, (y0, y1): (f64, f64), n_y: usize, plot_h: u32, canvas: &Canvas) -> Vec<f64> {
    if chart.log_y {
        // plotters' log ticks crowd towards the top of each decade (0.7,
        // 0.8, 0.9, 1): a label is kept only at 1.6 em from the last one.
        let ticks = LogCoord::from((y0..y1).log_scale()).key_points(n_y);
        let per_em = (y1 / y0).ln() / plot_h as f64 * canvas.em(1.6) as f64;
        ticks.iter().fold(Vec::new(), |mut kept: Vec<f64>, &t| {
            if kept.last().is_none_or(|&k: &f64| (t / k).ln().abs() >= per_em) {
                kept.push(t);
            }
            kept
        })
    } else {
        RangedCoordf64::from(y0..y1).key_points(n_y)
    }
}

/// The axes' tick counts and formats.
struct Axes<'a> {
    canvas: &'a Canvas,
    n: (usize, usize),
    fmt: (AxisFormat, AxisFormat),
    /// The y ticks that are labelled (a log axis draws more lines than labels).
    y_ticks: Vec<f64>,
    /// Size of the axis names, em: smaller where a name is longer than its axis.
    desc_em: f64,
}

/// The size of the axis names: 1.1 em, less where the longer name would
/// overrun its axis.
fn desc_em<DB: DrawingBackend>(
    chart: &LineChart,
    root: &DrawingArea<DB, Shift>,
    c: &Canvas,
    (w, h): (u32, u32),
    y_label_w: i32,
) -> f64 {
    let y_axis = h as i32 - c.em(3.4) - c.em(2.0);
    let x_axis = w as i32 - y_label_w - c.em(4.3);
    let fit = |label: &str, room: i32| {
        let need = c.measure(root, label, 1.1).0.max(1);
        1.1 * (0.95 * room as f64 / need as f64).min(1.0)
    };
    fit(&chart.y_label, y_axis).min(fit(&chart.x_label, x_axis)).max(0.6)
}

type Ctx<'a, DB, Y> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>;

fn fill<'a, DB, Y>(
    chart: &LineChart,
    layers: &[Layer],
    ctx: &mut Ctx<'a, DB, Y>,
    root: &DrawingArea<DB, Shift>,
    axes: &Axes,
) -> Drawn<DB>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let c = axes.canvas;
    let (x_fmt, y_fmt) = axes.fmt;
    let x_label = move |x: &f64| x_fmt.format(*x);
    let labelled = &axes.y_ticks;
    let y_label = move |y: &f64| {
        if labelled.iter().any(|t| (t - y).abs() <= 1e-9 * t.abs()) {
            y_fmt.format(*y)
        } else {
            String::new()
        }
    };
    ctx.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_labels(axes.n.0)
        .y_labels(axes.n.1)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .axis_desc_style(c.font(axes.desc_em))
        .label_style(c.font(1.0))
        .set_all_tick_mark_size(c.em(0.35))
        .axis_style(c.stroke(BLACK, 0.8))
        .bold_line_style(c.stroke(RGBColor(226, 226, 226), 0.5))
        .light_line_style(TRANSPARENT)
        .draw()?;

    let looks: Vec<Look> = (0..chart.series.len()).map(|i| look(chart, i)).collect();
    let of = |l: &Layer| l.series.map(|i| looks[i]);
    let xy = |l: &Layer| l.points.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>();
    bands(layers, &looks, ctx, c)?;
    let simulated = |inexact: bool| {
        layers
            .iter()
            .filter(move |l| l.kind == LayerKind::Simulated && of(l).is_some_and(|k| k.inexact == inexact))
    };
    for l in simulated(false).chain(simulated(true)).filter(|l| l.points.len() > 1) {
        let Some(look) = of(l) else { continue };
        if look.inexact {
            let style = c.stroke(look.line, INEXACT_PT);
            ctx.draw_series(DashedLineSeries::new(xy(l), c.px(1.2), c.px(2.4), style))?;
        } else {
            ctx.draw_series(LineSeries::new(xy(l), c.stroke(look.line, SIMULATED_PT)))?;
        }
    }
    for l in simulated(false).chain(simulated(true)) {
        let Some(look) = of(l) else { continue };
        // A lone point (a piece between two gaps) is a marker even on a dense curve.
        if look.markers || l.points.len() == 1 {
            for p in &l.points {
                let at = ctx.backend_coord(&(p.x, p.y));
                marker(root, c, at, look.marker, look.color, look.inexact)?;
            }
        }
    }
    for l in layers.iter().filter(|l| l.kind != LayerKind::Simulated) {
        let Some(look) = of(l) else {
            ctx.draw_series(LineSeries::new(xy(l), c.stroke(REFERENCE, REFERENCE_PT)))?;
            continue;
        };
        let style = c.stroke(look.color, EXACT_PT);
        if l.points.len() == 1 {
            let (px, py) = ctx.backend_coord(&(l.points[0].x, l.points[0].y));
            let r = c.em(0.6);
            root.draw(&PathElement::new(vec![(px - r, py), (px + r, py)], style))?;
        } else {
            ctx.draw_series(DashedLineSeries::new(xy(l), c.px(3.5), c.px(2.2), style))?;
        }
    }
    Ok(())
}

/// Each simulated series' 95% band: a shaded polygon, or an error bar at a
/// lone point.
fn bands<'a, DB, Y>(layers: &[Layer], looks: &[Look], ctx: &mut Ctx<'a, DB, Y>, c: &Canvas) -> Drawn<DB>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let of = |l: &Layer| l.series.map(|i| looks[i]);
    for l in layers.iter().filter(|l| l.kind == LayerKind::Simulated) {
        let band: Vec<(f64, f64, f64)> = l
            .points
            .iter()
            .filter_map(|p| p.band.map(|(lo, hi)| (p.x, lo, hi)))
            .collect();
        if let (Some(look), true) = (of(l), band.len() > 1) {
            let outline: Vec<(f64, f64)> = band
                .iter()
                .map(|b| (b.0, b.2))
                .chain(band.iter().rev().map(|b| (b.0, b.1)))
                .collect();
            ctx.draw_series(std::iter::once(Polygon::new(outline, look.color.mix(0.16).filled())))?;
        } else if let (Some(look), [(x, lo, hi)]) = (of(l), band.as_slice()) {
            // A lone point (a scheme that admits one value of x here): an error bar.
            ctx.draw_series(std::iter::once(PathElement::new(
                vec![(*x, *lo), (*x, *hi)],
                c.stroke(look.color, 1.0),
            )))?;
        }
    }
    Ok(())
}

/// Draws a marker centred at `at` (drawing units of `area`).
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: &Canvas,
    (x, y): (i32, i32),
    shape: Marker,
    color: RGBColor,
    hollow: bool,
) -> Drawn<DB> {
    let r = c.em(if hollow { MARKER_EM * HOLLOW_SCALE } else { MARKER_EM }).max(2);
    let stroke = c.stroke(color, 1.1);
    let style = if hollow { stroke } else { color.filled() };
    match (shape, super::style::outline(shape, r)) {
        (Marker::Cross, _) => {
            for (dx, dy) in [(r, r), (r, -r)] {
                area.draw(&PathElement::new(
                    vec![(x - dx, y - dy), (x + dx, y + dy)],
                    c.stroke(color, 1.3),
                ))?;
            }
            Ok(())
        }
        (_, Some(outline)) => {
            let at: Vec<(i32, i32)> = outline.iter().map(|&(dx, dy)| (x + dx, y + dy)).collect();
            if hollow {
                let closed: Vec<(i32, i32)> = at.iter().copied().chain(at.first().copied()).collect();
                area.draw(&PathElement::new(closed, style))
            } else {
                area.draw(&Polygon::new(at, style))
            }
        }
        (_, None) => area.draw(&Circle::new((x, y), r, style)),
    }
}

/// What a legend entry's sample shows.
#[derive(Debug, Clone, Copy)]
enum Sample {
    /// Series i, in its look.
    Series(usize),
    /// The key: simulated values.
    Simulated,
    /// The key: an inexact strategy.
    Inexact,
    /// The key: a closed form.
    Exact,
    /// The key: the shaded interval.
    Band,
    /// The reference line.
    Reference,
}

struct Entry {
    text: String,
    sample: Sample,
}

/// One entry per series, then a key to the styles the chart uses.
fn legend_entries(chart: &LineChart) -> Vec<Entry> {
    let mut entries: Vec<Entry> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| Entry {
            text: if s.inexact {
                format!("{} (inexact)", s.label)
            } else {
                s.label.clone()
            },
            sample: Sample::Series(i),
        })
        .collect();
    let any = |f: &dyn Fn(&super::Series) -> bool| chart.series.iter().any(f);
    let key = [
        (
            any(&|s| !s.points.is_empty() && !s.inexact),
            Sample::Simulated,
            "simulated",
        ),
        (
            any(&|s| !s.points.is_empty() && s.inexact),
            Sample::Inexact,
            "inexact gradient (simulated)",
        ),
        (any(&|s| !s.exact.is_empty()), Sample::Exact, "exact (closed form)"),
        (
            any(&|s| s.points.iter().any(|p| p.band.is_some())),
            Sample::Band,
            "95% interval",
        ),
    ];
    entries.extend(key.into_iter().filter(|k| k.0).map(|(_, sample, text)| Entry {
        text: text.to_string(),
        sample,
    }));
    if let Some(r) = chart.reference_y {
        entries.push(Entry {
            text: format!("reference: {}", AxisFormat::for_ticks(&[r], false).format(r)),
            sample: Sample::Reference,
        });
    }
    entries
}

/// Where each entry goes in a legend column: one under the other, a
/// little space before the key to the styles.
fn beside(entries: &[Entry], c: &Canvas) -> Vec<(i32, i32)> {
    let mut y = c.em(1.2);
    let mut places = Vec::new();
    let mut keys_started = false;
    for e in entries {
        if !keys_started && !matches!(e.sample, Sample::Series(_)) {
            keys_started = true;
            y += c.em(0.5);
        }
        places.push((c.em(0.6), y));
        y += c.em(1.45);
    }
    places
}

/// Where each entry goes in a legend below the plot, in rows as wide as
/// the figure (the key to the styles on rows of its own), and its height.
fn below(entries: &[Entry], widths: &[i32], c: &Canvas, width: i32) -> (Vec<(i32, i32)>, i32) {
    let (left, row) = (c.em(1.0), c.em(1.45));
    let (mut x, mut y) = (left, c.em(0.9));
    let mut places = Vec::new();
    let mut keys_started = false;
    for (e, &w) in entries.iter().zip(widths) {
        let full = c.em(3.6) + w;
        let new_keys = !keys_started && !matches!(e.sample, Sample::Series(_));
        keys_started |= new_keys;
        if x > left && (x + full > width || new_keys) {
            x = left;
            y += row;
        }
        places.push((x, y));
        x += full;
    }
    (places, y + c.em(0.9))
}

fn draw_legend<DB: DrawingBackend>(
    chart: &LineChart,
    entries: &[Entry],
    places: &[(i32, i32)],
    area: &DrawingArea<DB, Shift>,
    c: &Canvas,
) -> Drawn<DB> {
    let text = c.font(1.0).color(&BLACK);
    // The key shows markers and a pale line where the series do.
    let looks: Vec<Look> = (0..chart.series.len()).map(|i| look(chart, i)).collect();
    let with_markers = looks.iter().any(|l| l.markers);
    let pale = looks.iter().any(|l| l.line != l.color);
    for (e, &(x, y)) in entries.iter().zip(places) {
        let (x0, x1) = (x, x + c.em(2.4));
        let mid = (x0 + x1) / 2;
        let line = |color: RGBColor, pt: f64| PathElement::new(vec![(x0, y), (x1, y)], c.stroke(color, pt));
        let dashed = |color: RGBColor, pt: f64, dash: f64, gap: f64| {
            let (d, g) = (c.px(dash), c.px(gap));
            let pieces: Vec<PathElement<(i32, i32)>> = (0..)
                .map(|k| x0 + k * (d + g))
                .take_while(|&a| a < x1)
                .map(|a| PathElement::new(vec![(a, y), ((a + d).min(x1), y)], c.stroke(color, pt)))
                .collect();
            pieces
        };
        match e.sample {
            Sample::Series(i) => {
                let l = look(chart, i);
                let s = &chart.series[i];
                if s.points.is_empty() {
                    for p in dashed(l.color, EXACT_PT, 3.5, 2.2) {
                        area.draw(&p)?;
                    }
                } else if l.inexact {
                    for p in dashed(l.line, INEXACT_PT, 1.2, 2.4) {
                        area.draw(&p)?;
                    }
                } else {
                    area.draw(&line(l.line, SIMULATED_PT))?;
                }
                if l.markers {
                    marker(area, c, (mid, y), l.marker, l.color, l.inexact)?;
                }
            }
            Sample::Simulated => {
                area.draw(&line(if pale { tint(KEY, 0.45) } else { KEY }, SIMULATED_PT))?;
                if with_markers {
                    marker(area, c, (mid, y), Marker::Circle, KEY, false)?;
                }
            }
            Sample::Inexact => {
                for p in dashed(KEY, INEXACT_PT, 1.2, 2.4) {
                    area.draw(&p)?;
                }
                if with_markers {
                    marker(area, c, (mid, y), Marker::Circle, KEY, true)?;
                }
            }
            Sample::Exact => {
                for p in dashed(KEY, EXACT_PT, 3.5, 2.2) {
                    area.draw(&p)?;
                }
            }
            Sample::Band => {
                let h = c.em(0.45);
                area.draw(&Rectangle::new([(x0, y - h), (x1, y + h)], KEY.mix(0.25).filled()))?;
            }
            Sample::Reference => area.draw(&line(REFERENCE, REFERENCE_PT))?,
        }
        let (_, h) = c.measure(area, &e.text, 1.0);
        area.draw_text(&e.text, &text, (x1 + c.em(0.6), y - h / 2))?;
    }
    Ok(())
}
