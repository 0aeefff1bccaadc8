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
