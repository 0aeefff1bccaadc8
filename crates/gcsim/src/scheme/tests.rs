//! Schemes: the table of loads and messages, admitted and refused parameters, the rules.
use super::*;
use crate::encoding::Encoding;
use crate::param::Param;
use search::PlanLists;

fn build(
    kind: SchemeKind,
    n: usize,
    s: Option<usize>,
    m: Option<usize>,
    k: Option<usize>,
) -> Result<Scheme, SchemeError> {
    Scheme::new(
        kind,
        n,
        Params {
            s,
            m,
            k,
            d: None,
            ..Params::default()
        },
    )
}

#[test]
fn spec_table() {
    let u = build(SchemeKind::Uncoded, 10, None, None, None).unwrap();
    assert_eq!((u.load(), u.message(), u.k(), u.exact_gradient()), (1.0, 1.0, 10, true));
    let i = build(SchemeKind::Ignore, 10, Some(3), None, None).unwrap();
    assert_eq!((i.load(), i.k(), i.exact_gradient()), (1.0, 7, false));
    let f = build(SchemeKind::Frc, 10, Some(4), None, None).unwrap();
    assert_eq!((f.load(), f.k(), f.rule()), (5.0, 6, Rule::Groups { size: 5 }));
    let c = build(SchemeKind::Crc, 10, Some(4), None, None).unwrap();
    assert_eq!((c.load(), c.k(), c.rule()), (5.0, 6, Rule::KOfN(6)));
    let ce = build(SchemeKind::CommEfficient, 10, Some(2), Some(4), None).unwrap();
    assert_eq!((ce.load(), ce.message(), ce.k()), (6.0, 0.25, 8));
    let mds = build(SchemeKind::Mds, 10, None, None, Some(4)).unwrap();
    assert_eq!((mds.load(), mds.k(), mds.s()), (2.5, 4, 6));
    let mds_s = build(SchemeKind::Mds, 10, Some(6), None, None).unwrap();
    assert_eq!(mds_s, mds);
}

#[test]
fn inadmissible_parameters() {
    let err = build(SchemeKind::Frc, 10, Some(2), None, None).unwrap_err();
    assert!(matches!(err, SchemeError::NotAdmitted { .. }));
    assert!(err.to_string().contains("accepted s: 0, 1, 4, 9"), "{err}");
    assert!(matches!(
        build(SchemeKind::CommEfficient, 10, Some(5), Some(6), None),
        Err(SchemeError::NotAdmitted { .. })
    ));
    assert!(matches!(
        build(SchemeKind::Crc, 10, Some(10), None, None),
        Err(SchemeError::OutOfRange { .. })
    ));
    assert!(matches!(
        build(SchemeKind::Mds, 10, None, None, Some(0)),
        Err(SchemeError::OutOfRange { .. })
    ));
    assert!(matches!(
        build(SchemeKind::Mds, 10, None, None, Some(11)),
        Err(SchemeError::OutOfRange { .. })
    ));
    assert!(matches!(
        build(SchemeKind::CommEfficient, 10, Some(1), Some(0), None),
        Err(SchemeError::OutOfRange { .. })
    ));
    assert!(matches!(
        build(SchemeKind::CommEfficient, 10, Some(1), None, None),
        Err(SchemeError::Missing { .. })
    ));
    assert!(matches!(
        build(SchemeKind::Uncoded, 10, Some(1), None, None),
        Err(SchemeError::OutOfRange { .. })
    ));
}

