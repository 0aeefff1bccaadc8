//! Small numeric kernels of a trial: a Fisher–Yates shuffle, the placement
//! of worker classes, a running sum in four chains, −ln(1 − e^l), frc's
//! group rule from the maximum, the gather of the top order statistics,
//! a worker's additive-load time, the merge of sorted runs, and four
//! trials' values turned into the accumulator's columns.

use std::hint::{black_box, select_unpredictable};

use rand::RngExt;

/// Fisher–Yates: a uniformly random order of `v`, drawing `i ∈ 0..=k` for
/// k = len−1 down to 1 (every sampler that shuffles draws the same way).
pub(super) fn shuffle<T>(v: &mut [T], rng: &mut rand_xoshiro::Xoshiro256PlusPlus) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.random_range(0..=i));
    }
}

/// `class_of[i]` ← the class of worker i: classes of `counts` workers in
/// order, or placed uniformly at random with `random`.
pub(super) fn place_classes(
    class_of: &mut [u32],
    counts: impl Iterator<Item = usize>,
    random: bool,
    rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
) {
    let mut i = 0;
    for (c, m) in counts.enumerate() {
        class_of[i..i + m].fill(c as u32);
        i += m;
    }
    if random {
        shuffle(class_of, rng);
    }
}

/// −ln(1 − e^l) for l < 0, accurate at both ends (Mächler 2012).
#[inline]
pub(super) fn neg_ln_one_minus_exp(l: f64) -> f64 {
    if l > -std::f64::consts::LN_2 {
        -(-l.exp_m1()).ln()
    } else {
        -(-l.exp()).ln_1p()
    }
}

/// The maximum over groups of `size` i.i.d. standard exponentials of the
/// group's minimum (frc's completion in standard units), as the increasing
/// function of the maximum `e` of all n that has the same quantile.
///
/// A group's minimum is exponential with rate `size`, so with m = n/size
/// groups P(max ≤ v) = (1 − e^(−size·v))^m, and the maximum of all n is at
/// most e with probability p^n, p = 1 − e^(−e). Equating the two, with
/// m·size = n, gives 1 − e^(−size·v) = p^size: v = −ln(1 − p^size)/size,
/// taken through −ln p to keep its precision at both ends (p near 1 in the
/// tail, p small for small n). This is the exact law of the group rule for
/// i.i.d. workers (a quantile transform of the maximum, whose law is
/// exactly p^n), drawn at no cost and without a permutation of the workers
/// (n draws); configurations are coupled through the maximum, comonotone
/// with the uncoded time, instead of through the same workers.
#[inline]
pub(super) fn max_of_group_minima(e: f64, size: usize) -> f64 {
    if size == 1 {
        return e;
    }
    let r = size as f64;
    neg_ln_one_minus_exp(-r * neg_ln_one_minus_exp(-e)) / r
}

/// In-place running sum, as four independent chains over the quarters of
/// `v` whose offsets are added afterwards: a quarter of the latency of one
/// chain of dependent additions. The result is a fixed function of `v`.
pub(super) fn prefix_sum(v: &mut [f64]) {
    let q = v.len() / 4;
    if q == 0 {
        let mut acc = 0.0;
        for x in v.iter_mut() {
            acc += *x;
            *x = acc;
        }
        return;
    }
    let (a, rest) = v.split_at_mut(q);
    let (b, rest) = rest.split_at_mut(q);
    let (c, d) = rest.split_at_mut(q);
    let (mut sa, mut sb, mut sc, mut sd) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..q {
        sa += a[i];
        a[i] = sa;
        sb += b[i];
        b[i] = sb;
        sc += c[i];
        c[i] = sc;
        sd += d[i];
        d[i] = sd;
    }
    for x in d.iter_mut().skip(q) {
        sd += *x;
        *x = sd;
    }
    let (ob, oc) = (sa, sa + sb);
    let od = oc + sc;
    b.iter_mut().for_each(|x| *x += ob);
    c.iter_mut().for_each(|x| *x += oc);
    d.iter_mut().for_each(|x| *x += od);
}

