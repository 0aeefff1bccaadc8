//! Studies: limits, the recorded form, the exact law with communication.
use super::*;
use crate::comm::Link;
use crate::param::{Described, Param};

fn at(kind: SchemeKind, n: usize, params: Params) -> Scheme {
    Scheme::new(kind, n, params).unwrap()
}

/// Regression: n × load overflowed u64 under `additive` (2³² workers at
/// load 2³²), wrapped to 0 draws per trial, passed the guard and aborted
/// on allocation; and a huge n under `fixed` was blamed on an additive load.
#[test]
fn huge_clusters_are_errors() {
    let n = 1usize << 32;
    let ce = at(
        SchemeKind::CommEfficient,
        n,
        Params {
            s: Some(0),
            m: Some(n),
            k: None,
            d: None,
            ..Params::default()
        },
    );
    let dist = Dist::exp(1.0).unwrap();
    let err = Study::new(n, dist, LoadModel::Additive, vec![ce], 1, 0).unwrap_err();
    assert_eq!(err, StudyError::TooManyWorkers(n));
    let uncoded = at(SchemeKind::Uncoded, n, Params::default());
    let err = Study::new(n, dist, LoadModel::Fixed, vec![uncoded], 1, 0).unwrap_err();
    assert!(
        err.to_string().starts_with("n 4294967296 is more than the limit"),
        "{err}"
    );
    let big = 1usize << 20;
    let mds = at(
        SchemeKind::Mds,
        big,
        Params {
            k: Some(1),
            ..Params::default()
        },
    );
    let err = Study::new(big, dist, LoadModel::Additive, vec![mds], 1, 0).unwrap_err();
    assert!(matches!(err, StudyError::TrialTooLarge { .. }), "{err}");
    let flags = |p: Param| if p == Param::N { "--n" } else { "--other" }.to_string();
    assert!(
        StudyError::TooManyWorkers(n)
            .describe(&flags)
            .ends_with("use a smaller --n"),
        "the front end's names replace every key"
    );
}

/// Every field of a study survives its record: a field the record drops
/// (the rank decoder once was) makes the studies differ.
#[test]
fn records_every_field() {
    let classes = Workers::Classes {
        classes: vec![(4, Dist::exp(1.0).unwrap()), (2, Dist::pareto(1.0, 3.0).unwrap())],
        shuffle: true,
    };
    let schemes = vec![
        at(
            SchemeKind::Crc,
            6,
            Params {
                s: Some(2),
                ..Params::default()
            },
        ),
        at(
            SchemeKind::CommEfficient,
            6,
            Params {
                s: Some(1),
                m: Some(2),
                k: None,
                d: None,
                ..Params::default()
            },
        ),
    ];
    let comm = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Shared, 0.25).unwrap();
    let study = Study::with_workers(6, classes, LoadModel::Affine { unit_time: 0.5 }, schemes, 123, 9)
        .unwrap()
        .with_comm(comm)
        .with_decoder(Decoder::Rank)
        .unwrap();
    let text = serde_json::to_string(&study).unwrap();
    let back: Study = serde_json::from_str(&text).unwrap();
    assert_eq!(back, study, "{text}");
    assert_eq!(back.decoder(), Decoder::Rank);
    let constant = study
        .clone()
        .with_comm(Comm::new(Some(0.5), None, Link::Dedicated, 0.0).unwrap());
    let back: Study = serde_json::from_str(&serde_json::to_string(&constant).unwrap()).unwrap();
    assert_eq!(back, constant);
}

