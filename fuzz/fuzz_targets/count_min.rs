//! A stream of Count-Min updates checked against exact counts: estimates
//! never underestimate, batch and single estimates agree, the total is the
//! stream's L1 norm, and merging two sketches equals (without conservative
//! update: exactly) the sketch of the concatenated stream. A reload saves
//! the sketch in the binary format and goes on with the loaded copy, which
//! must equal it.

#![no_main]

use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use lesshash::internals::primes::next_prime;
use lesshash::{CountMinScheme, CountMinSketch};
use libfuzzer_sys::fuzz_target;

/// Keys from a small alphabet so that they repeat and collide.
type Key = u8;

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Add(Key, u64),
    AddSmall(Key, u8),
    AddBatch(Vec<Key>, u16),
    AddUpdates(Vec<(Key, u8)>),
    Estimate(Key),
    EstimateBatch(Vec<Key>),
    Clear,
    /// Merge a second sketch of the same dimensions fed with these updates.
    Merge(Vec<(Key, u16)>),
    /// Save and load the sketch (`to_bytes`/`from_bytes`, or
    /// `write_to`/`read_from`) and continue with the loaded one (the first
    /// `MAX_RELOADS` of an input, on sketches of up to
    /// `MAX_RELOAD_COUNTERS`).
    Reload(bool),
}

#[derive(Arbitrary, Debug)]
struct Input {
    independent: bool,
    conservative: bool,
    width: u16,
    depth: u8,
    seed: u64,
    ops: Vec<Op>,
}

/// Exact counts (saturating like the sketch) and the total, and an exact
/// model of the counters: each update applied to the key's columns
/// (`CountMinSketch::columns`) by the sketch's rule, plain (add the count)
/// or conservative (raise each counter to the key's minimum plus the
/// count). The sketch's estimates must equal the model's, so a sketch that
/// ignored `conservative` fails.
#[derive(Clone)]
struct Model {
    counts: BTreeMap<Key, u64>,
    total: u64,
    table: Vec<u64>,
    width: usize,
    conservative: bool,
}

impl Model {
    fn new(sketch: &CountMinSketch) -> Self {
        let rows = sketch.columns(&[0u8]).len();
        let width = sketch.width() as usize;
        Model {
            counts: BTreeMap::new(),
            total: 0,
            table: vec![0; rows * width],
            width,
            conservative: sketch.is_conservative(),
        }
    }

    fn slots(&self, sketch: &CountMinSketch, key: Key) -> Vec<usize> {
        let w = self.width;
        let cols = sketch.columns(&[key]);
        cols.iter()
            .enumerate()
            .map(|(row, &col)| row * w + col as usize)
            .collect()
    }

    fn add(&mut self, sketch: &CountMinSketch, key: Key, count: u64) {
        let c = self.counts.entry(key).or_default();
        *c = c.saturating_add(count);
        self.total = self.total.saturating_add(count);
        let at = self.slots(sketch, key);
        if self.conservative {
            let min = at.iter().map(|&i| self.table[i]).min().unwrap_or(0);
            let target = min.saturating_add(count);
            for i in at {
                self.table[i] = self.table[i].max(target);
            }
        } else {
            for i in at {
                self.table[i] = self.table[i].saturating_add(count);
            }
        }
    }

    fn estimate(&self, sketch: &CountMinSketch, key: Key) -> u64 {
        let at = self.slots(sketch, key);
        at.iter().map(|&i| self.table[i]).min().unwrap_or(0)
    }

    /// `merge`: the counters and totals add up (saturating).
    fn merge(&mut self, other: &Model) {
        for (mine, theirs) in self.table.iter_mut().zip(&other.table) {
            *mine = mine.saturating_add(*theirs);
        }
        for (&k, &c) in &other.counts {
            let mine = self.counts.entry(k).or_default();
            *mine = mine.saturating_add(c);
        }
        self.total = self.total.saturating_add(other.total);
    }
}

/// Reloads acted on per input (later `Reload` ops do nothing).
const MAX_RELOADS: usize = 2;

/// The largest sketch a `Reload` saves and loads, in counters.
const MAX_RELOAD_COUNTERS: usize = 1 << 13;

