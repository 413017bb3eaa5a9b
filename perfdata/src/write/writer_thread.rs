//! A file written on another thread: the writer fills buffers and hands each full one
//! over, and a thread copies them into the file. A streaming conversion that re-encodes
//! every record spends a third of its time in `write(2)` (the kernel copying into the
//! page cache); with the copy on the second core, encoding goes on meanwhile.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// What the thread is asked to do, in order.
enum Op {
    Write(Vec<u8>),
    Seek(u64),
}

/// [`Write`] and [`Seek`] over a file, the bytes written by another thread (see the
/// module's documentation). Positions are the writer's own: a seek is queued behind the
/// buffers before it, so the file sees every operation in the order it was made.
/// [`WriterThread::finish`] waits for the thread and returns its first error; an error
/// also shows at the next buffer handed over.
pub(crate) struct WriterThread {
    buf: Vec<u8>,
    /// Where `buf[0]` goes in the file.
    base: u64,
    ops: Option<SyncSender<Op>>,
    /// Buffers the thread has written, to fill again.
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl WriterThread {
    /// The size of a buffer handed over.
    const BUF: usize = 1 << 20;
    /// Buffers queued for the thread at most: the memory is bounded, whatever the
    /// file's size.
    const QUEUED: usize = 4;

    /// Writes to `file` from its current position on. `file` may be a clone of another
    /// handle (`File::try_clone`): they share the position, which is where this writer's
    /// last operation left it once [`WriterThread::finish`] returns.
    pub(crate) fn new(mut file: std::fs::File) -> io::Result<Self> {
        let base = file.stream_position()?;
        let (ops, todo) = sync_channel::<Op>(Self::QUEUED);
        let (give_back, spare) = sync_channel::<Vec<u8>>(Self::QUEUED + 1);
        let thread = std::thread::Builder::new()
            .name("perfdata-write".into())
            .spawn(move || {
                for op in todo {
                    match op {
                        Op::Write(mut b) => {
                            file.write_all(&b)?;
                            b.clear();
                            let _ = give_back.try_send(b);
                        }
                        Op::Seek(to) => {
                            file.seek(SeekFrom::Start(to))?;
                        }
                    }
                }
                Ok(())
            })?;
        Ok(WriterThread {
            buf: Vec::with_capacity(Self::BUF),
            base,
            ops: Some(ops),
            spare,
            thread: Some(thread),
        })
    }

    /// Hands `op` to the thread; the thread's error if it has stopped.
    fn send(&mut self, op: Op) -> io::Result<()> {
        let sent = self.ops.as_ref().map(|ops| ops.send(op).is_ok());
        if sent == Some(true) {
            return Ok(());
        }
        // The thread has stopped: only an error stops it while we still send.
        self.ops = None;
        match self.join() {
            Err(e) => Err(e),
            Ok(()) => Err(io::Error::other("the writing thread stopped")),
        }
    }

    /// Hands the buffer over (if it holds anything) and takes a spare one.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(Self::BUF));
        let full = std::mem::replace(&mut self.buf, next);
        self.base += full.len() as u64;
        self.send(Op::Write(full))
    }

    /// Waits for the thread: its result (once; `Ok` after that).
    fn join(&mut self) -> io::Result<()> {
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the writing thread panicked")),
        }
    }

    /// Writes what is buffered, waits until the thread has written everything, and
    /// returns the first error it met.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.hand_over()?;
        self.ops = None;
        self.join()
    }
}

impl Write for WriterThread {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.buf.len() + bytes.len() > Self::BUF {
            self.hand_over()?;
            if bytes.len() > Self::BUF {
                self.base += bytes.len() as u64;
                return self.send(Op::Write(bytes.to_vec()));
            }
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Hands the buffer over; the bytes are in the file once [`WriterThread::finish`]
    /// returns.
    fn flush(&mut self) -> io::Result<()> {
        self.hand_over()
    }
}

impl Seek for WriterThread {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let here = self.base + self.buf.len() as u64;
        let to = match pos {
            SeekFrom::Start(to) => to,
            SeekFrom::Current(by) => here.checked_add_signed(by).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek before the file's start")
            })?,
            // The file's length is the thread's to know: nothing here needs it.
            SeekFrom::End(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "a file written on another thread cannot seek from its end",
                ))
            }
        };
        if to != here {
            self.hand_over()?;
            self.send(Op::Seek(to))?;
            self.base = to;
        }
        Ok(to)
    }
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        // Not finished: an error path, whose output is dropped. The thread writes what
        // it has and stops.
        self.ops = None;
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn bytes_and_seeks_reach_the_file_in_order() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"head").unwrap();
        let mut w = WriterThread::new(file.try_clone().unwrap()).unwrap();
        assert_eq!(w.stream_position().unwrap(), 4);
        w.write_all(&[0u8; 8]).unwrap();
        // More than a buffer at once, then small writes across a buffer's end.
        let big: Vec<u8> = (0..WriterThread::BUF + 10).map(|i| i as u8).collect();
        w.write_all(&big).unwrap();
        for i in 0..(WriterThread::BUF / 3) {
            w.write_all(&[(i % 251) as u8, 7, 9]).unwrap();
        }
        let end = w.stream_position().unwrap();
        w.seek(SeekFrom::Start(4)).unwrap();
        w.write_all(b"patched!").unwrap();
        assert_eq!(w.stream_position().unwrap(), 12);
        w.seek(SeekFrom::Start(end)).unwrap();
        w.write_all(b"tail").unwrap();
        w.finish().unwrap();
        // The shared position is where the writer left it.
        assert_eq!(file.stream_position().unwrap(), end + 4);

        let mut expect = b"headpatched!".to_vec();
        expect.extend_from_slice(&big);
        for i in 0..(WriterThread::BUF / 3) {
            expect.extend_from_slice(&[(i % 251) as u8, 7, 9]);
        }
        expect.extend_from_slice(b"tail");
        let mut got = vec![];
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), expect.len());
        assert!(got == expect);
    }

    #[test]
    fn a_write_error_is_returned() {
        // A read-only handle: the thread's first write fails.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut w = WriterThread::new(file).unwrap();
        // Enough buffers that the failure shows while writing, or at the finish.
        let chunk = vec![1u8; WriterThread::BUF];
        let mut failed = false;
        for _ in 0..(2 * WriterThread::QUEUED + 2) {
            if w.write_all(&chunk).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed || w.finish().is_err());
    }
}
