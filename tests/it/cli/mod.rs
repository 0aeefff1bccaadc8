//! The `gcsim` binary end to end: outputs, reproducibility, files and every
//! error. Helpers here; the tests in `output`, `determinism`, `files`,
//! `special_files`, `signals`, `destinations` and `bad_input`.

use assert_cmd::Command;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = gcsim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The error of `gcsim scenario` on a file holding `text` (written into
/// `dir`): a usage error (status 2) on one line, before anything ran.
fn scenario_error(dir: &std::path::Path, text: &str) -> String {
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let out = gcsim()
        .arg("scenario")
        .arg(&file)
        .arg("--out-dir")
        .arg(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    stderr
}

/// The output columns of `run --format csv`: the scheme, its statistics and
/// analytic values, then the communication model's columns, which were
/// appended and must never be reordered (scripts read columns by position).
const HEADER: &str = "scheme,n,s,m,k,load,message,exact,trials,mean,std_err,ci95_low,ci95_high,p50,p90,p99,p999,speedup,p99_speedup,analytic_mean,analytic_p99,link,transfer_time,decode_time,decoder,approx_error,undecodable,data_fraction,timeout,extra_work,staleness,parts,iterations,inclusion_min,inclusion_max,p99_ci95_low,p99_ci95_high,speedup_ci95_low,speedup_ci95_high,p99_speedup_ci95_low,p99_speedup_ci95_high";

mod bad_input;
mod columns;
mod conventions;
mod destinations;
mod determinism;
mod files;
mod help_examples;
mod markup;
mod output;
mod overlay;
mod report;
mod scenario_plan;
mod shell;
mod signals;
mod special_files;
