//! What each scheme is whatever its parameters: its name, its line of
//! `--help`, the parameters it reads, how `plan` treats it, what `gcsim
//! codes` builds for it, how many messages a worker sends, how figures draw
//! it, and the functions that build it, expand a sweep's lists for it and
//! list `plan`'s candidates. Each scheme's module fills its [`Facts`]
//! ([`SchemeKind::facts`] lists them in one exhaustive match), and every
//! layer reads the facts instead of keeping a list of its own.

use std::fmt;

use super::build::Build;
use super::search::{GridError, PlanLists, Ranges, Scan};
use super::{Params, SchemeError, SchemeKind, Shape};
use crate::param::Param;

/// How `gcsim plan` treats a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planning {
    /// Searched when `--scheme` is not given: an exact gradient code with a
    /// tolerance to choose.
    Default,
    /// Searched only when `--scheme` names it: inexact, without an exact
    /// law (every candidate simulated), or a matrix-multiplication code.
    WhenNamed,
    /// Refused: its value trades time against the gradient's error, which
    /// a ranking by time alone cannot weigh.
    Refused,
}

/// What `gcsim codes` builds for a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Construction {
    /// An encoding matrix whose decodings it checks.
    Matrix,
    /// None: the workers send uncoded results (the strategies).
    Uncoded,
    /// A matrix-multiplication code, decoded at its recovery threshold.
    Matmul,
    /// The code of another scheme at the same s (the partial-straggler
    /// codes' coded part).
    PartOf(SchemeKind),
}

/// Messages one worker sends per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Messages {
    /// One.
    One,
    /// One per partition it holds: s + 1.
    PerPartition,
    /// Its own part's and its coded part's: two, or one where L = s + 1
    /// leaves no own part.
    OwnAndCoded,
}

/// A colour of Okabe & Ito's palette ("Color Universal Design", 2008),
/// distinguishable under the common colour-vision deficiencies; its yellow
/// is left out, as a thin yellow line is illegible on white.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Colour {
    Black,
    Orange,
    SkyBlue,
    Green,
    Blue,
    Vermillion,
    Purple,
}

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A disc.
    Circle,
    /// A square.
    Square,
    /// A triangle, point up.
    TriangleUp,
    /// A triangle, point down.
    TriangleDown,
    /// A square on its corner.
    Diamond,
    /// A diagonal cross.
    Cross,
}

impl Marker {
    /// Every marker; the second series of one scheme in a figure takes the
    /// next one after the scheme's own.
    pub const ALL: [Marker; 6] = [
        Marker::Circle,
        Marker::Square,
        Marker::TriangleUp,
        Marker::TriangleDown,
        Marker::Diamond,
        Marker::Cross,
    ];

    /// Its name in `--plot-data`.
    pub fn name(self) -> &'static str {
        match self {
            Marker::Circle => "circle",
            Marker::Square => "square",
            Marker::TriangleUp => "triangle-up",
            Marker::TriangleDown => "triangle-down",
            Marker::Diamond => "diamond",
            Marker::Cross => "cross",
        }
    }
}

/// How a scheme is drawn in every figure. Seven colours serve the schemes,
/// so a colour is shared only by schemes that the shipped studies never
/// draw together, and the marker tells them apart: every (colour, marker)
/// pair is unique.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Its colour.
    pub colour: Colour,
    /// Its marker.
    pub marker: Marker,
}

/// Builds a scheme's data from a user's parameters.
pub(crate) type Builder = fn(&Build) -> Result<Shape, SchemeError>;

/// Expands a sweep's lists into one scheme's configurations.
pub(crate) type Grid = fn(&Ranges) -> Result<Vec<Params>, GridError>;

/// The candidates `plan` scans on n workers.
pub(crate) type Search = fn(usize, &PlanLists) -> Vec<Scan>;

/// The facts of one scheme (see the module notes).
#[derive(Clone, Copy)]
pub struct Facts {
    /// The name `--scheme` takes and the output prints.
    pub name: &'static str,
    /// One line for `--help`: the literature name and the rule.
    pub help: &'static str,
    /// The parameters it reads besides n. A scheme that reads both k and s
    /// reads s only without k, as k = n − s.
    pub reads: &'static [Param],
    /// How `plan` treats it.
    pub planning: Planning,
    /// What `gcsim codes` builds for it.
    pub construction: Construction,
    /// How many messages a worker sends.
    pub messages: Messages,
    /// Whether it encodes only linear computations (a matrix-vector
    /// product, Lee et al. 2017), so not the gradient of a nonlinear model.
    pub linear_only: bool,
    /// Whether its construction takes a generator matrix (`--generator`:
    /// Gaussian by default, Vandermonde or Chebyshev).
    pub generator: bool,
    /// Whether it gives up the exact gradient for time by design (drops
    /// workers, stops at a deadline, counts mini-batches, updates
    /// asynchronously or decodes approximately): `plan` ranks it after an
    /// exact scheme of the same value.
    pub inexact: bool,
    /// Whether, awaiting every worker (k = n) with one message split, it is
    /// the uncoded scheme under another name.
    pub uncoded_when_all_awaited: bool,
    /// How figures draw it.
    pub style: Style,
    /// Its builder, behind [`super::Scheme::new`].
    pub(crate) build: Builder,
    /// Its configurations in a sweep.
    pub(crate) grid: Grid,
    /// Its candidates in a plan (none where `plan` refuses it).
    pub(crate) search: Search,
}

