//! The shared-insert form: threads inserting disjoint key sets through an
//! `Arc<AtomicBloomFilter>` produce exactly the sequentially built filter,
//! queries running concurrently with inserts find every key inserted
//! before them, and one thread's calls answer and set bits exactly as the
//! owned filter's do.

use std::sync::{Arc, Barrier};
use std::thread;

use lesshash::{AtomicBloomFilter, BloomFilter, Kernel, Layout, Scheme, hash_key};

const THREADS: u64 = 4;
const PER_THREAD: u64 = 20_000;

fn empty(layout: Layout, scheme: Scheme) -> BloomFilter {
    with_fpr(layout, scheme, 0.01)
}

fn with_fpr(layout: Layout, scheme: Scheme, fpr: f64) -> BloomFilter {
    BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .expected_items(THREADS * PER_THREAD)
        .fpr(fpr)
        .build()
        .unwrap()
}

#[test]
fn threads_inserting_disjoint_keys_equal_the_sequential_filter() {
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            let shared = Arc::new(AtomicBloomFilter::from(empty(layout, scheme)));
            let start = Arc::new(Barrier::new(THREADS as usize));
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (shared, start) = (Arc::clone(&shared), Arc::clone(&start));
                    thread::spawn(move || {
                        start.wait(); // all threads insert at once
                        for key in t * PER_THREAD..(t + 1) * PER_THREAD {
                            shared.insert(&key);
                        }
                    })
                })
                .collect();
            for w in workers {
                w.join().unwrap();
            }
            let all = 0..THREADS * PER_THREAD;
            assert!(
                all.clone().all(|k| shared.contains(&k)),
                "{layout:?} {scheme:?}"
            );
            assert_eq!(shared.insert_calls(), THREADS * PER_THREAD);
            let snapshot = shared.to_filter().unwrap();
            let filter = Arc::into_inner(shared).unwrap().into_inner();
            let mut sequential = empty(layout, scheme);
            for key in all.clone() {
                sequential.insert(&key);
            }
            assert!(filter == sequential, "{layout:?} {scheme:?}");
            assert!(snapshot == sequential);
            assert_eq!(filter.insert_calls(), THREADS * PER_THREAD);
            assert!(all.clone().all(|k| filter.contains(&k)));
        }
    }
}

/// Keys inserted before the readers start (happens-before through
/// `thread::spawn`) are always found while writers keep inserting; keys a
/// writer inserted before signalling through the barrier are found by
/// every reader after it.
#[test]
fn queries_concurrent_with_inserts_find_everything_inserted_before() {
    let shared = Arc::new(empty(Layout::Classic, Scheme::default()).into_atomic());
    for key in 0..PER_THREAD {
        shared.insert(&key);
    }
    let phase = Arc::new(Barrier::new(4));
    let writers: Vec<_> = (1..3u64)
        .map(|t| {
            let (shared, phase) = (Arc::clone(&shared), Arc::clone(&phase));
            thread::spawn(move || {
                let half = PER_THREAD / 2;
                for key in t * PER_THREAD..t * PER_THREAD + half {
                    shared.insert(&key);
                }
                phase.wait();
                for key in t * PER_THREAD + half..(t + 1) * PER_THREAD {
                    shared.insert(&key);
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (shared, phase) = (Arc::clone(&shared), Arc::clone(&phase));
            thread::spawn(move || {
                let mut misses = 0;
                for _ in 0..3 {
                    misses += (0..PER_THREAD).filter(|k| !shared.contains(k)).count();
                }
                phase.wait();
                for t in 1..3u64 {
                    let first_half = t * PER_THREAD..t * PER_THREAD + PER_THREAD / 2;
                    misses += first_half.filter(|k| !shared.contains(k)).count();
                }
                misses
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for r in readers {
        assert_eq!(
            r.join().unwrap(),
            0,
            "false negatives during concurrent inserts"
        );
    }
    assert!((0..3 * PER_THREAD).all(|k| shared.contains(&k)));
}

#[test]
fn prehashed_inserts_and_the_independent_scheme() {
    let a = empty(Layout::Partitioned, Scheme::DoubleHashing).into_atomic();
    let mut b = empty(Layout::Partitioned, Scheme::DoubleHashing);
    let by_hash = a.prehashed().unwrap();
    for key in 0..1000u64 {
        by_hash.insert(hash_key(&key, a.seed()));
        b.insert(&key);
    }
    assert!(by_hash.contains(by_hash.hash(&7u64)));
    assert_eq!(a.insert_calls(), 1000);
    assert!(a.to_filter().unwrap() == b);

    let ind = empty(Layout::Classic, Scheme::Independent).into_atomic();
    assert!(
        ind.prehashed()
            .unwrap_err()
            .to_string()
            .contains("independent")
    );
    ind.insert("k");
    assert!(ind.contains("k"));
    assert_eq!(
        (ind.layout(), ind.scheme()),
        (Layout::Classic, Scheme::Independent)
    );
    let f = BloomFilter::from(ind);
    assert!(f.contains("k"));
    assert_eq!(f.insert_calls(), 1);
    assert!(format!("{:?}", f.into_atomic()).len() < 300);
}

/// On every layout, scheme and available kernel, with k <= 8 (1%) and
/// k > 8 (0.01%: the blocked layouts' vector probes loop over groups of
/// eight there), the atomic filter answers every query (members, and
/// enough non-members for false positives) as the owned filter with the
/// same bits does: its one-key calls read blocks word by word with relaxed
/// loads and put them together in registers for the vector test, where
/// the owned filter loads them as vectors. Inserting keys again (every bit
/// set: nothing is written), or keys whose bits are partly set (the
/// relaxed load that skips a locked OR when a word has the key's bits
/// already), leaves exactly the owned filter's bits.
#[test]
fn one_thread_answers_and_sets_bits_as_the_owned_filter() {
    let n = THREADS * PER_THREAD;
    for (kernel, fpr) in Kernel::available()
        .into_iter()
        .flat_map(|kernel| [(kernel, 0.01), (kernel, 1e-4)])
    {
        for layout in Layout::ALL {
            for scheme in Scheme::ALL {
                let what = format!("{kernel:?} {layout:?} {scheme:?} {fpr}");
                let mut owned = with_fpr(layout, scheme, fpr);
                owned.set_kernel(kernel).unwrap();
                for key in 0..n {
                    owned.insert(&key);
                }
                let atomic = AtomicBloomFilter::new(owned.clone());
                let mut positives = 0u64;
                for key in 0..2 * n {
                    let found = atomic.contains(&key);
                    assert_eq!(found, owned.contains(&key), "{what}: key {key}");
                    positives += u64::from(found);
                    let text = format!("k{key}");
                    assert_eq!(atomic.contains(&text), owned.contains(&text), "{what}");
                }
                assert!(positives > n, "{what}: no false positive was compared");
                // Half the keys again, half new: both filters, the same bits.
                for key in n / 2..n + n / 2 {
                    atomic.insert(&key);
                    owned.insert(&key);
                }
                assert!(atomic.to_filter().unwrap() == owned, "{what}");
            }
        }
    }
}
