//! The partial-straggler codes (Tandon et al. 2017, §5) against a
//! simulation written here: every message is an event, sent through the
//! link in the order it is done, and the master's state is updated message
//! by message in order of arrival.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use gcsim::load::LoadModel;
use gcsim::scheme::{Params, SchemeKind};

use super::timelines::{EXP, Law, Link1, MIXTURE, Net, SHIFTED, TRIALS, agree, engine_rows, scheme};

/// A worker's time for a fractional `load` from its unit draws: one draw
/// scaled (or not) under the monotone models; under `additive` its first
/// ⌊load⌋ units and that fraction of the next.
fn time_for(model: LoadModel, load: f64, units: &[f64]) -> f64 {
    match model {
        LoadModel::Fixed => units[0],
        LoadModel::Scaled => load * units[0],
        LoadModel::Additive => {
            let whole = load.floor() as usize;
            units[..whole].iter().sum::<f64>() + (load - whole as f64) * units.get(whole).copied().unwrap_or(0.0)
        }
        LoadModel::Affine { unit_time } => unit_time * load + units[0],
    }
}

/// One iteration: worker w holds L partitions of the n(L − s), its own
/// L − s − 1 first, then s + 1 coded; the master needs every own part and
/// the coded rule (groups of s + 1 for frc, any n − s for crc).
#[allow(clippy::too_many_arguments)]
fn reference(
    n: usize,
    s: usize,
    parts: usize,
    frc: bool,
    law: Law,
    model: LoadModel,
    net: Net,
    rng: &mut Xoshiro256PlusPlus,
) -> f64 {
    let share = (parts - s) as f64;
    let own = (parts - s - 1) as f64 / share;
    let whole = parts as f64 / share;
    // (done, worker, is the own part)
    let mut messages = Vec::new();
    for w in 0..n {
        let slow = law.state(rng);
        let units: Vec<f64> = (0..=whole.ceil() as usize).map(|_| law.draw(slow, rng)).collect();
        if parts > s + 1 {
            messages.push((time_for(model, own, &units), w, true));
        }
        messages.push((time_for(model, whole, &units), w, false));
    }
    messages.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut link = Link1 { net, free: 0.0 };
    let mut arrivals: Vec<(f64, usize, bool)> = messages.iter().map(|&(t, w, o)| (link.send(t), w, o)).collect();
    arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut own_missing = if parts > s + 1 { n } else { 0 };
    let mut coded = vec![false; n];
    for (t, w, is_own) in arrivals {
        if is_own {
            own_missing -= 1;
        } else {
            coded[w] = true;
        }
        let decodable = if frc {
            coded.chunks(s + 1).all(|g| g.contains(&true))
        } else {
            coded.iter().filter(|&&c| c).count() >= n - s
        };
        if own_missing == 0 && decodable {
            return t;
        }
    }
    unreachable!("every message decodes")
}

fn partial(frc: bool, n: usize, s: usize, parts: usize) -> gcsim::scheme::Scheme {
    let kind = if frc {
        SchemeKind::PartialFrc
    } else {
        SchemeKind::PartialCrc
    };
    scheme(
        kind,
        n,
        Params {
            s: Some(s),
            parts: Some(parts),
            ..Params::default()
        },
    )
}

#[test]
fn partial_codes_match_an_event_simulation() {
    let n = 12;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(29);
    let cases = [
        (false, 2, 5, MIXTURE, LoadModel::Scaled, Net::Free),
        (true, 3, 6, EXP, LoadModel::Additive, Net::Shared(0.1)),
        (false, 1, 4, SHIFTED, LoadModel::Scaled, Net::Dedicated(0.4)),
        (true, 2, 3, MIXTURE, LoadModel::Scaled, Net::Shared(0.2)),
        (true, 5, 9, MIXTURE, LoadModel::Fixed, Net::Dedicated(0.2)),
        (false, 3, 10, MIXTURE, LoadModel::Additive, Net::Free),
        // L = s + 2: the own part is half of the work.
        (false, 3, 5, MIXTURE, LoadModel::Scaled, Net::Dedicated(0.2)),
    ];
    for (i, (frc, s, parts, law, model, net)) in cases.into_iter().enumerate() {
        let scheme = partial(frc, n, s, parts);
        let what = format!("{scheme} {model} {net:?}");
        assert_eq!(scheme.load(), parts as f64 / (parts - s) as f64, "{what}");
        let times: Vec<f64> = (0..TRIALS)
            .map(|_| reference(n, s, parts, frc, law, model, net, &mut rng))
            .collect();
        let rows = engine_rows(n, law, model, net, vec![scheme], 90 + i as u64);
        agree(&what, &rows[0], &times);
        assert!(rows[0].exact, "{what}");
    }
}

/// Where a partial code is another scheme on the same draws: with L = s + 1
/// there is no own part and it is frc or crc; with s = 0 on dedicated links
/// the own part arrives before the whole, and it is uncoded.
#[test]
fn degenerate_partial_codes_are_their_schemes_on_the_same_draws() {
    let n = 12;
    let plain = |kind, s| {
        scheme(
            kind,
            n,
            Params {
                s: Some(s),
                ..Params::default()
            },
        )
    };
    let schemes = vec![
        partial(false, n, 2, 3),
        plain(SchemeKind::Crc, 2),
        partial(true, n, 3, 4),
        plain(SchemeKind::Frc, 3),
    ];
    for model in [LoadModel::Scaled, LoadModel::Additive] {
        let rows = engine_rows(n, MIXTURE, model, Net::Shared(0.1), schemes.clone(), 11);
        for pair in rows.chunks(2) {
            assert_eq!(pair[0].load, pair[1].load, "{model}");
            assert_eq!(pair[0].mean, pair[1].mean, "{model} {}", pair[1].scheme);
            assert_eq!(pair[0].p99, pair[1].p99, "{model} {}", pair[1].scheme);
        }
        let rows = engine_rows(
            n,
            MIXTURE,
            model,
            Net::Dedicated(0.3),
            vec![partial(false, n, 0, 7)],
            12,
        );
        assert_eq!(rows[0].speedup, Some(1.0), "{model}");
        assert_eq!(rows[0].p99_speedup, Some(1.0), "{model}");
    }
}

/// Tail indices: a partial code with an own part waits for every worker's
/// first message, so its mean is infinite where one worker's is (Pareto
/// α = 0.8); with L = s + 1 it is crc, whose s + 1 heaviest arrivals add up
/// (2 × 0.8 > 1): finite. The asynchronous strategies' time per update is
/// infinite in the long run where a worker's mean is.
#[test]
fn heavy_tails_decide_which_means_are_infinite() {
    use gcsim::dist::Dist;
    use gcsim::study::Study;
    let n = 4;
    let heavy = Dist::pareto(1.0, 0.8).unwrap();
    let light = Dist::pareto(1.0, 1.5).unwrap();
    let k_async = |k| {
        scheme(
            SchemeKind::KAsync,
            n,
            Params {
                k: Some(k),
                ..Params::default()
            },
        )
    };
    let schemes = vec![partial(false, n, 1, 3), partial(false, n, 1, 2), k_async(1), k_async(4)];
    let study = Study::new(n, heavy, LoadModel::Scaled, schemes.clone(), 10, 0).unwrap();
    let infinite: Vec<bool> = schemes.iter().map(|s| study.mean_is_infinite(s)).collect();
    assert_eq!(infinite, [true, false, true, true]);
    let study = Study::new(n, light, LoadModel::Scaled, schemes.clone(), 10, 0).unwrap();
    assert!(schemes.iter().all(|s| !study.mean_is_infinite(s)));
}
