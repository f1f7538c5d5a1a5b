//! Batch paths: equal to the single-key paths for every layout, scheme,
//! kernel and prefetch mode; bitmap variants; lengths; errors.
//!
//! The kernel and the prefetch mode are each filter's own options, so
//! these tests run in parallel with no shared state.

mod common;

use common::{build, members, non_members};
use lesshash::{BloomFilter, Kernel, Layout, Scheme, hash_key};
use lesshash::{Prefetch, bitmap_words};

fn configs() -> Vec<(Layout, Scheme, u64, u32)> {
    let mut v = Vec::new();
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            for (m, k) in [
                (512u64, 1u32),
                (1024, 8),
                (3 * 512 + 1, 7),
                (100_000, 5),
                (64 * 512, 16),
            ] {
                v.push((layout, scheme, m, k));
            }
        }
    }
    v
}

/// The single-key path is the reference; every kernel and prefetch mode
/// gives the same bits and the same answers, on lengths around the chunk
/// and lane sizes.
#[test]
fn batch_equals_single_for_every_kernel_and_prefetch_mode() {
    for (t, (layout, scheme, m, k)) in configs().into_iter().enumerate() {
        let seed = t as u64;
        for n in [0usize, 1, 7, 31, 32, 33, 95, 300] {
            let keys = members(seed, n);
            let queries: Vec<u64> = keys.iter().copied().chain(non_members(seed, 200)).collect();
            let mut single = build(layout, scheme, m, k, seed);
            keys.iter().for_each(|key| single.insert(key));
            let expected: Vec<bool> = queries.iter().map(|q| single.contains(q)).collect();
            for kern in Kernel::available() {
                for (mode, distance) in [
                    (Prefetch::Never, 1),
                    (Prefetch::Always, 1),
                    (Prefetch::Always, 3),
                    (Prefetch::Auto, 1),
                ] {
                    let ctx = format!(
                        "{layout:?} {scheme:?} m={m} k={k} n={n} {kern:?} {mode:?} ahead {distance}"
                    );
                    let tuned = || {
                        let mut f = build(layout, scheme, m, k, seed);
                        f.set_kernel(kern).unwrap();
                        f.set_prefetch(mode);
                        f.set_prefetch_distance(distance).unwrap();
                        assert_eq!(
                            (f.kernel(), f.prefetch(), f.prefetch_distance()),
                            (kern, mode, distance)
                        );
                        f
                    };
                    let mut f = tuned();
                    f.insert_batch(&keys);
                    assert!(f == single, "{ctx}: bits differ");
                    assert_eq!(f.insert_calls(), n as u64);
                    let mut out = vec![false; queries.len()];
                    f.contains_batch(&queries, &mut out).unwrap();
                    assert_eq!(out, expected, "{ctx}");
                    assert!(out[..n].iter().all(|&x| x), "{ctx}: false negative");
                    let bitmap = f.contains_batch_bitmap(&queries);
                    assert_eq!(bitmap.len(), bitmap_words(queries.len()));
                    for (i, &e) in expected.iter().enumerate() {
                        assert_eq!(bitmap[i / 64] >> (i % 64) & 1 == 1, e, "{ctx} bitmap {i}");
                    }
                    let mut into = vec![u64::MAX; bitmap.len()];
                    f.contains_batch_into_bitmap(&queries, &mut into).unwrap();
                    assert_eq!(into, bitmap);
                    if scheme.is_two_hash() {
                        let hk: Vec<u128> = keys.iter().map(|x| hash_key(x, seed)).collect();
                        let hq: Vec<u128> = queries.iter().map(|x| hash_key(x, seed)).collect();
                        let mut g = tuned();
                        g.prehashed_mut().unwrap().insert_batch(&hk);
                        assert!(g == single, "{ctx}: pre-hashed bits differ");
                        let by_hash = g.prehashed().unwrap();
                        by_hash.contains_batch(&hq, &mut out).unwrap();
                        assert_eq!(out, expected, "{ctx} pre-hashed");
                        assert_eq!(by_hash.contains_batch_bitmap(&hq), bitmap);
                        for (&h, &e) in hq.iter().zip(&expected) {
                            assert_eq!(by_hash.contains(h), e, "{ctx} pre-hashed single");
                        }
                    }
                }
            }
        }
    }
}

