//! lesshash against other Rust Bloom filters on the same workload.
//!
//! n = 1e6 keys, target FPR 1% and 0.1%, u64 keys and 16-byte string keys
//! (hex digits), insert / hit / miss. Each filter is built by its own sizing
//! rule for (n, p) and filled with the same n keys. Before any timing, each
//! filter's bits/key and its FPR measured on 1e6 non-members are printed and
//! appended to `target/lesshash-bench/peers.csv`: a filter that is fast
//! because it is bigger or less accurate shows it there.
//!
//! Peers and their hashing:
//! * `lesshash-<layout>`: XXH3-128 of the key's bytes, the layout's default
//!   scheme (enhanced double hashing for classic, double hashing for the
//!   blocked layouts); `classic`, `blocked` and
//!   `split-block` (the blocked ones with single-key calls here, like every
//!   peer; their batch paths are in the `blocked` group);
//! * `fastbloom-sip`: fastbloom 0.17 with its default hasher (SipHash-1-3);
//! * `fastbloom-foldhash`: fastbloom with foldhash's fast hasher (fair
//!   against a fast hash);
//! * `sbbf-rs-safe`: 256-bit split blocks (Parquet's SBBF), hashed with
//!   XXH3-64 of the key's bytes, sized by Parquet's rule
//!   `bits/key = -8 / ln(1 - p^(1/8))` rounded up (it takes whole bits/key);
//! * `bloomfilter`: bloomfilter 3 (SipHash-1-3, two hashes, k probes);
//! * `parquet-sbbf`: parquet 60's `Sbbf` (256-bit split blocks, XXH64 of
//!   the key's bytes, Parquet's sizing rounded up to a power of two bytes);
//!   parquet is a dev-dependency anyway for `tests/parquet.rs`.
//!
//! Benchmark ids: `<peer>/<op>/<key>/p=<fpr>`.

use std::hash::Hash;
use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use lesshash::{BloomFilter, Key, Layout};
use xxhash_rust::xxh3::xxh3_64;

use super::common::{Cursor, append_side, hex16, member, mix, non_member};

const N: u64 = 1_000_000;
/// Non-members queried once per filter to measure its FPR.
const FPR_QUERIES: u64 = 1_000_000;
const FPRS: [f64; 2] = [0.01, 0.001];
/// bloomfilter's seed: its two SipHash keys are the two 16-byte halves, so
/// the halves must differ (with equal halves both hashes are equal and the
/// filter degenerates to one probe sequence: 3.7% measured at a 1% target).
const BLOOMFILTER_SEED: [u8; 32] = *b"lesshash-bench-0lesshash-bench-1";
/// Keys per timed iteration.
const CHUNK: usize = 1024;
/// Keys in each query pool.
const POOL: usize = 1 << 16;

/// A filter under test, over keys of type `K`.
trait Peer<K: ?Sized> {
    fn insert(&mut self, key: &K);
    fn contains(&self, key: &K) -> bool;
    /// Bits of filter memory.
    fn bits(&self) -> u64;
}

impl<K: Key + ?Sized> Peer<K> for BloomFilter {
    #[inline]
    fn insert(&mut self, key: &K) {
        BloomFilter::insert(self, key);
    }
    #[inline]
    fn contains(&self, key: &K) -> bool {
        BloomFilter::contains(self, key)
    }
    fn bits(&self) -> u64 {
        self.size_in_bytes() as u64 * 8
    }
}

impl<K: Hash + ?Sized, S: std::hash::BuildHasher> Peer<K> for fastbloom::BloomFilter<S> {
    #[inline]
    fn insert(&mut self, key: &K) {
        fastbloom::BloomFilter::insert(self, key);
    }
    #[inline]
    fn contains(&self, key: &K) -> bool {
        fastbloom::BloomFilter::contains(self, key)
    }
    fn bits(&self) -> u64 {
        self.num_bits() as u64
    }
}

impl<K: Hash + ?Sized> Peer<K> for bloomfilter::Bloom<K> {
    #[inline]
    fn insert(&mut self, key: &K) {
        self.set(key);
    }
    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.check(key)
    }
    fn bits(&self) -> u64 {
        self.len()
    }
}

/// sbbf-rs-safe takes a 64-bit hash; the key's bytes are hashed with
/// XXH3-64 (the same hash family lesshash uses).
struct Sbbf(sbbf_rs_safe::Filter);

impl<K: Key + ?Sized> Peer<K> for Sbbf {
    #[inline]
    fn insert(&mut self, key: &K) {
        self.0.insert_hash(key.with_bytes(xxh3_64));
    }
    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.0.contains_hash(key.with_bytes(xxh3_64))
    }
    fn bits(&self) -> u64 {
        self.0.as_bytes().len() as u64 * 8
    }
}

/// parquet's `Sbbf` (the Parquet format's reference Rust implementation):
/// 256-bit split blocks, XXH64 of the key's bytes, sized by Parquet's rule
/// and rounded up to a power of two bytes.
struct ParquetSbbf(parquet::bloom_filter::Sbbf);

impl<K: Key + ?Sized> Peer<K> for ParquetSbbf {
    #[inline]
    fn insert(&mut self, key: &K) {
        key.with_bytes(|b| self.0.insert(b));
    }
    #[inline]
    fn contains(&self, key: &K) -> bool {
        key.with_bytes(|b| self.0.check(b))
    }
    fn bits(&self) -> u64 {
        self.0.num_blocks() as u64 * 256
    }
}

