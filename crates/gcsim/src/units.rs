//! Units: the time unit of a study's times, and the costs of a run in
//! seconds, GPU-hours and bytes.
//!
//! gcsim computes in whatever unit the worker-time law is written in. A
//! trace is recorded in seconds (or read from `time_ms`/`time_us` columns
//! into seconds), so its unit is known; a parametric law's unit is known
//! when `--time-unit` names it. Costs need it: a run's wall-clock time is
//! its iterations times the mean iteration time in seconds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The unit of every time in a study (`--time-unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimeUnit {
    /// Seconds.
    #[serde(rename = "s")]
    Seconds,
    /// Milliseconds.
    #[serde(rename = "ms")]
    Milliseconds,
    /// Microseconds.
    #[serde(rename = "us")]
    Microseconds,
}

impl TimeUnit {
    /// Every unit, in the order `--help` lists them.
    pub const ALL: [TimeUnit; 3] = [TimeUnit::Seconds, TimeUnit::Milliseconds, TimeUnit::Microseconds];

    /// The symbol used on the command line and in output: `s`, `ms`, `us`.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Microseconds => "us",
        }
    }

    /// The unit in words, plural: `seconds`.
    pub fn words(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "seconds",
            TimeUnit::Milliseconds => "milliseconds",
            TimeUnit::Microseconds => "microseconds",
        }
    }

    /// Seconds in one unit.
    pub fn seconds(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1.0,
            TimeUnit::Milliseconds => 1e-3,
            TimeUnit::Microseconds => 1e-6,
        }
    }

    /// The factor that converts a time in seconds into this unit.
    pub fn per_second(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1.0,
            TimeUnit::Milliseconds => 1e3,
            TimeUnit::Microseconds => 1e6,
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl FromStr for TimeUnit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|u| u.symbol().eq_ignore_ascii_case(t) || u.words().eq_ignore_ascii_case(t))
            .ok_or_else(|| format!("unknown time unit `{t}`; accepted: s, ms, us"))
    }
}

/// How times are labelled: `s`, or a reminder that the unit is the law's own.
pub fn label(unit: Option<TimeUnit>) -> &'static str {
    unit.map_or("unit of --dist", TimeUnit::symbol)
}

/// The header's sentence on times: `times in seconds`, or where the unit is
/// not known, that it is the law's.
pub fn sentence(unit: Option<TimeUnit>) -> String {
    match unit {
        Some(u) => format!("times in {}", u.words()),
        None => "times in the unit of --dist (--time-unit s|ms|us names it)".to_string(),
    }
}

/// What a run costs, from the flags of the cost view: iterations per run,
/// the price of a GPU-hour, and the sizes of the data set and of one
/// gradient. Every field is optional; a cell is computed where its inputs are.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CostModel {
    /// Iterations (updates) in one training run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_per_run: Option<u64>,
    /// Price of one GPU-hour, in any currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_hour_price: Option<f64>,
    /// Bytes of the whole data set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_bytes: Option<f64>,
    /// Bytes of one full gradient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gradient_bytes: Option<f64>,
}

/// One configuration's costs, each where its inputs are known.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Costs {
    /// Iterations per hour of wall-clock time.
    pub iterations_per_hour: Option<f64>,
    /// Wall-clock hours of one run.
    pub run_hours: Option<f64>,
    /// GPU-hours of one run: every worker holds its GPU for the whole run.
    pub gpu_hours: Option<f64>,
    /// GPU-hours times the price.
    pub cost: Option<f64>,
    /// Bytes each worker stores: its load times one uncoded share.
    pub storage_bytes: Option<f64>,
    /// Bytes all workers send per iteration, each sending all its messages.
    pub bytes_per_iteration: Option<f64>,
}

/// What one configuration is, for its costs.
#[derive(Debug, Clone, Copy)]
pub struct Footprint {
    /// Workers (GPUs).
    pub n: usize,
    /// Mean time of one iteration, in the study's time unit.
    pub per_iteration: f64,
    /// Data per worker, in units of the uncoded share.
    pub load: f64,
    /// The cluster size whose uncoded share `load` counts (n, or `--ref-n`).
    pub share_of: usize,
    /// Gradients each worker sends per iteration (message size × messages).
    pub gradients_sent: f64,
    /// Under a collective, the gradients all ranks send per iteration,
    /// which replaces n × `gradients_sent` (see
    /// [`crate::collective::Collective::gradients_sent`]).
    pub collective_gradients: Option<f64>,
}