/// How many of the first slots read ranks that step down by one from the
/// first's (a sweep's s = 0, 1, …), for [`gather_top`]; `u32::MAX` is no rank.
pub(super) fn descending_run(ranks: &[u32]) -> usize {
    match ranks.first() {
        Some(&first) if first != u32::MAX => ranks
            .iter()
            .zip(0..=first)
            .take_while(|&(&r, i)| r == first - i)
            .count(),
        _ => 0,
    }
}

/// `out[slot] ← sorted[ranks[slot]]` for every slot with a rank
/// (`u32::MAX` is none): the first `run` ([`descending_run`]) as one
/// reversed copy, which compiles to vector loads and permutes, the rest
/// one by one.
#[inline(always)]
pub(super) fn gather_top(sorted: &[f64], ranks: &[u32], run: usize, out: &mut [f64]) {
    if run > 0 {
        let first = ranks[0] as usize;
        for (o, &v) in out[..run].iter_mut().zip(sorted[first + 1 - run..=first].iter().rev()) {
            *o = v;
        }
    }
    for (o, &r) in out[run..].iter_mut().zip(&ranks[run..]) {
        if r != u32::MAX {
            *o = sorted[r as usize];
        }
    }
}

/// Worker `i`'s time at load `load` under `additive`, from unit-major draws
/// (`draws[u·n + i]` is its u-th unit): its first ⌊load⌋ units and the
/// fraction of the next, as the draw path sums them.
pub(super) fn additive_time(draws: &[f64], n: usize, i: usize, load: f64) -> f64 {
    let whole = load.floor() as usize;
    let frac = load - whole as f64;
    let sum: f64 = (0..whole).map(|u| draws[u * n + i]).sum();
    if frac > 0.0 {
        sum + frac * draws[whole * n + i]
    } else {
        sum
    }
}

/// Merges the ascending runs of `src` that end at `ends` into `dst`
/// (ascending), two at a time; `pad` holds sentinel-padded copies.
pub(super) fn merge_runs(src: &[f64], ends: &[usize], dst: &mut [f64], pad: &mut Vec<f64>) {
    let first = ends.first().copied().unwrap_or(0);
    dst[..first].copy_from_slice(&src[..first]);
    let mut len = first;
    for w in ends.windows(2) {
        let run = &src[w[0]..w[1]];
        merge_two(&dst[..len], run, pad);
        len += run.len();
        dst[..len].copy_from_slice(&pad[pad.len() - len..]);
    }
}

/// The largest `need` values (`need` at most the total) of the ascending
/// `runs`, ascending, in the last `need` entries of `dst`: the entries
/// [`merge_runs`] puts there, for about `need` steps per run instead of the
/// runs' length. `pad` is scratch space.
pub(super) fn merge_runs_top<'a>(
    runs: impl IntoIterator<Item = &'a [f64]>,
    need: usize,
    dst: &mut [f64],
    pad: &mut Vec<f64>,
) {
    // A run's largest `need` values: no smaller one can be among the top.
    let mut runs = runs.into_iter().map(|r| &r[r.len() - r.len().min(need)..]).peekable();
    let n = dst.len();
    let Some(first) = runs.next() else {
        return;
    };
    // Every entry of the two halves is written before it is read: they
    // are sized, not cleared (filling them cost a tenth of the merge).
    if pad.len() < 2 * need {
        pad.resize(2 * need, 0.0);
    }
    let (mut cur, mut next) = pad[..2 * need].split_at_mut(need);
    // The merged top so far: `first`, or once two are merged `cur[..len]`.
    let (mut len, mut merged) = (first.len(), false);
    while let Some(run) = runs.next() {
        let m = (len + run.len()).min(need);
        let so_far = if merged { &cur[..len] } else { first };
        if runs.peek().is_none() {
            // The last merge writes its output in place.
            merge_top_two(so_far, run, &mut dst[n - m..]);
            return;
        }
        merge_top_two(so_far, run, &mut next[..m]);
        std::mem::swap(&mut cur, &mut next);
        (len, merged) = (m, true);
    }
    dst[n - len..].copy_from_slice(first);
}

