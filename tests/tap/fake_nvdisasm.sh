#!/bin/sh
# A stand-in for the toolkit's nvdisasm (GPUTAP_NVDISASM) for tests/cli/t_pcsamp.sh: prints, in
# nvdisasm's layout, the code of the stand-in CUPTI's module (tests/tap/fake_cupti.c).  Its
# arguments go to $FAKE_NVDISASM_LOG, one call a line; FAKE_NVDISASM_NOFUN=1 refuses -fun (an
# nvdisasm without it), and refuses names after -fun (the toolkit's takes symbol indices);
# FAKE_NVDISASM_SLEEP=S takes S seconds first (a framework's large module).
[ -n "${FAKE_NVDISASM_LOG:-}" ] && echo "$*" >>"$FAKE_NVDISASM_LOG"
[ -n "${FAKE_NVDISASM_SLEEP:-}" ] && sleep "$FAKE_NVDISASM_SLEEP"
[ -n "${FAKE_NVDISASM_NOFUN:-}" ] && [ "$2" = -fun ] && { echo "nvdisasm: unknown option -fun" >&2; exit 1; }
for a in "$@"; do last=$a; done
{ head -c 4 "$last" | grep -q ELF && grep -aq FAKECUBIN "$last"; } || { echo "nvdisasm: not a cubin: $last" >&2; exit 1; }
# -fun takes symbol indices (--cuda-function-index), as the toolkit's does
[ "$2" = -fun ] && ! printf '%s' "$3" | grep -Eqx '[0-9]+(,[0-9]+)*' && { echo "nvdisasm: -fun takes symbol indices: $3" >&2; exit 1; }
funs=,all,
[ "$2" = -fun ] && funs=,$3,
has() { case $funs in *,all,* | *,$1,*) return 0 ;; esac; return 1; }
printf '\t.headerflags\t@"EF_CUDA_SM90"\n\n'
has 2 && cat <<'SASS'
//--------------------- .text._Z6kernelv --------------------------
	.section	.text._Z6kernelv,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=12"
        .global         _Z6kernelv
_Z6kernelv:
.text._Z6kernelv:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0030*/                   FADD R11, R11, R11 ;
        /*0040*/                   STG.E.128 desc[UR4][R8.64], R4 ;
        /*0050*/                   IADD3 R2, R2, -0x4, RZ ;
        /*0060*/                   ISETP.GE.AND P0, PT, R7, 0x1, PT ;
        /*0070*/               @!P0 BRA `(.L_x_1) ;
        /*0080*/                   EXIT ;
.L_x_1:
SASS
has 3 && cat <<'SASS'
//--------------------- .text._Z5otherv --------------------------
	.section	.text._Z5otherv,"ax",@progbits
.text._Z5otherv:
        /*0000*/                   NOP ;
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
SASS
exit 0
