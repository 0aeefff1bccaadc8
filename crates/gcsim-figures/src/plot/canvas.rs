//! Where a figure is drawn: the file format (chosen by the extension), its
//! size in inches, the PNG's pixels per inch, the font size in points and
//! whether the heading is drawn. Every length of a figure is given in
//! points and converted here, so a 3.5-inch column figure and a slide have
//! the same proportions.
//!
//! PNG is drawn by plotters' bitmap backend at `dpi` pixels per inch. SVG
//! is drawn at [`VECTOR_PPI`] units per inch and its `width`/`height` are
//! set in inches, so it prints at its size. PDF is that SVG converted to
//! vector PDF by `svg2pdf` (through `usvg`, with the bundled font), one page
//! of the figure's size.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{FONT, FONT_BYTES, PlotError, register_font};

/// Units per inch of SVG and PDF figures: plotters draws on a whole-unit
/// grid, so a fine one keeps curves smooth and line widths near what they
/// are asked to be (one unit is half a point).
pub const VECTOR_PPI: f64 = 144.0;

/// A figure's file format, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureFormat {
    /// Bitmap, `dpi` pixels per inch.
    Png,
    /// Vector, sized in inches.
    Svg,
    /// Vector, one page of the figure's size.
    Pdf,
}

impl FigureFormat {
    /// The extensions a figure may have, as an error lists them.
    pub const ACCEPTED: &'static str = ".png, .svg or .pdf";

    /// The format of `path`, by its extension in any case.
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" => Some(Self::Png),
            "svg" => Some(Self::Svg),
            "pdf" => Some(Self::Pdf),
            _ => None,
        }
    }
}

/// A figure's width and height in inches (`6x4`, or `6×4`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureSize {
    width: f64,
    height: f64,
}

/// A size that is not `WxH` in inches within the limits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizeError {
    /// Not two numbers joined by `x`.
    #[error("`{0}` is not WxH in inches; accepted: e.g. 6x4 or 6×4")]
    Syntax(String),
    /// Out of range.
    #[error("`{0}` is out of range; accepted: width and height from {min} to {max} inches", min = FigureSize::MIN, max = FigureSize::MAX)]
    Range(String),
}

impl FigureSize {
    /// Smallest side, inches: smaller leaves no room for the axes.
    pub const MIN: f64 = 1.5;
    /// Largest side, inches.
    pub const MAX: f64 = 50.0;
    /// The default, 11 × 7.2 inches (1100 × 720 pixels at the default 100 dpi).
    pub const DEFAULT: FigureSize = FigureSize {
        width: 11.0,
        height: 7.2,
    };

    /// A size of `width` × `height` inches, each within [`Self::MIN`, `Self::MAX`].
    pub fn new(width: f64, height: f64) -> Result<Self, SizeError> {
        let ok = |v: f64| (Self::MIN..=Self::MAX).contains(&v);
        if !ok(width) || !ok(height) {
            return Err(SizeError::Range(format!("{width}x{height}")));
        }
        Ok(Self { width, height })
    }

    /// Width in inches.
    pub fn width(&self) -> f64 {
        self.width
    }

    /// Height in inches.
    pub fn height(&self) -> f64 {
        self.height
    }
}

impl FromStr for FigureSize {
    type Err = SizeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || SizeError::Syntax(s.to_string());
        let (w, h) = s.split_once(['x', 'X', '×']).ok_or_else(syntax)?;
        let number = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite());
        let (w, h) = number(w).zip(number(h)).ok_or_else(syntax)?;
        Self::new(w, h).map_err(|_| SizeError::Range(s.to_string()))
    }
}

impl fmt::Display for FigureSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// How a figure is drawn, whatever it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureStyle {
    size: FigureSize,
    dpi: u32,
    font_pt: f64,
    title: bool,
    log_y: bool,
}

