//! One number format per axis: the format is chosen from all the tick
//! values together, so an axis never mixes `0.001` with `1e-4`, or `0.5`
//! with `1.25` and `2`.
//!
//! Fixed notation with as many decimals as the finest tick needs; on a log
//! axis whose ticks are all powers of ten, every tick as 10ⁿ with a
//! superscript exponent; ticks beyond 10⁻⁴ or 10⁶, scientific with a shared
//! mantissa precision.

/// How every tick of one axis is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisFormat {
    /// Fixed notation with this many decimals.
    Fixed(usize),
    /// `10ⁿ` (every tick a power of ten).
    Power,
    /// Scientific, this many mantissa decimals.
    Scientific(usize),
}

/// Most decimals a fixed or scientific label gets.
const MAX_DECIMALS: usize = 6;

/// The fewest decimals that write `v` to within a millionth of `scale`.
fn decimals(v: f64, scale: f64) -> usize {
    (0..MAX_DECIMALS)
        .find(|&d| {
            let f = 10f64.powi(d as i32);
            ((v * f).round() - v * f).abs() <= 1e-6 * scale * f
        })
        .unwrap_or(MAX_DECIMALS)
}

impl AxisFormat {
    /// The format of an axis with these ticks (`log`: a logarithmic axis).
    pub fn for_ticks(ticks: &[f64], log: bool) -> Self {
        let ticks: Vec<f64> = ticks.iter().copied().filter(|t| t.is_finite()).collect();
        let nonzero = || ticks.iter().map(|t| t.abs()).filter(|&a| a > 0.0);
        let (small, large) = (nonzero().fold(f64::INFINITY, f64::min), nonzero().fold(0.0, f64::max));
        if ticks.is_empty() {
            return Self::Fixed(0);
        }
        let powers = ticks
            .iter()
            .all(|&t| t > 0.0 && (t.log10() - t.log10().round()).abs() < 1e-9);
        if log && powers {
            return Self::Power;
        }
        if small < 1e-4 || large >= 1e6 {
            let mantissa = |t: f64| t / 10f64.powi(t.abs().log10().floor() as i32);
            let d = nonzero().map(|t| decimals(mantissa(t), 1.0)).max().unwrap_or(0);
            return Self::Scientific(d.min(3));
        }
        let scale = if log { small } else { large.max(small) };
        let d = ticks.iter().map(|&t| decimals(t, scale)).max().unwrap_or(0);
        Self::Fixed(d)
    }

    /// `v` in this format.
    pub fn format(&self, v: f64) -> String {
        match *self {
            Self::Fixed(d) => {
                let s = format!("{v:.d$}");
                // No "-0".
                if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
                    s.trim_start_matches('-').to_string()
                } else {
                    s
                }
            }
            Self::Power => {
                let e = v.log10().round() as i32;
                format!("10{}", superscript(e))
            }
            Self::Scientific(d) => {
                if v == 0.0 {
                    return "0".into();
                }
                format!("{v:.d$e}")
            }
        }
    }
}

/// `e` in superscript digits.
fn superscript(e: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s = String::new();
    if e < 0 {
        s.push('⁻');
    }
    for c in e.unsigned_abs().to_string().chars() {
        s.push(DIGITS[c.to_digit(10).unwrap_or(0) as usize]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(ticks: &[f64], log: bool) -> Vec<String> {
        let f = AxisFormat::for_ticks(ticks, log);
        ticks.iter().map(|&t| f.format(t)).collect()
    }

    #[test]
    fn a_log_axis_of_decades_is_written_in_powers_of_ten() {
        assert_eq!(
            labels(&[1e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0], true),
            ["10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²", "10⁻¹", "10⁰"]
        );
        assert_eq!(labels(&[0.1, 1.0, 10.0], true), ["10⁻¹", "10⁰", "10¹"]);
        assert_eq!(labels(&[0.2, 0.3, 0.4], true), ["0.2", "0.3", "0.4"]);
    }

    #[test]
    fn a_linear_axis_shares_its_decimals() {
        assert_eq!(labels(&[0.0, 0.5, 1.0, 1.5], false), ["0.0", "0.5", "1.0", "1.5"]);
        assert_eq!(labels(&[0.0, 10.0, 20.0], false), ["0", "10", "20"]);
        assert_eq!(labels(&[1.25, 1.5, 1.75], false), ["1.25", "1.50", "1.75"]);
        assert_eq!(labels(&[-0.0, 2.0], false), ["0", "2"]);
    }

    #[test]
    fn far_from_one_is_scientific_throughout() {
        assert_eq!(labels(&[0.0, 2e-5, 4e-5], false), ["0", "2e-5", "4e-5"]);
        assert_eq!(labels(&[1e6, 1.5e6, 2e6], false), ["1.0e6", "1.5e6", "2.0e6"]);
    }
}
