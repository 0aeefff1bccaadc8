//! `--plot FILE` for `run`, `sweep`, `merge`, `trace` and `train`, with the
//! flags that shape every figure (`--plot-data`, `--plot-size`, `--dpi`,
//! `--font-size`, `--no-title`; `--log-y` where the axis is linear):
//! validated before the work starts, drawn after it, written atomically (a
//! temporary file renamed into place).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::builder::TypedValueParser;

use gcsim::engine::Outcome;
use gcsim::report::{Row, RunConfig};
use gcsim::study::Study;
use gcsim_figures::plot::canvas::StyleError;
use gcsim_figures::plot::data::{PlotRow, chart_rows, write_rows};
use gcsim_figures::plot::heatmap::Grid;
use gcsim_figures::plot::survival::{Curve, survival_chart};
use gcsim_figures::plot::sweep::{Metric, SweepData, sweep_chart};
use gcsim_figures::plot::{FigureFormat, FigureSize, FigureStyle, LineChart, PlotError};

use super::flags::{DPI, FONT_SIZE, Flag, LOG_Y, NO_TITLE, PLOT, PLOT_DATA, PLOT_SIZE};
use super::notes::note;
use super::output::{AtomicFile, check, write_atomically};

/// A `--plot-metric` parser: `--help` lists each metric with what it shows.
pub fn metric_parser() -> impl TypedValueParser<Value = Metric> {
    super::listed(Metric::ALL, Metric::name, |metric| match metric {
        Metric::Mean => "Mean iteration time with its 95% interval",
        Metric::P99 => "99th percentile with its 95% interval",
        Metric::Speedup => "Speedup of the mean over uncoded",
        Metric::P99Speedup => "Speedup of p99 over uncoded",
    })
}

/// The flags that shape a figure, shared by every command with `--plot`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PlotArgs {
    /// Also write every plotted series to FILE (.csv), one tidy row per
    /// drawn point: figure, series, scheme, kind (simulated, exact,
    /// reference; cell for a trace heatmap), segment, x, y, y_lo, y_hi (the
    /// shaded interval), inexact, color, marker. Example: --plot-data fig.csv
    #[arg(long, value_name = "FILE")]
    pub plot_data: Option<PathBuf>,

    /// Figure size in inches, width x height [default: 11x7.2]. A paper
    /// column: --plot-size 3.5x2.5; also written 6×4.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub plot_size: Option<FigureSize>,

    /// Pixels per inch of a PNG figure, 30 to 1200 [default: 100]. Example:
    /// --plot fig.png --plot-size 6x4 --dpi 300 (1800x1200 pixels).
    #[arg(long, value_name = "DPI", value_parser = parse_dpi, allow_hyphen_values = true)]
    pub dpi: Option<u32>,

    /// Font size of tick labels and legend in points, 4 to 40 (titles and
    /// axis names scale with it) [default: 11]. Example: --font-size 9
    #[arg(long, value_name = "PT", value_parser = parse_font_size, allow_hyphen_values = true)]
    pub font_size: Option<f64>,

    /// Leave out the heading (title and the line naming n, the law, the
    /// load model and the trials), for a figure whose caption says it.
    /// Example: --plot fig.pdf --no-title
    #[arg(long)]
    pub no_title: bool,
}

fn parse_size(s: &str) -> Result<FigureSize, String> {
    s.parse::<FigureSize>().map_err(|e| e.to_string())
}

fn parse_dpi(s: &str) -> Result<u32, String> {
    let (lo, hi) = (*FigureStyle::DPI.start(), *FigureStyle::DPI.end());
    super::parse_range(s, lo.into(), hi.into()).map(|v| v as u32)
}

fn parse_font_size(s: &str) -> Result<f64, String> {
    let range = FigureStyle::FONT_PT;
    let accepted = format!("accepted: a number of points from {} to {}", range.start(), range.end());
    match gcsim::range::real(s) {
        Some(v) if range.contains(&v) => Ok(v),
        Some(_) => Err(format!("`{s}` is out of range; {accepted}")),
        None => Err(format!("`{s}` is not a number; {accepted}")),
    }
}

/// A figure's style and where its data goes, validated.
#[derive(Debug, Clone, Default)]
pub struct FigureOptions {
    /// How it is drawn.
    pub style: FigureStyle,
    /// Where `--plot-data` writes its series.
    pub data: Option<PathBuf>,
}

