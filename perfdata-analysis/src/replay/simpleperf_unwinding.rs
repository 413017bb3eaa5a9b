//! What simpleperf's unwinding left in the data, as the replay meets it: CALLCHAIN
//! records (32775) handed to the samples they belong to, and UNWINDING_RESULT records
//! (32776) counted by error code for one note.
//!
//! **CALLCHAIN.** `simpleperf debug-unwind` writes, before each sample whose user stack it
//! unwound, the chains its `CallChainJoiner` gave for it — the original one(s), then the
//! joined one last (`do { … WriteRecord(CallChainRecord(pid, tid, type, sr.Timestamp(),
//! ips, sps)) } while (type != JOINED_OFFLINE)`) — and then the sample itself, after
//! `sr.UpdateUserCallChain(ips)`: the sample's kernel part (everything before its
//! `PERF_CONTEXT_USER`) kept, the user part replaced by the last chain's ips. So a sample
//! takes the ips of the last CALLCHAIN with its pid, tid and time as its user part
//! ([`crate::Machine::stack`] stitches them after its own kernel part).
//!
//! The records are matched by (pid, tid, time), not by being next to the sample: a
//! CALLCHAIN has no sample_id trailer, so the time-ordered replay delivers it as it comes
//! while samples wait for their round — in a simpleperf file (no FINISHED_ROUND) every
//! CALLCHAIN comes before every sample. Chains wait here until their sample comes, which
//! holds at most the CALLCHAIN records' ips (their size bounded by the records' own size,
//! the decoding checks each count against the bytes there). A later CALLCHAIN with the
//! same key replaces an earlier one, as the joined chain replaces the original one in
//! simpleperf. A chain no sample takes is not used and counted for a note: simpleperf
//! writes none without its sample, so one left over says the file was cut or edited.
//!
//! **UNWINDING_RESULT.** `simpleperf record --keep-failed-unwinding-result` writes one
//! before each sample whose unwinding failed (`KeepFailedUnwindingResult`, only when
//! `result.error_code != unwindstack::ERROR_NONE`). They are counted per error code for
//! one note. The ips a newer record carries are *not* used: record wrote the sample with
//! the same ips (`KeepFailedUnwindingResult(r, ips, sps); r.ReplaceRegAndStackWithCallChain
//! (ips);` in `RecordCommand::UnwindRecord`), and the callchain joiner may have lengthened
//! the sample's chain since; the record has no pid or tid to match a sample by either.

use perfdata::types::{CallchainContext, UnwindstackErrorCode};
use perfdata::types::{RecordBody, SimpleperfCallchain, SimpleperfUnwindingResult};
use std::collections::{BTreeMap, HashMap};

/// The state of one replay: chains waiting for their samples, unwinding failures seen.
#[derive(Debug, Default)]
pub(crate) struct SimpleperfUnwinding {
    /// The last CALLCHAIN's user ips by (pid, tid, time), until a sample takes them.
    waiting: HashMap<(i32, i32, u64), Vec<u64>>,
    /// UNWINDING_RESULT records by error code (`Err`: an older record's stop reason).
    failures: BTreeMap<Result<u64, u64>, u64>,
    /// CALLCHAIN or UNWINDING_RESULT records that could not be decoded: how many, and
    /// the first one's error.
    undecodable: (u64, Option<String>),
}

impl SimpleperfUnwinding {
    /// Forgets everything (a new replay).
    pub fn reset(&mut self) {
        self.waiting.clear();
        self.failures.clear();
        self.undecodable = (0, None);
    }

    /// Takes note of a CALLCHAIN or UNWINDING_RESULT record that could not be decoded
    /// (it is left out; a note says so).
    pub fn undecodable(&mut self, e: perfdata::Error) {
        self.undecodable.0 += 1;
        self.undecodable.1.get_or_insert_with(|| e.to_string());
    }

    /// Takes note of a decoded record: a CALLCHAIN waits for its sample, an
    /// UNWINDING_RESULT is counted; other records are not looked at.
    pub fn on_record(&mut self, body: &RecordBody<'_>) {
        match body {
            RecordBody::SimpleperfCallchain(c) => self.on_callchain(c),
            RecordBody::SimpleperfUnwindingResult(u) => self.on_unwinding_result(u),
            _ => {}
        }
    }

    fn on_callchain(&mut self, c: &SimpleperfCallchain<'_>) {
        // The user frames only: debug-unwind's chains hold none of perf's context
        // markers, but a marker in a crafted or damaged one must not become a frame.
        let ips = c
            .ips
            .iter()
            .filter(|&ip| ip < CallchainContext::MAX.0)
            .collect();
        self.waiting
            .insert((c.pid as i32, c.tid as i32, c.time), ips);
    }

    fn on_unwinding_result(&mut self, u: &SimpleperfUnwindingResult<'_>) {
        // Older simpleperf wrote six fields only, the third its own unwinder's stop
        // reason rather than libunwindstack's error code.
        let code = match u.details {
            Some(_) => Ok(u.error_code),
            None => Err(u.error_code),
        };
        *self.failures.entry(code).or_insert(0) += 1;
    }

