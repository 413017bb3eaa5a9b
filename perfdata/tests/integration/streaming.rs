//! Pipe-mode streams read from any `Read` give exactly what the in-memory reader gives,
//! however the input is chunked, with memory bounded by one record (plus one compressed
//! chunk's carry-over) whatever the stream's length.

use crate::common;
use common::fixture;

use perfdata::{Origin, PerfData, PipeReader};
use std::io::Read;
use std::path::PathBuf;

type Seen = Vec<(Origin, u64, u32, Vec<u8>, Vec<u8>, String)>;

/// The context matters for kernel records; for perf's own records in the prologue the
/// stream cannot know yet what the in-memory reader learnt from the whole input (NRCPUS).
fn ctx_text(ty: u32, ctx: &perfdata::types::Ctx) -> String {
    if ty < 64 {
        format!("{ctx:?}")
    } else {
        String::new()
    }
}

fn in_memory(bytes: &[u8]) -> (Seen, Option<String>) {
    let data = PerfData::open(bytes).unwrap();
    let mut v = vec![];
    let r = data.for_each_record(&mut |origin, rec, ctx| {
        v.push((
            origin,
            rec.offset,
            rec.header.type_,
            rec.body.to_vec(),
            rec.payload.to_vec(),
            ctx_text(rec.header.type_, ctx),
        ));
        Ok(true)
    });
    (v, r.err().map(|e| e.to_string()))
}

fn streamed(r: impl Read) -> (Seen, Option<String>) {
    let mut reader = PipeReader::new(r).unwrap();
    let mut v = vec![];
    loop {
        match reader.next_record() {
            Ok(Some(rec)) => v.push((
                rec.origin,
                rec.raw.offset,
                rec.raw.header.type_,
                rec.raw.body.to_vec(),
                rec.raw.payload.to_vec(),
                ctx_text(rec.raw.header.type_, &rec.ctx),
            )),
            Ok(None) => return (v, None),
            Err(e) => return (v, Some(e.to_string())),
        }
    }
}

/// A reader that hands out at most `n` bytes per call.
struct Trickle<'a> {
    bytes: &'a [u8],
    n: usize,
}
impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.n.min(buf.len()).min(self.bytes.len());
        buf[..k].copy_from_slice(&self.bytes[..k]);
        self.bytes = &self.bytes[k..];
        Ok(k)
    }
}

fn pipe_inputs() -> Vec<PathBuf> {
    let mut v = vec![
        common::fixture_path("pipe-callchain.pipe.data"),
        common::fixture_path("pipe-tracepoint.pipe.data"),
    ];
    if let Some(corpus) = common::corpus_dir() {
        for n in [
            "contentsize.data",
            "fibo.compressed2.pipe.data",
            "probe.data.stream",
            "sleep.compressed.pipe.data",
        ] {
            v.push(corpus.join(n));
        }
    }
    v
}

#[test]
fn streaming_equals_in_memory_for_every_chunking() {
    for path in pipe_inputs() {
        let bytes = std::fs::read(&path).unwrap();
        let want = in_memory(&bytes);
        assert!(want.0.len() > 10, "{}", path.display());
        for n in [1, 7, 4096, usize::MAX] {
            let got = streamed(Trickle { bytes: &bytes, n });
            assert!(
                got.0 == want.0,
                "{} (chunks of {n}): records differ",
                path.display()
            );
            assert_eq!(
                got.1.is_some(),
                want.1.is_some(),
                "{} (chunks of {n}): errors differ",
                path.display()
            );
        }
    }
}

#[test]
fn a_stream_that_breaks_off_reports_where() {
    let bytes = std::fs::read(common::fixture_path("pipe-callchain.pipe.data")).unwrap();
    let (all, _) = streamed(&bytes[..]);
    let cut = &bytes[..bytes.len() - 3];
    let (got, err) = streamed(cut);
    assert_eq!(got.len(), all.len() - 1);
    let err = err.expect("cut stream");
    assert!(
        err.contains("unexpected end") && err.contains("0x"),
        "{err}"
    );
}

/// An endless-looking stream: the pipe prologue once, then the data records of a real
/// stream repeated `times` times (about 50 MB in all).
struct Repeating {
    head: Vec<u8>,
    body: Vec<u8>,
    times: usize,
    pos: usize,
}
impl Read for Repeating {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let total = self.head.len() + self.body.len() * self.times;
        if self.pos >= total {
            return Ok(0);
        }
        let (src, at) = if self.pos < self.head.len() {
            (&self.head, self.pos)
        } else {
            (&self.body, (self.pos - self.head.len()) % self.body.len())
        };
        let k = buf.len().min(src.len() - at);
        buf[..k].copy_from_slice(&src[at..at + k]);
        self.pos += k;
        Ok(k)
    }
}

