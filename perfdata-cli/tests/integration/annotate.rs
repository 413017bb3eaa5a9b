//! `perfdata annotate` on a committed fixture: perf annotate's text, its JSON twin, the
//! Intel syntax and raw bytes, and what cannot be annotated said in one line each.

use crate::run_perfdata;
use perfdata_test_support::workspace;

fn fixture() -> String {
    workspace()
        .join("conformance/fixtures/plain.data")
        .display()
        .to_string()
}

/// The fixture's programs (`sh`, `ls`, libc) are read from this machine: elsewhere (other
/// build ids) there is no code to show, which the command says; the test then skips.
fn annotated(args: &[&str]) -> Option<String> {
    let (code, out, err) = run_perfdata(args, None);
    assert_eq!(code, Some(0), "{err}");
    for line in err.lines() {
        assert!(
            line.starts_with("perfdata: ") && !line.contains("panicked"),
            "an unexpected message: {line}"
        );
    }
    if out.is_empty() {
        eprintln!("SKIP: the fixture's programs are not on this machine: {err}");
        return None;
    }
    Some(out)
}

#[test]
fn the_listing_is_perf_annotate_stdio() {
    let f = fixture();
    let Some(out) = annotated(&["annotate", &f, "--stdio", "--no-source"]) else {
        return;
    };
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with(" Percent |\tSource code & Disassembly of ")
            && first.ends_with("percent: local period)"),
        "{first}"
    );
    let second = out.lines().nth(1).unwrap();
    // perf's rule: as many dashes as the header printed (its newline counted), and 4.
    assert_eq!(second.len(), first.len() + 1 + 4);
    assert!(second.bytes().all(|b| b == b'-'));
    // Every function's percentages add up to 100.
    let mut sums = vec![];
    for line in out.lines() {
        if line.starts_with(" Percent |") {
            sums.push(0.0);
        } else if let Some((p, _)) = line.split_once(" : ") {
            if let Ok(p) = p.trim().parse::<f64>() {
                *sums.last_mut().unwrap() += p;
            }
        }
    }
    for s in sums {
        assert!(
            (s - 100.0).abs() < 0.5,
            "a function's percentages add up to {s}"
        );
    }
    // The same with -i, and a function named (as perf names it).
    let json = annotated(&["annotate", &f, "--json"]).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let name = v["events"][0]["functions"][0]["symbol"].as_str().unwrap();
    let one = annotated(&["annotate", "-i", &f, "--no-source", name]).unwrap();
    assert_eq!(one.matches(" Percent |").count(), 1, "{one}");
    assert!(
        out.starts_with(&one),
        "the hottest function's listing differs when named"
    );
}

#[test]
fn json_intel_and_raw_bytes() {
    let f = fixture();
    let Some(json) = annotated(&["annotate", &f, "--json"]) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let insn = &v["events"][0]["functions"][0]["instructions"][0];
    for key in ["address", "bytes", "text", "samples", "period", "percent"] {
        assert!(!insn[key].is_null(), "{key} missing: {insn}");
    }
    let intel = annotated(&["annotate", &f, "-M", "intel"]).unwrap();
    let att = annotated(&["annotate", &f]).unwrap();
    assert!(
        att.contains('%') && !intel.contains("%r"),
        "intel text keeps AT&T registers"
    );
    let raw = annotated(&["annotate", &f, "--asm-raw"]).unwrap();
    let bytes = insn["bytes"].as_str().unwrap();
    assert!(raw.contains(bytes), "--asm-raw does not show {bytes}");
}

#[test]
fn an_unknown_function_or_event_is_an_error() {
    let f = fixture();
    let (code, _, err) = run_perfdata(&["annotate", &f, "no_such_function_here"], None);
    assert_ne!(code, Some(0));
    assert!(err.contains("no samples in no_such_function_here"), "{err}");
    let (code, _, err) = run_perfdata(&["annotate", &f, "--event", "nope"], None);
    assert_ne!(code, Some(0));
    assert!(err.contains("no event named `nope`"), "{err}");
}

#[test]
fn the_html_page_is_self_contained_and_shows_the_json_s_shares() {
    let f = fixture();
    let Some(json) = annotated(&["annotate", &f, "--json"]) else {
        return;
    };
    let html = annotated(&["annotate", &f, "--html"]).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for outside in ["http:", "https:", "<script", " src=", "@import"] {
        assert!(!html.contains(outside), "the page reaches out: {outside}");
    }
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for func in v["events"][0]["functions"].as_array().unwrap() {
        let name = func["symbol"].as_str().unwrap();
        assert!(html.contains(&format!(">{name}</a>")), "{name} not indexed");
        for insn in func["instructions"].as_array().unwrap() {
            let p = insn["percent"].as_f64().unwrap();
            let addr = u64::from_str_radix(&insn["address"].as_str().unwrap()[2..], 16).unwrap();
            if p > 0.0 {
                let cell = format!(">{p:.2}</td><td class=\"a\">{addr:x}:</td>");
                assert!(html.contains(&cell), "{name} {addr:x}: {p:.2} not shown");
            }
        }
    }
    let (code, _, err) = run_perfdata(&["annotate", &f, "--html", "--json"], None);
    assert_ne!(code, Some(0), "--html with --json: {err}");
}

#[test]
fn the_per_line_view_s_shares_add_up_to_each_function_s() {
    let f = fixture();
    let Some(json) = annotated(&["annotate", &f, "--json", "--percent-type", "global-period"])
    else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for ev in v["events"].as_array().unwrap() {
        for func in ev["functions"].as_array().unwrap() {
            let insns = func["instructions"].as_array().unwrap();
            let lines = func["lines"].as_array().unwrap();
            let sum = |v: &[serde_json::Value]| -> f64 {
                v.iter().map(|x| x["percent"].as_f64().unwrap()).sum()
            };
            let name = &func["symbol"];
            assert!(
                (sum(lines) - sum(insns)).abs() < 1e-6,
                "{name}: lines {} != instructions {}",
                sum(lines),
                sum(insns)
            );
            // Every instruction in one line's runs, once.
            let counted: u64 = lines
                .iter()
                .flat_map(|l| l["addresses"].as_array().unwrap())
                .map(|r| r["instructions"].as_u64().unwrap())
                .sum();
            assert_eq!(counted, insns.len() as u64, "{name}");
            let samples: u64 = lines.iter().map(|l| l["samples"].as_u64().unwrap()).sum();
            assert_eq!(samples, func["samples"].as_u64().unwrap(), "{name}");
        }
    }
    // The text: each function's rows add up to 100% (local period).
    let text = annotated(&["annotate", &f, "--by-line"]).unwrap();
    let mut sums: Vec<f64> = vec![];
    for line in text.lines() {
        if line.starts_with("Source lines of ") {
            sums.push(0.0);
        } else if let Some(p) = line
            .split_whitespace()
            .next()
            .filter(|_| line.starts_with(' '))
            .and_then(|w| w.parse::<f64>().ok())
        {
            *sums.last_mut().unwrap() += p;
        }
    }
    assert!(!sums.is_empty(), "{text}");
    for s in sums {
        assert!((s - 100.0).abs() < 0.5, "a function's lines add up to {s}");
    }
}