/// A style setting out of range; the message names the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StyleError {
    /// dpi out of range.
    #[error("dpi {0} is out of range; accepted: a whole number from {min} to {max}", min = FigureStyle::DPI.start(), max = FigureStyle::DPI.end())]
    Dpi(u64),
    /// font_size out of range.
    #[error("font_size {0} is out of range; accepted: {min} to {max} points", min = FigureStyle::FONT_PT.start(), max = FigureStyle::FONT_PT.end())]
    FontSize(f64),
    /// A PNG over [`FigureStyle::MAX_PIXELS`].
    #[error("dpi {dpi} at {size} inches makes a {w}x{h}-pixel image, more than {max} pixels; lower dpi or size", max = FigureStyle::MAX_PIXELS)]
    Pixels {
        /// The dpi.
        dpi: u32,
        /// The size.
        size: FigureSize,
        /// Width in pixels.
        w: u64,
        /// Height in pixels.
        h: u64,
    },
}

impl StyleError {
    /// The key (scenario) or flag stem that sets the value at fault.
    pub fn key(&self) -> &'static str {
        match self {
            StyleError::Dpi(_) | StyleError::Pixels { .. } => "dpi",
            StyleError::FontSize(_) => "font_size",
        }
    }
}

impl Default for FigureStyle {
    fn default() -> Self {
        Self {
            size: FigureSize::DEFAULT,
            dpi: 100,
            font_pt: 11.0,
            title: true,
            log_y: false,
        }
    }
}

impl FigureStyle {
    /// Accepted pixels per inch.
    pub const DPI: std::ops::RangeInclusive<u32> = 30..=1200;
    /// Accepted font sizes, points.
    pub const FONT_PT: std::ops::RangeInclusive<f64> = 4.0..=40.0;
    /// Most pixels in a PNG (about 100 MB of memory while drawing).
    pub const MAX_PIXELS: u64 = 36_000_000;

    /// A style of this size, dpi (PNG only), base font size in points,
    /// heading on or off and linear or logarithmic y axis.
    pub fn new(size: FigureSize, dpi: u32, font_pt: f64, title: bool, log_y: bool) -> Result<Self, StyleError> {
        if !Self::DPI.contains(&dpi) {
            return Err(StyleError::Dpi(dpi.into()));
        }
        if !Self::FONT_PT.contains(&font_pt) {
            return Err(StyleError::FontSize(font_pt));
        }
        let style = Self {
            size,
            dpi,
            font_pt,
            title,
            log_y,
        };
        let (w, h) = style.pixels(FigureFormat::Png);
        if u64::from(w) * u64::from(h) > Self::MAX_PIXELS {
            return Err(StyleError::Pixels {
                dpi,
                size,
                w: w.into(),
                h: h.into(),
            });
        }
        Ok(style)
    }

    /// The size in inches.
    pub fn size(&self) -> FigureSize {
        self.size
    }

    /// Pixels per inch of a PNG.
    pub fn dpi(&self) -> u32 {
        self.dpi
    }

    /// The base font size (tick labels, legend), points.
    pub fn font_pt(&self) -> f64 {
        self.font_pt
    }

    /// Whether the heading (title and the caption naming the parameters) is drawn.
    pub fn title(&self) -> bool {
        self.title
    }

    /// Whether a line chart's y axis is logarithmic (those that always are stay so).
    pub fn log_y(&self) -> bool {
        self.log_y
    }

    /// Drawing units per inch in `format`.
    fn ppi(&self, format: FigureFormat) -> f64 {
        match format {
            FigureFormat::Png => self.dpi as f64,
            FigureFormat::Svg | FigureFormat::Pdf => VECTOR_PPI,
        }
    }

    /// The size in drawing units (pixels of a PNG).
    pub fn pixels(&self, format: FigureFormat) -> (u32, u32) {
        let ppi = self.ppi(format);
        (
            (self.size.width * ppi).round() as u32,
            (self.size.height * ppi).round() as u32,
        )
    }
}

/// Lengths and fonts of one figure in its drawing units.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Canvas {
    /// Drawing units per point.
    scale: f64,
    /// The base font size, points.
    font_pt: f64,
    /// Whether to draw the heading.
    pub title: bool,
    /// The size in drawing units.
    pub size: (u32, u32),
}

