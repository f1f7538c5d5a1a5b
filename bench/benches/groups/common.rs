//! Helpers shared by the bench groups: key generation, sizes, environment
//! switches and where side results (bits/key, measured FPR) are written.

use std::io::Write;
use std::path::PathBuf;

/// SplitMix64: a fast bijective mixer, so `mix(i)` gives distinct,
/// well-spread keys without storing them.
#[inline(always)]
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Member `i` of an inserted set: even preimages.
#[inline(always)]
pub fn member(i: u64) -> u64 {
    mix(i << 1)
}

/// Non-member `i`: odd preimages, so never equal to a member (mix is a
/// bijection).
#[inline(always)]
pub fn non_member(i: u64) -> u64 {
    mix((i << 1) | 1)
}

/// A 16-byte string key: the hex digits of a 64-bit value.
pub fn hex16(x: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    let digits = b"0123456789abcdef";
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = digits[((x >> (60 - 4 * i)) & 15) as usize];
    }
    out
}

/// Whether the slow, large configurations are enabled
/// (`LESSHASH_BENCH_LARGE=1`): 256 MiB and 1 GiB filters in `throughput`.
pub fn large() -> bool {
    std::env::var("LESSHASH_BENCH_LARGE").is_ok_and(|v| v != "0" && !v.is_empty())
}

/// The directory where bench side results are written
/// (`$CARGO_TARGET_DIR/lesshash-bench` or `target/lesshash-bench`), the
/// same target directory criterion writes `criterion/` into.
pub fn side_dir() -> PathBuf {
    // `cargo bench` runs the binary in this package's directory (bench/),
    // and the report reads the workspace's target directory.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("lesshash-bench")
}

/// Appends one line to a side-results file under [`side_dir`]. Errors only
/// print a warning: side results must never fail a bench run.
pub fn append_side(file: &str, header: &str, line: &str) {
    let dir = side_dir();
    let path = dir.join(file);
    let result = std::fs::create_dir_all(&dir).and_then(|()| {
        let fresh = !path.exists();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        if fresh {
            writeln!(f, "{header}")?;
        }
        writeln!(f, "{line}")
    });
    if let Err(e) = result {
        eprintln!("warning: could not write {}: {e}", path.display());
    }
}

/// A human-readable size: `32KiB`, `4MiB`, `1GiB`.
pub fn size_name(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{}GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

/// A cursor that walks a pool of keys chunk by chunk, wrapping around, so
/// that successive iterations touch different keys (and, for filters larger
/// than the caches, different cache lines).
pub struct Cursor {
    pos: usize,
}

impl Cursor {
    pub fn new() -> Self {
        Self { pos: 0 }
    }

    /// The next `chunk` keys of `pool` (`pool.len()` a multiple of `chunk`).
    pub fn next<'a, T>(&mut self, pool: &'a [T], chunk: usize) -> &'a [T] {
        if self.pos + chunk > pool.len() {
            self.pos = 0;
        }
        let out = &pool[self.pos..self.pos + chunk];
        self.pos += chunk;
        out
    }
}
