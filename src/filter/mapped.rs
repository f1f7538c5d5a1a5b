//! [`MappedFilter`]: a filter file queried through a read-only memory map
//! (feature `mmap`, on by default), for filters larger than a process
//! should load, or than the machine's memory.
//!
//! Opening maps the file and validates the header and the length (O(1));
//! [`MappedFilter::open`] also verifies the checksum, one pass over the
//! file. After that a query reads only the pages its keys' bits are in:
//! one 4 KiB page per key for the blocked layouts, up to k for the flat
//! ones, from the page cache or the disk. The pages are the operating
//! system's to keep or drop, so a mapped filter's resident memory is
//! whatever its queries have touched, and it answers queries on a file
//! larger than the machine's memory.
//!
//! # What the map sees when the file changes
//!
//! * **Replaced** (renamed over, as lesshash's own
//!   [`write_file`](crate::BloomFilter::write_file) and the CLI's `-o` do):
//!   the map keeps the old file's contents until it is dropped. A new
//!   [`MappedFilter::open`] sees the new file.
//! * **Truncated** (or shortened any other way) while mapped: reading a
//!   page past the new end raises `SIGBUS`, which kills the process. No
//!   lesshash code path truncates or writes into an existing filter file,
//!   but another program could; do not map files that others modify in
//!   place. The length is checked at open, so a file that is already
//!   short is an error, never a crash.
//! * **Written in place**: queries may see any mix of old and new bytes.
//!   Open with [`MappedFilter::open`] (checksum) after such a write.

#![deny(unsafe_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use memmap2::Mmap;

use crate::Error;
use crate::filter::BloomFilter;
use crate::filter::prehashed::Prehashed;
use crate::filter::view::{FilterView, ViewWords, view_queries};
use crate::format::frame::io_err;
use crate::format::{HEADER_LEN, Header, validate};
use crate::geometry::Geometry;
use crate::hash::Key;

/// A read-only filter over a memory-mapped file in the v1 format.
///
/// Answers every query a [`BloomFilter`] answers (single, batch, bitmap,
/// parallel, pre-hashed) with the same results, from the file's pages.
/// `Send` and `Sync`: threads can share one map.
///
/// ```
/// use lesshash::{BloomFilter, MappedFilter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("users.lhbf");
/// let mut filter = BloomFilter::with_fpr(1000, 0.01)?;
/// filter.insert("apple");
/// filter.write_file(&path)?;
///
/// let mapped = MappedFilter::open(&path)?; // header, length and checksum checked
/// assert!(mapped.contains("apple"));
/// let mut found = [false; 2];
/// mapped.contains_batch(&["apple", "pear"], &mut found)?;
/// assert!(found[0]);
/// # Ok::<(), lesshash::Error>(())
/// ```
pub struct MappedFilter {
    bytes: FileBytes,
    header: Header,
    geometry: Geometry,
    path: PathBuf,
    /// The opened file's identity, for [`is_current`](Self::is_current).
    identity: FileIdentity,
}

/// Which file, in which version: what a `stat` of the same file returns
/// again until it is replaced or rewritten.
#[derive(Clone, PartialEq, Eq, Debug)]
struct FileIdentity {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    device: u64,
    #[cfg(unix)]
    inode: u64,
}

impl FileIdentity {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            device: meta.dev(),
            #[cfg(unix)]
            inode: meta.ino(),
        }
    }
}

