"""Same key, same answer in Python, the Rust crate and the CLI; files move
between them in both directions."""

from __future__ import annotations

import pathlib
import subprocess

import numpy as np
import pytest

from lesshash import BloomFilter

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parents[1] / "tests" / "data"


def golden_files():
    files = sorted(DATA.glob("*.bin"))
    assert len(files) >= 10, f"golden files missing under {DATA}"
    return files


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.stem)
def test_rust_golden_files_answer_identically(path):
    """Files written by the Rust crate (tests/format.rs) load here and give
    the recorded answers for keys "key-0", "key-1", ... as str, as bytes,
    and through every batch path."""
    pa = pytest.importorskip("pyarrow")
    answers = [c == "1" for c in path.with_suffix(".answers").read_text().strip()]
    keys = [f"key-{i}" for i in range(len(answers))]
    bf = BloomFilter.load(path)
    assert BloomFilter.from_bytes(path.read_bytes()) == bf
    assert [k in bf for k in keys] == answers
    assert [k.encode() in bf for k in keys] == answers
    assert bf.contains_many(keys).tolist() == answers
    assert bf.contains_many(np.array(keys)).tolist() == answers
    assert bf.contains_many(pa.array(keys)).tolist() == answers
    assert bf.to_bytes() == path.read_bytes()


# Python-written files the Rust tests read back (tests/python_golden.rs): one
# per layout, int keys across the whole 64-bit range, plus strings.
PY_GOLDEN = DATA / "python"

# The int members by the path that adds them: an int64 array; single ints
# (i64 and u64 bounds, whose twins share their 8 bytes: 2**63 is i64::MIN's
# bytes, 2**64 - 1 is -1's); then ints whose twin (the same 8 bytes read as
# the other type) is NOT a member, so that only the documented encoding of
# the key itself makes it one: single ints above 2**63 and below 0, a list
# of ints above 2**63 (the batch's integer path) and a uint64 array. (The
# first of a seeded list of candidates that changes none of the answers
# recorded before they were added.)
ARRAY_MEMBERS = [i * 7919 - 500_000 for i in range(300)]
SINGLE_MEMBERS = [-(2**63), -1, 2**63 - 1, 2**63, 2**64 - 1]
SINGLE_U64_MEMBERS = [2**63 + 12_345, 2**64 - 2**32 - 7, -(2**62) - 11]
LIST_U64_MEMBERS = [2**63 + 3_000_794, 2**64 - 3_138, 18_000_000_000_000_030_021]
ARRAY_U64_MEMBERS = [2**63 + 16, 2**64 - 123_658]
STR_MEMBERS = ["python", "é", ""]


def python_golden_keys():
    members = ARRAY_MEMBERS + SINGLE_MEMBERS
    # The probes' answers are recorded in this order; new probes go at the
    # end, so that the answers recorded before stay where they were: i64
    # around 0, two bounds, then u64 above 2**63 whose twins are probed
    # nowhere (2**63 + 7 i).
    probes = list(range(-1000, 1000)) + [2**64 - 2, -(2**63) + 1]
    probes += [2**63 + 7 * i for i in range(500)]
    return members, probes


def python_golden_filter(layout: str, encode=None, hash_family=None) -> BloomFilter:
    """The golden filter; with `encode`, every int key replaced by
    `encode(key)` (bytes keys: the int paths are not used)."""
    enc = encode or (lambda k: k)
    bf = BloomFilter(400, 0.01, layout=layout, seed=2026, hash_family=hash_family)
    if encode is None:
        bf.add_many(np.array(ARRAY_MEMBERS, dtype=np.int64))
    else:
        bf.add_many([enc(k) for k in ARRAY_MEMBERS])
    for k in SINGLE_MEMBERS:
        bf.add(enc(k))
    bf.add_many(STR_MEMBERS)
    for k in SINGLE_U64_MEMBERS:
        bf.add(enc(k))
    bf.add_many([enc(k) for k in LIST_U64_MEMBERS])
    if encode is None:
        bf.add_many(np.array(ARRAY_U64_MEMBERS, dtype=np.uint64))
    else:
        bf.add_many([enc(k) for k in ARRAY_U64_MEMBERS])
    return bf


def documented(k: int) -> bytes:
    """docs/python.md "Keys": 8 little-endian bytes, as i64 when negative,
    as u64 otherwise."""
    return k.to_bytes(8, "little", signed=k < 0)