impl CostModel {
    /// Whether no cost flag was given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Whether the flags that count time (iterations per run, the price)
    /// were given: they need the time unit.
    pub fn needs_time_unit(&self) -> bool {
        self.iterations_per_run.is_some() || self.gpu_hour_price.is_some()
    }

    /// The names of the cost columns that rows with times in `unit` have
    /// (those [`CostModel::costs`] fills), in the rows' order.
    pub fn columns(&self, unit: Option<TimeUnit>) -> Vec<&'static str> {
        let c = self.costs(
            unit,
            &Footprint {
                n: 1,
                per_iteration: 1.0,
                load: 1.0,
                share_of: 1,
                gradients_sent: 1.0,
                collective_gradients: None,
            },
        );
        [
            ("iterations_per_hour", c.iterations_per_hour),
            ("run_hours", c.run_hours),
            ("gpu_hours", c.gpu_hours),
            ("cost", c.cost),
            ("storage_bytes", c.storage_bytes),
            ("bytes_per_iteration", c.bytes_per_iteration),
        ]
        .into_iter()
        .filter_map(|(name, cell)| cell.map(|_| name))
        .collect()
    }

    /// The costs of one configuration whose times are in `unit` (time cells
    /// only where the unit is known).
    pub fn costs(&self, unit: Option<TimeUnit>, f: &Footprint) -> Costs {
        let seconds = unit.map(|u| f.per_iteration * u.seconds());
        let per_hour = seconds.filter(|_| !self.is_empty()).map(|s| 3600.0 / s);
        let run_hours = seconds
            .zip(self.iterations_per_run)
            .map(|(s, it)| s * it as f64 / 3600.0);
        let gpu_hours = run_hours.map(|h| h * f.n as f64);
        Costs {
            iterations_per_hour: per_hour,
            run_hours,
            gpu_hours,
            cost: gpu_hours.zip(self.gpu_hour_price).map(|(h, p)| h * p),
            storage_bytes: self.dataset_bytes.map(|d| f.load * d / f.share_of as f64),
            bytes_per_iteration: self
                .gradient_bytes
                .map(|g| g * f.collective_gradients.unwrap_or(f.gradients_sent * f.n as f64)),
        }
    }
}

/// Gradients one worker of `scheme` sends per iteration: its message size
/// times its messages (multi-message sends s + 1, the partial-straggler
/// codes two unless L = s + 1, every other scheme one).
pub(crate) fn gradients_sent(scheme: crate::scheme::SchemeKind, s: usize, parts: Option<usize>, message: f64) -> f64 {
    use crate::scheme::Messages;
    let messages = match scheme.facts().messages {
        Messages::One => 1,
        Messages::PerPartition => s + 1,
        Messages::OwnAndCoded if parts.is_some_and(|l| l > s + 1) => 2,
        Messages::OwnAndCoded => 1,
    };
    messages as f64 * message
}

/// A size in bytes: a number with an optional unit, decimal (`kB`, `MB`,
/// `GB`, `TB`) or binary (`KiB`, `MiB`, `GiB`, `TiB`), e.g. `1.5GB`, `350MiB`,
/// `4e9`.
pub fn parse_bytes(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "tb" | "t" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024f64.powi(2),
        "gib" => 1024f64.powi(3),
        "tib" => 1024f64.powi(4),
        _ => {
            return Err(format!(
                "`{t}`: unknown unit `{}`; accepted: a number of bytes with B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 1.5GB)",
                unit.trim()
            ));
        }
    };
    match crate::range::real(number) {
        Some(x) if x.is_finite() && x > 0.0 && (x * factor).is_finite() => Ok(x * factor),
        _ => Err(format!(
            "`{t}` is not a size; accepted: a number > 0 of bytes, optionally with B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 1.5GB)"
        )),
    }
}

