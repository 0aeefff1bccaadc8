//! The loss of a training study against wall-clock time: one line per
//! configuration, the mean over its repeats with a 95% band.

use gcsim::export::{Digits, short};
use gcsim::train::report::TrainReport;
use gcsim::train::run::{Trained, Trajectory};

use super::{LineChart, Point, Series};

/// Points of the loss-against-time figure per line.
pub const CURVE_POINTS: usize = 200;

/// The loss against wall-clock time: per configuration, the mean over all
/// its runs of the loss reached by each time (the loss after the last
/// iteration done by then), with a 95% band (mean ± t·SE over the runs),
/// up to the time its first run ends (see [`mean_curve`]); inexact
/// configurations dotted.
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
            let points = mean_curve(&t.runs, horizon).into_iter().map(|(p, _)| p).collect();
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
            "n={}, {}, load {}{}; step {} {}; mean of all {} repeats at each time, 95% band",
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

/// The points of one configuration's curve from 0 to `horizon`, each with
/// the number of runs it averages: every run, at every point. A run's value
/// at x is its loss after the last iteration done by x; the curve stops
/// where the first run ends (a diverged or stalled run ends early), so
/// that no point averages a subset. A mean over only the runs still going
/// would jump each time one ends, by the difference between that run and
/// the rest, and look like a change in training.
pub fn mean_curve(runs: &[Trajectory], horizon: f64) -> Vec<(Point, usize)> {
    let end = runs
        .iter()
        .map(|r| *r.time.last().expect("the start is recorded"))
        .fold(f64::INFINITY, f64::min);
    (0..=CURVE_POINTS)
        .map(|i| horizon * i as f64 / CURVE_POINTS as f64)
        .take_while(|&x| x <= end)
        .map(|x| {
            let at: Vec<f64> = runs
                .iter()
                .map(|r| r.loss[r.time.partition_point(|&s| s <= x) - 1])
                .collect();
            let e = {
                let r0 = at[0];
                let mut m = gcsim::stats::moments::Moments::ZERO;
                at.iter().for_each(|&v| m.push(v, r0));
                m.summarize(r0)
            };
            let point = Point {
                x,
                y: e.mean,
                band: e.ci95,
            };
            (point, at.len())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(time: &[f64], loss: &[f64]) -> Trajectory {
        Trajectory {
            time: time.to_vec(),
            loss: loss.to_vec(),
            metric: vec![0.0; time.len()],
            diverged: None,
            stalled: false,
        }
    }

    /// Runs of unequal length: every drawn point averages all three (a
    /// constant count), the curve stops where the shortest run ends, and
    /// each mean is that of the runs' carried values, so the curve has no
    /// jump where a run ends.
    #[test]
    fn every_point_averages_every_run() {
        let runs = [
            run(&[0.0, 1.0, 2.0, 3.0], &[1.0, 0.5, 0.4, 0.3]),
            run(&[0.0, 4.0, 8.0, 10.0], &[1.0, 0.2, 0.1, 0.05]),
            run(&[0.0, 0.5, 6.0], &[1.0, 0.9, 0.8]),
        ];
        let curve = mean_curve(&runs, 10.0);
        assert!(curve.iter().all(|(_, count)| *count == runs.len()));
        let last = curve.last().unwrap().0.x;
        assert!(last <= 3.0 && last > 3.0 - 10.0 / CURVE_POINTS as f64, "{last}");
        for (p, _) in &curve {
            let carried: f64 = runs
                .iter()
                .map(|r| r.loss[r.time.partition_point(|&s| s <= p.x) - 1])
                .sum::<f64>()
                / runs.len() as f64;
            assert!((p.y - carried).abs() < 1e-12, "at {}: {} vs {carried}", p.x, p.y);
        }
    }
}