/// A parameter the scheme does not read is an error naming it, never
/// dropped (mds reads s only when k is absent).
#[test]
fn parameters_not_read_are_errors() {
    let not_read = |kind, s, m, k| match build(kind, 20, s, m, k) {
        Err(SchemeError::NotRead { param, .. }) => Some(param),
        _ => None,
    };
    use SchemeKind as K;
    assert_eq!(not_read(K::Mds, Some(100), None, Some(15)), Some(Param::S));
    assert_eq!(not_read(K::Mds, Some(3), None, Some(15)), Some(Param::S));
    assert_eq!(not_read(K::Mds, None, Some(2), Some(15)), Some(Param::M));
    assert_eq!(not_read(K::Frc, Some(1), None, Some(3)), Some(Param::K));
    assert_eq!(not_read(K::Crc, Some(1), Some(3), None), Some(Param::M));
    assert_eq!(not_read(K::Uncoded, None, Some(1), None), Some(Param::M));
    assert_eq!(not_read(K::CommEfficient, Some(1), Some(1), Some(3)), Some(Param::K));
    let err = build(K::Mds, 20, Some(3), None, Some(15)).unwrap_err();
    assert!(
        err.to_string().starts_with("s does not apply to mds when k is given"),
        "{err}"
    );
    // What each scheme reads still builds.
    assert_eq!(build(K::Mds, 20, Some(5), None, None).unwrap().k(), 15);
    assert_eq!(build(K::Uncoded, 20, Some(0), None, None).unwrap().k(), 20);
}

/// Regression: huge n listed every divisor by trial division up to n
/// (a hang), and s + m overflowed for huge m (a panic, or a wrapped sum
/// that accepted m and reported a load of 0).
#[test]
fn huge_parameters_are_errors_at_once() {
    let err = build(SchemeKind::Frc, usize::MAX - 1, Some(2), None, None).unwrap_err();
    assert!(err.to_string().contains("one less than a divisor of n"), "{err}");
    let err = build(SchemeKind::Frc, 36, Some(6), None, None).unwrap_err();
    assert!(
        err.to_string().contains("accepted s: 0, 1, 2, 3, 5, 8, 11, 17, 35"),
        "{err}"
    );
    assert!(matches!(
        build(SchemeKind::CommEfficient, 10, Some(1), Some(usize::MAX), None),
        Err(SchemeError::NotAdmitted { .. })
    ));
    let ce = build(SchemeKind::CommEfficient, 10, Some(1), Some(9), None).unwrap();
    assert_eq!(ce.load(), 10.0);
}

#[test]
fn decodable_rules() {
    let f = [true, false, false, false, true, false];
    assert!(Rule::KOfN(2).decodable(&f));
    assert!(!Rule::KOfN(3).decodable(&f));
    assert!(Rule::Groups { size: 3 }.decodable(&f));
    assert!(!Rule::Groups { size: 2 }.decodable(&f));
}

#[test]
fn names_round_trip() {
    for k in SchemeKind::ALL {
        assert_eq!(k.name().parse::<SchemeKind>().unwrap(), k);
    }
    assert!("lrc".parse::<SchemeKind>().unwrap_err().contains("accepted"));
}

/// `params` rebuilds every scheme, and `Display` names each with the
/// parameters that define it (a custom code without s decodes by rank: no s).
#[test]
fn params_rebuild_and_names_show_the_parameters() {
    let p = |s: Option<usize>, m: Option<usize>, k: Option<usize>, d: Option<usize>| Params {
        s,
        m,
        k,
        d,
        ..Params::default()
    };
    let cases = [
        (SchemeKind::Uncoded, p(None, None, None, None), "uncoded"),
        (SchemeKind::Ignore, p(Some(3), None, None, None), "ignore s=3"),
        (SchemeKind::Frc, p(Some(4), None, None, None), "frc s=4"),
        (SchemeKind::Crc, p(Some(2), None, None, None), "crc s=2"),
        (
            SchemeKind::CommEfficient,
            p(Some(2), Some(3), None, None),
            "comm-efficient s=2 m=3",
        ),
        (SchemeKind::Mds, p(None, None, Some(7), None), "mds k=7"),
        (
            SchemeKind::ApproxRegular,
            p(Some(2), None, None, Some(4)),
            "approx-regular s=2 d=4",
        ),
    ];
    for (kind, params, name) in cases {
        let scheme = Scheme::new(kind, 10, params).unwrap();
        assert_eq!(scheme.to_string(), name);
        assert_eq!(Scheme::new(kind, 10, scheme.params()).unwrap(), scheme, "{name}");
    }
    let shape = CustomShape {
        n: 6,
        partitions: 4,
        max_support: 2,
    };
    let exact = Scheme::custom(shape, None).unwrap();
    let approximate = Scheme::custom(shape, Some(2)).unwrap();
    assert_eq!((exact.to_string().as_str(), exact.params().s), ("custom", None));
    assert_eq!(
        (approximate.to_string().as_str(), approximate.params().s),
        ("custom s=2", Some(2))
    );
}

