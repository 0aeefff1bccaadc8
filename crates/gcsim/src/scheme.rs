//! Coding schemes as plain data: load, message size and recovery rule of
//! each (Tandon et al. 2017; Ye & Abbe 2018; Kadhe et al. 2020; Lee et al. 2017).
//!
//! Longer than 600 lines because the constructor validates every scheme's
//! parameters in one exhaustive match, and the accessors (load, message,
//! params, Display) each match every scheme: one place per concept for the
//! closed set. The matmul split and the errors live in `scheme/`.
//!
//! Each scheme fixes, for its parameters, the per-worker load (in units of the
//! uncoded share), the message size (fraction of one full gradient), the
//! recovery rule and whether the decoded gradient is exact:
//!
//! | scheme | load | message | recovery rule |
//! |---|---|---|---|
//! | `uncoded` | 1 | 1 | all n |
//! | `ignore` | 1 | 1 | any n−s (drops s/n of the data) |
//! | `frc` (Tandon et al. 2017, §4.1) | s+1 | 1 | one worker of each of the n/(s+1) groups |
//! | `crc` (Tandon et al. 2017, §4.2) | s+1 | 1 | any n−s |
//! | `comm-efficient` (Ye & Abbe 2018) | s+m | 1/m | any n−s |
//! | `mds` (Lee et al. 2017) | n/k | 1 | any k |
//! | `approx-regular` (Charles et al. 2017) | d | 1 | any n−s, least-squares decoding (inexact) |
//! | `custom` (a user's matrix, `--code FILE`) | nonzeros of the row × n/P | 1 | the real code's rank condition, or any n−s with `--s` (inexact) |
//! | `timeout` (`--timeout T`) | 1 | 1 | all n, or at time T those arrived (at least the first; inexact) |
//! | `speculative` (Dean & Ghemawat 2008) | 1, plus copies | 1 | every task, from its worker or its copy |
//! | `k-batch-sync` (`--k K`, Dutta et al. 2018) | 1 per mini-batch | 1 per mini-batch | any K mini-batches (inexact) |
//! | `multi-message` (Ozfatura et al. 2019) | s+1, one message per partition | 1 (s+1 messages) | every partition from some worker |
//! | `k-async` (`--k K`, Dutta et al. 2018) | 1 per gradient | 1 per gradient | an update per K gradients of distinct workers (asynchronous, stale) |
//! | `k-batch-async` (`--k K`, Dutta et al. 2018) | 1 per mini-batch | 1 per mini-batch | an update per K mini-batches (asynchronous, stale) |
//! | `partial-frc`, `partial-crc` (`--parts L`, Tandon et al. 2017, §5) | L/(L−s) | 1 (two messages) | every worker's own part, and frc's or crc's rule on the coded parts |
//! | `polynomial` (`--p P --q Q`, Yu, Maddah-Ali & Avestimehr 2017) | n/(pq) | 1/(pq) of C | any pq |
//! | `matdot` (`--p P`, inner split, Dutta et al. 2019) | n/p | 1 (all of C) | any 2p − 1 |
//! | `entangled` (`--p P --m M --q Q`, Yu, Maddah-Ali & Avestimehr 2020) | n/(pmq) | 1/(pq) of C | any pmq + m − 1 |
//!
//! For the three matmul codes (C = A·B, A in p row blocks, B in q column
//! blocks, the inner dimension in m parts; matdot's p is its inner split)
//! the load is n times a worker's share of the full product's arithmetic,
//! and the message its share of C.
//!
//! The last seven are not a rule over one message per worker: their
//! timelines are in [`Strategy`].

use std::fmt;

use crate::param::Param;

mod error;
mod facts;
mod kind;
mod rule;
mod split;
pub use error::SchemeError;
use error::{frc_admits, out_of_range};
pub use facts::{Construction, Facts, Messages, Planning};
pub use kind::{SPECULATE_AFTER, SPECULATE_FACTOR, SchemeKind, Strategy};
pub use rule::Rule;
pub use split::Split;
use split::matmul_split;

