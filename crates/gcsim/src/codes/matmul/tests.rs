use super::*;
use crate::scheme::Params;

fn scheme(kind: SchemeKind, n: usize, p: usize, q: Option<usize>, m: Option<usize>) -> Scheme {
    Scheme::new(
        kind,
        n,
        Params {
            p: Some(p),
            q,
            m,
            ..Params::default()
        },
    )
    .unwrap()
}

/// Small codes of each kind, with their thresholds from the papers.
fn cases() -> Vec<(Scheme, usize)> {
    vec![
        (scheme(SchemeKind::Polynomial, 9, 2, Some(3), None), 6),
        (scheme(SchemeKind::Polynomial, 10, 3, Some(3), None), 9),
        (scheme(SchemeKind::MatDot, 8, 3, None, None), 5),
        (scheme(SchemeKind::MatDot, 10, 4, None, None), 7),
        (scheme(SchemeKind::Entangled, 8, 1, Some(2), Some(2)), 5),
        (scheme(SchemeKind::Entangled, 11, 2, Some(2), Some(2)), 9),
        (scheme(SchemeKind::Entangled, 10, 3, Some(1), Some(2)), 7),
    ]
}

#[test]
fn every_k_set_decodes_and_few_k_minus_1_sets_do() {
    for (sch, k) in cases() {
        assert_eq!(sch.k(), k, "{sch}");
        for g in [Generator::Vandermonde, Generator::Chebyshev] {
            let code = MatmulCode::new(&sch, g, 1).unwrap();
            let row = check(&code, 1_000_000, 1, &|| {});
            assert!(row.exhaustive, "{sch}");
            assert_eq!(row.decodable_fraction, 1.0, "{sch} {g:?}");
            // Not every (k−1)-set (symmetric nodes let a few decode; the
            // polynomial code's target is every coefficient, so none does).
            assert!(row.below_threshold_fraction < 0.1, "{sch} {g:?}");
            if sch.kind() == SchemeKind::Polynomial {
                assert_eq!(row.below_threshold_fraction, 0.0, "{sch} {g:?}");
            }
            assert!(row.product_error < 1e-9, "{sch} {g:?}: {}", row.product_error);
            assert!(row.pass);
        }
    }
}

#[test]
fn symmetric_points_decode_matdot_from_some_smaller_sets() {
    // Nodes ±x: the node polynomial of a symmetric (k−1)-set is even, so
    // its x^(p−1) coefficient (p − 1 odd) vanishes and the set decodes.
    let sch = scheme(SchemeKind::MatDot, 10, 4, None, None);
    let code = MatmulCode::new(&sch, Generator::Vandermonde, 0).unwrap();
    let symmetric = [0, 1, 2, 7, 8, 9];
    assert!(code.decode(&symmetric).decodable);
    assert!(!code.decode(&[0, 1, 2, 3, 8, 9]).decodable);
}

#[test]
fn random_khatri_rao_code_has_the_polynomial_threshold() {
    let sch = scheme(SchemeKind::Polynomial, 10, 2, Some(3), None);
    let code = MatmulCode::new(&sch, Generator::Gaussian, 3).unwrap();
    let row = check(&code, 1_000_000, 3, &|| {});
    assert_eq!((row.decodable_fraction, row.below_threshold_fraction), (1.0, 0.0));
    assert!(row.product_error < 1e-9, "{}", row.product_error);
    let err = MatmulCode::new(&scheme(SchemeKind::MatDot, 10, 3, None, None), Generator::Gaussian, 0).unwrap_err();
    assert!(
        err.to_string()
            .contains("--generator gaussian applies only to polynomial")
    );
}

#[test]
fn decoded_product_is_the_direct_product() {
    // One decoding written out: the blocks of Ĉ against A·B.
    let sch = scheme(SchemeKind::Entangled, 12, 2, Some(2), Some(2));
    let code = MatmulCode::new(&sch, Generator::Chebyshev, 5).unwrap();
    assert!(code.product_error(4, 5) < 1e-9);
    // The wrong coefficients decode something else: a target shifted by one
    // exponent gives a large error.
    let mut shifted = code.clone();
    shifted.target = Mat::zeros(4, sch.k());
    for j in 0..2 {
        for k in 0..2 {
            shifted.target[(j * 2 + k, 2 * j + 4 * k)] = 1.0;
        }
    }
    assert!(shifted.product_error(4, 5) > 1e-3);
}

#[test]
fn vandermonde_is_worse_conditioned_than_chebyshev_at_n_40() {
    let sch = scheme(SchemeKind::Polynomial, 40, 4, Some(5), None);
    let cond = |g| {
        let code = MatmulCode::new(&sch, g, 0).unwrap();
        check(&code, 200, 0, &|| {}).median_condition
    };
    let (v, c, g) = (
        cond(Generator::Vandermonde),
        cond(Generator::Chebyshev),
        cond(Generator::Gaussian),
    );
    assert!(
        v > 10.0 * c && c > g,
        "vandermonde {v:e}, chebyshev {c:e}, gaussian {g:e}"
    );
}
