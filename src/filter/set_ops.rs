//! Set operations on filters of identical parameters: union (bitwise OR),
//! intersection (bitwise AND), and cardinality estimates of unions and
//! intersections without materialising them.
//!
//! # What a union is
//!
//! A key's bits depend only on the key and the parameters (layout, scheme,
//! seed, m, k), so the OR of the filters of sets A and B is, bit for bit,
//! the filter of A ∪ B: it answers exactly as if every key had been inserted
//! into one filter, with that filter's false-positive rate.
//!
//! # What an intersection is
//!
//! The AND of the filters of A and B has no false negatives for A ∩ B but is
//! not the filter of A ∩ B; its false-positive rate is documented on
//! `BloomFilter::intersect`.

#![forbid(unsafe_code)]

use crate::Error;
use crate::filter::BloomFilter;
use crate::layout::Layout;
use crate::layout::flat::classic;
use crate::rates::estimate_items;
use crate::util::bits::count_ones_in;

impl BloomFilter {
    /// Checks that two filters can be combined: same layout, scheme, hash
    /// family, seed, bits and hashes (in that order).
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first parameter that differs.
    pub fn check_compatible(&self, other: &BloomFilter) -> Result<(), Error> {
        let (a, b) = (self.geometry(), other.geometry());
        let differ = |parameter: &'static str, left: String, right: String| {
            Err(Error::Incompatible {
                parameter,
                left,
                right,
            })
        };
        if a.layout != b.layout {
            return differ("layout", a.layout.name().into(), b.layout.name().into());
        }
        if a.scheme != b.scheme {
            return differ("scheme", a.scheme.name().into(), b.scheme.name().into());
        }
        if a.hash_family != b.hash_family {
            return differ(
                "hash family",
                a.hash_family.name().into(),
                b.hash_family.name().into(),
            );
        }
        if a.seed != b.seed {
            return differ("seed", format!("{:#x}", a.seed), format!("{:#x}", b.seed));
        }
        if a.num_bits != b.num_bits {
            return differ("bits", a.num_bits.to_string(), b.num_bits.to_string());
        }
        if a.num_hashes != b.num_hashes {
            return differ("hashes", a.num_hashes.to_string(), b.num_hashes.to_string());
        }
        debug_assert_eq!(a, b);
        Ok(())
    }

    /// Adds every key of `other` to this filter (bitwise OR). The result
    /// equals, bit for bit, the filter built from both key sets. The insert
    /// counters add up.
    ///
    /// ```
    /// use lesshash::BloomFilter;
    ///
    /// let mut a = BloomFilter::with_fpr(1000, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert("apple");
    /// b.insert("pear");
    /// a.union(&b)?;
    /// assert!(a.contains("apple") && a.contains("pear"));
    /// # Ok::<(), lesshash::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Incompatible`] (see [`check_compatible`](Self::check_compatible));
    /// `self` is unchanged then.
    pub fn union(&mut self, other: &BloomFilter) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.words_mut().iter_mut().zip(other.words()) {
            *a |= b;
        }
        self.set_insert_calls(self.insert_calls().saturating_add(other.insert_calls()));
        self.record_key_kind(other.key_kind());
        Ok(())
    }

    /// Keeps only the bits set in both filters (bitwise AND): no false
    /// negatives for keys in both sets. The insert counter becomes the
    /// smaller of the two.
    ///
    /// # False-positive rate
    ///
    /// The result is **not** the filter of A ∩ B: a bit can be set in both
    /// inputs by different keys (one from A \ B, one from B \ A). For the
    /// classic layout under ideal hashing, with `q = (1 - 1/m)^k`, a bit is
    /// set in the AND with probability
    /// `s = 1 - q^|A| - q^|B| + q^|A ∪ B|`, and a key outside A ∪ B is a
    /// false positive with probability about `s^k` (per sub-array for the
    /// partitioned layout). That lies between the rate of the filter of
    /// A ∩ B, `(1 - q^|A ∩ B|)^k`, and the smaller of the inputs' rates
    /// (tested in `tests/set_ops.rs`). [`expected_fpr`](Self::expected_fpr)
    /// of the result measures its actual fill, so it reports this rate; its
    /// [`estimated_len`](Self::estimated_len) overestimates |A ∩ B| for the
    /// same reason; [`estimated_intersection_len`](Self::estimated_intersection_len)
    /// estimates |A ∩ B| by inclusion–exclusion instead.
    ///
    /// # Errors
    /// [`Error::Incompatible`]; `self` is unchanged then.
    pub fn intersect(&mut self, other: &BloomFilter) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.words_mut().iter_mut().zip(other.words()) {
            *a &= b;
        }
        self.set_insert_calls(self.insert_calls().min(other.insert_calls()));
        self.record_key_kind(other.key_kind());
        Ok(())
    }

    /// Whether every bit set in this filter is set in `other` (the filters
    /// compatible): then every key this filter may hold, `other` may hold
    /// too. The filter of a subset of `other`'s keys always is one (its bits
    /// are among the union's, which is `other`'s); the converse is only
    /// probable, as a membership answer is: keys outside `other`'s set can
    /// land on bits `other` has set.
    ///
    /// ```
    /// use lesshash::BloomFilter;
    ///
    /// let mut a = BloomFilter::with_fpr(1000, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert("apple");
    /// b.insert_batch(&["apple", "pear"]);
    /// assert!(a.is_subset(&b)? && !b.is_subset(&a)?);
    /// # Ok::<(), lesshash::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn is_subset(&self, other: &BloomFilter) -> Result<bool, Error> {
        self.check_compatible(other)?;
        Ok(self
            .words()
            .iter()
            .zip(other.words())
            .all(|(a, b)| a & !b == 0))
    }

    /// A new filter, the union of `a` and `b` (see [`union`](Self::union)).
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn union_of(a: &BloomFilter, b: &BloomFilter) -> Result<BloomFilter, Error> {
        a.check_compatible(b)?;
        let mut out = a.clone();
        out.union(b)?;
        Ok(out)
    }

    /// A new filter, the intersection of `a` and `b` (see
    /// [`intersect`](Self::intersect)).
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn intersection_of(a: &BloomFilter, b: &BloomFilter) -> Result<BloomFilter, Error> {
        a.check_compatible(b)?;
        let mut out = a.clone();
        out.intersect(b)?;
        Ok(out)
    }

    /// The estimated number of distinct keys in the union of the two
    /// filters' sets: the layout's cardinality formula (as
    /// [`estimated_len`](Self::estimated_len)) applied to the popcount of the
    /// OR, counted on the fly without building the union (classic and
    /// partitioned; other layouts build it). Equal to
    /// `BloomFilter::union_of(self, other)?.estimated_len()` (tested bit for
    /// bit).
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn estimated_union_len(&self, other: &BloomFilter) -> Result<f64, Error> {
        self.check_compatible(other)?;
        let g = self.geometry();
        let (a, b) = (self.words(), other.words());
        let or = |i: usize| a[i] | b[i];
        Ok(match g.layout {
            Layout::Classic => {
                classic::estimated_len(g.num_bits, g.num_hashes, count_ones_in(or, 0, g.num_bits))
            }
            Layout::Partitioned => {
                // The same per-sub-array sum as partitioned::estimated_len.
                let part = g.range;
                (0..u64::from(g.num_hashes))
                    .map(|i| estimate_items(part, 1, count_ones_in(or, i * part, (i + 1) * part)))
                    .sum::<f64>()
                    / f64::from(g.num_hashes)
            }
            // No streaming formula here (yet): correct, but builds the
            // union. (No catch-all arm: a new layout must choose.)
            Layout::Blocked | Layout::SplitBlock => {
                BloomFilter::union_of(self, other)?.estimated_len()
            }
        })
    }

    /// The estimated number of distinct keys in both filters' sets, by
    /// inclusion–exclusion: `|A| + |B| - |A ∪ B|`, each term estimated from
    /// the fill, clamped at 0. (The AND's own fill overestimates it; see the
    /// module docs.)
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn estimated_intersection_len(&self, other: &BloomFilter) -> Result<f64, Error> {
        let union = self.estimated_union_len(other)?;
        Ok((self.estimated_len() + other.estimated_len() - union).max(0.0))
    }
}