    /// The user ips of the CALLCHAIN for the sample of thread `tid` of `pid` at `time`,
    /// if one is waiting (it is taken: one chain, one sample).
    #[inline]
    pub fn take(&mut self, pid: i32, tid: i32, time: Option<u64>) -> Option<Vec<u64>> {
        if self.waiting.is_empty() {
            return None;
        }
        self.waiting.remove(&(pid, tid, time?))
    }

    /// What the replay should say: the unwinding failures simpleperf recorded, and the
    /// CALLCHAIN records no sample took.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = vec![];
        if let (n @ 1.., Some(first)) = &self.undecodable {
            notes.push(format!(
                "{n} simpleperf CALLCHAIN or UNWINDING_RESULT record{} could not be decoded and {} left out (the first: {first})",
                plural(*n),
                if *n == 1 { "is" } else { "are" }
            ));
        }
        let failed: u64 = self.failures.values().sum();
        if failed > 0 {
            let per_code: Vec<String> = self
                .failures
                .iter()
                .map(|(code, n)| match code {
                    Ok(c) => match UnwindstackErrorCode(*c).name() {
                        Some(name) => format!("{n} {name}"),
                        None => format!("{n} with error code {c}"),
                    },
                    Err(reason) => format!("{n} with stop reason {reason} (older simpleperf)"),
                })
                .collect();
            notes.push(format!(
                "simpleperf could not unwind {failed} sample{} when recording (UNWINDING_RESULT records): {}",
                plural(failed),
                per_code.join(", ")
            ));
        }
        let left = self.waiting.len() as u64;
        if left > 0 {
            notes.push(format!(
                "{left} simpleperf CALLCHAIN record{} matched no sample (same pid, tid and time): {} not used",
                plural(left),
                if left == 1 { "its call chain is" } else { "their call chains are" }
            ));
        }
        notes
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata::types::SimpleperfUnwindingDetails;

    fn callchain(pid: u32, tid: u32, time: u64, ips: Vec<u64>) -> RecordBody<'static> {
        RecordBody::SimpleperfCallchain(SimpleperfCallchain {
            pid,
            tid,
            time,
            sps: vec![0; ips.len()].into(),
            ips: ips.into(),
            ..Default::default()
        })
    }

    #[test]
    fn the_last_chain_of_a_sample_is_taken_once_and_the_others_are_noted() {
        let mut u = SimpleperfUnwinding::default();
        u.on_record(&callchain(7, 8, 100, vec![1, 2]));
        u.on_record(&callchain(7, 8, 100, vec![3, CallchainContext::USER.0, 4]));
        u.on_record(&callchain(7, 9, 100, vec![5]));
        assert_eq!(u.take(7, 8, None), None);
        assert_eq!(u.take(7, 8, Some(101)), None);
        assert_eq!(u.take(7, 8, Some(100)), Some(vec![3, 4]));
        assert_eq!(u.take(7, 8, Some(100)), None);
        assert_eq!(
            u.notes(),
            ["1 simpleperf CALLCHAIN record matched no sample (same pid, tid and time): its call chain is not used"]
        );
    }

    #[test]
    fn a_callchain_claiming_more_frames_than_its_bytes_is_refused_and_noted() {
        // pid, tid, chain_type, time, then ip_nr = u64::MAX and one word: the decoding
        // checks the count against the bytes left before it takes any.
        let mut body = vec![];
        for w in [7u32, 8] {
            body.extend(w.to_le_bytes());
        }
        for w in [2u64, 100, u64::MAX, 0x1000] {
            body.extend(w.to_le_bytes());
        }
        let e = perfdata::decode_body(
            perfdata::Endianness::Little,
            perfdata::types::RecordType::SIMPLEPERF_CALLCHAIN,
            &body,
            0,
            &perfdata::types::Ctx::default(),
        )
        .unwrap_err();
        let mut u = SimpleperfUnwinding::default();
        u.undecodable(e);
        let notes = u.notes();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with(
                "1 simpleperf CALLCHAIN or UNWINDING_RESULT record could not be decoded and is left out"
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn unwinding_failures_are_counted_by_error_code() {
        let mut u = SimpleperfUnwinding::default();
        let result = |code, details: bool| {
            RecordBody::SimpleperfUnwindingResult(SimpleperfUnwindingResult {
                error_code: code,
                details: details.then(SimpleperfUnwindingDetails::default),
                ..Default::default()
            })
        };
        for (code, details) in [(1, true), (4, true), (1, true), (42, true), (3, false)] {
            u.on_record(&result(code, details));
        }
        assert_eq!(
            u.notes(),
            ["simpleperf could not unwind 5 samples when recording (UNWINDING_RESULT records): \
              2 MEMORY_INVALID, 1 INVALID_MAP, 1 with error code 42, 1 with stop reason 3 (older simpleperf)"]
        );
        u.reset();
        assert!(u.notes().is_empty());
    }
}
