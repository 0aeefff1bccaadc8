//! `gcsim trace import --from pytorch-ops`: the ST job's per-op trace
//! written out as the PyTorch profiler would record it (one Chrome-trace
//! file per rank, each op a `record_function` range on the CPU with its
//! copies on the GPU streams), imported back, and analysed: the rows are
//! the trace's own, and `gcsim whatif` on them gives the published
//! analysis.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gcsim::whatif::{OpTrace, OpType};
use serde_json::{Value, json};

use super::{data, matches_published};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gcsim-profiler-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One rank's ops in one step: (op type, start s, duration s, row).
type StepOps = Vec<(OpType, f64, f64, usize)>;

/// The trace's ops by rank, then step.
fn by_rank(trace: &OpTrace) -> BTreeMap<u32, BTreeMap<i64, StepOps>> {
    let mut ranks: BTreeMap<u32, BTreeMap<i64, StepOps>> = BTreeMap::new();
    for i in 0..trace.len() {
        ranks
            .entry(trace.rank[i])
            .or_default()
            .entry(trace.step[i])
            .or_default()
            .push((trace.optype[i], trace.start[i], trace.duration[i], i));
    }
    ranks
}

/// Writes one profiler trace per rank of `trace`. Each file has its own
/// `baseTimeNanoseconds` (1 ms apart), so that its `ts` must be moved onto
/// the job's clock; steps are 100 s apart. Compute ops are split over two
/// GPU streams, a zero-length op (gc) has no GPU copy, sends and receives
/// of one span become Megatron's combined range, and forward passes name
/// their microbatch. Kernels, CPU ops and the steps' GPU copies are noise
/// the reader must skip.
/// `only` keeps some steps. Events are written one per line, as the
/// profiler writes them.
fn write_profiler_traces(trace: &OpTrace, dir: &Path, world: u32, only: Option<&[i64]>) -> Vec<PathBuf> {
    let base = 1_700_000_000_000_000_000u64;
    let mut files = Vec::new();
    for (rank, mut steps) in by_rank(trace) {
        if let Some(only) = only {
            steps.retain(|s, _| only.contains(s));
        }
        let file_base = base + u64::from(rank) * 1_000_000;
        // Microseconds on this file's clock of a time on the job's clock.
        let ts = |t_us: f64| t_us - (file_base - base) as f64 / 1000.0;
        let mut events = vec![json!({"ph": "M", "name": "process_name", "args": {"name": "python"}})];
        let mut external = 1u64;
        for (k, (step, ops)) in steps.iter().enumerate() {
            let origin = 1e8 * (k as f64 + 1.0);
            let end = ops.iter().map(|o| o.1 + o.2).fold(0.0, f64::max);
            events.push(
                json!({"ph": "X", "cat": "user_annotation", "name": format!("ProfilerStep#{step}"),
                "pid": 1, "tid": 1, "ts": ts(origin - 1000.0), "dur": end * 1e6 + 2000.0,
                "args": {"External id": external}}),
            );
            events.push(
                json!({"ph": "X", "cat": "gpu_user_annotation", "name": format!("ProfilerStep#{step}"),
                "pid": 0, "tid": 7, "ts": ts(origin), "dur": end * 1e6, "args": {"External id": external}}),
            );
            external += 1;
            // A receive recorded with the same span as a send is the second
            // op of a combined range, written with its send.
            let pair = |op: OpType| match op {
                OpType::ForwardSend => Some((OpType::BackwardRecv, "forward-send-backward-recv")),
                OpType::BackwardSend => Some((OpType::ForwardRecv, "backward-send-forward-recv")),
                _ => None,
            };
            let mut used = vec![false; ops.len()];
            let mut combined = vec![None; ops.len()];
            for (j, &(op, start, dur, _)) in ops.iter().enumerate() {
                if let Some((recv, name)) = pair(op) {
                    let p = ops.iter().position(|o| o.0 == recv && o.1 == start && o.2 == dur);
                    if let Some(p) = p.filter(|&p| !used[p]) {
                        used[p] = true;
                        combined[j] = Some(name);
                    }
                }
            }
            // Newest first: the profiler does not order ranges by start.
            for (j, &(op, start, dur, row)) in ops.iter().enumerate().rev() {
                if used[j] {
                    continue;
                }
                let mut name = combined[j].unwrap_or(op.name()).to_string();
                if op == OpType::ForwardCompute {
                    name += &format!(" mb={}", trace.seq_id[row]);
                }
                let (s, d) = (origin + start * 1e6, dur * 1e6);
                events.push(
                    json!({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1,
                    "ts": ts(s - 40.0), "dur": 12.5, "args": {"External id": external}}),
                );
                if dur == 0.0 {
                    // No GPU work: the CPU range is the op.
                    let last = events.last_mut().unwrap();
                    last["ts"] = json!(ts(s));
                    last["dur"] = json!(0.0);
                } else if op.is_compute() {
                    for (tid, from, to) in [(7, 0.0, 0.6), (8, 0.3, 1.0)] {
                        events.push(json!({"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": 0,
                            "tid": tid, "ts": ts(s + from * d), "dur": (to - from) * d,
                            "args": {"External id": external}}));
                    }
                    events.push(
                        json!({"ph": "X", "cat": "kernel", "name": "ampere_sgemm", "pid": 0, "tid": 7,
                        "ts": ts(s), "dur": d / 2.0, "args": {"External id": external, "correlation": 9}}),
                    );
                } else {
                    events.push(json!({"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": 0,
                        "tid": 9, "ts": ts(s), "dur": d, "args": {"External id": external}}));
                }
                events.push(
                    json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                    "ts": ts(s - 30.0), "dur": 3}),
                );
                external += 1;
            }
        }
        let events: Vec<String> = events.iter().map(Value::to_string).collect();
        let body = format!(
            "{{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": {world}}},\n  \"traceEvents\": [\n  {}\n  ],\n  \"baseTimeNanoseconds\": {file_base}\n}}\n",
            events.join(",\n  ")
        );
        let path = dir.join(format!("rank{rank}.pt.trace.json"));
        std::fs::write(&path, body).unwrap();
        files.push(path);
    }
    files
}

