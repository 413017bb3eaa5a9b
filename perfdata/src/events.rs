//! Event names: what perf calls each event of a recording (EVENT_DESC, else perf's
//! name for the attr's type and config). The format layer names events for the dump,
//! the gperftools conversion and every analysis, so it lives here.

use crate::types::{AttrType, EventDesc, FeatureBody, FeatureId};
use crate::PerfData;

/// Event names by attr index: EVENT_DESC (matched by id), else perf's name for the attr
/// type and config.
pub fn event_names(data: &PerfData<'_>) -> Vec<String> {
    let attrs = &data.session.attrs;
    let mut names: Vec<Option<String>> = vec![None; attrs.len()];
    for f in &data.features {
        if f.id != FeatureId::EVENT_DESC {
            continue;
        }
        if let Ok(FeatureBody::EventDesc(d)) = data.feature(f) {
            for (at, name) in
                described_events(&d, |id| attrs.iter().position(|a| a.ids.contains(&id)))
            {
                if let Some(slot) = names.get_mut(at) {
                    *slot = Some(name);
                }
            }
        }
    }
    names
        .into_iter()
        .zip(attrs)
        .map(|(n, a)| n.unwrap_or_else(|| default_event_name(a.attr.type_, a.attr.config)))
        .collect()
}

/// The attr index and name of each event an EVENT_DESC describes: the attr holding one of
/// its ids (`index_of`), else, for an event listed without ids, its position.
pub fn described_events<'d>(
    d: &'d EventDesc<'_>,
    index_of: impl Fn(u64) -> Option<usize> + 'd,
) -> impl Iterator<Item = (usize, String)> + 'd {
    d.events.iter().enumerate().filter_map(move |(i, e)| {
        let at = e
            .ids
            .iter()
            .find_map(&index_of)
            .or(e.ids.is_empty().then_some(i))?;
        Some((at, e.name.text.to_str_lossy().into_owned()))
    })
}

/// perf's names for the generic hardware and software events.
pub fn default_event_name(ty: AttrType, config: u64) -> String {
    const HW: [&str; 10] = [
        "cycles",
        "instructions",
        "cache-references",
        "cache-misses",
        "branches",
        "branch-misses",
        "bus-cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "ref-cycles",
    ];
    const SW: [&str; 12] = [
        "cpu-clock",
        "task-clock",
        "page-faults",
        "context-switches",
        "cpu-migrations",
        "minor-faults",
        "major-faults",
        "alignment-faults",
        "emulation-faults",
        "dummy",
        "bpf-output",
        "cgroup-switches",
    ];
    let table: &[&str] = match ty {
        AttrType::HARDWARE => &HW,
        AttrType::SOFTWARE => &SW,
        _ => &[],
    };
    match table.get(config as usize) {
        Some(n) => n.to_string(),
        None => format!("{}/{config:#x}", ty.0),
    }
}
