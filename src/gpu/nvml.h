/*
 * gpu/nvml.h — NVML loaded at run time (libcuda and CUPTI: gpu/probe.h).
 *
 * Owns: dlopen of libnvidia-ml.so.1 (or $GPUTAP_NVML_LIB, used by tests
 * with a fake library), a table of function pointers resolved with the
 * versioned names first (nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2, ...),
 * static device facts, and one sample of a device's metrics.
 *
 * Invariant: every metric carries a validity bit; a query that fails or is
 * "not supported" (or was not asked for) leaves the bit clear and the value
 * 0, and printers write an empty field for it, never a 0.
 *
 * Cost: each NVML query is a driver round trip of tens to hundreds of
 * microseconds of CPU (docs/performance.md) — the total-energy counter
 * milliseconds — so gt_nvml_sample() reads only the metrics it is asked for,
 * and the sampler reads energy (gt_nvml_energy) on a thread of its own.
 * Nothing here is thread-safe except gt_nvml_sample() and gt_nvml_energy(),
 * which NVML allows from any thread once gt_nvml_open() succeeded (the
 * per-device "field refused" bits they share are updated atomically).
 */
#ifndef GT_GPU_NVML_H
#define GT_GPU_NVML_H

#include <stddef.h>
#include <stdint.h>

/* validity bits of struct gt_gpu_sample */
#define GT_S_POWER 0x1u
#define GT_S_ENERGY 0x2u
#define GT_S_MEM 0x4u
#define GT_S_UTIL 0x8u
#define GT_S_CLOCK 0x10u
#define GT_S_TEMP 0x20u
#define GT_S_ALL 0x3fu

struct gt_gpu_sample {
	uint32_t valid;
	double power_w;     /* instantaneous where the driver has it, else NVML's power usage */
	uint64_t energy_mj; /* total energy counter since driver load */
	uint64_t mem_used;  /* bytes */
	uint64_t mem_total; /* bytes */
	unsigned sm_util_pct;
	unsigned mem_util_pct;
	unsigned sm_clock_mhz;
	unsigned temp_c;
};

struct gt_gpu_static {
	char name[96];
	char uuid[96];
	uint64_t mem_total; /* bytes, 0 if unknown */
	int cc_major, cc_minor; /* -1 if unknown */
	unsigned power_limit_mw; /* 0 if unknown */
};

/* Load NVML and initialise it.  0, or -1 with err saying why (no library,
 * no driver, init failed) in one sentence. */
int gt_nvml_open(char *err, size_t errlen);
void gt_nvml_close(void);
int gt_nvml_device_count(void);
int gt_nvml_static(int dev, struct gt_gpu_static *s);
/* Read the metrics in `want` (GT_S_* bits) of device `dev`; only those
 * can come back valid.  Power and energy: one nvmlDeviceGetFieldValues call
 * (NVML_FI_DEV_POWER_INSTANT, NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION); a field
 * the driver refuses once is read from then on with nvmlDeviceGetPowerUsage /
 * nvmlDeviceGetTotalEnergyConsumption (GPUTAP_NVML_NO_FIELDS=1 forces that).
 * Memory: nvmlDeviceGetMemoryInfo; utilisation, SM clock, temperature: one
 * call each.  0, or -1 if NVML is not open or dev is out of range. */
int gt_nvml_sample(int dev, unsigned want, struct gt_gpu_sample *s);
/* The total-energy counter of device dev in mJ (field value, or
 * nvmlDeviceGetTotalEnergyConsumption where the field is refused).  0, or -1
 * if not reported. */
int gt_nvml_energy(int dev, uint64_t *mj);
/* Versions; empty string / 0 when unknown. */
void gt_nvml_driver_version(char *buf, size_t len);
void gt_nvml_version(char *buf, size_t len);
int gt_nvml_cuda_driver_version(void); /* e.g. 13000, 0 if unknown */

#endif
