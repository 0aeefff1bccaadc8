//! The `--dist NAME:key=value,...` syntax and its canonical form.
//!
//! `Display` writes the canonical string, which `FromStr` reads back to the
//! same value: `exp:rate=1,p_slow=0.05,slowdown=8`.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::{Base, Dist, Groups, Stragglers};
use crate::param::one_line;

/// The keys every law takes beyond its own parameters.
const SHARED_KEYS: [&str; 6] = ["p_slow", "slowdown", "group", "p_group", "group_slowdown", "persist"];

/// The names of the laws, as `--dist` takes them.
const NAMES: [&str; 5] = ["exp", "shifted-exp", "pareto", "lognormal", "weibull"];

/// Usual symbols for a law's parameters, which gcsim names by word: the
/// exponential's λ is its rate and the Weibull's its scale, the Pareto's
/// α its shape and x_m its scale, the Weibull's k its shape.
const SYMBOLS: [(&str, &str, &str); 10] = [
    ("exp", "lambda", "rate"),
    ("shifted-exp", "lambda", "rate"),
    ("shifted-exp", "delta", "shift"),
    ("shifted-exp", "offset", "shift"),
    ("pareto", "alpha", "shape"),
    ("pareto", "xm", "scale"),
    ("pareto", "x_m", "scale"),
    ("weibull", "lambda", "scale"),
    ("weibull", "k", "shape"),
    ("lognormal", "sd", "sigma"),
];

/// ` (did you mean `KEY`?)` for a key `dist` does not take: the key a
/// usual symbol stands for, else the nearest of `keys`, else nothing.
fn key_hint(dist: &str, given: &str, keys: &[&'static str]) -> String {
    let lower = given.to_ascii_lowercase();
    if let Some((_, _, key)) = SYMBOLS.iter().find(|(d, symbol, _)| *d == dist && *symbol == lower) {
        return format!(" (did you mean `{key}`?)");
    }
    crate::suggest::did_you_mean(given, keys.iter().chain(SHARED_KEYS.iter()).copied())
}

/// A complete example of the group keys.
const GROUP_EXAMPLE: &str = "exp:rate=1,group=8,p_group=0.02,group_slowdown=3";

/// Why a distribution could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DistError {
    /// The name before the `:` is not a known law.
    #[error(
        "unknown distribution `{name}`{hint}; accepted: exp, shifted-exp, pareto, lognormal, weibull (e.g. `exp:rate=1`)"
    )]
    UnknownName {
        /// The name as given (control characters escaped).
        name: String,
        /// ` (did you mean `exp`?)` for a near name, else empty.
        hint: String,
    },
    /// A key the law does not take.
    #[error("unknown key `{key}` for `{dist}`{hint}; accepted: {accepted}")]
    UnknownKey {
        /// The distribution name.
        dist: &'static str,
        /// The key as given (control characters escaped).
        key: String,
        /// ` (did you mean `rate`?)` for a near key or a usual symbol for
        /// one (`lambda` for the exponential's rate), else empty.
        hint: String,
        /// The keys the law takes.
        accepted: &'static str,
    },
    /// A required key is absent.
    #[error("`{dist}` needs the key `{key}` (e.g. `{example}`)")]
    MissingKey {
        /// The distribution name.
        dist: &'static str,
        /// The missing key.
        key: &'static str,
        /// A complete example.
        example: &'static str,
    },
    /// The same key twice (aliases count as the same key).
    #[error("key `{0}` is given twice")]
    DuplicateKey(String),
    /// A value that does not parse as a number.
    #[error("`{key}={value}` is not a number")]
    NotANumber {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
    },
    /// A number outside the accepted range.
    #[error("`{key}={}` is out of range; accepted: {accepted}", plain(*value))]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The rejected value.
        value: f64,
        /// The accepted range.
        accepted: &'static str,
    },
    /// `persist` on a law with nothing to persist.
    #[error(
        "`persist` needs a state to keep: give p_slow and slowdown (e.g. `exp:rate=1,p_slow=0.05,slowdown=8,persist=0.9`) or group, p_group and group_slowdown"
    )]
    PersistAlone,
    /// A parameter that is not of the form `key=value`.
    #[error("`{0}` is not of the form key=value (e.g. `exp:rate=1`)")]
    Malformed(String),
}

pub(crate) use crate::param::plain;

/// Canonical key names and the aliases that map to them: `mu` is the rate
/// of the laws that have one (exp, shifted-exp), and its own key elsewhere
/// (the log-normal's μ).
fn canonical<'a>(key: &'a str, keys: &[&str]) -> &'a str {
    match key {
        "mu" if keys.contains(&"rate") => "rate",
        other => other,
    }
}

