"""Tables as columns: a dict of equal-length numpy arrays, and the group-by arithmetic fleet's
reduction needs over them (keys to numbers, per-group size, sum, min, max, median, first row).

Fleet's client does not import pandas: on one machine pandas' import alone took longer than the C
analyzer's whole run over a thousand ranks.  Strings are object arrays of str, lists are Python
lists; `frame()` makes a pandas DataFrame of a table for the Python API, when asked for.
"""
import numpy as np


def nrows(t):
    for v in t.values():
        return len(v)
    return 0


def take(t, idx):
    """The rows `idx` (indices or a boolean mask) of every column."""
    return {k: (v[idx] if isinstance(v, np.ndarray) else _take_list(v, idx)) for k, v in t.items()}


def _take_list(v, idx):
    idx = np.asarray(idx)
    if idx.dtype == bool:
        idx = np.nonzero(idx)[0]
    return [v[i] for i in idx.tolist()]


def concat(tables, names, string_cols=()):
    """The tables one after the other (columns `names`; a table without rows may lack columns).
    `string_cols`: columns of numbers into each table's own "_strings"; joined, they point into one
    table of strings in sorted order (so that their numbers sort as the strings do), "_strings"."""
    out = {}
    if string_cols:
        vocab = sorted({x for t in tables for x in (t.get("_strings", strings([""])).tolist())} | {""})
        at = {x: i for i, x in enumerate(vocab)}
        tables = [dict(t, **{k: np.array([at[x] for x in t["_strings"].tolist()], dtype=np.int64)[t[k]]
                             for k in string_cols if k in t and len(t[k])}) for t in tables]
        out["_strings"] = strings(vocab)
    for k in names:
        parts = [t[k] for t in tables if k in t and len(t[k])]
        if not parts:
            parts = [t[k] for t in tables if k in t][:1]
        out[k] = np.concatenate(parts) if parts else np.array([])
    return out


def strings(values):
    """An object array of str."""
    a = np.empty(len(values), dtype=object)
    a[:] = list(values)
    return a


def factorize(col):
    """(code per row, unique values) with the codes in the values' sorted order."""
    seen = {}
    first = np.fromiter((seen.setdefault(x, len(seen)) for x in col.tolist()), dtype=np.int64, count=len(col)) \
        if col.dtype == object else None
    if first is None:
        if col.dtype.kind in "iu" and len(col):
            lo, hi = int(col.min()), int(col.max())
            if hi - lo <= 4 * len(col) + 1024:  # small numbers (ranks, devices, codes): no sort
                present = np.zeros(hi - lo + 1, dtype=bool)
                present[col - lo] = True
                code = np.cumsum(present) - 1
                return code[col - lo].astype(np.int64, copy=False), np.nonzero(present)[0] + lo
        u, inv = np.unique(col, return_inverse=True)
        return inv.astype(np.int64, copy=False), u
    keys = list(seen)
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank[first], strings([keys[i] for i in order])


def group_ids(*cols):
    """(gid per row, number of groups): equal keys one number, numbered in the keys' sorted order."""
    if not len(cols[0]):
        return np.zeros(0, dtype=np.int64), 0
    code = None
    for c in cols:
        ci, u = factorize(np.asarray(c))
        code = ci if code is None else code * len(u) + ci
    if len(cols) == 1:
        return code, int(code.max()) + 1  # factorize's numbers are dense already
    inv, u = factorize(code)
    return inv, len(u)


def first_seen_ids(gid):
    """Renumber group ids in the order of each group's first row."""
    n = int(gid.max()) + 1 if len(gid) else 0
    first = np.full(n, len(gid), dtype=np.int64)
    np.minimum.at(first, gid, np.arange(len(gid)))
    order = np.argsort(first, kind="stable")
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    return new[gid]


