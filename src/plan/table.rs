//! `gcsim plan`'s table: the `#` lines of what was planned, the ranked
//! rows, and the recommendation.

use std::io::{self, Write};

use gcsim::export::{self, Digits};
use gcsim::plan::PlanRow;
use gcsim::units;

use super::PlanReport;

fn short(x: Option<f64>) -> String {
    export::short_cell(x, &Digits::PLAN)
}

/// The `#` lines above the table: what was planned, the units.
pub(super) fn table_header(report: &PlanReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &report.config;
    writeln!(
        out,
        "# gcsim plan {}  workers={}  load-model={}{}  objective={}{}{}{}{}{}{}  trials={}  seed={}",
        // A layout's rows count its replicas: it names its ranks itself.
        c.parallel
            .as_ref()
            .map_or_else(|| format!("n={}", c.n), |p| format!("parallel={p}")),
        c.workers,
        c.load_model,
        c.unit_time.map_or(String::new(), |u| format!("  unit-time={u}")),
        c.objective,
        c.ref_n.map_or(String::new(), |r| format!("  ref-n={r}")),
        c.max_load.map_or(String::new(), |l| format!("  max-load={l}")),
        if c.comm == gcsim::comm::Comm::default().to_string() {
            String::new()
        } else {
            format!("  comm={}", c.comm)
        },
        c.aggregation
            .as_ref()
            .map_or(String::new(), |a| format!("  aggregation={a}")),
        c.buckets.as_ref().map_or(String::new(), |k| format!("  buckets={k}")),
        if c.iterations > 1 {
            format!("  iterations={}", c.iterations)
        } else {
            String::new()
        },
        c.trials,
        c.seed
    )?;
    writeln!(
        out,
        "# load: data each {}, in units of the uncoded share; {}",
        if c.parallel.is_some() {
            "DP replica (n of them) stores and processes, as load × M microbatches"
        } else {
            "worker stores and processes"
        },
        units::sentence(c.time_unit)
    )?;
    for note in &c.notes {
        writeln!(out, "# note: {note}")?;
    }
    for warning in &c.warnings {
        writeln!(out, "# warning: {warning}")?;
    }
    if c.iterations > 1 {
        writeln!(
            out,
            "# each trial is {} consecutive iterations: times are their total",
            c.iterations
        )?;
    }
    Ok(())
}

/// After the table: how many rows it left out, and the recommendation.
pub(super) fn table_footer(report: &PlanReport, out: &mut dyn Write) -> io::Result<()> {
    let top = report.top;
    if report.rows.len() > top {
        writeln!(
            out,
            "# {} more rows (--top, or --format csv for all)",
            report.rows.len() - top
        )?;
    }
    if let Some(r) = &report.recommendation {
        writeln!(out, "{r}")?;
    }
    Ok(())
}

pub(super) fn table(report: &PlanReport, out: &mut dyn Write) -> io::Result<()> {
    table_header(report, out)?;
    let top = report.top;
    let header = [
        "rank",
        "n",
        "scheme",
        "s",
        "m",
        "k",
        "objective",
        "ci95",
        "mean",
        "p99",
        "speedup",
        "load",
        "message",
        "method",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    // The columns some rows have: a scheme's own parameters, the
    // aggregation compared, and the cost view's, where its flags gave them.
    type Cell = fn(&PlanRow) -> Option<String>;
    let optional: [(&str, Cell); 10] = [
        ("parts", |r| r.parts.map(|l| l.to_string())),
        ("timeout", |r| r.timeout.map(|t| short(Some(t)))),
        ("aggregation", |r| r.aggregation.map(String::from)),
        ("buckets", |r| r.buckets.map(|k| k.to_string())),
        ("iter/h", |r| r.iterations_per_hour.map(|x| short(Some(x)))),
        ("run_h", |r| r.run_hours.map(|x| short(Some(x)))),
        ("gpu_h", |r| r.gpu_hours.map(|x| short(Some(x)))),
        ("cost", |r| r.cost.map(|x| format!("{x:.2}"))),
        ("storage", |r| r.storage_bytes.map(units::format_bytes)),
        ("sent/iter", |r| r.bytes_per_iteration.map(units::format_bytes)),
    ];
    let optional: Vec<(&str, Cell)> = optional
        .into_iter()
        .filter(|(_, cell)| report.rows.iter().take(top).any(|r| cell(r).is_some()))
        .collect();
    cells[0].extend(optional.iter().map(|(name, _)| name.to_string()));
    for r in report.rows.iter().take(top) {
        let ci = match (r.objective_low, r.objective_high) {
            (Some(a), Some(b)) => format!("[{}, {}]", short(Some(a)), short(Some(b))),
            _ => "-".into(),
        };
        let mut row = vec![
            r.rank.to_string(),
            r.n.to_string(),
            r.scheme.to_string(),
            r.s.to_string(),
            r.m.map_or("-".into(), |m| m.to_string()),
            r.k.to_string(),
            short(Some(r.objective)),
            ci,
            short(Some(r.mean)),
            short(Some(r.p99)),
            short(r.speedup),
            short(Some(r.load)),
            short(Some(r.message)),
            r.method.to_string(),
        ];
        row.extend(optional.iter().map(|(_, cell)| cell(r).unwrap_or_else(|| "-".into())));
        cells.push(row);
    }
    export::write_aligned(&cells, 0, out)?;
    table_footer(report, out)
}
