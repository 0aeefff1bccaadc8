//! A hybrid-parallel trial's computes laid out for the pipelines' lanes
//! (see [`super::lanes`]): each op's compute at its row, each replica of
//! each trial of a batch in a lane of its own.

/// Where `fill_compute` ([`super::TrialPlan`]) puts a trial's computes:
/// stage i's microbatch j of replica d at row i·most + j, lane `first` +
/// d, of `lanes` lanes.
pub(super) struct Rows {
    pub(super) dp: usize,
    pub(super) pp: usize,
    pub(super) most: usize,
    pub(super) lanes: usize,
    pub(super) first: usize,
}

impl Rows {
    /// Each op's compute into `compute`: the stage's work × the
    /// microbatch's (`works[d·most + j]`) × the slowest of the stage's
    /// tensor group, whose `width` values are unit j's (rank order, `dp·pp`
    /// groups a unit) in `draws`. Unit by unit, each stage's group one
    /// after the other, as the draws lie.
    ///
    /// The writes, a row apart, go unchecked: the bounds are checked once,
    /// since a check per write is a visible share of the log-normal path
    /// of `bench/hybrid.sh`.
    pub(super) fn fill(&self, compute: &mut [f64], works: &[f64], stage_work: &[f64], draws: &[f64], width: usize) {
        let (dp, pp, most, lanes) = (self.dp, self.pp, self.most, self.lanes);
        let (row, per_unit) = (most * lanes, dp * pp * width);
        assert!(
            compute.len() >= pp * row && self.first + dp <= lanes,
            "a row per op, a lane per replica"
        );
        assert!(works.len() >= dp * most && stage_work.len() >= pp && draws.len() >= most * per_unit);
        for (j, unit) in draws.chunks_exact(per_unit).take(most).enumerate() {
            for (d, ranks) in unit.chunks_exact(pp * width).enumerate() {
                let work = works[d * most + j];
                // Below `row` (j < most, first + d < lanes), so at + i·row
                // is below pp·row for i < pp.
                let at = j * lanes + self.first + d;
                let mut put = |i: usize, x: f64| {
                    let v = stage_work[i] * work * x;
                    // SAFETY: i < pp and at < row (see above).
                    unsafe { *compute.get_unchecked_mut(at + i * row) = v };
                };
                if width == 1 {
                    ranks.iter().enumerate().for_each(|(i, &x)| put(i, x));
                } else {
                    for (i, group) in ranks.chunks_exact(width).enumerate() {
                        put(i, group.iter().copied().fold(f64::NEG_INFINITY, f64::max));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows are the products written out plainly, bit for bit: stage
    /// work × microbatch work × the slowest of the group, at row
    /// i·most + j and lane first + d, the other trials' lanes untouched.
    #[test]
    fn rows_are_the_products_at_their_lanes() {
        let value = |k: usize| ((k * 7919 % 1009) as f64 + 0.5) / 97.0;
        for (dp, pp, most, width, count, q) in [
            (1, 1, 1, 1, 1, 0),
            (2, 4, 8, 1, 4, 3),
            (4, 4, 16, 1, 4, 1),
            (3, 2, 5, 4, 2, 0),
            (2, 3, 4, 2, 3, 2),
        ] {
            let lanes = count * dp;
            let works: Vec<f64> = (0..dp * most).map(|k| value(k + 3)).collect();
            let stage_work: Vec<f64> = (0..pp).map(|i| 1.0 + i as f64 / 3.0).collect();
            let draws: Vec<f64> = (0..most * dp * pp * width).map(value).collect();
            let mut compute = vec![f64::NAN; pp * most * lanes];
            let rows = Rows {
                dp,
                pp,
                most,
                lanes,
                first: q * dp,
            };
            rows.fill(&mut compute, &works, &stage_work, &draws, width);
            for (k, &v) in compute.iter().enumerate() {
                let (row, lane) = (k / lanes, k % lanes);
                let (i, j) = (row / most, row % most);
                let at = format!("dp {dp} pp {pp} most {most} width {width}, row {row} lane {lane}");
                if !(q * dp..(q + 1) * dp).contains(&lane) {
                    assert!(v.is_nan(), "{at}: another trial's lane written");
                    continue;
                }
                let d = lane - q * dp;
                let group = &draws[(j * dp * pp + d * pp + i) * width..][..width];
                let slowest = group.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let expected = stage_work[i] * works[d * most + j] * slowest;
                assert_eq!(v.to_bits(), expected.to_bits(), "{at}");
            }
        }
    }
}
