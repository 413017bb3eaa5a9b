//! The records of one stream of an input with their decoding contexts: the record cursor
//! plus the session's attrs, lending each record with the context to decode it with.

use super::cursor::{RecordCursor, SliceSource};
use super::framing::RawRecord;
use super::origin::{Damage, Origin};
use super::session::{RecordCtx, Session};
use crate::rt::{Endian, Endianness, Error};

/// A record of a walk: where it came from, its bytes, and its decoding context.
#[derive(Debug, Clone, Copy)]
pub struct Record<'r> {
    /// In the stream itself, or expanded from a compressed record.
    pub origin: Origin,
    /// The record's header, body and payload, borrowed from the input or from the
    /// walk's decompressed bytes until the walk moves.
    pub raw: RawRecord<'r>,
    /// The context to decode the body with ([`crate::PerfData::decode`],
    /// [`crate::PerfData::sample`]): its attr's layout, misc bits, CPU counts.
    pub ctx: RecordCtx,
}

/// The records of one stream of an input with their decoding contexts: the
/// [`RecordCursor`] over the input's bytes plus the session's attrs, walked through
/// [`RecordWalk`]. [`Records::salvaging`] and [`Records::time_ordered`] adapt it.
pub struct Records<'d, 'a, E: Endian = Endianness> {
    session: &'d Session<'a>,
    cursor: RecordCursor<SliceSource<'d, E>>,
    ctx: RecordCtx,
}

impl<'d, 'a, E: Endian> Records<'d, 'a, E> {
    /// The records of `source`, decoded with `session`'s attrs.
    pub(crate) fn new(session: &'d Session<'a>, source: SliceSource<'d, E>) -> Self {
        Records {
            session,
            cursor: RecordCursor::new(source),
            ctx: session.ctx_of(None, Default::default()),
        }
    }

    /// Goes on past damage where it can (see [`RecordCursor::salvaging`]);
    /// [`Records::take_damage`] gives the errors met and the byte ranges skipped.
    pub fn salvaging(mut self) -> Self {
        self.cursor = self.cursor.salvaging();
        self
    }

    /// The damage a salvaging walk went past so far, in order; empty for an intact input.
    pub fn take_damage(&mut self) -> Vec<Damage> {
        self.cursor.take_damage()
    }

    /// The runs of simpleperf SPLIT records that made no record, when not salvaging (see
    /// [`RecordCursor::take_unjoined`]): the walk went on without the record each held.
    pub fn take_unjoined(&mut self) -> Vec<Error> {
        self.cursor.take_unjoined()
    }

    /// Bytes of decompressed data held (what a compressed record's expansion costs in
    /// memory: a record plus a step of zstd output, however far it expands).
    pub fn buffered_bytes(&self) -> usize {
        self.cursor.buffered_bytes()
    }

    /// The attrs the records are decoded with.
    pub fn session(&self) -> &'d Session<'a> {
        self.session
    }

    /// The byte order.
    pub fn order(&self) -> E {
        self.cursor.order()
    }

    /// The stream walked and the offset of its first byte.
    pub fn input(&self) -> (&'d [u8], u64) {
        self.cursor.source().input()
    }
}

/// A lending walk of records with their decoding contexts ([`Records`] and its
/// [`Records::time_ordered`] adapter): [`RecordWalk::advance`] moves, and the record it
/// moved to is borrowed ([`RecordWalk::current`]) until the next move.
pub trait RecordWalk {
    /// Moves to the next record: `Ok(false)` at the end. After an error (not salvaging),
    /// the walk is over.
    fn advance(&mut self) -> Result<bool, Error>;

    /// The record [`RecordWalk::advance`] moved to, in parts, the context by reference (no
    /// copy in hot loops).
    fn parts(&self) -> (Origin, RawRecord<'_>, &RecordCtx);

    /// The record [`RecordWalk::advance`] moved to.
    #[inline(always)]
    fn current(&self) -> Record<'_> {
        let (origin, raw, &ctx) = self.parts();
        Record { origin, raw, ctx }
    }

    /// [`RecordWalk::advance`], then [`RecordWalk::current`]: `None` at the end.
    #[inline]
    fn next(&mut self) -> Result<Option<Record<'_>>, Error> {
        Ok(if self.advance()? {
            Some(self.current())
        } else {
            None
        })
    }

    /// Calls `f` for every record left (`f` returns `false` to stop).
    #[inline]
    fn for_each<F>(&mut self, mut f: F) -> Result<(), Error>
    where
        Self: Sized,
        F: FnMut(Origin, RawRecord<'_>, &RecordCtx) -> Result<bool, Error>,
    {
        while self.advance()? {
            let (origin, raw, ctx) = self.parts();
            if !f(origin, raw, ctx)? {
                break;
            }
        }
        Ok(())
    }
}

impl<E: Endian> RecordWalk for Records<'_, '_, E> {
    #[inline(always)]
    fn advance(&mut self) -> Result<bool, Error> {
        let order = self.cursor.order();
        // A plain record of the input straight from the framing, else the general step.
        let raw = match self.cursor.next_plain() {
            Some(raw) => raw,
            None if self.cursor.advance()? => self.cursor.current().1,
            None => return Ok(false),
        };
        self.session.update_ctx(&mut self.ctx, &raw, order);
        Ok(true)
    }

    #[inline(always)]
    fn parts(&self) -> (Origin, RawRecord<'_>, &RecordCtx) {
        let (origin, raw) = self.cursor.current();
        (origin, raw, &self.ctx)
    }

    #[inline]
    fn for_each<F>(&mut self, mut f: F) -> Result<(), Error>
    where
        F: FnMut(Origin, RawRecord<'_>, &RecordCtx) -> Result<bool, Error>,
    {
        // The hot loop of every walk: the cursor directly, the context on the stack.
        let (session, order) = (self.session, self.cursor.order());
        let mut ctx = self.ctx;
        loop {
            // Plain records of the input straight from the framing (nearly all of them).
            let go_on = self.cursor.plain_run(|raw| {
                session.update_ctx(&mut ctx, &raw, order);
                f(Origin::Input, raw, &ctx)
            });
            if !go_on? {
                self.ctx = ctx;
                return Ok(());
            }
            // Anything else: the first record, compressed contents, damage, the end.
            if !self.cursor.advance()? {
                break;
            }
            let (origin, raw) = self.cursor.current();
            session.update_ctx(&mut ctx, &raw, order);
            if !f(origin, raw, &ctx)? {
                break;
            }
        }
        self.ctx = ctx;
        Ok(())
    }
}