/// Key types other than u64 go through the same pipeline.
#[test]
fn all_key_types() {
    let mut f = build(Layout::Blocked, Scheme::default(), 1 << 16, 6, 1);
    let strings: Vec<String> = (0..100).map(|i| format!("key-{i}")).collect();
    let strs: Vec<&str> = strings.iter().map(String::as_str).collect();
    let bytes: Vec<Vec<u8>> = strings.iter().map(|s| s.clone().into_bytes()).collect();
    let small: Vec<u32> = (0..100).collect();
    f.insert_batch(&strs);
    f.insert_batch(&small);
    let mut out = vec![false; 100];
    f.contains_batch(&strings, &mut out).unwrap();
    assert!(out.iter().all(|&x| x));
    f.contains_batch(&bytes, &mut out).unwrap();
    assert!(out.iter().all(|&x| x), "str and bytes hash alike");
    f.contains_batch(&small, &mut out).unwrap();
    assert!(out.iter().all(|&x| x));
    assert!(strs.iter().all(|s| f.contains(*s)));
}

#[test]
fn batch_errors_name_the_argument() {
    let f = build(Layout::SplitBlock, Scheme::default(), 4096, 8, 1);
    let e = f.contains_batch(&[1u64, 2], &mut [false; 3]).unwrap_err();
    assert!(e.to_string().contains("`out`"), "{e}");
    let e = f
        .contains_batch_into_bitmap(&[1u64; 65], &mut [0; 1])
        .unwrap_err();
    assert!(e.to_string().contains("`out`"), "{e}");
    let mut ind = build(Layout::Blocked, Scheme::Independent, 4096, 4, 1);
    let e = ind.prehashed_mut().unwrap_err();
    assert!(e.to_string().contains("`independent`"), "{e}");
    assert!(ind.prehashed().is_err());
    let by_hash = f.prehashed().unwrap();
    let e = by_hash
        .contains_batch(&[1, 2], &mut [false; 3])
        .unwrap_err();
    assert!(e.to_string().contains("`out`"), "{e}");
    assert!(f.contains_batch_bitmap::<u64>(&[]).is_empty());
}

#[test]
fn a_kernel_the_cpu_lacks_is_refused_by_name() {
    for kern in Kernel::ALL {
        let mut f = build(Layout::Blocked, Scheme::default(), 4096, 8, 1);
        let before = f.kernel();
        let built = BloomFilter::builder()
            .bits(4096)
            .hashes(3)
            .kernel(kern)
            .build();
        match f.set_kernel(kern) {
            Ok(()) => {
                assert_eq!(f.kernel(), kern);
                assert_eq!(built.unwrap().kernel(), kern);
            }
            Err(e) => {
                assert!(!kern.is_available());
                assert!(e.to_string().contains("`kernel`"), "{e}");
                assert_eq!(f.kernel(), before, "a refused kernel changed the filter");
                assert!(built.unwrap_err().to_string().contains("`kernel`"));
            }
        }
    }
    // Loaded and cloned filters run on the automatic kernel / keep theirs.
    let mut f = build(Layout::Blocked, Scheme::default(), 4096, 8, 1);
    f.set_kernel(Kernel::Scalar).unwrap();
    assert_eq!(f.clone().kernel(), Kernel::Scalar);
    let back = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(back.kernel(), Kernel::auto());
    assert!(back == f, "the kernel is not part of a filter's identity");
}