impl fmt::Debug for Facts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Facts")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Facts {
    /// Whether the scheme takes `param` where `given` tells which
    /// parameters are given: one it [reads](Self::reads), except s for a
    /// scheme that also reads k and is given k.
    pub fn takes(&self, param: Param, given: impl Fn(Param) -> bool) -> bool {
        let listed = self.reads.contains(&param);
        if param == Param::S && self.reads.contains(&Param::K) {
            return listed && !given(Param::K);
        }
        listed
    }
}

/// How a scheme is built, swept and searched: its own functions.
#[derive(Clone, Copy)]
pub(crate) struct Ops {
    pub build: Builder,
    pub grid: Grid,
    pub search: Search,
}

/// The facts of a gradient code; the few that differ override a field.
pub(crate) const fn code(
    name: &'static str,
    help: &'static str,
    reads: &'static [Param],
    style: Style,
    ops: Ops,
) -> Facts {
    Facts {
        name,
        help,
        reads,
        planning: Planning::Default,
        construction: Construction::Matrix,
        messages: Messages::One,
        linear_only: false,
        generator: false,
        inexact: false,
        uncoded_when_all_awaited: true,
        style,
        build: ops.build,
        grid: ops.grid,
        search: ops.search,
    }
}

/// The facts `f` of a scheme that sends uncoded results on a timeline of
/// its own (`plan` searches it only when named; `codes` builds nothing).
pub(crate) const fn strategy(f: Facts) -> Facts {
    Facts {
        planning: Planning::WhenNamed,
        construction: Construction::Uncoded,
        ..f
    }
}

/// A style.
pub(crate) const fn style(colour: Colour, marker: Marker) -> Style {
    Style { colour, marker }
}

impl SchemeKind {
    /// The schemes that read `param`, in the order `--help` lists them.
    pub fn readers(param: Param) -> impl Iterator<Item = SchemeKind> {
        SchemeKind::ALL
            .into_iter()
            .filter(move |k| k.facts().reads.contains(&param))
    }

    /// The names of the schemes that read `param`, as a sentence lists
    /// them: `crc`, `frc and crc`, `a, b and c`.
    pub fn readers_listed(param: Param) -> String {
        Self::listed(Self::readers(param))
    }

    /// The names of `kinds` in words: `frc, crc and mds`.
    pub fn listed(kinds: impl Iterator<Item = SchemeKind>) -> String {
        let names: Vec<&str> = kinds.map(SchemeKind::name).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique, and the readers of a parameter are listed in
    /// `--help` order as a sentence.
    #[test]
    fn names_are_unique_and_lists_read_as_sentences() {
        let mut names: Vec<&str> = SchemeKind::ALL.iter().map(|k| k.facts().name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SchemeKind::ALL.len());
        assert_eq!(
            SchemeKind::readers_listed(Param::K),
            "mds, k-batch-sync, k-async and k-batch-async"
        );
        assert_eq!(SchemeKind::readers_listed(Param::Parts), "partial-frc and partial-crc");
        assert_eq!(SchemeKind::readers_listed(Param::D), "approx-regular and erasurehead");
        assert_eq!(SchemeKind::readers_listed(Param::N), "");
    }

    /// s is read without k by the schemes that read both, with it by none.
    #[test]
    fn s_is_read_as_k_only_without_k() {
        let k_given = |p: Param| p == Param::K;
        let nothing_given = |_: Param| false;
        for kind in SchemeKind::ALL {
            let f = kind.facts();
            let both = f.reads.contains(&Param::K) && f.reads.contains(&Param::S);
            assert_eq!(
                f.takes(Param::S, k_given),
                f.reads.contains(&Param::S) && !both,
                "{kind}"
            );
            assert_eq!(f.takes(Param::S, nothing_given), f.reads.contains(&Param::S), "{kind}");
        }
        assert!(SchemeKind::Mds.facts().takes(Param::S, nothing_given));
        assert!(!SchemeKind::Mds.facts().takes(Param::S, k_given));
    }
}
