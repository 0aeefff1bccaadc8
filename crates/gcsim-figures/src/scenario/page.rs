//! A scenario's report: one page holding what was run and what came out,
//! as `README.md` (figures linked relatively) and a self-contained
//! `index.html` (figures embedded as base64 `data:` URIs). The HTML is
//! well-formed XML (XHTML), every text escaped, so any XML parser reads it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use gcsim::export::markup::write_markdown;

/// One study's part of the page.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Section {
    /// The study's label.
    pub label: String,
    /// Sentences above its table (a plan's recommendation).
    pub notes: Vec<String>,
    /// Its table: the CSV's header and rows, as a table shows them.
    pub cells: Vec<Vec<String>>,
    /// Its figures, file names relative to the page.
    pub figures: Vec<String>,
}

/// A whole scenario's page.
#[derive(Debug, Clone)]
pub struct Page {
    /// The scenario's name.
    pub title: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// The command that reproduces the results.
    pub command: String,
    /// The scenario file's text.
    pub config: String,
    /// One section per study, in file order.
    pub sections: Vec<Section>,
}

/// The gcsim version that wrote a page.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

impl Page {
    /// The page as Markdown, figures linked by their file names.
    pub fn write_markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "# {}\n", self.title)?;
        if let Some(d) = &self.description {
            writeln!(out, "{d}\n")?;
        }
        writeln!(out, "Written by gcsim {VERSION}. To reproduce:\n")?;
        writeln!(out, "```sh\n{}\n```\n", self.command)?;
        writeln!(out, "## Configuration\n")?;
        writeln!(out, "```toml\n{}\n```\n", self.config.trim_end())?;
        for section in &self.sections {
            writeln!(out, "## {}\n", section.label)?;
            for note in &section.notes {
                writeln!(out, "**{note}**\n")?;
            }
            write_markdown(&section.cells, out)?;
            for figure in &section.figures {
                writeln!(out, "\n![{0}]({0})", figure)?;
            }
            writeln!(out)?;
        }
        Ok(())
    }

    /// The page as self-contained XHTML: the figures (PNG and SVG), read
    /// from where `locate` says each file name's content is, embedded as
    /// `data:` URIs; others (PDF) linked.
    pub fn write_html(&self, locate: &dyn Fn(&str) -> PathBuf, out: &mut dyn Write) -> io::Result<()> {
        let title = escape(&self.title);
        writeln!(out, "<!DOCTYPE html>")?;
        writeln!(out, "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">")?;
        writeln!(out, "<head>\n<meta charset=\"utf-8\"/>\n<title>{title}</title>")?;
        writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>")?;
        writeln!(out, "<h1>{title}</h1>")?;
        if let Some(d) = &self.description {
            writeln!(out, "<p>{}</p>", escape(d))?;
        }
        writeln!(out, "<p>Written by gcsim {}. To reproduce:</p>", escape(VERSION))?;
        writeln!(out, "<pre><code>{}</code></pre>", escape(&self.command))?;
        writeln!(out, "<h2>Configuration</h2>")?;
        writeln!(out, "<pre><code>{}</code></pre>", escape(self.config.trim_end()))?;
        for section in &self.sections {
            writeln!(out, "<h2>{}</h2>", escape(&section.label))?;
            for note in &section.notes {
                writeln!(out, "<p><strong>{}</strong></p>", escape(note))?;
            }
            write_html_table(&section.cells, out)?;
            for figure in &section.figures {
                let name = escape(figure);
                match data_uri(&locate(figure))? {
                    Some(uri) => writeln!(
                        out,
                        "<figure><img src=\"{uri}\" alt=\"{name}\"/><figcaption>{name}</figcaption></figure>"
                    )?,
                    None => writeln!(out, "<p><a href=\"{name}\">{name}</a></p>")?,
                }
            }
        }
        writeln!(out, "</body>\n</html>")
    }
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:75em}\
table{border-collapse:collapse;font-size:0.85em}th,td{border:1px solid #ccc;padding:2px 6px}\
td.n{text-align:right}.wide{overflow-x:auto}pre{background:#f4f4f4;padding:0.5em;overflow-x:auto}img{max-width:100%}";

/// A table: the first row as headers, cells that hold numbers aligned right.
fn write_html_table(cells: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let Some(header) = cells.first() else {
        return Ok(());
    };
    writeln!(out, "<div class=\"wide\"><table>\n<thead><tr>")?;
    for h in header {
        write!(out, "<th>{}</th>", escape(h))?;
    }
    writeln!(out, "</tr></thead>\n<tbody>")?;
    for row in &cells[1..] {
        write!(out, "<tr>")?;
        for c in row {
            let class = if c == "-" || c == "inf" || c.parse::<f64>().is_ok() {
                " class=\"n\""
            } else {
                ""
            };
            write!(out, "<td{class}>{}</td>", escape(c))?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</tbody>\n</table></div>")
}

/// `text` with the five XML special characters escaped.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// A PNG or SVG file as a `data:` URI; `None` for other files.
fn data_uri(path: &Path) -> io::Result<Option<String>> {
    let mime = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        _ => return Ok(None),
    };
    let bytes = std::fs::read(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(Some(format!("data:{mime};base64,{}", base64(&bytes))))
}

/// Standard base64 (RFC 4648), with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
    }
}