/// Parameters that build `kind` on 12 workers (listed for every scheme:
/// the match is exhaustive).
fn example(kind: SchemeKind) -> Params {
    let with = |f: fn(&mut Params)| {
        let mut p = Params::default();
        f(&mut p);
        p
    };
    match kind {
        SchemeKind::Uncoded | SchemeKind::Speculative | SchemeKind::Custom => Params::default(),
        SchemeKind::Ignore | SchemeKind::Frc | SchemeKind::Crc | SchemeKind::MultiMessage => Params::with_s(2),
        SchemeKind::CommEfficient => with(|p| (p.s, p.m) = (Some(2), Some(3))),
        SchemeKind::Mds | SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => Params::with_k(9),
        SchemeKind::ApproxRegular => with(|p| (p.s, p.d) = (Some(2), Some(4))),
        SchemeKind::ErasureHead => with(|p| (p.s, p.d) = (Some(4), Some(3))),
        SchemeKind::Timeout => with(|p| p.timeout = Some(1.5)),
        SchemeKind::PartialFrc | SchemeKind::PartialCrc => with(|p| (p.s, p.parts) = (Some(2), Some(5))),
        SchemeKind::Polynomial => with(|p| (p.p, p.q) = (Some(2), Some(3))),
        SchemeKind::MatDot => with(|p| p.p = Some(3)),
        SchemeKind::Entangled => with(|p| (p.p, p.m, p.q) = (Some(2), Some(2), Some(2))),
    }
}

/// Each scheme's data agrees with its facts: it rebuilds from its
/// parameters under its name, a code (and only a code) has an encoding, a
/// timeline (and only a timeline) has a strategy, and `plan` has
/// candidates for every scheme it does not refuse.
#[test]
fn every_scheme_agrees_with_its_facts() {
    let n = 12;
    for kind in SchemeKind::ALL {
        let facts = kind.facts();
        let scheme = match kind {
            SchemeKind::Custom => Scheme::custom(
                CustomShape {
                    n,
                    partitions: n,
                    max_support: 3,
                },
                Some(2),
            ),
            _ => Scheme::new(kind, n, example(kind)),
        }
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(scheme.kind(), kind);
        assert_eq!(scheme.shape().kind(), kind);
        assert!(scheme.to_string().starts_with(facts.name), "{scheme}");
        if kind != SchemeKind::Custom {
            assert_eq!(Scheme::new(kind, n, scheme.params()).unwrap(), scheme, "{kind}");
        }
        assert_eq!(scheme.s(), n - scheme.k(), "{kind}");
        let encoding = scheme.encoding(crate::encoding::Generator::Gaussian, 1);
        let has_matrix = matches!(encoding, Encoding::Built { .. } | Encoding::FromFile);
        assert_eq!(has_matrix, facts.construction == Construction::Matrix, "{kind}");
        if let Encoding::Built { b, target } = &encoding {
            assert_eq!((b.nrows(), b.ncols()), (n, target.ncols()), "{kind}");
        }
        let timeline = matches!(facts.construction, Construction::Uncoded | Construction::PartOf(_));
        assert_eq!(scheme.strategy().is_some(), timeline, "{kind}");
        let lists = PlanLists {
            parts: vec![5],
            m: vec![1, 2],
            timeouts: vec![1.0],
        };
        let candidates = (facts.search)(n, &lists)
            .into_iter()
            .flat_map(|scan| scan.params)
            .count();
        assert_eq!(candidates == 0, facts.planning == Planning::Refused, "{kind}");
    }
}
