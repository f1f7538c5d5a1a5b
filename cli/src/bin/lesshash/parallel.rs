//! What the parallel paths of `build` and `filter` share: `--threads`, the
//! pool, and the input read on a thread of its own in large blocks of
//! whole lines, so that reading the next block overlaps the work on this
//! one, which is cut into pieces at line ends for the pool's threads.

use std::io::{self, Read};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use anyhow::{Context, Result};

use crate::input::split_lines;

/// `--threads`: the count, one per CPU for 0.
pub(crate) fn thread_count(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
}

/// The pool for more than one thread; `None` for one, whose path runs on
/// the calling thread (no pool, no reader thread).
pub(crate) fn pool(threads: usize, what: &str) -> Result<Option<rayon::ThreadPool>> {
    if threads <= 1 {
        return Ok(None);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map(Some)
        .with_context(|| format!("cannot start the {what} threads"))
}

/// A piece's size: small, so that a thread's working memory for one
/// (its keys, parsed keys and answers, several bytes per byte of input)
/// stays in its cache and the threads finish a block together (a block
/// ends when its last piece does); large enough to amortise a task and a
/// batch query.
const PIECE: usize = 128 << 10;

/// A block's size per thread: many pieces per thread, so that a thread
/// whose pieces went fast (lines without the key, absent keys) takes more,
/// and few blocks, each of which the threads wait for together.
const BLOCK_PER_THREAD: usize = 1 << 20;

/// The smallest piece worth a task of its own: a short block (a pipe's
/// 64 KiB) is cut into fewer pieces.
const MIN_PIECE: usize = 64 << 10;

/// The largest block: about four are alive at once (being read, waiting,
/// worked on, handed back).
const MAX_BLOCK: usize = 32 << 20;

/// The input's lines in blocks, read on a thread of its own.
///
/// The reader publishes the whole lines of every read before it reads
/// again (a read of a pipe may wait for the writer), so no line waits on
/// the next one; what it publishes while the workers are busy is appended
/// to the waiting block, up to a block's size. A file is read a block at a
/// time and handed over without a copy; a pipe's 64 KiB reads are handed
/// over one by one to idle workers and gathered into large blocks for busy
/// ones. A block is [`BLOCK_PER_THREAD`] per thread, cut into pieces of
/// about [`PIECE`].
pub(crate) struct Blocks {
    handoff: Arc<Handoff>,
    threads: usize,
}

/// The hand-off between the reader thread and the workers: blocks of whole
/// lines published by one, taken by the others.
struct Handoff {
    state: Mutex<State>,
    /// Lines were published, or the input ended.
    published: Condvar,
    /// The waiting block was taken, or the workers are gone.
    taken: Condvar,
    /// A block's size: the reader waits while this much is waiting.
    size: usize,
}

#[derive(Default)]
struct State {
    /// Whole lines read and not yet taken.
    waiting: Vec<u8>,
    /// How the input ended, once it has: `Ok` at its end, or the read
    /// error (after the lines read before it).
    end: Option<io::Result<()>>,
    /// Buffers handed back, to read into.
    spares: Vec<Vec<u8>>,
    /// The workers are gone: the reader stops.
    closed: bool,
}

impl Handoff {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes the whole lines `buf[..lines]` of `buf[..filled]`; the
    /// rest (a line's start) stays at the start of `buf`. `false` when the
    /// workers are gone.
    fn publish(&self, buf: &mut Vec<u8>, lines: usize, filled: usize) -> bool {
        let mut state = self.lock();
        while state.waiting.len() >= self.size && !state.closed {
            state = self
                .taken
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.closed {
            return false;
        }
        if state.waiting.is_empty() {
            // Hand the buffer over; only the line's start is copied. The
            // waiting block stays empty until this thread fills it.
            let mut next = state.spares.pop().unwrap_or_default();
            drop(state);
            if next.len() < buf.len() {
                next.resize(buf.len(), 0);
            }
            next[..filled - lines].copy_from_slice(&buf[lines..filled]);
            let mut block = std::mem::replace(buf, next);
            block.truncate(lines);
            self.lock().waiting = block;
            self.published.notify_one();
        } else {
            state.waiting.extend_from_slice(&buf[..lines]);
            drop(state);
            self.published.notify_one();
            buf.copy_within(lines..filled, 0);
        }
        true
    }

    /// Records how the input ended.
    fn end(&self, end: io::Result<()>) {
        let mut state = self.lock();
        state.end.get_or_insert(end);
        drop(state);
        self.published.notify_one();
    }
}

/// Ends the input with an error if the reader thread stops without saying
/// how it ended (a panic), so that the workers do not wait forever.
struct EndGuard<'a>(&'a Handoff);

impl Drop for EndGuard<'_> {
    fn drop(&mut self) {
        self.0
            .end(Err(io::Error::other("the reader thread stopped")));
    }
}

/// The reader thread: reads into `buf`, publishing the whole lines after
/// every read, until the end of the input, a read error, or the workers
/// are gone.
fn read_all(mut reader: Box<dyn Read + Send>, handoff: &Handoff) {
    let _guard = EndGuard(handoff);
    let mut buf = vec![0u8; handoff.size];
    let mut filled = 0;
    loop {
        let n = match reader.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return handoff.end(Err(e)),
        };
        let new = filled..filled + n;
        filled += n;
        // The lines end at the last line end read, or at the input's end.
        let lines = if n == 0 {
            filled
        } else {
            memchr::memrchr(b'\n', &buf[new.clone()]).map_or(0, |i| new.start + i + 1)
        };
        if lines > 0 {
            if !handoff.publish(&mut buf, lines, filled) {
                return;
            }
            filled -= lines;
        }
        if n == 0 {
            return handoff.end(Ok(()));
        }
        if filled == buf.len() {
            // No line end in a full buffer: one very long line.
            let len = buf.len();
            buf.resize(len * 2, 0);
        }
    }
}

