//! Who made a recording, where and how: the features that say so (perf's VERSION,
//! HOSTNAME, ARCH, OSRELEASE, CMDLINE, COMPRESSED; simpleperf's META_INFO), read once
//! for `info`, the tables' metadata and the viewers' profiles.

use perfdata::types::FeatureBody;

/// A recording's producer, as its features say.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Producer {
    /// The perf that recorded it (VERSION feature).
    pub perf_version: Option<String>,
    /// HOSTNAME feature.
    pub hostname: Option<String>,
    /// The simpleperf that recorded it (its META_INFO feature's `simpleperf_version`),
    /// when simpleperf did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simpleperf_version: Option<String>,
    /// What simpleperf's META_INFO says of the device and the recording (Android
    /// version, product, app, clock), `key=value` in that order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub simpleperf_meta: Vec<String>,
    /// ARCH feature (`uname -m`).
    pub arch: Option<String>,
    /// The kernel release (OSRELEASE feature, `uname -r`).
    pub kernel: Option<String>,
    /// The `perf record` command line (CMDLINE feature), arguments joined by spaces.
    pub command_line: Option<String>,
    /// Compression (the COMPRESSED feature): "zstd level N, ratio R".
    pub compression: Option<String>,
}

/// The META_INFO keys `info` shows, in this order (what `simpleperf record` writes about
/// the device, the app and the clock).
const SIMPLEPERF_META_SHOWN: &[&str] = &[
    "product_props",
    "android_version",
    "android_build_type",
    "app_package_name",
    "app_type",
    "system_wide_collection",
    "trace_offcpu",
    "clockid",
];

impl Producer {
    /// The recording's producer, from its features.
    pub fn of(data: &perfdata::PerfData<'_>) -> Producer {
        let mut out = Producer::default();
        let text = |s: &perfdata::types::PerfString<'_>| s.text.to_str_lossy().into_owned();
        for f in &data.features {
            match data.feature(f) {
                Ok(FeatureBody::Version(v)) => out.perf_version = Some(text(&v.value)),
                Ok(FeatureBody::Hostname(v)) => out.hostname = Some(text(&v.value)),
                Ok(FeatureBody::Arch(v)) => out.arch = Some(text(&v.value)),
                Ok(FeatureBody::Osrelease(v)) => out.kernel = Some(text(&v.value)),
                Ok(FeatureBody::Cmdline(c)) => {
                    out.command_line = Some(c.args.iter().map(text).collect::<Vec<_>>().join(" "))
                }
                Ok(FeatureBody::SimpleperfMetaInfo(m)) => {
                    let value = |key: &str| {
                        m.entries
                            .iter()
                            .find(|e| e.key.text() == key.as_bytes())
                            .map(|e| e.value.to_str_lossy().into_owned())
                    };
                    out.simpleperf_version = value("simpleperf_version");
                    out.simpleperf_meta = SIMPLEPERF_META_SHOWN
                        .iter()
                        .filter_map(|k| value(k).map(|v| format!("{k}={v}")))
                        .collect();
                }
                Ok(FeatureBody::CompressedFeature(c)) => {
                    out.compression = Some(format!(
                        "{} level {}, ratio {}",
                        c.comp_type.name().unwrap_or("unknown").to_lowercase(),
                        c.comp_level,
                        c.comp_ratio
                    ))
                }
                _ => {}
            }
        }
        out
    }
}
