//! `sweep --plot`: a metric against s (or against m when only m varies, or
//! a pipeline job's microbatches M when a sweep runs several), one line per
//! scheme, the exact curve dashed where one exists.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::{LineChart, PlotError, Point, Series};
use gcsim::report::{Row, RunConfig};
use gcsim::scheme::SchemeKind;

/// What a sweep figure shows on its y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Mean iteration time, with its 95% interval.
    Mean,
    /// 99th percentile, with its 95% interval.
    P99,
    /// Mean speedup over uncoded.
    Speedup,
    /// p99 speedup over uncoded.
    P99Speedup,
}

impl Metric {
    /// Every metric, in the order of [`Metric::NAMES`].
    pub const ALL: [Metric; 4] = [Metric::Mean, Metric::P99, Metric::Speedup, Metric::P99Speedup];
    /// The name of each metric, as `--plot-metric` and scenario files take it.
    pub const NAMES: [&'static str; 4] = ["mean", "p99", "speedup", "p99-speedup"];

    /// The name `--plot-metric` and scenario files take.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`Metric::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown `{0}`; accepted: {names}", names = Metric::NAMES.join(", "))]
pub struct UnknownMetric(pub String);

impl FromStr for Metric {
    type Err = UnknownMetric;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::NAMES
            .iter()
            .position(|&n| n == s)
            .map(|i| Self::ALL[i])
            .ok_or_else(|| UnknownMetric(s.to_string()))
    }
}

/// The data of a sweep figure.
#[derive(Debug, Clone, Copy)]
pub struct SweepData<'a> {
    /// What was run.
    pub config: &'a RunConfig,
    /// The rows, as exported.
    pub rows: &'a [Row],
    /// The exact mean and p99 of uncoded, for exact speedups.
    pub baseline_exact: Option<(f64, f64)>,
}

/// The caption line that names what produced a figure.
pub fn caption(config: &RunConfig) -> String {
    let mut c = format!(
        "n={}   dist={}   load model={}",
        config.n, config.dist, config.load_model
    );
    if let Some(u) = config.unit_time {
        c.push_str(&format!(" (unit time {u})"));
    }
    if !config.comm.is_empty() && config.comm != gcsim::comm::Comm::default().to_string() {
        c.push_str(&format!("   {}", config.comm));
    }
    if let Some(a) = &config.aggregation {
        c.push_str(&format!("   {}", aggregation_label(a)));
    }
    if let Some(p) = &config.parallel_described() {
        // The layout, its microbatches and its schedule: the description's
        // first three fields.
        let fields: Vec<&str> = p.split(' ').take(3).collect();
        c.push_str(&format!("   pipelines {}", fields.join(" ")));
    }
    if config.mode == gcsim::report::Mode::Analytic {
        c.push_str("   exact values");
    } else {
        c.push_str(&format!("   {} trials, seed {}", config.trials, config.seed));
    }
    c
}

/// A collective as a caption names it: `all-reduce ring`, with its
/// buckets where there are several, from the header's description
/// (`ring latency=… buckets=K`).
fn aggregation_label(description: &str) -> String {
    let algorithm = description.split([' ', ':']).next().unwrap_or(description);
    let buckets = description
        .split(' ')
        .find_map(|kv| kv.strip_prefix("buckets="))
        .filter(|&k| k != "1");
    match buckets {
        Some(k) => format!("all-reduce {algorithm} in {k} buckets"),
        None => format!("all-reduce {algorithm}"),
    }
}

