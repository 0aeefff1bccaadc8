//! What a training study answers: per configuration, when its runs reach
//! the target (mean over repeats with a 95% interval, and the share of
//! repeats that reached it), and which configuration gets there first.

use serde::Serialize;

use super::problem::Problem;
use super::run::{Trained, Trajectory};
use super::setup::RecipeError;
use crate::param::Param;
use crate::stats::moments::{MeanEstimate, Moments};

/// What a run must reach.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct Targets {
    /// The training objective at or below this.
    pub loss: Option<f64>,
    /// The test metric at or beyond this: accuracy at or above, mean
    /// squared error at or below.
    pub metric: Option<f64>,
}

impl Targets {
    /// The targets, each a finite number where given.
    pub fn new(loss: Option<f64>, metric: Option<f64>) -> Result<Self, RecipeError> {
        for (param, v) in [(Param::TargetLoss, loss), (Param::TargetMetric, metric)] {
            if let Some(value) = v.filter(|v| !v.is_finite()) {
                return Err(RecipeError::OutOfRange {
                    param,
                    value,
                    accepted: "a finite number",
                });
            }
        }
        Ok(Self { loss, metric })
    }

    /// Whether any target is set.
    pub fn any(&self) -> bool {
        self.loss.is_some() || self.metric.is_some()
    }

    /// Whether a state of loss `loss` and test metric `metric` meets every
    /// target set.
    pub fn met(&self, problem: Problem, loss: f64, metric: f64) -> bool {
        let metric_met = |m: f64| match problem {
            Problem::Logistic => metric >= m,
            Problem::LeastSquares => metric <= m,
        };
        self.any() && self.loss.is_none_or(|l| loss <= l) && self.metric.is_none_or(metric_met)
    }

    /// The first entry of `run` that meets the targets: (iteration, time).
    pub fn first(&self, problem: Problem, run: &Trajectory) -> Option<(usize, f64)> {
        (0..run.time.len())
            .find(|&t| self.met(problem, run.loss[t], run.metric[t]))
            .map(|t| (t, run.time[t]))
    }
}

/// One configuration's line of the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrainRow {
    /// The configuration, e.g. `crc s=3`.
    pub strategy: String,
    /// Whether its update is the exact full gradient.
    pub exact: bool,
    /// Independent runs.
    pub repeats: u64,
    /// The share of the runs that met the targets (none without a target).
    pub reached: Option<f64>,
    /// Mean time to the targets over the runs that met them.
    pub time_to_target: Option<f64>,
    /// 95% interval of that mean (Student's t over those runs).
    pub time_to_target_ci_low: Option<f64>,
    /// Upper end.
    pub time_to_target_ci_high: Option<f64>,
    /// Mean iterations (updates) to the targets over those runs.
    pub iterations_to_target: Option<f64>,
    /// Mean time per iteration (per update for the asynchronous
    /// strategies) over every run's iterations.
    pub time_per_iteration: Option<f64>,
    /// Mean training objective at the end, over the runs that neither
    /// diverged nor stalled.
    pub final_loss: Option<f64>,
    /// Mean test metric at the end, over the same runs.
    pub final_metric: Option<f64>,
    /// Mean wall-clock time of the whole run.
    pub final_time: Option<f64>,
    /// The share of runs whose loss stopped being finite (lower the step).
    pub diverged: f64,
    /// The share of runs stopped by an iteration that never ended (a code
    /// that cannot decode the arrived messages).
    pub stalled: f64,
}

