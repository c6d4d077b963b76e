"""python -m gputap.fleet — the `gputap fleet` command (see `gputap help fleet`)."""
import argparse
import os
import sys

USAGE = ("gputap fleet [-o DIR] [--scheduler ADDR | --scheduler-file F] [--workers N] [--nvtx TAG] [--quiet] "
         "INPUT...")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="gputap fleet", usage=USAGE,
        description="Analyse the ranks of a job, on this machine or on a Dask cluster (the C analyzer over a "
                    "few ranks per task, where their files are), and reduce them to one answer: the stragglers "
                    "(how long the others waited for each, consistent or one-off, and why), per collective and "
                    "iteration who was late and by how much, per rank busy/idle/compute/communication, each "
                    "machine's clock offset, and the outliers.")
    ap.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="gputap run folders, rank folders, trace.gtr, PyTorch-profiler traces (.json/.json.gz), "
                         "nsys exports (.sqlite/.nsys-rep), or folders of these")
    ap.add_argument("-o", "--output", metavar="DIR",
                    help="write ranks.parquet, iterations.parquet, collectives.parquet, summary.json, summary.txt "
                         "and report.html here")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler (tcp://host:8786); default: $DASK_SCHEDULER_ADDRESS, else "
                        "this machine")
    g.add_argument("--scheduler-file", metavar="F", help="the scheduler file of an existing Dask cluster")
    ap.add_argument("--workers", type=int, metavar="N",
                    help="analyzer processes at a time on this machine (default: "
                         "min(4, CPUs)); given, it wins over DASK_SCHEDULER_ADDRESS")
    ap.add_argument("--nvtx", metavar="TAG", help="the NVTX range that marks one iteration (as gputap analyze --nvtx)")
    ap.add_argument("--gputap", metavar="PATH", help="the gputap command the workers run (default: found on each)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a = ap.parse_args(argv)
    if a.workers is not None and a.workers < 1:
        ap.error("--workers wants a positive integer")
    if (a.scheduler or a.scheduler_file) and a.workers:
        ap.error("--workers is for this machine: not with --scheduler or --scheduler-file")
    if a.scheduler_file and not os.path.exists(a.scheduler_file):
        print("gputap fleet: error: %s: no such scheduler file" % a.scheduler_file, file=sys.stderr)
        return 1
    env = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    sched = a.scheduler
    if env and not (a.scheduler or a.scheduler_file):
        if a.workers:
            print("gputap fleet: --workers %d: %d analyzer processes on this machine; DASK_SCHEDULER_ADDRESS (%s) is "
                  "not used" % (a.workers, a.workers, env), file=sys.stderr)
        else:
            sched = env
            if not a.quiet:
                print("gputap fleet: the scheduler of DASK_SCHEDULER_ADDRESS: %s" % env, file=sys.stderr)
    try:
        from gputap import fleet
        # found (not imported: analyze() imports them while the analyzer runs); dask only for a cluster
        fleet._require(dask=bool(sched or a.scheduler_file), load=False, files=bool(a.output))
    except ImportError as e:
        print("gputap fleet: error: %s" % e, file=sys.stderr)
        return 1
    try:
        res = fleet.analyze(a.inputs, out=a.output, scheduler=sched, scheduler_file=a.scheduler_file,
                            workers=a.workers, gputap=a.gputap, progress=None if a.quiet else sys.stderr, nvtx=a.nvtx)
    except (OSError, ValueError, TimeoutError, ImportError, fleet.FleetError) as e:
        print("gputap fleet: error: %s" % e, file=sys.stderr)
        return 1
    sys.stdout.write(res.text)
    if a.output:
        sys.stdout.write("\nwritten: %s/{ranks,iterations,collectives}.parquet, summary.json, summary.txt, "
                         "report.html\n" % a.output)
    if not res.summary["ranks"]:
        print("gputap fleet: error: no rank could be analysed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
