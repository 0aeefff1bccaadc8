//! S, the ideal and the attributions of one job (see the parent module).

use std::collections::BTreeSet;

use super::HybridFit;
use super::{Analysis, AttributionRow, Ideal, Job, Pick, Removal, mixed_replays, pick};
use crate::whatif::meta::Layout;
use crate::whatif::optype::OpType;
use crate::whatif::{PerStep, Ranked, WhatIfError};

/// Durations and transfer times per slot.
type Times<'a> = (&'a [f64], &'a [f64]);

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The median, the mean of the middle two for an even count (as pandas).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Each op type's ideal, and the ideal durations and transfers per slot.
pub(super) fn ideal(job: &Job<'_>) -> (Vec<Ideal>, Vec<f64>, Vec<f64>) {
    let lanes = job.lanes.lanes();
    let graph = job.graph;
    let mut d = job.duration.clone();
    let mut x = job.transfer.clone();
    let mut ideals = Vec::new();
    for t in OpType::ALL {
        let nodes: Vec<usize> = (0..graph.len()).filter(|&v| graph.nodes[v].optype == t).collect();
        if nodes.is_empty() {
            continue;
        }
        let slots = || nodes.iter().flat_map(|&v| v * lanes..(v + 1) * lanes);
        let durations: Vec<f64> = slots().map(|s| job.duration[s]).collect();
        let ops = durations.len();
        let (statistic, duration) = if t.ideal_is_median() {
            ("median", median(durations))
        } else {
            ("mean", mean(&durations))
        };
        let in_group = nodes.iter().any(|&v| graph.group_of[v].is_some());
        let transfer = in_group.then(|| median(slots().map(|s| job.transfer[s]).collect()));
        for s in slots() {
            d[s] = duration;
            x[s] = transfer.unwrap_or(duration);
        }
        ideals.push(Ideal {
            optype: t.name().to_string(),
            statistic,
            duration,
            transfer,
            ops,
        });
    }
    (ideals, d, x)
}

/// Per-step ratios T_g[s] / T_ideal[s] for each key, in `order`'s step order.
fn per_step<K: Clone + std::fmt::Display>(
    keys: &[K],
    times: &[Vec<f64>],
    ideal: &[f64],
    steps: &[i64],
    order: &[i64],
) -> PerStep<K> {
    PerStep(
        order
            .iter()
            .map(|&step| {
                let s = steps.binary_search(&step).unwrap_or(0);
                let entries = keys
                    .iter()
                    .zip(times)
                    .map(|(k, t)| (k.clone(), t[s] / ideal[s]))
                    .collect();
                (step, Ranked::descending(entries))
            })
            .collect(),
    )
}

/// One row per attribution, the job's S first.
fn rows(a: &Analysis) -> Vec<AttributionRow> {
    let mut rows = vec![AttributionRow {
        by: "all",
        key: String::new(),
        slowdown: a.slowdown,
    }];
    let mut add = |by: &'static str, entries: Vec<(String, f64)>| {
        rows.extend(
            entries
                .into_iter()
                .map(|(key, slowdown)| AttributionRow { by, key, slowdown }),
        );
    };
    let text = |r: &Ranked<u32>| r.0.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    add("optype", a.by_optype.0.clone());
    add("stage", text(&a.by_stage));
    add("dp_rank", text(&a.by_dp_rank));
    add("step", a.by_step.0.iter().map(|(k, v)| (k.to_string(), *v)).collect());
    rows
}

