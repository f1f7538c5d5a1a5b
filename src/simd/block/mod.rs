//! The blocked layouts' in-register line tests, one module per backend
//! (`avx2`, `avx512`: intrinsics behind their CPU tokens; `wide`: the
//! portable one), and [`VectorBackend`], the one dispatcher, chosen once per
//! filter from its [`Kernel`] and stored in its geometry (`Blocks`). Each
//! backend computes the positions `layout::blocked::addressing` defines
//! (the layout owns the rule; these are its vector forms, tested against
//! it bit for bit).

// `forbid` would extend to `avx2` and `avx512`, the submodules with
// `unsafe` (their intrinsics and the calls into their `target_feature`
// functions); the dispatch below has none.
#![deny(unsafe_code)]

/// The methods and the chunk and fused functions of an intrinsics line test
/// (`avx2`, `avx512`), written once: `$ty` holds the token of the CPU
/// features `$features` (a string for `target_feature`), and the backend
/// supplies `block_test::<SPLIT>(line, h2, consts) -> bool` and its
/// k <= 8 form `block_test8`, the key's mask `block_mask::<SPLIT>(h2,
/// consts)` and its form for exactly K <= 8 probes `block_mask8::<SPLIT,
/// K>`, and `or_into(line, mask)`, compiled with those features. Each
/// method calls into them with `SPLIT` (`consts.step != 0`: the
/// split-block layout) as a const generic, so that the blocked line test
/// compiles to its one multiply and shift. The chunk forms are one call
/// into vector code per chunk, the per-key probe inlined in it (a call per
/// key cost more than the probe). The single-key forms are one call from
/// the key to the answer: `contains_key` / `insert_key` ([`KeyRoute`]'s)
/// hash the key, look its block up and probe it in the vector function,
/// generic over the key type so that the hash stays specialised to the
/// key's length (taking the key's bytes instead, XXH3 ran its length
/// dispatch there and made the query slower); `block_contains` /
/// `block_insert` do the same from a hash the caller already has (the
/// pre-hashed handles).
#[cfg(target_arch = "x86_64")]
macro_rules! intrinsics_line_test {
    ($ty:ident, $features:literal) => {
        impl $ty {
            /// Whether the k probe bits of a blocked-layout key (its h2) are
            /// all set in `line` (the same bits as the scalar probe).
            #[inline]
            pub(crate) fn block_test(
                self,
                line: &[u64; 8],
                h2: u64,
                consts: $crate::layout::blocked::addressing::InBlockConstants,
            ) -> bool {
                // SAFETY: `self` holds the token, which exists only if the
                // CPU has the features (`crate::simd::cpu`): the one precondition
                // of calling these `target_feature` functions, which take
                // references only and index with checks.
                unsafe {
                    if consts.step == 0 {
                        block_test::<false>(bytemuck::cast(*line), h2, &consts)
                    } else {
                        block_test::<true>(bytemuck::cast(*line), h2, &consts)
                    }
                }
            }

            /// [`block_test`](Self::block_test) of a block read word by
            /// word ([`Line::get`](crate::util::bits::Line::get): atomic
            /// words), the words put together in registers.
            #[inline]
            pub(crate) fn block_test_loaded<L: $crate::util::bits::Line>(
                self,
                line: &L,
                h2: u64,
                consts: &$crate::layout::blocked::addressing::InBlockConstants,
            ) -> bool {
                // SAFETY: as in `block_test`.
                unsafe {
                    if consts.step == 0 {
                        block_test_loaded::<L, false>(line, h2, consts)
                    } else {
                        block_test_loaded::<L, true>(line, h2, consts)
                    }
                }
            }

            /// Whether the key with this hash is possibly in a
            /// blocked-layout filter of `blocks` blocks in plain `words`:
            /// the block looked up and tested in one vector function.
            #[inline]
            pub(crate) fn block_contains(
                self,
                words: &[u64],
                hash: u128,
                blocks: u64,
                consts: &$crate::layout::blocked::addressing::InBlockConstants,
            ) -> bool {
                // SAFETY: as in `block_test`.
                unsafe {
                    if consts.step == 0 {
                        block_contains_fused::<false>(words, hash, blocks, consts)
                    } else {
                        block_contains_fused::<true>(words, hash, blocks, consts)
                    }
                }
            }

            /// Whether `key` is possibly in a blocked-layout filter (its
            /// blocks `lines`, plain words): the one-key query from the
            /// key to the answer in one vector function, the key's hash
            /// (specialised to its type) included. `SPLIT` as everywhere;
            /// `SMALL`: k <= 8 (the probe with no loop).
            #[inline]
            pub(crate) fn contains_key<K, const SPLIT: bool, const SMALL: bool>(
                self,
                lines: &[[u64; 8]],
                key: &K,
                route: &$crate::simd::block::KeyRoute,
            ) -> bool
            where
                K: $crate::Key + ?Sized,
            {
                // SAFETY: as in `block_test`.
                unsafe { contains_key::<K, SPLIT, SMALL>(lines, key, route) }
            }

            /// [`contains_key`](Self::contains_key) for a filter whose
            /// blocks are read word by word (`W::line`, then `Line::get`:
            /// atomic words), each block put together in registers.
            #[inline]
            pub(crate) fn contains_key_loaded<W, K, const SPLIT: bool, const SMALL: bool>(
                self,
                words: &W,
                key: &K,
                route: &$crate::simd::block::KeyRoute,
            ) -> bool
            where
                W: $crate::util::bits::Words + ?Sized,
                K: $crate::Key + ?Sized,
            {
                // SAFETY: as in `block_test`.
                unsafe { contains_key_loaded::<W, K, SPLIT, SMALL>(words, key, route) }
            }

            /// Sets the bits of `key` in a blocked-layout filter (its
            /// blocks `lines`, plain words): [`contains_key`]'s insert.
            #[inline]
            pub(crate) fn insert_key<K, const SPLIT: bool>(
                self,
                lines: &mut [[u64; 8]],
                key: &K,
                route: &$crate::simd::block::KeyRoute,
            ) where
                K: $crate::Key + ?Sized,
            {
                // SAFETY: as in `block_test`.
                unsafe { insert_key::<K, SPLIT>(lines, key, route) }
            }

            /// [`insert_key`](Self::insert_key) into words that are not
            /// plain (atomic words): the key's mask built in registers and
            /// tested against the block read word by word; where bits are
            /// missing, ORed by `W::or_line` (atomic words: a locked OR per
            /// word that lacks some). A key whose bits are all set (a
            /// repeat, or bits set by other keys) writes nothing.
            #[inline]
            pub(crate) fn insert_key_loaded<W, K, const SPLIT: bool>(
                self,
                words: &mut W,
                key: &K,
                route: &$crate::simd::block::KeyRoute,
            ) where
                W: $crate::util::bits::Words + $crate::util::bits::WordsMut + ?Sized,
                K: $crate::Key + ?Sized,
            {
                // SAFETY: as in `block_test`.
                unsafe { insert_key_loaded::<W, K, SPLIT>(words, key, route) }
            }

            /// Sets the bits of the key with this hash (the fused insert).
            #[inline]
            pub(crate) fn block_insert(
                self,
                words: &mut [u64],
                hash: u128,
                blocks: u64,
                consts: &$crate::layout::blocked::addressing::InBlockConstants,
            ) {
                // SAFETY: as in `block_test`.
                unsafe {
                    if consts.step == 0 {
                        block_insert_fused::<false>(words, hash, blocks, consts)
                    } else {
                        block_insert_fused::<true>(words, hash, blocks, consts)
                    }
                }
            }

            /// Sets the bits of a chunk of keys (blocks `blocks`, hashes
            /// `hashes`) in plain `words`, each key's mask built in
            /// registers and ORed into its line: one call per chunk.
            #[inline]
            pub(crate) fn block_set_chunk(
                self,
                words: &mut [u64],
                blocks: &[usize],
                hashes: &[u128],
                consts: $crate::layout::blocked::addressing::InBlockConstants,
            ) {
                // SAFETY: as in `block_test`.
                unsafe {
                    if consts.step == 0 {
                        block_set_chunk::<false>(words, blocks, hashes, &consts)
                    } else {
                        block_set_chunk::<true>(words, blocks, hashes, &consts)
                    }
                }
            }

            /// [`block_test`](Self::block_test) for a chunk of keys: key
            /// j's block `blocks[j]` of `words` (whole 512-bit lines), its
            /// hash `hashes[j]`, the answer in `out[j]`: one call per chunk.
            #[inline]
            pub(crate) fn block_test_chunk(
                self,
                words: &[u64],
                blocks: &[usize],
                hashes: &[u128],
                consts: $crate::layout::blocked::addressing::InBlockConstants,
                out: &mut [bool],
            ) {
                // SAFETY: as in `block_test`.
                unsafe {
                    if consts.step == 0 {
                        block_test_chunk::<false>(words, blocks, hashes, &consts, out)
                    } else {
                        block_test_chunk::<true>(words, blocks, hashes, &consts, out)
                    }
                }
            }
        }

        #[target_feature(enable = $features)]
        fn block_test_loaded<L: $crate::util::bits::Line, const SPLIT: bool>(
            line: &L,
            h2: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) -> bool {
            let line = load_block(line);
            if consts.k <= 8 {
                block_test8::<SPLIT>(line, h2, consts)
            } else {
                block_test::<SPLIT>(line, h2, consts)
            }
        }

        #[target_feature(enable = $features)]
        fn block_test_chunk<const SPLIT: bool>(
            words: &[u64],
            blocks: &[usize],
            hashes: &[u128],
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
            out: &mut [bool],
        ) {
            let (lines, _) = words.as_chunks::<8>();
            let keys = blocks.iter().zip(hashes).zip(out);
            // k <= 8 as its own loop: the compiler did not take the
            // branch out of the loop itself (more instructions per key;
            // docs/bench-notes/2026-11-27.md, "Blocked chunk loops for
            // k <= 8").
            if consts.k <= 8 {
                for ((&b, &h), o) in keys {
                    *o = block_test8::<SPLIT>(
                        bytemuck::cast(lines[b]),
                        $crate::hash::split(h).1,
                        consts,
                    );
                }
            } else {
                for ((&b, &h), o) in keys {
                    *o = block_test::<SPLIT>(
                        bytemuck::cast(lines[b]),
                        $crate::hash::split(h).1,
                        consts,
                    );
                }
            }
        }

        #[target_feature(enable = $features)]
        fn block_set_chunk<const SPLIT: bool>(
            words: &mut [u64],
            blocks: &[usize],
            hashes: &[u128],
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) {
            let (lines, _) = words.as_chunks_mut::<8>();
            // k <= 8: the probes unrolled for the filter's k, one loop per
            // k (a loop over a run-time k cost more than the probes).
            match consts.k {
                1 => set_chunk8::<SPLIT, 1>(lines, blocks, hashes, consts),
                2 => set_chunk8::<SPLIT, 2>(lines, blocks, hashes, consts),
                3 => set_chunk8::<SPLIT, 3>(lines, blocks, hashes, consts),
                4 => set_chunk8::<SPLIT, 4>(lines, blocks, hashes, consts),
                5 => set_chunk8::<SPLIT, 5>(lines, blocks, hashes, consts),
                6 => set_chunk8::<SPLIT, 6>(lines, blocks, hashes, consts),
                7 => set_chunk8::<SPLIT, 7>(lines, blocks, hashes, consts),
                8 => set_chunk8::<SPLIT, 8>(lines, blocks, hashes, consts),
                _ => {
                    for (&b, &h) in blocks.iter().zip(hashes) {
                        or_mask::<SPLIT>(&mut lines[b], $crate::hash::split(h).1, consts);
                    }
                }
            }
        }

        /// ORs the mask of a key (its h2) into its line.
        #[target_feature(enable = $features)]
        #[inline]
        fn or_mask<const SPLIT: bool>(
            line: &mut [u64; 8],
            h2: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) {
            or_into(line, block_mask::<SPLIT>(h2, consts));
        }

        /// [`or_mask`] for exactly `K` <= 8 probes (`block_mask8`).
        #[target_feature(enable = $features)]
        #[inline]
        fn or_mask8<const SPLIT: bool, const K: u32>(
            line: &mut [u64; 8],
            h2: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) {
            or_into(line, block_mask8::<SPLIT, K>(h2, consts));
        }

        #[target_feature(enable = $features)]
        #[inline]
        fn set_chunk8<const SPLIT: bool, const K: u32>(
            lines: &mut [[u64; 8]],
            blocks: &[usize],
            hashes: &[u128],
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) {
            for (&b, &h) in blocks.iter().zip(hashes) {
                or_mask8::<SPLIT, K>(&mut lines[b], $crate::hash::split(h).1, consts);
            }
        }

        #[target_feature(enable = $features)]
        fn block_contains_fused<const SPLIT: bool>(
            words: &[u64],
            hash: u128,
            blocks: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) -> bool {
            let (h1, h2) = $crate::hash::split(hash);
            let b = $crate::layout::blocked::addressing::block_index(h1, blocks) as usize;
            block_test::<SPLIT>(bytemuck::cast(words.as_chunks::<8>().0[b]), h2, consts)
        }

        #[target_feature(enable = $features)]
        fn contains_key<K, const SPLIT: bool, const SMALL: bool>(
            lines: &[[u64; 8]],
            key: &K,
            route: &$crate::simd::block::KeyRoute,
        ) -> bool
        where
            K: $crate::Key + ?Sized,
        {
            let consts = &route.consts;
            let hash = key.with_bytes(|bytes| $crate::hash::short::hash_one(bytes, &route.secrets));
            let (h1, h2) = $crate::hash::split(hash);
            let b = $crate::layout::blocked::addressing::block_index(h1, route.blocks) as usize;
            let line = bytemuck::cast(lines[b]);
            if SMALL {
                block_test8::<SPLIT>(line, h2, consts)
            } else {
                block_test::<SPLIT>(line, h2, consts)
            }
        }

        #[target_feature(enable = $features)]
        fn contains_key_loaded<W, K, const SPLIT: bool, const SMALL: bool>(
            words: &W,
            key: &K,
            route: &$crate::simd::block::KeyRoute,
        ) -> bool
        where
            W: $crate::util::bits::Words + ?Sized,
            K: $crate::Key + ?Sized,
        {
            let consts = &route.consts;
            let hash = key.with_bytes(|bytes| $crate::hash::short::hash_one(bytes, &route.secrets));
            let (h1, h2) = $crate::hash::split(hash);
            let b = $crate::layout::blocked::addressing::block_index(h1, route.blocks) as usize;
            let line = load_block(&words.line(b));
            if SMALL {
                block_test8::<SPLIT>(line, h2, consts)
            } else {
                block_test::<SPLIT>(line, h2, consts)
            }
        }

        #[target_feature(enable = $features)]
        fn insert_key<K, const SPLIT: bool>(
            lines: &mut [[u64; 8]],
            key: &K,
            route: &$crate::simd::block::KeyRoute,
        ) where
            K: $crate::Key + ?Sized,
        {
            let consts = &route.consts;
            let hash = key.with_bytes(|bytes| $crate::hash::short::hash_one(bytes, &route.secrets));
            let (h1, h2) = $crate::hash::split(hash);
            let b = $crate::layout::blocked::addressing::block_index(h1, route.blocks) as usize;
            let line = &mut lines[b];
            // k <= 8 unrolled for the filter's k (one jump on k), as the
            // chunk insert does.
            match consts.k {
                1 => or_mask8::<SPLIT, 1>(line, h2, consts),
                2 => or_mask8::<SPLIT, 2>(line, h2, consts),
                3 => or_mask8::<SPLIT, 3>(line, h2, consts),
                4 => or_mask8::<SPLIT, 4>(line, h2, consts),
                5 => or_mask8::<SPLIT, 5>(line, h2, consts),
                6 => or_mask8::<SPLIT, 6>(line, h2, consts),
                7 => or_mask8::<SPLIT, 7>(line, h2, consts),
                8 => or_mask8::<SPLIT, 8>(line, h2, consts),
                _ if SPLIT => or_mask_many::<SPLIT>(line, h2, consts),
                _ => or_mask::<SPLIT>(line, h2, consts),
            }
        }

        /// [`or_mask`] for a split-block key with k > 8 (filters under
        /// 0.4%), out of line: inlined into `insert_key`, its two groups'
        /// registers gave every k <= 8 arm a stack frame, the common
        /// filters paying for the rare ones. The blocked mask stays inline:
        /// there the call cost its k > 8 keys more than the frame saved.
        #[target_feature(enable = $features)]
        #[inline(never)]
        fn or_mask_many<const SPLIT: bool>(
            line: &mut [u64; 8],
            h2: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) {
            or_mask::<SPLIT>(line, h2, consts);
        }

        #[target_feature(enable = $features)]
        fn insert_key_loaded<W, K, const SPLIT: bool>(
            words: &mut W,
            key: &K,
            route: &$crate::simd::block::KeyRoute,
        ) where
            W: $crate::util::bits::Words + $crate::util::bits::WordsMut + ?Sized,
            K: $crate::Key + ?Sized,
        {
            let consts = &route.consts;
            let hash = key.with_bytes(|bytes| $crate::hash::short::hash_one(bytes, &route.secrets));
            let (h1, h2) = $crate::hash::split(hash);
            let b = $crate::layout::blocked::addressing::block_index(h1, route.blocks) as usize;
            let mask = match consts.k {
                1 => block_mask8::<SPLIT, 1>(h2, consts),
                2 => block_mask8::<SPLIT, 2>(h2, consts),
                3 => block_mask8::<SPLIT, 3>(h2, consts),
                4 => block_mask8::<SPLIT, 4>(h2, consts),
                5 => block_mask8::<SPLIT, 5>(h2, consts),
                6 => block_mask8::<SPLIT, 6>(h2, consts),
                7 => block_mask8::<SPLIT, 7>(h2, consts),
                8 => block_mask8::<SPLIT, 8>(h2, consts),
                _ if SPLIT => return insert_many_loaded::<W, SPLIT>(words, b, h2, consts),
                _ => block_mask::<SPLIT>(h2, consts),
            };
            or_missing(words, b, mask);
        }

        /// [`insert_key_loaded`]'s k > 8 arm, out of line for the reason
        /// [`or_mask_many`] is.
        #[target_feature(enable = $features)]
        #[inline(never)]
        fn insert_many_loaded<W, const SPLIT: bool>(
            words: &mut W,
            b: usize,
            h2: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) where
            W: $crate::util::bits::Words + $crate::util::bits::WordsMut + ?Sized,
        {
            or_missing(words, b, block_mask::<SPLIT>(h2, consts));
        }

        /// ORs `mask` into block `b` of words that are not plain, unless
        /// the block, read with relaxed loads, already has every bit of it
        /// (then nothing is written: a repeated key).
        #[target_feature(enable = $features)]
        #[inline]
        fn or_missing<W>(words: &mut W, b: usize, mask: Block)
        where
            W: $crate::util::bits::Words + $crate::util::bits::WordsMut + ?Sized,
        {
            if !covers(load_block(&words.line(b)), mask) {
                words.or_line(b, bytemuck::cast(mask));
            }
        }

        #[target_feature(enable = $features)]
        fn block_insert_fused<const SPLIT: bool>(
            words: &mut [u64],
            hash: u128,
            blocks: u64,
            consts: &$crate::layout::blocked::addressing::InBlockConstants,
        ) {
            let (h1, h2) = $crate::hash::split(hash);
            let b = $crate::layout::blocked::addressing::block_index(h1, blocks) as usize;
            or_mask::<SPLIT>(&mut words.as_chunks_mut::<8>().0[b], h2, consts);
        }
    };
}
#[cfg(target_arch = "x86_64")]
use intrinsics_line_test;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod wide;

