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
