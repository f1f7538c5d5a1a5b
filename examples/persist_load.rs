//! Measures saving and loading a large filter (default 1 GiB of bits) on
//! every path of the v1 format, against a plain memcpy of the same size as
//! the memory-bandwidth reference. Prints the median of several runs in GB/s
//! (10^9 bytes per second of serialized filter).
//!
//! ```sh
//! cargo run --release --example persist_load            # 1 GiB, 5 runs
//! cargo run --release --example persist_load -- 256 9   # 256 MiB, 9 runs
//! ```
//!
//! The file goes to `$LESSHASH_BENCH_DIR` (default: the system temp dir) and
//! is removed at the end. `read_file` is measured with the file in the page
//! cache (it was just written), i.e. the cost of the library, not the disk.

use std::hint::black_box;
use std::time::Instant;

use lesshash::{Block, BloomFilter, FilterView};

fn median_gbps(bytes: u64, runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut secs: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    secs.sort_by(f64::total_cmp);
    let med = secs[runs / 2];
    (bytes as f64 / med / 1e9, med * 1e3)
}

fn main() -> Result<(), lesshash::Error> {
    let args: Vec<String> = std::env::args().collect();
    let mib: u64 = args.get(1).map_or(1024, |s| s.parse().expect("MiB"));
    let runs: usize = args.get(2).map_or(5, |s| s.parse().expect("runs"));
    let bits = mib << 23;

    let mut filter = BloomFilter::builder().bits(bits).hashes(7).build()?;
    // Enough keys to touch every page (untouched pages would read as the
    // kernel's shared zero page and flatter the numbers).
    let keys = bits / 400;
    for key in 0..keys {
        filter.insert(&key);
    }
    let size = filter.serialized_len();
    println!("filter: {mib} MiB of bits, {keys} keys, {size} bytes serialized, median of {runs}");

    let report =
        |name: &str, (gbps, ms): (f64, f64)| println!("{name:<34} {gbps:6.2} GB/s  {ms:8.1} ms");

    let src = vec![0x5au8; size as usize];
    let mut dst = vec![0u8; size as usize];
    report(
        "memcpy (reference)",
        median_gbps(size, runs, || {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        }),
    );
    report(
        "fresh Vec + memcpy (reference)",
        median_gbps(size, runs, || {
            black_box(black_box(&src).to_vec());
        }),
    );
    drop((src, dst));

    let mut bytes = Vec::new();
    report(
        "to_bytes",
        median_gbps(size, runs, || {
            bytes = black_box(filter.to_bytes());
        }),
    );
    report(
        "from_bytes",
        median_gbps(size, runs, || {
            black_box(BloomFilter::from_bytes(black_box(&bytes)).unwrap());
        }),
    );
    report(
        "read_from(&[u8])",
        median_gbps(size, runs, || {
            black_box(BloomFilter::read_from(black_box(&bytes[..])).unwrap());
        }),
    );

    let mut aligned = vec![Block([0; 8]); bytes.len().div_ceil(64)];
    bytemuck::cast_slice_mut::<Block, u8>(&mut aligned)[..bytes.len()].copy_from_slice(&bytes);
    let view_bytes = &bytemuck::cast_slice::<Block, u8>(&aligned)[..bytes.len()];
    report(
        "FilterView::new (verifies checksum)",
        median_gbps(size, runs, || {
            black_box(FilterView::new(black_box(view_bytes)).unwrap());
        }),
    );
    let t = Instant::now();
    black_box(FilterView::new_unverified(view_bytes)?);
    println!(
        "{:<34} {:>9.1} us",
        "FilterView::new_unverified",
        t.elapsed().as_secs_f64() * 1e6
    );
    drop(aligned);
    drop(bytes);

    let dir = std::env::var_os("LESSHASH_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let path = dir.join(format!("lesshash-persist-{}.lhbf", std::process::id()));
    report(
        "write_file (fsync)",
        median_gbps(size, runs.min(3), || {
            filter.write_file(&path).unwrap();
        }),
    );
    report(
        "read_file (page cache)",
        median_gbps(size, runs, || {
            black_box(BloomFilter::read_file(&path).unwrap());
        }),
    );
    let loaded = BloomFilter::read_file(&path)?;
    assert!(loaded == filter);
    std::fs::remove_file(&path).ok();
    Ok(())
}