pub(super) fn analyse(job: &Job<'_>, layout: Layout, steps: Vec<i64>) -> Result<Analysis, WhatIfError> {
    let (delay, clipped_delays) = job.delays();
    let clipped_transfers = job.clipped_transfers;
    let replay_check = job.replay_check(&delay);
    let measured = (&job.duration[..], &job.transfer[..]);
    let step_measured = job.measured();
    let step_replay = job.step_times(measured.0, measured.1);
    let (ideals, d_ideal, x_ideal) = ideal(job);
    let ideal = (&d_ideal[..], &x_ideal[..]);
    let step_ideal = job.step_times(ideal.0, ideal.1);
    let (tori, tideal) = (mean(&step_replay), mean(&step_ideal));
    if tideal.is_nan() || tideal <= 0.0 {
        return Err(WhatIfError::new(format!(
            "{}: the ideal step takes no time (every op has duration 0); nothing to compare",
            job.trace().file
        )));
    }
    let slowdown = tori / tideal;
    let launch_slowdown = mean(&step_measured) / tori;

    let dp = layout.dp as usize;
    let graph = job.graph;
    let names: Vec<String> = graph
        .nodes
        .iter()
        .map(|n| n.optype.group_name().to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut selections: Vec<Pick> = names
        .iter()
        .map(|g| pick(job, |v, _| graph.nodes[v].optype.group_name() == g))
        .collect();
    selections.extend((0..dp).map(|k| pick(job, |_, d| d == k)));
    selections.extend((0..layout.pp).map(|st| pick(job, |v, _| graph.nodes[v].stage == st)));
    let times = mixed_replays(job, ideal, measured, &selections);
    let (t_optype, rest) = times.split_at(names.len());
    let (t_dp, t_stage) = rest.split_at(dp);
    let ratio = |t: &Vec<f64>| mean(t) / tideal;

    let by_step = Ranked::descending(
        steps
            .iter()
            .zip(&step_replay)
            .zip(&step_ideal)
            .map(|((&s, a), b)| (s, a / b))
            .collect(),
    );
    let order: Vec<i64> = by_step.0.iter().map(|e| e.0).collect();
    let dps: Vec<u32> = (0..layout.dp).collect();
    let stages: Vec<u32> = (0..layout.pp).collect();
    let by_optype = Ranked::descending(names.iter().cloned().zip(t_optype.iter().map(ratio)).collect());
    let by_dp_rank = Ranked::descending(dps.iter().copied().zip(t_dp.iter().map(ratio)).collect());
    let by_stage = Ranked::descending(stages.iter().copied().zip(t_stage.iter().map(ratio)).collect());
    let s_dp: Vec<f64> = t_dp.iter().map(ratio).collect();
    let s_stage: Vec<f64> = t_stage.iter().map(ratio).collect();
    let worker_scores: Vec<Vec<f64>> = s_dp
        .iter()
        .map(|&a| s_stage.iter().map(|&b| a.min(b)).collect())
        .collect();

    let (m_s, m_w) = metrics(job, &layout, (measured, ideal), (tori, tideal), &worker_scores);

    let mut analysis = Analysis {
        model: HybridFit::new(job, &ideals),
        rows: Vec::new(),
        file: job.trace().file.clone(),
        ops: job.trace().len(),
        ops_per_lane: graph.len(),
        by_optype_per_step: per_step(&names, t_optype, &step_ideal, &steps, &order),
        by_dp_rank_per_step: per_step(&dps, t_dp, &step_ideal, &steps, &order),
        by_stage_per_step: per_step(&stages, t_stage, &step_ideal, &steps, &order),
        layout,
        steps,
        step_measured,
        step_replay,
        step_ideal,
        slowdown,
        launch_slowdown,
        replay_error: launch_slowdown - 1.0,
        replay_check,
        clipped_delays,
        clipped_transfers,
        ideal: ideals,
        by_optype,
        by_dp_rank,
        by_stage,
        by_step,
        m_s,
        m_w,
        worker_scores,
    };
    analysis.rows = rows(&analysis);
    Ok(analysis)
}

/// M_S (idealising the last stage) and M_W (the worst 3% of ranks) in the
/// replay, with the share each restores alone in the ideal.
fn metrics(
    job: &Job<'_>,
    layout: &Layout,
    (measured, ideal): (Times<'_>, Times<'_>),
    (tori, tideal): (f64, f64),
    worker_scores: &[Vec<f64>],
) -> (Removal, Removal) {
    let dp = layout.dp as usize;
    let graph = job.graph;
    let removal = |ranks: Vec<u32>, chosen: Pick| -> Removal {
        let trem = mean(&mixed_replays(job, measured, ideal, std::slice::from_ref(&chosen))[0]);
        let tadd = mean(&mixed_replays(job, ideal, measured, std::slice::from_ref(&chosen))[0]);
        let share = |t: f64| (tori != tideal).then(|| t / (tori - tideal));
        Removal {
            ranks,
            trem,
            tadd,
            tori,
            tideal,
            rem: share(tori - trem),
            add: share(tadd - tideal),
        }
    };
    let last = layout.pp - 1;
    let m_s = removal(vec![last], pick(job, |v, _| graph.nodes[v].stage == last));
    let worst = worst_ranks(job, worker_scores, dp, layout.pp as usize);
    let chosen: Vec<(usize, u32)> = worst.iter().map(|&(_, d, s)| (d, s)).collect();
    let worst_ops = pick(job, |v, d| chosen.contains(&(d, graph.nodes[v].stage)));
    let m_w = removal(worst.iter().map(|w| w.0).collect(), worst_ops);

    (m_s, m_w)
}

/// The ⌈3%⌉ of the trace's ranks with the largest min(S_dp, S_stage),
/// smaller rank first on ties: (rank, dp rank, stage).
fn worst_ranks(job: &Job<'_>, scores: &[Vec<f64>], dp: usize, pp: usize) -> Vec<(u32, usize, u32)> {
    let rank_of = job.worker_ranks(dp, pp);
    let mut ranks: Vec<(u32, usize, u32, f64)> = rank_of
        .iter()
        .enumerate()
        .filter_map(|(w, r)| r.map(|r| (r, w / pp, (w % pp) as u32, scores[w / pp][w % pp])))
        .collect();
    ranks.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
    let n = (ranks.len() * 3).div_ceil(100);
    ranks.into_iter().take(n).map(|(r, d, s, _)| (r, d, s)).collect()
}