/// The exact law includes communication where it is a constant shift,
/// and does not exist where it is not.
#[test]
fn exact_law_includes_communication() {
    let crc = at(
        SchemeKind::Crc,
        10,
        Params {
            s: Some(2),
            ..Params::default()
        },
    );
    let ce = at(
        SchemeKind::CommEfficient,
        10,
        Params {
            s: Some(2),
            m: Some(4),
            k: None,
            d: None,
            ..Params::default()
        },
    );
    let plain = Study::new(10, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![crc, ce], 10, 0).unwrap();
    let with = |comm: Comm| plain.clone().with_comm(comm);
    let tau = with(Comm::new(Some(2.0), None, Link::Dedicated, 0.5).unwrap());
    for (scheme, message) in [(&crc, 1.0), (&ce, 0.25)] {
        let base = plain.exact_law(scheme).unwrap();
        let law = tau.exact_law(scheme).unwrap();
        let shift = 2.0 * message + 0.5;
        assert_eq!(law.mean(), base.mean() + shift);
        assert_eq!(law.quantile(0.99), base.quantile(0.99) + shift);
        assert_eq!(law.cdf(1.0 + shift), base.cdf(1.0));
        assert_eq!(law.sf(1.0 + shift), base.sf(1.0));
    }
    let random = with(Comm::new(None, Some(Dist::exp(1.0).unwrap()), Link::Dedicated, 0.0).unwrap());
    let shared = with(Comm::new(Some(1.0), None, Link::Shared, 0.0).unwrap());
    assert!(random.exact_law(&crc).is_none() && shared.exact_law(&crc).is_none());
    let free_shared = with(Comm::new(Some(0.0), None, Link::Shared, 0.0).unwrap());
    assert_eq!(free_shared.exact_law(&crc), plain.exact_law(&crc));
}

/// The transfer law's tail counts: on a dedicated link each arrival has
/// index min(α_worker, α_transfer) and the order statistic sums them; on a
/// shared link every delivery waits for a transfer, so α_transfer ≤ 1 makes
/// every mean infinite. Boundaries on both sides of index 1.
#[test]
fn transfer_tails_decide_infinite_means() {
    let pareto = |shape: f64| Dist::pareto(1.0, shape).unwrap();
    let s = |kind, s: usize| {
        at(
            kind,
            4,
            Params {
                s: Some(s),
                ..Params::default()
            },
        )
    };
    let (crc0, crc1, frc1) = (s(SchemeKind::Crc, 0), s(SchemeKind::Crc, 1), s(SchemeKind::Frc, 1));
    let study = |workers: Dist, transfer: Dist, link: Link| {
        Study::new(4, workers, LoadModel::Fixed, vec![crc0, crc1, frc1], 10, 0)
            .unwrap()
            .with_comm(Comm::new(None, Some(transfer), link, 0.0).unwrap())
    };
    let light = Dist::exp(1.0).unwrap();
    // Dedicated: crc s=0 waits for all 4 (index = the smallest), s=1 for 3
    // of 4 (two smallest summed), frc s=1 for one of each pair (a pair's sum).
    let dedicated = study(light, pareto(0.6), Link::Dedicated);
    assert!(dedicated.mean_is_infinite(&crc0));
    assert!(!dedicated.mean_is_infinite(&crc1) && !dedicated.mean_is_infinite(&frc1));
    let dedicated = study(light, pareto(0.45), Link::Dedicated);
    assert!(dedicated.mean_is_infinite(&crc1) && dedicated.mean_is_infinite(&frc1));
    // The heavier of the two laws sets each arrival's index.
    let both = study(pareto(0.45), pareto(3.0), Link::Dedicated);
    assert!(both.mean_is_infinite(&crc1));
    let light_transfer = study(light, pareto(1.5), Link::Dedicated);
    assert!(!light_transfer.mean_is_infinite(&crc0));
    // Shared: one heavy transfer is enough for every scheme.
    let shared = study(light, pareto(0.9), Link::Shared);
    assert!([crc0, crc1, frc1].iter().all(|s| shared.mean_is_infinite(s)));
    let shared = study(light, pareto(1.1), Link::Shared);
    assert!([crc0, crc1, frc1].iter().all(|s| !shared.mean_is_infinite(s)));
    // Under a constant transfer only the workers count.
    let constant = Study::new(4, pareto(0.6), LoadModel::Fixed, vec![crc0, crc1], 10, 0)
        .unwrap()
        .with_comm(Comm::new(Some(1.0), None, Link::Shared, 0.0).unwrap());
    assert!(constant.mean_is_infinite(&crc0) && !constant.mean_is_infinite(&crc1));
}