fn import(files: &[PathBuf], layout: &str, out: &Path) -> String {
    let result = Command::cargo_bin("gcsim")
        .unwrap()
        .args(["trace", "import", "--from", "pytorch-ops", "--layout", layout])
        .args(files)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr).to_string();
    assert!(result.status.success(), "{stderr}");
    stderr
}

/// The ST job, recorded by the profiler and imported: every op comes back
/// with its rank, place, step, type, times and numbering, and the analysis
/// of the import is the artifact's.
#[test]
fn a_profiled_pipeline_job_imports_to_its_per_op_trace() {
    let trace = OpTrace::read(&data("trace-ST.parquet")).unwrap();
    let dir = scratch("st");
    let files = write_profiler_traces(&trace, &dir, 8, None);
    let out = dir.join("ops.csv");
    let stderr = import(&files, "dp=2,pp=4", &out);
    assert!(
        stderr.contains(&format!("imported {} ops (32 steps, 8 ranks)", trace.len())),
        "{stderr}"
    );
    assert!(stderr.contains("read back by gcsim whatif: S = 1.1787"), "{stderr}");

    let back = OpTrace::read(&out).unwrap();
    assert_eq!(back.len(), trace.len());
    let key = |t: &OpTrace, i: usize| (t.step[i], t.rank[i], t.optype[i], t.seq_id[i]);
    let mut rows: BTreeMap<_, usize> = (0..trace.len()).map(|i| (key(&trace, i), i)).collect();
    for j in 0..back.len() {
        let i = rows
            .remove(&key(&back, j))
            .unwrap_or_else(|| panic!("{:?} not in the trace", key(&back, j)));
        assert_eq!(
            (back.dp_rank[j], back.stage[j], back.mc[j], back.gmc[j]),
            (trace.dp_rank[i], trace.stage[i], trace.mc[i], trace.gmc[i]),
            "row {j}"
        );
        for (what, got, want) in [
            ("start", back.start[j], trace.start[i]),
            ("duration", back.duration[j], trace.duration[i]),
        ] {
            assert!((got - want).abs() < 1e-9, "row {j}: {what} {got} against {want}");
        }
    }
    assert!(rows.is_empty());

    let report = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("whatif")
        .arg(&out)
        .args(["--layout", "dp=2,pp=4", "--format", "json"])
        .output()
        .unwrap();
    assert!(report.status.success());
    let got: Value = serde_json::from_slice(&report.stdout).unwrap();
    matches_published("ST", 1.1787021836556841, &got);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Tensor-parallel peers record the same ops: the lowest rank of each
/// (dp rank, stage) is kept, placed by Megatron-LM's rank order.
#[test]
fn tensor_parallel_peers_are_skipped() {
    let trace = OpTrace::read(&data("trace-ST.parquet")).unwrap();
    let dir = scratch("tp");
    // Under tp=2 the ST ranks r become 2r (tp rank 0) and 2r + 1 (its peer).
    let mut files = Vec::new();
    for path in write_profiler_traces(&trace, &dir, 16, None) {
        let text = std::fs::read_to_string(&path).unwrap();
        let rank: u32 = path.file_name().unwrap().to_str().unwrap()[4..]
            .split('.')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        for (peer, to) in [(0, 2 * rank), (1, 2 * rank + 1)] {
            let renamed = text.replace(&format!("\"rank\": {rank},"), &format!("\"rank\": {to},"));
            let p = dir.join(format!("tp{peer}-rank{to}.json"));
            std::fs::write(&p, renamed).unwrap();
            files.push(p);
        }
    }
    let out = dir.join("ops.csv");
    let stderr = import(&files, "dp=2,pp=4,tp=2", &out);
    assert!(
        stderr.contains("8 files of its tensor- or context-parallel peers were skipped"),
        "{stderr}"
    );
    let back = OpTrace::read(&out).unwrap();
    assert_eq!(back.len(), trace.len());
    for j in 0..back.len() {
        assert_eq!(back.rank[j] % 2, 0);
        // rank = tp + 2 (dp + 2 stage)
        assert_eq!(back.rank[j] / 2, back.dp_rank[j] + 2 * back.stage[j]);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The guide's example files are the ST job's steps 23 and 25 as this
/// generator writes them; `GCSIM_BLESS=1` rewrites them.
#[test]
fn the_guides_profiler_files_are_the_st_jobs() {
    let trace = OpTrace::read(&data("trace-ST.parquet")).unwrap();
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/src/commands/traces.in/profiler");
    let dir = scratch("guide");
    let files = write_profiler_traces(&trace, &dir, 8, Some(&[23, 25]));
    assert_eq!(files.len(), 8);
    for file in files {
        let shown = guide.join(file.file_name().unwrap());
        let made = std::fs::read(&file).unwrap();
        if std::env::var_os("GCSIM_BLESS").is_some() {
            std::fs::create_dir_all(&guide).unwrap();
            std::fs::write(&shown, &made).unwrap();
        }
        assert!(
            std::fs::read(&shown).ok() == Some(made),
            "{} is not the generator's; GCSIM_BLESS=1 rewrites it",
            shown.display()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Each refusal is one line naming the flag or file and what is accepted.
#[test]
fn bad_imports_are_refused_in_one_line() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/src/commands/traces.in/profiler");
    let all: Vec<PathBuf> = (0..8).map(|r| guide.join(format!("rank{r}.pt.trace.json"))).collect();
    let dir = scratch("bad");
    let no_rank = dir.join("no-rank.json");
    std::fs::write(
        &no_rank,
        r#"{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 5}]}"#,
    )
    .unwrap();
    let no_ops = dir.join("no-ops.json");
    std::fs::write(
        &no_ops,
        r#"{"distributedInfo": {"rank": 0}, "traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 5}]}"#,
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, Vec<&Path>, &str)> = vec![
        (vec![], vec![&all[0]], "--from pytorch-ops needs --layout dp=D,pp=P"),
        (
            vec!["--layout", "dp=2"],
            all.iter().map(PathBuf::as_path).collect(),
            "--layout must give dp= and pp=",
        ),
        (
            vec!["--layout", "dp=2,pp=3"],
            vec![&all[0]],
            "rank0.pt.trace.json: distributedInfo.world_size is 8 but --layout gives dp·pp·tp·cp = 6",
        ),
        (
            vec!["--layout", "dp=2,pp=4"],
            vec![&all[0], &all[1]],
            "no file records dp rank 0 of stage 1 (rank 2 under --layout)",
        ),
        (
            vec!["--layout", "dp=2,pp=4,vpp=2"],
            all.iter().map(PathBuf::as_path).collect(),
            "--layout vpp=2 needs each compute range to name its model chunk",
        ),
        (
            vec!["--layout", "dp=1,pp=1"],
            vec![&no_rank],
            "no-rank.json: no distributedInfo.rank",
        ),
        (
            vec!["--layout", "dp=4294967295,pp=4294967295,tp=4294967295,cp=4294967295"],
            vec![&all[0]],
            "--layout: dp·pp·tp·cp is beyond 2⁶⁴ ranks",
        ),
        (
            vec!["--layout", "dp=1,pp=1"],
            vec![&no_ops],
            "no step has op ranges on every rank",
        ),
        (
            vec!["--layout", "dp=1,pp=1", "--columns", "step=a"],
            vec![&no_ops],
            "--columns and --time-unit apply to --from csv",
        ),
    ];
    for (flags, files, expected) in cases {
        let out = Command::cargo_bin("gcsim")
            .unwrap()
            .args(["trace", "import", "--from", "pytorch-ops"])
            .args(&flags)
            .args(&files)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{flags:?}: {stderr}");
    }
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args(["trace", "import", "--from", "pytorch", "--layout", "dp=2"])
        .arg(&all[0])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--layout places the ranks of --from pytorch-ops"));
    std::fs::remove_dir_all(dir).unwrap();
}
