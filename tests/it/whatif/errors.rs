//! `gcsim whatif`'s refusals: each bad trace, metadata or layout gets one
//! line naming the file, row or flag and what is accepted.

use std::path::Path;

use super::hand::{Op, csv, heavy_stage, slow_worker};
use crate::errors::assert_usage_error;

/// Writes `text` as `name` in `dir` and expects `gcsim whatif` on it (with
/// `args`) to fail with a message holding every string of `expected`.
fn refused(dir: &Path, name: &str, text: &str, args: &[&str], expected: &[&str]) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let mut all = vec!["whatif", path];
    all.extend_from_slice(args);
    assert_usage_error(&all, None, expected);
}

fn without(ops: &[Op], optype: &str, dp: u32) -> Vec<Op> {
    ops.iter().copied().filter(|o| !(o.2 == optype && o.0 == dp)).collect()
}

#[test]
fn bad_traces_are_refused_naming_the_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let good = csv(1, &slow_worker());
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    let header = lines[0].clone();
    // A missing column.
    let no_seq = good.replace(",seq_id", "").replace(",0,0,0,0\n", ",0,0,0\n");
    refused(dir.path(), "a.csv", &no_seq, &[], &["a.csv", "no column seq_id"]);
    // An unknown op type, a negative duration, a text step.
    lines[1] = lines[1].replace("forward-compute", "forward-compute-x");
    refused(
        dir.path(),
        "b.csv",
        &(lines.join("\n") + "\n"),
        &[],
        &["b.csv: line 2", "optype", "forward-compute-x", "accepted"],
    );
    let negative = good.replacen(",0,1,", ",0,-1,", 1);
    refused(
        dir.path(),
        "c.csv",
        &negative,
        &[],
        &["c.csv: line 2", "duration", "-1", ">= 0"],
    );
    let text_step = good.replacen(",7,", ",seven,", 1);
    refused(
        dir.path(),
        "d.csv",
        &text_step,
        &[],
        &["d.csv: line 2", "step", "seven"],
    );
    // A header and no rows.
    refused(dir.path(), "e.csv", &(header + "\n"), &[], &["e.csv", "no rows"]);
    // A file that never ends a line is refused at its first MiB, not read
    // until memory runs out; a directory is not a trace.
    #[cfg(unix)]
    assert_usage_error(&["whatif", "/dev/zero"], None, &["/dev/zero", "1 MiB"]);
    let d = dir.path().to_str().unwrap();
    assert_usage_error(&["whatif", d], None, &[d, "cannot read the trace"]);
}

#[test]
fn inconsistent_jobs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // dp rank 1 lacks an op dp rank 0 has.
    let text = csv(1, &without(&slow_worker(), "backward-compute", 1));
    refused(
        dir.path(),
        "a.csv",
        &text,
        &[],
        &["a.csv", "dp_rank 1 has no op backward-compute_0_0"],
    );
    // A send with no receive on the next stage.
    let text = csv(2, &without(&heavy_stage(), "forward-recv", 0));
    refused(
        dir.path(),
        "b.csv",
        &text,
        &[],
        &["b.csv", "forward-send", "forward-recv", "stage 1"],
    );
    // An op recorded twice.
    let mut ops = slow_worker();
    ops.push(ops[0]);
    refused(
        dir.path(),
        "c.csv",
        &csv(1, &ops),
        &[],
        &["c.csv", "forward-compute_0_0", "twice"],
    );
    // No optimizer: the chain after the last backward needs it.
    let text = csv(1, &without(&without(&slow_worker(), "optimizer", 0), "optimizer", 1));
    refused(dir.path(), "d.csv", &text, &[], &["d.csv", "no op optimizer_0_0"]);
    // Two ranks claim the same (dp rank, stage).
    let text = csv(1, &slow_worker()).replacen("\n0,0,0,7,forward-compute", "\n0,0,5,7,forward-compute", 1);
    refused(
        dir.path(),
        "e.csv",
        &text,
        &["--layout", "tp=8"],
        &["e.csv", "rank", "one rank per (dp rank, stage)"],
    );
}

#[test]
fn layouts_that_do_not_match_the_trace_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = csv(1, &slow_worker());
    refused(
        dir.path(),
        "a.csv",
        &text,
        &["--layout", "dp=4"],
        &["--layout", "dp is 4", "records 2"],
    );
    refused(
        dir.path(),
        "b.csv",
        &text,
        &["--layout", "dp=2,zz=1"],
        &["--layout", "unknown size", "zz"],
    );
    refused(
        dir.path(),
        "c.csv",
        &text,
        &["--layout", "pp=0"],
        &["--layout", "pp=0", "size of 1 or more"],
    );
    let meta = dir.path().join("meta.yaml");
    let yaml =
        "trial_name: x\nrun_id: 0\ndp_size: 2\ndsp_size: 1\npp_size: 1\ntp_size: 1\nvpp_size: 1\nworld_size: 4\n";
    std::fs::write(&meta, yaml).unwrap();
    let meta = meta.to_str().unwrap();
    refused(
        dir.path(),
        "d.csv",
        &text,
        &["--meta", meta],
        &["meta.yaml", "world_size is 4", "= 2"],
    );
    std::fs::write(dir.path().join("meta2.yaml"), "dp_size: 2\nbogus: 1\n").unwrap();
    let meta2 = dir.path().join("meta2.yaml");
    refused(
        dir.path(),
        "e.csv",
        &text,
        &["--meta", meta2.to_str().unwrap()],
        &["meta2.yaml", "bogus", "the metadata has the keys"],
    );
    // The model chunks come from the mc column: a layout that says more is refused.
    refused(
        dir.path(),
        "f.csv",
        &text,
        &["--layout", "vpp=2"],
        &["--layout", "vpp is 2", "f.csv", "records 1", "mc"],
    );
}
