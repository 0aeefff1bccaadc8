//! What a scheme contributes to a sweep and to a plan: the configurations
//! a sweep's lists expand to, and the candidates `plan` scans by rising
//! load. Each scheme's [`super::Facts`] names its own functions for both.

use crate::param::Param;
use crate::range::{IntList, TimeList};

use super::{CustomShape, Params};

/// Most (s, m) combinations one scheme of a sweep may expand to; the study
/// then keeps at most [`crate::study::MAX_CONFIGS`] configurations.
pub const MAX_COMBINATIONS: usize = 1_000_000;

/// The parameter lists of a sweep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranges {
    /// Straggler tolerances.
    pub s: Option<IntList>,
    /// Message splits (comm-efficient).
    pub m: Option<IntList>,
    /// Recovery thresholds (mds).
    pub k: Option<IntList>,
    /// Graph degrees (approx-regular).
    pub d: Option<IntList>,
    /// The shape of the user's matrix (custom).
    pub custom: Option<CustomShape>,
    /// Deadlines (timeout).
    pub timeout: Option<TimeList>,
    /// The share Q after which speculative copies start (one value).
    pub speculate_after: Option<f64>,
    /// The factor F of speculative (one value).
    pub speculate_factor: Option<f64>,
    /// Partitions per worker (partial-frc, partial-crc).
    pub parts: Option<IntList>,
    /// Row blocks of A (polynomial, entangled) or matdot's inner split.
    pub p: Option<IntList>,
    /// Column blocks of B (polynomial, entangled).
    pub q: Option<IntList>,
}

impl Ranges {
    /// The values of `list`, or the scheme's need of it as an error.
    pub(super) fn need(list: &Option<IntList>, param: Param, example: &'static str) -> Result<Vec<usize>, GridError> {
        list.as_ref()
            .map(|l| l.values.clone())
            .ok_or(GridError::Missing { param, example })
    }

    /// The list of s, which most schemes need.
    pub(super) fn need_s(&self) -> Result<Vec<usize>, GridError> {
        Self::need(&self.s, Param::S, "0..50")
    }

    /// The schemes that read k, or s as k = n − s without it: a list of
    /// k, else of s.
    pub(super) fn k_or_s(&self) -> Result<Vec<Params>, GridError> {
        match (&self.k, &self.s) {
            (Some(ks), _) => Ok(ks.values.iter().map(|&k| Params::with_k(k)).collect()),
            (None, Some(ss)) => Ok(ss.values.iter().map(|&s| Params::with_s(s)).collect()),
            (None, None) => Err(GridError::Missing {
                param: Param::K,
                example: "1..100",
            }),
        }
    }
}

/// Why one scheme's lists of a sweep do not expand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GridError {
    /// A list the scheme needs is absent.
    Missing {
        /// The parameter.
        param: Param,
        /// An example list.
        example: &'static str,
    },
    /// More combinations than [`MAX_COMBINATIONS`].
    TooMany {
        /// The list crossed with s (or with p).
        param: Param,
        /// Combinations requested.
        count: u128,
    },
}

/// Every combination of `lists`, the first outermost, as `make` builds
/// them; more than [`MAX_COMBINATIONS`] is refused (naming `param`) before
/// any is built.
pub(super) fn product<const K: usize>(
    param: Param,
    lists: [&[usize]; K],
    make: impl Fn([usize; K]) -> Params,
) -> Result<Vec<Params>, GridError> {
    let count = lists.iter().map(|l| l.len() as u128).product::<u128>();
    if count > MAX_COMBINATIONS as u128 {
        return Err(GridError::TooMany { param, count });
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut at = [0; K];
    if lists.iter().any(|l| l.is_empty()) {
        return Ok(out);
    }
    loop {
        out.push(make(std::array::from_fn(|i| lists[i][at[i]])));
        // The last list varies fastest.
        let mut i = K;
        loop {
            if i == 0 {
                return Ok(out);
            }
            i -= 1;
            at[i] += 1;
            if at[i] < lists[i].len() {
                break;
            }
            at[i] = 0;
        }
    }
}

/// The lists `plan` searches besides each scheme's own range.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PlanLists {
    /// Partitions per worker, L (partial codes).
    pub parts: Vec<usize>,
    /// Message splits (comm-efficient).
    pub m: Vec<usize>,
    /// Deadlines (timeout).
    pub timeouts: Vec<f64>,
}

/// One run of candidates that `plan` builds in order until one exceeds
/// `--max-load`: a scheme's load rises along it.
pub(crate) struct Scan {
    /// The parameters, by rising load.
    pub params: Box<dyn Iterator<Item = Params>>,
    /// Whether the candidates kept are listed in the reverse order (by
    /// falling load: mds and the matmul codes list by threshold).
    pub reverse: bool,
}

impl Scan {
    /// A scan listed in the order built.
    pub(super) fn rising(params: impl Iterator<Item = Params> + 'static) -> Self {
        Self {
            params: Box::new(params),
            reverse: false,
        }
    }

    /// One candidate.
    pub(super) fn one(params: Params) -> Vec<Self> {
        vec![Self::rising(std::iter::once(params))]
    }

    /// s over 0..n − 1.
    pub(super) fn every_s(n: usize) -> Vec<Self> {
        vec![Self::rising((0..n).map(Params::with_s))]
    }
}

/// The divisors of n, ascending.
pub fn divisors(n: usize) -> Vec<usize> {
    let (mut low, mut high) = (Vec::new(), Vec::new());
    for d in (1..).take_while(|d| d * d <= n) {
        if n.is_multiple_of(d) {
            low.push(d);
            if d * d != n {
                high.push(n / d);
            }
        }
    }
    low.extend(high.into_iter().rev());
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product varies the last list fastest and refuses too many.
    #[test]
    fn product_orders_and_limits() {
        let got = product(Param::M, [&[1, 2], &[7, 8, 9]], |[s, m]| Params {
            s: Some(s),
            m: Some(m),
            ..Params::default()
        });
        let pairs: Vec<(usize, usize)> = got.unwrap().iter().map(|p| (p.s.unwrap(), p.m.unwrap())).collect();
        assert_eq!(pairs, [(1, 7), (1, 8), (1, 9), (2, 7), (2, 8), (2, 9)]);
        assert!(
            product(Param::M, [&[1], &[]], |_| Params::default())
                .unwrap()
                .is_empty()
        );
        let long: Vec<usize> = (0..1001).collect();
        assert_eq!(
            product(Param::D, [&long, &long], |_| Params::default()),
            Err(GridError::TooMany {
                param: Param::D,
                count: 1_002_001
            })
        );
        assert_eq!(divisors(12), [1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(1), [1]);
    }
}
