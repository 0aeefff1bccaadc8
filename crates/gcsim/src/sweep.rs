//! Expanding a sweep: schemes × parameter lists → configurations, skipping
//! the values a scheme does not admit and saying so.

use thiserror::Error;

use crate::param::{Described, Naming, Param, keys};
use crate::scheme::search::GridError;
use crate::scheme::{Scheme, SchemeError, SchemeKind};

pub use crate::scheme::search::{MAX_COMBINATIONS, Ranges};

/// Whether `kind` reads `param` at all (a scheme that reads k reads s
/// where k is not given).
fn reads(kind: SchemeKind, param: Param) -> bool {
    kind.facts().reads.contains(&param)
}

/// Why a sweep cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.describe(&keys))]
pub enum SweepError {
    /// A scheme needs a list that is absent.
    Missing {
        /// The scheme.
        scheme: SchemeKind,
        /// The parameter whose list is absent.
        param: Param,
        /// An example list.
        example: &'static str,
    },
    /// A list that no requested scheme reads (the message names those
    /// that do, from the facts).
    Unused {
        /// The parameter.
        param: Param,
    },
    /// A list of s that none of the schemes reads.
    UnreadS,
    /// More parameter combinations than a sweep may expand (a guard in the
    /// spirit of hyperfine's `RangeStep`: the product of two long lists would
    /// otherwise be built before any limit is checked).
    TooManyCombinations {
        /// The scheme.
        scheme: SchemeKind,
        /// The list crossed with the first.
        param: Param,
        /// Combinations requested.
        count: u128,
    },
    /// A parameter value out of range for every scheme (e.g. s >= n).
    Scheme(SchemeError),
    /// Every value was skipped: nothing to simulate (the reasons, as notes).
    AllSkipped(Vec<String>),
}

// By hand rather than `#[from]`, which would make the scheme's error the
// source too, and a rendered chain would say it twice.
impl From<SchemeError> for SweepError {
    fn from(e: SchemeError) -> Self {
        SweepError::Scheme(e)
    }
}

impl Described for SweepError {
    fn describe(&self, name: Naming) -> String {
        match self {
            SweepError::Missing { scheme, param, example } => {
                format!("scheme {scheme} needs {p} (e.g. {p} {example})", p = name(*param))
            }
            SweepError::Unused { param: Param::M, .. } => format!(
                "{} applies only to {schemes} comm-efficient (message split) and entangled (inner split), neither of which is in {schemes}",
                name(Param::M),
                schemes = name(Param::Scheme)
            ),
            SweepError::Unused { param, .. } => format!(
                "{} applies only to {schemes} {}, {} {schemes}",
                name(*param),
                SchemeKind::readers_listed(*param),
                match SchemeKind::readers(*param).count() {
                    1 => "which is not in",
                    2 => "neither of which is in",
                    _ => "none of which is in",
                },
                schemes = name(Param::Scheme)
            ),
            SweepError::UnreadS => format!(
                "none of the schemes given reads {s} (uncoded, timeout, speculative, polynomial, matdot and entangled take no s; mds, k-batch-sync, k-async and k-batch-async read k = n - s only without {k}); drop {s} or add a scheme that reads it",
                s = name(Param::S),
                k = name(Param::K)
            ),
            SweepError::TooManyCombinations { scheme, param, count } => format!(
                "scheme {scheme}: {count} combinations of {} and {} is more than the limit of {MAX_COMBINATIONS}; narrow the lists",
                name(Param::S),
                name(*param)
            ),
            SweepError::Scheme(e) => e.describe(name),
            SweepError::AllSkipped(notes) => format!(
                "no configuration to simulate: every value was skipped: {}",
                notes.join("; ")
            ),
        }
    }
}

/// A sweep's configurations, and the values skipped with their reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    /// The configurations, scheme by scheme in the order requested.
    pub schemes: Vec<Scheme>,
    /// One note per scheme and rule, e.g. `frc at s=2; s=5 (s+1 must divide n, n=100)`.
    pub skipped: Vec<String>,
}

/// One scheme's configurations from the lists (see [`crate::scheme::Facts`]).
fn params_of(kind: SchemeKind, ranges: &Ranges) -> Result<Vec<crate::scheme::Params>, SweepError> {
    (kind.facts().grid)(ranges).map_err(|e| match e {
        GridError::Missing { param, example } => SweepError::Missing {
            scheme: kind,
            param,
            example,
        },
        GridError::TooMany { param, count } => SweepError::TooManyCombinations {
            scheme: kind,
            param,
            count,
        },
    })
}

