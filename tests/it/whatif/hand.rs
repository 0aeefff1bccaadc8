//! Small traces written by hand, whose replay, ideal, S and attributions are
//! worked out on paper in the comments.

use gcsim::whatif::{Analysis, LayoutSpec, OpTrace};

/// One recorded op: (dp rank, stage, optype, seq, start, duration).
pub(super) type Op = (u32, u32, &'static str, u32, f64, f64);

/// A one-step trace in CSV, rank = dp·pp + stage; mc and gmc as the
/// artifact's profiler writes them (compute ops: chunk 0, global chunk =
/// stage; others -1).
pub(super) fn csv(pp: u32, ops: &[Op]) -> String {
    let mut text = String::from("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,gmc,mb_id\n");
    for &(dp, stage, optype, seq, start, duration) in ops {
        let compute = optype.ends_with("compute");
        let (mc, gmc, mb) = if compute {
            (0, stage as i64, seq as i64)
        } else {
            (-1, -1, -1)
        };
        let rank = dp * pp + stage;
        text.push_str(&format!(
            "{dp},{stage},{rank},7,{optype},{start},{duration},{seq},{mc},{gmc},{mb}\n"
        ));
    }
    text
}

fn analyse(pp: u32, ops: &[Op]) -> Analysis {
    let trace = OpTrace::from_csv("hand.csv", &csv(pp, ops)).unwrap();
    Analysis::new(&trace, &LayoutSpec::default()).unwrap()
}

fn near(what: &str, got: f64, want: f64) {
    assert!((got - want).abs() < 1e-12, "{what}: {got}, on paper {want}");
}

/// The ops after the last backward of a stage, all instantaneous except the
/// clip, which ends when the last member arrives.
fn tail(dp: u32, stage: u32, at: f64, clip_end: f64) -> Vec<Op> {
    vec![
        (dp, stage, "gc", 0, at, 0.0),
        (dp, stage, "layernorm-grads-all-reduce", 0, at, 0.0),
        (dp, stage, "optimizer-clip-main-grad", 0, at, clip_end - at),
        (dp, stage, "optimizer", 0, clip_end, 0.5),
    ]
}

/// Two data-parallel ranks, one stage, one microbatch; dp rank 1 runs its
/// forward pass at half speed. Measured: rank 0 F [0,1], B [1,3]; rank 1
/// F [0,2], B [2,4]; the clip waits for both (4), the optimizer takes 0.5:
/// the step is 4.5. Ideal: F = mean(1, 2) = 1.5, B = 2, optimizer 0.5: 4.
/// S = 4.5/4 = 1.125. Only dp rank 1 straggling: 1.125; only dp rank 0: 1.
/// Only the forward passes: rank 1 = 2 + 2 = 4, so 4.5/4 = 1.125; only the
/// backward passes: 1.5 + 2 + 0.5 = 4, so 1. M_W idealises rank 1 (the
/// worst 1 of 2: min(S_dp, S_stage) = 1.125 against 1): the slowdown is
/// all removed, M_W = 1; M_S (the only stage) also 1.
pub(super) fn slow_worker() -> Vec<Op> {
    let mut ops: Vec<Op> = vec![
        (0, 0, "forward-compute", 0, 0.0, 1.0),
        (0, 0, "backward-compute", 0, 1.0, 2.0),
        (1, 0, "forward-compute", 0, 0.0, 2.0),
        (1, 0, "backward-compute", 0, 2.0, 2.0),
        (0, 0, "embedding-grads-all-reduce", 0, 3.0, 0.0),
        (1, 0, "embedding-grads-all-reduce", 0, 4.0, 0.0),
    ];
    ops.extend(tail(0, 0, 3.0, 4.0));
    ops.extend(tail(1, 0, 4.0, 4.0));
    ops
}

#[test]
fn one_slow_worker() {
    let a = analyse(1, &slow_worker());
    near("measured", a.step_measured[0], 4.5);
    near("replayed", a.step_replay[0], 4.5);
    near("ideal", a.step_ideal[0], 4.0);
    near("S", a.slowdown, 1.125);
    near("S dp 1", a.by_dp_rank.get("1").unwrap(), 1.125);
    near("S dp 0", a.by_dp_rank.get("0").unwrap(), 1.0);
    near("S forward", a.by_optype.get("forward-compute").unwrap(), 1.125);
    near("S backward", a.by_optype.get("backward-compute").unwrap(), 1.0);
    assert_eq!(a.m_w.ranks, vec![1]);
    near("M_W", a.m_w.rem.unwrap(), 1.0);
    near("M_S", a.m_s.rem.unwrap(), 1.0);
    near("replay error", a.replay_error, 0.0);
}

/// One data-parallel rank, two stages, two microbatches in 1F1B; stage 1
/// does twice stage 0's work (f = 1, b = 2 on stage 0; f = 2, b = 4 on
/// stage 1), transfers instantaneous, then every step ends with the
/// optimizer's 0.5 (left out of the times below, added in the test).
/// Measured: stage 0 F0 [0,1] F1 [1,2]; stage 1 F0 [1,3] B0 [3,7] F1 [7,9]
/// B1 [9,13]; stage 0 B0 [7,9] B1 [13,15]: 15.
/// Ideal f = 1.5, b = 3: (M + P − 1)(f + b) = 3 · 4.5 = 13.5, S = 15/13.5.
/// Only stage 1 at its times: stage 1 F0 [1.5,3.5] B0 [3.5,7.5] F1
/// [7.5,9.5] B1 [9.5,13.5], stage 0 B1 [13.5,16.5]: 16.5/13.5. Only stage 0:
/// stage 1 F0 [1,2.5] B0 [2.5,5.5] F1 [5.5,7] B1 [7,10], stage 0 B1 [10,12]:
/// 12/13.5. Only the forwards: 14/13.5; only the backwards: 14.5/13.5.
/// M_S: idealising stage 1 in the replay gives 12, so (15 − 12)/(15 − 13.5)
/// = 2, more than the whole slowdown (stage 0 is faster than the mean); the
/// worst rank is stage 1's (min(10/9, 11/9) against min(10/9, 8/9)), so
/// M_W = M_S.
pub(super) fn heavy_stage() -> Vec<Op> {
    let mut ops: Vec<Op> = vec![
        (0, 0, "forward-compute", 0, 0.0, 1.0),
        (0, 0, "forward-send", 0, 1.0, 0.0),
        (0, 0, "forward-compute", 1, 1.0, 1.0),
        (0, 0, "forward-send", 1, 2.0, 1.0),
        (0, 0, "backward-recv", 0, 2.0, 5.0),
        (0, 0, "backward-compute", 0, 7.0, 2.0),
        (0, 0, "backward-recv", 1, 9.0, 4.0),
        (0, 0, "backward-compute", 1, 13.0, 2.0),
        (0, 0, "embedding-grads-all-reduce", 0, 15.0, 0.0),
        (0, 1, "forward-recv", 0, 0.0, 1.0),
        (0, 1, "forward-compute", 0, 1.0, 2.0),
        (0, 1, "forward-recv", 1, 3.0, 0.0),
        (0, 1, "backward-compute", 0, 3.0, 4.0),
        (0, 1, "backward-send", 0, 7.0, 0.0),
        (0, 1, "forward-compute", 1, 7.0, 2.0),
        (0, 1, "backward-compute", 1, 9.0, 4.0),
        (0, 1, "backward-send", 1, 13.0, 0.0),
        (0, 1, "embedding-grads-all-reduce", 0, 13.0, 2.0),
    ];
    ops.extend(tail(0, 0, 15.0, 15.0));
    ops.extend(tail(0, 1, 15.0, 15.0));
    ops
}

#[test]
fn one_heavy_stage() {
    let a = analyse(2, &heavy_stage());
    near("measured", a.step_measured[0], 15.5);
    near("replayed", a.step_replay[0], 15.5);
    near("ideal", a.step_ideal[0], 14.0);
    near("S", a.slowdown, 15.5 / 14.0);
    near("S stage 1", a.by_stage.get("1").unwrap(), 17.0 / 14.0);
    near("S stage 0", a.by_stage.get("0").unwrap(), 12.5 / 14.0);
    near("S forward", a.by_optype.get("forward-compute").unwrap(), 14.5 / 14.0);
    near("S backward", a.by_optype.get("backward-compute").unwrap(), 15.0 / 14.0);
    near("M_S", a.m_s.rem.unwrap(), 2.0);
    assert_eq!(a.m_w.ranks, vec![1]);
    near("M_W", a.m_w.rem.unwrap(), 2.0);
    near("replay check", a.replay_check, 0.0);
}

/// `--mitigate` on the heavy-stage job: the fit is exact (stage work 3 and
/// 6 over their geometric mean √18, backward ratio 2, no spread), so the
/// fitted model's step is the measured 15.5, and rebalancing the stages
/// (4.5 on each) gives the ideal's 14.
#[test]
fn the_fitted_heavy_stage_is_the_measured_job_and_rebalancing_it_the_ideal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("heavy.csv");
    std::fs::write(&path, csv(2, &heavy_stage())).unwrap();
    let out = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "whatif",
            path.to_str().unwrap(),
            "--mitigate",
            "--trials",
            "200",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = &report["model"];
    let root = 18f64.sqrt();
    near("stage 0 work", model["stage_work"][0].as_f64().unwrap(), 3.0 / root);
    near("stage 1 work", model["stage_work"][1].as_f64().unwrap(), 6.0 / root);
    near("backward ratio", model["backward_ratio"].as_f64().unwrap(), 2.0);
    near("rank mu", model["rank_mu"][0].as_f64().unwrap(), root.ln());
    near("sigma", model["sigma"].as_f64().unwrap(), 0.0);
    near("microbatch sigma", model["microbatch_sigma"].as_f64().unwrap(), 0.0);
    near("optimizer time", model["optimizer_time"].as_f64().unwrap(), 0.5);
    let rows = report["mitigations"]["rows"].as_array().unwrap();
    let mean = |name: &str| {
        let row = rows
            .iter()
            .find(|r| r["mitigation"].as_str().unwrap().starts_with(name))
            .unwrap();
        row["mean"].as_f64().unwrap()
    };
    // The flags carry 6 significant digits and sigma 1e-9.
    assert!((mean("as fitted") - 15.5).abs() < 1e-4, "{}", mean("as fitted"));
    assert!(
        (mean("rebalance the stages") - 14.0).abs() < 1e-4,
        "{}",
        mean("rebalance the stages")
    );
    // One replica: nothing to code across, and it is said.
    let skipped = report["mitigations"]["not_modelled"].to_string();
    assert!(skipped.contains("one replica"), "{skipped}");
}