/// The mean and 95% interval of `values`.
fn estimate(values: &[f64]) -> Option<MeanEstimate> {
    let r = *values.first()?;
    let mut m = Moments::ZERO;
    values.iter().for_each(|&v| m.push(v, r));
    Some(m.summarize(r))
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Each configuration's row.
pub fn rows(trained: &[Trained], problem: Problem, targets: &Targets) -> Vec<TrainRow> {
    trained
        .iter()
        .map(|t| {
            let runs = &t.runs;
            let firsts: Vec<(usize, f64)> = runs.iter().filter_map(|r| targets.first(problem, r)).collect();
            let times: Vec<f64> = firsts.iter().map(|f| f.1).collect();
            let iterations: Vec<f64> = firsts.iter().map(|f| f.0 as f64).collect();
            let time_to = estimate(&times);
            let finished: Vec<&Trajectory> = runs.iter().filter(|r| r.diverged.is_none() && !r.stalled).collect();
            let last = |v: &Vec<f64>| *v.last().expect("the start is recorded");
            let (total_time, total_iterations) = runs
                .iter()
                .filter(|r| r.time.len() > 1)
                .fold((0.0, 0usize), |(a, b), r| {
                    (a + r.time.last().expect("recorded"), b + r.time.len() - 1)
                });
            TrainRow {
                strategy: t.scheme.to_string(),
                exact: t.scheme.exact_gradient(),
                repeats: runs.len() as u64,
                reached: targets.any().then(|| firsts.len() as f64 / runs.len() as f64),
                time_to_target: time_to.map(|e| e.mean),
                time_to_target_ci_low: time_to.and_then(|e| e.ci95).map(|c| c.0),
                time_to_target_ci_high: time_to.and_then(|e| e.ci95).map(|c| c.1),
                iterations_to_target: mean(&iterations),
                time_per_iteration: (total_iterations > 0).then(|| total_time / total_iterations as f64),
                final_loss: mean(&finished.iter().map(|r| last(&r.loss)).collect::<Vec<_>>()),
                final_metric: mean(&finished.iter().map(|r| last(&r.metric)).collect::<Vec<_>>()),
                final_time: mean(&finished.iter().map(|r| last(&r.time)).collect::<Vec<_>>()),
                diverged: runs.iter().filter(|r| r.diverged.is_some()).count() as f64 / runs.len() as f64,
                stalled: runs.iter().filter(|r| r.stalled).count() as f64 / runs.len() as f64,
            }
        })
        .collect()
}

/// Which configuration reaches the targets first: the smallest mean time
/// among those whose every run reached them, and its lead over the next,
/// paired by repeat (the configurations of one repeat share its draws).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The first configuration.
    pub first: String,
    /// Its mean time to the targets.
    pub time: f64,
    /// The next configuration, if another reached the targets in every run.
    pub next: Option<String>,
    /// The next one's mean time minus the first's, paired by repeat, with
    /// its 95% interval (Student's t over the repeats).
    pub lead: Option<f64>,
    /// Lower end.
    pub lead_ci_low: Option<f64>,
    /// Upper end.
    pub lead_ci_high: Option<f64>,
}

