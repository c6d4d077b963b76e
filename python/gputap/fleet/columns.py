"""Tables as columns: a dict of equal-length numpy arrays (strings as object arrays of str, lists as
Python lists), read from the result `gputap fleet --result` / `--reduce` writes (docs/fleet.md
"result"), and made into pandas DataFrames for the Python API when asked for.

Fleet's client does not import pandas unless a DataFrame is asked for: on one machine pandas' import
alone took longer than the C analyzer's whole run over a thousand ranks.
"""
import json

import numpy as np

RESULT_MAGIC = b"gputap-fleet-result 1\n"


def nrows(t):
    for v in t.values():
        return len(v)
    return 0


def strings(values):
    """An object array of str."""
    a = np.empty(len(values), dtype=object)
    a[:] = list(values)
    return a


def parse_result(raw):
    """(tables, summary, headline, text) of the command's result: the three tables as dicts of numpy
    columns (read in place: no number is parsed), summary.json's dict, the text summary."""
    if not raw.startswith(RESULT_MAGIC):
        raise ValueError("not gputap fleet's result (first bytes %r)" % bytes(raw[:24]))
    nl = raw.index(b"\n", len(RESULT_MAGIC))
    hdr = json.loads(raw[len(RESULT_MAGIC):nl])
    if hdr.get("byteorder") != "little":
        raise ValueError("result in byte order %r" % hdr.get("byteorder"))
    pos, tables = nl + 1, {}

    def take(dtype, n):
        nonlocal pos
        if pos + 8 * n > len(raw):
            raise ValueError("result cut short")
        a = np.frombuffer(raw, dtype=dtype, count=n, offset=pos)
        pos += 8 * n
        return a

    for name in ("ranks", "iterations", "collectives"):
        spec = hdr["tables"][name]
        n = int(spec["rows"])
        strs = strings(spec.get("strings") or [])
        cols = {}
        for col, typ in spec["columns"]:
            if typ == "i8":
                cols[col] = take("<i8", n)
            elif typ == "f8":
                cols[col] = take("<f8", n)
            elif typ == "b1":
                cols[col] = take("<i8", n).astype(bool)
            elif typ == "str":
                cols[col] = strs[take("<i8", n)] if n else strings([])
            elif typ in ("list_i8", "list_f8"):
                off = take("<i8", n + 1).tolist()
                vals = take("<i8" if typ == "list_i8" else "<f8", off[-1] if off else 0).tolist()
                cols[col] = [vals[off[i]:off[i + 1]] for i in range(n)]
            else:
                raise ValueError("column %s.%s: unknown type %r" % (name, col, typ))
        tables[name] = cols
    if pos != len(raw):
        raise ValueError("%d bytes after the result" % (len(raw) - pos))
    return tables, hdr["summary"], hdr.get("headline", ""), hdr.get("text", "")


def frame(t, columns=None):
    """A pandas DataFrame of the table (pandas imported here, on first use)."""
    import pandas as pd

    cols = list(columns or t)
    return pd.DataFrame({k: (t[k] if k in t else []) for k in cols}, columns=cols)
