#!/usr/bin/env bash
# gputap libperf on a machine without a GPU: usage errors, bad input, the clear
# "needs a GPU" error (GEMM and NCCL rows alike), and logs turned into
# library_trace.csv first.
. "$(dirname "$0")/lib.sh"

expect_status usage-no-input 2 "$GPUTAP" libperf
expect_status usage-bad-option 2 "$GPUTAP" libperf --iters x "$T/x.csv"
expect_status missing-input 1 "$GPUTAP" libperf "$T/none.csv" -o "$T/out.csv"

printf 'jobid,created_date,model,library,config,calls\nj,d,m,cublasLt,op=gemm m=1,notanumber\n' >"$T/bad.csv"
expect_status bad-csv 1 "$GPUTAP" libperf "$T/bad.csv" -o "$T/out.csv"
contains bad-csv-names-line "$T/.out" "bad.csv:2:"

cat >"$T/ok.csv" <<'CSV'
jobid,created_date,model,library,config,calls
j,d,m,cublasLt,op=gemm transa=N transb=N m=256 n=1024 k=512 lda=256 ldb=512 ldc=256 ldd=256 type_a=R_16F type_b=R_16F type_c=R_16F type_d=R_16F compute=COMPUTE_32F scale=R_32F batch=1 epilogue=DEFAULT algo=66,3
j,d,m,nccl,op=allreduce count=1048576 dtype=float32 redop=sum nranks=1,2
CSV
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "# a GPU is present: the no-GPU checks do not apply here" >&2
else
	expect_status no-gpu-exit-1 1 "$GPUTAP" libperf "$T/ok.csv" -o "$T/perf.csv"
	contains no-gpu-says-gpu "$T/.out" "libperf needs an NVIDIA GPU"
	if [ -e "$T/perf.csv" ] || [ -e "$T/perf.csv.partial" ]; then notok no-gpu-no-output; else ok no-gpu-no-output; fi

	# NCCL rows alone: the same documented status and message, nothing written
	cat >"$T/nccl.csv" <<'CSV'
jobid,created_date,model,library,config,calls
j,d,m,nccl,op=allreduce count=4194304 dtype=float32 redop=sum nranks=2,20
j,d,m,nccl,op=allgather count=1048576 dtype=bfloat16 nranks=4,40
j,d,m,nccl,op=reducescatter count=1048576 dtype=float16 redop=sum nranks=8,80
CSV
	expect_status nccl-no-gpu-exit-1 1 "$GPUTAP" libperf "$T/nccl.csv" -o "$T/nperf.csv"
	contains nccl-no-gpu-says-gpu "$T/.out" "gputap: error: libperf needs an NVIDIA GPU"
	if [ -e "$T/nperf.csv" ] || [ -e "$T/nperf.csv.partial" ]; then notok nccl-no-gpu-no-output; else ok nccl-no-gpu-no-output; fi

	mkdir -p "$T/logs" "$T/o"
	printf 'h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 64 datatype 9 op 0 root 0 comm 0x1 [nranks=1] stream (nil)\n' >"$T/logs/a.log"
	expect_status logs-dir-no-gpu 1 "$GPUTAP" libperf "$T/logs" -o "$T/o/perf.csv"
	contains logs-dir-collected "$T/o/library_trace.csv" ",nccl,op=allreduce count=64 dtype=bfloat16 redop=sum nranks=1,1"
fi
check help "$GPUTAP" libperf --help
contains help-documents-columns "$T/.out" "docs/libtrace.md"
contains help-nccl-library "$T/.out" "GPUTAP_NCCL_LIB"
contains help-nccl-nvls "$T/.out" "NCCL_NVLS_ENABLE is set to 0"
contains help-cudnn-library "$T/.out" "GPUTAP_CUDNN_LIB"
contains help-timing "$T/.out" "CUPTI kernel activity"
contains help-warm-cache "$T/.out" "--warm-cache"
finish
