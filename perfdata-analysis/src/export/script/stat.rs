//! `perf stat record`'s counts, as perf script prints them (`__process_stat`): the
//! THREAD_MAP's threads, each STAT record's values, a table at each STAT_ROUND.

use perfdata::types::RecordBody;
use perfdata::Session;
use std::io::Write;

/// What `perf stat record`'s counts need between records.
#[derive(Debug, Default)]
pub(super) struct StatCounts {
    pids: Vec<i64>,
    values: Vec<StatValue>,
    header_printed: bool,
}

#[derive(Debug, Clone, Copy)]
struct StatValue {
    event: usize,
    cpu: i64,
    pid: i64,
    val: u64,
    ena: u64,
    run: u64,
}

impl StatCounts {
    /// Takes a THREAD_MAP, STAT or STAT_ROUND record; prints the counts at a STAT_ROUND.
    pub(super) fn record(
        &mut self,
        body: &RecordBody<'_>,
        session: &Session<'_>,
        events: &[String],
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        match body {
            RecordBody::ThreadMap(m) => {
                self.pids = m.entries.iter().map(|e| e.pid as i64).collect();
            }
            RecordBody::Stat(st) => {
                let event = session.attr_of_id(st.id).unwrap_or(0);
                let cpu = if st.cpu == u32::MAX {
                    -1
                } else {
                    st.cpu as i64
                };
                let pid = self.pids.get(st.thread as usize).copied().unwrap_or(-1);
                let values = &mut self.values;
                match values
                    .iter_mut()
                    .find(|v| (v.event, v.cpu, v.pid) == (event, cpu, pid))
                {
                    Some(v) => (v.val, v.ena, v.run) = (st.val, st.ena, st.run),
                    None => values.push(StatValue {
                        event,
                        cpu,
                        pid,
                        val: st.val,
                        ena: st.ena,
                        run: st.run,
                    }),
                }
            }
            RecordBody::StatRound(r) => {
                if !self.header_printed {
                    writeln!(
                        out,
                        "{:>3} {:>8} {:>15} {:>15} {:>15} {:>15} EVENT",
                        "CPU", "THREAD", "VAL", "ENA", "RUN", "TIME"
                    )?;
                    self.header_printed = true;
                }
                let mut values = self.values.clone();
                values.sort_by_key(|v| v.event);
                for v in values {
                    writeln!(
                        out,
                        "{:3} {:8} {:15} {:15} {:15} {:15} {}",
                        v.cpu,
                        v.pid,
                        v.val,
                        v.ena,
                        v.run,
                        r.time,
                        events.get(v.event).map_or("", String::as_str)
                    )?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}