impl Blocks {
    /// Starts the reader thread for `threads` workers. It is not joined: it
    /// may be blocked on a read of a pipe when the work ends early (the
    /// reader of stdout went away), and ends with the process.
    pub fn spawn(reader: Box<dyn Read + Send>, threads: usize) -> Result<Self> {
        let handoff = Arc::new(Handoff {
            state: Mutex::new(State::default()),
            published: Condvar::new(),
            taken: Condvar::new(),
            size: BLOCK_PER_THREAD.saturating_mul(threads).min(MAX_BLOCK),
        });
        let theirs = Arc::clone(&handoff);
        std::thread::Builder::new()
            .name("lesshash-reader".into())
            .spawn(move || read_all(reader, &theirs))
            .context("cannot start the reader thread")?;
        Ok(Self { handoff, threads })
    }

    /// The next block of whole lines (the last one may lack its line end),
    /// `None` at the end of the input.
    pub fn next_block(&self) -> io::Result<Option<Vec<u8>>> {
        let mut state = self.handoff.lock();
        loop {
            if !state.waiting.is_empty() {
                let block = std::mem::take(&mut state.waiting);
                drop(state);
                self.handoff.taken.notify_one();
                return Ok(Some(block));
            }
            match state.end.take() {
                Some(Ok(())) => return Ok(None),
                Some(Err(e)) => return Err(e),
                None => {}
            }
            state = self
                .handoff
                .published
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The block cut into pieces at line ends, in input order: of about
    /// [`PIECE`], at least one per thread unless under [`MIN_PIECE`].
    pub fn pieces<'a>(&self, block: &'a [u8]) -> Vec<&'a [u8]> {
        let n = block
            .len()
            .div_ceil(PIECE)
            .max(self.threads)
            .min(block.len() / MIN_PIECE + 1);
        split_lines(block, n)
    }

    /// Hands a block's buffer back to the reader, to read into.
    pub fn give_back(&self, block: Vec<u8>) {
        let mut state = self.handoff.lock();
        if state.spares.len() < 2 {
            state.spares.push(block);
        }
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        self.handoff.lock().closed = true;
        self.handoff.taken.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader returning at most `step` bytes a read, then `error` if set.
    struct Dribble {
        data: Vec<u8>,
        at: usize,
        step: usize,
        error: bool,
    }

    impl Read for Dribble {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.at == self.data.len() && self.error {
                return Err(io::Error::other("broken"));
            }
            let n = self.step.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn blocks(data: &[u8], step: usize, error: bool, threads: usize) -> Blocks {
        let reader = Dribble {
            data: data.to_vec(),
            at: 0,
            step,
            error,
        };
        Blocks::spawn(Box::new(reader), threads).unwrap()
    }

    /// The blocks' pieces reassemble the input exactly, each a run of
    /// whole lines (the input's unterminated last line last), for reads of
    /// every size, workers slower than the reads (blocks gathered from
    /// many reads) or not, and a line longer than a block.
    #[test]
    fn blocks_cover_the_input() {
        let mut input = Vec::new();
        for i in 0..200_000u32 {
            input.extend_from_slice(format!("line-{i}\n").as_bytes());
            if i == 100_000 {
                input.resize(input.len() + 3 * BLOCK_PER_THREAD, b'x');
                input.push(b'\n');
            }
        }
        input.extend_from_slice(b"last");
        for (step, slow) in [
            (1 << 16, false),
            (1 << 16, true),
            (1000, true),
            (usize::MAX, false),
        ] {
            let blocks = blocks(&input, step, false, 2);
            let mut out = Vec::new();
            while let Some(block) = blocks.next_block().unwrap() {
                for piece in blocks.pieces(&block) {
                    assert!(!piece.is_empty());
                    out.extend_from_slice(piece);
                    assert!(piece.ends_with(b"\n") || out.len() == input.len());
                }
                blocks.give_back(block);
                if slow {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            assert!(out == input, "step={step} slow={slow}");
        }
    }

    /// A read error comes after every whole line read before it.
    #[test]
    fn a_read_error_comes_after_the_lines_before_it() {
        let input = b"a\nb\nc";
        let blocks = blocks(input, 1, true, 2);
        let mut out = Vec::new();
        let error = loop {
            match blocks.next_block() {
                Ok(Some(block)) => out.extend_from_slice(&block),
                Ok(None) => panic!("no error"),
                Err(e) => break e,
            }
        };
        assert_eq!(out, b"a\nb\n");
        assert_eq!(error.to_string(), "broken");
    }

    #[test]
    fn pieces_end_at_line_ends() {
        let chunk = b"aaaa\nb\n\ncccccccccc\nd";
        for n in 1..10 {
            let pieces = split_lines(chunk, n);
            assert!(pieces.len() <= n);
            assert_eq!(pieces.concat(), chunk);
            let (last, rest) = pieces.split_last().unwrap();
            assert!(rest.iter().all(|p| p.ends_with(b"\n")), "{n}");
            assert!(last.ends_with(b"d"));
        }
        assert!(split_lines(b"", 3).is_empty());
    }
}