/// Parameters as a user gives them; which ones a scheme reads depends on it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Params {
    /// Straggler tolerance s.
    pub s: Option<usize>,
    /// Message split m (comm-efficient).
    pub m: Option<usize>,
    /// Recovery threshold k (mds).
    pub k: Option<usize>,
    /// Degree d of the regular graph (approx-regular).
    pub d: Option<usize>,
    /// The deadline T, in the time unit, after the iteration starts (timeout).
    pub timeout: Option<f64>,
    /// The share Q of tasks after which stragglers are copied (speculative).
    pub speculate_after: Option<f64>,
    /// The factor F: copies start at F·t_Q (speculative).
    pub speculate_factor: Option<f64>,
    /// Partitions per worker, L (partial-frc, partial-crc).
    pub parts: Option<usize>,
    /// Row blocks of A (polynomial, entangled), or the inner split (matdot).
    pub p: Option<usize>,
    /// Column blocks of B (polynomial, entangled).
    pub q: Option<usize>,
}

impl Params {
    /// The parameters a scheme may read, in the order a scheme's errors
    /// name them.
    pub const KEYS: [Param; 10] = [
        Param::S,
        Param::M,
        Param::K,
        Param::D,
        Param::Timeout,
        Param::SpeculateAfter,
        Param::SpeculateFactor,
        Param::Parts,
        Param::P,
        Param::Q,
    ];

    /// Whether `param` is given; false for a parameter no scheme reads.
    pub fn given(&self, param: Param) -> bool {
        match param {
            Param::S => self.s.is_some(),
            Param::M => self.m.is_some(),
            Param::K => self.k.is_some(),
            Param::D => self.d.is_some(),
            Param::Timeout => self.timeout.is_some(),
            Param::SpeculateAfter => self.speculate_after.is_some(),
            Param::SpeculateFactor => self.speculate_factor.is_some(),
            Param::Parts => self.parts.is_some(),
            Param::P => self.p.is_some(),
            Param::Q => self.q.is_some(),
            _ => false,
        }
    }
}

/// The shape of a user's encoding matrix, which is what a `custom` scheme
/// needs of it: the code itself is the study's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomShape {
    /// Rows: the workers.
    pub n: usize,
    /// Columns: the data partitions P.
    pub partitions: usize,
    /// The most nonzeros in any row: the largest number of partitions a
    /// worker stores.
    pub max_support: usize,
}

/// A validated scheme for a cluster of `n` workers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scheme {
    kind: SchemeKind,
    n: usize,
    s: usize,
    m: Option<usize>,
    k: usize,
    /// approx-regular: the degree; custom: the largest row support.
    d: Option<usize>,
    /// Data partitions (n, except for custom codes).
    partitions: usize,
    /// Whether the master waits for a fixed number of workers and decodes
    /// what it can (ignore with s > 0, approx-regular, custom with s), or
    /// stops at a deadline (timeout).
    approximate: bool,
    /// The time after which the master proceeds with the arrived workers.
    deadline: Option<f64>,
    /// The timeline where it is not a rule over one message per worker.
    strategy: Option<Strategy>,
    /// The split of a matmul code.
    split: Option<Split>,
}

