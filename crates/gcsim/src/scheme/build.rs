//! Building a validated [`Scheme`] from the parameters a user gives: which
//! ones each scheme reads (its [`super::Facts`]), their ranges, and the
//! load, message and threshold that follow.

use super::error::out_of_range;
use super::family::{Custom, Shape};
use super::{CustomShape, Params, Scheme, SchemeError, SchemeKind};
use crate::param::Param;

/// The most partitions per worker of the partial-straggler codes.
pub const MAX_PARTS: usize = 1_000_000;

/// One scheme being built: its kind, cluster and the parameters given.
pub(crate) struct Build {
    pub kind: SchemeKind,
    pub n: usize,
    pub params: Params,
}

impl Build {
    /// s, which the scheme needs.
    pub(super) fn need_s(&self) -> Result<usize, SchemeError> {
        let s = self.params.s.ok_or(SchemeError::Missing {
            scheme: self.kind,
            param: Param::S,
            example: "20",
        })?;
        self.check_s(s)
    }

    /// s within 0..n − 1.
    pub(super) fn check_s(&self, s: usize) -> Result<usize, SchemeError> {
        if s < self.n {
            Ok(s)
        } else {
            Err(out_of_range(
                self.kind,
                Param::S,
                s,
                self.n,
                format!("0..{}", self.n - 1),
            ))
        }
    }

    /// k, or s as k = n − s without it (mds, k-batch-sync and the
    /// asynchronous strategies), within 1..n.
    pub(super) fn k_or_s(&self) -> Result<usize, SchemeError> {
        let k = match (self.params.k, self.params.s) {
            (Some(k), _) => k,
            (None, Some(s)) => self.n - self.check_s(s)?,
            (None, None) => {
                return Err(SchemeError::Missing {
                    scheme: self.kind,
                    param: Param::K,
                    example: "80",
                });
            }
        };
        if k == 0 || k > self.n {
            return Err(out_of_range(self.kind, Param::K, k, self.n, format!("1..{}", self.n)));
        }
        Ok(k)
    }

    /// A parameter the scheme needs, or an error with an example value.
    pub(super) fn need<T>(&self, value: Option<T>, param: Param, example: &'static str) -> Result<T, SchemeError> {
        value.ok_or(SchemeError::Missing {
            scheme: self.kind,
            param,
            example,
        })
    }

    /// A value outside what the parameter accepts.
    pub(super) fn bad_value(&self, param: Param, value: f64, accepted: &'static str) -> SchemeError {
        SchemeError::BadValue {
            scheme: self.kind,
            param,
            value: crate::param::plain(value),
            accepted,
        }
    }
}

impl Scheme {
    /// Builds `kind` for `n` workers from the parameters it reads.
    ///
    /// `uncoded` takes no parameter (s = 0 is accepted); `ignore`, `frc` and
    /// `crc` read s; `comm-efficient` reads s and m; `mds` reads k, or s as
    /// k = n − s when k is absent.
    ///
    /// A parameter the scheme does not read is an error naming it (mds
    /// reads s only when k is absent), never silently dropped.
    pub fn new(kind: SchemeKind, n: usize, params: Params) -> Result<Self, SchemeError> {
        assert!(n >= 1, "the cluster size is validated before schemes are built");
        for param in Params::KEYS {
            if params.given(param) && !kind.facts().takes(param, |p| params.given(p)) {
                return Err(SchemeError::NotRead { scheme: kind, param });
            }
        }
        let shape = (kind.facts().build)(&Build { kind, n, params })?;
        Ok(Self { n, shape })
    }

    /// No coding on `n` workers.
    pub fn uncoded(n: usize) -> Self {
        Self::new(SchemeKind::Uncoded, n, Params::default()).expect("uncoded takes any n >= 1")
    }

    /// Fractional repetition tolerating `s` stragglers of `n` (s + 1 must
    /// divide n).
    pub fn frc(n: usize, s: usize) -> Result<Self, SchemeError> {
        Self::with_tolerance(SchemeKind::Frc, n, s)
    }

    /// Cyclic repetition tolerating `s` stragglers of `n`.
    pub fn crc(n: usize, s: usize) -> Result<Self, SchemeError> {
        Self::with_tolerance(SchemeKind::Crc, n, s)
    }

    /// Waiting for the fastest n − s and dropping the rest.
    pub fn ignore(n: usize, s: usize) -> Result<Self, SchemeError> {
        Self::with_tolerance(SchemeKind::Ignore, n, s)
    }

    /// The communication-efficient code tolerating `s` with message split `m`.
    pub fn comm_efficient(n: usize, s: usize, m: usize) -> Result<Self, SchemeError> {
        let params = Params {
            s: Some(s),
            m: Some(m),
            ..Params::default()
        };
        Self::new(SchemeKind::CommEfficient, n, params)
    }

    /// The MDS code decodable from any `k` of `n`.
    pub fn mds(n: usize, k: usize) -> Result<Self, SchemeError> {
        let params = Params {
            k: Some(k),
            ..Params::default()
        };
        Self::new(SchemeKind::Mds, n, params)
    }

    /// `kind` at tolerance `s`, as a sweep over tolerances builds it:
    /// uncoded whatever `s`, the schemes that read k at k = n − s, the
    /// others from s alone (a scheme that needs more, such as
    /// comm-efficient's m, is refused for the missing parameter).
    pub fn with_tolerance(kind: SchemeKind, n: usize, s: usize) -> Result<Self, SchemeError> {
        if kind == SchemeKind::Uncoded {
            return Ok(Self::uncoded(n));
        }
        Self::new(
            kind,
            n,
            Params {
                s: Some(s),
                ..Params::default()
            },
        )
    }

    /// The `custom` scheme of a user's matrix of shape `shape`: decoded by
    /// the matrix's rank condition, or, with `s`, approximately from the
    /// fastest n − s workers.
    ///
    /// # Panics
    /// If the shape has no row, no column, or a row support beyond P.
    pub fn custom(shape: CustomShape, s: Option<usize>) -> Result<Self, SchemeError> {
        let CustomShape {
            n,
            partitions,
            max_support,
        } = shape;
        assert!(
            n >= 1 && partitions >= 1 && max_support <= partitions,
            "a custom shape is read from a matrix"
        );
        let kind = SchemeKind::Custom;
        if let Some(s) = s
            && s >= n
        {
            return Err(out_of_range(kind, Param::S, s, n, format!("0..{}", n - 1)));
        }
        Ok(Self {
            n,
            shape: Shape::Custom(Custom {
                partitions,
                max_support,
                s,
            }),
        })
    }
}