/// Expands `kinds` (duplicates ignored) over `ranges` on `n` workers.
pub fn expand(n: usize, kinds: &[SchemeKind], ranges: &Ranges) -> Result<Expanded, SweepError> {
    let mut unique: Vec<SchemeKind> = Vec::new();
    for &k in kinds {
        if !unique.contains(&k) {
            unique.push(k);
        }
    }
    for (given, param) in [
        (ranges.m.is_some(), Param::M),
        (ranges.p.is_some(), Param::P),
        (ranges.q.is_some(), Param::Q),
        (ranges.k.is_some(), Param::K),
        (ranges.parts.is_some(), Param::Parts),
        (ranges.speculate_after.is_some(), Param::SpeculateAfter),
        (ranges.speculate_factor.is_some(), Param::SpeculateFactor),
        (ranges.d.is_some(), Param::D),
        (ranges.timeout.is_some(), Param::Timeout),
        (ranges.custom.is_some(), Param::Code),
    ] {
        if given && !unique.iter().any(|&k| reads(k, param)) {
            return Err(SweepError::Unused { param });
        }
    }
    // Uncoded reads s only as 0: a list of s is not for it.
    let reads_s = |k: &SchemeKind| {
        *k != SchemeKind::Uncoded && k.facts().takes(Param::S, |p| p == Param::K && ranges.k.is_some())
    };
    if ranges.s.is_some() && !unique.iter().any(reads_s) {
        return Err(SweepError::UnreadS);
    }
    let mut schemes = Vec::new();
    let mut skipped: Vec<(SchemeKind, &'static str, Vec<String>)> = Vec::new();
    for &kind in &unique {
        for params in params_of(kind, ranges)? {
            let built = match (kind, ranges.custom) {
                (SchemeKind::Custom, Some(shape)) => Scheme::custom(shape, params.s),
                _ => Scheme::new(kind, n, params),
            };
            match built {
                Ok(s) => schemes.push(s),
                Err(SchemeError::NotAdmitted { what, rule, .. }) => {
                    match skipped.iter_mut().find(|(k, r, _)| *k == kind && *r == rule) {
                        Some(entry) => entry.2.push(what),
                        None => skipped.push((kind, rule, vec![what])),
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    let skipped = skipped
        .into_iter()
        .map(|(kind, rule, whats)| format!("{kind} at {} ({rule}, n={n})", whats.join("; ")))
        .collect();
    if schemes.is_empty() {
        return Err(SweepError::AllSkipped(skipped));
    }
    Ok(Expanded { schemes, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range::parse;

    #[test]
    fn expands_and_skips() {
        let ranges = Ranges {
            s: Some(parse("0..3").unwrap()),
            m: Some(parse("1,2").unwrap()),
            ..Ranges::default()
        };
        let kinds = [
            SchemeKind::Frc,
            SchemeKind::CommEfficient,
            SchemeKind::Frc,
            SchemeKind::Uncoded,
        ];
        let e = expand(6, &kinds, &ranges).unwrap();
        // frc: s = 0, 1, 2 (s=3: 4 does not divide 6); comm-efficient: 4 × 2; uncoded: 1.
        assert_eq!(e.schemes.len(), 3 + 8 + 1);
        assert_eq!(e.skipped, vec!["frc at s=3 (s+1 must divide n, n=6)".to_string()]);
    }

    #[test]
    fn errors() {
        // An s list that none of the schemes reads is refused, not dropped.
        let s_only = Ranges {
            s: Some(parse("0..5").unwrap()),
            ..Ranges::default()
        };
        assert_eq!(expand(6, &[SchemeKind::Uncoded], &s_only), Err(SweepError::UnreadS));
        let s_and_k = Ranges {
            s: Some(parse("2").unwrap()),
            k: Some(parse("1..5").unwrap()),
            ..Ranges::default()
        };
        assert_eq!(expand(6, &[SchemeKind::Mds], &s_and_k), Err(SweepError::UnreadS));
        assert!(expand(6, &[SchemeKind::Mds, SchemeKind::Crc], &s_and_k).is_ok());
        assert!(expand(6, &[SchemeKind::Mds], &s_only).is_ok());
        let none = Ranges::default();
        assert!(matches!(
            expand(6, &[SchemeKind::Crc], &none),
            Err(SweepError::Missing { .. })
        ));
        let m = Ranges {
            m: Some(parse("2").unwrap()),
            ..Ranges::default()
        };
        assert!(matches!(
            expand(6, &[SchemeKind::Uncoded], &m),
            Err(SweepError::Unused { .. })
        ));
        // Regression: 100 000 × 100 000 (s, m) pairs were built before any limit.
        let product = Ranges {
            s: Some(parse("0..99999").unwrap()),
            m: Some(parse("1..100000").unwrap()),
            ..Ranges::default()
        };
        let err = expand(200_000, &[SchemeKind::CommEfficient], &product).unwrap_err();
        assert!(err.to_string().contains("10000000000 combinations of s and m"), "{err}");
        // approx-regular's (s, d) pairs: over the limit by one list's length,
        // and exactly at it, which is admitted.
        let pairs = |s: &str, d: &str| Ranges {
            s: Some(parse(s).unwrap()),
            d: Some(parse(d).unwrap()),
            ..Ranges::default()
        };
        let err = expand(200_000, &[SchemeKind::ApproxRegular], &pairs("0..99999", "1..11")).unwrap_err();
        assert!(err.to_string().contains("1100000 combinations of s and d"), "{err}");
        let at_limit = expand(2000, &[SchemeKind::ApproxRegular], &pairs("0..999", "1..1000")).unwrap();
        assert_eq!(at_limit.schemes.len(), MAX_COMBINATIONS);
        let big = Ranges {
            s: Some(parse("6").unwrap()),
            ..Ranges::default()
        };
        assert!(matches!(
            expand(6, &[SchemeKind::Crc], &big),
            Err(SweepError::Scheme(_))
        ));
    }
}
