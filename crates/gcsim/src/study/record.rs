//! A study's serialised form (shard files): every field by name, read back
//! through the same validation as the command line's.

use faer::Mat;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::aggregation::CollectiveRecord;
use super::parallel::ParallelRecord;
use super::{Decoder, Study, StudyError, Workers};
use crate::codes::Generator;
use crate::codes::custom::CustomMatrix;
use crate::comm::{Comm, Link};
use crate::dist::Dist;
use crate::load::LoadModel;
use crate::scheme::{Params, Scheme, SchemeKind};

/// One scheme as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SchemeRecord {
    scheme: SchemeKind,
    s: Option<usize>,
    m: Option<usize>,
    k: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    speculate_after: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    speculate_factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parts: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    q: Option<usize>,
}

/// A study as recorded: every field, laws and load models in their
/// command-line syntax.
#[derive(Serialize, Deserialize)]
struct StudyRecord {
    n: usize,
    workers: Workers,
    load_model: String,
    unit_time: Option<f64>,
    trials: u64,
    seed: u64,
    schemes: Vec<SchemeRecord>,
    comm_time: Option<f64>,
    comm_dist: Option<String>,
    link: Link,
    decode_time: f64,
    decoder: Decoder,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generator: Option<Generator>,
    /// The custom schemes' matrix: its source and rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    custom: Option<(String, Vec<Vec<f64>>)>,
    /// Consecutive iterations per trial (absent: 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    iterations: u64,
    /// The collective that sums the gradients (absent: the master).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aggregation: Option<CollectiveRecord>,
    /// The hybrid-parallel layout (absent: a flat cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parallel: Option<ParallelRecord>,
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

impl Serialize for Study {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Every field by name, so that a field added to `Study` and not
        // recorded here does not compile.
        let Study {
            n,
            workers,
            load_model,
            schemes,
            trials,
            seed,
            comm,
            decoder,
            generator,
            custom,
            iterations,
            aggregation,
            parallel,
        } = self;
        StudyRecord {
            n: *n,
            workers: workers.clone(),
            load_model: load_model.name().to_string(),
            unit_time: load_model.unit_time(),
            trials: *trials,
            seed: *seed,
            schemes: schemes
                .iter()
                .map(|sc| {
                    let p = sc.params();
                    SchemeRecord {
                        scheme: sc.kind(),
                        s: p.s,
                        m: p.m,
                        k: p.k,
                        d: p.d,
                        timeout: p.timeout,
                        speculate_after: p.speculate_after,
                        speculate_factor: p.speculate_factor,
                        parts: p.parts,
                        p: p.p,
                        q: p.q,
                    }
                })
                .collect(),
            comm_time: comm.comm_time(),
            comm_dist: comm.comm_dist().map(|d| d.to_string()),
            link: comm.link,
            decode_time: comm.decode_time,
            decoder: *decoder,
            generator: *generator,
            custom: custom.as_ref().map(|m| {
                (
                    m.source.clone(),
                    m.b.row_iter().map(|r| r.iter().copied().collect()).collect(),
                )
            }),
            iterations: *iterations,
            aggregation: CollectiveRecord::of(aggregation),
            parallel: parallel.as_deref().map(ParallelRecord::of),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Study {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let r = StudyRecord::deserialize(d)?;
        // Schemes are built for n before the study checks it.
        if r.n == 0 {
            return Err(D::Error::custom(StudyError::NoWorkers));
        }
        let custom = match &r.custom {
            Some((source, rows)) => {
                let p = rows.first().map_or(0, Vec::len);
                if rows.is_empty()
                    || p == 0
                    || rows
                        .iter()
                        .any(|row| row.len() != p || row.iter().any(|v| !v.is_finite()))
                {
                    return Err(D::Error::custom(
                        "custom: a matrix of finite numbers with rows of equal length",
                    ));
                }
                let b = Mat::from_fn(rows.len(), p, |i, j| rows[i][j]);
                Some(CustomMatrix::new(source.clone(), b))
            }
            None => None,
        };
        let parallel = r
            .parallel
            .as_ref()
            .map(ParallelRecord::parallel)
            .transpose()
            .map_err(D::Error::custom)?;
        let scheme_n = parallel.as_ref().map_or(r.n, |p| p.layout.dp);
        let schemes = r
            .schemes
            .iter()
            .map(|s| match (s.scheme, &custom) {
                (SchemeKind::Custom, Some(m)) => Scheme::custom(m.shape(), s.s),
                _ => Scheme::new(
                    s.scheme,
                    scheme_n,
                    Params {
                        s: s.s,
                        m: s.m,
                        k: s.k,
                        d: s.d,
                        timeout: s.timeout,
                        speculate_after: s.speculate_after,
                        speculate_factor: s.speculate_factor,
                        parts: s.parts,
                        p: s.p,
                        q: s.q,
                    },
                ),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(D::Error::custom)?;
        let model = LoadModel::new(&r.load_model, r.unit_time).map_err(D::Error::custom)?;
        let comm_dist = match &r.comm_dist {
            Some(text) => Some(
                text.parse::<Dist>()
                    .map_err(|e| D::Error::custom(format!("comm_dist: {e}")))?,
            ),
            None => None,
        };
        let comm = Comm::new(r.comm_time, comm_dist, r.link, r.decode_time).map_err(D::Error::custom)?;
        let aggregation = CollectiveRecord::aggregation(r.aggregation.as_ref()).map_err(D::Error::custom)?;
        let base = match parallel {
            Some(p) if p.layout.ranks() == r.n && model == LoadModel::Fixed => {
                Study::hybrid(p, r.workers, schemes, r.trials, r.seed)
            }
            Some(p) => {
                return Err(D::Error::custom(format!(
                    "parallel: the layout {} has {} ranks under the fixed load model, but n is {} and load_model {}",
                    p.layout,
                    p.layout.ranks(),
                    r.n,
                    r.load_model
                )));
            }
            None => Study::with_workers(r.n, r.workers, model, schemes, r.trials, r.seed),
        };
        base.and_then(|s| s.with_comm(comm).with_custom(custom))
            .and_then(|s| s.with_decoder(r.decoder))
            .and_then(|s| s.with_generator(r.generator))
            .and_then(|s| s.with_iterations(r.iterations))
            .and_then(|s| s.with_aggregation(aggregation))
            .map_err(D::Error::custom)
    }
}
