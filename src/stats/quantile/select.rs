//! The values at given ranks of a slice, without sorting it: by nested
//! selection, or by counting the values in buckets of their bits.

/// The values of rank `ranks[i]` (0-based) of `values`, by successive
/// selection on shrinking suffixes: O(len) per cluster of ranks instead of a
/// full sort. Ranks close together (a quantile and the ends of its window
/// and interval) form a cluster: the two ends are selected, and the ranks
/// between them among the few values between them, each selection there
/// splitting the values so that the ranks on either side are found among
/// the values on that side. Reorders `values`.
pub fn select_ranks(values: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    let mut order: Vec<usize> = ranks.to_vec();
    order.sort_unstable();
    order.dedup();
    let mut found = Vec::with_capacity(order.len());
    let (mut rest, mut offset) = (values, 0);
    let mut i = 0;
    while i < order.len() {
        // Sorting m values costs about m·log m comparisons, a selection
        // about 2.5 per value left: sort spans under an eighth of the rest.
        let a = order[i];
        let limit = rest.len() / 8;
        let j = i + order[i + 1..].iter().take_while(|&&r| r - a <= limit).count();
        let b = order[j];
        let (_, x, right) = rest.select_nth_unstable_by(a - offset, f64::total_cmp);
        found.push(*x);
        if j > i {
            // Ranks a+1..=b are the b−a smallest of `right`.
            let span = b - a;
            let (inside, x, _) = right.select_nth_unstable_by(span - 1, f64::total_cmp);
            let last = *x;
            let start = found.len();
            found.resize(start + j - i - 1, 0.0);
            select_nested(inside, &order[i + 1..j], a + 1, &mut found[start..]);
            found.push(last);
        }
        rest = &mut right[b - a..];
        offset = b + 1;
        i = j + 1;
    }
    ranks
        .iter()
        .map(|r| found[order.binary_search(r).expect("every rank was selected")])
        .collect()
}

/// Buckets of [`select_ranks_by_buckets`]' count.
const SELECT_BUCKETS_LOG2: u32 = 12;

/// The values of rank `ranks[i]` (0-based) of `values` in
/// [`f64::total_cmp`]'s order, as [`select_ranks`] gives them, without
/// reordering `values`: in two passes over them rather than a selection's
/// several, whose branches on each comparison are as random as the values.
/// Each value's 64-bit key in that order (its bits with the sign bit set,
/// or all flipped for a negative sign) is cut to the 2¹² buckets of equal
/// key width between the smallest and largest key, a few hundred buckets
/// per binade over the spans of times; the first pass counts the values in
/// each bucket, and the second copies the values of the buckets that hold
/// a rank, among which the ranks are selected.
pub fn select_ranks_by_buckets(values: &[f64], ranks: &[usize]) -> Vec<f64> {
    if values.is_empty() || ranks.is_empty() {
        return select_ranks(&mut values.to_vec(), ranks);
    }
    let key = |v: f64| {
        let bits = v.to_bits();
        bits ^ (((bits as i64) >> 63) as u64 | 1 << 63)
    };
    let (lo, hi) = values
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(key(v)), hi.max(key(v))));
    let width = hi - lo;
    let shift = (u64::BITS - width.leading_zeros()).saturating_sub(SELECT_BUCKETS_LOG2);
    let bucket = |v: f64| ((key(v) - lo) >> shift) as usize;
    let mut counts = vec![0u32; (width >> shift) as usize + 1];
    for &v in values {
        counts[bucket(v)] += 1;
    }
    // Each rank's bucket and its rank among the bucket's values.
    let mut order: Vec<usize> = ranks.to_vec();
    order.sort_unstable();
    order.dedup();
    let mut place = Vec::with_capacity(order.len());
    let (mut b, mut below) = (0, 0);
    for &r in &order {
        while below + counts[b] as usize <= r {
            below += counts[b] as usize;
            b += 1;
        }
        place.push((b, r - below));
    }
    // The buckets that hold a rank, each with its own list of values.
    let mut list = vec![u32::MAX; counts.len()];
    let mut held: Vec<Vec<f64>> = Vec::new();
    for &(b, _) in &place {
        if list[b] == u32::MAX {
            list[b] = held.len() as u32;
            held.push(Vec::with_capacity(counts[b] as usize));
        }
    }
    for &v in values {
        let l = list[bucket(v)];
        if l != u32::MAX {
            held[l as usize].push(v);
        }
    }
    let mut found = vec![0.0; order.len()];
    let mut i = 0;
    while i < order.len() {
        let (b, _) = place[i];
        let j = i + place[i..].iter().take_while(|p| p.0 == b).count();
        let within: Vec<usize> = place[i..j].iter().map(|p| p.1).collect();
        let got = select_ranks(&mut held[list[b] as usize], &within);
        found[i..j].copy_from_slice(&got);
        i = j;
    }
    ranks
        .iter()
        .map(|r| found[order.binary_search(r).expect("every rank was placed")])
        .collect()
}

/// The values of the sorted, distinct `ranks` of the values (each rank
/// counted from `offset`, the rank of the smallest of `values`) into
/// `found`, one per rank: the middle rank first, then the ranks on either
/// side among the values on that side.
fn select_nested(values: &mut [f64], ranks: &[usize], offset: usize, found: &mut [f64]) {
    if ranks.is_empty() {
        return;
    }
    let mid = ranks.len() / 2;
    let at = ranks[mid] - offset;
    let (left, x, right) = values.select_nth_unstable_by(at, f64::total_cmp);
    found[mid] = *x;
    let (below, rest) = found.split_at_mut(mid);
    select_nested(left, &ranks[..mid], offset, below);
    select_nested(right, &ranks[mid + 1..], offset + at + 1, &mut rest[1..]);
}
