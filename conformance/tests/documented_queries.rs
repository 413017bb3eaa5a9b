//! `docs/parquet-export.md` shows the query files of `docs/queries/` as they are (the
//! files conformance check 9 runs in each engine): every file once, under a
//! `<!-- query: ENGINE/FILE -->` line, byte for byte.

use std::path::Path;

#[test]
fn the_documentation_shows_the_queries_that_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/parquet-export.md")).unwrap();
    let mut shown = std::collections::BTreeSet::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .strip_prefix("<!-- query: ")
            .and_then(|l| l.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or("");
        assert!(
            fence.starts_with("```"),
            "{name}: no code block after the marker"
        );
        let mut block = String::new();
        for l in lines.by_ref() {
            if l == "```" {
                break;
            }
            block.push_str(l);
            block.push('\n');
        }
        let file = std::fs::read_to_string(root.join("docs/queries").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            block, file,
            "docs/parquet-export.md shows {name} differently"
        );
        assert!(shown.insert(name.to_string()), "{name} shown twice");
    }
    let mut files = std::collections::BTreeSet::new();
    for engine in std::fs::read_dir(root.join("docs/queries")).unwrap() {
        let engine = engine.unwrap();
        for f in std::fs::read_dir(engine.path()).unwrap() {
            let f = f.unwrap();
            files.insert(format!(
                "{}/{}",
                engine.file_name().to_string_lossy(),
                f.file_name().to_string_lossy()
            ));
        }
    }
    assert_eq!(shown, files, "every query file is shown, and nothing else");
    // The three engines answer the same questions.
    for q in ["top_functions", "folded", "histogram", "addresses"] {
        for e in ["duckdb", "spark", "datafusion"] {
            assert!(files.contains(&format!("{e}/{q}.sql")), "{e}/{q}.sql");
        }
    }
}
