//! Whole numbers in a scenario file as the command line takes them: a TOML
//! integer, a float with no fractional part (`1e6`, `20.0`), or either
//! written as a string (`"1e6"`). So `n = 1e6` means what `--n 1e6` does,
//! and `n = 20.5` or `n = -3` is refused naming what is accepted.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Unexpected, Visitor};
use toml::Spanned;

/// What the messages say is accepted.
const ACCEPTED: &str = "a whole number >= 0 (e.g. 20, 1e6 or \"1e6\")";

/// A whole number >= 0 in any of the accepted forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Whole(pub(super) u64);

impl fmt::Display for Whole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A float that is a whole number within u64, as that number.
fn from_float(x: f64) -> Option<u64> {
    // 2⁶⁴ itself is the first float past u64::MAX.
    (x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 18_446_744_073_709_551_616.0).then_some(x as u64)
}

struct WholeVisitor;

impl Visitor<'_> for WholeVisitor {
    type Value = Whole;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(ACCEPTED)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Whole, E> {
        Ok(Whole(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Whole, E> {
        u64::try_from(v)
            .map(Whole)
            .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Whole, E> {
        // Far from 1 the number is echoed in exponent form, not as the
        // hundreds of digits of its decimal expansion.
        let shown = if v == 0.0 || (1e-4..1e16).contains(&v.abs()) || !v.is_finite() {
            format!("floating point `{v}`")
        } else {
            format!("floating point `{v:e}`")
        };
        from_float(v)
            .map(Whole)
            .ok_or_else(|| E::invalid_value(Unexpected::Other(&shown), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Whole, E> {
        let text = v.trim();
        let parsed = text
            .parse::<u64>()
            .ok()
            .or_else(|| text.parse::<f64>().ok().and_then(from_float));
        parsed
            .map(Whole)
            .ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
    }
}

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WholeVisitor)
    }
}

/// The number as `T`, or an error naming the largest `T` holds.
fn narrow<T: TryFrom<u64>, E: de::Error>(v: u64) -> Result<T, E> {
    T::try_from(v).map_err(|_| E::custom(format!("{v} is too large: {ACCEPTED} that fits the key")))
}

/// An optional key with its span (`#[serde(default, deserialize_with = …)]`).
pub(super) fn spanned<'de, D, T>(d: D) -> Result<Option<Spanned<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    match Option::<Spanned<Whole>>::deserialize(d)? {
        None => Ok(None),
        Some(v) => {
            let span = v.span();
            Ok(Some(Spanned::new(span, narrow(v.into_inner().0)?)))
        }
    }
}

/// An optional key without its span.
pub(super) fn plain<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    Option::<Whole>::deserialize(d)?.map(|v| narrow(v.0)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Keys {
        #[serde(default, deserialize_with = "spanned")]
        n: Option<Spanned<usize>>,
        #[serde(default, deserialize_with = "plain")]
        seed: Option<u64>,
        #[serde(default)]
        list: Vec<Whole>,
    }

    fn read(text: &str) -> Result<Keys, String> {
        toml::from_str(text).map_err(|e| e.message().to_string())
    }

    #[test]
    fn every_form_of_a_whole_number_reads_as_the_flags_do() {
        for (text, n) in [
            ("n = 20", 20),
            ("n = 20.0", 20),
            ("n = 1e6", 1_000_000),
            ("n = 1.5e3", 1500),
            ("n = \"1e3\"", 1000),
            ("n = \" 7 \"", 7),
            ("n = 0", 0),
        ] {
            assert_eq!(read(text).unwrap().n.unwrap().into_inner(), n, "{text}");
        }
        let keys = read("seed = 4e9\nlist = [1, 2e1, \"3\"]").unwrap();
        assert_eq!(keys.seed, Some(4_000_000_000));
        assert_eq!(keys.list, [Whole(1), Whole(20), Whole(3)]);
        assert!(read("").unwrap().n.is_none());
    }

    #[test]
    fn what_is_not_a_whole_number_is_refused_naming_what_is() {
        for (text, shown) in [
            ("n = 20.5", "floating point `20.5`"),
            ("n = -3", "integer `-3`"),
            ("n = -1e3", "floating point `-1000`"),
            ("n = 1e-320", "floating point `1e-320`"),
            ("n = inf", "floating point `inf`"),
            ("n = nan", "floating point `NaN`"),
            ("n = 1e20", "floating point `1e20`"),
            ("n = \"x\"", "string \"x\""),
            ("n = true", "boolean `true`"),
        ] {
            let message = read(text).unwrap_err();
            assert!(message.contains(shown), "{text}: {message}");
            assert!(message.contains(ACCEPTED), "{text}: {message}");
        }
    }
}
