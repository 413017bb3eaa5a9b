//! The man pages of `perfdata` (`docs/man/perfdata.1`, and `perfdata-COMMAND.1` for
//! each subcommand), rendered by clap_mangen from the CLI's command-line definition
//! ([`perfdata_cli::command`]), so that they say what `--help` says.
//!
//! clap_mangen renders a command's `after_help` as one filled paragraph; ours is made of
//! blocks, `Heading:` then indented lines (`Examples:`, `Environment:`), which become
//! sections of their own here: examples line by line, environment variables as a list.
//! No date in the pages: they depend on the definition only.

use anyhow::{bail, Result};
use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

/// The first lines of every page: the encoding (for man-db's preconv; the help text is
/// UTF-8) and where the page comes from.
const HEADER: &str = ".\\\" -*- coding: UTF-8 -*-\n\
    .\\\" @generated from perfdata-cli's command-line definition — do not edit; \
    run `cargo xtask gen`.\n";

/// Every page: its file name (`perfdata-report.1`) and contents.
pub fn pages() -> Result<Vec<(String, String)>> {
    // Built once from the top, so that each subcommand knows its full name
    // (`perfdata-report`, `perfdata report`); `perfdata help` is clap's, not a page.
    let mut root = perfdata_cli::command().disable_help_subcommand(true);
    root.build();
    let mut pages = vec![];
    collect(&root, &mut pages)?;
    Ok(pages)
}

fn collect(cmd: &clap::Command, pages: &mut Vec<(String, String)>) -> Result<()> {
    pages.push(page(cmd)?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, pages)?;
    }
    Ok(())
}

/// The `.TH` source of every page: the program and its version (a subcommand has no
/// version of its own).
fn source() -> String {
    let root = perfdata_cli::command();
    format!("perfdata {}", root.get_version().unwrap_or_default())
}

/// One command's page: clap_mangen's sections, then ours from `after_help`, then a
/// pointer to the main page from a subcommand's.
fn page(cmd: &clap::Command) -> Result<(String, String)> {
    let man = Man::new(cmd.clone()).source(source());
    let name = man.get_filename();
    let mut out: Vec<u8> = vec![];
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    let mut extra = Roff::new();
    if let Some(text) = cmd.get_after_help() {
        sections(&mut extra, &text.to_string())
            .map_err(|e| anyhow::anyhow!("{name}: after_help: {e}"))?;
    }
    if let Some(parent) = cmd.get_display_name().and_then(|n| n.rsplit_once('-')) {
        extra.control("SH", ["SEE ALSO"]);
        extra.text([bold(parent.0), roman("(1)")]);
    }
    extra.to_writer(&mut out)?;
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    // Each render call starts with roff's apostrophe preamble: keep the first only.
    let preamble = Roff::new().render();
    let body = String::from_utf8(out)?;
    let mut text = String::from(HEADER);
    text.push_str(&preamble);
    text.push_str(&body.replace(&preamble, ""));
    Ok((name, text))
}

/// `Heading:` blocks as man sections: `Environment:` as a tagged list (`  NAME  text`,
/// continued by deeper-indented lines), any other as its lines unfilled.
fn sections(roff: &mut Roff, text: &str) -> Result<()> {
    for block in text.split("\n\n") {
        let mut lines = block.lines();
        let Some(heading) = lines.next().and_then(|h| h.strip_suffix(':')) else {
            bail!("a block that does not start with `Heading:`: {block:?}");
        };
        if heading.starts_with(' ') {
            bail!("an indented heading: {heading:?}");
        }
        roff.control("SH", [heading.to_uppercase().as_str()]);
        let body: Vec<&str> = lines.collect();
        if heading == "Environment" {
            environment(roff, &body)?;
        } else {
            roff.control("nf", []);
            for line in body {
                let Some(line) = line.strip_prefix("  ") else {
                    bail!("a line of {heading} not indented by two spaces: {line:?}");
                };
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
        }
    }
    Ok(())
}

/// `  NAME   text` lines (a name, then two spaces or more), a deeper indent continuing
/// the text: one tagged paragraph per variable.
fn environment(roff: &mut Roff, lines: &[&str]) -> Result<()> {
    let mut entries: Vec<(String, String)> = vec![];
    for line in lines {
        let Some(rest) = line.strip_prefix("  ") else {
            bail!("an environment line not indented by two spaces: {line:?}");
        };
        if rest.starts_with(' ') {
            let Some(last) = entries.last_mut() else {
                bail!("a continuation line before any variable: {line:?}");
            };
            last.1.push(' ');
            last.1.push_str(rest.trim());
        } else {
            let Some((name, text)) = rest.split_once("  ") else {
                bail!("an environment line without `NAME  text`: {line:?}");
            };
            entries.push((name.to_string(), text.trim().to_string()));
        }
    }
    for (name, text) in entries {
        roff.control("TP", []);
        roff.text([bold(name)]);
        roff.text([roman(text)]);
    }
    Ok(())
}
