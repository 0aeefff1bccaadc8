//! Sorting a trial's worker times, for the draw path.
//!
//! A comparison sort of n random values mispredicts a branch for about
//! every other comparison. Here the values are first distributed into
//! about 2n buckets by the leading bits of their order-preserving integer
//! keys (counting sort, no comparisons); each bucket then holds a value or
//! two, and one insertion pass finishes them (a bucket that a skewed sample
//! crowds is sorted by the standard sort first). Keys compare exactly as
//! [`f64::total_cmp`], so the result is the same as
//! `sort_unstable_by(f64::total_cmp)`, bit for bit. The same sort carries
//! each value's index where the order of the workers is wanted (a queue
//! that serves them in the order they finish).

/// Below this length the standard sort is used directly.
const SMALL: usize = 32;
/// Buckets longer than this are sorted before the insertion pass.
const INSERTION: usize = 16;

/// Reusable buffers for [`sort_floats`] and [`argsort_floats`].
#[derive(Debug, Clone, Default)]
pub(crate) struct SortBuffers {
    keys: Vec<u64>,
    out: Vec<u64>,
    starts: Vec<u32>,
    pairs: Vec<(u64, u32)>,
    pairs_out: Vec<(u64, u32)>,
}

/// The key of `x` whose unsigned order is [`f64::total_cmp`]'s order.
#[inline]
pub(crate) fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The value of a key made by [`key`].
#[inline]
pub(crate) fn value(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Sorts `v` ascending in [`f64::total_cmp`] order.
pub(crate) fn sort_floats(v: &mut [f64], buf: &mut SortBuffers) {
    if v.len() < SMALL {
        v.sort_unstable_by(f64::total_cmp);
        return;
    }
    buf.keys.clear();
    buf.keys.extend(v.iter().map(|&x| key(x)));
    bucket_sort(&buf.keys, |&k| k, &mut buf.out, &mut buf.starts);
    for (x, &k) in v.iter_mut().zip(&buf.out) {
        *x = value(k);
    }
}

/// The indices of `v` in ascending [`f64::total_cmp`] order of their
/// values, equal values in index order, into `order`: the same as sorting
/// `0..n` by `(v[i], i)`.
pub(crate) fn argsort_floats(v: &[f64], order: &mut Vec<usize>, buf: &mut SortBuffers) {
    buf.pairs.clear();
    buf.pairs.extend(v.iter().enumerate().map(|(i, &x)| (key(x), i as u32)));
    if v.len() < SMALL {
        buf.pairs.sort_unstable();
        order.clear();
        order.extend(buf.pairs.iter().map(|p| p.1 as usize));
        return;
    }
    bucket_sort(&buf.pairs, |p| p.0, &mut buf.pairs_out, &mut buf.starts);
    order.clear();
    order.extend(buf.pairs_out.iter().map(|p| p.1 as usize));
}

/// `items` sorted ascending into `out`: distributed into about 2n buckets
/// by the leading bits of `bucket(item)` (which must order as the items
/// do: a larger key, a larger item), then finished by one insertion pass.
pub(crate) fn bucket_sort<T: Copy + Ord + Default>(
    items: &[T],
    bucket: impl Fn(&T) -> u64,
    out: &mut Vec<T>,
    starts: &mut Vec<u32>,
) {
    let n = items.len();
    out.clear();
    let (lo, hi) = items
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), k| (lo.min(bucket(k)), hi.max(bucket(k))));
    let span = hi.saturating_sub(lo);
    if span == 0 {
        out.extend_from_slice(items);
        out.sort_unstable();
        return;
    }
    // 2^b ≥ 2n buckets; the top b bits of the span pick a key's bucket.
    let b = (2 * n).next_power_of_two().trailing_zeros();
    let shift = (64 - span.leading_zeros()).saturating_sub(b);
    let buckets = ((span >> shift) + 1) as usize;
    starts.clear();
    starts.resize(buckets + 1, 0);
    for k in items {
        starts[((bucket(k) - lo) >> shift) as usize + 1] += 1;
    }
    let crowded = starts.iter().any(|&c| c as usize > INSERTION);
    for i in 1..=buckets {
        starts[i] += starts[i - 1];
    }
    out.resize(n, T::default());
    // Scatter (stable), advancing each bucket's start to its end.
    for &k in items {
        let slot = &mut starts[((bucket(&k) - lo) >> shift) as usize];
        out[*slot as usize] = k;
        *slot += 1;
    }
    // Bucket i now spans [starts[i−1], starts[i]) (bucket 0 from 0). A
    // crowded bucket is sorted on its own; then one insertion pass over
    // the whole array finishes the small ones (values move only within
    // their bucket, and a value already in place costs one comparison that
    // the branch predictor gets right).
    if crowded {
        let mut begin = 0;
        for &end in &starts[..buckets] {
            let bucket = &mut out[begin..end as usize];
            if bucket.len() > INSERTION {
                bucket.sort_unstable();
            }
            begin = end as usize;
        }
    }
    // Items of equal keys are put in their own order.
    for j in 1..n {
        let x = out[j];
        let mut at = j;
        while at > 0 && out[at - 1] > x {
            out[at] = out[at - 1];
            at -= 1;
        }
        out[at] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(v: Vec<f64>) {
        let mut expected = v.clone();
        expected.sort_unstable_by(f64::total_cmp);
        let mut got = v;
        sort_floats(&mut got, &mut SortBuffers::default());
        let bits = |s: &[f64]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&expected));
    }

    #[test]
    fn keys_round_trip_and_order_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            1e300,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(value(key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn edge_cases() {
        check(vec![1.0; 100]);
        check((0..100).map(|i| i as f64).rev().collect());
        // One huge outlier crowds everything else into bucket 0.
        let mut v: Vec<f64> = (0..1000).map(|i| 1.0 + i as f64 * 1e-9).collect();
        v.push(1e300);
        check(v);
        check((0..200).map(|i| if i % 2 == 0 { 0.0 } else { -0.0 }).collect());
        check((0..64).map(|i| [3.0, f64::INFINITY, 0.5, 7.25][i % 4]).collect());
        check_order(&[1.0; 100]);
        check_order(
            &(0..64)
                .map(|i| [3.0, f64::INFINITY, 0.5, 7.25][i % 4])
                .collect::<Vec<_>>(),
        );
    }

    /// [`argsort_floats`] against sorting the indices by (value, index).
    fn check_order(v: &[f64]) {
        let mut expected: Vec<usize> = (0..v.len()).collect();
        expected.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then(a.cmp(&b)));
        let mut got = Vec::new();
        argsort_floats(v, &mut got, &mut SortBuffers::default());
        assert_eq!(got, expected);
    }

    proptest! {
        #[test]
        fn equals_the_standard_sort(v in prop::collection::vec(prop::num::f64::ANY, 0..400)) {
            check_order(&v);
            check(v);
        }

        #[test]
        fn equals_the_standard_sort_on_positive_times(
            v in prop::collection::vec(0.0f64..1e3, 0..3000),
            atoms in prop::collection::vec(0.0f64..10.0, 1..5),
            repeat in 0usize..200,
        ) {
            let mut v = v;
            v.extend(atoms.iter().cycle().take(repeat));
            check_order(&v);
            check(v);
        }
    }
}