/// The verdict, if some configuration reached the targets in every run.
pub fn verdict(trained: &[Trained], rows: &[TrainRow], problem: Problem, targets: &Targets) -> Option<Verdict> {
    let mut complete: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].reached == Some(1.0) && rows[i].time_to_target.is_some())
        .collect();
    complete.sort_by(|&a, &b| {
        let (x, y) = (rows[a].time_to_target, rows[b].time_to_target);
        x.partial_cmp(&y).expect("finite times").then(a.cmp(&b))
    });
    let &first = complete.first()?;
    let times = |i: usize| -> Vec<f64> {
        trained[i]
            .runs
            .iter()
            .map(|r| targets.first(problem, r).expect("every run reached").1)
            .collect()
    };
    let (next, lead) = match complete.get(1) {
        Some(&second) => {
            let diffs: Vec<f64> = times(second).iter().zip(times(first)).map(|(b, a)| b - a).collect();
            (Some(rows[second].strategy.clone()), estimate(&diffs))
        }
        None => (None, None),
    };
    Some(Verdict {
        first: rows[first].strategy.clone(),
        time: rows[first].time_to_target.expect("checked above"),
        next,
        lead: lead.map(|e| e.mean),
        lead_ci_low: lead.and_then(|e| e.ci95).map(|c| c.0),
        lead_ci_high: lead.and_then(|e| e.ci95).map(|c| c.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{Params, Scheme, SchemeKind};

    fn run(time: &[f64], loss: &[f64], metric: &[f64]) -> Trajectory {
        Trajectory {
            time: time.to_vec(),
            loss: loss.to_vec(),
            metric: metric.to_vec(),
            diverged: None,
            stalled: false,
        }
    }

    #[test]
    fn the_first_state_meeting_every_target() {
        let r = run(&[0.0, 1.0, 2.5, 4.0], &[0.9, 0.5, 0.3, 0.2], &[0.5, 0.8, 0.92, 0.97]);
        let t = |loss, metric| Targets { loss, metric };
        assert_eq!(t(Some(0.4), None).first(Problem::Logistic, &r), Some((2, 2.5)));
        assert_eq!(t(Some(0.5), None).first(Problem::Logistic, &r), Some((1, 1.0)));
        // Accuracy at or above; both targets at once.
        assert_eq!(t(None, Some(0.95)).first(Problem::Logistic, &r), Some((3, 4.0)));
        assert_eq!(t(Some(0.6), Some(0.9)).first(Problem::Logistic, &r), Some((2, 2.5)));
        // Mean squared error at or below.
        assert_eq!(t(None, Some(0.85)).first(Problem::LeastSquares, &r), Some((0, 0.0)));
        assert_eq!(t(None, Some(0.1)).first(Problem::LeastSquares, &r), None);
        assert_eq!(t(None, None).first(Problem::Logistic, &r), None);
    }

    #[test]
    fn rows_and_verdict_pair_the_repeats() {
        let uncoded = Scheme::new(SchemeKind::Uncoded, 4, Params::default()).unwrap();
        let crc = Scheme::new(
            SchemeKind::Crc,
            4,
            Params {
                s: Some(1),
                ..Params::default()
            },
        )
        .unwrap();
        // Target loss 0.5: uncoded at 3, 5, 4; crc at 1, 2, 4 and once never.
        let trained = vec![
            Trained {
                scheme: uncoded,
                runs: vec![
                    run(&[0.0, 3.0], &[1.0, 0.4], &[0.0, 0.0]),
                    run(&[0.0, 5.0], &[1.0, 0.4], &[0.0, 0.0]),
                    run(&[0.0, 4.0], &[1.0, 0.4], &[0.0, 0.0]),
                ],
            },
            Trained {
                scheme: crc,
                runs: vec![
                    run(&[0.0, 1.0], &[1.0, 0.4], &[0.0, 0.0]),
                    run(&[0.0, 2.0, 3.0], &[1.0, 0.6, 0.5], &[0.0, 0.0, 0.0]),
                    run(&[0.0, 4.0], &[1.0, 0.6], &[0.0, 0.0]),
                ],
            },
        ];
        let targets = Targets {
            loss: Some(0.5),
            metric: None,
        };
        let rows = rows(&trained, Problem::Logistic, &targets);
        assert_eq!(rows[0].reached, Some(1.0));
        assert_eq!(rows[0].time_to_target, Some(4.0));
        // Student's t with 2 degrees of freedom: 4.303 · 1/√3.
        let half = 4.302_652_729_911_275 / 3f64.sqrt();
        assert!((rows[0].time_to_target_ci_low.unwrap() - (4.0 - half)).abs() < 1e-9);
        assert!((rows[0].time_to_target_ci_high.unwrap() - (4.0 + half)).abs() < 1e-9);
        assert_eq!(rows[0].iterations_to_target, Some(1.0));
        assert_eq!(rows[1].reached, Some(2.0 / 3.0));
        assert_eq!(rows[1].time_to_target, Some(2.0));
        assert_eq!(rows[1].iterations_to_target, Some(1.5));
        assert_eq!(rows[1].time_per_iteration, Some(8.0 / 4.0));
        assert_eq!(rows[1].final_loss, Some((0.4 + 0.5 + 0.6) / 3.0));
        // crc did not reach the target in every repeat: uncoded is first, alone.
        let v = verdict(&trained, &rows, Problem::Logistic, &targets).unwrap();
        assert_eq!((v.first.as_str(), v.time, v.next), ("uncoded", 4.0, None));
        // With a target crc always meets, the lead is paired: 3−1, 5−2, 4−4.
        let looser = Targets {
            loss: Some(0.65),
            metric: None,
        };
        let rows = super::rows(&trained, Problem::Logistic, &looser);
        let v = verdict(&trained, &rows, Problem::Logistic, &looser).unwrap();
        assert_eq!(v.first, "crc s=1");
        assert_eq!(v.next.as_deref(), Some("uncoded"));
        assert!((v.lead.unwrap() - 5.0 / 3.0).abs() < 1e-12);
    }
}