/// The largest `out.len()` values of ascending `a` and `b`, ascending, in
/// `out`: by a bitonic merge network in AVX2 registers where the processor
/// has AVX2 and `out` holds at most 64 (see [`bitonic`]; the same values in
/// the same order), else by [`merge_top_two_scalar`].
///
/// What the network buys: the two-class sweep of `bench/compare.sh
/// classes` (10⁶ trials, one thread, CPU time, medians of alternating runs
/// with `bench/alternate.sh`, the same output bytes) runs 1.14 times as
/// fast as with the comparison merge alone. That is under the 1.2 times
/// hand-tuned code must buy, but without it that path is more than 10%
/// slower, which a simplification may not cost.
fn merge_top_two(a: &[f64], b: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if !a.is_empty() && !b.is_empty() && out.len() <= 64 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        unsafe {
            match out.len() {
                0..=8 => bitonic::top_two::<2>(a, b, out),
                9..=16 => bitonic::top_two::<4>(a, b, out),
                17..=32 => bitonic::top_two::<8>(a, b, out),
                _ => bitonic::top_two::<16>(a, b, out),
            }
        }
        return;
    }
    merge_top_two_scalar(a, b, out);
}

/// [`merge_top_two`] by comparisons, for processors without AVX2 and tops
/// wider than the bitonic network's 64. Binary searches find how many of `a` lie below them and below
/// their upper half (merge path splits, ties to `a` first), and each half
/// of `out` is then merged from both of its ends: four independent chains.
/// A front step writes the smaller of its two next values (`minsd`) and a
/// back step the larger (`maxsd`), so the value needs no select; only the
/// indices follow the comparison, by integer adds. An exhausted side reads
/// as +∞ from the front and −∞ from the back: where such a sentinel ties a
/// real ±∞, every value left in that chain is that same ±∞, so the values
/// written are the merge's whatever the indices do.
fn merge_top_two_scalar(a: &[f64], b: &[f64], out: &mut [f64]) {
    if a.is_empty() || b.is_empty() {
        let only = if a.is_empty() { b } else { a };
        out.copy_from_slice(&only[only.len() - out.len()..]);
        return;
    }
    let (la, lb, m) = (a.len(), b.len(), out.len());
    // The r smallest are a[..i] and b[..r − i]: i counts the a[mid] that
    // come before b[r − mid − 1] in the merged order.
    // The search halves its range with selects, not branches: where it
    // goes is as random as the merge.
    let split = |r: usize| {
        let (mut lo, mut len) = (r.saturating_sub(lb), r.min(la) - r.saturating_sub(lb));
        while len > 0 {
            let half = len / 2;
            let mid = lo + half;
            let right = a[mid] <= b[r - mid - 1];
            lo = select_unpredictable(right, mid + 1, lo);
            len = select_unpredictable(right, len - half - 1, half);
        }
        lo
    };
    let (t, h) = (la + lb - m, m / 2);
    let (low, middle) = (split(t), split(t + h));
    let mut halves = [
        Ends::new(&a[low..middle], &b[t - low..t + h - middle]),
        Ends::new(&a[middle..], &b[t + h - middle..]),
    ];
    let (lower, upper) = out.split_at_mut(h);
    // Steps that all four chains take; then each half's middle (at most
    // two values) from its front.
    let both = h / 2;
    let [first, second] = &mut halves;
    for k in 0..both {
        lower[k] = first.front();
        upper[k] = second.front();
        lower[h - 1 - k] = first.back();
        upper[m - h - 1 - k] = second.back();
    }
    for (half, ends) in [lower, upper].into_iter().zip(&mut halves) {
        let len = half.len();
        for v in &mut half[both..len - both] {
            *v = ends.front();
        }
    }
}

/// One half of [`merge_top_two`]'s output: its two inputs, the front
/// chain's next indices (`i`, `j`) and the back chain's ends (`p`, `q`:
/// the next values are at `p − 1` and `q − 1`).
struct Ends<'a> {
    a: &'a [f64],
    b: &'a [f64],
    i: usize,
    j: usize,
    p: usize,
    q: usize,
}

impl<'a> Ends<'a> {
    fn new(a: &'a [f64], b: &'a [f64]) -> Self {
        let (p, q) = (a.len(), b.len());
        Self { a, b, i: 0, j: 0, p, q }
    }

