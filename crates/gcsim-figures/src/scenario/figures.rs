//! Figure tables: a study's `figures`, the top-level `[[figure]]` overlays
//! of several studies, and the style keys both (and a `[[train]]`'s `plot`) take.

use std::path::Path;

use toml::Spanned;

use super::source::{Source, Taken};
use super::{FigureFile, FigureSpec, Overlay, ScenarioError, ScenarioStudy, figure_data_file};
use crate::plot::canvas::StyleError;
use crate::plot::sweep::Metric;
use crate::plot::{FigureFormat, FigureSize, FigureStyle};

/// A figure table's file (claimed for `owner`, with its data file), metric and style.
pub(super) fn figure_spec(
    src: &Source,
    f: &FigureFile,
    owner: &str,
    taken: &mut Taken,
) -> Result<FigureSpec, ScenarioError> {
    let name = src.figure_file("file", &f.file)?;
    src.claim(taken, &name, owner, "file", f.file.span())?;
    src.claim(taken, &figure_data_file(&name), owner, "file", f.file.span())?;
    let metric = match &f.metric {
        None => Metric::Speedup,
        Some(m) => match m.get_ref().parse::<Metric>() {
            Ok(m) => m,
            Err(e) => return src.err(Some(m.span()), format!("key `metric`: {e}")),
        },
    };
    let style = figure_style(src, f, &name)?;
    Ok(FigureSpec {
        file: name,
        metric,
        style,
    })
}

/// A top-level `[[figure]]`: its studies must be `[[study]]` labels, at least
/// two, none twice, whose figures share one x axis.
pub(super) fn overlay(
    src: &Source,
    f: &FigureFile,
    studies: &[ScenarioStudy],
    taken: &mut Taken,
) -> Result<Overlay, ScenarioError> {
    let labels = || studies.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join(", ");
    let Some(given) = &f.studies else {
        return src.err(
            Some(f.file.span()),
            "[[figure]]: missing key `studies`, the labels of the [[study]] tables it draws on one axis (e.g. studies = [\"scaled\", \"fixed\"])",
        );
    };
    let mut chosen: Vec<usize> = Vec::new();
    for label in given.get_ref() {
        let Some(i) = studies.iter().position(|s| &s.label == label) else {
            return src.err(
                Some(given.span()),
                format!(
                    "key `studies`: no [[study]] is labelled `{label}`; accepted: {}",
                    labels()
                ),
            );
        };
        if chosen.contains(&i) {
            return src.err(Some(given.span()), format!("key `studies`: `{label}` is listed twice"));
        }
        chosen.push(i);
    }
    if chosen.len() < 2 {
        return src.err(
            Some(given.span()),
            "key `studies`: an overlay draws at least two studies (one study's figure goes in its own `figures`)",
        );
    }
    let mut axis: Option<(&str, &str)> = None;
    for &i in &chosen {
        let st = &studies[i];
        let x = crate::plot::sweep::x_axis_of(st.study.schemes(), st.ranges.k.is_some())
            .or_else(|e| src.err(Some(given.span()), format!("key `studies`: study `{}`: {e}", st.label)))?;
        match axis {
            Some((first, symbol)) if symbol != x => {
                return src.err(
                    Some(given.span()),
                    format!(
                        "key `studies`: an overlay has one x axis: study `{first}` is drawn against {symbol}, study `{}` against {x}",
                        st.label
                    ),
                );
            }
            None => axis = Some((&st.label, x)),
            _ => {}
        }
    }
    let owner = format!("figure `{}`", f.file.get_ref());
    Ok(Overlay {
        figure: figure_spec(src, f, &owner, taken)?,
        studies: chosen,
    })
}

/// The style keys of a figure table (or of a `[[train]]` table's `plot`).
pub(super) struct StyleKeys<'a> {
    pub(super) size: Option<&'a Spanned<String>>,
    pub(super) dpi: Option<&'a Spanned<u64>>,
    pub(super) font_size: Option<&'a Spanned<f64>>,
    pub(super) title: Option<bool>,
    pub(super) log_y: Option<bool>,
    /// Where an error without a key of its own points: the figure's file.
    pub(super) file: std::ops::Range<usize>,
}

impl FigureFile {
    fn style_keys(&self) -> StyleKeys<'_> {
        StyleKeys {
            size: self.size.as_ref(),
            dpi: self.dpi.as_ref(),
            font_size: self.font_size.as_ref(),
            title: self.title,
            log_y: self.log_y,
            file: self.file.span(),
        }
    }
}

/// The style keys of a figure (`size`, `dpi`, `font_size`, `title`,
/// `log_y`), each error naming its key.
fn figure_style(src: &Source, f: &FigureFile, file: &str) -> Result<FigureStyle, ScenarioError> {
    style_of(src, &f.style_keys(), file)
}

/// A figure's style from its keys, each error naming its key; `file` is
/// the figure's file name (a `dpi` only sets a PNG's pixels).
pub(super) fn style_of(src: &Source, f: &StyleKeys, file: &str) -> Result<FigureStyle, ScenarioError> {
    let default = FigureStyle::default();
    let size = match f.size {
        None => default.size(),
        Some(s) => match s.get_ref().parse::<FigureSize>() {
            Ok(size) => size,
            Err(e) => return src.err(Some(s.span()), format!("key `size`: {e}")),
        },
    };
    let dpi = match f.dpi {
        None => default.dpi(),
        Some(d) if FigureFormat::of(Path::new(file)) != Some(FigureFormat::Png) => {
            return src.err(
                Some(d.span()),
                format!("key `dpi`: sets the pixels of a PNG; `{file}` is a vector figure, sized by `size`"),
            );
        }
        Some(d) => u32::try_from(*d.get_ref()).unwrap_or(u32::MAX),
    };
    FigureStyle::new(
        size,
        dpi,
        f.font_size.map_or(default.font_pt(), |s| *s.get_ref()),
        f.title.unwrap_or(true),
        f.log_y.unwrap_or(false),
    )
    .or_else(|e| {
        let span = match e {
            StyleError::FontSize(_) => f.font_size.map(|s| s.span()),
            _ => f.dpi.map(|d| d.span()),
        };
        src.err(span.or(Some(f.file.clone())), format!("key `{}`: {e}", e.key()))
    })
}