fn sbbf(p: f64) -> Sbbf {
    let bits_per_key = (-8.0 / (1.0 - p.powf(1.0 / 8.0)).ln()).ceil() as usize;
    Sbbf(sbbf_rs_safe::Filter::new(bits_per_key, N as usize))
}

fn lesshash(layout: Layout, p: f64) -> BloomFilter {
    BloomFilter::builder()
        .layout(layout)
        .expected_items(N)
        .fpr(p)
        .build()
        .expect("valid bench geometry")
}

/// The key set of one key type: how the i-th member and non-member look.
trait KeyKind {
    type Owned: std::borrow::Borrow<Self::Borrowed>;
    type Borrowed: ?Sized + Key + Hash;
    const NAME: &'static str;
    fn make(x: u64) -> Self::Owned;
}

struct U64Keys;
impl KeyKind for U64Keys {
    type Owned = u64;
    type Borrowed = u64;
    const NAME: &'static str = "u64";
    fn make(x: u64) -> u64 {
        x
    }
}

struct StrKeys;
impl KeyKind for StrKeys {
    type Owned = String;
    type Borrowed = str;
    const NAME: &'static str = "str16";
    fn make(x: u64) -> String {
        String::from_utf8(hex16(x).to_vec()).expect("hex digits are UTF-8")
    }
}

/// Builds, fills and measures one peer, then times hit, miss and insert.
fn bench_peer<KK: KeyKind, P: Peer<KK::Borrowed>>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    p: f64,
    make: impl Fn() -> P,
) {
    use std::borrow::Borrow;
    // The filled filter and its hit and miss pools, built on first use.
    type State<P, O> = (P, Vec<O>, Vec<O>);
    let mut state: Option<State<P, KK::Owned>> = None;
    for op in ["hit", "miss", "insert"] {
        let mut cursor = Cursor::new();
        let id = BenchmarkId::new(format!("{name}/{op}/{}", KK::NAME), format!("p={p}"));
        g.bench_function(id, |b| {
            let (filter, hits, misses) = state.get_or_insert_with(|| {
                let mut f = make();
                for i in 0..N {
                    f.insert(KK::make(member(i)).borrow());
                }
                // Non-members past the query pool's range are used too; all
                // are distinct from members.
                let false_positives = (0..FPR_QUERIES)
                    .filter(|&i| f.contains(KK::make(non_member(i)).borrow()))
                    .count();
                let fpr = false_positives as f64 / FPR_QUERIES as f64;
                let bits_per_key = f.bits() as f64 / N as f64;
                eprintln!(
                    "peers: {name} {} p={p}: {bits_per_key:.2} bits/key, measured FPR {:.3}% \
                     ({false_positives} of {FPR_QUERIES} non-members)",
                    KK::NAME,
                    100.0 * fpr
                );
                append_side(
                    "peers.csv",
                    "peer,key,target_fpr,n,bits_per_key,measured_fpr,false_positives,queries",
                    &format!(
                        "{name},{},{p},{N},{bits_per_key:.4},{fpr:.6},{false_positives},{FPR_QUERIES}",
                        KK::NAME
                    ),
                );
                let hits = (0..POOL as u64)
                    .map(|j| KK::make(member(mix(j) % N)))
                    .collect();
                let misses = (0..POOL as u64)
                    .map(|j| KK::make(non_member(j)))
                    .collect();
                (f, hits, misses)
            });
            match op {
                "insert" => b.iter(|| {
                    for key in cursor.next(misses, CHUNK) {
                        filter.insert(black_box(key.borrow()));
                    }
                }),
                _ => {
                    let pool: &[KK::Owned] = if op == "hit" { hits } else { misses };
                    b.iter(|| {
                        let mut found = 0usize;
                        for key in cursor.next(pool, CHUNK) {
                            found += usize::from(filter.contains(black_box(key.borrow())));
                        }
                        black_box(found)
                    })
                }
            }
        });
    }
}

fn peers_for<KK: KeyKind>(g: &mut BenchmarkGroup<'_, WallTime>, p: f64)
where
    KK::Borrowed: Hash,
{
    for layout in [Layout::Classic, Layout::Blocked, Layout::SplitBlock] {
        bench_peer::<KK, _>(g, &format!("lesshash-{}", layout.name()), p, || {
            lesshash(layout, p)
        });
    }
    bench_peer::<KK, _>(g, "fastbloom-sip", p, || {
        fastbloom::BloomFilter::with_false_pos(p).expected_items(N as usize)
    });
    bench_peer::<KK, _>(g, "fastbloom-foldhash", p, || {
        fastbloom::BloomFilter::with_false_pos(p)
            .hasher(foldhash::fast::FixedState::with_seed(42))
            .expected_items(N as usize)
    });
    bench_peer::<KK, _>(g, "sbbf-rs-safe", p, || sbbf(p));
    bench_peer::<KK, _>(g, "parquet-sbbf", p, || {
        ParquetSbbf(
            parquet::bloom_filter::Sbbf::new_with_ndv_fpp(N, p).expect("valid Sbbf geometry"),
        )
    });
    bench_peer::<KK, _>(g, "bloomfilter", p, || {
        bloomfilter::Bloom::<KK::Borrowed>::new_for_fp_rate_with_seed(
            N as usize,
            p,
            &BLOOMFILTER_SEED,
        )
        .expect("valid bench parameters")
    });
}

/// Registers the peers group.
pub fn register(c: &mut Criterion) {
    let mut g = c.benchmark_group("peers");
    g.throughput(Throughput::Elements(CHUNK as u64));
    for p in FPRS {
        peers_for::<U64Keys>(&mut g, p);
        peers_for::<StrKeys>(&mut g, p);
    }
    g.finish();
}
