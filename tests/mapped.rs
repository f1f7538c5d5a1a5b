//! `MappedFilter`: a mapped file answers exactly as the filter that wrote
//! it, on every layout, scheme and query path; damaged files are errors at
//! open, never a crash; a file replaced while mapped keeps answering from
//! the old contents.

#![cfg(feature = "mmap")]

use lesshash::FormatError;
use std::path::Path;

use lesshash::{BloomFilter, Error, Layout, MappedFilter, Scheme, hash_key};

mod common;
use common::{members, non_members};

fn all_configs() -> Vec<(Layout, Scheme)> {
    Layout::ALL
        .into_iter()
        .flat_map(|l| Scheme::ALL.into_iter().map(move |s| (l, s)))
        .collect()
}

/// A filter of `items` capacity holding `n` members.
fn filled(layout: Layout, scheme: Scheme, items: u64, n: usize, seed: u64) -> BloomFilter {
    let mut f = BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .expected_items(items)
        .fpr(0.01)
        .seed(seed)
        .build()
        .unwrap();
    f.insert_batch(&members(seed, n));
    f
}

/// Half members, half non-members: enough keys for the parallel paths'
/// tasks (16,384 keys each) to split.
fn queries(seed: u64, n: usize) -> Vec<u64> {
    let mut keys = members(seed, n);
    keys.extend(non_members(seed, n));
    keys
}

/// Every query path of `m` against the owned filter `f`'s answers.
fn assert_same_answers(f: &BloomFilter, m: &MappedFilter, keys: &[u64], ctx: &str) {
    let mut expected = vec![false; keys.len()];
    f.contains_batch(keys, &mut expected).unwrap();
    let single: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
    assert_eq!(single, expected, "{ctx}: owned single vs batch");
    assert!(
        expected.iter().any(|&x| !x),
        "{ctx}: some keys must be absent"
    );

    let mapped: Vec<bool> = keys.iter().map(|k| m.contains(k)).collect();
    assert_eq!(mapped, expected, "{ctx}: contains");
    let view = m.view();
    let viewed: Vec<bool> = keys.iter().map(|k| view.contains(k)).collect();
    assert_eq!(viewed, expected, "{ctx}: view contains");

    let mut out = vec![false; keys.len()];
    m.contains_batch(keys, &mut out).unwrap();
    assert_eq!(out, expected, "{ctx}: contains_batch");
    let mut out = vec![false; keys.len()];
    view.contains_batch(keys, &mut out).unwrap();
    assert_eq!(out, expected, "{ctx}: view contains_batch");
    let mut out = vec![false; keys.len()];
    m.par_contains_batch(keys, &mut out).unwrap();
    assert_eq!(out, expected, "{ctx}: par_contains_batch");

    let bitmap = f.contains_batch_bitmap(keys);
    assert_eq!(m.contains_batch_bitmap(keys), bitmap, "{ctx}: bitmap");
    let mut into = vec![u64::MAX; bitmap.len()];
    m.contains_batch_into_bitmap(keys, &mut into).unwrap();
    assert_eq!(into, bitmap, "{ctx}: into_bitmap");

    match (f.prehashed(), m.prehashed()) {
        (Ok(owned), Ok(by_hash)) => {
            let hashes: Vec<u128> = keys.iter().map(|k| hash_key(k, m.seed())).collect();
            let one: Vec<bool> = hashes.iter().map(|&h| by_hash.contains(h)).collect();
            assert_eq!(one, expected, "{ctx}: prehashed contains");
            let mut out = vec![false; keys.len()];
            by_hash.contains_batch(&hashes, &mut out).unwrap();
            assert_eq!(out, expected, "{ctx}: prehashed batch");
            let mut out = vec![false; keys.len()];
            by_hash.par_contains_batch(&hashes, &mut out).unwrap();
            assert_eq!(out, expected, "{ctx}: prehashed par batch");
            assert_eq!(
                by_hash.contains_batch_bitmap(&hashes),
                owned.contains_batch_bitmap(&hashes),
                "{ctx}: prehashed bitmap"
            );
        }
        (Err(_), Err(Error::PrehashedUnsupported { .. })) => {}
        (a, b) => panic!("{ctx}: prehashed {:?} vs {:?}", a.is_ok(), b.is_ok()),
    }

    // The fill statistics run the same code on the same words.
    assert_eq!(m.count_ones(), f.count_ones(), "{ctx}");
    assert_eq!(m.fill_ratio().to_bits(), f.fill_ratio().to_bits(), "{ctx}");
    assert_eq!(
        m.estimated_len().to_bits(),
        f.estimated_len().to_bits(),
        "{ctx}"
    );
    assert_eq!(
        m.expected_fpr().to_bits(),
        f.expected_fpr().to_bits(),
        "{ctx}"
    );
    assert_eq!(view.count_ones(), f.count_ones(), "{ctx}");
    assert_eq!(
        (
            m.layout(),
            m.scheme(),
            m.num_bits(),
            m.num_hashes(),
            m.seed()
        ),
        (
            f.layout(),
            f.scheme(),
            f.num_bits(),
            f.num_hashes(),
            f.seed()
        ),
        "{ctx}"
    );
    assert_eq!(m.insert_calls(), f.insert_calls(), "{ctx}");
    assert_eq!(m.file_len(), f.serialized_len(), "{ctx}");
    assert_eq!(m.as_bytes(), f.to_bytes(), "{ctx}");
    assert_eq!(&m.to_filter().unwrap(), f, "{ctx}: to_filter");
}