impl PlotArgs {
    /// Checks the flags against `--plot` (`plot`) and `--log-y` (`log_y`):
    /// each needs a figure, `--dpi` a PNG; `--plot-data` must be a
    /// writable .csv file that no other flag of `others` (such as `--out`) names.
    pub fn options(&self, plot: Option<&Path>, log_y: bool, others: &[(Flag, Option<&Path>)]) -> Result<FigureOptions> {
        let given = [
            (self.plot_data.is_some(), PLOT_DATA),
            (self.plot_size.is_some(), PLOT_SIZE),
            (self.dpi.is_some(), DPI),
            (self.font_size.is_some(), FONT_SIZE),
            (self.no_title, NO_TITLE),
            (log_y, LOG_Y),
        ];
        let Some(plot) = plot else {
            if let Some((_, flag)) = given.iter().find(|g| g.0) {
                bail!("{flag} shapes a figure: give {PLOT} FILE too");
            }
            return Ok(FigureOptions::default());
        };
        if let (Some(dpi), Some(format)) = (self.dpi, FigureFormat::of(plot))
            && format != FigureFormat::Png
        {
            bail!(
                "{DPI} {dpi} sets the pixels of a PNG; {PLOT} {} is a vector figure, sized by {PLOT_SIZE}",
                plot.display()
            );
        }
        let default = FigureStyle::default();
        let style = FigureStyle::new(
            self.plot_size.unwrap_or(default.size()),
            self.dpi.unwrap_or(default.dpi()),
            self.font_size.unwrap_or(default.font_pt()),
            !self.no_title,
            log_y,
        )
        .map_err(|e| match e {
            StyleError::Pixels { dpi, size, w, h } => anyhow::anyhow!(
                "{DPI} {dpi} with {PLOT_SIZE} {size} makes a {w}x{h}-pixel PNG, more than {} pixels; lower either",
                FigureStyle::MAX_PIXELS
            ),
            // The parsers keep --dpi and --font-size in range.
            other => anyhow::anyhow!("{other}"),
        })?;
        if let Some(data) = &self.plot_data {
            if let Some((flag, _)) = others.iter().find(|o| o.1 == Some(data.as_path())) {
                bail!(
                    "{flag} and {PLOT_DATA} both name {}; give each its own file",
                    data.display()
                );
            }
            check_data_destination(data, plot)?;
        }
        Ok(FigureOptions {
            style,
            data: self.plot_data.clone(),
        })
    }
}

/// Checks a `--plot-data` destination: a writable `.csv` file that is not the figure.
fn check_data_destination(data: &Path, plot: &Path) -> Result<()> {
    let ext = data.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("csv") {
        bail!(
            "{PLOT_DATA} {}: the series are written as CSV; give a .csv file",
            data.display()
        );
    }
    if data == plot {
        bail!(
            "{PLOT_DATA} {}: is also the {PLOT} file; give each its own",
            data.display()
        );
    }
    check(PLOT_DATA, data)
}

/// Which figure a command draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    /// A sweep: the metric against s or m.
    Sweep(Metric),
    /// A run: the survival function against uncoded.
    Survival,
}

/// A figure to draw, and where.
#[derive(Debug, Clone)]
pub struct Figure {
    /// The destination.
    pub path: PathBuf,
    /// What to draw.
    pub kind: FigureKind,
    /// How, and where its series go.
    pub options: FigureOptions,
}

/// Points of a simulated survival curve.
pub const SURVIVAL_POINTS: usize = 200;

impl Figure {
    /// Checks the destination: a `.png`, `.svg` or `.pdf` file that can be
    /// written (see [`check`]), before the work starts.
    pub fn new(path: PathBuf, kind: FigureKind, options: FigureOptions) -> Result<Self> {
        check_destination(&path)?;
        Ok(Self { path, kind, options })
    }

    /// Draws the figure of a finished run, and writes its series where asked.
    pub fn draw(&self, study: &Study, config: &RunConfig, rows: &[Row], outcome: Option<&Outcome>) -> Result<()> {
        let chart = match self.kind {
            FigureKind::Sweep(metric) => sweep_chart_of(study, config, rows, metric)
                .with_context(|| format!("{PLOT} {}", self.path.display()))?,
            FigureKind::Survival => survival_chart(config, &survival_curves(study, outcome)),
        };
        draw_chart(&chart, &self.path, &self.options)
    }
}

/// The sweep chart of `metric` over a study's rows.
pub fn sweep_chart_of(study: &Study, config: &RunConfig, rows: &[Row], metric: Metric) -> Result<LineChart> {
    let baseline = study.exact_law(&study.baseline());
    let data = SweepData {
        config,
        rows,
        baseline_exact: baseline.map(|l| (l.mean(), l.quantile(0.99))),
    };
    Ok(sweep_chart(&data, metric)?)
}

/// Draws `chart` to `path` in `options`' style, and writes its series to
/// `options.data` if set.
pub fn draw_chart(chart: &LineChart, path: &Path, options: &FigureOptions) -> Result<()> {
    let chart = chart.clone().styled(&options.style);
    draw_atomically(path, |temp| gcsim_figures::plot::draw(&chart, temp, &options.style))?;
    if let Some(data) = &options.data {
        write_data(data, &chart_rows(&chart, &file_name(path)))?;
    }
    Ok(())
}