impl Canvas {
    fn new(style: &FigureStyle, format: FigureFormat) -> Self {
        Self {
            scale: style.ppi(format) / 72.0,
            font_pt: style.font_pt,
            title: style.title,
            size: style.pixels(format),
        }
    }

    /// `pt` points in drawing units, at least 1.
    pub fn px(&self, pt: f64) -> i32 {
        ((pt * self.scale).round() as i32).max(1)
    }

    /// `em` times the base font size, in drawing units.
    pub fn em(&self, em: f64) -> i32 {
        self.px(em * self.font_pt)
    }

    /// The font at `em` times the base size. (plotters' size is 1.24 times
    /// the em square: its SVG backend writes `font-size` as size / 1.24.)
    pub fn font(&self, em: f64) -> FontDesc<'static> {
        (FONT, em * self.font_pt * self.scale * 1.24).into_font()
    }

    /// A stroke `pt` points wide, in whole drawing units.
    pub fn stroke(&self, color: RGBColor, pt: f64) -> ShapeStyle {
        color.stroke_width(self.px(pt) as u32)
    }
}

/// A plotters drawing result.
pub(crate) type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

impl Canvas {
    /// The width and height of `text` in `font`, in drawing units.
    pub fn measure<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, text: &str, em: f64) -> (i32, i32) {
        let style = TextStyle::from(self.font(em));
        area.estimate_text_size(text, &style)
            .map_or((0, 0), |(w, h)| (w as i32, h as i32))
    }

    /// `text` broken into lines no wider than `width` at words (a caption's
    /// parts, three spaces apart, stay whole where they fit).
    pub fn wrap<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        text: &str,
        em: f64,
        width: i32,
    ) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        for part in text.split("   ") {
            let joined = lines.last().map(|l| format!("{l}   {part}"));
            match joined {
                Some(j) if self.measure(area, &j, em).0 <= width => *lines.last_mut().expect("checked") = j,
                _ => {
                    let mut line = String::new();
                    for word in part.split(' ') {
                        let longer = if line.is_empty() {
                            word.to_string()
                        } else {
                            format!("{line} {word}")
                        };
                        if !line.is_empty() && self.measure(area, &longer, em).0 > width {
                            lines.push(std::mem::take(&mut line));
                            line = word.to_string();
                        } else {
                            line = longer;
                        }
                    }
                    lines.push(line);
                }
            }
        }
        lines
    }

    /// Draws the heading (title, then the caption in grey, each wrapped to
    /// the width) unless the style turns it off; returns the area below.
    pub fn heading<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
        caption: &str,
    ) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
        if !self.title {
            return Ok(root.clone());
        }
        let (left, width) = (self.em(1.6), self.size.0 as i32 - self.em(3.2));
        let mut y = self.em(0.8);
        for (text, em, color) in [(title, 1.45, BLACK), (caption, 1.0, RGBColor(80, 80, 80))] {
            for line in self.wrap(root, text, em, width) {
                root.draw_text(&line, &self.font(em).color(&color), (left, y))?;
                y += self.em(em * 1.3);
            }
            y += self.em(0.2);
        }
        Ok(root.split_vertically(y + self.em(0.2)).1)
    }
}

/// A figure that draws itself on any plotters backend.
pub(crate) trait Render {
    /// Draws onto `root`; `path` names the file in errors.
    fn render<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        canvas: &Canvas,
        path: &str,
    ) -> Result<(), PlotError>;
}

/// Draws `figure` to `path` in the format of its extension.
pub(crate) fn draw_figure(figure: &impl Render, path: &Path, style: &FigureStyle) -> Result<(), PlotError> {
    register_font();
    let shown = path.display().to_string();
    let err = |e: &dyn fmt::Display| PlotError::Draw {
        path: shown.clone(),
        reason: e.to_string(),
    };
    let format = FigureFormat::of(path).ok_or_else(|| PlotError::Extension(shown.clone()))?;
    let canvas = Canvas::new(style, format);
    match format {
        FigureFormat::Png => {
            let root = BitMapBackend::new(path, canvas.size).into_drawing_area();
            figure.render(&root, &canvas, &shown)?;
            root.present().map_err(|e| err(&e))
        }
        FigureFormat::Svg | FigureFormat::Pdf => {
            let svg = svg_string(figure, &canvas, style.size, &shown)?;
            let bytes = match format {
                FigureFormat::Pdf => pdf_of(&svg).map_err(|e| err(&e))?,
                _ => svg.into_bytes(),
            };
            std::fs::write(path, bytes).map_err(|e| err(&e))
        }
    }
}

