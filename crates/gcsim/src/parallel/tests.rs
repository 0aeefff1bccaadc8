use super::pipeline::{Times, stage_ops};
use super::*;

fn run(schedule: Schedule, p: usize, m: usize, compute: &[f64], share: f64, p2p: f64) -> Times {
    let mut times = Times::default();
    Program::new(schedule, p, m).run(compute, m, share, p2p, &mut times);
    times
}

#[test]
fn fixed_ops_take_m_plus_p_minus_1_rounds_under_both_schedules() {
    // x = 3, R = 2: f = 1 and b = 2 exactly, so every sum is exact.
    for schedule in [Schedule::GPipe, Schedule::OneFOneB] {
        for p in 1..=6 {
            for m in 1..=9 {
                let t = run(schedule, p, m, &vec![3.0; p * m], 1.0 / 3.0, 0.0);
                let makespan = t.free.iter().cloned().fold(0.0, f64::max);
                assert_eq!(makespan, ((m + p - 1) * 3) as f64, "{schedule:?} p={p} m={m}");
                // Every stage computes m·(f + b); the first ends last.
                assert!(t.busy.iter().all(|&b| b == (3 * m) as f64));
                assert_eq!(t.free[0], makespan);
            }
        }
    }
}

#[test]
fn one_f_one_b_orders_warm_up_steady_state_and_cool_down() {
    let names = |ops: Vec<Op>| -> String {
        ops.iter()
            .map(|o| format!("{}{}", if o.backward { 'B' } else { 'F' }, o.microbatch))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        names(stage_ops(Schedule::OneFOneB, 4, 0, 5)),
        "F0 F1 F2 F3 B0 F4 B1 B2 B3 B4"
    );
    assert_eq!(
        names(stage_ops(Schedule::OneFOneB, 4, 2, 5)),
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 B4"
    );
    assert_eq!(
        names(stage_ops(Schedule::OneFOneB, 4, 3, 5)),
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4"
    );
    // Fewer microbatches than warm-up slots: every forward, then the backwards.
    assert_eq!(names(stage_ops(Schedule::OneFOneB, 4, 0, 2)), "F0 F1 B0 B1");
    assert_eq!(names(stage_ops(Schedule::GPipe, 4, 1, 3)), "F0 F1 F2 B0 B1 B2");
}

#[test]
fn a_small_pipeline_by_hand() {
    // P = 2, m = 2, R = 1 (f = b = x/2), τ = 1, GPipe.
    // compute: stage 0: x = 2, 4 (f = 1, 2); stage 1: x = 6, 2 (f = 3, 1).
    // Stage 0: F0 [0,1], F1 [1,3].
    // Stage 1: F0 [max(0, 1+1)=2, 5], F1 [max(5, 3+1)=5, 6],
    //          B0 [max(6, 5)=6, 9], B1 [9, 10].
    // Stage 0: B0 [max(3, 9+1)=10, 11], B1 [max(11, 10+1)=11, 13].
    let t = run(Schedule::GPipe, 2, 2, &[2.0, 4.0, 6.0, 2.0], 0.5, 1.0);
    assert_eq!(t.forward_end, vec![1.0, 3.0, 5.0, 6.0]);
    assert_eq!(t.backward_end, vec![11.0, 13.0, 9.0, 10.0]);
    assert_eq!(t.free, vec![13.0, 10.0]);
    assert_eq!(t.busy, vec![6.0, 8.0]);
    // 1F1B: stage 0 warms up with one forward: F0 F1 B0 B1, the same here;
    // stage 1: F0 [2,5], B0 [5,8], F1 [max(8, 4)=8, 9], B1 [9, 10];
    // stage 0: B0 [max(3, 8+1)=9, 10], B1 [max(10, 11)=11, 13].
    let t = run(Schedule::OneFOneB, 2, 2, &[2.0, 4.0, 6.0, 2.0], 0.5, 1.0);
    assert_eq!(t.forward_end, vec![1.0, 3.0, 5.0, 9.0]);
    assert_eq!(t.backward_end, vec![10.0, 13.0, 8.0, 10.0]);
}

