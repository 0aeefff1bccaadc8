//! Standardisation by the training rows' statistics, so that the test
//! rows are scaled as the model saw its data, and a leading intercept column.

use super::Dataset;

/// Standardisation from the training set: per feature, the mean and the
/// population standard deviation (divisor N) of the training rows; a
/// constant feature gets sd 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardizer {
    mean: Vec<f64>,
    sd: Vec<f64>,
}

impl Standardizer {
    /// The statistics of `train`'s features.
    ///
    /// # Panics
    /// If `train` has no rows.
    pub fn fit(train: &Dataset) -> Standardizer {
        let n = train.rows();
        assert!(n > 0, "cannot standardise from a data set without rows");
        let d = train.d;
        let mut mean = vec![0.0; d];
        for i in 0..n {
            for (m, x) in mean.iter_mut().zip(train.row(i)) {
                *m += x;
            }
        }
        mean.iter_mut().for_each(|m| *m /= n as f64);
        let mut var = vec![0.0; d];
        for i in 0..n {
            for ((v, x), m) in var.iter_mut().zip(train.row(i)).zip(&mean) {
                *v += (x - m) * (x - m);
            }
        }
        let first = train.row(0);
        let mut sd = vec![1.0; d];
        for j in 0..d {
            if (0..n).all(|i| train.features[i * d + j] == first[j]) {
                // The mean of n copies of x can miss x by an ulp; standardise a constant to exactly 0.
                mean[j] = first[j];
            } else {
                sd[j] = (var[j] / n as f64).sqrt();
            }
        }
        Standardizer { mean, sd }
    }

    /// Per-feature means of the training rows.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Per-feature standard deviations of the training rows (1 for a constant feature).
    pub fn sd(&self) -> &[f64] {
        &self.sd
    }

    /// `data` with each feature standardised by the training statistics and
    /// a leading column of ones named `intercept`: d grows by one.
    ///
    /// # Panics
    /// If `data` has a different number of features than the training set.
    pub fn apply(&self, data: &Dataset) -> Dataset {
        assert_eq!(
            data.d,
            self.mean.len(),
            "standardiser and data disagree on the feature count"
        );
        let d = data.d + 1;
        let mut features = Vec::with_capacity(data.rows() * d);
        for i in 0..data.rows() {
            features.push(1.0);
            for ((x, m), s) in data.row(i).iter().zip(&self.mean).zip(&self.sd) {
                features.push((x - m) / s);
            }
        }
        Dataset {
            names: std::iter::once("intercept".to_string())
                .chain(data.names.iter().cloned())
                .collect(),
            features,
            targets: data.targets.clone(),
            d,
        }
    }
}
