//! perf's sample filters, with perf's names and syntax: the options every analysis
//! command shares (`report`, `collapse`, `flamegraph`, `stats`, `export`).

use crate::error::CliError;
use perfdata_analysis::filter::{self, SampleFilter, TimeSpec};

/// Which samples to analyse (perf report's and perf script's filter options).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only these processes (`1234,5678`).
    #[arg(long = "pid", value_name = "PID,...", help_heading = "Filters")]
    pub pids: Option<String>,
    /// Only these threads.
    #[arg(long = "tid", value_name = "TID,...", help_heading = "Filters")]
    pub tids: Option<String>,
    /// Only threads with these names.
    #[arg(
        short = 'c',
        long = "comms",
        alias = "comm",
        value_name = "COMM,...",
        help_heading = "Filters"
    )]
    pub comms: Option<String>,
    /// Only samples in these shared objects (short name, e.g. `libc.so.6`,
    /// `[kernel.kallsyms]`, or full path).
    #[arg(
        short = 'd',
        long = "dsos",
        alias = "dso",
        value_name = "DSO,...",
        help_heading = "Filters"
    )]
    pub dsos: Option<String>,
    /// Only samples in these functions (name, or start address as `0x…`).
    #[arg(
        short = 'S',
        long = "symbols",
        value_name = "SYMBOL,...",
        help_heading = "Filters"
    )]
    pub symbols: Option<String>,
    /// Only samples taken on these CPUs (`0-2,5`).
    #[arg(
        short = 'C',
        long = "cpu",
        value_name = "CPUS",
        help_heading = "Filters"
    )]
    pub cpus: Option<String>,
    /// Only samples in this time window: `start,stop` in seconds (either may be empty;
    /// several ranges separated by spaces), or percentages of the recording's sample
    /// time span: `10%/2` (the second tenth), `0%-10%,30%-40%`, `50%`.
    #[arg(long, value_name = "RANGES", help_heading = "Filters")]
    pub time: Option<String>,
    /// `--time`'s seconds count from the first sample (perf script's `--reltime`; in
    /// `script`, the times printed too).
    #[arg(long, help_heading = "Filters")]
    pub reltime: bool,
}

impl FilterArgs {
    /// The filter of the analysis options; a malformed list is a usage error.
    pub fn filter(&self) -> Result<SampleFilter, CliError> {
        let ids = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|t| filter::parse_ids(flag, t))
                .transpose()
                .map_err(CliError::from)
        };
        Ok(SampleFilter {
            pids: ids("pid", &self.pids)?,
            tids: ids("tid", &self.tids)?,
            comms: self.comms.as_deref().map(filter::parse_names),
            dsos: self.dsos.as_deref().map(filter::parse_names),
            symbols: self.symbols.as_deref().map(filter::parse_names),
            cpus: self.cpus.as_deref().map(filter::parse_cpus).transpose()?,
            time: self
                .time
                .as_deref()
                .map(|t| TimeSpec::parse(t, self.reltime))
                .transpose()?,
        })
    }
}

/// `perf diff`'s spelling of the same filters (`-C` is `--comms` there, `-c` is
/// `--compute`), applied to both recordings; `--time OLD:NEW` gives each its own
/// window.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DiffFilterArgs {
    /// Only these processes, in both recordings.
    #[arg(long = "pid", value_name = "PID,...", help_heading = "Filters")]
    pub pids: Option<String>,
    /// Only these threads, in both recordings.
    #[arg(long = "tid", value_name = "TID,...", help_heading = "Filters")]
    pub tids: Option<String>,
    /// Only threads with these names.
    #[arg(
        short = 'C',
        long = "comms",
        alias = "comm",
        value_name = "COMM,...",
        help_heading = "Filters"
    )]
    pub comms: Option<String>,
    /// Only samples in these shared objects.
    #[arg(
        short = 'd',
        long = "dsos",
        alias = "dso",
        value_name = "DSO,...",
        help_heading = "Filters"
    )]
    pub dsos: Option<String>,
    /// Only samples in these functions.
    #[arg(
        short = 'S',
        long = "symbols",
        value_name = "SYMBOL,...",
        help_heading = "Filters"
    )]
    pub symbols: Option<String>,
    /// Only samples taken on these CPUs (`0-2,5`).
    #[arg(long = "cpu", value_name = "CPUS", help_heading = "Filters")]
    pub cpus: Option<String>,
    /// Only samples in this time window, as report's `--time`; `OLD:NEW` (perf diff's
    /// `a.b,c.d:e.f,g.h`) gives each recording its own.
    #[arg(long, value_name = "RANGES", help_heading = "Filters")]
    pub time: Option<String>,
}

impl DiffFilterArgs {
    /// The filters of the baseline and of the new recording.
    pub fn filters(&self) -> Result<(SampleFilter, SampleFilter), CliError> {
        let (old_time, new_time) = match self.time.as_deref().map(|t| t.split_once(':')) {
            None => (None, None),
            Some(None) => (self.time.clone(), self.time.clone()),
            Some(Some((o, n))) if !o.is_empty() && !n.is_empty() && !n.contains(':') => {
                (Some(o.to_string()), Some(n.to_string()))
            }
            Some(Some(_)) => {
                return Err(CliError::usage(format!(
                    "--time {}: OLD:NEW takes one window list for each recording",
                    self.time.as_deref().unwrap_or_default()
                )))
            }
        };
        let one = |time: Option<String>| {
            FilterArgs {
                pids: self.pids.clone(),
                tids: self.tids.clone(),
                comms: self.comms.clone(),
                dsos: self.dsos.clone(),
                symbols: self.symbols.clone(),
                cpus: self.cpus.clone(),
                time,
                reltime: false,
            }
            .filter()
        };
        Ok((one(old_time)?, one(new_time)?))
    }
}