use crate::layout::blocked::addressing::InBlockConstants;
use crate::simd::kernel::Kernel;

/// The in-register line test of a filter, chosen once when the filter is built
/// or loaded: AVX-512 when the kernel in use is AVX-512 and AVX2 when it
/// is AVX2 (each implies the CPU has it: the token proves it), the portable `wide` test when it is
/// [`Kernel::Wide`] (inserts stay scalar), otherwise none and the layout's
/// scalar probe runs. The one dispatcher of the blocked layouts' vector
/// probes: each method tests the token, then the flag, once per call (per
/// chunk for the chunk forms). Which probe runs
/// never changes an answer, so it is not part of a filter's identity: any
/// two compare equal.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct VectorBackend {
    /// The AVX-512 probe, with the token that proves the CPU has it.
    /// Tested after AVX2's: the default kernel pays no extra branch.
    #[cfg(target_arch = "x86_64")]
    avx512: Option<avx512::Avx512LineTest>,
    /// The AVX2 probe, with the token that proves the CPU has it.
    #[cfg(target_arch = "x86_64")]
    avx2: Option<avx2::Avx2LineTest>,
    /// `wide`'s `u32x8` test ([`wide::block_test`]), instructions chosen
    /// at compile time; inserts by the scalar probe. (A field beside the
    /// token, not an enum with it: as an enum, the AVX2 batch calls
    /// measured slower with the same instructions per key;
    /// docs/bench-notes/2026-11-26.md.)
    wide: bool,
}

