//! gzip compression beside the writer: what an export writes is produced on one thread
//! and compressed on the calling one, a block at a time, so the two take a core each.

use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::{self, Write};
use std::sync::mpsc;

/// The bytes handed over at a time.
const BLOCK: usize = 1 << 20;
/// Blocks handed over and not yet compressed: how far the producer may run ahead (and
/// so the memory this takes: a few MiB).
const IN_FLIGHT: usize = 3;

/// Runs `produce` on another thread with a writer whose bytes reach `out`
/// gzip-compressed at `level`, compressed on this thread; returns `out` once the gzip
/// stream is complete. An error of either side is returned (a failed write to `out`
/// first: it is what stopped the producer).
pub fn gzip_beside<W: Write, E: From<io::Error> + Send>(
    out: W,
    level: Compression,
    produce: impl FnOnce(&mut Blocks) -> Result<(), E> + Send,
) -> Result<W, E> {
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        let producer = scope.spawn(move || {
            let mut blocks = Blocks {
                block: Vec::with_capacity(BLOCK),
                full: full_tx,
                free: free_rx,
            };
            produce(&mut blocks)?;
            blocks.hand_over()?;
            Ok::<_, E>(())
        });
        let mut gz = GzEncoder::new(out, level);
        let mut compressed = Ok(());
        for block in &full_rx {
            if let Err(e) = gz.write_all(&block) {
                compressed = Err(e);
                break;
            }
            // The producer may have finished: then the block is not needed.
            let _ = free_tx.send(block);
        }
        // Unblocks a producer waiting to hand over (its send fails) after a failed write.
        drop(full_rx);
        let produced = producer.join().unwrap_or_else(|_| {
            Err(io::Error::other("the thread producing the output panicked").into())
        });
        compressed?;
        produced?;
        Ok(gz.finish()?)
    })
}

/// The producer's writer ([`gzip_beside`]): fills a block, hands it over full.
pub struct Blocks {
    block: Vec<u8>,
    full: mpsc::SyncSender<Vec<u8>>,
    free: mpsc::Receiver<Vec<u8>>,
}

impl Blocks {
    /// Hands the block over (unless empty) and takes an empty one.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let next = match self.free.try_recv() {
            Ok(mut b) => {
                b.clear();
                b
            }
            Err(_) => Vec::with_capacity(BLOCK),
        };
        let full = std::mem::replace(&mut self.block, next);
        self.full
            .send(full)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the compression stopped"))
    }
}

impl Write for Blocks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        // Most writes (a JSON token) fit in the block.
        if buf.len() < BLOCK - self.block.len() {
            self.block.extend_from_slice(buf);
            return Ok(());
        }
        while !buf.is_empty() {
            let room = BLOCK - self.block.len();
            let (now, rest) = buf.split_at(room.min(buf.len()));
            self.block.extend_from_slice(now);
            buf = rest;
            if self.block.len() == BLOCK {
                self.hand_over()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn what_is_written_comes_back_out_of_the_gzip_stream() {
        // Several blocks, the last one partial, written in pieces of odd sizes.
        let bytes: Vec<u8> = (0..BLOCK * 3 + 1234).map(|i| (i * 7 % 253) as u8).collect();
        let out = gzip_beside(Vec::new(), Compression::fast(), |w| {
            for piece in bytes.chunks(77_777) {
                w.write_all(piece)?;
            }
            Ok::<_, io::Error>(())
        })
        .unwrap();
        let mut back = vec![];
        flate2::read::GzDecoder::new(&out[..])
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == bytes);
    }

    #[test]
    fn an_error_of_either_side_is_returned() {
        let err = gzip_beside(Vec::new(), Compression::fast(), |w| {
            w.write_all(b"some")?;
            Err(io::Error::other("the producer failed"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the producer failed");

        #[derive(Debug)]
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("the disk is full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = gzip_beside(Full, Compression::fast(), |w| {
            // Far more than the blocks in flight, and not compressible (so the encoder
            // writes as it goes): the producer is stopped by the failed write.
            let mut rng = perfdata_test_support::XorShift::default();
            for _ in 0..(IN_FLIGHT + 4) * BLOCK / 8 {
                w.write_all(&rng.next_u64().to_le_bytes())?;
            }
            Ok::<_, io::Error>(())
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the disk is full");
    }
}