impl MappedFilter {
    /// Maps the filter file at `path` and validates it fully: header,
    /// length, padding and the checksum. The checksum reads the whole file
    /// once (into the page cache, where later queries find it); use
    /// [`open_unverified`](Self::open_unverified) to skip that pass.
    ///
    /// A regular file that cannot be mapped (files under /proc, some FUSE
    /// and network file systems) is read into memory instead, validated
    /// the same way ([`is_mapped`](Self::is_mapped) tells).
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be opened, inspected or read;
    /// [`Error::UnusablePath`] if it is not a regular file;
    /// any format error of [`BloomFilter::from_bytes`] (a short or long
    /// file is [`FormatError::Truncated`](crate::FormatError::Truncated) or [`FormatError::SizeMismatch`](crate::FormatError::SizeMismatch), a damaged
    /// one [`FormatError::ChecksumMismatch`](crate::FormatError::ChecksumMismatch)).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::map(path.as_ref(), true)
    }

    /// As [`open`](Self::open) without the checksum pass: opening costs
    /// the same for any size (it reads the first page). Header, length and
    /// padding are still validated, so queries never read out of bounds;
    /// a damaged payload would answer wrongly instead of being rejected.
    /// For files verified before (by [`open`](Self::open) in another
    /// process, or by the storage).
    ///
    /// # Errors
    /// As [`open`](Self::open) except [`FormatError::ChecksumMismatch`](crate::FormatError::ChecksumMismatch).
    pub fn open_unverified(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::map(path.as_ref(), false)
    }

    fn map(path: &Path, verify: bool) -> Result<Self, Error> {
        // The type is checked before opening too: opening a FIFO for
        // reading waits for a writer, possibly forever. The check after
        // opening covers a path replaced in between.
        let before = std::fs::metadata(path).map_err(io_err("opening the file"))?;
        check_regular(path, &before)?;
        let file = File::open(path).map_err(io_err("opening the file"))?;
        let meta = file
            .metadata()
            .map_err(io_err("reading the file's metadata"))?;
        check_regular(path, &meta)?;
        Self::from_file(file, &meta, path, verify, true)
    }

    /// The filter in the open regular `file` (`meta` its metadata): mapped
    /// if `try_map` and the file can be, read otherwise.
    fn from_file(
        file: File,
        meta: &std::fs::Metadata,
        path: &Path,
        verify: bool,
        try_map: bool,
    ) -> Result<Self, Error> {
        let (len, identity) = (meta.len(), FileIdentity::of(meta));
        if !try_map {
            return Self::with_bytes(FileBytes::read(file, len)?, path, identity, verify);
        }
        // SAFETY: `Mmap::map` is unsafe because the file can change under
        // the map. lesshash never writes into an existing file (its writers
        // write a new file and rename it over), and the map is read-only.
        // The length was just read and `validate` below checks it against
        // the header, so every read the view makes is inside the file as
        // it was opened; a file truncated by another program while mapped
        // is the hazard the module docs state (SIGBUS), as with any map.
        #[allow(unsafe_code)]
        let bytes = match unsafe { Mmap::map(&file) } {
            Ok(map) => FileBytes::Mapped(map),
            // Some regular files cannot be mapped (under /proc, on some
            // FUSE and network file systems: ENODEV and the like): read
            // them instead, bounded and validated as the map would be.
            Err(_) => FileBytes::read(file, len)?,
        };
        Self::with_bytes(bytes, path, identity, verify)
    }

    fn with_bytes(
        bytes: FileBytes,
        path: &Path,
        identity: FileIdentity,
        verify: bool,
    ) -> Result<Self, Error> {
        let (header, _) = validate(bytes.as_slice(), verify)?;
        let geometry = header.geometry();
        let mapped = Self {
            bytes,
            header,
            geometry,
            path: path.to_path_buf(),
            identity,
        };
        // The payload must be 8-byte aligned to be read as words; a map is
        // page-aligned, so this only fails on a platform that breaks that.
        mapped.try_words()?;
        Ok(mapped)
    }

    /// The payload as little-endian words.
    #[inline]
    fn try_words(&self) -> Result<&[u64], Error> {
        let payload =
            &self.bytes.as_slice()[HEADER_LEN..HEADER_LEN + self.header.payload_len() as usize];
        bytemuck::try_cast_slice(payload).map_err(|_| Error::Misaligned {
            field: "mapped file",
            align: 8,
            offset: payload.as_ptr() as usize % 8,
        })
    }

    /// The payload's words (checked aligned at open).
    #[inline]
    fn words(&self) -> &[u64] {
        self.try_words().unwrap_or_default()
    }

    /// A read-only [`FilterView`] of the mapped bytes (no validation: done
    /// at open); every query below is its.
    #[inline]
    pub fn view(&self) -> FilterView<'_> {
        FilterView::payload(self.header, self.geometry, self.words())
    }

    /// Whether a key is possibly in the set (`false`: certainly not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        ViewWords::little_endian(self.words()).contains(&self.geometry, key)
    }

    view_queries!();

    #[cfg(feature = "arrow")]
    crate::filter::view::array_queries!();

    /// The pre-hashed queries (keys given by their 128-bit
    /// [`hash_key`](crate::hash_key) with this filter's seed), through
    /// [`view`](Self::view).
    ///
    /// # Errors
    /// [`Error::PrehashedUnsupported`] for the `Independent` scheme.
    pub fn prehashed(&self) -> Result<Prehashed<FilterView<'_>>, Error> {
        self.view().prehashed()
    }

    /// Advice for a few queries on a file that may not be cached: each page
    /// fault reads the one 4 KiB page a probe needs instead of the pages
    /// around it (`madvise(MADV_RANDOM)`; by default a fault reads ahead,
    /// which suits bulk queries and whole-file passes). Do not use it
    /// before bulk queries or [`count_ones`](Self::count_ones) and the
    /// other fill statistics on an uncached file: with read-ahead off they
    /// read the file 4 KiB at a time. Only advice: results never depend on
    /// it, and platforms without it ignore it.
    pub fn advise_random(&self) {
        #[cfg(unix)]
        if let FileBytes::Mapped(map) = &self.bytes {
            let _ = map.advise(memmap2::Advice::Random);
        }
    }

    /// Asks the operating system to read the whole file into the page
    /// cache in the background (`madvise(MADV_WILLNEED)`), for bulk queries
    /// or whole-file passes on a file that may not be cached: the pages
    /// arrive in large sequential reads while the queries run. Only advice,
    /// as [`advise_random`](Self::advise_random).
    pub fn will_need(&self) {
        #[cfg(unix)]
        if let FileBytes::Mapped(map) = &self.bytes {
            let _ = map.advise(memmap2::Advice::WillNeed);
        }
    }

    /// The parsed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    crate::geometry::parameter_getters!(header);

    /// The kind of keys the file records ([`BloomFilter::key_kind`](crate::BloomFilter::key_kind)).
    pub fn key_kind(&self) -> crate::KeyKind {
        self.header.key_kind
    }

    /// The insert counter stored in the file.
    pub fn insert_calls(&self) -> u64 {
        self.header.insert_calls
    }

    /// The serialized filter, as mapped (the whole file: header, payload,
    /// checksum); reading it touches every page.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// The mapped file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes.as_slice().len() as u64
    }

    /// Whether the file is mapped (`false`: it could not be, and was read
    /// into memory instead).
    pub fn is_mapped(&self) -> bool {
        matches!(self.bytes, FileBytes::Mapped(_))
    }

    /// The path the filter was opened from (for messages and for reopening
    /// it elsewhere, e.g. on another worker sharing the storage).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file now at [`path`](Self::path) is still the one this
    /// filter was read from: the same device, inode, length and
    /// modification time. `false` once it was replaced (lesshash's writers
    /// rename a new file over the old), rewritten, or removed, or if it
    /// cannot be inspected. One `stat`: a cache of filters by path (a query
    /// engine's) asks this before each use and opens the path again on
    /// `false`, so a filter replaced between queries is never answered
    /// from its old version.
    pub fn is_current(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|meta| FileIdentity::of(&meta) == self.identity)
    }

    /// Writes the mapped filter (the bytes as mapped) to `path`, atomically
    /// as [`BloomFilter::write_file`] does: a temporary file beside it,
    /// synced, renamed over it. No copy of the filter is held in memory, so
    /// a map larger than memory can be saved; writing over the mapped file's
    /// own path is allowed (the map keeps the old file).
    ///
    /// # Errors
    /// As [`BloomFilter::write_file`].
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        crate::format::frame::write_file(path.as_ref(), "writing the filter", |w| {
            w.write_all(self.bytes.as_slice())
                .map_err(io_err("writing the filter"))
        })
    }

    /// An owned, writable copy of the filter (reads the whole file).
    ///
    /// # Errors
    /// [`Error::Allocation`] if the bits cannot be allocated.
    pub fn to_filter(&self) -> Result<BloomFilter, Error> {
        self.view().to_filter()
    }
}