fn write(dir: &Path, name: &str, f: &BloomFilter) -> std::path::PathBuf {
    let path = dir.join(name);
    f.write_file(&path).unwrap();
    path
}

#[test]
fn mapped_filters_answer_as_the_filter_that_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (layout, scheme)) in all_configs().into_iter().enumerate() {
        let seed = 0x3000 + i as u64;
        let f = filled(layout, scheme, 20_000, 20_000, seed);
        let path = write(dir.path(), &format!("{i}.lhbf"), &f);
        let keys = queries(seed, 20_000);
        for (how, m) in [
            ("open", MappedFilter::open(&path).unwrap()),
            ("unverified", MappedFilter::open_unverified(&path).unwrap()),
        ] {
            let ctx = format!("{} {} {how}", layout.name(), scheme.name());
            assert_eq!(m.path(), path);
            assert_same_answers(&f, &m, &keys, &ctx);
        }
    }
}

/// Filters larger than the prefetch threshold (`Prefetch::Auto` turns the
/// batch pipeline's prefetching on for the map too) and tiny ones (a single
/// block): the mapped batch reads the same bits.
#[test]
fn mapped_filters_answer_alike_at_every_size() {
    let dir = tempfile::tempdir().unwrap();
    for (layout, items) in [
        (Layout::Blocked, 2_000_000),
        (Layout::Classic, 1_000_000),
        (Layout::Blocked, 1),
        (Layout::Partitioned, 3),
    ] {
        let f = filled(
            layout,
            Scheme::default(),
            items,
            items.min(50_000) as usize,
            7,
        );
        if items > 1_000 {
            assert!(f.size_in_bytes() > lesshash::Prefetch::AUTO_MIN_BYTES);
        }
        let path = write(dir.path(), "f.lhbf", &f);
        let m = MappedFilter::open(&path).unwrap();
        let ctx = format!("{} items {items}", layout.name());
        assert_same_answers(&f, &m, &queries(7, 40_000), &ctx);
    }
}

#[test]
fn empty_filters_map() {
    let dir = tempfile::tempdir().unwrap();
    let f = BloomFilter::with_fpr(100, 0.01).unwrap();
    let m = MappedFilter::open(write(dir.path(), "e.lhbf", &f)).unwrap();
    assert_eq!(m.count_ones(), 0);
    assert!(!m.contains("x"));
    assert_eq!(m.contains_batch_bitmap::<&str>(&[]), Vec::<u64>::new());
}

#[test]
fn damaged_files_are_errors_at_open_never_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let f = filled(Layout::Blocked, Scheme::default(), 1000, 1000, 1);
    let good = f.to_bytes();
    let path = dir.path().join("bad.lhbf");
    let len = good.len();

    // Every length short of the whole file, and one byte too many.
    for cut in (0..len).chain([len + 1]) {
        let mut bytes = good.clone();
        bytes.resize(cut, 0);
        std::fs::write(&path, &bytes).unwrap();
        for verify in [true, false] {
            let r = if verify {
                MappedFilter::open(&path)
            } else {
                MappedFilter::open_unverified(&path)
            };
            match r {
                Err(
                    Error::Format(FormatError::Truncated { .. })
                    | Error::Format(FormatError::SizeMismatch { .. }),
                ) => {}
                other => panic!("length {cut} (of {len}), verify {verify}: {other:?}"),
            }
        }
    }

    // A flipped bit anywhere: the checked open refuses it; the unchecked
    // open refuses or answers, never crashes, and a payload flip answers.
    for pos in (0..len).step_by(7).chain([len - 1]) {
        let mut bytes = good.clone();
        bytes[pos] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        assert!(
            MappedFilter::open(&path).is_err(),
            "flip at {pos} accepted by open"
        );
        if let Ok(m) = MappedFilter::open_unverified(&path) {
            let _ = m.contains_batch_bitmap(&queries(1, 100));
        }
    }
    let mut bytes = good.clone();
    bytes[200] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        MappedFilter::open(&path),
        Err(Error::Format(FormatError::ChecksumMismatch { .. }))
    ));
    assert!(MappedFilter::open_unverified(&path).is_ok());
}