/// The chart of `metric` over a sweep: one series per scheme (and per
/// value of a second parameter that varies), broken where a scheme has no
/// value on the sweep's grid.
pub fn sweep_chart(data: &SweepData, metric: Metric) -> Result<LineChart, PlotError> {
    let Axes {
        by_m,
        by_k,
        by_deadline,
        by_microbatches,
    } = axes(data.rows, data.config.k.is_some())?;
    let x_of = |r: &Row| match (by_m, by_k, r.timeout, r.microbatches) {
        (_, _, _, Some(m)) if by_microbatches => m as f64,
        (_, _, Some(t), _) if by_deadline => t,
        (true, _, _, _) => r.m.unwrap_or(1) as f64,
        (_, true, _, _) => r.k as f64,
        _ => r.s as f64,
    };
    let mut series: Vec<Series> = Vec::new();
    for r in data.rows {
        let label = series_label(data.rows, r, by_m || by_microbatches);
        let idx = match series.iter().position(|s| s.label == label) {
            Some(idx) => idx,
            None => {
                series.push(Series {
                    label,
                    scheme: r.scheme,
                    points: Vec::new(),
                    exact: Vec::new(),
                    flat: false,
                    inexact: false,
                });
                series.len() - 1
            }
        };
        let x = x_of(r);
        let (y, band, exact) = metric_value(data, r, metric);
        let s = &mut series[idx];
        s.inexact |= !r.exact;
        if r.trials > 0 && y.is_finite() {
            s.points.push(Point { x, y, band });
        }
        if let Some(e) = exact.filter(|e| e.is_finite()) {
            s.exact.push((x, e));
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        s.exact.sort_by(|a, b| a.0.total_cmp(&b.0));
        // A value that does not depend on the x axis (uncoded, speculative
        // and one deadline against s; any scheme without m against m): a
        // horizontal line, not a lone point.
        let free_of_s = ["uncoded", "speculative", "timeout"].contains(&s.label.as_str());
        if (free_of_s || by_m) && !by_microbatches && s.points.len() <= 1 && s.exact.len() <= 1 {
            s.flat = true;
        }
    }
    let has_mds = data.rows.iter().any(|r| r.scheme == SchemeKind::Mds);
    let unit = gcsim::units::label(data.config.time_unit);
    let deadline_label = format!("deadline T ({unit})");
    let (mean_label, p99_label) = (
        format!("mean iteration time ({unit})"),
        format!("p99 iteration time ({unit})"),
    );
    let (x_name, x_symbol) = match (by_m, by_k, has_mds) {
        _ if by_microbatches => ("microbatches per replica M", "M"),
        _ if by_deadline => (deadline_label.as_str(), "T"),
        (true, _, _) => ("message split m", "m"),
        (_, true, _) => ("recovery threshold k (workers the master waits for)", "k"),
        (_, _, true) => ("straggler tolerance s (mds: s = n - k)", "s"),
        _ => ("straggler tolerance s", "s"),
    };
    let (title, y_label, reference) = match metric {
        Metric::Mean => ("Mean iteration time", mean_label.as_str(), None),
        Metric::P99 => ("99th-percentile iteration time", p99_label.as_str(), None),
        Metric::Speedup => (
            "Speedup over uncoded",
            "speedup of the mean over uncoded (x)",
            Some(1.0),
        ),
        Metric::P99Speedup => ("p99 speedup over uncoded", "speedup of p99 over uncoded (x)", Some(1.0)),
    };
    let band_note = if matches!(metric, Metric::Mean | Metric::P99) {
        ", shaded: 95% interval"
    } else {
        ", shaded: paired 95% interval"
    };
    Ok(LineChart {
        title: format!("{title} against {x_symbol}{band_note}"),
        caption: caption(data.config),
        x_label: x_name.to_string(),
        y_label: y_label.to_string(),
        series,
        reference_y: reference,
        log_y: false,
        y_floor: None,
        integer_x: !by_deadline,
        gaps: true,
    })
}

/// A series' label: the scheme's name, and the second parameter where it
/// too varies among the scheme's rows (one line per scheme otherwise).
fn series_label(rows: &[Row], r: &Row, by_m: bool) -> String {
    let varies = |value: fn(&Row) -> Option<usize>| {
        let values = rows.iter().filter(|o| o.scheme == r.scheme).filter_map(value);
        values.collect::<BTreeSet<_>>().len() > 1
    };
    match (by_m, r.m, r.parts) {
        (_, _, Some(l)) if varies(|o| o.parts) => format!("{} L={l}", r.scheme),
        (false, Some(m), _) if varies(|o| o.m) => format!("{} m={m}", r.scheme),
        (true, _, _) if varies(|o| Some(o.s)) => format!("{} s={}", r.scheme, r.s),
        _ => r.scheme.to_string(),
    }
}

/// A row's value of `metric`, its 95% interval, and its exact value where
/// one is known.
fn metric_value(data: &SweepData, r: &Row, metric: Metric) -> (f64, Option<(f64, f64)>, Option<f64>) {
    match metric {
        Metric::Mean => (r.mean, r.ci95_low.zip(r.ci95_high), r.analytic_mean),
        Metric::P99 => (r.p99, r.p99_ci95_low.zip(r.p99_ci95_high), r.analytic_p99),
        Metric::Speedup => (
            r.speedup.unwrap_or(f64::NAN),
            r.speedup_ci95_low.zip(r.speedup_ci95_high),
            ratio(data.baseline_exact.map(|b| b.0), r.analytic_mean),
        ),
        Metric::P99Speedup => (
            r.p99_speedup.unwrap_or(f64::NAN),
            r.p99_speedup_ci95_low.zip(r.p99_speedup_ci95_high),
            ratio(data.baseline_exact.map(|b| b.1), r.analytic_p99),
        ),
    }
}

/// Which x axis a sweep figure of some rows takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Axes {
    by_m: bool,
    by_k: bool,
    by_deadline: bool,
    /// A sweep over a pipeline job's microbatch counts.
    by_microbatches: bool,
}

