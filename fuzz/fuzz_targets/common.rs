//! Helpers shared by the fuzz targets (included with `#[path]`).

#![allow(dead_code)]

use arbitrary::Arbitrary;
use lesshash::{BloomFilter, Layout, Scheme};

/// Every layout, indexed modulo the count: layouts added later are fuzzed
/// without editing the targets.
pub fn layout(pick: u8) -> Layout {
    Layout::ALL[usize::from(pick) % Layout::ALL.len()]
}

/// Every scheme, indexed modulo the count.
pub fn scheme(pick: u8) -> Scheme {
    Scheme::ALL[usize::from(pick) % Scheme::ALL.len()]
}

/// The largest filter `builder_params` allocates, in bits (2 MiB).
pub const MAX_FUZZ_BITS: u64 = 1 << 24;

/// The largest filter the operation targets allocate, in bits (8 KiB):
/// fuzzing finds bugs in the logic, not in the allocator; small filters
/// collide often and keep each run fast.
pub const MAX_OPS_BITS: u64 = 1 << 16;

/// How a target sizes a filter: explicit geometry or (n, p).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Size {
    /// `bits(m).hashes(k)`: tiny m collide a lot, which is what we want.
    Explicit { bits: u16, hashes: u8 },
    /// `expected_items(items % 1024).fpr(p)` with
    /// p = (mantissa + 1) / 256 * 10^-(exponent % 3).
    Sized {
        items: u16,
        mantissa: u8,
        exponent: u8,
    },
}

/// The filter parameters of a fuzz input.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Params {
    pub layout: u8,
    pub scheme: u8,
    pub size: Size,
    pub seed: u64,
}

impl Params {
    /// The builder these parameters describe.
    pub fn builder(&self) -> lesshash::Builder {
        // The high bit of `scheme` (which `scheme` reads modulo 4) picks
        // the folded-multiply hash family for a two-hash scheme.
        let family = if self.scheme & 0x80 != 0 && scheme(self.scheme).is_two_hash() {
            lesshash::HashFamily::FoldedMultiply
        } else {
            lesshash::HashFamily::Xxh3
        };
        let b = BloomFilter::builder()
            .layout(layout(self.layout))
            .scheme(scheme(self.scheme))
            .hash_family(family)
            .seed(self.seed);
        match self.size {
            Size::Explicit { bits, hashes } => {
                b.bits(u64::from(bits) + 1).hashes(u32::from(hashes % 70))
            }
            Size::Sized {
                items,
                mantissa,
                exponent,
            } => {
                let p = (f64::from(mantissa) + 1.0) / 256.0 * 10f64.powi(-i32::from(exponent % 3));
                b.expected_items(u64::from(items % 1024)).fpr(p)
            }
        }
    }

    /// A filter of these parameters, or `None` when the builder rejects
    /// them (with a message naming the parameter) or the filter is larger
    /// than [`MAX_OPS_BITS`].
    ///
    /// Builds directly (no `geometry()` first): sizing from (n, p) is the
    /// costliest step of a run, and `builder_params` checks that
    /// `geometry()` and `build()` agree. The largest filter reachable here
    /// (n < 1024, p >= 3.9e-5) is a few KiB; smaller p costs milliseconds of sizing per run (`builder_params` covers it).
    pub fn build(&self) -> Option<BloomFilter> {
        match self.builder().build() {
            Ok(f) if f.num_bits() > MAX_OPS_BITS => None,
            Ok(f) => Some(f),
            Err(e) => {
                assert!(e.to_string().contains('`'), "error names no parameter: {e}");
                None
            }
        }
    }
}

/// The bits of a filter as a sorted list of set positions, read from its
/// serialized payload (the only public window on the bits).
pub fn set_bits(filter: &BloomFilter) -> Vec<u64> {
    let bytes = filter.to_bytes();
    let payload = &bytes[lesshash::format::HEADER_LEN..bytes.len() - lesshash::format::TRAILER_LEN];
    let mut out = Vec::new();
    for (w, chunk) in payload.chunks_exact(8).enumerate() {
        let mut word = u64::from_le_bytes(chunk.try_into().unwrap());
        while word != 0 {
            out.push(w as u64 * 64 + u64::from(word.trailing_zeros()));
            word &= word - 1;
        }
    }
    out
}

/// A copy of some bytes starting on a [`lesshash::VIEW_ALIGN`] boundary, as
/// a memory map would be.
pub struct Aligned {
    blocks: Vec<lesshash::Block>,
    len: usize,
}

impl Aligned {
    pub fn new(bytes: &[u8]) -> Self {
        let mut blocks = vec![lesshash::Block([0; 8]); bytes.len().div_ceil(64)];
        bytemuck::cast_slice_mut::<lesshash::Block, u8>(&mut blocks)[..bytes.len()]
            .copy_from_slice(bytes);
        Self {
            blocks,
            len: bytes.len(),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<lesshash::Block, u8>(&self.blocks)[..self.len]
    }
}
