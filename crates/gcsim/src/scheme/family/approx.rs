//! Approximate gradient codes: the random d-regular graph of Charles,
//! Papailiopoulos & Ellenberg (2017), ErasureHead's fractional repetition
//! (Wang, Charles & Papailiopoulos 2019), and a user's own matrix.

use std::fmt;

use super::super::build::Build;
use super::super::error::out_of_range;
use super::super::facts::{Builder, Colour, Facts, Marker, Ops, Planning, Style, code, style};
use super::super::search::{GridError, MAX_COMBINATIONS, Ranges};
use super::super::{Params, SchemeError, Shape};
use super::Def;
use crate::encoding::{self, Encoding, Generator};
use crate::param::Param;

/// Approximate gradient coding on a random d-regular bipartite graph: wait
/// for n − s, decode by least squares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApproxRegular {
    /// The workers not awaited.
    pub s: usize,
    /// The graph's degree: partitions per worker, 1..=n.
    pub d: usize,
}

/// The facts of a code that waits for the fastest n − s and decodes the
/// rest by least squares: read s and d, swept over both, never planned (its
/// value trades time against the gradient's error).
const fn approximate(name: &'static str, help: &'static str, style: Style, build: Builder) -> Facts {
    Facts {
        planning: Planning::Refused,
        inexact: true,
        uncoded_when_all_awaited: false,
        ..code(
            name,
            help,
            &[Param::S, Param::D],
            style,
            Ops {
                build,
                grid: grid_regular,
                search: |_, _| Vec::new(),
            },
        )
    }
}

pub(super) const APPROX_REGULAR: Facts = approximate(
    "approx-regular",
    "Approximate gradient coding (Charles et al. 2017): a random d-regular graph, load d, any n-s, least-squares decoding (inexact)",
    style(Colour::Green, Marker::Diamond),
    |b| {
        let (s, d) = s_and_d(b)?;
        Ok(Shape::ApproxRegular(ApproxRegular { s, d }))
    },
);

/// s and d, with d = s + 1 by default (each worker stores s + 1 partitions,
/// the load of frc and crc at the same tolerance) and within 1..=n.
fn s_and_d(b: &Build) -> Result<(usize, usize), SchemeError> {
    let n = b.n;
    let s = b.need_s()?;
    let d = b.params.d.unwrap_or(s + 1);
    if d == 0 || d > n {
        return Err(out_of_range(b.kind, Param::D, d, n, format!("1..{n}")));
    }
    Ok((s, d))
}

/// Every (s, d) of the lists; without `--d`, each s with its default
/// d = s + 1.
fn grid_regular(ranges: &Ranges) -> Result<Vec<Params>, GridError> {
    let ds: Vec<Option<usize>> = match &ranges.d {
        Some(ds) => ds.values.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    let ss = ranges.need_s()?;
    let count = ss.len() as u128 * ds.len() as u128;
    if count > MAX_COMBINATIONS as u128 {
        return Err(GridError::TooMany { param: Param::D, count });
    }
    Ok(ss
        .iter()
        .flat_map(|&s| {
            ds.iter().map(move |&d| Params {
                s: Some(s),
                d,
                ..Params::default()
            })
        })
        .collect())
}

impl Def for ApproxRegular {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, n: usize) -> f64 {
        self.d as f64 * n as f64 / n as f64
    }
    fn exact_gradient(&self) -> bool {
        self.s == 0
    }
    fn params(&self) -> Params {
        Params::with_s_d(self.s, self.d)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "approx-regular s={} d={}", self.s, self.d)
    }
    fn encoding(&self, n: usize, _: Generator, seed: u64) -> Encoding {
        Encoding::of_sum(encoding::regular_graph(n, self.d, seed) / self.d as f64)
    }
}

/// ErasureHead: frc's placement in groups of d workers, each group
/// holding the same d partitions; the master waits for the fastest n − s
/// and decodes by least squares, which on this placement sums one message
/// of every group heard from and loses the groups wholly out. Exact when
/// s < d, as no group can then be wholly out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErasureHead {
    /// The workers not awaited.
    pub s: usize,
    /// Workers (and partitions) per group; d divides n.
    pub d: usize,
}

pub(super) const ERASUREHEAD: Facts = approximate(
    "erasurehead",
    "ErasureHead (Wang et al. 2019): frc's groups of d workers (d divides n), wait for any n-s, decode the groups heard from (inexact when s >= d)",
    style(Colour::Vermillion, Marker::Circle),
    build_erasurehead,
);

fn build_erasurehead(b: &Build) -> Result<Shape, SchemeError> {
    let n = b.n;
    let (s, d) = s_and_d(b)?;
    if !n.is_multiple_of(d) {
        return Err(SchemeError::NotAdmitted {
            scheme: b.kind,
            what: format!("s={s}, d={d}"),
            n,
            rule: "d must divide n",
            hint: "accepted d: a divisor of n".to_string(),
        });
    }
    Ok(Shape::ErasureHead(ErasureHead { s, d }))
}

impl Def for ErasureHead {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, _: usize) -> f64 {
        self.d as f64
    }
    fn exact_gradient(&self) -> bool {
        self.s < self.d
    }
    fn encoding(&self, n: usize, _: Generator, _: u64) -> Encoding {
        Encoding::of_sum(encoding::frc(n, self.d - 1))
    }
    fn params(&self) -> Params {
        Params::with_s_d(self.s, self.d)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "erasurehead s={} d={}", self.s, self.d)
    }
}

/// A user's encoding matrix (`--code FILE`): decoded by its rank
/// condition, or, with s, approximately from the fastest n − s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Custom {
    /// The matrix's columns: the data partitions P.
    pub partitions: usize,
    /// The most nonzeros in any row.
    pub max_support: usize,
    /// The workers not awaited, for approximate decoding; `None` decodes by
    /// the rank condition.
    pub s: Option<usize>,
}

pub(super) const CUSTOM: Facts = Facts {
    planning: Planning::Refused,
    inexact: true,
    uncoded_when_all_awaited: false,
    ..code(
        "custom",
        "A user's encoding matrix (--code FILE): decoded by its rank condition, or from any n-s with --s (inexact)",
        &[Param::S, Param::Code],
        style(Colour::Black, Marker::Cross),
        Ops {
            // Built from its matrix's shape by `Scheme::custom`.
            build: |b| {
                Err(SchemeError::Missing {
                    scheme: b.kind,
                    param: Param::Code,
                    example: "my-code.csv",
                })
            },
            // The rank-decoded code, or one approximate code per s.
            grid: |ranges| match &ranges.s {
                Some(ss) => Ok(ss.values.iter().map(|&s| Params::with_s(s)).collect()),
                None => Ok(vec![Params::default()]),
            },
            search: |_, _| Vec::new(),
        },
    )
};

impl Def for Custom {
    fn threshold(&self, n: usize) -> usize {
        n - self.s.unwrap_or(0)
    }
    fn load(&self, n: usize) -> f64 {
        self.max_support as f64 * n as f64 / self.partitions as f64
    }
    fn exact_gradient(&self) -> bool {
        self.s.is_none()
    }
    fn encoding(&self, _: usize, _: Generator, _: u64) -> Encoding {
        Encoding::FromFile
    }
    fn params(&self) -> Params {
        Params {
            s: self.s,
            ..Params::default()
        }
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.s {
            None => write!(f, "custom"),
            Some(s) => write!(f, "custom s={s}"),
        }
    }
}