@pytest.mark.parametrize("hash_family", ["xxh3-128", "folded-multiply"])
@pytest.mark.parametrize("layout", ["blocked", "split-block", "classic", "partitioned"])
def test_python_golden_files_are_what_python_writes(layout, hash_family):
    """The committed Python-written files are byte for byte what this code
    writes now, in each hash family (regenerate: LESSHASH_REGEN_GOLDEN=1
    pytest -k python_golden; only the missing files are written)."""
    import os

    bf = python_golden_filter(layout, hash_family=hash_family)
    assert bf.hash_family == hash_family
    assert f"hash_family='{hash_family}'" in repr(bf)
    _, probes = python_golden_keys()
    answers = "".join("1" if k in bf else "0" for k in probes)
    stem = layout if hash_family == "xxh3-128" else f"{layout}-{hash_family}"
    path = PY_GOLDEN / f"{stem}.lhbf"
    if os.environ.get("LESSHASH_REGEN_GOLDEN") == "1" and not path.exists():
        PY_GOLDEN.mkdir(exist_ok=True)
        bf.save(path)
        path.with_suffix(".answers").write_text(answers + "\n")
    assert path.read_bytes() == bf.to_bytes()
    assert path.with_suffix(".answers").read_text().strip() == answers
    assert bf.insert_calls == 316
    # ints and strs: the file records mixed keys (header byte 14: 4).
    assert bf.key_kind == "mixed" and path.read_bytes()[14] == 4


@pytest.mark.parametrize("layout", ["blocked", "split-block", "classic", "partitioned"])
def test_golden_int_keys_are_their_documented_bytes(layout):
    """The golden files pin the int encoding independently of the code that
    wrote them: the same filter built from each int's documented bytes
    (computed here with int.to_bytes) is the committed file, and every
    recorded probe answer is that of the probe's documented bytes. A
    changed encoding, its golden files regenerated, fails here (and in
    tests/python_golden.rs, which probes with Rust's own integers)."""
    data = (PY_GOLDEN / f"{layout}.lhbf").read_bytes()
    # Built from bytes and strs, it records bytes keys; the file (ints and
    # strs) mixed: the same bits once the kinds agree.
    from_bytes = python_golden_filter(layout, encode=documented)
    assert from_bytes.key_kind == "bytes"
    from_bytes.key_kind = "mixed"
    assert from_bytes.to_bytes() == data
    # Not vacuous: another encoding gives another file.
    big = python_golden_filter(layout, encode=lambda k: k.to_bytes(8, "big", signed=k < 0))
    assert big.to_bytes() != data
    bf = BloomFilter.from_bytes(data)
    _, probes = python_golden_keys()
    recorded = (PY_GOLDEN / f"{layout}.answers").read_text().strip()
    assert "".join("1" if documented(k) in bf else "0" for k in probes) == recorded
    # The u64 members whose twins are not members are in; their twins read
    # as the other type are the same key.
    for k in SINGLE_U64_MEMBERS + LIST_U64_MEMBERS + ARRAY_U64_MEMBERS:
        twin = k - 2**64 if k >= 2**63 else k + 2**64
        assert k in bf and twin in bf and twin not in SINGLE_MEMBERS + ARRAY_MEMBERS


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def test_cli_built_filter_loads_in_python(cli, tmp_path):
    keys = [f"user-{i}" for i in range(2000)]
    (tmp_path / "keys.txt").write_text("\n".join(keys) + "\n")
    for layout in ["blocked", "split-block", "classic", "partitioned"]:
        out = tmp_path / f"{layout}.lhbf"
        run([cli, "build", "-q", "-i", str(tmp_path / "keys.txt"), "-o", str(out),
             "--fpr", "0.01", "--layout", layout])
        bf = BloomFilter.load(out)
        assert bf.layout == layout
        assert bf.contains_many(keys).all()
        # Same sizing as the Python constructor for the same parameters.
        assert bf.bits == BloomFilter(2000, 0.01, layout=layout).bits
        probes = [f"other-{i}" for i in range(3000)]
        (tmp_path / "probes.txt").write_text("\n".join(probes) + "\n")
        got = run([cli, "filter", "-q", str(out), "-i", str(tmp_path / "probes.txt")]).stdout
        cli_hits = set(got.decode().split("\n")) - {""}
        py_hits = {k for k, hit in zip(probes, bf.contains_many(probes)) if hit}
        assert cli_hits == py_hits


def test_python_built_filter_answers_in_the_cli(cli, tmp_path):
    bf = BloomFilter(1000, 0.05, layout="classic")
    members = [f"m{i}" for i in range(1000)]
    bf.add_many(np.array(members))
    path = tmp_path / "py.lhbf"
    bf.save(path)
    probes = members[:100] + [f"x{i}" for i in range(2000)]
    (tmp_path / "probes.txt").write_text("\n".join(probes) + "\n")
    got = run([cli, "filter", "-q", str(path), "-i", str(tmp_path / "probes.txt")]).stdout
    cli_hits = set(got.decode().split("\n")) - {""}
    py_hits = {k for k in probes if k in bf}
    assert set(members[:100]) <= cli_hits
    assert cli_hits == py_hits
    assert len(py_hits) > 100  # some false positives at 5%: a real comparison
    info = run([cli, "info", str(path)]).stdout.decode()
    assert "classic" in info


