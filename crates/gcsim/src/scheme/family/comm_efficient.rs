//! The communication-efficient gradient code of Ye & Abbe (2018): load
//! s + m, message 1/m of a gradient, decodable from any n − s.

use std::fmt;

use super::super::build::Build;
use super::super::error::out_of_range;
use super::super::facts::{Colour, Facts, Marker, Ops, code, style};
use super::super::search::{Ranges, Scan, product};
use super::super::{Params, SchemeError, Shape};
use super::Def;
use crate::encoding::{self, Encoding, Generator};
use crate::param::Param;

/// The communication-efficient code tolerating s with message split m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommEfficient {
    /// Stragglers tolerated.
    pub s: usize,
    /// Message split: each message is 1/m of a gradient; s + m ≤ n.
    pub m: usize,
}

pub(super) const FACTS: Facts = Facts {
    generator: true,
    ..code(
        "comm-efficient",
        "Communication-efficient (Ye & Abbe 2018): load s+m, message 1/m, any n-s",
        &[Param::S, Param::M],
        style(Colour::Green, Marker::TriangleDown),
        Ops {
            build,
            grid: |ranges| {
                let ms = Ranges::need(&ranges.m, Param::M, "1..10")?;
                product(Param::M, [&ranges.need_s()?, &ms], |[s, m]| with(s, m))
            },
            search: |n, lists| {
                let ms = lists.m.clone();
                ms.into_iter()
                    .map(|m| Scan::rising((0..n).map(move |s| with(s, m))))
                    .collect()
            },
        },
    )
};

fn with(s: usize, m: usize) -> Params {
    Params {
        s: Some(s),
        m: Some(m),
        ..Params::default()
    }
}

fn build(b: &Build) -> Result<Shape, SchemeError> {
    let (kind, n) = (b.kind, b.n);
    let s = b.need_s()?;
    let m = b.need(b.params.m, Param::M, "2")?;
    if m == 0 {
        return Err(out_of_range(kind, Param::M, m, n, format!("1..{}", n - s)));
    }
    // s < n here; `m > n - s` is `s + m > n` without overflow.
    if m > n - s {
        return Err(SchemeError::NotAdmitted {
            scheme: kind,
            what: format!("s={s}, m={m}"),
            n,
            rule: "s+m must be at most n",
            hint: format!("with s={s}, m can be 1..{}", n - s),
        });
    }
    Ok(Shape::CommEfficient(CommEfficient { s, m }))
}

impl Def for CommEfficient {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, _: usize) -> f64 {
        (self.s + self.m) as f64
    }
    fn message(&self) -> f64 {
        1.0 / self.m as f64
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn params(&self) -> Params {
        with(self.s, self.m)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "comm-efficient s={} m={}", self.s, self.m)
    }
    fn encoding(&self, n: usize, generator: Generator, seed: u64) -> Encoding {
        match encoding::comm_efficient(n, self.s, self.m, generator, seed) {
            Some(b) => Encoding::Built {
                b,
                target: encoding::block_sums(n, self.m),
            },
            None => Encoding::Singular,
        }
    }
}