#[test]
fn paths_that_are_not_filter_files_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    match MappedFilter::open(dir.path()) {
        Err(Error::UnusablePath { .. } | Error::Io { .. }) => {}
        other => panic!("a directory: {other:?}"),
    }
    match MappedFilter::open(dir.path().join("missing")) {
        Err(Error::Io { context, .. }) => assert_eq!(context, "opening the file"),
        other => panic!("a missing file: {other:?}"),
    }
}

/// A FIFO with no writer: opening it for reading would wait for a writer
/// forever; both opens refuse it at once by its type. Run on a thread
/// with a deadline, so that a hang fails the test instead of the suite.
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_at_once_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for verify in [true, false] {
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let r = if verify {
                MappedFilter::open(&path)
            } else {
                MappedFilter::open_unverified(&path)
            };
            let _ = tx.send(r.map(drop));
        });
        match rx.recv_timeout(std::time::Duration::from_secs(10)) {
            Ok(Err(Error::UnusablePath { reason })) => {
                assert!(reason.contains("not a regular file"), "{reason}");
            }
            Ok(other) => panic!("verify={verify}: {other:?}"),
            Err(_) => panic!("verify={verify}: open waited on the FIFO for 10 s"),
        }
    }
}

/// A socket and character devices are refused by their type too (the
/// documented error, at once), never opened as a filter.
#[cfg(unix)]
#[test]
fn sockets_and_devices_are_refused_by_their_type() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for path in [
        socket.as_path(),
        Path::new("/dev/null"),
        Path::new("/dev/zero"),
    ] {
        for r in [
            MappedFilter::open(path),
            MappedFilter::open_unverified(path),
        ] {
            match r {
                Err(Error::UnusablePath { reason }) => {
                    assert!(reason.contains("not a regular file"), "{reason}");
                }
                other => panic!("{}: {other:?}", path.display()),
            }
        }
    }
}

/// A regular file that cannot be mapped (`mmap` of /proc/self/status
/// fails with ENODEV) is read instead: the error is the format's (not a
/// filter: bad magic), not "I/O error while mapping the file". The read
/// path's answers and errors equal the map's (`mapped::tests`).
#[cfg(target_os = "linux")]
#[test]
fn an_unmappable_regular_file_is_read_instead() {
    let path = std::path::Path::new("/proc/self/status");
    assert!(std::fs::metadata(path).unwrap().is_file());
    for verify in [true, false] {
        let r = if verify {
            MappedFilter::open(path)
        } else {
            MappedFilter::open_unverified(path)
        };
        match r {
            Err(Error::Format(FormatError::BadMagic { .. })) => {}
            other => panic!("verify={verify}: {other:?}"),
        }
    }
}

/// `write_file` renames a new file over the path: the map keeps the old
/// inode, and a new open sees the new filter.
#[test]
fn a_file_replaced_while_mapped_keeps_answering_from_the_old_contents() {
    let dir = tempfile::tempdir().unwrap();
    let old = filled(Layout::Blocked, Scheme::default(), 10_000, 10_000, 11);
    let path = write(dir.path(), "f.lhbf", &old);
    let m = MappedFilter::open(&path).unwrap();

    let mut new = BloomFilter::with_fpr(50_000, 0.001).unwrap();
    new.insert_batch(&members(12, 1000));
    new.write_file(&path).unwrap();

    let keys = queries(11, 10_000);
    assert_same_answers(&old, &m, &keys, "after the replace");
    // A map saves the contents it maps, also over its own path.
    m.write_file(dir.path().join("copy.lhbf")).unwrap();
    assert_eq!(
        &BloomFilter::read_file(dir.path().join("copy.lhbf")).unwrap(),
        &old
    );
    let reopened = MappedFilter::open(&path).unwrap();
    assert_eq!(reopened.num_bits(), new.num_bits());
    assert_same_answers(&new, &reopened, &queries(12, 1000), "reopened");
    reopened.write_file(&path).unwrap();
    assert_same_answers(&new, &reopened, &queries(12, 1000), "saved over itself");
    assert_eq!(&BloomFilter::read_file(&path).unwrap(), &new);
    drop(m);
}