impl Axes {
    /// The axis's symbol: s, m, k or T.
    fn symbol(self) -> &'static str {
        match self {
            Axes {
                by_microbatches: true, ..
            } => "M",
            Axes { by_deadline: true, .. } => "T",
            Axes { by_m: true, .. } => "m",
            Axes { by_k: true, .. } => "k",
            _ => "s",
        }
    }
}

/// The x axis of a sweep figure of `rows` (`k_given`: the sweep listed k).
fn axes(rows: &[Row], k_given: bool) -> Result<Axes, PlotError> {
    let distinct = |f: fn(&Row) -> Option<usize>| rows.iter().filter_map(f).collect::<BTreeSet<_>>().len();
    // Against m when the rows that have an m share one s and vary m; rows
    // without m (crc, uncoded) are then constant references.
    let with_m = rows
        .iter()
        .filter(|r| r.m.is_some())
        .map(|r| r.s)
        .collect::<BTreeSet<_>>();
    let by_m = with_m.len() == 1 && distinct(|r| r.m) > 1;
    // An mds sweep over --k reads best against k.
    let by_k = !by_m
        && k_given
        && rows
            .iter()
            .all(|r| matches!(r.scheme, SchemeKind::Mds | SchemeKind::Uncoded));
    // Deadlines read against T; beside other schemes, one deadline is a
    // horizontal line on their axis, several share no axis with them.
    let deadlines: BTreeSet<u64> = rows.iter().filter_map(|r| r.timeout).map(f64::to_bits).collect();
    axes_of(rows.iter().map(|r| r.scheme), deadlines.len())?;
    let by_deadline = !deadlines.is_empty()
        && rows
            .iter()
            .all(|r| matches!(r.scheme, SchemeKind::Timeout | SchemeKind::Uncoded));
    // A sweep over microbatch counts reads against M whatever its schemes.
    let by_microbatches = distinct(|r| r.microbatches) > 1;
    Ok(Axes {
        by_m: by_m && !by_microbatches,
        by_k: by_k && !by_microbatches,
        by_deadline: by_deadline && !by_microbatches,
        by_microbatches,
    })
}

/// The symbol of the x axis (s, m, k or T) a sweep figure of `schemes`
/// takes, before they run: what an overlay of several studies must share.
pub fn x_axis_of(schemes: &[gcsim::scheme::Scheme], k_given: bool) -> Result<&'static str, PlotError> {
    let rows: Vec<Row> = schemes
        .iter()
        .map(|s| Row {
            scheme: s.kind(),
            s: s.s(),
            m: s.m(),
            k: s.k(),
            timeout: s.deadline(),
            parts: s.parts(),
            ..Row::default()
        })
        .collect();
    Ok(axes(&rows, k_given)?.symbol())
}

