//! The repetition gradient codes of Tandon et al. (2017): fractional (§4.1)
//! and cyclic (§4.2), and the cyclic placement sending one message per
//! partition (Ozfatura, Gündüz & Ulukus 2019).

use std::fmt;

use super::super::error::frc_admits;
use super::super::facts::{Colour, Facts, Marker, Messages, Ops, code, strategy, style};
use super::super::search::{Scan, divisors};
use super::super::{Params, Rule, Shape, Strategy};
use super::Def;
use super::plain::s_list;
use crate::encoding::{self, Encoding, Generator};
use crate::param::Param;

/// Fractional repetition: n/(s+1) groups of s+1 workers, each group
/// holding the same s+1 partitions; one worker of every group suffices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frc {
    /// Stragglers tolerated; s + 1 divides n.
    pub s: usize,
}

pub(super) const FRC: Facts = code(
    "frc",
    "Fractional repetition (Tandon et al. 2017): load s+1, s+1 must divide n",
    &[Param::S],
    style(Colour::Vermillion, Marker::TriangleUp),
    Ops {
        build: |b| {
            let s = b.need_s()?;
            frc_admits(b.kind, b.n, s, format!("s={s}"))?;
            Ok(Shape::Frc(Frc { s }))
        },
        grid: s_list,
        // Only the divisors of n admit a group size.
        search: |n, _| vec![Scan::rising(divisors(n).into_iter().map(|d| Params::with_s(d - 1)))],
    },
);

impl Def for Frc {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, _: usize) -> f64 {
        (self.s + 1) as f64
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn rule(&self, _: usize) -> Rule {
        Rule::Groups { size: self.s + 1 }
    }
    fn encoding(&self, n: usize, _: Generator, _: u64) -> Encoding {
        Encoding::of_sum(encoding::frc(n, self.s))
    }
    fn params(&self) -> Params {
        Params::with_s(self.s)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "frc s={}", self.s)
    }
}

/// Cyclic repetition: worker i holds partitions i, …, i + s (mod n); any
/// n − s suffice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crc {
    /// Stragglers tolerated.
    pub s: usize,
}

pub(super) const CRC: Facts = code(
    "crc",
    "Cyclic repetition (Tandon et al. 2017): load s+1, any n-s suffice",
    &[Param::S],
    style(Colour::Blue, Marker::Circle),
    Ops {
        build: |b| Ok(Shape::Crc(Crc { s: b.need_s()? })),
        grid: s_list,
        search: |n, _| Scan::every_s(n),
    },
);

impl Def for Crc {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, _: usize) -> f64 {
        (self.s + 1) as f64
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn params(&self) -> Params {
        Params::with_s(self.s)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "crc s={}", self.s)
    }
    fn encoding(&self, n: usize, _: Generator, seed: u64) -> Encoding {
        encoding::crc(n, self.s, seed).map_or(Encoding::Singular, Encoding::of_sum)
    }
}

/// Crc's placement, each partition's gradient sent as soon as it is
/// computed; the iteration ends when every partition has arrived from some
/// worker (see [`Strategy::MultiMessage`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiMessage {
    /// Each partition is held by s + 1 workers.
    pub s: usize,
}

pub(super) const MULTI_MESSAGE: Facts = Facts {
    messages: Messages::PerPartition,
    ..strategy(code(
        "multi-message",
        "Multi-message (Ozfatura et al. 2019): crc's placement, each partition's gradient sent as it is done; every partition from some worker",
        &[Param::S],
        style(Colour::Blue, Marker::TriangleDown),
        Ops {
            build: |b| Ok(Shape::MultiMessage(MultiMessage { s: b.need_s()? })),
            grid: s_list,
            search: |n, _| Scan::every_s(n),
        },
    ))
};

impl MultiMessage {
    /// The code whose placement it uses.
    fn placement(&self) -> Crc {
        Crc { s: self.s }
    }
}

/// Crc's threshold, load and parameters, its own strategy and name.
impl Def for MultiMessage {
    fn threshold(&self, n: usize) -> usize {
        self.placement().threshold(n)
    }
    fn load(&self, n: usize) -> f64 {
        self.placement().load(n)
    }
    fn exact_gradient(&self) -> bool {
        self.placement().exact_gradient()
    }
    fn strategy(&self) -> Option<Strategy> {
        Some(Strategy::MultiMessage { s: self.s })
    }
    fn params(&self) -> Params {
        self.placement().params()
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "multi-message s={}", self.s)
    }
}
