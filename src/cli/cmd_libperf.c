/* gputap libperf — replay recorded library calls (GEMMs, cuDNN convolutions, NCCL collectives) and time them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/log.h"
#include "liblog/libtrace.h"
#include "libperf/run.h"

const char cmd_libperf_help[] =
	"usage: gputap libperf [-o OUT] [--iters N] [--warmup N] [--algos N] [--device N] [--warm-cache]\n"
	"                      [--quiet] INPUT\n"
	"\n"
	"Replay every GEMM configuration recorded in a library_trace.csv with cuBLASLt on a\n"
	"GPU, time each algorithm that cuBLASLt's heuristic offers for it, and write one row\n"
	"per configuration to OUT (default: library_perf.csv beside INPUT):\n"
	"  the recorded algorithm's time (when the log recorded an algoId and the library\n"
	"  offers it; otherwise the heuristic's first choice, and the timed_as column says\n"
	"  so), the best algorithm's id and time, TFLOP/s, the gain of the best over the\n"
	"  recorded one in percent, and the time the best would save over all recorded calls.\n"
	"\n"
	"NCCL collectives (allreduce, allgather, reducescatter, broadcast, reduce, alltoall,\n"
	"gather, scatter; send/recv as a ring) are replayed on this machine's GPUs when it\n"
	"has at least 2: one process, one communicator per GPU (ncclCommInitAll) over GPUs\n"
	"0..n-1 with n = min(recorded nranks, GPUs), the recorded count, type and reduction,\n"
	"timed with CUDA events on every GPU's stream (a run lasts until the slowest GPU is\n"
	"done; the median is reported) with the nccl-tests algorithm and bus bandwidths in\n"
	"the columns bytes, algbw_gbps, busbw_gbps and gpus.  A row says so when fewer GPUs\n"
	"than recorded ranks were used.  NCCL is loaded from $GPUTAP_NCCL_LIB when set,\n"
	"else libnccl.so.2 from the loader's path (LD_LIBRARY_PATH), the CUDA toolkit and\n"
	"PyTorch's nvidia-nccl wheel; NCCL_NVLS_ENABLE is set to 0 unless already set.\n"
	"On one GPU, or without NCCL, the rows say why they were skipped.\n"
	"\n"
	"cuDNN convolutions (forward, backward data, backward filter) are rebuilt with cuDNN's\n"
	"backend API from the recorded types, shapes, strides, padding, strides, dilations\n"
	"and groups; the recorded engine with its knobs and every engine configuration the\n"
	"heuristics offer (--algos) are timed the same way; engines that would add TF32,\n"
	"down-converted inputs or reduced-precision reduction to the recorded engine's\n"
	"numerics are not timed.  cuDNN is loaded from $GPUTAP_CUDNN_LIB when set, else\n"
	"libcudnn.so.9 from the loader's path, the CUDA toolkit and PyTorch's nvidia-cudnn\n"
	"wheel; without it the cuDNN rows say why and the rest is replayed.  Other cuDNN\n"
	"calls (normalisation, fused graphs) and non-GEMM BLAS calls are listed as skipped,\n"
	"each saying why.\n"
	"\n"
	"INPUT is a library_trace.csv (from 'gputap run --tools cublaslt_trace,...') or a\n"
	"folder of library logs (cuBLAS, cuBLASLt, cuDNN, NCCL), which is first turned into\n"
	"library_trace.csv beside OUT.\n"
	"\n"
	"options:\n"
	"  -o, --output OUT   where to write library_perf.csv\n"
	"  --iters N          timed runs per algorithm or collective; the median is reported\n"
	"                     (default 20)\n"
	"  --warmup N         untimed runs before timing each algorithm (default 5)\n"
	"  --algos N          algorithms to ask of cuBLASLt's (and engines of cuDNN's) heuristics,\n"
	"                     at most 64 (default 16)\n"
	"  --device N         CUDA device for the GEMMs (default 0)\n"
	"  --warm-cache       do not flush the GPU's L2 cache before each timed run (by default\n"
	"                     twice its size is overwritten first, so that a run reads its data\n"
	"                     from memory as a call inside a program does)\n"
	"  --quiet            no progress lines on stderr\n"
	"\n"
	"A run's time is the GPU time of the kernels it launched (CUPTI kernel activity, as\n"
	"torch.profiler counts it), or, without CUPTI, the time between CUDA events around\n"
	"it; the timing and gpu_ops columns say which and how many kernels a run launched.\n"
	"Buffers hold a constant non-zero pattern (byte 0x3C), beta is 0, workspace 32 MiB.\n"
	"Needs an NVIDIA GPU, its driver (libcuda.so.1) and cuBLASLt (libcublasLt.so.13 or\n"
	".12); without them it exits with status 1.  Columns: see docs/libtrace.md.\n"
	"\n"
	"exit status: 0 done, 1 bad input or no GPU, 2 usage.\n";

static int int_arg(const char *opt, const char *v, int lo, int hi, int *out)
{
	char *e;
	long x = v ? strtol(v, &e, 10) : 0;
	if (!v || *e || x < lo || x > hi) {
		gt_error("%s needs an integer from %d to %d", opt, lo, hi);
		return -1;
	}
	*out = (int)x;
	return 0;
}

int cmd_libperf(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	struct gt_libperf_opts o = {20, 5, 16, 0, stderr, 0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			if (!v) {
				gt_error("%s needs a file name", a);
				return 2;
			}
			out = v;
			i++;
		} else if (strcmp(a, "--iters") == 0) {
			if (int_arg(a, v, 1, 100000, &o.iters) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--warmup") == 0) {
			if (int_arg(a, v, 0, 100000, &o.warmup) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--algos") == 0) {
			if (int_arg(a, v, 1, 64, &o.max_algos) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--device") == 0) {
			if (int_arg(a, v, 0, 1023, &o.device) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--warm-cache") == 0) {
			o.warm_cache = 1;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			o.progress = NULL;
		} else if (a[0] == '-' && a[1]) {
			gt_error("libperf: unknown option '%s'; see 'gputap help libperf'", a);
			return 2;
		} else if (!in) {
			in = a;
		} else {
			gt_error("libperf: one INPUT only ('%s' and '%s')", in, a);
			return 2;
		}
	}
	if (!in) {
		gt_error("libperf: no INPUT; usage: gputap libperf library_trace.csv -o library_perf.csv");
		return 2;
	}
	char outbuf[4096], csvbuf[4096], err[1024];
	struct stat sb;
	if (stat(in, &sb) < 0) {
		gt_error("%s: %s", in, strerror(errno));
		return 1;
	}
	if (!out) {
		const char *slash = strrchr(in, '/');
		if (S_ISDIR(sb.st_mode))
			snprintf(outbuf, sizeof(outbuf), "%s/library_perf.csv", in);
		else if (slash)
			snprintf(outbuf, sizeof(outbuf), "%.*s/library_perf.csv", (int)(slash - in), in);
		else
			snprintf(outbuf, sizeof(outbuf), "library_perf.csv");
		out = outbuf;
	}
	{
		/* the output's folder is created when missing (one level, as -o DIR/x.csv asks) */
		const char *slash = strrchr(out, '/');
		if (slash && slash != out) {
			char d[4096];
			snprintf(d, sizeof(d), "%.*s", (int)(slash - out), out);
			if (mkdir(d, 0755) < 0 && errno != EEXIST) {
				gt_error("%s: %s", d, strerror(errno));
				return 1;
			}
		}
	}
	if (S_ISDIR(sb.st_mode)) {
		const char *slash = strrchr(out, '/');
		if (slash)
			snprintf(csvbuf, sizeof(csvbuf), "%.*s/library_trace.csv", (int)(slash - out), out);
		else
			snprintf(csvbuf, sizeof(csvbuf), "library_trace.csv");
		if (gt_libtrace_collect(in, csvbuf, "", "", err, sizeof(err)) < 0) {
			gt_error("%s", err);
			return 1;
		}
		if (o.progress)
			fprintf(o.progress, "libperf: logs of %s written as %s\n", in, csvbuf);
		in = csvbuf;
	}
	int rc = gt_libperf_run(in, out, &o, err, sizeof(err));
	if (rc < 0) {
		gt_error("%s", err);
		return 1;
	}
	printf("%s\n", out);
	return gt_finish_stdout(0);
}
