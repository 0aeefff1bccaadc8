//! The loss of a training study against wall-clock time: one line per
//! configuration, the mean over its repeats with a 95% band.

use gcsim::export::{Digits, short};
use gcsim::train::report::TrainReport;
use gcsim::train::run::Trained;

use super::{LineChart, Point, Series};

/// Points of the loss-against-time figure per line.
pub const CURVE_POINTS: usize = 200;

/// The loss against wall-clock time: per configuration, the mean over its
/// runs of the loss reached by each time (the loss after the last
/// iteration done by then), with a 95% band (mean ± t·SE over the runs),
/// up to the time its slowest run ends; inexact configurations dotted.
pub fn loss_chart(report: &TrainReport, trained: &[Trained]) -> LineChart {
    let c = &report.config;
    // Where the targets are met: twice the slowest mean time to them; else
    // until the first configuration ends its iterations, so that every
    // line spans the axis.
    let ends = trained.iter().filter_map(|t| {
        t.runs
            .iter()
            .map(|r| *r.time.last().expect("the start is recorded"))
            .filter(|t| t.is_finite())
            .reduce(f64::max)
    });
    let slowest_to_target = report
        .rows
        .iter()
        .filter_map(|r| r.time_to_target)
        .reduce(f64::max)
        .filter(|t| *t > 0.0);
    let horizon = match slowest_to_target {
        Some(t) => (2.0 * t).min(ends.fold(0.0, f64::max)),
        None => ends.reduce(f64::min).unwrap_or(0.0),
    };
    let series = trained
        .iter()
        .map(|t| {
            let end = t
                .runs
                .iter()
                .map(|r| *r.time.last().expect("the start is recorded"))
                .fold(f64::INFINITY, f64::min);
            let points = (0..=CURVE_POINTS)
                .map(|i| horizon * i as f64 / CURVE_POINTS as f64)
                .take_while(|&x| x <= end)
                .map(|x| {
                    let at: Vec<f64> = t
                        .runs
                        .iter()
                        .map(|r| r.loss[r.time.partition_point(|&s| s <= x) - 1])
                        .collect();
                    let e = {
                        let r0 = at[0];
                        let mut m = gcsim::stats::moments::Moments::ZERO;
                        at.iter().for_each(|&v| m.push(v, r0));
                        m.summarize(r0)
                    };
                    Point {
                        x,
                        y: e.mean,
                        band: e.ci95,
                    }
                })
                .collect();
            Series {
                label: t.scheme.to_string(),
                scheme: t.scheme.kind(),
                points,
                exact: Vec::new(),
                flat: false,
                inexact: !t.scheme.exact_gradient(),
            }
        })
        .collect();
    LineChart {
        title: format!("Training loss against wall-clock time ({})", c.problem),
        caption: format!(
            "n={}, {}, load {}{}; step {} {}; mean of {} repeats, 95% band",
            c.n,
            c.dist,
            c.load_model,
            if c.comm == gcsim::comm::Comm::default().to_string() {
                String::new()
            } else {
                format!(", {}", c.comm)
            },
            short(c.step, &Digits::TICK),
            c.schedule,
            c.repeats
        ),
        x_label: "wall-clock time (unit of the worker times)".into(),
        y_label: "training loss".into(),
        series,
        reference_y: c.targets.loss,
        log_y: true,
        y_floor: None,
        integer_x: false,
        gaps: false,
    }
}
