//! The keys of an all-reduce collective in a scenario file: `aggregation`,
//! `latency`, `bandwidth`, `gradient_size`, `buckets`, and the
//! `time_unit` its seconds are added in; a `[[study]]` table's own keys
//! over the file's.

use serde::Deserialize;
use toml::Spanned;

use super::ScenarioError;
use super::source::Source;
use gcsim::collective::{Aggregation, Collective, parse_aggregations, parse_bandwidth};
use gcsim::units::{TimeUnit, parse_bytes};

/// A size or a rate as TOML allows it: a number, or a string with its unit.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "accepted: a number > 0, or a string with its unit (e.g. \"25GB/s\", \"1.4GB\")"
)]
pub(super) enum Quantity {
    Number(f64),
    Text(String),
}

/// The collective's keys of one level (the file, or a `[[study]]` table).
pub(super) struct CollectiveKeys<'a> {
    pub(super) aggregation: Option<&'a Spanned<String>>,
    pub(super) latency: Option<&'a Spanned<f64>>,
    pub(super) bandwidth: Option<&'a Spanned<Quantity>>,
    pub(super) gradient_size: Option<&'a Spanned<Quantity>>,
    pub(super) buckets: Option<&'a Spanned<usize>>,
    pub(super) time_unit: Option<&'a Spanned<String>>,
}

/// The [`CollectiveKeys`] of a parsed table or file.
macro_rules! collective_keys {
    ($t:expr) => {
        $crate::scenario::collective::CollectiveKeys {
            aggregation: $t.aggregation.as_ref(),
            latency: $t.latency.as_ref(),
            bandwidth: $t.bandwidth.as_ref(),
            gradient_size: $t.gradient_size.as_ref(),
            buckets: $t.buckets.as_ref(),
            time_unit: $t.time_unit.as_ref(),
        }
    };
}
pub(super) use collective_keys;

impl Source<'_> {
    /// The aggregation and the time unit of a study: its own keys over the
    /// file's; an error points at the key at fault, or at the table.
    pub(super) fn aggregation(
        &self,
        file: &CollectiveKeys,
        own: &CollectiveKeys,
        label: &Spanned<String>,
    ) -> Result<(Aggregation, Option<TimeUnit>), ScenarioError> {
        let unit_key = own.time_unit.or(file.time_unit);
        let unit = match unit_key {
            Some(u) => match u.get_ref().parse::<TimeUnit>() {
                Ok(unit) => Some(unit),
                Err(e) => return self.err(Some(u.span()), format!("key `time_unit`: {e}")),
            },
            None => None,
        };
        let quantity = |key: &str, q: Option<&Spanned<Quantity>>, parse: fn(&str) -> Result<f64, String>| match q {
            Some(v) => match v.get_ref() {
                Quantity::Number(x) if x.is_finite() && *x > 0.0 => Ok(Some(*x)),
                Quantity::Number(x) => self.err(
                    Some(v.span()),
                    format!(
                        "key `{key}`: {} is out of range; accepted: a number > 0",
                        gcsim::param::plain(*x)
                    ),
                ),
                Quantity::Text(t) => parse(t)
                    .map(Some)
                    .or_else(|e| self.err(Some(v.span()), format!("key `{key}`: {e}"))),
            },
            None => Ok(None),
        };
        let bandwidth = quantity("bandwidth", own.bandwidth.or(file.bandwidth), parse_bandwidth)?;
        let gradient = quantity("gradient_size", own.gradient_size.or(file.gradient_size), parse_bytes)?;
        let name = own.aggregation.or(file.aggregation);
        let latency = own.latency.or(file.latency);
        let buckets = own.buckets.or(file.buckets);
        let algorithm = match name {
            None => None,
            Some(a) => match parse_aggregations(a.get_ref()) {
                Ok(list) if list.len() == 1 => list[0],
                Ok(_) => return self.err(Some(a.span()), "key `aggregation`: a study takes one algorithm"),
                Err(e) => return self.err(Some(a.span()), format!("key `aggregation`: {e}")),
            },
        };
        let Some(algorithm) = algorithm else {
            let stray = [
                ("latency", latency.map(|l| l.span())),
                ("bandwidth", own.bandwidth.or(file.bandwidth).map(|b| b.span())),
                ("buckets", buckets.map(|b| b.span())),
            ];
            if let Some((key, span)) = stray.into_iter().find(|(_, s)| s.is_some()) {
                return self.err(
                    span,
                    format!("key `{key}` describes an all-reduce collective: give aggregation = \"ring\", \"tree\", \"halving-doubling\" or \"hierarchical:...\""),
                );
            }
            return Ok((Aggregation::Master, unit));
        };
        match Collective::new(
            algorithm,
            latency.map(|l| *l.get_ref()),
            bandwidth,
            gradient,
            buckets.map_or(1, |b| *b.get_ref()),
            unit,
        ) {
            Ok(c) => Ok((Aggregation::Collective(c), unit)),
            Err(e) => {
                use gcsim::collective::CollectiveError;
                use gcsim::param::{Described, Param};
                let at = match &e {
                    CollectiveError::OutOfRange {
                        param: Param::Buckets, ..
                    } => buckets.map(|b| b.span()),
                    CollectiveError::OutOfRange {
                        param: Param::Latency, ..
                    } => latency.map(|l| l.span()),
                    _ => name.map(|n| n.span()),
                };
                let keys = |p: Param| format!("key `{}`", p.key());
                self.err(at.or(Some(label.span())), e.describe(&keys))
            }
        }
    }
}
