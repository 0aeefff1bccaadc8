//! One colour and one marker per scheme, the same in every figure, keyed on
//! the scheme (never on a series' place in the legend).
//!
//! Each scheme names its colour of Okabe & Ito's palette and its marker in
//! its facts ([`gcsim::scheme::Style`]); this module draws them. Seven
//! colours serve all the schemes, so a colour is shared only by schemes
//! that the shipped studies never draw together, and the marker tells them
//! apart: every (colour, marker) pair is unique.
//!
//! Exact and simulated values, and exact and inexact strategies, differ in
//! line and marker, not in colour: simulated values are markers joined by a
//! pale line, the closed form a thin dashed line in the full colour drawn
//! on top (so that it stays visible where the two coincide), and an
//! inexact strategy has hollow markers and a dotted line.

use plotters::style::RGBColor;

use gcsim::scheme::{Colour, SchemeKind, Style};

pub use gcsim::scheme::Marker;

/// The outline of `marker` around the origin, for a marker of half-width
/// `r` pixels (None for the circle and the cross, drawn as such).
pub(crate) fn outline(marker: Marker, r: i32) -> Option<Vec<(i32, i32)>> {
    let t = (r as f64 * 1.15).round() as i32;
    match marker {
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

/// The colour and marker of `kind`, from its facts
/// ([`gcsim::scheme::Facts::style`]).
pub fn scheme_style(kind: SchemeKind) -> SchemeStyle {
    let Style { colour, marker } = kind.facts().style;
    SchemeStyle {
        color: rgb(colour),
        marker,
    }
}

/// The RGB value of a colour of the palette.
pub fn rgb(colour: Colour) -> RGBColor {
    use okabe_ito::*;
    match colour {
        Colour::Black => BLACK,
        Colour::Orange => ORANGE,
        Colour::SkyBlue => SKY_BLUE,
        Colour::Green => GREEN,
        Colour::Blue => BLUE,
        Colour::Vermillion => VERMILLION,
        Colour::Purple => PURPLE,
    }
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