impl PartialEq for VectorBackend {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for VectorBackend {}

impl VectorBackend {
    /// The probe for `kernel`: AVX-512 for [`Kernel::Avx512`] and AVX2 for
    /// [`Kernel::Avx2`] on a CPU with it,
    /// `wide`'s for [`Kernel::Wide`] where it is built with the lane
    /// operations it needs ([`wide::BLOCK_LINE_TEST`]), none otherwise.
    pub(crate) fn for_kernel(kernel: Kernel) -> Self {
        Self {
            #[cfg(target_arch = "x86_64")]
            avx512: (kernel == Kernel::Avx512)
                .then(avx512::Avx512LineTest::detect)
                .flatten(),
            #[cfg(target_arch = "x86_64")]
            avx2: (kernel == Kernel::Avx2)
                .then(avx2::Avx2LineTest::detect)
                .flatten(),
            wide: kernel == Kernel::Wide && wide::BLOCK_LINE_TEST,
        }
    }

    /// `wide`'s test, whatever the kernel and build (tests).
    #[cfg(test)]
    pub(crate) fn wide() -> Self {
        Self {
            wide: true,
            ..Self::default()
        }
    }

    /// The blocked-layout test of a key's h2 in `line` by the vector
    /// probe, or `None` when there is none (the caller runs the scalar
    /// one). A block in place is loaded as vectors; one read word by word
    /// (`!L::IN_PLACE`: atomic words) is put together in registers by the
    /// intrinsics backends, and left to the scalar probe by `wide`, which
    /// would copy it through the stack (see `crate::util::bits::Line`).
    #[inline(always)]
    pub(crate) fn block_test<L: crate::util::bits::Line>(
        &self,
        line: &L,
        h2: u64,
        consts: &InBlockConstants,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            return Some(if L::IN_PLACE {
                line.with_words(|words| avx2.block_test(words, h2, *consts))
            } else {
                avx2.block_test_loaded(line, h2, consts)
            });
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            return Some(if L::IN_PLACE {
                line.with_words(|words| avx512.block_test(words, h2, *consts))
            } else {
                avx512.block_test_loaded(line, h2, consts)
            });
        }
        (self.wide && L::IN_PLACE)
            .then(|| line.with_words(|words| wide::block_test(words, h2, consts)))
    }