#[test]
fn layouts_parse_and_refuse_with_reasons() {
    let l = Layout::parse("dp=2, pp=4,tp=1").unwrap();
    assert_eq!((l.dp, l.pp, l.tp, l.ranks()), (2, 4, 1, 8));
    assert_eq!(Layout::parse("pp=3").unwrap().to_string(), "dp=1,pp=3,tp=1");
    assert_eq!(l.rank(1, 2, 0), 6);
    for (bad, says) in [
        ("dp=0", "dp=`0` is not a whole number >= 1"),
        ("dp=2,dp=3", "`dp` is given twice"),
        ("cp=2", "unknown key `cp`; accepted: dp, pp, tp"),
        ("dp", "`dp` is not KEY=VALUE"),
        ("dp=1e6,pp=1e6", "is over"),
        ("dp=1.5", "not a whole number"),
    ] {
        let e = Layout::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    assert!(
        Schedule::parse("interleaved")
            .unwrap_err()
            .contains("accepted: gpipe, 1f1b")
    );
    assert!(
        parse_stage_work("1,0,2")
            .unwrap_err()
            .contains("`0` is not a number > 0")
    );
    assert_eq!(parse_stage_work("1, 1.25").unwrap(), vec![1.0, 1.25]);
}

/// A stage's ops as `F3c1` (microbatch 3's forward of chunk 1).
fn chunk_names(ops: &[Op]) -> String {
    ops.iter()
        .map(|o| format!("{}{}c{}", if o.backward { 'B' } else { 'F' }, o.microbatch, o.chunk))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn interleaved_fixed_ops_shrink_the_bubble_by_v() {
    // Narayanan et al. 2021, §2.2.2: with f and b per stage and microbatch
    // (each chunk's op f/V or b/V) and τ = 0, an iteration takes
    // m·(f + b) + (P − 1)·(f + b)/V. x = 4V and shares of 1/4, 1/2 and 3/4
    // (R = 3, 1, 1/3) make every op a whole number, so every sum is exact.
    for share in [0.25, 0.5, 0.75] {
        for p in 2..=6 {
            for v in 1..=4 {
                for m in (p..=4 * p).step_by(p) {
                    let schedule = Schedule::Interleaved(v as u32);
                    let x = (4 * v) as f64;
                    let mut t = Times::default();
                    Program::new(schedule, p, m).run(&vec![x; p * m], m, share, 0.0, &mut t);
                    let makespan = t.free.iter().cloned().fold(0.0, f64::max);
                    let want = (m as f64) * x + (p - 1) as f64 * x / v as f64;
                    assert_eq!(makespan, want, "share={share} p={p} v={v} m={m}");
                    assert!(t.busy.iter().all(|&b| b == m as f64 * x), "{:?}", t.busy);
                    assert_eq!(t.free[0], makespan);
                }
            }
        }
    }
}

#[test]
fn interleaved_with_one_chunk_is_one_f_one_b_op_by_op() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64 + 0.01
    };
    for p in 1..=6 {
        for m in 1..=9 {
            for i in 0..p {
                assert_eq!(
                    stage_ops(Schedule::Interleaved(1), p, i, m),
                    stage_ops(Schedule::OneFOneB, p, i, m),
                    "p={p} i={i} m={m}"
                );
            }
            let (a, b) = (
                Program::new(Schedule::Interleaved(1), p, m),
                Program::new(Schedule::OneFOneB, p, m),
            );
            assert_eq!(a.order(), b.order());
            let compute: Vec<f64> = (0..p * m).map(|_| next()).collect();
            let (mut ta, mut tb) = (Times::default(), Times::default());
            a.run(&compute, m, 0.3, 0.07, &mut ta);
            b.run(&compute, m, 0.3, 0.07, &mut tb);
            assert_eq!(
                (ta.forward_end, ta.backward_end, ta.free, ta.busy),
                (tb.forward_end, tb.backward_end, tb.free, tb.busy)
            );
        }
    }
}