/// One chart of several studies' charts of one metric on one axis: each
/// series labelled `<study>: <series>` (a scheme keeps its colour; its
/// second series takes the next marker), the caption the studies' shared
/// settings then what sets each apart.
pub fn overlay_chart(charts: &[(&str, LineChart)]) -> Result<LineChart, PlotError> {
    let Some((_, first)) = charts.first() else {
        return Err(PlotError::Empty("overlay".into()));
    };
    // The s axis is labelled for mds where a study has mds; both are s.
    let tolerance = |l: &str| l.starts_with("straggler tolerance s");
    let same_axis = |a: &str, b: &str| a == b || (tolerance(a) && tolerance(b));
    if let Some((label, other)) = charts.iter().find(|(_, c)| !same_axis(&c.x_label, &first.x_label)) {
        return Err(PlotError::Axes(format!(
            "an overlay has one x axis: study `{}` is drawn against {}, study `{label}` against {}",
            charts[0].0, first.x_label, other.x_label
        )));
    }
    let captions: Vec<Vec<&str>> = charts.iter().map(|(_, c)| c.caption.split("   ").collect()).collect();
    let shared: Vec<&str> = captions[0]
        .iter()
        .copied()
        .filter(|t| captions.iter().all(|c| c.contains(t)))
        .collect();
    let apart: Vec<String> = charts
        .iter()
        .zip(&captions)
        .filter_map(|((label, _), c)| {
            let own: Vec<&str> = c.iter().copied().filter(|t| !shared.contains(t)).collect();
            (!own.is_empty()).then(|| format!("{label}: {}", own.join(", ")))
        })
        .collect();
    let mut caption = shared.join("   ");
    if !apart.is_empty() {
        caption.push_str(&format!("   ({})", apart.join("; ")));
    }
    let series = charts
        .iter()
        .flat_map(|(label, c)| {
            c.series.iter().cloned().map(move |s| Series {
                label: format!("{label}: {}", s.label),
                ..s
            })
        })
        .collect();
    let x_label = charts.iter().map(|(_, c)| &c.x_label).max_by_key(|l| l.len()).cloned();
    Ok(LineChart {
        title: first.title.clone(),
        caption,
        x_label: x_label.unwrap_or_default(),
        series,
        integer_x: charts.iter().all(|(_, c)| c.integer_x),
        ..first.clone()
    })
}

/// Draws `metric` of a sweep to `path` in `style`.
pub fn sweep_figure(
    data: &SweepData,
    metric: Metric,
    path: &Path,
    style: &super::FigureStyle,
) -> Result<(), PlotError> {
    super::draw(&sweep_chart(data, metric)?.styled(style), path, style)
}

/// Whether a sweep's schemes share an x axis: several deadlines
/// (`timeout`, drawn against T) only beside `uncoded`, which is flat on any
/// axis; one deadline is flat beside any scheme.
pub fn axes_of(kinds: impl IntoIterator<Item = SchemeKind>, deadlines: usize) -> Result<(), PlotError> {
    let kinds: BTreeSet<SchemeKind> = kinds.into_iter().collect();
    let other = kinds
        .iter()
        .find(|k| !matches!(k, SchemeKind::Timeout | SchemeKind::Uncoded));
    if let (true, Some(other)) = (kinds.contains(&SchemeKind::Timeout) && deadlines > 1, other) {
        return Err(PlotError::Axes(format!(
            "a sweep figure has one x axis: {deadlines} deadlines are drawn against T and {other} against s; plot several deadlines with uncoded alone (a sweep of its own), or give one --timeout to draw it flat beside {other}"
        )));
    }
    Ok(())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?).filter(|r| r.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_round_trip() {
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(m as usize, i);
            assert_eq!(m.to_string().parse::<Metric>(), Ok(m));
        }
        assert_eq!(
            "p99speedup".parse::<Metric>().unwrap_err().to_string(),
            "unknown `p99speedup`; accepted: mean, p99, speedup, p99-speedup"
        );
    }
}