class Groups:
    """Rows grouped by gid (0 .. n-1, every group non-empty unless `n` says more)."""

    def __init__(self, gid, n=None):
        self.gid = np.asarray(gid, dtype=np.int64)
        self.n = int(n if n is not None else (self.gid.max() + 1 if len(self.gid) else 0))
        self.size = np.bincount(self.gid, minlength=self.n)
        self._order = None

    @property
    def order(self):
        if self._order is None:
            self._order = np.argsort(self.gid, kind="stable")
        return self._order

    def sum(self, v):
        return np.bincount(self.gid, weights=np.asarray(v, dtype=float), minlength=self.n).astype(float, copy=False)

    def count(self, mask):
        return np.bincount(self.gid[mask], minlength=self.n)

    def _reduce(self, ufunc, v, empty):
        out = np.full(self.n, empty, dtype=float)
        ufunc.at(out, self.gid, np.asarray(v, dtype=float))
        return out

    def max(self, v):
        return self._reduce(np.fmax, v, np.nan)

    def min(self, v):
        return self._reduce(np.fmin, v, np.nan)

    def median(self, v):
        """Per group the median of the values that are not NaN (NaN where none is)."""
        v = np.asarray(v, dtype=float)
        nan = np.isnan(v)
        if self.n and (self.n <= 64 or (self.size == self.size[0]).all()):
            return self._median_fast(v, nan.any())
        return self._median_sorted(v, nan)

    def _median_fast(self, v, has_nan):
        """Groups of one size: a matrix, a row per group; few groups: one at a time (a partition each,
        no sort of the whole column)."""
        import warnings

        med = np.nanmedian if has_nan else np.median
        vs = v[self.order]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a group of NaN only: its median is NaN
            if (self.size == self.size[0]).all():
                if not self.size[0]:
                    return np.full(self.n, np.nan)
                return med(vs.reshape(self.n, int(self.size[0])), axis=1)
            out = np.full(self.n, np.nan)
            s = 0
            for i, k in enumerate(self.size.tolist()):
                if k:
                    out[i] = med(vs[s:s + k])
                s += k
            return out

    def _median_sorted(self, v, nan):
        o = np.lexsort((v, nan, self.gid))
        vs = v[o]
        cnt = np.bincount(self.gid[~nan], minlength=self.n)
        start = np.concatenate(([0], np.cumsum(self.size)[:-1])).astype(np.int64)
        ok = cnt > 0
        lo = start + np.maximum(cnt - 1, 0) // 2
        hi = start + cnt // 2
        out = np.full(self.n, np.nan)
        out[ok] = (vs[lo[ok]] + vs[np.minimum(hi[ok], len(vs) - 1)]) / 2
        return out

    def quantile(self, v, q):
        """Per group, linear interpolation between the closest ranks (as numpy and pandas)."""
        v = np.asarray(v, dtype=float)
        if 0 < self.n <= 64:  # few groups: one partition each, no sort of the whole column
            vs, out, s = v[self.order], np.full(self.n, np.nan), 0
            for i, k in enumerate(self.size.tolist()):
                if k:
                    out[i] = np.quantile(vs[s:s + k], q)
                s += k
            return out
        o = np.lexsort((v, self.gid))
        vs = v[o]
        start = np.concatenate(([0], np.cumsum(self.size)[:-1])).astype(np.int64)
        ok = self.size > 0
        pos = (self.size[ok] - 1) * q
        lo = np.floor(pos).astype(np.int64)
        hi = np.ceil(pos).astype(np.int64)
        a, b = vs[start[ok] + lo], vs[start[ok] + hi]
        out = np.full(self.n, np.nan)
        out[ok] = a + (b - a) * (pos - lo)
        return out

    def first_row(self, mask=None):
        """Per group the index of its first row (of those in `mask`); -1 for a group without one."""
        idx = np.arange(len(self.gid)) if mask is None else np.nonzero(mask)[0]
        out = np.full(self.n, len(self.gid), dtype=np.int64)
        np.minimum.at(out, self.gid[idx], idx)
        out[out == len(self.gid)] = -1
        return out

    def cumcount(self):
        """Each row's position within its group, in row order."""
        o = self.order
        start = np.concatenate(([0], np.cumsum(self.size)[:-1])).astype(np.int64)
        pos = np.empty(len(self.gid), dtype=np.int64)
        pos[o] = np.arange(len(self.gid)) - start[self.gid[o]]
        return pos

    def lists(self, values, order=None):
        """Per group, the list of `values` of its rows in row order (or in `order`, a permutation)."""
        o = self.order if order is None else order
        vals = np.asarray(values)[o].tolist()
        ends = np.cumsum(np.bincount(self.gid[o], minlength=self.n)).tolist()
        out, s = [], 0
        for e in ends:
            out.append(vals[s:e])
            s = e
        return out


def lookup(keys, table_keys, values, missing):
    """values[i] where table_keys[i] == key, per key (int keys; `missing` where none)."""
    keys = np.asarray(keys)
    tk = np.asarray(table_keys)
    out = np.full(len(keys), missing, dtype=np.asarray(values).dtype if not isinstance(missing, float)
                  else np.result_type(np.asarray(values).dtype, float))
    if not len(tk) or not len(keys):
        return out
    o = np.argsort(tk, kind="stable")
    sk = tk[o]
    i = np.searchsorted(sk, keys)
    i = np.minimum(i, len(sk) - 1)
    hit = sk[i] == keys
    out[hit] = np.asarray(values)[o][i[hit]]
    return out


def frame(t, columns=None):
    """A pandas DataFrame of the table (pandas imported here, on first use)."""
    import pandas as pd

    cols = list(columns or t)
    return pd.DataFrame({k: (t[k] if k in t else []) for k in cols}, columns=cols)
