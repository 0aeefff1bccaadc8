//! Criterion benchmarks of the engine's parts, per trial of the headline
//! job (n = 100, s = 0..50, exponential, `fixed`, crc): drawing n variates
//! (the floor), one trial on each sampling path (also for a heterogeneous
//! cluster), and a whole small sweep.
//! The end-to-end comparison with NumPy is `bench/compare.sh`.
//!
//! `cargo bench --bench engine`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::rng::trial_rng;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Study, Workers};
use rand_distr::Distribution;

fn headline(trials: u64) -> Study {
    let n = 100;
    let schemes = (0..=50)
        .map(|s| {
            Scheme::new(
                SchemeKind::Crc,
                n,
                Params {
                    s: Some(s),
                    ..Params::default()
                },
            )
            .unwrap()
        })
        .collect();
    Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, trials, 0).unwrap()
}

fn per_trial(c: &mut Criterion) {
    let study = headline(1);
    let dist = Dist::exp(1.0).unwrap();
    let mut buf = vec![0.0; 100];
    let mut t = 0u64;
    c.bench_function("floor: draw 100 variates", |b| {
        b.iter(|| {
            t += 1;
            let mut rng = trial_rng(0, t);
            for x in buf.iter_mut() {
                *x = dist.sample(&mut rng);
            }
            black_box(&buf);
        })
    });
    let classes = Study::with_workers(
        100,
        Workers::Classes {
            classes: vec![(50, Dist::exp(1.0).unwrap()), (50, Dist::exp(0.5).unwrap())],
            shuffle: false,
        },
        LoadModel::Fixed,
        study.schemes().to_vec(),
        1,
        0,
    )
    .unwrap();
    for (name, study, sampling) in [
        ("trial, order statistics", &study, Sampling::OrderStatistics),
        ("trial, draws + sort", &study, Sampling::Draws),
        (
            "trial, 50 + 50 classes, merged order statistics",
            &classes,
            Sampling::OrderStatistics,
        ),
        ("trial, 50 + 50 classes, draws + sort", &classes, Sampling::Draws),
    ] {
        let plan = TrialPlan::with(study, RulePath::Fast, sampling);
        let mut scratch = plan.scratch();
        let mut out = vec![0.0; plan.slots()];
        let mut t = 0u64;
        c.bench_function(name, |b| {
            b.iter(|| {
                t += 1;
                plan.run(0, t, &mut scratch, &mut out);
                black_box(&out);
            })
        });
    }
}

fn sweep(c: &mut Criterion) {
    let study = headline(100_000);
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    group.bench_function("n=100 s=0..50, 100k trials", |b| {
        b.iter(|| engine::simulate(&study, &Silent))
    });
    group.finish();
}

criterion_group!(benches, per_trial, sweep);
criterion_main!(benches);
