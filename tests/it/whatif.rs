//! `gcsim whatif` against the published results of the what-if artifact of
//! Lin et al. (OSDI 2025) on its three shipped traces, against the
//! artifact's own analysis of a synthetic interleaved-pipeline trace (vpp =
//! 2, data/whatif/synthetic), on small traces written by hand whose
//! slowdowns are worked out on paper, and on the ST job imported from the
//! PyTorch profiler's traces of it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gcsim::whatif::{Analysis, LayoutSpec, OpTrace};
use serde_json::Value;

mod errors;
mod figures;
mod hand;
mod profiler;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/whatif").join(name)
}

fn read_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(name)).unwrap()).unwrap()
}

/// A job's file: the artifact's jobs in data/whatif, the synthetic
/// interleaved one (VPP) in data/whatif/synthetic.
fn job_file(job: &str, kind: &str, ext: &str) -> String {
    let dir = if job == "VPP" { "synthetic/" } else { "" };
    format!("{dir}{kind}-{job}.{ext}")
}

/// `gcsim whatif trace-JOB.parquet --meta meta-JOB.yaml --format json`.
fn whatif_json(job: &str) -> Value {
    whatif_json_with(job, &[])
}

/// The same with more arguments.
fn whatif_json_with(job: &str, args: &[&str]) -> Value {
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("whatif")
        .arg(data(&job_file(job, "trace", "parquet")))
        .arg("--meta")
        .arg(data(&job_file(job, "meta", "yaml")))
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The artifact computes in float32 where gcsim uses float64: the published
/// values agree to about 1e-6 (the largest difference on either trace is
/// 1.5e-6 s in a step time). The tolerances are 0.5% for S, 1% for
/// the attributions and 0.02 for M_W and M_S; these are far tighter.
const TOL: f64 = 1e-5;

fn close(what: &str, got: &Value, want: &Value) {
    let (g, w) = (got.as_f64().unwrap_or(f64::NAN), want.as_f64().unwrap());
    assert!(
        (g - w).abs() <= TOL * w.abs().max(1.0),
        "{what}: {g} against the published {w}"
    );
}

/// Every published number of one job: S, the replay error, the step times,
/// the attributions by op type, dp rank and stage (overall, per step, and
/// their order), the per-step S, M_S and M_W.
fn matches_the_artifact(job: &str, s: f64) {
    matches_published(job, s, &whatif_json(job));
}

/// `got`, a `--format json` report, holds every published number of `job`.
fn matches_published(job: &str, s: f64, got: &Value) {
    let want = read_json(&job_file(job, "result", "json"));
    assert!(
        (got["slowdown"].as_f64().unwrap() / s - 1.0).abs() < 5e-5,
        "S {}",
        got["slowdown"]
    );
    close("S", &got["slowdown"], &want["blocking_slowdown"]);
    close("launch slowdown", &got["launch_slowdown"], &want["launch_slowdown"]);
    for (ours, theirs) in [
        ("by_optype", "optype"),
        ("by_dp_rank", "dp_rank"),
        ("by_stage", "stage"),
    ] {
        let published = want[format!("blocking_decompose_by_{theirs}")].as_object().unwrap();
        let keys: Vec<&String> = got[ours].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            published.keys().collect::<Vec<_>>(),
            "{ours}: the keys, largest first"
        );
        for (k, v) in published {
            close(&format!("{ours} {k}"), &got[ours][k], v);
        }
        let per_step = want[format!("blocking_decompose_by_{theirs}_per_step")]
            .as_object()
            .unwrap();
        for (step, values) in per_step {
            for (k, v) in values.as_object().unwrap() {
                close(
                    &format!("{ours} step {step} {k}"),
                    &got[format!("{ours}_per_step")][step][k],
                    v,
                );
            }
        }
    }
    for (step, v) in want["blocking_step_slowdown"].as_object().unwrap() {
        close(&format!("S of step {step}"), &got["by_step"][step], v);
    }
    let steps = got["steps"].as_array().unwrap();
    assert_eq!(steps.len(), want["step_t_base"].as_object().unwrap().len());
    for (i, step) in steps.iter().enumerate() {
        let key = step.to_string();
        close(
            &format!("measured {key}"),
            &got["step_measured"][i],
            &want["step_t_base"][&key],
        );
        close(
            &format!("replayed {key}"),
            &got["step_replay"][i],
            &want["step_t_nodelay"][&key],
        );
        close(
            &format!("ideal {key}"),
            &got["step_ideal"][i],
            &want["step_t_noblk"][&key],
        );
    }
    for (ours, file, key) in [("m_s", "ms", "Ms"), ("m_w", "mw", "Mw")] {
        let published = read_json(&job_file(job, file, "json"));
        close(key, &got[ours]["rem"], &published[key]);
        for k in ["trem", "tadd", "tori", "tideal", "add"] {
            close(&format!("{key} {k}"), &got[ours][k], &published[k]);
        }
    }
    // The replay with each op's launch delay reproduces every measured end.
    assert_eq!(got["replay_check"].as_f64(), Some(0.0));
}