/// Shows the path and the parameters, never the bits.
impl std::fmt::Debug for MappedFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFilter")
            .field("path", &self.path)
            .field("header", &self.header)
            .finish()
    }
}

/// The file's bytes: mapped, or read where the file cannot be mapped.
enum FileBytes {
    Mapped(Mmap),
    /// The whole file in 8-byte-aligned memory (the payload is read as
    /// words), and its length in bytes.
    Read(Vec<u64>, usize),
}

impl FileBytes {
    /// Reads a regular file that could not be mapped, from its start (the
    /// map's open file, not yet read from), as a stream is read:
    /// allocation bounded by the header's promise and by what arrives
    /// (`len`, the reported length, is trusted only when it matches the
    /// header's total; files under /proc report 0).
    fn read(mut file: File, len: u64) -> Result<Self, Error> {
        let header = crate::format::frame::read_header(&mut file, &crate::format::MAGIC)?;
        let total = Header::parse(&header)?.total_len();
        let (words, got) =
            crate::format::frame::read_item_aligned(file, &header, total, len == total)?;
        Ok(FileBytes::Read(words, got))
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(map) => map,
            FileBytes::Read(words, len) => &bytemuck::cast_slice(words)[..*len],
        }
    }
}

/// [`Error::UnusablePath`] unless `meta` is a regular file's.
fn check_regular(path: &Path, meta: &std::fs::Metadata) -> Result<(), Error> {
    if meta.is_file() {
        return Ok(());
    }
    Err(Error::UnusablePath {
        reason: format!(
            "{} is not a regular file (only regular files can be mapped; \
             read others with BloomFilter::read_file)",
            path.display()
        ),
    })
}

