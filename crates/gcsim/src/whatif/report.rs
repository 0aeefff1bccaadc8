//! The analysis as a table, CSV (one row per attribution) or JSON.

use std::io::{self, Write};

use super::analysis::{Analysis, AttributionRow, Removal};
use crate::export::Export;

/// Entries shown per attribution in the table; the CSV and JSON have all.
const SHOWN: usize = 8;

impl Export for Analysis {
    type Row = AttributionRow;

    fn rows(&self) -> &[AttributionRow] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        let l = &self.layout;
        let mut layout = format!("dp={}, pp={}", l.dp, l.pp);
        for (key, v) in [("tp", l.tp), ("cp", l.cp), ("vpp", l.vpp)] {
            if v > 1 {
                layout.push_str(&format!(", {key}={v}"));
            }
        }
        writeln!(
            out,
            "# whatif {}: {layout} ({} of {} ranks recorded), {} steps, {} ops ({} per step and dp rank)",
            self.file,
            l.ranks_in_trace,
            l.world,
            self.steps.len(),
            self.ops,
            self.ops_per_lane
        )?;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        writeln!(
            out,
            "slowdown S      {:.4}   mean step: {:.4} s replayed, {:.4} s ideal",
            self.slowdown,
            mean(&self.step_replay),
            mean(&self.step_ideal)
        )?;
        let check = if self.replay_check == 0.0 {
            "the replay with launch delays reproduces every op".to_string()
        } else {
            format!(
                "the replay with launch delays is off by at most {:.3e} s",
                self.replay_check
            )
        };
        writeln!(
            out,
            "replay error    {:.2}%   mean measured step {:.4} s; {check}",
            100.0 * self.replay_error,
            mean(&self.step_measured)
        )?;
        removal(out, "M_S", &format!("the last stage ({})", l.pp - 1), &self.m_s)?;
        let ranks: Vec<String> = self.m_w.ranks.iter().map(u32::to_string).collect();
        removal(
            out,
            "M_W",
            &format!("the worst 3% of ranks ({})", ranks.join(", ")),
            &self.m_w,
        )?;
        section(
            out,
            "op type",
            "S_t",
            self.by_optype.0.iter().map(|(k, v)| (k.clone(), *v)),
        )?;
        section(
            out,
            "stage",
            "S",
            self.by_stage.0.iter().map(|(k, v)| (k.to_string(), *v)),
        )?;
        section(
            out,
            "dp rank",
            "S",
            self.by_dp_rank.0.iter().map(|(k, v)| (k.to_string(), *v)),
        )?;
        section(
            out,
            "step",
            "S",
            self.by_step.0.iter().map(|(k, v)| (k.to_string(), *v)),
        )
    }
}

fn removal(out: &mut dyn Write, name: &str, what: &str, r: &Removal) -> io::Result<()> {
    match r.rem {
        Some(rem) => writeln!(
            out,
            "{name:<15} {rem:.4}   share of the slowdown removed by idealising {what}"
        ),
        None => writeln!(out, "{name:<15} -        no slowdown to remove"),
    }
}

/// One attribution: its largest entries, and how many are left out.
fn section(
    out: &mut dyn Write,
    key: &str,
    value: &str,
    entries: impl ExactSizeIterator<Item = (String, f64)>,
) -> io::Result<()> {
    let total = entries.len();
    let shown = if total > SHOWN {
        format!(" (the {SHOWN} largest of {total})")
    } else {
        String::new()
    };
    writeln!(out)?;
    writeln!(out, "{key:<28} {value}{shown}")?;
    for (k, v) in entries.take(SHOWN) {
        writeln!(out, "{k:<28} {v:.4}")?;
    }
    Ok(())
}
