"""BloomFilter.open: a filter file mapped read-only answers every query as
the loaded filter does (every layout, scheme and key form, small and
parallel batches, threads), refuses every change with a TypeError, checks
or skips the checksum as asked, fails to open as `load` fails, keeps the
old contents when the file is replaced, and pickles as its path (checked
in a second process)."""

from __future__ import annotations

import concurrent.futures
import copy
import multiprocessing
import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

# Plain imports, not importorskip: the key forms below need them.
import pandas  # noqa: F401
import pyarrow  # noqa: F401

from lesshash import BloomFilter
from test_bloom import LAYOUTS, SCHEMES, batches, ints, key_sets


def saved(tmp_path, *args, keys=None, name="f.lhbf", **kwargs) -> tuple[BloomFilter, str]:
    """A filter with `keys` (or half of `key_sets`), saved; and its path."""
    bf = BloomFilter(*(args or (1000, 0.001)), **kwargs)
    if keys is None:
        keys_int, keys_str = key_sets()
        bf.add_many(keys_int[::2])
        bf.add_many(keys_str[::2])
    else:
        bf.add_many(keys)
    path = str(tmp_path / name)
    bf.save(path)
    return bf, path


def same_answers(mapped: BloomFilter, loaded: BloomFilter, keys) -> None:
    got, want = mapped.contains_many(keys), loaded.contains_many(keys)
    assert got.dtype == np.bool_ and got.shape == want.shape
    assert (got == want).all()


