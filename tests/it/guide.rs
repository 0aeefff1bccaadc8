//! Every example of the README and of the user guide (`docs/guide/src`)
//! runs, and prints what the page shows: the `console` blocks are trycmd
//! cases (`$ gcsim …` and its output, `? 2` for an exit status). A page's
//! inputs are in `<page>.in/`; a page whose commands write files has a
//! `<page>.out/` (with a `.keep`), so that they run in a scratch copy.
//!
//! `TRYCMD=overwrite cargo test --release --test it guide` rewrites the
//! pages' outputs after a deliberate change; `-- guide trycmd=tutorial`
//! runs one page.

#[test]
fn guide_and_readme_examples_run_as_shown() {
    trycmd::TestCases::new()
        .register_bin("gcsim", trycmd::cargo::cargo_bin("gcsim"))
        // `--help` wraps at the terminal's width, which COLUMNS sets.
        .env("COLUMNS", "100")
        .case("README.md")
        .case("docs/guide/src/*.md")
        .case("docs/guide/src/*/*.md");
}
