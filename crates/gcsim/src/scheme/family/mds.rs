//! MDS-coded matrix–vector multiplication (Lee et al. 2017): load n/k,
//! decodable from any k; for linear models only.

use std::fmt;

use super::super::facts::{Colour, Facts, Marker, Ops, code, style};
use super::super::search::Scan;
use super::super::{Params, Shape};
use super::Def;
use crate::encoding::{self, Encoding, Generator};
use crate::param::Param;

use faer::Mat;

/// The MDS code decodable from any k of n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mds {
    /// The recovery threshold, 1..=n.
    pub k: usize,
}

pub(super) const FACTS: Facts = Facts {
    linear_only: true,
    generator: true,
    ..code(
        "mds",
        "MDS-coded matrix-vector (Lee et al. 2017): load n/k, any k suffice",
        &[Param::K, Param::S],
        style(Colour::Orange, Marker::Square),
        Ops {
            build: |b| Ok(Shape::Mds(Mds { k: b.k_or_s()? })),
            grid: |ranges| ranges.k_or_s(),
            // By rising load, falling k; listed by rising k.
            search: |n, _| {
                vec![Scan {
                    params: Box::new((1..=n).rev().map(Params::with_k)),
                    reverse: true,
                }]
            },
        },
    )
};

impl Def for Mds {
    fn threshold(&self, _: usize) -> usize {
        self.k
    }
    fn load(&self, n: usize) -> f64 {
        n as f64 / self.k as f64
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn params(&self) -> Params {
        Params::with_k(self.k)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mds k={}", self.k)
    }
    fn encoding(&self, n: usize, generator: Generator, seed: u64) -> Encoding {
        Encoding::Built {
            b: encoding::mds(n, self.k, generator, seed),
            target: Mat::identity(self.k, self.k),
        }
    }
}