# ---------------------------------------------------------------- answers --


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("verify", [True, False])
def test_every_layout_and_scheme_answers_as_loaded(tmp_path, layout, scheme, verify):
    keys = ints(3000, seed=2)
    bf, path = saved(tmp_path, 3000, 0.01, keys=keys, layout=layout, scheme=scheme, seed=9)
    mapped = BloomFilter.open(path, verify=verify)
    loaded = BloomFilter.load(path)
    assert mapped.read_only and mapped.path == path
    assert not loaded.read_only and loaded.path is None
    probe = ints(6000, seed=3)  # non-members: false positives must agree
    probe[:1000] = keys[:1000]
    same_answers(mapped, loaded, probe)
    # Text keys: refused by both (an int64 filter), then answered alike
    # once both answer every kind (the map's kind set on it, not the file).
    words = [f"s{i}" for i in range(2000)]
    assert mapped.key_kind == loaded.key_kind == "int64"
    for f in (mapped, loaded):
        with pytest.raises(TypeError, match="int64"):
            f.contains_many(words)
    mapped.key_kind = loaded.key_kind = "mixed"
    same_answers(mapped, loaded, words)
    assert [int(k) in mapped for k in probe[:300]] == [int(k) in loaded for k in probe[:300]]
    for name in ("bits", "hashes", "layout", "scheme", "seed", "insert_calls", "bits_per_key",
                 "fill_ratio", "expected_fpr", "estimated_len"):
        assert getattr(mapped, name) == getattr(loaded, name), name
    # The payload's bytes, as mapped (an owned filter pads to whole cache lines).
    assert mapped.nbytes == -(-mapped.bits // 64) * 8 <= loaded.nbytes
    assert mapped == loaded and loaded == mapped and not (mapped != loaded)
    # Both as set to answer every kind; the file as it was written.
    assert mapped.to_bytes() == loaded.to_bytes() != bf.to_bytes()
    assert BloomFilter.open(path).to_bytes() == bf.to_bytes()
    assert BloomFilter.from_bytes(mapped.to_bytes()).key_kind == "mixed"


@pytest.mark.parametrize("form", list(batches(*key_sets()).keys()))
def test_every_key_form_answers_as_loaded(tmp_path, form):
    _, path = saved(tmp_path)
    mapped, loaded = BloomFilter.open(path), BloomFilter.load(path)
    keys_int, keys_str = key_sets()
    batch, singles = batches(keys_int, keys_str)[form]
    got = mapped.contains_many(batch)
    assert got.tolist() == [k in loaded for k in singles]
    assert got.tolist() == [k in mapped for k in singles]
    # Generators are single use: a fresh batch for each call.
    again = mapped.contains_many(batches(keys_int, keys_str)[form][0])
    assert (again == loaded.contains_many(batches(keys_int, keys_str)[form][0])).all()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_large_batches_take_the_parallel_path(tmp_path, layout):
    """Above the crate's parallel threshold (16,384 keys) the batch runs on
    rayon's threads, over the map: the answers of batches below it."""
    keys = np.arange(300_000, dtype=np.int64) * 13
    _, path = saved(tmp_path, 300_000, 0.01, keys=keys, layout=layout)
    mapped, loaded = BloomFilter.open(path), BloomFilter.load(path)
    assert mapped.contains_many(keys).all()
    probe = keys + 1
    same_answers(mapped, loaded, probe)
    small = np.concatenate([mapped.contains_many(c) for c in np.array_split(probe, 32)])
    assert (mapped.contains_many(probe) == small).all()
    words = [f"w{i}" for i in range(140_000)]
    mapped.key_kind = loaded.key_kind = "mixed"  # text keys into an int64 filter
    same_answers(mapped, loaded, words)


def test_empty_batches_and_bad_keys(tmp_path):
    _, path = saved(tmp_path)
    mapped = BloomFilter.open(path)
    assert mapped.contains_many([]).shape == (0,)
    with pytest.raises(TypeError, match="single str"):
        mapped.contains_many("abc")
    with pytest.raises(OverflowError):
        mapped.contains_many([2**64])


def test_repr_copy_save_and_unions(tmp_path):
    bf, path = saved(tmp_path, seed=4)
    mapped = BloomFilter.open(path)
    assert repr(mapped).startswith(repr(bf)[:-1]) and f"path={path!r}" in repr(mapped)
    assert "read_only=True" in repr(mapped) and "path=" not in repr(bf)
    for c in (mapped.copy(), copy.copy(mapped), copy.deepcopy(mapped)):
        assert c == mapped and not c.read_only and c.path is None
        c.add("a new key")  # writable
        assert "a new key" in c and c != mapped
    out = tmp_path / "copy.lhbf"
    mapped.save(out)
    assert BloomFilter.load(out) == bf and out.read_bytes() == mapped.to_bytes()
    other = BloomFilter(1000, 0.001, seed=4)
    other.add_many(["x", "y"])
    both = bf | other
    for u in (mapped | other, other | mapped, mapped.union(other), mapped | mapped):
        assert not u.read_only and u.path is None
    assert mapped | other == both and other | mapped == both and mapped.union(other) == both
    assert mapped | mapped == bf
    owned = other.copy()
    owned |= mapped  # an owned filter takes a map's keys
    assert owned == both and not owned.read_only
    with pytest.raises(ValueError, match="seed"):
        mapped | BloomFilter(1000, 0.001, seed=5)  # noqa: B018


# -------------------------------------------------------- refused changes --


def _ior(bf):
    bf |= BloomFilter(1000, 0.001)


MUTATIONS = {
    "add": lambda bf: bf.add("k"),
    "add-int": lambda bf: bf.add(7),
    "add_many": lambda bf: bf.add_many(["k", "l"]),
    "add_many-numpy": lambda bf: bf.add_many(np.arange(10)),
    "update": lambda bf: bf.update({"k"}),
    "clear": lambda bf: bf.clear(),
    "ior": _ior,
    "ior-self": lambda bf: bf.__ior__(bf),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_every_change_is_refused_with_a_type_error(tmp_path, name):
    bf, path = saved(tmp_path)
    mapped = BloomFilter.open(path)
    with pytest.raises(TypeError, match="read-only") as info:
        MUTATIONS[name](mapped)
    message = str(info.value)
    assert path in message and "copy()" in message and "BloomFilter.load" in message
    assert mapped == bf and mapped.to_bytes() == bf.to_bytes()
    assert open(path, "rb").read() == bf.to_bytes()


def test_a_refused_batch_reads_no_key(tmp_path):
    _, path = saved(tmp_path)
    mapped = BloomFilter.open(path)
    consumed = []

    def keys():
        for k in range(5):
            consumed.append(k)
            yield k

    with pytest.raises(TypeError, match="read-only"):
        mapped.add_many(keys())
    assert consumed == []


# ------------------------------------------------------------ file errors --


def test_verify_checks_the_checksum_and_unverified_skips_it(tmp_path):
    bf, path = saved(tmp_path)
    data = bytearray(open(path, "rb").read())
    data[64 + len(data) // 3] ^= 0x10  # one payload byte
    with open(path, "wb") as f:
        f.write(data)
    with pytest.raises(ValueError, match="checksum"):
        BloomFilter.open(path)
    with pytest.raises(ValueError, match="checksum"):
        BloomFilter.open(path, verify=True)
    with pytest.raises(ValueError, match="checksum"):
        BloomFilter.load(path)
    damaged = BloomFilter.open(path, verify=False)
    assert damaged.read_only and damaged != bf
    # The flag travels with a pickle: unverified stays unverified.
    assert pickle.loads(pickle.dumps(damaged)).to_bytes() == bytes(data)


def _exception(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return exc
    raise AssertionError(f"{fn.__name__} did not raise")


def test_open_fails_as_load_does(tmp_path):
    bf, path = saved(tmp_path)
    data = open(path, "rb").read()
    cases = {
        "missing": None,
        "empty": b"",
        "junk": b"not a filter at all" * 10,
        "short-header": data[:40],
        "truncated": data[:-9],
        "too-long": data + b"\0" * 8,
        "bad-magic": b"X" + data[1:],
    }
    for name, contents in cases.items():
        p = tmp_path / name
        if contents is not None:
            p.write_bytes(contents)
        for verify in (True, False):
            got = _exception(BloomFilter.open, p, verify=verify)
            want = _exception(BloomFilter.load, p)
            assert type(got) is type(want), (name, verify, got, want)
            assert str(p) in str(got), got
    assert isinstance(_exception(BloomFilter.open, tmp_path / "missing"), FileNotFoundError)
    assert isinstance(_exception(BloomFilter.open, tmp_path / "truncated"), ValueError)
    # A directory is no file to map.
    assert isinstance(_exception(BloomFilter.open, tmp_path), OSError)


def test_a_replaced_file_keeps_answering_from_the_old_contents(tmp_path):
    old, path = saved(tmp_path, keys=["old"])
    mapped = BloomFilter.open(path)
    new = BloomFilter(1000, 0.001)
    new.add_many(["new"])
    new.save(path)  # renamed over the mapped file
    assert "old" in mapped and "new" not in mapped and mapped == old
    assert mapped.to_bytes() == old.to_bytes()
    assert BloomFilter.open(path) == new
    mapped.save(path)  # a map saved over its own (replaced) file
    assert BloomFilter.load(path) == old and "old" in mapped


# --------------------------------------------------------------- pickling --


def _answers_in_another_process(filter_pickle: bytes, keys: list):
    bf = pickle.loads(filter_pickle)
    return bf.read_only, bf.path, bf.contains_many(keys).tolist(), [k in bf for k in keys], os.getpid()


def test_a_map_pickles_as_its_path_across_processes(tmp_path):
    bf, path = saved(tmp_path, 1_000_000, 0.01, keys=range(0, 20_000, 2))  # 1.2 MB
    mapped = BloomFilter.open(path)
    data = pickle.dumps(mapped)
    assert len(data) < 1000 < bf.nbytes  # the path, not the bits
    assert len(pickle.dumps(bf)) > bf.nbytes  # owned filters: by bytes
    keys = list(range(5000))
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        read_only, got_path, many, singles, pid = pool.submit(
            _answers_in_another_process, data, keys
        ).result(timeout=120)
    assert pid != os.getpid()
    assert read_only and got_path == path
    assert many == singles == mapped.contains_many(keys).tolist()
    # In this process too; and a relative path is pickled absolute.
    again = pickle.loads(data)
    assert again.read_only and again.path == path and again == mapped
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        relative = BloomFilter.open("f.lhbf")
    finally:
        os.chdir(cwd)
    assert relative.path == path and pickle.loads(pickle.dumps(relative)).path == path


def test_unpickling_where_the_file_is_missing_says_so(tmp_path):
    _, path = saved(tmp_path)
    data = pickle.dumps(BloomFilter.open(path))
    os.remove(path)
    with pytest.raises(FileNotFoundError, match="pickles as its path") as info:
        pickle.loads(data)
    assert path in str(info.value)


# ---------------------------------------------------------------- threads --


def test_threads_query_one_map(tmp_path):
    keys = np.arange(200_000, dtype=np.int64) * 3
    _, path = saved(tmp_path, 200_000, 0.01, keys=keys)
    mapped, loaded = BloomFilter.open(path), BloomFilter.load(path)
    mapped.key_kind = loaded.key_kind = "mixed"  # text keys into an int64 filter
    probe = np.arange(150_000, dtype=np.int64)  # parallel-sized batches
    want = loaded.contains_many(probe)
    words = [f"t{i}" for i in range(3000)]
    want_words = loaded.contains_many(words)
    errors = []
    start = threading.Barrier(6)

    def worker(i):
        try:
            start.wait()
            for _ in range(4):
                assert (mapped.contains_many(probe) == want).all()
                assert (mapped.contains_many(words) == want_words).all()
                assert [int(k) in mapped for k in probe[i:i + 500]] == want[i:i + 500].tolist()
                assert mapped.fill_ratio == loaded.fill_ratio
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_at_once(tmp_path):
    """Opening a FIFO with no writer for reading would wait for a writer
    forever: BloomFilter.open and the Dask path helpers refuse it by its
    type instead (and a socket and a character device the same way). In a child process with a deadline, so that a hang fails
    the test rather than the suite."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code = (
        "import sys\n"
        "from lesshash import BloomFilter\n"
        "for verify in (True, False):\n"
        "    try:\n"
        "        BloomFilter.open(sys.argv[1], verify=verify)\n"
        "    except OSError as e:\n"
        "        assert 'not a regular file' in str(e), e\n"
        "    else:\n"
        "        raise SystemExit('opened a FIFO')\n"
        "import lesshash.dask as ld\n"
        "try:\n"
        "    ld._FilterFile.check(sys.argv[1])\n"
        "except (OSError, ValueError) as e:\n"
        "    assert 'not a regular file' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('the Dask path check took a FIFO')\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(fifo)], timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # A socket and a character device: the same error, by their type.
    import socket

    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        for path in (sock_path, "/dev/null"):
            done = subprocess.run([sys.executable, "-c", code, str(path)], timeout=60,
                                  capture_output=True, text=True)
            assert done.returncode == 0, (path, done.stderr)


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="no /proc")
def test_an_unmappable_regular_file_is_read_instead():
    """A regular file that cannot be mapped (/proc/self/status: mmap gives
    ENODEV) is read instead, so the error is the format's (not a filter),
    not an OSError about mapping."""
    for verify in (True, False):
        with pytest.raises(ValueError, match="magic"):
            BloomFilter.open("/proc/self/status", verify=verify)