struct Params {
    dist: &'static str,
    accepted: &'static str,
    values: Vec<(&'static str, f64)>,
}

impl Params {
    fn parse(
        dist: &'static str,
        keys: &'static [&'static str],
        accepted: &'static str,
        text: &str,
    ) -> Result<Self, DistError> {
        let mut values: Vec<(&'static str, f64)> = Vec::new();
        for item in text.split(',').filter(|s| !s.trim().is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| DistError::Malformed(one_line(item.trim())))?;
            let (key, value) = (key.trim(), value.trim());
            // Keys in any case: `Rate=1` is `rate=1`.
            let lower = key.to_ascii_lowercase();
            let known = keys
                .iter()
                .chain(SHARED_KEYS.iter())
                .find(|k| **k == canonical(&lower, keys))
                .copied()
                .ok_or_else(|| DistError::UnknownKey {
                    dist,
                    key: one_line(key),
                    hint: key_hint(dist, key, keys),
                    accepted,
                })?;
            if values.iter().any(|(k, _)| *k == known) {
                return Err(DistError::DuplicateKey(known.to_string()));
            }
            let number: f64 = crate::range::real(value).ok_or_else(|| DistError::NotANumber {
                key: one_line(key),
                value: one_line(value),
            })?;
            values.push((known, number));
        }
        Ok(Self { dist, accepted, values })
    }

    fn get(&self, key: &'static str) -> Option<f64> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn require(&self, key: &'static str, example: &'static str) -> Result<f64, DistError> {
        self.get(key).ok_or(DistError::MissingKey {
            dist: self.dist,
            key,
            example,
        })
    }

    /// The straggler mixture, the groups and the persistence, in that order.
    fn shared(&self, dist: Dist) -> Result<Dist, DistError> {
        let dist = self.groups(self.stragglers(dist)?)?;
        match self.get("persist") {
            Some(rho) => dist.with_persist(rho),
            None => Ok(dist),
        }
    }

    fn groups(&self, dist: Dist) -> Result<Dist, DistError> {
        let keys = ["group", "p_group", "group_slowdown"];
        let values = keys.map(|k| self.get(k));
        if values.iter().all(Option::is_none) {
            return Ok(dist);
        }
        if let Some(i) = values.iter().position(Option::is_none) {
            return Err(DistError::MissingKey {
                dist: self.dist,
                key: keys[i],
                example: GROUP_EXAMPLE,
            });
        }
        let [size, p, slowdown] = values.map(|v| v.expect("checked above"));
        if size.fract() != 0.0 || !(1.0..=super::MAX_GROUP as f64).contains(&size) {
            return Err(DistError::OutOfRange {
                key: "group",
                value: size,
                accepted: "a whole number from 1 to 16777216 (workers per group)",
            });
        }
        dist.with_groups(size as usize, p, slowdown)
    }

    fn stragglers(&self, dist: Dist) -> Result<Dist, DistError> {
        match (self.get("p_slow"), self.get("slowdown")) {
            (None, None) => Ok(dist),
            (Some(p), Some(s)) => dist.with_stragglers(p, s),
            (Some(_), None) => Err(DistError::MissingKey {
                dist: self.dist,
                key: "slowdown",
                example: "exp:rate=1,p_slow=0.05,slowdown=8",
            }),
            (None, Some(_)) => Err(DistError::MissingKey {
                dist: self.dist,
                key: "p_slow",
                example: "exp:rate=1,p_slow=0.05,slowdown=8",
            }),
        }
    }
}