/// A custom scheme needs the study's matrix, and a matrix needs a custom
/// scheme (a shard file can say either without the other).
#[test]
fn custom_schemes_and_their_matrix_come_together() {
    let shape = crate::scheme::CustomShape {
        n: 4,
        partitions: 4,
        max_support: 2,
    };
    let custom = Scheme::custom(shape, None).unwrap();
    let study = Study::new(4, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![custom], 10, 0).unwrap();
    // What reading a shard whose record has no matrix does.
    let err = study.with_custom(None).unwrap_err();
    assert_eq!(err, StudyError::NoCustomMatrix);
    assert_eq!(err.to_string(), "the custom scheme needs its matrix: give code FILE");
}

/// A matrix without a custom scheme is refused, and so is one whose shape
/// differs from the custom scheme's in any one of rows, columns or the
/// largest row support.
#[test]
fn a_matrix_fits_its_custom_scheme_exactly() {
    let dist = Dist::exp(1.0).unwrap();
    // 4 workers × 4 partitions, each row holding 2.
    let matrix = CustomMatrix::parse("m.csv", "1,1,0,0\n1,1,0,0\n0,0,1,1\n0,0,1,1\n").unwrap();
    let crc = at(
        SchemeKind::Crc,
        4,
        Params {
            s: Some(1),
            ..Params::default()
        },
    );
    let err = Study::new(4, dist, LoadModel::Fixed, vec![crc], 10, 0)
        .unwrap()
        .with_custom(Some(matrix.clone()))
        .unwrap_err();
    assert!(err.to_string().contains("is read only for the custom scheme"), "{err}");
    let shape = matrix.shape();
    let fits = Scheme::custom(shape, None).unwrap();
    assert!(
        Study::new(4, dist, LoadModel::Fixed, vec![fits], 10, 0)
            .unwrap()
            .with_custom(Some(matrix.clone()))
            .is_ok()
    );
    for other in [
        crate::scheme::CustomShape {
            partitions: 8,
            max_support: 2,
            ..shape
        },
        crate::scheme::CustomShape {
            max_support: 3,
            ..shape
        },
    ] {
        let custom = Scheme::custom(other, None).unwrap();
        let err = Study::new(4, dist, LoadModel::Fixed, vec![custom], 10, 0)
            .unwrap()
            .with_custom(Some(matrix.clone()))
            .unwrap_err();
        assert!(err.to_string().contains("m.csv is 4 x 4 with at most 2"), "{err}");
    }
}

/// A custom code's per-worker loads are its rows' supports in units of
/// the uncoded share, n/P each: here n = 3, P = 6, so half a share per
/// partition.
#[test]
fn per_worker_loads_scale_supports_by_n_over_p() {
    let matrix = CustomMatrix::parse("m.csv", "1,1,1,1,0,0\n0,0,1,1,0,0\n0,0,0,0,1,1\n").unwrap();
    let custom = Scheme::custom(matrix.shape(), None).unwrap();
    let study = Study::new(3, Dist::exp(1.0).unwrap(), LoadModel::Scaled, vec![custom], 10, 0)
        .unwrap()
        .with_custom(Some(matrix))
        .unwrap();
    assert_eq!(study.per_worker_loads(&custom), Some(vec![2.0, 1.0, 1.0]));
}

/// frc's tail index is the smallest sum over a group, for the group that
/// is really there: with the light workers first and two Pareto workers of
/// index 0.4 in the second group, that group's sum is 0.8 and the mean is
/// infinite; the first group's is infinite.
#[test]
fn frc_tail_index_reads_each_group_of_a_mixed_cluster() {
    let workers = Workers::Classes {
        classes: vec![(2, Dist::exp(1.0).unwrap()), (2, Dist::pareto(1.0, 0.4).unwrap())],
        shuffle: false,
    };
    let frc = at(
        SchemeKind::Frc,
        4,
        Params {
            s: Some(1),
            ..Params::default()
        },
    );
    let study = Study::with_workers(4, workers, LoadModel::Fixed, vec![frc], 10, 0).unwrap();
    assert!(study.mean_is_infinite(&frc));
    let light = Workers::Classes {
        classes: vec![(2, Dist::exp(1.0).unwrap()), (2, Dist::pareto(1.0, 0.6).unwrap())],
        shuffle: false,
    };
    let study = Study::with_workers(4, light, LoadModel::Fixed, vec![frc], 10, 0).unwrap();
    assert!(!study.mean_is_infinite(&frc), "1.2 > 1: finite");
}