    /// Whether the key with this hash is possibly in a blocked-layout
    /// filter of `blocks` blocks in plain `words`, addressed and tested in
    /// one vector function; `None` when there is none (the caller runs the
    /// scalar probe).
    #[inline(always)]
    pub(crate) fn block_contains(
        &self,
        words: &[u64],
        hash: u128,
        blocks: u64,
        consts: &InBlockConstants,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            return Some(avx2.block_contains(words, hash, blocks, consts));
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            return Some(avx512.block_contains(words, hash, blocks, consts));
        }
        self.wide
            .then(|| wide::block_contains(words, hash, blocks, consts))
    }

    /// [`block_contains`](Self::block_contains) for an insert into plain
    /// words; `false` when there is no vector line test (nothing was set).
    /// `wide` has no insert: the scalar probe's ORs measured as fast or
    /// faster (see `wide.rs`).
    #[inline(always)]
    pub(crate) fn block_insert(
        &self,
        words: &mut [u64],
        hash: u128,
        blocks: u64,
        consts: &InBlockConstants,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_insert(words, hash, blocks, consts);
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            avx512.block_insert(words, hash, blocks, consts);
            return true;
        }
        let _ = (words, hash, blocks, consts);
        false
    }

    /// Sets the bits of a chunk of blocked-layout keys in plain words by the
    /// vector line test; `false` when there is none (the caller sets them in
    /// scalar code, also for `wide`: see
    /// [`block_insert`](Self::block_insert)).
    #[inline(always)]
    pub(crate) fn block_set_chunk(
        &self,
        words: &mut [u64],
        blocks: &[usize],
        hashes: &[u128],
        consts: InBlockConstants,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_set_chunk(words, blocks, hashes, consts);
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            avx512.block_set_chunk(words, blocks, hashes, consts);
            return true;
        }
        let _ = (words, blocks, hashes, consts);
        false
    }

    /// The blocked-layout test of a chunk of keys (blocks `blocks`, hashes
    /// `hashes`) against plain words, answers in `out`, by the vector
    /// probe; `false` when there is none (the caller runs the scalar one).
    #[inline(always)]
    pub(crate) fn block_test_chunk(
        &self,
        words: &[u64],
        blocks: &[usize],
        hashes: &[u128],
        consts: InBlockConstants,
        out: &mut [bool],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_test_chunk(words, blocks, hashes, consts, out);
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            avx512.block_test_chunk(words, blocks, hashes, consts, out);
            return true;
        }
        if self.wide {
            wide::block_test_chunk(words, blocks, hashes, &consts, out);
        }
        self.wide
    }
}