    /// The smallest value not yet taken from the front (ties to `a`).
    #[inline(always)]
    fn front(&mut self) -> f64 {
        let x = self.a.get(self.i).copied().unwrap_or(f64::INFINITY);
        let y = self.b.get(self.j).copied().unwrap_or(f64::INFINITY);
        let take_a = x <= y;
        self.i += usize::from(take_a);
        self.j += usize::from(!take_a);
        x.min(y)
    }

    /// The largest value not yet taken from the back (ties to `b`).
    #[inline(always)]
    fn back(&mut self) -> f64 {
        let x = self.a.get(self.p.wrapping_sub(1)).copied().unwrap_or(f64::NEG_INFINITY);
        let y = self.b.get(self.q.wrapping_sub(1)).copied().unwrap_or(f64::NEG_INFINITY);
        let take_a = x > y;
        self.p = self.p.wrapping_sub(usize::from(take_a));
        self.q = self.q.wrapping_sub(usize::from(!take_a));
        x.max(y)
    }
}

/// Merges ascending `a` and `b`, writing the result to the last
/// `a.len() + b.len()` entries of `pad`. The inputs are copied between
/// −∞/+∞ sentinels, and the merge runs from both ends at once: two
/// independent chains of load, compare and step. The value taken is
/// loaded from the index chosen by an integer select: x86-64 has no
/// conditional move of floating-point registers, and LLVM compiles a
/// select of two values to a branch, which random interleavings
/// mispredict half the time. (`black_box` on the index keeps LLVM from
/// turning the load of the selected index back into a select of the two
/// values already loaded.)
pub(super) fn merge_two(a: &[f64], b: &[f64], pad: &mut Vec<f64>) {
    let (la, lb) = (a.len(), b.len());
    let total = la + lb;
    pad.clear();
    pad.push(f64::NEG_INFINITY);
    pad.extend_from_slice(a);
    pad.push(f64::INFINITY);
    pad.push(f64::NEG_INFINITY);
    pad.extend_from_slice(b);
    pad.push(f64::INFINITY);
    let base = pad.len();
    pad.resize(base + total, 0.0);
    let (inputs, out) = pad.split_at_mut(base);
    // Front: a's next at i, b's next at j (ties to a). Back: a's last at
    // p, b's last at q (ties to b, so that both halves agree on the order).
    let (mut i, mut j) = (1, la + 3);
    let (mut p, mut q) = (la, la + 2 + lb);
    let front = total.div_ceil(2);
    // The sentinels keep every read in bounds; which side is exhausted is
    // decided by index, so values equal to a sentinel (±∞ times, from
    // Pareto laws of tiny shape) merge correctly.
    let (a_end, b_start, b_end) = (la, la + 3, la + 2 + lb);
    for k in 0..front {
        let (x, y) = (inputs[i], inputs[j]);
        let take_a = (i <= a_end) & ((j > b_end) | (x <= y));
        out[k] = inputs[black_box(select_unpredictable(take_a, i, j))];
        i += usize::from(take_a);
        j += usize::from(!take_a);
        let k = total - 1 - k;
        if k >= front {
            let (x, y) = (inputs[p], inputs[q]);
            let take_a = (p >= 1) & ((q < b_start) | (x > y));
            out[k] = inputs[black_box(select_unpredictable(take_a, p, q))];
            p -= usize::from(take_a);
            q -= usize::from(!take_a);
        }
    }
}

/// Four trials' values, `rows` (trial r's `slots` values at
/// `rows[r·slots..]`), into column-major `values` (slot j's `count` values
/// at `values[j·count..]`) at trials `i..i + 4`: a slot's four values in one
/// store.
pub(super) fn transpose_rows4(rows: &[f64], values: &mut [f64], count: usize, i: usize) {
    let slots = rows.len() / 4;
    assert!(rows.len() == 4 * slots && values.len() == slots * count && i + 4 <= count);
    let (r0, rest) = rows.split_at(slots);
    let (r1, rest) = rest.split_at(slots);
    let (r2, r3) = rest.split_at(slots);
    for j in 0..slots {
        values[j * count + i..j * count + i + 4].copy_from_slice(&[r0[j], r1[j], r2[j], r3[j]]);
    }
}

#[cfg(target_arch = "x86_64")]
mod bitonic;

#[cfg(test)]
mod tests;