/// The most partitions per worker of the partial-straggler codes.
pub const MAX_PARTS: usize = 1_000_000;

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
            if params.given(param) && !kind.facts().reads(param, |p| params.given(p)) {
                return Err(SchemeError::NotRead { scheme: kind, param });
            }
        }
        let need_s = || {
            params.s.ok_or(SchemeError::Missing {
                scheme: kind,
                param: Param::S,
                example: "20",
            })
        };
        let check_s = |s: usize| {
            if s < n {
                Ok(s)
            } else {
                Err(out_of_range(kind, Param::S, s, n, format!("0..{}", n - 1)))
            }
        };
        // mds, k-batch-sync and the asynchronous strategies read k, or s as k = n − s.
        let k_or_s = || {
            let k = match (params.k, params.s) {
                (Some(k), _) => k,
                (None, Some(s)) => n - check_s(s)?,
                (None, None) => {
                    return Err(SchemeError::Missing {
                        scheme: kind,
                        param: Param::K,
                        example: "80",
                    });
                }
            };
            if k == 0 || k > n {
                return Err(out_of_range(kind, Param::K, k, n, format!("1..{n}")));
            }
            Ok(k)
        };
        let scheme = |s, m, k| Self {
            kind,
            n,
            s,
            m,
            k,
            d: None,
            partitions: n,
            approximate: kind == SchemeKind::Ignore && s > 0,
            deadline: None,
            strategy: None,
            split: None,
        };
        let bad_value = |param, value: f64, accepted| SchemeError::BadValue {
            scheme: kind,
            param,
            value: value.to_string(),
            accepted,
        };
        match kind {
            SchemeKind::Uncoded => match params.s {
                None | Some(0) => Ok(scheme(0, None, n)),
                Some(s) => Err(out_of_range(
                    kind,
                    Param::S,
                    s,
                    n,
                    "0 (uncoded tolerates no straggler)".into(),
                )),
            },
            SchemeKind::Ignore | SchemeKind::Crc => {
                let s = check_s(need_s()?)?;
                Ok(scheme(s, None, n - s))
            }
            SchemeKind::Frc => {
                let s = check_s(need_s()?)?;
                frc_admits(kind, n, s, format!("s={s}"))?;
                Ok(scheme(s, None, n - s))
            }
            SchemeKind::CommEfficient => {
                let s = check_s(need_s()?)?;
                let m = params.m.ok_or(SchemeError::Missing {
                    scheme: kind,
                    param: Param::M,
                    example: "2",
                })?;
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
                Ok(scheme(s, Some(m), n - s))
            }
            SchemeKind::Mds => {
                let k = k_or_s()?;
                Ok(scheme(n - k, None, k))
            }
            SchemeKind::ApproxRegular => {
                let s = check_s(need_s()?)?;
                // By default each worker stores s + 1 partitions: the load of
                // frc and crc at the same tolerance (s < n, so d <= n).
                let d = params.d.unwrap_or(s + 1);
                if d == 0 || d > n {
                    return Err(out_of_range(kind, Param::D, d, n, format!("1..{n}")));
                }
                Ok(Self {
                    d: Some(d),
                    approximate: s > 0,
                    ..scheme(s, None, n - s)
                })
            }
            SchemeKind::Custom => Err(SchemeError::Missing {
                scheme: kind,
                param: Param::Code,
                example: "my-code.csv",
            }),
            SchemeKind::Timeout => {
                let t = params.timeout.ok_or(SchemeError::Missing {
                    scheme: kind,
                    param: Param::Timeout,
                    example: "2.5",
                })?;
                if !(t.is_finite() && t >= 0.0) {
                    return Err(bad_value(
                        Param::Timeout,
                        t,
                        "a finite number >= 0, in the time unit of the workers' times",
                    ));
                }
                Ok(Self {
                    approximate: true,
                    deadline: Some(t),
                    ..scheme(0, None, n)
                })
            }
            SchemeKind::Speculative => {
                let after = params.speculate_after.unwrap_or(SPECULATE_AFTER);
                let factor = params.speculate_factor.unwrap_or(SPECULATE_FACTOR);
                if !(after > 0.0 && after <= 1.0) {
                    return Err(bad_value(
                        Param::SpeculateAfter,
                        after,
                        "a share of the tasks in (0, 1], e.g. 0.75",
                    ));
                }
                if !(factor.is_finite() && (1.0..=1e6).contains(&factor)) {
                    return Err(bad_value(
                        Param::SpeculateFactor,
                        factor,
                        "a number from 1 to 1e6 (copies start at F times the time the share was done)",
                    ));
                }
                Ok(Self {
                    strategy: Some(Strategy::Speculative { after, factor }),
                    ..scheme(0, None, n)
                })
            }
            SchemeKind::KBatchSync => {
                let k = k_or_s()?;
                Ok(Self {
                    approximate: true,
                    strategy: Some(Strategy::KBatchSync { k }),
                    ..scheme(n - k, None, k)
                })
            }
            SchemeKind::MultiMessage => {
                let s = check_s(need_s()?)?;
                Ok(Self {
                    strategy: Some(Strategy::MultiMessage { s }),
                    ..scheme(s, None, n - s)
                })
            }
            SchemeKind::KAsync | SchemeKind::KBatchAsync => {
                let k = k_or_s()?;
                Ok(Self {
                    approximate: true,
                    strategy: Some(Strategy::Async {
                        k,
                        batch: kind == SchemeKind::KBatchAsync,
                    }),
                    ..scheme(n - k, None, k)
                })
            }
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => {
                let s = check_s(need_s()?)?;
                let parts = params.parts.ok_or(SchemeError::Missing {
                    scheme: kind,
                    param: Param::Parts,
                    example: "10",
                })?;
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
                Ok(Self {
                    strategy: Some(Strategy::Partial { s, parts }),
                    ..scheme(s, None, n - s)
                })
            }
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => {
                let split = matmul_split(kind, n, params)?;
                let k = split.threshold() as usize;
                Ok(Self {
                    split: Some(split),
                    ..scheme(n - k, None, k)
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

    /// The scheme.
    pub fn kind(&self) -> SchemeKind {
        self.kind
    }

    /// Number of workers.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Straggler tolerance (n − k for mds).
    pub fn s(&self) -> usize {
        self.s
    }

    /// Message split m, for comm-efficient.
    pub fn m(&self) -> Option<usize> {
        self.m
    }

    /// The guaranteed threshold: a number of finished workers that always suffices.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Work per worker, in units of the uncoded share (1/n of the data).
    pub fn load(&self) -> f64 {
        match self.kind {
            SchemeKind::Uncoded
            | SchemeKind::Ignore
            | SchemeKind::Timeout
            | SchemeKind::Speculative
            | SchemeKind::KBatchSync
            | SchemeKind::KAsync
            | SchemeKind::KBatchAsync => 1.0,
            SchemeKind::Frc | SchemeKind::Crc | SchemeKind::MultiMessage => (self.s + 1) as f64,
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => match self.strategy {
                Some(Strategy::Partial { s, parts }) => Strategy::partial_loads(s, parts).1,
                _ => unreachable!("a partial code has its strategy"),
            },
            SchemeKind::CommEfficient => (self.s + self.m.unwrap_or(1)) as f64,
            SchemeKind::Mds => self.n as f64 / self.k as f64,
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => match self.split {
                Some(split) => self.n as f64 * split.compute_share(),
                None => unreachable!("a matmul code has its split"),
            },
            SchemeKind::ApproxRegular | SchemeKind::Custom => {
                self.d.unwrap_or(1) as f64 * self.n as f64 / self.partitions as f64
            }
        }
    }

    /// Degree of approx-regular's graph, or a custom code's largest row support.
    pub fn d(&self) -> Option<usize> {
        self.d
    }

    /// The deadline T of `timeout`: at T after the iteration starts the
    /// master proceeds with the messages that have arrived (with the first
    /// to arrive if none has). The iteration time is min(R, max(T, A₁)),
    /// with R the time of the recovery rule (all n for timeout) and A₁ the
    /// first arrival.
    pub fn deadline(&self) -> Option<f64> {
        self.deadline
    }

    /// The timeline of the strategies that are not a recovery rule over one
    /// message per worker (see [`Strategy`]).
    pub fn strategy(&self) -> Option<Strategy> {
        self.strategy
    }

    /// Partitions per worker, L, of the partial-straggler codes.
    pub fn parts(&self) -> Option<usize> {
        match self.strategy {
            Some(Strategy::Partial { parts, .. }) => Some(parts),
            _ => None,
        }
    }

    /// Data partitions: n, or a custom code's columns.
    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// Size of one worker's message, as a fraction of one full gradient.
    pub fn message(&self) -> f64 {
        if let Some(split) = self.split {
            return split.message_share();
        }
        match self.m {
            Some(m) => 1.0 / m as f64,
            None => 1.0,
        }
    }

    /// Whether the decoded gradient is the exact full gradient (by
    /// construction; a custom code without s decodes exactly or not at all).
    pub fn exact_gradient(&self) -> bool {
        !self.approximate
    }

    /// Whether the master decodes a user's code by its rank condition,
    /// whatever the decoder: a custom code without s.
    pub fn rank_decoded(&self) -> bool {
        self.kind == SchemeKind::Custom && !self.approximate
    }

    /// The split of a matmul code (polynomial, matdot, entangled).
    pub fn split(&self) -> Option<Split> {
        self.split
    }

    /// The parameters that rebuild this scheme with [`Scheme::new`].
    pub fn params(&self) -> Params {
        if let Some(Split { p, q, m }) = self.split {
            return match self.kind {
                SchemeKind::MatDot => Params {
                    p: Some(m),
                    ..Params::default()
                },
                SchemeKind::Polynomial => Params {
                    p: Some(p),
                    q: Some(q),
                    ..Params::default()
                },
                _ => Params {
                    p: Some(p),
                    q: Some(q),
                    m: Some(m),
                    ..Params::default()
                },
            };
        }
        match self.kind {
            SchemeKind::Uncoded => Params::default(),
            SchemeKind::Mds => Params {
                k: Some(self.k),
                ..Params::default()
            },
            SchemeKind::ApproxRegular => Params {
                s: Some(self.s),
                d: self.d,
                ..Params::default()
            },
            SchemeKind::Custom => Params {
                s: self.approximate.then_some(self.s),
                ..Params::default()
            },
            SchemeKind::Timeout => Params {
                timeout: self.deadline,
                ..Params::default()
            },
            SchemeKind::Speculative => match self.strategy {
                Some(Strategy::Speculative { after, factor }) => Params {
                    speculate_after: Some(after),
                    speculate_factor: Some(factor),
                    ..Params::default()
                },
                _ => unreachable!("speculative has its strategy"),
            },
            SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => Params {
                k: Some(self.k),
                ..Params::default()
            },
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => match self.strategy {
                Some(Strategy::Partial { s, parts }) => Params {
                    s: Some(s),
                    parts: Some(parts),
                    ..Params::default()
                },
                _ => unreachable!("a partial code has its strategy"),
            },
            _ => Params {
                s: Some(self.s),
                m: self.m,
                ..Params::default()
            },
        }
    }

    /// The recovery rule.
    pub fn rule(&self) -> Rule {
        match self.kind {
            SchemeKind::Frc | SchemeKind::PartialFrc => Rule::Groups { size: self.s + 1 },
            _ => Rule::KOfN(self.k),
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SchemeKind::Uncoded => write!(f, "uncoded"),
            SchemeKind::Mds => write!(f, "mds k={}", self.k),
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => {
                let Split { p, q, m } = self.split.unwrap_or(Split { p: 1, q: 1, m: 1 });
                match self.kind {
                    SchemeKind::Polynomial => write!(f, "polynomial p={p} q={q}"),
                    SchemeKind::MatDot => write!(f, "matdot p={m}"),
                    _ => write!(f, "entangled p={p} m={m} q={q}"),
                }
            }
            SchemeKind::CommEfficient => write!(f, "comm-efficient s={} m={}", self.s, self.m.unwrap_or(1)),
            SchemeKind::ApproxRegular => write!(f, "approx-regular s={} d={}", self.s, self.d.unwrap_or(1)),
            SchemeKind::Custom if !self.approximate => write!(f, "custom"),
            SchemeKind::Timeout => write!(f, "timeout T={}", self.deadline.unwrap_or(0.0)),
            SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => {
                write!(f, "{} K={}", self.kind, self.k)
            }
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => match self.strategy {
                Some(Strategy::Partial { s, parts }) => write!(f, "{} s={s} L={parts}", self.kind),
                _ => write!(f, "{}", self.kind),
            },
            SchemeKind::Speculative => match self.strategy {
                Some(Strategy::Speculative { after, factor }) => write!(f, "speculative Q={after} F={factor}"),
                _ => write!(f, "speculative"),
            },
            kind => write!(f, "{kind} s={}", self.s),
        }
    }
}

/// The approximation error of `ignore` when `finished` of the n workers are
/// in: min over a of ‖aᵀ·I_F − 1ᵀ‖ / ‖1‖ = √((n − finished)/n), the fraction
/// of the gradient's partitions that are lost, in the norm of approximate
/// gradient coding. Equal to the residual of [`crate::codes::Code::decode`] for `ignore`.
///
/// # Panics
/// If `finished > n` or n = 0.
pub fn ignore_residual(n: usize, finished: usize) -> f64 {
    assert!(
        n > 0 && finished <= n,
        "finished workers are a subset of the n >= 1 workers"
    );
    ((n - finished) as f64 / n as f64).sqrt()
}

#[cfg(test)]
mod tests;