/// The one-key query and insert of a filter on plain words, resolved once
/// when the filter is built, loaded or given a kernel: for a blocked layout
/// with a two-hash scheme and a vector kernel, which backend, whether the
/// layout is split-block and whether k <= 8, as one tag, so that a one-key
/// call tests one byte and makes one call (the key's hash, the block and
/// the probe in that call) instead of testing the layout, the scheme, the
/// kernel, the layout's segments and k on every call. Any other filter
/// ([`Route::Layout`]) answers by the layout's own probe
/// (`Geometry::contains`); the answers are the same either way (tested
/// against it).
#[derive(Debug, Clone, Copy)]
// Off x86_64 every filter takes `Route::Layout`: the blocks and constants
// go unread there.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct KeyRoute {
    route: Route,
    blocks: u64,
    consts: InBlockConstants,
    /// The filter's seed's share of the hash, for every one-key call of
    /// the filter (the vector function takes this one reference for
    /// everything it reads).
    secrets: crate::hash::Secrets,
}

/// A backend and its const parameters (`SPLIT`, `SMALL`: k <= 8), or none.
#[derive(Debug, Clone, Copy)]
enum Route {
    #[cfg(target_arch = "x86_64")]
    Avx2Blocked8(avx2::Avx2LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx2Split8(avx2::Avx2LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx2Blocked(avx2::Avx2LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx2Split(avx2::Avx2LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx512Blocked8(avx512::Avx512LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx512Split8(avx512::Avx512LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx512Blocked(avx512::Avx512LineTest),
    #[cfg(target_arch = "x86_64")]
    Avx512Split(avx512::Avx512LineTest),
    /// No route of its own: the layout's probe answers.
    Layout,
}

/// `match route`, once for every function that dispatches on it: each
/// vector route binds its backend to `$p` and its const parameters to the
/// consts `$split` (split-block) and `$small` (k <= 8) for `$call`;
/// [`Route::Layout`] evaluates `$layout`.
macro_rules! by_route {
    ($route:expr, $p:ident, $split:ident, $small:ident => $call:block else $layout:expr) => {
        match $route {
            #[cfg(target_arch = "x86_64")]
            Route::Avx2Blocked8($p) => by_route!(@arm false, true, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx2Split8($p) => by_route!(@arm true, true, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx2Blocked($p) => by_route!(@arm false, false, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx2Split($p) => by_route!(@arm true, false, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx512Blocked8($p) => by_route!(@arm false, true, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx512Split8($p) => by_route!(@arm true, true, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx512Blocked($p) => by_route!(@arm false, false, $split, $small, $call),
            #[cfg(target_arch = "x86_64")]
            Route::Avx512Split($p) => by_route!(@arm true, false, $split, $small, $call),
            Route::Layout => $layout,
        }
    };
    (@arm $s:literal, $k:literal, $split:ident, $small:ident, $call:block) => {{
        const $split: bool = $s;
        const $small: bool = $k;
        $call
    }};
}

// Off x86_64 there is one route (`Route::Layout`): its tests are
// irrefutable and the vector calls' arguments unused.
#[cfg_attr(
    not(target_arch = "x86_64"),
    allow(irrefutable_let_patterns, unused_variables)
)]
impl KeyRoute {
    /// The hash constants of the filter's seed.
    #[inline(always)]
    pub(crate) fn secrets(&self) -> &crate::hash::Secrets {
        &self.secrets
    }

    /// The route of a filter that has none of its own ([`Route::Layout`]).
    pub(crate) fn layout(secrets: crate::hash::Secrets) -> Self {
        Self {
            route: Route::Layout,
            blocks: 1,
            consts: InBlockConstants::new(1, crate::layout::blocked::addressing::Segments::One),
            secrets,
        }
    }

    /// The route of a blocked-layout filter of `blocks` blocks with
    /// `consts`, hashing under `secrets`, by the vector line test of `vector`
    /// where it has an intrinsics one.
    pub(crate) fn blocked(
        vector: &VectorBackend,
        blocks: u64,
        consts: InBlockConstants,
        secrets: crate::hash::Secrets,
    ) -> Self {
        let (split, small) = (consts.step != 0, consts.k <= 8);
        #[cfg(target_arch = "x86_64")]
        let route = if let Some(p) = vector.avx2 {
            match (split, small) {
                (false, true) => Route::Avx2Blocked8(p),
                (true, true) => Route::Avx2Split8(p),
                (false, false) => Route::Avx2Blocked(p),
                (true, false) => Route::Avx2Split(p),
            }
        } else if let Some(p) = vector.avx512 {
            match (split, small) {
                (false, true) => Route::Avx512Blocked8(p),
                (true, true) => Route::Avx512Split8(p),
                (false, false) => Route::Avx512Blocked(p),
                (true, false) => Route::Avx512Split(p),
            }
        } else {
            Route::Layout
        };
        #[cfg(not(target_arch = "x86_64"))]
        let route = {
            let _ = (vector, split, small);
            Route::Layout
        };
        Self {
            route,
            blocks,
            consts,
            secrets,
        }
    }

    /// Whether `key` is possibly in the filter whose plain words are
    /// `words`; `None` where the layout's probe answers ([`Route::Layout`]).
    ///
    /// The default filter's route (blocked, k <= 8, AVX2) is tested first
    /// and called from the caller's code; the others go through one more
    /// call, so that each caller inlines one call, not eight.
    #[inline(always)]
    pub(crate) fn contains<K: crate::Key + ?Sized>(&self, words: &[u64], key: &K) -> Option<bool> {
        let lines = words.as_chunks::<8>().0;
        #[cfg(target_arch = "x86_64")]
        if let Route::Avx2Blocked8(p) = self.route {
            return Some(p.contains_key::<K, false, true>(lines, key, self));
        }
        if let Route::Layout = self.route {
            return None;
        }
        Some(self.contains_by_route(lines, key))
    }

    /// [`contains`](Self::contains) by a vector route. Cold: it is not
    /// rare, but the hint makes the callers test the default route first
    /// (one compare, not two, on its path).
    #[cold]
    #[inline(never)]
    fn contains_by_route<K: crate::Key + ?Sized>(&self, lines: &[[u64; 8]], key: &K) -> bool {
        let l = lines;
        by_route!(self.route, p, SPLIT, SMALL => {
            p.contains_key::<K, SPLIT, SMALL>(l, key, self)
        } else unreachable!("the layout's probe answers (`contains`)"))
    }

    /// [`contains`](Self::contains) for words that are not plain (atomic
    /// words: read one by one, each block put together in registers);
    /// `None` where the layout's probe answers. The default route first,
    /// as there.
    #[inline(always)]
    pub(crate) fn contains_loaded<W, K>(&self, words: &W, key: &K) -> Option<bool>
    where
        W: crate::util::bits::Words + ?Sized,
        K: crate::Key + ?Sized,
    {
        #[cfg(target_arch = "x86_64")]
        if let Route::Avx2Blocked8(p) = self.route {
            return Some(p.contains_key_loaded::<W, K, false, true>(words, key, self));
        }
        if let Route::Layout = self.route {
            return None;
        }
        Some(self.contains_loaded_by_route(words, key))
    }

    /// [`contains_loaded`](Self::contains_loaded) by a vector route (cold
    /// for the reason [`contains_by_route`](Self::contains_by_route) is).
    #[cold]
    #[inline(never)]
    fn contains_loaded_by_route<W, K>(&self, words: &W, key: &K) -> bool
    where
        W: crate::util::bits::Words + ?Sized,
        K: crate::Key + ?Sized,
    {
        let w = words;
        by_route!(self.route, p, SPLIT, SMALL => {
            p.contains_key_loaded::<W, K, SPLIT, SMALL>(w, key, self)
        } else unreachable!("the layout's probe answers (`contains_loaded`)"))
    }

    /// Sets the bits of `key` in the filter whose plain words are `words`;
    /// `false` (nothing set) where the layout's probe sets them. The
    /// default filter's route first, as in [`contains`](Self::contains).
    #[inline(always)]
    pub(crate) fn insert<K: crate::Key + ?Sized>(&self, words: &mut [u64], key: &K) -> bool {
        let lines = words.as_chunks_mut::<8>().0;
        #[cfg(target_arch = "x86_64")]
        if let Route::Avx2Blocked8(p) = self.route {
            p.insert_key::<K, false>(lines, key, self);
            return true;
        }
        if let Route::Layout = self.route {
            return false;
        }
        self.insert_by_route(lines, key);
        true
    }

    /// [`insert`](Self::insert) into words that are not plain (atomic
    /// words); `false` (nothing set) where the layout's probe sets them.
    #[inline(always)]
    pub(crate) fn insert_loaded<W, K>(&self, words: &mut W, key: &K) -> bool
    where
        W: crate::util::bits::Words + crate::util::bits::WordsMut + ?Sized,
        K: crate::Key + ?Sized,
    {
        if let Route::Layout = self.route {
            return false;
        }
        self.insert_loaded_by_route(words, key);
        true
    }

    /// [`insert_loaded`](Self::insert_loaded) by a vector route.
    #[inline(never)]
    fn insert_loaded_by_route<W, K>(&self, words: &mut W, key: &K)
    where
        W: crate::util::bits::Words + crate::util::bits::WordsMut + ?Sized,
        K: crate::Key + ?Sized,
    {
        let w = words;
        by_route!(self.route, p, SPLIT, _SMALL => {
            p.insert_key_loaded::<W, K, SPLIT>(w, key, self)
        } else unreachable!("the layout's probe sets the bits (`insert_loaded`)"))
    }

    /// [`insert`](Self::insert) by a vector route.
    #[inline(never)]
    fn insert_by_route<K: crate::Key + ?Sized>(&self, lines: &mut [[u64; 8]], key: &K) {
        let l = lines;
        by_route!(self.route, p, SPLIT, _SMALL => {
            p.insert_key::<K, SPLIT>(l, key, self)
        } else unreachable!("the layout's probe sets the bits (`insert`)"))
    }
}
