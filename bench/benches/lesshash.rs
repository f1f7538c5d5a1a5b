//! lesshash's criterion benches: one entry point, one module per group.
//!
//! ```sh
//! cargo bench                                   # everything, about 10 minutes
//! cargo bench --bench lesshash -- --quick       # a fast look
//! cargo bench --bench lesshash -- hashes_saved  # one group (a regex filter)
//! cargo bench --bench lesshash -- '^hash/'       # XXH3-128 per key vs batched
//! cargo bench --bench lesshash -- '^par/'        # par_* against the sequential batch calls
//! cargo bench --bench lesshash -- '^mapped/'     # memory-mapped filter files against loaded ones
//! cargo bench --bench lesshash -- '^handles/'    # one-key calls through views, maps and pre-hashed handles
//! cargo bench --bench lesshash -- '^arrow/'      # Arrow arrays against slices of the same keys
//! cargo bench --bench lesshash -- '^spark/'      # Spark's filter against the blocked one
//! LESSHASH_BENCH_LARGE=1 cargo bench -- throughput  # adds 256 MiB and 1 GiB
//! cargo run --release -p lesshash-bench --example bench_report    # tables + plots under target/bench-report/
//! ```
//!
//! Every group reports `Throughput::Elements` (keys), so criterion prints
//! keys per second; the report generator turns the medians into ns per key.

use std::time::Duration;

use criterion::Criterion;

/// The bench groups. Each module exposes `pub fn register(c: &mut Criterion)`.
mod groups {
    pub mod arrow;
    pub mod blocked;
    pub mod builder;
    pub mod common;
    pub mod count_min;
    pub mod format;
    pub mod handles;
    pub mod hash;
    pub mod hashes_saved;
    pub mod mapped;
    pub mod par;
    pub mod peers;
    pub mod spark;
    pub mod throughput;
}

fn main() {
    // Short defaults keep a full `cargo bench` near 10 minutes on 2 cores;
    // command-line flags (`--quick`, `--measurement-time`, `--sample-size`,
    // ...) override them. Criterion's per-benchmark HTML plots are off (they
    // cost about as much as a short measurement; the report generator draws
    // its own): `LESSHASH_BENCH_PLOTS=1` turns them back on.
    let c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500))
        .nresamples(20_000);
    let plots = std::env::var("LESSHASH_BENCH_PLOTS").is_ok_and(|v| v == "1");
    let mut c = if plots {
        c.with_plots()
    } else {
        c.without_plots()
    }
    .configure_from_args();

    run_event("start");
    groups::hash::register(&mut c);
    groups::hashes_saved::register(&mut c);
    groups::throughput::register(&mut c);
    groups::peers::register(&mut c);
    groups::count_min::register(&mut c);
    groups::format::register(&mut c);
    groups::builder::register(&mut c);
    groups::blocked::register(&mut c);
    groups::par::register(&mut c);
    groups::mapped::register(&mut c);
    groups::handles::register(&mut c);
    groups::arrow::register(&mut c);
    groups::spark::register(&mut c);

    c.final_summary();
    run_event("end");
}

/// Records the run's start or end (time, load average, arguments) for the
/// report's "Run" line: the machine is shared, so the load is part of the
/// result.
fn run_event(event: &str) {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let args = if args.is_empty() {
        "cargo bench".to_owned()
    } else {
        format!("cargo bench --bench lesshash -- {}", args.join(" "))
    };
    groups::common::append_side(
        "run.csv",
        "event,unix,loadavg,args",
        &format!(
            "{event},{unix},{load},{}",
            args.trim_end().replace(',', ";")
        ),
    );
}