/// Mapped filter files by path, each reused while it is the file's current
/// version ([`MappedFilter::is_current`]: one `stat` per use).
///
/// For a query engine that names a filter file in every query or batch (a
/// SQL function, a dataframe expression): a large file is mapped and its
/// checksum verified once per version, not once per call, yet a file
/// replaced between queries is opened again, never answered from its old
/// version. Shared between threads (`&self` methods); opening is serialized,
/// so callers that miss on the same new file at once verify it once.
///
/// The cache holds at most `capacity` files, the least recently used going
/// first. A file's old version is let go when it is opened again, and
/// versions since replaced or removed are let go on the next open unless a
/// caller still holds them: a loop that writes a new file and queries it
/// keeps neither every old version mapped nor their files' space in use.
///
/// ```
/// # fn main() -> Result<(), lesshash::Error> {
/// # let dir = std::env::temp_dir().join(format!("lesshash-doc-cache-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("users.lhbf");
/// # let mut f = lesshash::BloomFilter::with_fpr(1_000, 0.01)?;
/// # f.insert(&7u64);
/// # f.write_file(&path)?;
/// use lesshash::MappedCache;
///
/// static FILTERS: MappedCache = MappedCache::new(16);
///
/// let a = FILTERS.open(&path)?; // mapped and verified
/// let b = FILTERS.open(&path)?; // the same map: one `stat`
/// assert!(std::sync::Arc::ptr_eq(&a, &b) && a.contains(&7u64));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// ```
pub struct MappedCache {
    capacity: usize,
    /// Least recently used first.
    entries: Mutex<Vec<(PathBuf, Arc<MappedFilter>)>>,
    /// Held while a file is opened, so that concurrent misses open it once.
    opening: Mutex<()>,
}

impl MappedCache {
    /// An empty cache of at most `capacity` files (at least one).
    pub const fn new(capacity: usize) -> Self {
        MappedCache {
            capacity: if capacity == 0 { 1 } else { capacity },
            entries: Mutex::new(Vec::new()),
            opening: Mutex::new(()),
        }
    }

    /// The filter file at `path`: the cached map if it is the file's current
    /// version, else the file opened with [`MappedFilter::open`] (checksum
    /// verified) and cached.
    ///
    /// # Errors
    /// As [`MappedFilter::open`]; nothing is cached then.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Arc<MappedFilter>, Error> {
        let path = path.as_ref();
        if let Some(hit) = self.find(path) {
            return Ok(hit);
        }
        let _opening = lock(&self.opening);
        if let Some(hit) = self.find(path) {
            return Ok(hit);
        }
        // Verified outside the entries' lock: hits on other files go on.
        let filter = Arc::new(MappedFilter::open(path)?);
        let mut entries = lock(&self.entries);
        entries.retain(|(p, f)| p != path && (Arc::strong_count(f) > 1 || f.is_current()));
        if entries.len() >= self.capacity {
            entries.remove(0);
        }
        entries.push((path.to_path_buf(), Arc::clone(&filter)));
        Ok(filter)
    }

    fn find(&self, path: &Path) -> Option<Arc<MappedFilter>> {
        let mut entries = lock(&self.entries);
        let i = entries
            .iter()
            .position(|(p, f)| p == path && f.is_current())?;
        let entry = entries.remove(i);
        let filter = Arc::clone(&entry.1);
        entries.push(entry);
        Some(filter)
    }

    /// How many files the cache holds.
    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    /// Whether the cache holds no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lets go of every cached file (callers keep the ones they hold).
    pub fn clear(&self) {
        lock(&self.entries).clear();
    }
}