/// The figure as an SVG document sized in inches.
fn svg_string(figure: &impl Render, canvas: &Canvas, size: FigureSize, path: &str) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, canvas.size).into_drawing_area();
        figure.render(&root, canvas, path)?;
        root.present().map_err(|e| PlotError::Draw {
            path: path.to_string(),
            reason: e.to_string(),
        })?;
    }
    // plotters writes the size in its units; a reader takes those as CSS
    // pixels, so the physical size is given instead (the viewBox keeps the units).
    let (w, h) = canvas.size;
    let plain = format!("<svg width=\"{w}\" height=\"{h}\"");
    if !svg.starts_with(&plain) {
        return Err(PlotError::Draw {
            path: path.to_string(),
            reason: "unexpected SVG header from the drawing backend".into(),
        });
    }
    let sized = format!("<svg width=\"{}in\" height=\"{}in\"", size.width, size.height);
    Ok(svg.replacen(&plain, &sized, 1))
}

/// A one-page vector PDF of `svg`, its text in the bundled font.
fn pdf_of(svg: &str) -> Result<Vec<u8>, String> {
    use svg2pdf::usvg;
    let mut options = usvg::Options::default();
    {
        let db = options.fontdb_mut();
        db.load_font_data(FONT_BYTES.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
    }
    options.font_family = "DejaVu Sans".into();
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| e.to_string())?;
    // usvg reads inches at 96 units per inch; the page is the figure's size.
    let page = svg2pdf::PageOptions { dpi: 96.0 };
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_either_cross() {
        assert_eq!("6x4".parse::<FigureSize>().unwrap(), FigureSize::new(6.0, 4.0).unwrap());
        assert_eq!(
            "3.5×2.5".parse::<FigureSize>().unwrap(),
            FigureSize::new(3.5, 2.5).unwrap()
        );
        assert_eq!(
            "6".parse::<FigureSize>().unwrap_err().to_string(),
            "`6` is not WxH in inches; accepted: e.g. 6x4 or 6×4"
        );
        assert_eq!(
            "6xNaN".parse::<FigureSize>().unwrap_err(),
            SizeError::Syntax("6xNaN".into())
        );
        assert_eq!(
            "0x4".parse::<FigureSize>().unwrap_err().to_string(),
            "`0x4` is out of range; accepted: width and height from 1.5 to 50 inches"
        );
    }

    #[test]
    fn styles_check_their_ranges() {
        let size = FigureSize::new(6.0, 4.0).unwrap();
        let ok = FigureStyle::new(size, 300, 9.0, true, false).unwrap();
        assert_eq!(ok.pixels(FigureFormat::Png), (1800, 1200));
        assert_eq!(ok.pixels(FigureFormat::Pdf), (864, 576));
        assert!(FigureStyle::new(size, 29, 9.0, true, false).is_err());
        assert!(FigureStyle::new(size, 300, 3.0, true, false).is_err());
        assert!(FigureStyle::new(size, 300, f64::NAN, true, false).is_err());
        let big = FigureSize::new(50.0, 50.0).unwrap();
        assert!(matches!(
            FigureStyle::new(big, 1200, 9.0, true, false),
            Err(StyleError::Pixels { .. })
        ));
        let d = FigureStyle::default();
        assert_eq!(d.pixels(FigureFormat::Png), (1100, 720));
    }

    #[test]
    fn formats_by_extension() {
        assert_eq!(FigureFormat::of(Path::new("a.PDF")), Some(FigureFormat::Pdf));
        assert_eq!(FigureFormat::of(Path::new("a.svg")), Some(FigureFormat::Svg));
        assert_eq!(FigureFormat::of(Path::new("a.jpg")), None);
        assert_eq!(FigureFormat::of(Path::new("png")), None);
    }
}
