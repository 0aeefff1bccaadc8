//! The parts of a trial plan that are read off the study once: its slots'
//! evaluations, their grouping by load, a replayed trace's sorted steps and
//! the codes that decode by identities.

use super::{Eval, LoadGroup, Sampling, async_reads_order_statistics, needs_identities};
use crate::codes::Code;
use crate::load::LoadModel;
use crate::study::{Study, Workers};
use std::sync::Arc;

/// One evaluation per slot: the study's schemes, then the baseline.
pub(super) fn evals(study: &Study, sampling: Sampling) -> Vec<Eval> {
    let baseline = study.baseline();
    study
        .schemes()
        .iter()
        .chain(std::iter::once(&baseline))
        .enumerate()
        .map(|(slot, s)| Eval {
            slot,
            load: s.load(),
            rule: s.rule(),
            group: usize::MAX,
            worker_loads: study.per_worker_loads(s).map(Arc::from),
            deadline: s.deadline(),
            // Memoryless K-async is its k-of-n rule on order statistics.
            strategy: s
                .strategy()
                .filter(|_| !(sampling == Sampling::OrderStatistics && async_reads_order_statistics(study, s))),
        })
        .collect()
}

/// The evaluations grouped by load: one group for every load when time
/// grows monotonely with load (the draws are shared), else one per load.
pub(super) fn load_groups(evals: &[Eval], model: LoadModel) -> Vec<LoadGroup> {
    let mut load_groups: Vec<LoadGroup> = Vec::new();
    for e in evals.iter().cloned() {
        let shared = model.is_monotone();
        match load_groups.iter_mut().find(|c| shared || c.load == e.load) {
            Some(c) => c.evals.push(e),
            None => load_groups.push(LoadGroup {
                load: e.load,
                evals: vec![e],
                needs_sort: false,
                only_k: None,
                group_sizes: Vec::new(),
            }),
        }
    }
    load_groups
}

/// A replayed trace's steps, each sorted, when it has one time per worker.
pub(super) fn replay_sorted(workers: &Workers, n: usize) -> Option<Arc<Vec<f64>>> {
    match workers {
        Workers::Replay(trace) if trace.workers() == n => Some(Arc::new(
            (0..trace.steps())
                .flat_map(|step| {
                    let mut times = trace.step(step).to_vec();
                    times.sort_unstable_by(f64::total_cmp);
                    times
                })
                .collect(),
        )),
        _ => None,
    }
}

/// Each slot's code, where a slot decodes by its code's identities.
pub(super) fn codes(study: &Study) -> Option<Arc<Vec<Option<Code>>>> {
    needs_identities(study).then(|| {
        let slots = study.schemes().iter().copied().chain(std::iter::once(study.baseline()));
        let codes = slots.map(|s| {
            study
                .decodes_by_code(&s)
                .then(|| study.code(&s).expect("the study checked that its codes build"))
        });
        Arc::new(codes.collect())
    })
}