#[test]
fn memory_stays_bounded_on_a_long_stream() {
    let bytes = std::fs::read(common::fixture_path("pipe-callchain.pipe.data")).unwrap();
    // Split after FINISHED_INIT: the prologue once, the rest many times.
    let (seen, _) = in_memory(&bytes);
    let init = seen.iter().find(|r| r.2 == 82).expect("FINISHED_INIT").1 as usize + 8;
    let times = 50_000_000 / (bytes.len() - init);
    let input = Repeating {
        head: bytes[..init].to_vec(),
        body: bytes[init..].to_vec(),
        times,
        pos: 0,
    };
    let mut reader = PipeReader::new(input).unwrap();
    let (mut n, mut peak) = (0u64, 0usize);
    while let Some(_rec) = reader.next_record().unwrap() {
        n += 1;
        peak = peak.max(reader.buffered_bytes());
    }
    assert!(n > 100_000, "only {n} records");
    assert!(peak <= 1 << 20, "held {peak} bytes at once");
}

#[test]
fn streamed_sample_views_equal_in_memory_views() {
    type Seen = Vec<(Option<u64>, Option<u64>, usize)>;
    for path in pipe_inputs() {
        let bytes = std::fs::read(&path).unwrap();
        let data = PerfData::open(&bytes).unwrap();
        let mut want: Seen = vec![];
        data.for_each_record(&mut |_, rec, ctx| {
            if let Some(s) = data.sample(&rec, ctx)? {
                let chain = s.callchain()?.map_or(0, |c| c.ips.len());
                want.push((s.ip(), s.time(), chain));
            }
            Ok(true)
        })
        .unwrap();
        let mut reader = PipeReader::new(Trickle {
            bytes: &bytes,
            n: 7,
        })
        .unwrap();
        let mut got: Seen = vec![];
        while let Some(rec) = reader.next_record().unwrap() {
            if let Some(s) = rec.sample().unwrap() {
                let chain = s.callchain().unwrap().map_or(0, |c| c.ips.len());
                got.push((s.ip(), s.time(), chain));
            }
        }
        assert!(!want.is_empty(), "{}: no samples", path.display());
        assert_eq!(got, want, "{}", path.display());
    }
}

/// Errors speak of the input, never of the library's types, and name the record they are
/// about by index and type (`?` only when not even its header could be read).
#[test]
fn errors_name_the_record_and_no_library_type() {
    let file = fixture("plain.data");
    let e = PipeReader::new(&file[..]).err().unwrap().to_string();
    assert!(e.contains("a file-layout perf.data"), "{e}");
    for library_name in ["PerfData", "PipeReader", "Recording"] {
        assert!(!e.contains(library_name), "{e}");
    }

    let pipe = fixture("pipe-callchain.pipe.data");
    let data = PerfData::open(&pipe).unwrap();
    let mut records = vec![];
    data.for_each_record(&mut |_, r, _| {
        records.push((r.offset as usize, r.record_type()));
        Ok(true)
    })
    .unwrap();
    let (at, ty) = records[20];
    let name = ty.name().unwrap();
    // A zero size: the header is readable, so the type is known.
    let mut zero = pipe.clone();
    zero[at + 6..at + 8].copy_from_slice(&[0, 0]);
    let walk = |bytes: &[u8]| {
        PerfData::open(bytes)
            .unwrap()
            .for_each_record(&mut |_, _, _| Ok(true))
            .unwrap_err()
            .to_string()
    };
    let stream = |bytes: &[u8]| {
        let mut r = PipeReader::new(bytes).unwrap();
        loop {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("no error"),
                Err(e) => return e.to_string(),
            }
        }
    };
    let want = format!("(record #20, {name})");
    assert!(walk(&zero).contains(&want), "{}", walk(&zero));
    assert!(stream(&zero).contains(&want), "{}", stream(&zero));
    // An unknown type is named as the dump names it.
    let mut unknown = zero.clone();
    unknown[at..at + 4].copy_from_slice(&0x4142_4344u32.to_le_bytes());
    let e = walk(&unknown);
    assert!(e.contains("(record #20, UNKNOWN(1094861636))"), "{e}");
    // A header cut short: no type to name.
    let cut = &pipe[..at + 5];
    let e = walk(cut);
    assert!(e.contains("(record #20, ?)"), "{e}");
}