/// Draws the heatmap `grid` to `path` in `options`' style, and writes its
/// cells to `options.data` if set.
pub fn draw_heatmap(grid: &Grid, path: &Path, options: &FigureOptions) -> Result<()> {
    draw_atomically(path, |temp| grid.draw(temp, &options.style))?;
    if let Some(data) = &options.data {
        write_data(data, &grid.data_rows(&file_name(path)))?;
    }
    Ok(())
}

/// A figure's file name, as its data rows name it.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned())
}

/// Writes plotted rows to `path` atomically.
pub fn write_data(path: &Path, rows: &[PlotRow]) -> Result<()> {
    write_atomically(path, |out| write_rows(rows, out)).with_context(|| format!("{PLOT_DATA} {}", path.display()))?;
    note!("wrote plotted series {}", path.display());
    Ok(())
}

/// Checks a `--plot` destination before the work starts: a `.png`,
/// `.svg` or `.pdf` file that can be written (see [`check`]).
pub fn check_destination(path: &Path) -> Result<()> {
    if FigureFormat::of(path).is_none() {
        bail!(
            "{PLOT} {}: the figure must be a {} file",
            path.display(),
            FigureFormat::ACCEPTED
        );
    }
    check(PLOT, path)
}

/// Draws a figure with `draw` into a temporary file beside `path`, renamed
/// into place when complete.
pub fn draw_atomically(path: &Path, draw: impl FnOnce(&Path) -> Result<(), PlotError>) -> Result<()> {
    let file = AtomicFile::create(path).with_context(|| format!("{PLOT} {}", path.display()))?;
    draw(file.temp_path())?;
    file.commit().with_context(|| format!("{PLOT} {}", path.display()))?;
    note!("wrote figure {}", path.display());
    Ok(())
}

/// The run's configuration and uncoded, simulated (if there was a
/// simulation) and exact (where the theory gives it).
fn survival_curves(study: &Study, outcome: Option<&Outcome>) -> Vec<Curve> {
    let scheme = study.schemes()[0];
    let baseline = study.baseline();
    let sims = outcome.map(|o| (o.configs[0].survival.clone(), o.baseline.survival.clone()));
    let mut curves = Vec::new();
    for (s, simulated) in [
        (scheme, sims.as_ref().map(|s| s.0.clone())),
        (baseline, sims.map(|s| s.1)),
    ] {
        let law = study.exact_law(&s);
        let exact = law
            .map(|law| {
                let (lo, hi) = (law.quantile(1e-4), law.quantile(1.0 - 1e-7));
                (0..=300)
                    .map(|i| lo + (hi - lo) * i as f64 / 300.0)
                    .map(|t| (t, law.sf(t)))
                    .collect()
            })
            .unwrap_or_default();
        curves.push(Curve {
            label: s.to_string(),
            scheme: s.kind(),
            simulated: simulated.unwrap_or_default(),
            exact,
        });
    }
    curves
}

#[cfg(test)]
mod tests {
    use super::*;
    use gcsim::comm::{Comm, Link};
    use gcsim::dist::Dist;
    use gcsim::load::LoadModel;
    use gcsim::scheme::{Params, Scheme, SchemeKind};

    fn study(comm: Comm) -> Study {
        let crc = Scheme::new(
            SchemeKind::Crc,
            10,
            Params {
                s: Some(2),
                ..Params::default()
            },
        )
        .unwrap();
        Study::new(10, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![crc], 10, 0)
            .unwrap()
            .with_comm(comm)
    }

    /// The dashed exact survival curves carry the communication model: a
    /// constant transfer time shifts them by τ·message + D, and random
    /// transfer times or a shared link have no exact curve at all.
    #[test]
    fn exact_survival_curves_include_communication() {
        let plain = survival_curves(&study(Comm::default()), None);
        let shifted = survival_curves(&study(Comm::new(Some(2.0), None, Link::Dedicated, 0.5).unwrap()), None);
        for (p, s) in plain.iter().zip(&shifted) {
            assert_eq!(p.exact.len(), s.exact.len());
            assert!(!p.exact.is_empty());
            for (a, b) in p.exact.iter().zip(&s.exact) {
                assert!((b.0 - (a.0 + 2.5)).abs() < 1e-9, "{a:?} vs {b:?}");
                assert!((b.1 - a.1).abs() < 1e-9, "{a:?} vs {b:?}");
            }
        }
        let random = Comm::new(None, Some(Dist::exp(1.0).unwrap()), Link::Dedicated, 0.0).unwrap();
        let shared = Comm::new(Some(1.0), None, Link::Shared, 0.0).unwrap();
        for comm in [random, shared] {
            assert!(survival_curves(&study(comm), None).iter().all(|c| c.exact.is_empty()));
        }
    }
}