/// A size for a table cell, in decimal units: `512B`, `1.50GB`, `64.0TB`.
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    if !bytes.is_finite() {
        return bytes.to_string();
    }
    let mut x = bytes;
    let mut i = 0;
    while x >= 999.5 && i + 1 < UNITS.len() {
        x /= 1000.0;
        i += 1;
    }
    match i {
        0 => format!("{x:.0}B"),
        _ if x >= 99.95 => format!("{x:.0}{}", UNITS[i]),
        _ if x >= 9.995 => format!("{x:.1}{}", UNITS[i]),
        _ => format!("{x:.2}{}", UNITS[i]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_parse_print_and_convert() {
        for u in TimeUnit::ALL {
            assert_eq!(u.symbol().parse::<TimeUnit>(), Ok(u));
            assert_eq!(u.words().to_uppercase().parse::<TimeUnit>(), Ok(u));
            assert_eq!(u.seconds() * u.per_second(), 1.0);
        }
        assert_eq!(TimeUnit::Milliseconds.seconds(), 0.001);
        assert_eq!(TimeUnit::Microseconds.per_second(), 1e6);
        assert!("min".parse::<TimeUnit>().unwrap_err().contains("accepted: s, ms, us"));
        assert_eq!(label(None), "unit of --dist");
        assert_eq!(sentence(Some(TimeUnit::Seconds)), "times in seconds");
    }

    #[test]
    fn sizes_parse_with_units() {
        for (text, bytes) in [
            ("4096", 4096.0),
            ("1.5GB", 1.5e9),
            ("350 MiB", 350.0 * 1048576.0),
            ("4e9", 4e9),
            ("2kB", 2000.0),
            ("1TiB", 1099511627776.0),
        ] {
            assert_eq!(parse_bytes(text), Ok(bytes), "{text}");
        }
        for (bytes, text) in [
            (512.0, "512B"),
            (1.5e9, "1.50GB"),
            (64e12, "64.0TB"),
            (999.0, "999B"),
            (2.5e5, "250kB"),
        ] {
            assert_eq!(format_bytes(bytes), text);
            let back = parse_bytes(text).unwrap();
            assert!((back - bytes).abs() <= 0.005 * bytes, "{text}");
        }
        for bad in ["", "-1GB", "0", "1 parsec", "GB", "inf"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn costs_follow_their_definitions() {
        let model = CostModel {
            iterations_per_run: Some(10_000),
            gpu_hour_price: Some(2.5),
            dataset_bytes: Some(64e9),
            gradient_bytes: Some(1e8),
        };
        let f = Footprint {
            n: 64,
            per_iteration: 720.0,
            load: 3.0,
            share_of: 64,
            gradients_sent: 0.5,
            collective_gradients: None,
        };
        let c = model.costs(Some(TimeUnit::Milliseconds), &f);
        // 0.72 s per iteration: 5000 per hour; 10^4 iterations take 2 h on 64 GPUs.
        assert!((c.iterations_per_hour.unwrap() - 5000.0).abs() < 1e-9);
        assert!((c.run_hours.unwrap() - 2.0).abs() < 1e-12);
        assert!((c.gpu_hours.unwrap() - 128.0).abs() < 1e-9);
        assert!((c.cost.unwrap() - 320.0).abs() < 1e-9);
        assert_eq!(c.storage_bytes, Some(3e9));
        assert_eq!(c.bytes_per_iteration, Some(0.5 * 1e8 * 64.0));
        // Without the unit, only the sizes.
        let c = model.costs(None, &f);
        assert_eq!((c.run_hours, c.iterations_per_hour, c.cost), (None, None, None));
        assert_eq!(c.storage_bytes, Some(3e9));
        // Without any flag, nothing at all.
        assert_eq!(
            CostModel::default().costs(Some(TimeUnit::Seconds), &f),
            Costs::default()
        );
        use crate::scheme::SchemeKind;
        assert_eq!(gradients_sent(SchemeKind::MultiMessage, 3, None, 1.0), 4.0);
        assert_eq!(gradients_sent(SchemeKind::PartialCrc, 1, Some(2), 1.0), 1.0);
        assert_eq!(gradients_sent(SchemeKind::PartialCrc, 1, Some(5), 1.0), 2.0);
        assert_eq!(gradients_sent(SchemeKind::CommEfficient, 2, None, 0.25), 0.25);
    }
}
