//! No false negatives, on every scheme x layout x geometry and every path.

mod common;

use lesshash::{BloomFilter, HashFamily, Layout, Scheme, hash_key};
use proptest::prelude::*;

fn layouts() -> impl Strategy<Value = Layout> {
    prop::sample::select(Layout::ALL.to_vec())
}

fn schemes() -> impl Strategy<Value = Scheme> {
    prop::sample::select(Scheme::ALL.to_vec())
}

fn families() -> impl Strategy<Value = HashFamily> {
    prop::sample::select(HashFamily::ALL.to_vec())
}

fn keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..120)
}

#[allow(clippy::too_many_arguments)]
fn check(
    layout: Layout,
    scheme: Scheme,
    family: HashFamily,
    m: u64,
    k: u32,
    seed: u64,
    keys: &[Vec<u8>],
    batch: bool,
) {
    // The family applies to the two-hash schemes (the builder refuses
    // another for `Independent`).
    let family = if scheme.is_two_hash() {
        family
    } else {
        HashFamily::Xxh3
    };
    let built = BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .hash_family(family)
        .bits(m)
        .hashes(k)
        .seed(seed)
        .build();
    let mut f = match built {
        Ok(f) => f,
        Err(e) => {
            // The only geometry the builder may refuse here: a partitioned
            // filter with fewer bits than sub-arrays.
            assert!(layout == Layout::Partitioned && m < u64::from(k), "{e}");
            return;
        }
    };
    if batch {
        f.insert_batch(keys);
    } else {
        for key in keys {
            f.insert(key);
        }
    }
    for key in keys {
        assert!(
            f.contains(key),
            "false negative: {layout:?} {scheme:?} {family:?} m={m} k={k}"
        );
    }
    let mut out = vec![false; keys.len()];
    f.contains_batch(keys, &mut out).unwrap();
    assert!(out.iter().all(|&x| x), "batch false negative");
    if scheme.is_two_hash() {
        let hashes: Vec<u128> = keys.iter().map(|k| family.hash_key(k, seed)).collect();
        if family == HashFamily::Xxh3 {
            assert!(
                keys.iter()
                    .zip(&hashes)
                    .all(|(k, &h)| h == hash_key(k, seed))
            );
        }
        let mut batch_hashes = vec![0; keys.len()];
        f.prehashed()
            .unwrap()
            .hash_batch(keys, &mut batch_hashes)
            .unwrap();
        assert_eq!(hashes, batch_hashes, "the handle's batch hash");
        f.prehashed()
            .unwrap()
            .contains_batch(&hashes, &mut out)
            .unwrap();
        assert!(out.iter().all(|&x| x), "pre-hashed false negative");
        // Inserting by hash into a fresh filter gives the same bits.
        let mut g = f.clone();
        g.clear();
        g.prehashed_mut().unwrap().insert_batch(&hashes);
        assert_eq!(f, g);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn tiny_filters(layout in layouts(), scheme in schemes(), family in families(),
                    m in 1u64..=130, k in 1u32..=BloomFilter::MAX_HASHES, seed: u64,
                    keys in keys(), batch: bool) {
        check(layout, scheme, family, m, k, seed, &keys, batch);
    }

    #[test]
    fn larger_filters(layout in layouts(), scheme in schemes(), family in families(),
                      m in 131u64..200_000, k in 1u32..=BloomFilter::MAX_HASHES, seed: u64,
                      keys in keys(), batch: bool) {
        check(layout, scheme, family, m, k, seed, &keys, batch);
    }
}

#[test]
fn sized_filters_every_combination() {
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            for (n, p) in [(1u64, 0.01), (1000, 0.01), (1000, 1e-6), (20_000, 0.1)] {
                let mut f = BloomFilter::builder()
                    .layout(layout)
                    .scheme(scheme)
                    .expected_items(n)
                    .fpr(p)
                    .build()
                    .unwrap();
                let keys = common::members(n ^ 7, n as usize);
                f.insert_batch(&keys);
                assert!(
                    keys.iter().all(|k| f.contains(k)),
                    "{layout:?} {scheme:?} n={n} p={p}"
                );
            }
        }
    }
}

#[test]
fn edge_keys() {
    let long = vec![0xabu8; 1 << 20];
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            let mut f = BloomFilter::builder()
                .layout(layout)
                .scheme(scheme)
                .bits(4096)
                .hashes(5)
                .build()
                .unwrap();
            f.insert(b"");
            f.insert(&long);
            f.insert_batch::<&str>(&[]);
            f.insert_batch(&["one"]);
            assert!(f.contains(b"") && f.contains(&long) && f.contains("one"));
            let mut out: [bool; 0] = [];
            f.contains_batch::<&str>(&[], &mut out).unwrap();
        }
    }
}
