use super::*;

/// Hand-computed costs: p = 8 ranks, S = 1e9 bytes, α = 1e-5 s, 1e10 B/s.
#[test]
fn costs_are_the_alpha_beta_formulas() {
    let (a, bw, s) = (1e-5, 1e10, 1e9);
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs().max(1.0);
    // Ring: 2·7·1e-5 + 2·(7/8)·0.1 = 0.00014 + 0.175.
    assert!(close(Algorithm::Ring.cost(8, s, a, bw), 0.17514));
    // Halving-doubling, p = 8: 2·3·1e-5 + 2·(7/8)·0.1.
    assert!(close(Algorithm::HalvingDoubling.cost(8, s, a, bw), 0.17506));
    // p = 12: p' = 8, plus 2(α + Sβ): 0.00006 + 0.175 + 2·(1e-5 + 0.1).
    assert!(close(
        Algorithm::HalvingDoubling.cost(12, s, a, bw),
        0.00006 + 0.175 + 0.20002
    ));
    // Tree, p = 8: 2·3·(1e-5 + 0.1); p = 9: 2·4·(…).
    assert!(close(Algorithm::Tree.cost(8, s, a, bw), 6.0 * 0.10001));
    assert!(close(Algorithm::Tree.cost(9, s, a, bw), 8.0 * 0.10001));
    // Hierarchical, 16 ranks in 2 nodes of 8, intra 1e11 B/s:
    // intra ring on S: 2·7·α + 2·(7/8)·S/1e11; inter ring of 2 on S/8: 2·α + 2·(1/2)·S/8/1e10.
    let h = Algorithm::Hierarchical {
        gpus_per_node: 8,
        intra_bandwidth: 1e11,
    };
    let intra = 14e-5 + 1.75 * 1e-2;
    let inter = 2e-5 + 1.25e8 / 1e10;
    assert!(close(h.cost(16, s, a, bw), intra + inter));
    // One rank sums nothing; one node is its intra ring alone.
    for alg in [Algorithm::Ring, Algorithm::Tree, Algorithm::HalvingDoubling, h] {
        assert_eq!(alg.cost(1, s, a, bw), 0.0);
    }
    assert!(close(h.cost(5, s, a, bw), Algorithm::Ring.cost(5, s, a, 1e11)));
    // 17 ranks: 3 nodes, the fullest of 8 sets the time.
    assert!(close(
        h.cost(17, s, a, bw),
        intra + Algorithm::Ring.cost(3, s / 8.0, a, bw)
    ));
}

#[test]
fn buckets_overlap_with_the_work() {
    let c = Collective {
        algorithm: Algorithm::Ring,
        latency: 0.0,
        bandwidth: 1.0,
        gradient_bytes: 4.0,
        buckets: 4,
        units_per_second: 1.0,
    };
    // By the recursion e_j = max(j·t/K, e_{j−1}) + c.
    let by_recursion =
        |t: f64, cost: f64, k: usize| (1..=k).fold(f64::NEG_INFINITY, |e, j| e.max(j as f64 * t / k as f64) + cost);
    for (t, cost) in [(10.0, 0.5), (10.0, 3.0), (1.0, 1.0), (0.0, 2.0), (7.0, 0.0)] {
        assert_eq!(c.finish(t, cost), by_recursion(t, cost, 4), "t={t} cost={cost}");
    }
    let one = Collective { buckets: 1, ..c };
    assert_eq!(one.finish(3.0, 0.25), 3.25);
    // The agreement is charged where the participants are not every rank.
    let p = Collective {
        latency: 1.0,
        buckets: 1,
        ..c
    };
    assert_eq!(p.bucket_cost(4, 4, 1.0), 6.0 + 6.0);
    // Agreement 2·2·α, then 2·2·α + 2·(2/3)·4 bytes.
    assert!((p.bucket_cost(3, 4, 1.0) - (4.0 + 4.0 + 2.0 * (2.0 / 3.0) * 4.0)).abs() < 1e-12);
}

#[test]
fn names_bandwidths_and_lists() {
    for (text, bytes) in [
        ("25GB/s", 25e9),
        ("100Gbit/s", 12.5e9),
        ("100Gb/s", 12.5e9),
        ("100Gbps", 12.5e9),
        ("1e9", 1e9),
        ("2 GiB/s", 2.0 * 1024f64.powi(3)),
        ("800 kB/s", 8e5),
    ] {
        assert_eq!(parse_bandwidth(text), Ok(bytes), "{text}");
    }
    for bad in ["", "0", "-1GB/s", "25GB", "3 furlongs/s", "1Gib/s", "inf"] {
        assert!(parse_bandwidth(bad).is_err(), "{bad}");
    }
    assert_eq!(
        parse_aggregations("ring, tree,master").unwrap(),
        vec![Some(Algorithm::Ring), Some(Algorithm::Tree), None]
    );
    let h = parse_aggregations("hierarchical:gpus-per-node=8,intra-bandwidth=300GB/s,halving-doubling").unwrap();
    assert_eq!(
        h,
        vec![
            Some(Algorithm::Hierarchical {
                gpus_per_node: 8,
                intra_bandwidth: 3e11
            }),
            Some(Algorithm::HalvingDoubling)
        ]
    );
    assert_eq!(
        h[0].unwrap().to_string(),
        "hierarchical:gpus-per-node=8,intra-bandwidth=300000000000"
    );
    for (bad, says) in [
        ("rings", "unknown aggregation `rings`; accepted: master, ring"),
        ("ring,ring", "`ring` is given twice"),
        ("ring:x=1", "`ring` takes no keys"),
        ("hierarchical", "hierarchical needs its node"),
        (
            "hierarchical:gpus-per-node=0,intra-bandwidth=1GB/s",
            "gpus-per-node `0` is out of range",
        ),
        ("hierarchical:gpus=8", "unknown key `gpus`"),
        ("", "an empty name"),
    ] {
        let e = parse_aggregations(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

/// What all participants send: 2(p − 1) messages, whatever the algorithm.
#[test]
fn traffic_is_two_messages_per_rank_but_one() {
    for algorithm in [
        Algorithm::Ring,
        Algorithm::Tree,
        Algorithm::HalvingDoubling,
        Algorithm::Hierarchical {
            gpus_per_node: 8,
            intra_bandwidth: 1e11,
        },
    ] {
        let c = Collective {
            algorithm,
            latency: 0.0,
            bandwidth: 1.0,
            gradient_bytes: 1e9,
            buckets: 4,
            units_per_second: 1.0,
        };
        // 8 ranks of a half-size message: 2·7·0.5; one rank sends nothing.
        assert_eq!(c.gradients_sent(8, 0.5), 7.0);
        assert_eq!(c.gradients_sent(1, 1.0), 0.0);
        // The ring's ranks each send 2(p − 1)/p of it.
        let (_, b) = Algorithm::Ring.coefficients(16);
        assert!((c.gradients_sent(16, 1.0) - 16.0 * b).abs() < 1e-12);
    }
}
