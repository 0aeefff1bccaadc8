//! A heatmap's colour scales and its colour bar: ColorBrewer's diverging
//! RdBu for ratios on a log scale around 1 (blue faster, white 1, red
//! slower), and its sequential Reds for values from a floor upward (Brewer
//! 2003; both safe for the common colour-vision deficiencies).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::super::canvas::{Canvas, Drawn};
use super::super::ticks::AxisFormat;

/// ColorBrewer RdBu (11 classes), from the fastest to the slowest colour.
const RD_BU: [u32; 11] = [
    0x053061, 0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7, 0xfddbc7, 0xf4a582, 0xd6604d, 0xb2182b, 0x67001f,
];

/// ColorBrewer Reds (9 classes), from the lightest to the darkest.
const REDS: [u32; 9] = [
    0xfff5f0, 0xfee0d2, 0xfcbba1, 0xfc9272, 0xfb6a4a, 0xef3b2c, 0xcb181d, 0xa50f15, 0x67000d,
];

/// Round ratios for the ticks of a ratio bar, the more important first.
const RATIO_TICKS: [f64; 20] = [
    1.0, 2.0, 0.5, 1.5, 4.0, 0.25, 10.0, 0.1, 1.25, 0.8, 1.1, 0.9, 3.0, 0.7, 6.0, 0.6, 1.05, 0.95, 8.0, 0.125,
];

/// How a value becomes a colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Ratios on a log scale from 1/e^span (darkest blue) through 1 (white)
    /// to e^span (darkest red).
    Ratio {
        /// The half-width of the scale, in natural log units.
        span: f64,
    },
    /// Values from `lo` (lightest) to `hi` (darkest red); values outside
    /// take the end colours.
    Sequential {
        /// The lightest value.
        lo: f64,
        /// The darkest value.
        hi: f64,
    },
}

/// The colour at `x` in [0, 1] along `classes`, interpolated.
fn along(classes: &[u32], x: f64) -> RGBColor {
    let x = x.clamp(0.0, 1.0) * (classes.len() - 1) as f64;
    let i = (x.floor() as usize).min(classes.len() - 2);
    let f = x - i as f64;
    let mix = |shift: u32| {
        let (a, b) = ((classes[i] >> shift) & 0xff, (classes[i + 1] >> shift) & 0xff);
        (a as f64 + f * (b as f64 - a as f64)).round() as u8
    };
    RGBColor(mix(16), mix(8), mix(0))
}

impl Scale {
    /// Where `v` lies on the scale: −1 to 1 for a ratio, 0 to 1 for a
    /// sequential scale (beyond, for values outside it).
    pub fn position(&self, v: f64) -> f64 {
        match *self {
            Scale::Ratio { span } => v.ln() / span,
            Scale::Sequential { lo, hi } => (v - lo) / (hi - lo),
        }
    }

    /// The positions of the scale's ends, the lower first.
    fn ends(&self) -> (f64, f64) {
        match self {
            Scale::Ratio { .. } => (-1.0, 1.0),
            Scale::Sequential { .. } => (0.0, 1.0),
        }
    }

    /// The colour at position `p`.
    fn at(&self, p: f64) -> RGBColor {
        match self {
            Scale::Ratio { .. } => along(&RD_BU, (p + 1.0) * 0.5),
            Scale::Sequential { .. } => along(&REDS, p),
        }
    }

    /// The colour of `v`.
    pub fn color(&self, v: f64) -> RGBColor {
        self.at(self.position(v))
    }

    /// Whether `v` is drawn dark enough to want white text on it.
    pub fn dark(&self, v: f64) -> bool {
        let p = self.position(v);
        match self {
            Scale::Ratio { .. } => p.abs() > 0.6,
            Scale::Sequential { .. } => p > 0.6,
        }
    }

    /// The more extreme of two values, which a bin of cells shows: the
    /// further from 1 for a ratio, the larger for a sequential scale.
    pub fn extreme(&self, a: f64, b: f64) -> f64 {
        let (pa, pb) = (self.position(a), self.position(b));
        let further = match self {
            Scale::Ratio { .. } => pb.abs() > pa.abs(),
            Scale::Sequential { .. } => pb > pa,
        };
        if further { b } else { a }
    }

