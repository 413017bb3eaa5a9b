//! The rows of a performance table: what each compares and requires, rendered in
//! markdown with the verdict.

use super::runner::Measured;
use anyhow::Result;
use std::collections::HashMap;
use std::fmt::Write as _;

/// "RSS bounded": peak anonymous RSS at most this, whatever the input size.
pub(super) const RSS_BOUND_KIB: u64 = 64 * 1024;

#[derive(Clone, Copy)]
pub(super) enum Speed {
    /// peer time / our time at least this.
    FasterThanPeer(f64),
    /// our time / peer time at most this.
    AtMostPeerTimes(f64),
    /// MB of input per second at least this.
    AtLeastMBps(f64),
    /// Our time at most this many seconds.
    AtMostSeconds(f64),
    /// The ratio to the peer shown, with no target.
    ComparedToPeer,
    None,
}

#[derive(Clone)]
pub(super) struct Row {
    pub(super) work: &'static str,
    pub(super) ours: &'static str,
    pub(super) peer: Option<&'static str>,
    pub(super) speed: Speed,
    pub(super) rss_bounded: bool,
    /// Report MB/s and samples/s.
    pub(super) decode: bool,
}

impl Row {
    pub(super) fn new(work: &'static str, ours: &'static str) -> Self {
        Row {
            work,
            ours,
            peer: None,
            speed: Speed::None,
            rss_bounded: false,
            decode: false,
        }
    }
    pub(super) fn peer(self, peer: &'static str, speed: Speed) -> Self {
        Row {
            peer: Some(peer),
            speed,
            ..self
        }
    }
    pub(super) fn speed(self, speed: Speed) -> Self {
        Row { speed, ..self }
    }
    pub(super) fn rss_bounded(self) -> Self {
        Row {
            rss_bounded: true,
            ..self
        }
    }
    pub(super) fn decode(self) -> Self {
        Row {
            decode: true,
            ..self
        }
    }
}

/// The markdown table of `rows`, from the measured `results`; MB/s and samples/s of
/// the `decode` rows are of an input of `input_bytes` holding `samples` samples.
pub(super) fn render(
    rows: &[Row],
    results: &HashMap<&str, Measured>,
    input_bytes: u64,
    samples: u64,
) -> Result<String> {
    let mut md = String::from(
        "| work | ours (s) | peer (s) | ratio | target | met? | peak RSS (MiB) | peak anon RSS (MiB) | MB/s | samples/s |\n\
         |---|---:|---:|---:|---|---|---:|---:|---:|---:|\n",
    );
    for row in rows {
        let ours = &results[row.ours];
        let peer = row.peer.and_then(|p| results.get(p).map(|m| (p, m)));
        let t = ours.wall.as_secs_f64();
        let (ratio, speed_met) = match (row.speed, peer) {
            (Speed::FasterThanPeer(_) | Speed::ComparedToPeer, Some((_, p))) => {
                let r = p.wall.as_secs_f64() / t;
                let ratio = if r >= 1.0 {
                    format!("{r:.1}× faster")
                } else {
                    format!("{:.1}× slower", 1.0 / r)
                };
                match row.speed {
                    Speed::FasterThanPeer(min) => (ratio, Some(r >= min)),
                    _ => (ratio, None),
                }
            }
            (Speed::AtMostPeerTimes(max), Some((_, p))) => {
                let r = t / p.wall.as_secs_f64();
                (format!("{r:.2}× {}", peer_name(row.peer)), Some(r <= max))
            }
            (Speed::AtLeastMBps(min), _) => {
                let r = input_bytes as f64 / 1e6 / t;
                (format!("{r:.0} MB/s"), Some(r >= min))
            }
            (Speed::AtMostSeconds(max), _) => ("—".into(), Some(t <= max)),
            _ => ("—".into(), None),
        };
        let mut target = match row.speed {
            Speed::FasterThanPeer(x) => format!("≥ {x}× faster"),
            Speed::AtMostPeerTimes(x) => format!("≤ {x}× {}", peer_name(row.peer)),
            Speed::AtLeastMBps(x) => format!("≥ {x} MB/s"),
            Speed::AtMostSeconds(x) => format!("≤ {x} s"),
            Speed::ComparedToPeer | Speed::None => String::new(),
        };
        let rss_met = row
            .rss_bounded
            .then_some(ours.max_anon_kib <= RSS_BOUND_KIB);
        if row.rss_bounded {
            target += if target.is_empty() {
                "RSS bounded"
            } else {
                ", RSS bounded"
            };
        }
        let met = match (row.speed, speed_met, rss_met) {
            (Speed::None | Speed::ComparedToPeer, _, Some(r)) => yes_no(r),
            (Speed::ComparedToPeer, None, None) => "—".into(),
            (_, None, _) => "n/a (no peer)".into(),
            (_, Some(s), r) => yes_no(s && r.unwrap_or(true)),
        };
        let (mbs, sps) = if row.decode {
            (
                format!("{:.0}", input_bytes as f64 / 1e6 / t),
                format!("{:.1} M", samples as f64 / 1e6 / t),
            )
        } else {
            (String::new(), String::new())
        };
        let peer_time = peer.map_or("—".into(), |(_, p)| {
            format!("{:.3}", p.wall.as_secs_f64())
        });
        writeln!(
            md,
            "| {} | {:.3} | {} | {} | {} | {} | {:.1} | {:.1} | {} | {} |",
            row.work,
            t,
            peer_time,
            ratio,
            target,
            met,
            ours.max_rss_kib as f64 / 1024.0,
            ours.max_anon_kib as f64 / 1024.0,
            mbs,
            sps
        )?;
    }
    Ok(md)
}

pub(super) fn peer_name(peer: Option<&str>) -> &'static str {
    match peer {
        Some("scan") => "the scan",
        Some("cp") => "cp",
        Some("convert") => "copy-through",
        Some("gp-go") => "go tool pprof",
        _ => "the peer",
    }
}

pub(super) fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}