#[test]
fn the_se_job_matches_the_published_analysis() {
    matches_the_artifact("SE", 1.5373613711484118);
    let got = whatif_json("SE");
    // M_W's ranks: dp 8 and dp 27 of the last stage (rank = 2 dp + 64 stage).
    assert_eq!(got["m_w"]["ranks"], serde_json::json!([80, 118]));
    assert_eq!(got["layout"]["ranks_in_trace"], 64);
    assert_eq!(got["layout"]["world"], 128);
}

#[test]
fn the_st_job_matches_the_published_analysis() {
    matches_the_artifact("ST", 1.1787021836556841);
    let got = whatif_json("ST");
    assert_eq!(got["m_w"]["ranks"], serde_json::json!([7]));
    // The heatmap's data: min(S_dp, S_stage) per (dp rank, stage).
    let scores = got["worker_scores"].as_array().unwrap();
    assert_eq!(scores.len(), 2);
    let s_stage3 = got["by_stage"]["3"].as_f64().unwrap();
    let s_dp1 = got["by_dp_rank"]["1"].as_f64().unwrap();
    assert_eq!(scores[1][3].as_f64(), Some(s_dp1.min(s_stage3)));
}

/// The synthetic interleaved job (dp 2, pp 4, vpp 2; its heavy last stage
/// and slow rank dp 1, stage 1) against the artifact's wia.py, compute_ms.py
/// and compute_mw.py run on it (data/whatif/synthetic/README.md).
#[test]
fn the_interleaved_job_matches_the_artifacts_analysis() {
    matches_the_artifact("VPP", 1.140633506948166);
    let got = whatif_json("VPP");
    assert_eq!(got["layout"]["vpp"], 2);
    let fitted = whatif_json_with("VPP", &["--mitigate", "--trials", "200"]);
    let flags = fitted["mitigations"]["flags"].as_str().unwrap();
    assert!(flags.contains("--microbatches 8 --schedule interleaved:2"), "{flags}");
    // M_W's rank: dp 1 of the last stage (rank = 2 stage + dp).
    assert_eq!(got["m_w"]["ranks"], serde_json::json!([7]));
}

/// AR: one worker slowed on purpose (dp 4 × pp 4 × tp 4, one tensor-parallel
/// rank of 4 recorded per place). M_W is about 1: idealising that rank
/// alone removes the whole slowdown; M_S is about 0.
#[test]
fn the_ar_job_matches_the_published_analysis() {
    matches_the_artifact("AR", 1.9730450967262543);
    let got = whatif_json("AR");
    assert_eq!(got["m_w"]["ranks"], serde_json::json!([0]));
    assert_eq!(got["layout"]["ranks_in_trace"], 16);
    assert_eq!(got["layout"]["world"], 64);
}

/// The CSV form of a trace gives the same analysis as its Parquet form.
#[test]
fn a_csv_trace_is_read_as_the_parquet_one() {
    let parquet = OpTrace::read(&data("trace-ST.parquet")).unwrap();
    let mut csv = String::from("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,gmc,mb_id\n");
    for i in 0..parquet.len() {
        csv.push_str(&format!(
            "{},{},{},{},{},{:?},{:?},{},{},{},-1\n",
            parquet.dp_rank[i],
            parquet.stage[i],
            parquet.rank[i],
            parquet.step[i],
            parquet.optype[i],
            parquet.start[i],
            parquet.duration[i],
            parquet.seq_id[i],
            parquet.mc[i],
            parquet.gmc[i]
        ));
    }
    let from_csv = OpTrace::from_csv("st.csv", &csv).unwrap();
    let spec = LayoutSpec::from_yaml(&data("meta-ST.yaml")).unwrap();
    let a = Analysis::new(&parquet, &spec).unwrap();
    let b = Analysis::new(&from_csv, &spec).unwrap();
    assert_eq!(a.slowdown, b.slowdown);
    assert_eq!(a.by_dp_rank, b.by_dp_rank);
    assert_eq!(a.m_w, b.m_w);
}