def test_python_int_keys_answer_in_the_cli_with_keys_int(cli, tmp_path):
    """An int filter written by Python (the README's ``users.lhbf`` case)
    answers on the command line with ``--keys int``, exactly as in Python:
    ``query`` and ``filter``, negative and above-2**63 keys included; a
    ``build --keys int`` of the same numbers is the same file (key kind
    included); text keys (the default) are refused, and other keys."""
    members = list(range(-500, 1500)) + [2**64 - 1, -(2**63), 2**63]
    bf = BloomFilter(len(members), 0.01)
    bf.add_many(members)
    path = tmp_path / "users.lhbf"
    bf.save(path)
    got = run([cli, "query", "--keys", "int", str(path), "42", "-7", str(2**64 - 1)]).stdout
    assert got.decode() == f"42\tyes\n-7\tyes\n{2**64 - 1}\tyes\n"
    probes = list(range(-3000, 3000))
    (tmp_path / "probes.txt").write_text("\n".join(map(str, probes)) + "\n")
    got = run([cli, "filter", "-q", "--keys", "int", str(path), "-i", str(tmp_path / "probes.txt")])
    cli_hits = {int(x) for x in got.stdout.decode().split()}
    assert cli_hits == {k for k in probes if k in bf}
    assert set(range(-500, 1500)) <= cli_hits
    # Text keys (the default) are other keys: the file records int64 keys,
    # so the CLI refuses them and names --keys int; asked anyway
    # (--any-keys), at 1% almost none of 6,000 answer.
    text = [cli, "filter", "-q", str(path), "-i", str(tmp_path / "probes.txt")]
    refused = subprocess.run(text, capture_output=True)
    assert refused.returncode == 2 and b"--keys int" in refused.stderr
    got = run(text[:2] + ["--any-keys"] + text[2:]).stdout
    assert len(got.decode().split()) < 200
    (tmp_path / "members.txt").write_text("\n".join(map(str, members)) + "\n")
    out = tmp_path / "cli.lhbf"
    run([cli, "build", "-q", "--keys", "int", "--items", str(len(members)), "--fpr", "0.01",
         "-i", str(tmp_path / "members.txt"), "-o", str(out)])
    assert out.read_bytes() == path.read_bytes()
    bad = subprocess.run([cli, "query", "--keys", "int", str(path), "4.5"], capture_output=True)
    assert bad.returncode == 2 and b"--keys int" in bad.stderr


@pytest.mark.parametrize("suffix", [".parquet", ".arrow"])
def test_cli_parquet_filter_output_reads_in_pyarrow_with_the_input_schema(cli, tmp_path, suffix):
    """`lesshash filter -i events.parquet --column user_id -o kept.parquet`
    (or an Arrow IPC file) on a file pyarrow wrote: pyarrow reads the output
    with the input's schema (every column's type, nullability and the
    dictionary and time zone kept), and its rows are the input's rows
    whose key is not null and in the filter (by Python's own `in`), in the
    input's order, across row groups."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = 5_000
    rng = np.random.default_rng(7)
    ids = rng.integers(0, 20_000, n)
    valid = rng.random(n) > 0.1  # about 10% null keys
    events = pa.table({
        "user_id": pa.array(ids, type=pa.int64(), mask=~valid),
        "name": pa.array([f"n{i}" if i % 7 else None for i in range(n)], type=pa.string()),
        "score": pa.array(rng.random(n), type=pa.float64()),
        "at": pa.array(np.arange(n) * 1_000_000, type=pa.timestamp("us", tz="UTC")),
        "kind": pa.array([("a", "b", "c")[i % 3] for i in range(n)]).dictionary_encode(),
    })
    source = tmp_path / "events.parquet"
    pq.write_table(events, source, row_group_size=1_000)  # five row groups

    bf = BloomFilter(10_000, 0.01)
    bf.add_many(np.arange(0, 20_000, 2, dtype=np.int64))
    path = tmp_path / "users.lhbf"
    bf.save(path)

    out = tmp_path / f"kept{suffix}"
    run = subprocess.run([cli, "filter", str(path), "-i", str(source), "--column", "user_id",
                          "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    if suffix == ".parquet":
        kept = pq.read_table(out)
    else:
        with pa.memory_map(str(out)) as source_map:
            kept = pa.ipc.open_file(source_map).read_all()
    # The schema as pyarrow wrote it (its own metadata, which records the
    # pandas-free Arrow schema, aside).
    assert kept.schema.remove_metadata() == events.schema.remove_metadata()
    keep = [i for i, (k, ok) in enumerate(zip(ids.tolist(), valid.tolist())) if ok and k in bf]
    assert 0 < len(keep) < n
    assert kept.to_pylist() == events.take(keep).to_pylist()
