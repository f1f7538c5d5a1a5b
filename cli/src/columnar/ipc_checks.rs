//! An Arrow IPC file's or stream's framing, checked before arrow-ipc acts
//! on it.
//!
//! The reader allocates what a message's prefix and metadata declare (the
//! metadata's length, the body's, a compressed buffer's decompressed
//! length) before it reads a byte of it. Here every message is found
//! (walked from the start of a stream; from the footer's blocks in a file)
//! and its declared lengths checked against the bytes the file has, each
//! buffer against its message's body, and each compressed buffer's
//! decompressed length against [`MAX_DECOMPRESSED`]. The walk reads each
//! message's metadata and eight bytes of each compressed buffer: a small
//! fraction of an honest file.

use std::fs::File;

use anyhow::{Result, anyhow, bail};
use arrow_ipc::{Message, MessageHeader};

use super::read_at;

/// The largest decompressed length a compressed buffer may declare: 4 GiB
/// (a single column buffer of a batch; writers cut batches far smaller).
/// The decompressor reserves that much before it decompresses.
pub(crate) const MAX_DECOMPRESSED: u64 = 4 << 30;

/// The continuation marker before a message's metadata length.
const CONTINUATION: [u8; 4] = [0xff; 4];

/// Checks an Arrow IPC stream of `len` bytes: every message's metadata and
/// body within the file, up to the end-of-stream marker or the end.
pub(crate) fn check_stream(file: &File, len: u64) -> Result<()> {
    let mut pos = 0u64;
    let mut index = 0usize;
    while pos < len {
        match check_message(file, len, pos)
            .map_err(|e| anyhow!("message {index} at byte {pos}: {e}: the stream is damaged"))?
        {
            Some((_, next)) => pos = next,
            None => return Ok(()),
        }
        index += 1;
    }
    Ok(())
}

/// Checks an Arrow IPC file of `len` bytes: its footer within the file and
/// every block (dictionary and record batch) it lists, each message's
/// declared lengths within its block.
pub(crate) fn check_file(file: &File, len: u64) -> Result<()> {
    // "ARROW1", two bytes of padding, ..., footer, its i32 length, "ARROW1".
    if len < 18 {
        bail!("it is {len} bytes, too short to be an Arrow IPC file (18 bytes at least)");
    }
    let mut tail = [0u8; 10];
    read_at(file, len - 10, &mut tail)?;
    if &tail[4..] != b"ARROW1" {
        bail!("it does not end with Arrow's magic bytes: the file is truncated or damaged");
    }
    let footer_len = i32::from_le_bytes(tail[..4].try_into().expect("4 bytes"));
    if footer_len < 0 || footer_len as u64 > len - 18 {
        bail!(
            "its footer claims {footer_len} bytes, but the file has {} between its magic \
             bytes: the file is damaged",
            len - 18
        );
    }
    let footer_start = len - 10 - footer_len as u64;
    let mut footer = vec![0u8; footer_len as usize];
    read_at(file, footer_start, &mut footer)?;
    let footer =
        arrow_ipc::root_as_footer(&footer).map_err(|e| anyhow!("its footer is damaged ({e})"))?;
    let blocks = footer
        .dictionaries()
        .into_iter()
        .flatten()
        .chain(footer.recordBatches().into_iter().flatten());
    for (i, block) in blocks.enumerate() {
        let (offset, meta, body) = (block.offset(), block.metaDataLength(), block.bodyLength());
        let fits = offset >= 8
            && meta >= 0
            && body >= 0
            && (offset as u64)
                .checked_add(meta as u64)
                .and_then(|e| e.checked_add(body as u64))
                .is_some_and(|e| e <= footer_start);
        if !fits {
            bail!(
                "its footer's block {i} claims {meta} + {body} bytes at byte {offset}, outside \
                 the file's {footer_start} bytes of messages: the file is damaged"
            );
        }
        // The reader takes the body from where the block says the
        // metadata ends: the message's own lengths must agree with it.
        let end = offset as u64 + meta as u64 + body as u64;
        let damaged = |e: String| anyhow!("block {i} at byte {offset}: {e}: the file is damaged");
        match check_message(file, end, offset as u64).map_err(|e| damaged(e.to_string()))? {
            Some((body_start, _)) if body_start == offset as u64 + meta as u64 => {}
            Some((body_start, _)) => {
                return Err(damaged(format!(
                    "the block claims {meta} bytes of metadata, its message {}",
                    body_start - offset as u64
                )));
            }
            None => return Err(damaged("the block holds no message".into())),
        }
    }
    Ok(())
}

/// Checks the message at `pos`, which must end by byte `end`; returns
/// where its body starts and where the next message starts, or `None` at
/// the end-of-stream marker (or fewer bytes than a length, which the
/// stream reader also takes as the end).
fn check_message(file: &File, end: u64, pos: u64) -> Result<Option<(u64, u64)>> {
    let left = end - pos;
    if left < 4 {
        return Ok(None);
    }
    let mut word = [0u8; 4];
    read_at(file, pos, &mut word)?;
    let mut at = pos + 4;
    if word == CONTINUATION {
        if left < 8 {
            return Ok(None);
        }
        read_at(file, at, &mut word)?;
        at += 4;
    }
    let meta_len = i32::from_le_bytes(word);
    if meta_len == 0 {
        return Ok(None);
    }
    if meta_len < 0 || meta_len as u64 > end - at {
        bail!(
            "it claims {meta_len} bytes of metadata, {} are left",
            end - at
        );
    }
    let mut meta = vec![0u8; meta_len as usize];
    read_at(file, at, &mut meta)?;
    at += meta_len as u64;
    let message =
        arrow_ipc::root_as_message(&meta).map_err(|e| anyhow!("its metadata is damaged ({e})"))?;
    let body = message.bodyLength();
    if body < 0 || body as u64 > end - at {
        bail!("it claims a body of {body} bytes, {} are left", end - at);
    }
    check_buffers(file, &message, at, body as u64)?;
    Ok(Some((at, at + body as u64)))
}

/// Checks a batch message's buffers: each within the body of `body` bytes
/// at `start`, and each compressed one's declared length at most
/// [`MAX_DECOMPRESSED`].
fn check_buffers(file: &File, message: &Message<'_>, start: u64, body: u64) -> Result<()> {
    let batch = match message.header_type() {
        MessageHeader::RecordBatch => message.header_as_record_batch(),
        MessageHeader::DictionaryBatch => {
            message.header_as_dictionary_batch().and_then(|d| d.data())
        }
        _ => None,
    };
    let Some(batch) = batch else {
        return Ok(());
    };
    if batch.length() < 0 {
        bail!("it claims {} rows", batch.length());
    }
    let compressed = batch.compression().is_some();
    for (i, buffer) in batch.buffers().into_iter().flatten().enumerate() {
        let (offset, length) = (buffer.offset(), buffer.length());
        if offset < 0 || length < 0 || (offset as u64).saturating_add(length as u64) > body {
            bail!(
                "its buffer {i} claims {length} bytes at byte {offset} of a body of {body} bytes"
            );
        }
        if compressed && length >= 8 {
            let mut prefix = [0u8; 8];
            read_at(file, start + offset as u64, &mut prefix)?;
            let declared = i64::from_le_bytes(prefix);
            // -1: the buffer is stored uncompressed.
            if declared != -1 && (declared < 0 || declared as u64 > MAX_DECOMPRESSED) {
                bail!(
                    "its compressed buffer {i} claims {declared} bytes decompressed (at most \
                     {MAX_DECOMPRESSED} are read)"
                );
            }
        }
    }
    Ok(())
}