    /// Candidate tick values of the bar, the more important first.
    fn ticks(&self) -> Vec<f64> {
        match *self {
            Scale::Ratio { .. } => RATIO_TICKS.to_vec(),
            Scale::Sequential { lo, hi } => {
                let raw = (hi - lo) / 5.0;
                let magnitude = 10f64.powf(raw.log10().floor());
                let step = [1.0, 2.0, 2.5, 5.0, 10.0]
                    .iter()
                    .map(|m| m * magnitude)
                    .find(|s| *s >= raw * 0.999)
                    .unwrap_or(raw);
                let first = (lo / step).ceil() as i64;
                let last = (hi / step + 1e-9).floor() as i64;
                let mut t = vec![lo, hi];
                t.extend((first..=last).map(|k| k as f64 * step));
                t
            }
        }
    }
}

/// The colour bar of `scale` in `area`: titled `label`, the largest value
/// at the top, `ends` (top, bottom) written beyond its ends if given.
pub fn draw_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: &Canvas,
    scale: &Scale,
    label: &str,
    ends: Option<(&str, &str)>,
) -> Drawn<DB> {
    let text = c.font(1.0).color(&BLACK);
    let grey = c.font(0.95).color(&RGBColor(90, 90, 90));
    let (_, area_h) = area.dim_in_pixel();
    area.draw_text(label, &text, (c.em(0.6), c.em(0.4)))?;
    let (x0, x1, top) = (c.em(1.0), c.em(2.8), c.em(3.4));
    let bottom = (area_h as i32 - c.em(4.0)).max(top + c.em(4.0));
    let height = bottom - top;
    let (lo, hi) = scale.ends();
    let y_of = |p: f64| top + ((hi - p) / (hi - lo) * height as f64).round() as i32;
    for py in 0..height {
        let p = hi - (hi - lo) * (py as f64 + 0.5) / height as f64;
        area.draw(&Rectangle::new(
            [(x0, top + py), (x1, top + py + 1)],
            scale.at(p).filled(),
        ))?;
    }
    area.draw(&Rectangle::new([(x0, top), (x1, bottom)], c.stroke(BLACK, 0.6)))?;
    // Each tick kept 1.3 em clear of those kept.
    let mut kept: Vec<(f64, i32)> = Vec::new();
    for v in scale.ticks() {
        let p = scale.position(v);
        if !(lo - 1e-9..=hi + 1e-9).contains(&p) {
            continue;
        }
        let y = y_of(p);
        if kept.iter().any(|k| (k.1 - y).abs() < c.em(1.3)) {
            continue;
        }
        kept.push((v, y));
    }
    // One format for every label of the bar.
    let format = AxisFormat::for_ticks(&kept.iter().map(|k| k.0).collect::<Vec<_>>(), false);
    for (v, y) in kept {
        area.draw(&PathElement::new(
            vec![(x1, y), (x1 + c.em(0.4), y)],
            c.stroke(BLACK, 0.6),
        ))?;
        let (_, h) = c.measure(area, "1", 1.0);
        area.draw_text(&format.format(v), &text, (x1 + c.em(0.6), y - h / 2))?;
    }
    if let Some((upper, lower)) = ends {
        area.draw_text(upper, &grey, (c.em(1.0), c.em(2.0)))?;
        area.draw_text(lower, &grey, (x0, bottom + c.em(0.5)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_scale_runs_from_blue_through_white_to_red() {
        let s = Scale::Ratio { span: 1.0 };
        assert_eq!(s.color((-1.0f64).exp()), RGBColor(5, 48, 97));
        assert_eq!(s.color(1.0), RGBColor(247, 247, 247));
        assert_eq!(s.color(1.0f64.exp()), RGBColor(103, 0, 31));
        assert_eq!(s.color(1e9), s.color(1.0f64.exp()));
        assert_eq!(s.extreme(1.5, 0.5), 0.5);
    }

    #[test]
    fn the_sequential_scale_runs_from_white_to_dark_red() {
        let s = Scale::Sequential { lo: 1.0, hi: 1.5 };
        assert_eq!(s.color(1.0), RGBColor(255, 245, 240));
        assert_eq!(s.color(0.9), s.color(1.0));
        assert_eq!(s.color(1.5), RGBColor(103, 0, 13));
        assert_eq!(s.extreme(1.2, 1.1), 1.2);
        assert!(s.dark(1.4) && !s.dark(1.1));
        let mut ticks = s.ticks();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        assert_eq!(ticks.len(), 6, "{ticks:?}");
    }
}
