//! The raw batch-query cost of a `lesshash filter` workload: the same filter
//! file and the same lines (keys: the line without its ending), held in
//! memory and queried with `contains_batch` in batches of the size one 1 MiB
//! input chunk of these lines gives the CLI; no reading, splitting or
//! writing. The CLI's throughput over this figure is its overhead
//! (docs/bench-notes/2026-11-23.md, "Command line").
//!
//! ```text
//! cargo run --release -p lesshash-bench --example filter_raw -- FILTER LINES_FILE [RUNS]
//! ```

use std::time::Instant;

use lesshash::BloomFilter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [filter, lines, rest @ ..] = args.as_slice() else {
        return Err("usage: filter_raw FILTER LINES_FILE [RUNS]".into());
    };
    let runs: usize = rest.first().map_or(Ok(5), |r| r.parse())?;
    let filter = BloomFilter::read_file(filter)?;
    let data = std::fs::read(lines)?;
    let keys: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    // `split` yields an empty last piece after the final newline.
    let keys = match keys.split_last() {
        Some((&[], init)) => init,
        _ => &keys[..],
    };
    let mean_line = data.len() as f64 / keys.len() as f64;
    let batch = ((1 << 20) as f64 / mean_line) as usize;
    let mut out = vec![false; batch];
    let mut best = f64::INFINITY;
    let mut present = 0;
    for _ in 0..runs {
        let t = Instant::now();
        present = 0;
        for chunk in keys.chunks(batch) {
            let out = &mut out[..chunk.len()];
            filter.contains_batch(chunk, out)?;
            present += out.iter().filter(|&&b| b).count();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} keys ({mean_line:.1} bytes/line, batches of {batch}), {present} present: \
         best of {runs} {best:.3} s, {:.1} ns/key, {:.2} M keys/s",
        keys.len(),
        best * 1e9 / keys.len() as f64,
        keys.len() as f64 / best / 1e6
    );
    Ok(())
}