/// `--mitigate` on the three jobs: the fitted model's step against the
/// measured one, and the readings the guide gives: the heavy last stage of
/// ST and of the interleaved VPP job (fitted to `--schedule interleaved:2`)
/// is fixed by rebalancing the stages, the uneven sequences of SE by
/// balancing the microbatches; coding across replicas (each replica doing
/// twice the microbatches) is slower than the job in all three.
#[test]
fn mitigations_rank_as_the_guide_reads_them() {
    for (job, fit_bound, best) in [
        ("ST", 0.05, "rebalance the stages"),
        ("SE", 0.12, "balance the microbatches"),
        ("VPP", 0.05, "rebalance the stages"),
    ] {
        let report = whatif_json_with(job, &["--mitigate", "--trials", "2000"]);
        let m = &report["mitigations"];
        let error = m["fit_error"].as_f64().unwrap();
        assert!(error.abs() < fit_bound, "{job}: the fitted model is off by {error}");
        let rows = m["rows"].as_array().unwrap();
        let speedup = |r: &Value| r["speedup"].as_f64().unwrap();
        let top = rows.iter().max_by(|a, b| speedup(a).total_cmp(&speedup(b))).unwrap();
        assert_eq!(top["mitigation"], best, "{job}: {rows:?}");
        for r in rows
            .iter()
            .filter(|r| r["flags"].as_str().unwrap().starts_with("--scheme frc"))
        {
            assert!(speedup(r) < 1.0, "{job}: {r}");
        }
        // The exact mitigations keep all the data, dropping a replica of D
        // keeps (D − 1)/D, and a deadline at the step's median keeps less
        // than one at its 90th percentile, and is faster than the job.
        let data = |r: &Value| r["data_fraction"].as_f64().unwrap();
        let dp = m["model"]["dp"].as_f64().unwrap();
        for r in rows {
            let flags = r["flags"].as_str().unwrap();
            let want = if flags.starts_with("--scheme ignore") {
                Some((dp - 1.0) / dp)
            } else {
                (!flags.starts_with("--scheme timeout")).then_some(1.0)
            };
            if let Some(want) = want {
                assert!((data(r) - want).abs() < 1e-12, "{job}: {r}");
            }
        }
        let deadlines: Vec<&Value> = rows
            .iter()
            .filter(|r| r["flags"].as_str().unwrap().starts_with("--scheme timeout"))
            .collect();
        assert_eq!(deadlines.len(), 2, "{job}: {rows:?}");
        let (median, p90) = (deadlines[0], deadlines[1]);
        assert!(
            0.0 < data(median) && data(median) < data(p90) && data(p90) < 1.0,
            "{job}: {deadlines:?}"
        );
        assert!(speedup(median) > 1.0, "{job}: {median}");
    }
}

/// GPU-hours count a run of `--iterations-per-run` steps: 20 000 steps
/// cost exactly 20 times the default 1 000, row by row, and 0 is refused.
#[test]
fn mitigations_count_gpu_hours_over_a_run() {
    let rows = |args: &[&str]| {
        let all = [&["--mitigate", "--trials", "200"][..], args].concat();
        let report = whatif_json_with("ST", &all);
        let m = &report["mitigations"];
        let hours: Vec<f64> = m["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["gpu_hours"].as_f64().unwrap())
            .collect();
        (m["iterations_per_run"].as_u64().unwrap(), hours)
    };
    let (steps, default) = rows(&[]);
    let (long, run) = rows(&["--iterations-per-run", "20000"]);
    assert_eq!((steps, long), (1000, 20_000));
    assert_eq!(default.len(), run.len());
    for (a, b) in default.iter().zip(&run) {
        assert!(a > &0.0 && (b / a - 20.0).abs() < 1e-9, "{a} {b}");
    }
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("whatif")
        .arg(data(&job_file("ST", "trace", "parquet")))
        .args(["--meta", &data(&job_file("ST", "meta", "yaml")).to_string_lossy()])
        .args(["--mitigate", "--format", "json", "--iterations-per-run", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'0' for '--iterations-per-run"), "{stderr}");
    assert!(stderr.contains("accepted: a whole number"), "{stderr}");
    // A negative count is a value out of range, not an unknown flag.
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("whatif")
        .arg(data(&job_file("ST", "trace", "parquet")))
        .args(["--mitigate", "--iterations-per-run", "-1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'-1' for '--iterations-per-run"), "{stderr}");
}

/// The mitigations have no CSV: piped without `--format` they come as the
/// table a terminal shows; `--format csv` is refused naming the formats.
#[test]
fn mitigations_piped_are_the_table() {
    let run = |extra: &[&str]| {
        Command::cargo_bin("gcsim")
            .unwrap()
            .arg("whatif")
            .arg(data(&job_file("ST", "trace", "parquet")))
            .args(["--meta", &data(&job_file("ST", "meta", "yaml")).to_string_lossy()])
            .args(["--mitigate", "--trials", "200"])
            .args(extra)
            .output()
            .unwrap()
    };
    let piped = run(&[]);
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let table = String::from_utf8_lossy(&piped.stdout);
    assert!(
        table.starts_with("# whatif ") && table.contains("slowdown S"),
        "{table}"
    );
    let csv = run(&["--format", "csv"]);
    assert_eq!(csv.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&csv.stderr);
    assert!(stderr.contains("--mitigate writes a table or JSON"), "{stderr}");
}