#[test]
fn interleaved_orders_follow_megatron() {
    // P = 4, V = 2, m = 8 (Narayanan et al. 2021, Figure 4). Stage 0 warms
    // up with 2·3 + 1·4 = 10 forwards, stage 3 with 4; the k-th forward is
    // chunk ⌊(k mod 8)/4⌋ of microbatch ⌊k/8⌋·4 + k mod 4, the k-th
    // backward the other chunk of the same microbatch.
    let s = Schedule::Interleaved(2);
    assert_eq!(
        chunk_names(&stage_ops(s, 4, 0, 8)),
        "F0c0 F1c0 F2c0 F3c0 F0c1 F1c1 F2c1 F3c1 F4c0 F5c0 \
         F6c0 B0c1 F7c0 B1c1 F4c1 B2c1 F5c1 B3c1 F6c1 B0c0 F7c1 B1c0 \
         B2c0 B3c0 B4c1 B5c1 B6c1 B7c1 B4c0 B5c0 B6c0 B7c0"
    );
    assert_eq!(
        chunk_names(&stage_ops(s, 4, 3, 8)),
        "F0c0 F1c0 F2c0 F3c0 \
         F0c1 B0c1 F1c1 B1c1 F2c1 B2c1 F3c1 B3c1 F4c0 B0c0 F5c0 B1c0 \
         F6c0 B2c0 F7c0 B3c0 F4c1 B4c1 F5c1 B5c1 F6c1 B6c1 F7c1 B7c1 \
         B4c0 B5c0 B6c0 B7c0"
    );
    // m = P: stage 0's warm-up is capped at every forward.
    assert_eq!(
        chunk_names(&stage_ops(s, 2, 0, 2)),
        "F0c0 F1c0 F0c1 F1c1 B0c1 B1c1 B0c0 B1c0"
    );
}

#[test]
fn a_small_interleaved_pipeline_by_hand() {
    // P = 2, V = 2, m = 2, R = 1, x = 4: every op takes 1; τ = 1.
    // Virtual stages: 0 = stage 0 chunk 0, 1 = stage 1 chunk 0,
    // 2 = stage 0 chunk 1, 3 = stage 1 chunk 1.
    // Stage 0 (warm-up 4): F0c0 [0,1] F1c0 [1,2];
    // stage 1 (warm-up 2): F0c0 [2,3] F1c0 [3,4];
    // stage 0: F0c1 [3+1=4,5] F1c1 [4+1=5,6] (back from stage 1: τ);
    // stage 1: F0c1 [6,7] B0c1 [7,8] F1c1 [8,9] B1c1 [9,10];
    // stage 0: B0c1 [8+1=9,10] B1c1 [10+1=11,12];
    // stage 1: B0c0 [10+1=11,12] B1c0 [12+1=13,14];
    // stage 0: B0c0 [12+1=13,14] B1c0 [14+1=15,16].
    let mut t = Times::default();
    Program::new(Schedule::Interleaved(2), 2, 2).run(&[4.0; 4], 2, 0.5, 1.0, &mut t);
    assert_eq!(t.forward_end, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0]);
    assert_eq!(t.backward_end, vec![14.0, 16.0, 12.0, 14.0, 10.0, 12.0, 8.0, 10.0]);
    assert_eq!(t.free, vec![16.0, 14.0]);
    assert_eq!(t.busy, vec![8.0, 8.0]);
}

#[test]
fn interleaved_parses_and_refuses_with_reasons() {
    assert_eq!(Schedule::parse("interleaved:2"), Ok(Schedule::Interleaved(2)));
    assert_eq!(Schedule::Interleaved(3).name(), "interleaved:3");
    assert_eq!(Schedule::parse(&Schedule::Interleaved(3).name()).unwrap().chunks(), 3);
    for bad in ["interleaved:0", "interleaved:x", "interleaved:1.5", "interleaved:65"] {
        let e = Schedule::parse(bad).unwrap_err();
        assert!(
            e.contains("is not a whole number of model chunks per stage from 1 to 64"),
            "{bad}: {e}"
        );
    }
    let layout = Layout { dp: 2, pp: 4, tp: 1 };
    let job = |m, v| Parallel {
        schedule: Schedule::Interleaved(v),
        ..Parallel::new(layout, m)
    };
    assert!(job(8, 2).check().is_ok());
    // One chunk is 1F1B, which takes any m.
    assert!(job(6, 1).check().is_ok());
    let (param, reason) = job(6, 2).check().unwrap_err();
    assert_eq!(param, crate::param::Param::Microbatches);
    assert_eq!(
        reason,
        "6 is not a multiple of pp=4; interleaved:2 runs the microbatches in groups of P: accepted: 4, 8, 12, ..."
    );
    let one_stage = Parallel {
        schedule: Schedule::Interleaved(2),
        ..Parallel::new(Layout { dp: 2, pp: 1, tp: 1 }, 4)
    };
    assert_eq!(one_stage.check().unwrap_err().0, crate::param::Param::PipelineSchedule);
}
