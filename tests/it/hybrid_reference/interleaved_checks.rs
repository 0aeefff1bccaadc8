//! The reference's interleaved schedule checked on its own: its orders,
//! its deterministic limit (Narayanan et al. 2021, §2.2.2), a two-stage
//! case worked out by hand, and V = 1 as 1F1B.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::pipeline::Op;
use super::{Job, Law, Pipeline, Schedule, replica};

/// Ops written as `F3c1`: microbatch 3's forward of chunk 1.
fn ops(text: &str) -> Vec<Op> {
    text.split_whitespace()
        .map(|o| {
            let (j, c) = o[1..].split_once('c').unwrap();
            Op {
                backward: o.starts_with('B'),
                j: j.parse().unwrap(),
                c: c.parse().unwrap(),
            }
        })
        .collect()
}

/// P = 2, V = 2, m = 4: stage 0 warms up with 2·1 + 1·2 = 4 forwards,
/// stage 1 with 2; each group of two microbatches goes through chunk 0,
/// then chunk 1 (backwards: chunk 1, then chunk 0).
#[test]
fn interleaved_orders_run_groups_of_p_through_the_chunks() {
    let order = |i| Schedule::Interleaved(2).order(2, i, 4);
    assert_eq!(
        order(0),
        ops("F0c0 F1c0 F0c1 F1c1 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 B2c1 B3c1 B2c0 B3c0")
    );
    assert_eq!(
        order(1),
        ops("F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0")
    );
    for p in 1..=5 {
        for i in 0..p {
            for m in 1..=8 {
                assert_eq!(
                    Schedule::Interleaved(1).order(p, i, m),
                    Schedule::OneFOneB.order(p, i, m)
                );
            }
        }
    }
}

/// Every draw x = 3, R = 2, τ = 0: a stage's f + b = 3 per microbatch, a
/// chunk's ops 1/V and 2/V. An iteration takes m·3 + (P − 1)·3/V; V = 4
/// keeps the sums exact.
#[test]
fn interleaved_deterministic_limit_is_exact() {
    for p in 2..=5 {
        for v in [1, 2, 4] {
            for m in (p..=3 * p).step_by(p) {
                let job = Job {
                    worker: Law::Const(3.0),
                    ..Job::new(1, p, 1, m, Schedule::Interleaved(v))
                };
                let trial = job.evaluate(&job.draw(&mut Xoshiro256PlusPlus::seed_from_u64(0)));
                let want = (3 * m) as f64 + (3 * (p - 1)) as f64 / v as f64;
                assert_eq!(trial.time, want, "P={p} V={v} m={m}");
            }
        }
    }
}

/// P = 2, V = 2, m = 2, R = 1, every x = 4 (each op 1), τ = 1. Virtual
/// stages 0..3 are stage 0 chunk 0, stage 1 chunk 0, stage 0 chunk 1,
/// stage 1 chunk 1. Stage 0: F0c0 [0, 1], F1c0 [1, 2]; stage 1: F0c0
/// [2, 3], F1c0 [3, 4]; back to stage 0: F0c1 [4, 5], F1c1 [5, 6]; stage 1:
/// F0c1 [6, 7], B0c1 [7, 8], F1c1 [8, 9], B1c1 [9, 10]; stage 0: B0c1
/// [9, 10], B1c1 [11, 12]; stage 1: B0c0 [11, 12], B1c0 [13, 14]; stage 0:
/// B0c0 [13, 14], B1c0 [15, 16]. g = (16, 14); each last op takes 1.
#[test]
fn two_stages_two_chunks_by_hand() {
    let t = replica(&Pipeline::new(Schedule::Interleaved(2), 2, 2, 1.0, 1.0), &[4.0; 4]);
    assert_eq!(t.done, [16.0, 14.0]);
    assert_eq!(t.busy, [8.0, 8.0]);
    assert_eq!(t.last, [1.0, 1.0]);
}
