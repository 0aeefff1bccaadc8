//! One colour and one marker per scheme, the same in every figure, keyed on
//! the scheme (never on a series' place in the legend).
//!
//! The colours are Okabe & Ito's palette ("Color Universal Design", 2008),
//! distinguishable under the common colour-vision deficiencies; its yellow
//! is left out, as a thin yellow line is illegible on white. Seven colours
//! serve sixteen schemes, so a colour is shared only by schemes that the
//! shipped studies never draw together, and the marker tells them apart:
//! every (colour, marker) pair is unique.
//!
//! Exact and simulated values, and exact and inexact strategies, differ in
//! line and marker, not in colour: simulated values are markers joined by a
//! pale line, the closed form a thin dashed line in the full colour drawn
//! on top (so that it stays visible where the two coincide), and an
//! inexact strategy has hollow markers and a dotted line.

use plotters::style::RGBColor;

use gcsim::scheme::SchemeKind;

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A disc.
    Circle,
    /// A square.
    Square,
    /// A triangle, point up.
    TriangleUp,
    /// A triangle, point down.
    TriangleDown,
    /// A square on its corner.
    Diamond,
    /// A diagonal cross.
    Cross,
}

impl Marker {
    /// Every marker; the second series of one scheme in a figure takes the
    /// next one after the scheme's own.
    pub const ALL: [Marker; 6] = [
        Marker::Circle,
        Marker::Square,
        Marker::TriangleUp,
        Marker::TriangleDown,
        Marker::Diamond,
        Marker::Cross,
    ];

    /// Its name in `--plot-data`.
    pub fn name(self) -> &'static str {
        match self {
            Marker::Circle => "circle",
            Marker::Square => "square",
            Marker::TriangleUp => "triangle-up",
            Marker::TriangleDown => "triangle-down",
            Marker::Diamond => "diamond",
            Marker::Cross => "cross",
        }
    }

    /// The outline around the origin, for a marker of half-width `r`
    /// pixels (None for the circle and the cross, drawn as such).
    pub(crate) fn outline(self, r: i32) -> Option<Vec<(i32, i32)>> {
        let t = (r as f64 * 1.15).round() as i32;
        match self {
            Marker::Circle | Marker::Cross => None,
            Marker::Square => {
                let q = (r as f64 * 0.88).round() as i32;
                Some(vec![(-q, -q), (q, -q), (q, q), (-q, q)])
            }
            Marker::TriangleUp => Some(vec![(0, -t), (t, t * 3 / 4), (-t, t * 3 / 4)]),
            Marker::TriangleDown => Some(vec![(0, t), (t, -t * 3 / 4), (-t, -t * 3 / 4)]),
            Marker::Diamond => Some(vec![(0, -t), (t, 0), (0, t), (-t, 0)]),
        }
    }
}

/// Okabe & Ito's colours (yellow left out).
pub mod okabe_ito {
    use plotters::style::RGBColor;
    /// Black.
    pub const BLACK: RGBColor = RGBColor(0, 0, 0);
    /// Orange.
    pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
    /// Sky blue.
    pub const SKY_BLUE: RGBColor = RGBColor(86, 180, 233);
    /// Bluish green.
    pub const GREEN: RGBColor = RGBColor(0, 158, 115);
    /// Blue.
    pub const BLUE: RGBColor = RGBColor(0, 114, 178);
    /// Vermillion.
    pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
    /// Reddish purple.
    pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
}

/// How a scheme is drawn in every figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemeStyle {
    /// Its colour.
    pub color: RGBColor,
    /// Its marker.
    pub marker: Marker,
}

/// The colour and marker of `kind`. Related schemes share a colour where
/// they are seldom drawn together (multi-message has crc's placement and
/// crc's blue), and the marker differs.
pub fn scheme_style(kind: SchemeKind) -> SchemeStyle {
    use Marker::*;
    use okabe_ito::*;
    let (color, marker) = match kind {
        SchemeKind::Uncoded => (BLACK, Square),
        SchemeKind::Ignore => (PURPLE, Diamond),
        SchemeKind::Frc => (VERMILLION, TriangleUp),
        SchemeKind::Crc => (BLUE, Circle),
        SchemeKind::CommEfficient => (GREEN, TriangleDown),
        SchemeKind::Mds => (ORANGE, Square),
        SchemeKind::ApproxRegular => (GREEN, Diamond),
        SchemeKind::Custom => (BLACK, Cross),
        SchemeKind::Timeout => (ORANGE, TriangleDown),
        SchemeKind::Speculative => (SKY_BLUE, Square),
        SchemeKind::KBatchSync => (GREEN, Circle),
        SchemeKind::MultiMessage => (BLUE, TriangleDown),
        SchemeKind::KAsync => (SKY_BLUE, TriangleUp),
        SchemeKind::KBatchAsync => (GREEN, Square),
        SchemeKind::PartialFrc => (VERMILLION, Square),
        SchemeKind::PartialCrc => (ORANGE, Circle),
        SchemeKind::Polynomial => (VERMILLION, Diamond),
        SchemeKind::MatDot => (PURPLE, Square),
        SchemeKind::Entangled => (SKY_BLUE, Diamond),
    };
    SchemeStyle { color, marker }
}

/// `color` mixed with white: `amount` 0 keeps it, 1 is white.
pub fn tint(color: RGBColor, amount: f64) -> RGBColor {
    let mix = |c: u8| (c as f64 + amount * (255.0 - c as f64)).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// `#rrggbb`, as SVG writes it.
pub fn hex(color: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheme_has_its_own_colour_and_marker_pair() {
        let pairs: Vec<_> = SchemeKind::ALL
            .iter()
            .map(|&k| {
                let s = scheme_style(k);
                (hex(s.color), s.marker.name())
            })
            .collect();
        for (i, a) in pairs.iter().enumerate() {
            assert!(!pairs[i + 1..].contains(a), "{a:?} twice");
        }
    }

    /// The schemes the shipped studies draw together have distinct colours.
    #[test]
    fn schemes_drawn_together_differ_in_colour() {
        use SchemeKind::*;
        let figures: [&[SchemeKind]; 5] = [
            &[Uncoded, Ignore, Frc, Crc],
            &[Uncoded, Ignore, Frc, Timeout, Speculative, KBatchSync, MultiMessage],
            &[Uncoded, Ignore, KAsync, KBatchAsync, Crc, PartialCrc],
            &[Uncoded, Ignore, Frc, Crc, ApproxRegular, KAsync],
            &[CommEfficient, Crc, Uncoded, Mds],
        ];
        for kinds in figures {
            let colours: Vec<_> = kinds.iter().map(|&k| scheme_style(k).color).collect();
            for (i, c) in colours.iter().enumerate() {
                assert!(!colours[i + 1..].contains(c), "{kinds:?}");
            }
        }
    }

    #[test]
    fn tint_and_hex() {
        assert_eq!(hex(okabe_ito::BLUE), "#0072B2");
        assert_eq!(tint(okabe_ito::BLACK, 1.0), RGBColor(255, 255, 255));
        assert_eq!(tint(okabe_ito::BLUE, 0.0), okabe_ito::BLUE);
    }
}
