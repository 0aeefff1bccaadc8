//! Building a validated [`Scheme`] from the parameters a user gives: which
//! ones each scheme reads (its [`super::Facts`]), their ranges, and the
//! load, message and threshold that follow.

use super::error::{frc_admits, out_of_range};
use super::split::matmul_split;
use super::{CustomShape, Params, SPECULATE_AFTER, SPECULATE_FACTOR, Scheme, SchemeError, SchemeKind, Strategy};
use crate::param::Param;

/// The most partitions per worker of the partial-straggler codes.
pub const MAX_PARTS: usize = 1_000_000;

/// One scheme being built: its kind, cluster and the parameters given.
struct Build {
    kind: SchemeKind,
    n: usize,
    params: Params,
}

impl Build {
    /// s, which the scheme needs.
    fn need_s(&self) -> Result<usize, SchemeError> {
        let s = self.params.s.ok_or(SchemeError::Missing {
            scheme: self.kind,
            param: Param::S,
            example: "20",
        })?;
        self.check_s(s)
    }

    /// s within 0..n − 1.
    fn check_s(&self, s: usize) -> Result<usize, SchemeError> {
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
    fn k_or_s(&self) -> Result<usize, SchemeError> {
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
    fn need<T>(&self, value: Option<T>, param: Param, example: &'static str) -> Result<T, SchemeError> {
        value.ok_or(SchemeError::Missing {
            scheme: self.kind,
            param,
            example,
        })
    }

    /// A value outside what the parameter accepts.
    fn bad_value(&self, param: Param, value: f64, accepted: &'static str) -> SchemeError {
        SchemeError::BadValue {
            scheme: self.kind,
            param,
            value: value.to_string(),
            accepted,
        }
    }

    /// The scheme with tolerance `s`, message split `m` and threshold `k`,
    /// and nothing else (ignore is inexact from s = 1).
    fn base(&self, s: usize, m: Option<usize>, k: usize) -> Scheme {
        Scheme {
            kind: self.kind,
            n: self.n,
            s,
            m,
            k,
            d: None,
            partitions: self.n,
            approximate: self.kind == SchemeKind::Ignore && s > 0,
            deadline: None,
            strategy: None,
            split: None,
        }
    }

    /// The communication-efficient code: s and its message split m.
    fn comm_efficient(&self) -> Result<Scheme, SchemeError> {
        let (kind, n) = (self.kind, self.n);
        let s = self.need_s()?;
        let m = self.need(self.params.m, Param::M, "2")?;
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
        Ok(self.base(s, Some(m), n - s))
    }

    /// Approximate gradient coding: s and the graph's degree d.
    fn approx_regular(&self) -> Result<Scheme, SchemeError> {
        let n = self.n;
        let s = self.need_s()?;
        // By default each worker stores s + 1 partitions: the load of frc
        // and crc at the same tolerance (s < n, so d <= n).
        let d = self.params.d.unwrap_or(s + 1);
        if d == 0 || d > n {
            return Err(out_of_range(self.kind, Param::D, d, n, format!("1..{n}")));
        }
        Ok(Scheme {
            d: Some(d),
            approximate: s > 0,
            ..self.base(s, None, n - s)
        })
    }

    /// The deadline of timeout.
    fn timeout(&self) -> Result<Scheme, SchemeError> {
        let t = self.need(self.params.timeout, Param::Timeout, "2.5")?;
        if !(t.is_finite() && t >= 0.0) {
            return Err(self.bad_value(
                Param::Timeout,
                t,
                "a finite number >= 0, in the time unit of the workers' times",
            ));
        }
        Ok(Scheme {
            approximate: true,
            deadline: Some(t),
            ..self.base(0, None, self.n)
        })
    }

    /// Speculative copies.
    fn speculative(&self) -> Result<Scheme, SchemeError> {
        let after = self.params.speculate_after.unwrap_or(SPECULATE_AFTER);
        let factor = self.params.speculate_factor.unwrap_or(SPECULATE_FACTOR);
        if !(after > 0.0 && after <= 1.0) {
            return Err(self.bad_value(
                Param::SpeculateAfter,
                after,
                "a share of the tasks in (0, 1], e.g. 0.75",
            ));
        }
        if !(factor.is_finite() && (1.0..=1e6).contains(&factor)) {
            return Err(self.bad_value(
                Param::SpeculateFactor,
                factor,
                "a number from 1 to 1e6 (copies start at F times the time the share was done)",
            ));
        }
        Ok(Scheme {
            strategy: Some(Strategy::Speculative { after, factor }),
            ..self.base(0, None, self.n)
        })
    }

    /// The partial-straggler codes.
    fn partial(&self) -> Result<Scheme, SchemeError> {
        let (kind, n) = (self.kind, self.n);
        let s = self.need_s()?;
        let parts = self.need(self.params.parts, Param::Parts, "10")?;
        if parts > MAX_PARTS {
            return Err(out_of_range(
                kind,
                Param::Parts,
                parts,
                n,
                format!("{}..{MAX_PARTS}", s + 1),
            ));
        }
        if parts < s + 1 {
            return Err(SchemeError::NotAdmitted {
                scheme: kind,
                what: format!("s={s}, L={parts}"),
                n,
                rule: "L must be at least s+1",
                hint: format!("with s={s}, L can be {}..{MAX_PARTS}", s + 1),
            });
        }
        if kind == SchemeKind::PartialFrc {
            frc_admits(kind, n, s, format!("s={s}, L={parts}"))?;
        }
        Ok(Scheme {
            strategy: Some(Strategy::Partial { s, parts }),
            ..self.base(s, None, n - s)
        })
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
        let b = Build { kind, n, params };
        match kind {
            SchemeKind::Uncoded => match params.s {
                None | Some(0) => Ok(b.base(0, None, n)),
                Some(s) => Err(out_of_range(
                    kind,
                    Param::S,
                    s,
                    n,
                    "0 (uncoded tolerates no straggler)".into(),
                )),
            },
            SchemeKind::Ignore | SchemeKind::Crc => {
                let s = b.need_s()?;
                Ok(b.base(s, None, n - s))
            }
            SchemeKind::Frc => {
                let s = b.need_s()?;
                frc_admits(kind, n, s, format!("s={s}"))?;
                Ok(b.base(s, None, n - s))
            }
            SchemeKind::CommEfficient => b.comm_efficient(),
            SchemeKind::ApproxRegular => b.approx_regular(),
            SchemeKind::Mds => {
                let k = b.k_or_s()?;
                Ok(b.base(n - k, None, k))
            }
            SchemeKind::Custom => Err(SchemeError::Missing {
                scheme: kind,
                param: Param::Code,
                example: "my-code.csv",
            }),
            SchemeKind::Timeout => b.timeout(),
            SchemeKind::Speculative => b.speculative(),
            SchemeKind::KBatchSync => {
                let k = b.k_or_s()?;
                Ok(Self {
                    approximate: true,
                    strategy: Some(Strategy::KBatchSync { k }),
                    ..b.base(n - k, None, k)
                })
            }
            SchemeKind::MultiMessage => {
                let s = b.need_s()?;
                Ok(Self {
                    strategy: Some(Strategy::MultiMessage { s }),
                    ..b.base(s, None, n - s)
                })
            }
            SchemeKind::KAsync | SchemeKind::KBatchAsync => {
                let k = b.k_or_s()?;
                Ok(Self {
                    approximate: true,
                    strategy: Some(Strategy::Async {
                        k,
                        batch: kind == SchemeKind::KBatchAsync,
                    }),
                    ..b.base(n - k, None, k)
                })
            }
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => b.partial(),
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => {
                let split = matmul_split(kind, n, params)?;
                let k = split.threshold() as usize;
                Ok(Self {
                    split: Some(split),
                    ..b.base(n - k, None, k)
                })
            }
        }
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
        let s_ = s.unwrap_or(0);
        Ok(Self {
            kind,
            n,
            s: s_,
            m: None,
            k: n - s_,
            d: Some(max_support),
            partitions,
            approximate: s.is_some(),
            deadline: None,
            strategy: None,
            split: None,
        })
    }
}