impl FromStr for Dist {
    type Err = DistError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let params = |dist, keys, accepted| Params::parse(dist, keys, accepted, rest);
        // Names in any case: `Exp:rate=1` is `exp:rate=1`.
        let (params, dist) = match name.trim().to_ascii_lowercase().as_str() {
            "exp" => {
                let p = params(
                    "exp",
                    &["rate"],
                    "rate (alias mu), p_slow, slowdown, group, p_group, group_slowdown, persist",
                )?;
                let d = Dist::exp(p.require("rate", "exp:rate=1")?)?;
                (p, d)
            }
            "shifted-exp" => {
                let p = params(
                    "shifted-exp",
                    &["shift", "rate"],
                    "shift, rate (alias mu), p_slow, slowdown, group, p_group, group_slowdown, persist",
                )?;
                let example = "shifted-exp:shift=1,rate=1";
                let d = Dist::shifted_exp(p.require("shift", example)?, p.require("rate", example)?)?;
                (p, d)
            }
            "pareto" => {
                let p = params(
                    "pareto",
                    &["scale", "shape"],
                    "scale, shape, p_slow, slowdown, group, p_group, group_slowdown, persist",
                )?;
                let example = "pareto:scale=1,shape=2.5";
                let d = Dist::pareto(p.require("scale", example)?, p.require("shape", example)?)?;
                (p, d)
            }
            "lognormal" => {
                let p = params(
                    "lognormal",
                    &["mu", "sigma"],
                    "mu, sigma, p_slow, slowdown, group, p_group, group_slowdown, persist",
                )?;
                let example = "lognormal:mu=0,sigma=0.5";
                let d = Dist::lognormal(p.require("mu", example)?, p.require("sigma", example)?)?;
                (p, d)
            }
            "weibull" => {
                let p = params(
                    "weibull",
                    &["scale", "shape"],
                    "scale, shape, p_slow, slowdown, group, p_group, group_slowdown, persist",
                )?;
                let example = "weibull:scale=1,shape=1.5";
                let d = Dist::weibull(p.require("scale", example)?, p.require("shape", example)?)?;
                (p, d)
            }
            _ => {
                return Err(DistError::UnknownName {
                    name: one_line(name.trim()),
                    hint: crate::suggest::did_you_mean(name, NAMES),
                });
            }
        };
        debug_assert!(!params.accepted.is_empty());
        params.shared(dist)
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.base {
            Base::Exp { rate } => write!(f, "exp:rate={rate}")?,
            Base::ShiftedExp { shift, rate } => write!(f, "shifted-exp:shift={shift},rate={rate}")?,
            Base::Pareto { scale, shape } => write!(f, "pareto:scale={scale},shape={shape}")?,
            Base::LogNormal { mu, sigma } => write!(f, "lognormal:mu={mu},sigma={sigma}")?,
            Base::Weibull { scale, shape } => write!(f, "weibull:scale={scale},shape={shape}")?,
        }
        if let Some(Stragglers { p_slow, slowdown }) = self.stragglers {
            write!(f, ",p_slow={p_slow},slowdown={slowdown}")?;
        }
        if let Some(Groups { size, p, slowdown }) = self.groups {
            write!(f, ",group={size},p_group={p},group_slowdown={slowdown}")?;
        }
        if self.persist > 0.0 {
            write!(f, ",persist={}", self.persist)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_law_and_round_trips() {
        for text in [
            "exp:rate=1",
            "exp:rate=0.25,p_slow=0.05,slowdown=8",
            "shifted-exp:shift=1,rate=2",
            "pareto:scale=1,shape=2.5",
            "pareto:scale=0.5,shape=1.1,p_slow=0,slowdown=1",
            "lognormal:mu=-0.25,sigma=0.5",
            "lognormal:mu=1.5,sigma=2,p_slow=0.05,slowdown=8",
            "weibull:scale=1.2,shape=0.7",
            "weibull:scale=3,shape=2,p_slow=0.1,slowdown=4",
            "lognormal:mu=0.1234567890123456,sigma=0.987654321",
            "exp:rate=1,p_slow=0.05,slowdown=8,persist=0.9",
            "weibull:scale=1,shape=2,group=8,p_group=0.02,group_slowdown=3",
            "exp:rate=2,p_slow=0.1,slowdown=4,group=4,p_group=0.5,group_slowdown=2,persist=0.5",
            "exp:rate=1,group=1,p_group=0,group_slowdown=1,persist=0.25",
        ] {
            let d: Dist = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
            assert_eq!(d.to_string().parse::<Dist>().unwrap(), d);
        }
    }

    #[test]
    fn alias_and_spacing() {
        let d: Dist = "exp: mu = 2".parse().unwrap();
        assert_eq!(d, Dist::exp(2.0).unwrap());
        // `mu` is the log-normal's own key, not the rate alias.
        let d: Dist = "lognormal:mu=2,sigma=1".parse().unwrap();
        assert_eq!(d, Dist::lognormal(2.0, 1.0).unwrap());
    }

    #[test]
    fn names_and_keys_in_any_case() {
        let d: Dist = "Exp:Rate=2".parse().unwrap();
        assert_eq!(d, Dist::exp(2.0).unwrap());
        let d: Dist = "WEIBULL:scale=1,SHAPE=2,P_slow=0.1,slowdown=3".parse().unwrap();
        assert_eq!(d.to_string(), "weibull:scale=1,shape=2,p_slow=0.1,slowdown=3");
    }

    #[test]
    fn near_misses_get_a_suggestion() {
        let cases = [
            (
                "exponential:rate=1",
                "unknown distribution `exponential` (did you mean `exp`?)",
            ),
            ("log-normal:mu=0,sigma=1", "(did you mean `lognormal`?)"),
            ("exp:lambda=1", "unknown key `lambda` for `exp` (did you mean `rate`?)"),
            ("weibull:lambda=1,shape=2", "(did you mean `scale`?)"),
            ("weibull:scale=1,k=2", "(did you mean `shape`?)"),
            ("pareto:scale=1,alpha=2", "(did you mean `shape`?)"),
            ("exp:rat=1", "(did you mean `rate`?)"),
            ("exp:rate=1,pslow=0.1,slowdown=2", "(did you mean `p_slow`?)"),
            ("exp:rate=1,p_slow=0.1,slow_down=2", "(did you mean `slowdown`?)"),
        ];
        for (text, expected) in cases {
            let err = text.parse::<Dist>().unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        for text in ["gauss:mean=1", "exp:rate=1,colour=2"] {
            let err = text.parse::<Dist>().unwrap_err().to_string();
            assert!(!err.contains("did you mean"), "{text}: {err}");
        }
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let cases = [
            ("gauss:mean=1", "unknown distribution `gauss`"),
            ("exp:rate=1,lambda=2", "unknown key `lambda`"),
            ("exp", "needs the key `rate`"),
            ("exp:rate=1,mu=2", "given twice"),
            ("exp:rate=fast", "`rate=fast` is not a number"),
            ("exp:rate=-1", "`rate=-1` is out of range"),
            ("exp:rate=inf", "`rate=inf` is out of range"),
            ("exp:rate=NaN", "`rate=NaN` is out of range"),
            ("exp:rate", "not of the form key=value"),
            ("shifted-exp:rate=1", "needs the key `shift`"),
            ("shifted-exp:shift=-0.5,rate=1", "`shift=-0.5` is out of range"),
            ("pareto:scale=1,shape=0", "`shape=0` is out of range"),
            ("pareto:scale=0,shape=2", "`scale=0` is out of range"),
            ("exp:rate=1,p_slow=2,slowdown=3", "`p_slow=2` is out of range"),
            ("exp:rate=1,p_slow=0.1,slowdown=0.5", "`slowdown=0.5` is out of range"),
            ("exp:rate=1,p_slow=0.1", "needs the key `slowdown`"),
            ("lognormal:mu=0", "needs the key `sigma`"),
            ("lognormal:sigma=1", "needs the key `mu`"),
            ("lognormal:mu=0,sigma=0", "`sigma=0` is out of range"),
            ("lognormal:mu=0,sigma=-1", "`sigma=-1` is out of range"),
            ("lognormal:mu=inf,sigma=1", "`mu=inf` is out of range"),
            ("lognormal:mu=0,sigma=1,rate=2", "unknown key `rate`"),
            ("weibull:scale=1", "needs the key `shape`"),
            ("weibull:scale=1,shape=0", "`shape=0` is out of range"),
            ("weibull:scale=-2,shape=1", "`scale=-2` is out of range"),
            ("weibull:scale=1,shape=1,rate=1", "unknown key `rate`"),
            (
                "weibull:scale=1,shape=2,p_slow=0.1,slowdown=0.5",
                "`slowdown=0.5` is out of range",
            ),
            ("exp:rate=1,persist=0.5", "`persist` needs a state to keep"),
            (
                "exp:rate=1,p_slow=0.1,slowdown=2,persist=1",
                "`persist=1` is out of range; accepted: a number in [0, 1)",
            ),
            (
                "exp:rate=1,p_slow=0.1,slowdown=2,persist=-0.1",
                "`persist=-0.1` is out of range",
            ),
            ("exp:rate=1,group=4,p_group=0.1", "needs the key `group_slowdown`"),
            ("exp:rate=1,p_group=0.1,group_slowdown=2", "needs the key `group`"),
            (
                "exp:rate=1,group=2.5,p_group=0.1,group_slowdown=2",
                "`group=2.5` is out of range",
            ),
            (
                "exp:rate=1,group=0,p_group=0.1,group_slowdown=2",
                "`group=0` is out of range",
            ),
            (
                "exp:rate=1,group=4,p_group=1.5,group_slowdown=2",
                "`p_group=1.5` is out of range",
            ),
            (
                "exp:rate=1,group=4,p_group=0.5,group_slowdown=0.9",
                "`group_slowdown=0.9` is out of range",
            ),
            ("exp:rate=1,persist=0.5,persist=0.2", "given twice"),
        ];
        for (text, expected) in cases {
            let err = text.parse::<Dist>().unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