fn run(input: Input) {
    let scheme = if input.independent {
        CountMinScheme::Independent
    } else {
        CountMinScheme::DoubleHashing
    };
    let width = u64::from(input.width % 4096).max(1);
    let width = if input.independent {
        width
    } else {
        next_prime(width).unwrap()
    };
    let builder = CountMinSketch::builder()
        .scheme(scheme)
        .width(width)
        .depth(u32::from(input.depth % 16).max(1))
        .seed(input.seed)
        .conservative(input.conservative);
    let mut sketch = match builder.clone().build() {
        Ok(s) => s,
        Err(e) => {
            assert!(e.to_string().contains('`'), "error names no parameter: {e}");
            return;
        }
    };
    let mut model = Model::new(&sketch);
    // The whole stream (since the last clear), to rebuild the sketch.
    let mut stream: Vec<(Key, u64)> = Vec::new();
    let mut reloads = 0;
    for op in input.ops {
        match op {
            Op::Add(key, count) => {
                sketch.add(&[key], count);
                model.add(&sketch, key, count);
                stream.push((key, count));
            }
            Op::AddSmall(key, count) => {
                sketch.add(&[key], u64::from(count));
                model.add(&sketch, key, u64::from(count));
                stream.push((key, u64::from(count)));
            }
            Op::AddBatch(keys, count) => {
                let keys: Vec<[u8; 1]> = keys.iter().map(|&k| [k]).collect();
                sketch.add_batch(&keys, u64::from(count));
                for k in keys {
                    model.add(&sketch, k[0], u64::from(count));
                    stream.push((k[0], u64::from(count)));
                }
            }
            Op::AddUpdates(updates) => {
                let updates: Vec<([u8; 1], u64)> =
                    updates.iter().map(|&(k, c)| ([k], u64::from(c))).collect();
                sketch.add_updates(&updates);
                for (k, c) in updates {
                    model.add(&sketch, k[0], c);
                    stream.push((k[0], c));
                }
            }
            Op::Estimate(key) => {
                let truth = model.counts.get(&key).copied().unwrap_or(0);
                assert!(sketch.estimate(&[key]) >= truth);
            }
            Op::EstimateBatch(keys) => {
                let keys: Vec<[u8; 1]> = keys.iter().map(|&k| [k]).collect();
                let mut out = vec![0; keys.len()];
                sketch.estimate_batch(&keys, &mut out).unwrap();
                for (key, est) in keys.iter().zip(&out) {
                    assert_eq!(*est, sketch.estimate(key), "batch and single disagree");
                }
                let mut wrong = vec![0; keys.len() + 1];
                assert!(sketch.estimate_batch(&keys, &mut wrong).is_err());
            }
            Op::Clear => {
                sketch.clear();
                model = Model::new(&sketch);
                stream.clear();
                assert_eq!(sketch.total(), 0);
            }
            Op::Merge(updates) => {
                let mut other = builder.clone().build().unwrap();
                let mut other_model = Model::new(&other);
                for &(k, c) in &updates {
                    other.add(&[k], u64::from(c));
                    other_model.add(&other, k, u64::from(c));
                    stream.push((k, u64::from(c)));
                }
                sketch.merge(&other).unwrap();
                model.merge(&other_model);
                if !input.conservative {
                    // Linear sketch: the merge is the sketch of the whole stream.
                    let mut whole = builder.clone().build().unwrap();
                    for &(k, c) in &stream {
                        whole.add(&[k], c);
                    }
                    for key in 0..=Key::MAX {
                        assert_eq!(whole.estimate(&[key]), sketch.estimate(&[key]));
                    }
                }
                // Merging a sketch of other dimensions is an error.
                let other_seed = builder.clone().seed(input.seed ^ 1).build().unwrap();
                assert!(sketch.merge(&other_seed).is_err());
            }
            // Serialising hashes every counter, slow under the fuzzer's
            // instrumentation (a reload per op made the CI step 4.7x
            // slower): the first `MAX_RELOADS` of an input, on sketches of
            // up to `MAX_RELOAD_COUNTERS` (count_min_from_bytes and
            // tests/count_min_format.rs cover larger ones).
            Op::Reload(_)
                if reloads >= MAX_RELOADS || sketch.size_in_bytes() > 8 * MAX_RELOAD_COUNTERS => {}
            Op::Reload(streamed) => {
                reloads += 1;
                // `==` compares every counter, so equal sketches give equal
                // estimates; the byte-level checks are count_min_from_bytes'.
                let loaded = if streamed {
                    let mut bytes = Vec::new();
                    sketch.write_to(&mut bytes).unwrap();
                    CountMinSketch::read_from(&bytes[..])
                } else {
                    CountMinSketch::from_bytes(&sketch.to_bytes())
                };
                let loaded = loaded.unwrap_or_else(|e| panic!("a saved sketch does not load: {e}"));
                assert!(loaded == sketch, "the loaded sketch differs");
                sketch = loaded;
            }
        }
    }
    check(&sketch, &model);
}

/// Every key's estimate is at least its true count and at most the total.
fn check(sketch: &CountMinSketch, model: &Model) {
    assert_eq!(
        sketch.total(),
        model.total,
        "total differs from the stream's"
    );
    for key in 0..=Key::MAX {
        let truth = model.counts.get(&key).copied().unwrap_or(0);
        let est = sketch.estimate(&[key]);
        assert!(est >= truth, "underestimate for {key}: {est} < {truth}");
        assert_eq!(
            est,
            model.estimate(sketch, key),
            "estimate of {key} differs from the counter model"
        );
        if model.total < u64::MAX {
            assert!(
                est <= model.total,
                "estimate {est} above the total {}",
                model.total
            );
        }
    }
}

fuzz_target!(|input: Input| run(input));
