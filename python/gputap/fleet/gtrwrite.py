"""Write gputap traces (trace.gtr), as docs/trace-format.md defines them.

Used by the job generator (tests, benchmarks).  Only what a generated job needs: strings, API
calls, kernels, memcpys, ranges and NCCL collectives.
"""
import struct

MAGIC = b"GPUTAPTR"
VERSION = 1
HEADER_SIZE = 160

REC_STRING, REC_API, REC_KERNEL, REC_MEMCPY, REC_RANGE, REC_NCCL_COLL = 1, 2, 3, 4, 7, 12


class TraceWriter:
    """Collects records in memory (a generated rank is small) and writes them at close."""

    def __init__(self, path, proc, host, pid=1000, start_ns=0):
        self.path = path
        self.proc = proc
        self.host = host
        self.pid = pid
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.parts = []
        self.nrec = 0
        self.strings = {}
        self.range_id = 0

    def _put(self, rtype, tid, body):
        size = 8 + len(body)
        pad = (-size) % 8
        self.parts.append(struct.pack("<HHI", rtype, size + pad, tid) + body + b"\0" * pad)
        self.nrec += 1

    def string(self, text):
        sid = self.strings.get(text)
        if sid is None:
            sid = len(self.strings) + 1
            self.strings[text] = sid
            raw = text.encode()
            self._put(REC_STRING, 0, struct.pack("<II", sid, len(raw)) + raw)
        return sid

    def api(self, name, start, end, corr, tid=1):
        body = struct.pack("<IBbHiIQQQQQ", self.string(name), 2, -1, 0, 0, 0, start, end, 0, corr, 0)
        self._put(REC_API, tid, body)
        self.end_ns = max(self.end_ns, end)

    def kernel(self, name, device, stream, start, end, corr):
        body = struct.pack("<IIIIQQQ3I3IIIIIQ", self.string(name), device, 1, stream, start, end, corr,
                           1, 1, 1, 128, 1, 1, 32, 0, 0, 0, 0)
        self._put(REC_KERNEL, 0, body)
        self.end_ns = max(self.end_ns, end)

    def memcpy(self, kind, device, stream, start, end, nbytes, corr):
        body = struct.pack("<BBBBIIIQQQQII", kind, 0, 0, 1, device, 1, stream, start, end, nbytes, corr, 0, device)
        self._put(REC_MEMCPY, 0, body)

    def range(self, name, start, end, tid=1, kind=1, domain=None):
        """kind: 1 push/pop, 2 start/end, 3 mark, 4 gputap range, 5 capture window (format.h); domain:
        the NVTX domain's name (None: the default domain)."""
        self.range_id += 1
        body = struct.pack("<IIBBHIQQQQ", self.string(name), self.string(domain) if domain else 0, kind, 0, 0, tid,
                           start, end, self.range_id, 0)
        self._put(REC_RANGE, tid, body)

    def nccl_coll(self, comm_hash, seq, start, end, func, algo, proto, count, rank, nranks, tid=1,
                  dtype="ncclFloat32", root=-1):
        """A profiler-plugin record; for a "Send" or "Recv" root is the peer and seq counts that
        direction with that peer, as the tap records them."""
        body = struct.pack("<QQQQQIIIIiiiBBBB", comm_hash, seq, start, end, count, self.string(func),
                           self.string(algo), self.string(proto), self.string(dtype), rank, nranks, root,
                           16, 8, 4, 0)
        self._put(REC_NCCL_COLL, tid, body)

    def close(self):
        hdr = struct.pack("<8sIIIIQQQQQ32s64s", MAGIC, VERSION, HEADER_SIZE, 0, self.pid, self.start_ns,
                          self.end_ns, self.nrec, 0, 0, self.proc.encode(), self.host.encode())
        assert len(hdr) == HEADER_SIZE
        with open(self.path, "wb") as f:
            f.write(hdr)
            f.writelines(self.parts)
        self.parts = []