/// A prefetch distance outside 1 to `Prefetch::MAX_DISTANCE` is refused by
/// name, by the builder and by the setter (which then changes nothing).
#[test]
fn a_prefetch_distance_out_of_range_is_refused_by_name() {
    let mut f = build(Layout::Blocked, Scheme::default(), 4096, 8, 1);
    assert_eq!(f.prefetch_distance(), Prefetch::DEFAULT_DISTANCE);
    for bad in [0, Prefetch::MAX_DISTANCE + 1, u32::MAX] {
        let e = f.set_prefetch_distance(bad).unwrap_err();
        assert!(e.to_string().contains("`prefetch_distance`"), "{e}");
        assert_eq!(f.prefetch_distance(), Prefetch::DEFAULT_DISTANCE);
        let e = BloomFilter::builder()
            .bits(4096)
            .hashes(3)
            .prefetch_distance(bad)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("`prefetch_distance`"), "{e}");
    }
    for good in [1, Prefetch::MAX_DISTANCE] {
        let built = BloomFilter::builder()
            .bits(4096)
            .hashes(3)
            .prefetch_distance(good)
            .build()
            .unwrap();
        assert_eq!(built.prefetch_distance(), good);
    }
}

/// Above `PREFETCH_MIN_BYTES` (1 MiB), where `Prefetch::Auto` turns the
/// prefetching pipeline on (every other batch test uses filters of at most
/// 100k bits, where Auto means off): a 2 MiB filter per layout, batch
/// inserts and queries with prefetching off, on (distance 1 and 3) and
/// Auto, against the single-key path, bits and answers (members and
/// non-members, plain and pre-hashed). A pipeline that probes the wrong
/// stage of its ring (`ring[(c + 1) % slots]` in src/filter/batch.rs `pipeline`)
/// fails here under `Always` and `Auto` but not `Never`: Auto did switch
/// prefetching on (docs/testing.md).
#[test]
fn prefetch_auto_above_one_mebibyte_equals_single_keys() {
    let m = 1u64 << 24; // 2 MiB
    assert!(m / 8 > lesshash::Prefetch::AUTO_MIN_BYTES as u64);
    for (t, layout) in Layout::ALL.into_iter().enumerate() {
        let scheme = Scheme::default();
        let k = 7;
        let seed = 40 + t as u64;
        let keys = members(seed, 20_000);
        let queries: Vec<u64> = keys
            .iter()
            .copied()
            .chain(non_members(seed, 20_000))
            .collect();
        let mut single = build(layout, scheme, m, k, seed);
        keys.iter().for_each(|key| single.insert(key));
        assert!(single.size_in_bytes() > lesshash::Prefetch::AUTO_MIN_BYTES);
        let expected: Vec<bool> = queries.iter().map(|q| single.contains(q)).collect();
        assert!(expected.iter().filter(|&&x| !x).count() > 10_000);
        let hashes: Vec<u128> = queries.iter().map(|q| hash_key(q, seed)).collect();
        for (mode, distance) in [
            (Prefetch::Never, 1),
            (Prefetch::Always, 1),
            (Prefetch::Always, 3),
            (Prefetch::Auto, 1),
            (Prefetch::Auto, 3),
        ] {
            let ctx = format!("{layout:?} {mode:?} ahead {distance}");
            let mut f = build(layout, scheme, m, k, seed);
            f.set_prefetch(mode);
            f.set_prefetch_distance(distance).unwrap();
            f.insert_batch(&keys);
            assert!(f == single, "{ctx}: bits differ");
            let mut out = vec![false; queries.len()];
            f.contains_batch(&queries, &mut out).unwrap();
            assert!(out == expected, "{ctx}: answers differ");
            let mut by_hash = build(layout, scheme, m, k, seed);
            by_hash.set_prefetch(mode);
            by_hash.set_prefetch_distance(distance).unwrap();
            by_hash
                .prehashed_mut()
                .unwrap()
                .insert_batch(&hashes[..keys.len()]);
            assert!(by_hash == single, "{ctx}: pre-hashed bits differ");
            let mut out = vec![false; queries.len()];
            by_hash
                .prehashed()
                .unwrap()
                .contains_batch(&hashes, &mut out)
                .unwrap();
            assert!(out == expected, "{ctx}: pre-hashed answers differ");
        }
    }
}
