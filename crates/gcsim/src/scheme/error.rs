//! Why a scheme cannot be built, in words that name the parameters.

use thiserror::Error;

use super::SchemeKind;
use crate::param::{Described, Naming, Param, keys};

/// Why a scheme cannot be built with the given parameters.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.describe(&keys))]
pub enum SchemeError {
    /// A parameter the scheme needs is absent.
    Missing {
        /// The scheme.
        scheme: SchemeKind,
        /// The parameter that is absent.
        param: Param,
        /// An example value.
        example: &'static str,
    },
    /// A parameter outside its range for this n.
    OutOfRange {
        /// The scheme.
        scheme: SchemeKind,
        /// The parameter.
        param: Param,
        /// The rejected value.
        value: usize,
        /// The number of workers.
        n: usize,
        /// The accepted values.
        accepted: String,
    },
    /// A valid parameter combination that this scheme's construction does not
    /// admit (`frc` with (s+1) ∤ n, `comm-efficient` with s+m > n). A sweep
    /// skips these values; `run` reports them.
    NotAdmitted {
        /// The scheme.
        scheme: SchemeKind,
        /// The parameters, e.g. `s=6`.
        what: String,
        /// The number of workers.
        n: usize,
        /// The condition that fails, e.g. `s+1 must divide n`.
        rule: &'static str,
        /// What would be admitted.
        hint: String,
    },
    /// A real-valued parameter outside its range.
    BadValue {
        /// The scheme.
        scheme: SchemeKind,
        /// The parameter.
        param: Param,
        /// The rejected value, as written.
        value: String,
        /// The accepted values.
        accepted: &'static str,
    },
    /// A parameter given to a scheme that does not read it.
    NotRead {
        /// The scheme.
        scheme: SchemeKind,
        /// The parameter it does not read.
        param: Param,
    },
}

impl Described for SchemeError {
    fn describe(&self, name: Naming) -> String {
        match self {
            SchemeError::Missing {
                scheme: SchemeKind::Custom,
                ..
            } => format!(
                "custom needs {} FILE: a CSV of n rows (workers) by P columns (partitions)",
                name(Param::Code)
            ),
            SchemeError::Missing {
                scheme: scheme @ (SchemeKind::Mds | SchemeKind::KBatchSync),
                example,
                ..
            } => {
                let (k, s) = (name(Param::K), name(Param::S));
                format!("{scheme} needs {k} (or {s}, as k = n - s) (e.g. {k} {example})")
            }
            SchemeError::Missing { scheme, param, example } => {
                format!("{scheme} needs {p} (e.g. {p} {example})", p = name(*param))
            }
            SchemeError::OutOfRange {
                scheme,
                param,
                value,
                n,
                accepted,
            } => format!(
                "{} {value} is out of range for {scheme} with n={n}; accepted: {accepted}",
                name(*param)
            ),
            SchemeError::NotAdmitted {
                scheme,
                what,
                n,
                rule,
                hint,
            } => format!("{scheme} does not admit {what} with n={n}: {rule}; {hint}"),
            SchemeError::BadValue {
                scheme,
                param,
                value,
                accepted,
            } => format!(
                "{} {value} is out of range for {scheme}; accepted: {accepted}",
                name(*param)
            ),
            SchemeError::NotRead {
                scheme: scheme @ (SchemeKind::Mds | SchemeKind::KBatchSync),
                param: Param::S,
            } => format!(
                "{s} does not apply to {scheme} when {k} is given (k = n - s): give one of them",
                s = name(Param::S),
                k = name(Param::K)
            ),
            SchemeError::NotRead { scheme, param } => format!("{} does not apply to {scheme}", name(*param)),
        }
    }
}

pub(super) fn out_of_range(kind: SchemeKind, param: Param, value: usize, n: usize, accepted: String) -> SchemeError {
    SchemeError::OutOfRange {
        scheme: kind,
        param,
        value,
        n,
        accepted,
    }
}

/// Clusters up to this size list their admitted frc tolerances in errors.
const LIST_DIVISORS_UP_TO: usize = 1 << 24;

/// The tolerances frc admits on `n` workers (s+1 divides n), for an error
/// message. Trial division up to √n, so at most 4096 steps; beyond
/// [`LIST_DIVISORS_UP_TO`] workers the rule is stated instead of listed.
fn frc_hint(n: usize) -> String {
    if n > LIST_DIVISORS_UP_TO {
        return "accepted s: one less than a divisor of n".to_string();
    }
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            small.push(d);
            if d * d != n {
                large.push(n / d);
            }
        }
        d += 1;
    }
    let divisors = small.into_iter().chain(large.into_iter().rev());
    let admitted: Vec<String> = divisors.map(|d| (d - 1).to_string()).collect();
    format!("accepted s: {}", admitted.join(", "))
}

/// Whether frc's placement admits `s` on `n` workers (s+1 divides n).
pub(super) fn frc_admits(kind: SchemeKind, n: usize, s: usize, what: String) -> Result<(), SchemeError> {
    if n.is_multiple_of(s + 1) {
        return Ok(());
    }
    Err(SchemeError::NotAdmitted {
        scheme: kind,
        what,
        n,
        rule: "s+1 must divide n",
        hint: frc_hint(n),
    })
}
