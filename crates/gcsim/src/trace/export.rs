//! Writers for a trace's analysis: an aligned table for terminals (ending
//! with the `fitted: --dist …` line), CSV of the per-worker rows via serde,
//! and JSON of the whole report.

use std::io::{self, Write};

use super::analysis::{TraceReport, WorkerRow};
use crate::export::{Digits, Export, short, short_cell, write_aligned};

/// The table ends with [`TraceReport::fitted_line`]; CSV holds the
/// per-worker rows only, JSON the whole report.
impl Export for TraceReport {
    type Row = WorkerRow;

    fn rows(&self) -> &[WorkerRow] {
        &self.per_worker
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        write_table(self, out)
    }
}

/// `value ± se`, `-` when absent.
fn with_se(value: Option<f64>, se: Option<f64>) -> String {
    match (value, se) {
        (Some(v), Some(e)) => format!("{} ± {}", short(v, &Digits::TABLE), short(e, &Digits::TICK)),
        (v, _) => short_cell(v, &Digits::TABLE),
    }
}

fn write_table(r: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
    let d = &Digits::TABLE;
    writeln!(
        out,
        "# gcsim trace {}: {} workers x {} steps (times in the trace's unit)",
        r.file, r.workers, r.steps
    )?;
    writeln!(
        out,
        "# slowest: among the s = {} slowest workers of a step ({}); stay: P(slowest at t+1 | slowest at t); \
         autocorr: lag-1 autocorrelation across steps; slow_state: share of steps in the model's slow state",
        r.s, r.s_source
    )?;
    for w in &r.warnings {
        writeln!(out, "# warning: {w}")?;
    }
    for n in &r.notes {
        writeln!(out, "# note: {n}")?;
    }
    let mut cells = vec![
        ["worker", "mean", "rank", "slowest", "stay", "autocorr", "slow_state"]
            .map(String::from)
            .to_vec(),
    ];
    for w in &r.per_worker {
        cells.push(vec![
            w.worker.to_string(),
            short(w.mean, d),
            w.rank.to_string(),
            short(w.slowest_share, d),
            short_cell(w.stay_slowest, d),
            short_cell(w.autocorrelation, d),
            short_cell(w.slow_state_share, d),
        ]);
    }
    write_aligned(&cells, 0, out)?;
    writeln!(
        out,
        "# trace-wide: mean cross-worker correlation {} ({} pairs), mean lag-1 autocorrelation {}",
        short_cell(r.mean_cross_correlation, d),
        r.correlated_pairs,
        short_cell(r.mean_autocorrelation, d)
    )?;
    let m = &r.model;
    writeln!(out, "# model: {}", m.method)?;
    if m.slow_state {
        writeln!(
            out,
            "# slow state: p_slow = {}, slowdown = {}, persist = {} (separation {}); standard errors: {}",
            with_se(m.p_slow, m.p_slow_se),
            with_se(m.slowdown, m.slowdown_se),
            with_se(m.persist, m.persist_se),
            short_cell(m.separation, d),
            m.standard_errors
        )?;
    } else {
        writeln!(out, "# slow state: none (p_slow, slowdown and persist absent)")?;
    }
    if let Some(base) = &m.base {
        writeln!(
            out,
            "# base law: {base}, best by Kolmogorov-Smirnov distance ({}) of {} normal-state times",
            short_cell(m.base_ks_distance, d),
            m.base_times
        )?;
    }
    writeln!(out, "{}", r.fitted_line())
}