impl std::fmt::Debug for MappedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = lock(&self.entries);
        f.debug_struct("MappedCache")
            .field("capacity", &self.capacity)
            .field("paths", &entries.iter().map(|(p, _)| p).collect::<Vec<_>>())
            .finish()
    }
}

/// A lock a panicking holder left poisoned is still sound to use: the cache
/// holds nothing a half-done update could break (an entry is checked with
/// `is_current` before every use).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `is_current` holds until the file at the path is replaced (renamed
    /// over), rewritten in place or removed.
    #[test]
    fn is_current_until_the_file_is_replaced_rewritten_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.lhbf");
        let mut f = BloomFilter::with_fpr(100, 0.01).unwrap();
        f.write_file(&path).unwrap();
        let mapped = MappedFilter::open(&path).unwrap();
        assert!(mapped.is_current());
        assert!(mapped.is_current(), "asking does not change it");
        f.insert(&1u64);
        f.write_file(&path).unwrap(); // a new file renamed over the old
        assert!(!mapped.is_current());
        let again = MappedFilter::open(&path).unwrap();
        assert!(again.is_current() && again.contains(&1u64));
        // Rewritten in place (same inode): the length differs.
        std::fs::write(&path, b"not a filter").unwrap();
        assert!(!again.is_current());
        std::fs::remove_file(&path).unwrap();
        assert!(!again.is_current());
    }

    /// A file read instead of mapped (as one that cannot be mapped is)
    /// answers as the mapped file does and holds the same bytes; short,
    /// long and damaged files give the errors the map gives.
    #[test]
    fn a_file_read_instead_of_mapped_is_the_same_filter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.lhbf");
        let mut f = BloomFilter::with_fpr(5_000, 0.01).unwrap();
        f.insert_batch(&(0..5_000u64).collect::<Vec<_>>());
        f.write_file(&path).unwrap();
        let read = |p: &Path| {
            let file = File::open(p).unwrap();
            let meta = file.metadata().unwrap();
            MappedFilter::from_file(file, &meta, p, true, false)
        };
        let mapped = MappedFilter::open(&path).unwrap();
        let copy = read(&path).unwrap();
        assert!(mapped.is_mapped() && !copy.is_mapped());
        assert_eq!(copy.as_bytes(), mapped.as_bytes());
        assert_eq!(copy.as_bytes(), f.to_bytes());
        let keys: Vec<u64> = (0..20_000).collect();
        let (mut a, mut b) = (vec![false; keys.len()], vec![false; keys.len()]);
        mapped.contains_batch(&keys, &mut a).unwrap();
        copy.contains_batch(&keys, &mut b).unwrap();
        assert_eq!(a, b);
        assert!(b[..5_000].iter().all(|&x| x));
        // The same errors as the map: one byte short, one long, one flipped.
        let bytes = f.to_bytes();
        let cases: [(Vec<u8>, &str); 3] = [
            (bytes[..bytes.len() - 1].to_vec(), "truncated"),
            ([&bytes[..], &[0]].concat(), "length"),
            (
                {
                    let mut b = bytes.clone();
                    b[100] ^= 1;
                    b
                },
                "checksum",
            ),
        ];
        for (i, (data, what)) in cases.iter().enumerate() {
            let p = dir.path().join(format!("bad{i}.lhbf"));
            std::fs::write(&p, data).unwrap();
            let by_read = read(&p).unwrap_err().to_string();
            let by_map = MappedFilter::open(&p).unwrap_err().to_string();
            assert_eq!(by_read, by_map);
            assert!(by_read.contains(what), "{by_read}");
        }
    }
}
