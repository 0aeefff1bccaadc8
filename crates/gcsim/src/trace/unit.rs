//! The unit of a time column, named by its header: `time` or `time_s` in
//! seconds, `time_ms` in milliseconds, `time_us` in microseconds. Every time
//! is converted to seconds as it is read, so a [`Trace`](super::Trace) and an
//! imported trace hold seconds whatever their file said.

pub use crate::units::TimeUnit;

impl TimeUnit {
    /// The names a trace's time column may have, with their units.
    pub(crate) const TIME_COLUMNS: [(&'static str, TimeUnit); 4] = [
        ("time", TimeUnit::Seconds),
        ("time_s", TimeUnit::Seconds),
        ("time_ms", TimeUnit::Milliseconds),
        ("time_us", TimeUnit::Microseconds),
    ];

    /// The power of ten of one second in this unit.
    fn digits(self) -> i64 {
        match self {
            TimeUnit::Seconds => 0,
            TimeUnit::Milliseconds => 3,
            TimeUnit::Microseconds => 6,
        }
    }

    /// `value` (in this unit) in seconds. A division by an exact power of
    /// ten is correctly rounded, so 12.5 ms becomes the double nearest
    /// 0.0125 (multiplying by the inexact 1e-3 could miss it by one ulp);
    /// a value still in its text form converts more exactly by
    /// [`Self::parse_seconds`].
    pub(crate) fn to_seconds(self, value: f64) -> f64 {
        value / 10f64.powi(self.digits() as i32)
    }

    /// The number `text` (in this unit) in seconds, or `None` if it is not
    /// a number. The decimal point moves in the text before it is parsed
    /// (`331.664078` ms is read as `331.664078e-3`), so the result is the
    /// double nearest the exact value in seconds, as if the file had said
    /// seconds: parsing, then dividing, rounds twice and may be one ulp
    /// off (0.33166407800000003).
    pub(crate) fn parse_seconds(self, text: &str) -> Option<f64> {
        let text = text.trim();
        let value: f64 = text.parse().ok()?;
        if self == TimeUnit::Seconds {
            return Some(value);
        }
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(i) => (&text[..i], text[i + 1..].parse::<i64>().ok()),
            None => (text, Some(0)),
        };
        let shifted = exponent.and_then(|e| format!("{mantissa}e{}", e - self.digits()).parse().ok());
        Some(shifted.unwrap_or_else(|| self.to_seconds(value)))
    }

    /// The unit of a trace's time column `name` (see [`Self::TIME_COLUMNS`]).
    pub(crate) fn of_time_column(name: &str) -> Option<Self> {
        Self::TIME_COLUMNS.iter().find(|(n, _)| *n == name).map(|&(_, u)| u)
    }

    /// The unit a column name's suffix names (`duration_ms`, `step_time_s`;
    /// any case), if any.
    pub(crate) fn from_suffix(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|u| lower.strip_suffix(u.symbol()).is_some_and(|rest| rest.ends_with('_')))
    }

    /// The accepted time-column names, for error messages.
    pub(crate) fn accepted_columns() -> &'static str {
        "`time` or `time_s` (seconds), `time_ms` (milliseconds), `time_us` (microseconds)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_the_nearest_double() {
        assert_eq!(TimeUnit::Milliseconds.to_seconds(12.5), 0.0125);
        assert_eq!(TimeUnit::Microseconds.to_seconds(850_123.0), 0.850123);
        assert_eq!(TimeUnit::Seconds.to_seconds(0.7), 0.7);
    }

    #[test]
    fn parses_to_the_nearest_double_of_the_exact_value() {
        assert_eq!(TimeUnit::Milliseconds.parse_seconds("331.664078"), Some(0.331664078));
        assert_ne!(
            TimeUnit::Milliseconds.to_seconds(331.664078),
            0.331664078,
            "two roundings"
        );
        assert_eq!(TimeUnit::Microseconds.parse_seconds(" 327358.414 "), Some(0.327358414));
        assert_eq!(TimeUnit::Microseconds.parse_seconds("3.5E2"), Some(0.00035));
        assert_eq!(TimeUnit::Milliseconds.parse_seconds("-2e-1"), Some(-0.0002));
        assert_eq!(TimeUnit::Seconds.parse_seconds("0.7"), Some(0.7));
        assert_eq!(TimeUnit::Milliseconds.parse_seconds("inf"), Some(f64::INFINITY));
        assert!(TimeUnit::Milliseconds.parse_seconds("NaN").unwrap().is_nan());
        assert_eq!(TimeUnit::Milliseconds.parse_seconds("fast"), None);
        assert_eq!(TimeUnit::Milliseconds.parse_seconds("1e400"), Some(f64::INFINITY));
        assert_eq!(
            TimeUnit::Milliseconds.parse_seconds("1e99999999999999999999"),
            Some(f64::INFINITY)
        );
    }

    #[test]
    fn reads_suffixes_and_names() {
        assert_eq!(TimeUnit::from_suffix("duration_ms"), Some(TimeUnit::Milliseconds));
        assert_eq!(TimeUnit::from_suffix("Step_Time_US"), Some(TimeUnit::Microseconds));
        assert_eq!(TimeUnit::from_suffix("wall_s"), Some(TimeUnit::Seconds));
        assert_eq!(TimeUnit::from_suffix("items"), None);
        assert_eq!(TimeUnit::from_suffix("ms"), None);
        assert_eq!(TimeUnit::of_time_column("time_us"), Some(TimeUnit::Microseconds));
        assert_eq!(TimeUnit::of_time_column("duration"), None);
        assert_eq!("ms".parse::<TimeUnit>(), Ok(TimeUnit::Milliseconds));
        assert!(
            "sec"
                .parse::<TimeUnit>()
                .unwrap_err()
                .to_string()
                .contains("accepted: s, ms, us")
        );
    }
}