/// One map shared by threads (`MappedFilter` is `Send + Sync`).
#[test]
fn threads_share_one_map() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<MappedFilter>();
    let dir = tempfile::tempdir().unwrap();
    let f = filled(Layout::Blocked, Scheme::default(), 10_000, 10_000, 5);
    let m = MappedFilter::open(write(dir.path(), "f.lhbf", &f)).unwrap();
    let keys = queries(5, 10_000);
    let expected = f.contains_batch_bitmap(&keys);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert_eq!(m.contains_batch_bitmap(&keys), expected));
        }
    });
}

/// `MappedCache`: a file is mapped once until it is replaced, then mapped
/// afresh and answered from its new contents; a removed or damaged file is
/// an error and caches nothing; old versions and the least
/// recently used files are let go.
#[test]
fn a_cache_maps_a_file_once_until_it_is_replaced() {
    use lesshash::MappedCache;
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let cache = MappedCache::new(2);
    let one = |k: u64| {
        let mut f = BloomFilter::with_fpr(100, 0.001).unwrap();
        f.insert(&k);
        f
    };
    let path = write(dir.path(), "f.lhbf", &one(1));
    let a = cache.open(&path).unwrap();
    let b = cache.open(&path).unwrap();
    assert!(Arc::ptr_eq(&a, &b), "mapped once");
    assert!(a.contains(&1u64) && !a.contains(&2u64));
    assert_eq!(cache.len(), 1);

    // Replaced (renamed over: a new inode): mapped afresh, and the old
    // version let go by the cache (held here only).
    one(2).write_file(&path).unwrap();
    let c = cache.open(&path).unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert!(c.contains(&2u64) && !c.contains(&1u64));
    assert!(a.contains(&1u64), "a caller's old version still answers");
    assert_eq!((cache.len(), Arc::strong_count(&a)), (1, 2));
    drop((a, b));

    // Removed: `MappedFilter::open`'s error; nothing cached for it.
    std::fs::remove_file(&path).unwrap();
    let err = cache.open(&path).unwrap_err().to_string();
    assert!(err.contains("No such file"), "{err}");
    // The removed file's map (held by `c`) stays until no caller holds it.
    assert_eq!(cache.len(), 1);
    drop(c);
    let g = write(dir.path(), "g.lhbf", &one(3));
    let _g = cache.open(&g).unwrap();
    assert_eq!(cache.len(), 1, "the removed file's map let go: {cache:?}");

    // Damaged: the checksum error, and nothing cached.
    let bad = dir.path().join("bad.lhbf");
    let mut bytes = one(4).to_bytes();
    bytes[100] ^= 1;
    std::fs::write(&bad, bytes).unwrap();
    assert!(
        cache
            .open(&bad)
            .unwrap_err()
            .to_string()
            .contains("checksum")
    );
    assert_eq!(cache.len(), 1);

    // At most `capacity` files: the least recently used goes first.
    let h = write(dir.path(), "h.lhbf", &one(5));
    let i = write(dir.path(), "i.lhbf", &one(6));
    let h1 = cache.open(&h).unwrap();
    cache.open(&g).unwrap(); // g is now the most recently used
    cache.open(&i).unwrap(); // h goes
    assert_eq!(cache.len(), 2);
    assert!(!Arc::ptr_eq(&h1, &cache.open(&h).unwrap()), "h was let go");
    cache.clear();
    assert!(cache.is_empty());
}

/// Threads missing on the same new file at once share one map.
#[test]
fn a_cache_opens_a_file_once_for_concurrent_callers() {
    use lesshash::MappedCache;
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let f = filled(Layout::Blocked, Scheme::default(), 100_000, 100_000, 9);
    let path = write(dir.path(), "f.lhbf", &f);
    let cache = MappedCache::new(4);
    let maps: Vec<Arc<MappedFilter>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| cache.open(&path).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(maps.iter().all(|m| Arc::ptr_eq(m, &maps[0])));
    assert_same_answers(&f, &maps[0], &queries(9, 10_000), "cached");
}

/// `advise_random` and `will_need` are advice to the kernel only: after
/// either (and both), every query path answers as before.
#[test]
fn access_advice_changes_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let f = filled(Layout::Blocked, Scheme::default(), 50_000, 50_000, 0x5150);
    let path = write(dir.path(), "advised.lhbf", &f);
    let keys = queries(0x5150, 20_000);
    let m = MappedFilter::open(&path).unwrap();
    m.advise_random();
    assert_same_answers(&f, &m, &keys, "advise_random");
    m.will_need();
    assert_same_answers(&f, &m, &keys, "will_need");
}
