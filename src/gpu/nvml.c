/* gpu/nvml.c — NVML by dlopen.  See nvml.h. */
#include "gpu/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few NVML types we need, as nvml.h declares them (not present where gputap builds). */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;
/* nvmlFieldValue_t and its value union (nvml.h; the second member is named
 * scopeId in newer headers, `unused` in older ones: 0 = the GPU itself). */
typedef union {
	double dval;
	unsigned int uival;
	unsigned long ulval;
	unsigned long long ullval;
	long long sllval;
	int sival;
	unsigned short usval;
} nvmlValue_t;
typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;   /* µs since the epoch */
	long long latencyUsec;
	int valueType;         /* nvmlValueType_t */
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;
/* nvmlValueType_t */
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define NVML_VALUE_TYPE_SIGNED_INT 5
#define NVML_VALUE_TYPE_UNSIGNED_SHORT 6
/* Field ids, as nvml.h numbers them (ids never change, nvml.h says). */
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83 /* mJ since the driver was loaded */
#define NVML_FI_DEV_POWER_INSTANT 186           /* current power, mW, all architectures */
#define NVML_SUCCESS 0
#define NVML_CLOCK_SM 1
#define NVML_TEMPERATURE_GPU 0
#define NVML_DEVICE_UUID_BUFFER_SIZE 80

static struct {
	void *lib;
	int ok;
	int ndev;
	nvmlDevice_t dev[64];
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*cc)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*driver_version)(char *, unsigned);
	nvmlReturn_t (*nvml_version)(char *, unsigned);
	nvmlReturn_t (*cuda_version)(int *);
	nvmlReturn_t (*fields)(nvmlDevice_t, int, nvmlFieldValue_t *);
	/* per device: GT_S_POWER / GT_S_ENERGY once the driver refused that field */
	unsigned field_bad[64];
} N;

/* Resolve the first name that exists: versioned names come first. */
static void *sym(void *lib, const char *a, const char *b, const char *c)
{
	void *p = NULL;
	if (a && (p = dlsym(lib, a)))
		return p;
	if (b && (p = dlsym(lib, b)))
		return p;
	if (c)
		p = dlsym(lib, c);
	return p;
}

#define LOAD(field, ...) (*(void **)&N.field = sym(N.lib, __VA_ARGS__))

int gt_nvml_open(char *err, size_t errlen)
{
	if (N.ok)
		return 0;
	const char *path = getenv("GPUTAP_NVML_LIB");
	if (!path || !*path)
		path = "libnvidia-ml.so.1";
	N.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!N.lib) {
		snprintf(err, errlen, "NVML is not available (%s could not be loaded: no NVIDIA driver?)", path);
		return -1;
	}
	LOAD(init, "nvmlInit_v2", "nvmlInit", NULL);
	LOAD(shutdown, "nvmlShutdown", NULL, NULL);
	LOAD(error_string, "nvmlErrorString", NULL, NULL);
	LOAD(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL);
	LOAD(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL);
	LOAD(name, "nvmlDeviceGetName", NULL, NULL);
	LOAD(uuid, "nvmlDeviceGetUUID", NULL, NULL);
	LOAD(memory, "nvmlDeviceGetMemoryInfo", NULL, NULL);
	LOAD(power, "nvmlDeviceGetPowerUsage", NULL, NULL);
	LOAD(energy, "nvmlDeviceGetTotalEnergyConsumption", NULL, NULL);
	LOAD(util, "nvmlDeviceGetUtilizationRates", NULL, NULL);
	LOAD(clock, "nvmlDeviceGetClockInfo", NULL, NULL);
	LOAD(temp, "nvmlDeviceGetTemperature", NULL, NULL);
	LOAD(cc, "nvmlDeviceGetCudaComputeCapability", NULL, NULL);
	LOAD(power_limit, "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit", NULL);
	LOAD(driver_version, "nvmlSystemGetDriverVersion", NULL, NULL);
	LOAD(nvml_version, "nvmlSystemGetNVMLVersion", NULL, NULL);
	LOAD(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion", NULL);
	LOAD(fields, "nvmlDeviceGetFieldValues", NULL, NULL);
	const char *nf = getenv("GPUTAP_NVML_NO_FIELDS");
	if (nf && *nf && strcmp(nf, "0") != 0)
		N.fields = NULL;
	if (!N.init || !N.count || !N.handle) {
		snprintf(err, errlen, "NVML is not usable (%s lacks nvmlInit/nvmlDeviceGetCount)", path);
		goto fail;
	}
	nvmlReturn_t r = N.init();
	if (r != NVML_SUCCESS) {
		snprintf(err, errlen, "NVML could not start (nvmlInit: %s): no NVIDIA driver or no GPU",
			 N.error_string ? N.error_string(r) : "error");
		goto fail;
	}
	unsigned n = 0;
	if (N.count(&n) != NVML_SUCCESS)
		n = 0;
	if (n > sizeof(N.dev) / sizeof(N.dev[0]))
		n = sizeof(N.dev) / sizeof(N.dev[0]);
	N.ndev = 0;
	for (unsigned i = 0; i < n; i++) {
		if (N.handle(i, &N.dev[i]) != NVML_SUCCESS)
			break;
		N.ndev = (int)i + 1;
	}
	N.ok = 1;
	return 0;
fail:
	dlclose(N.lib);
	memset(&N, 0, sizeof(N));
	return -1;
}

void gt_nvml_close(void)
{
	if (N.ok && N.shutdown)
		N.shutdown();
	if (N.lib)
		dlclose(N.lib);
	memset(&N, 0, sizeof(N));
}

int gt_nvml_device_count(void)
{
	return N.ok ? N.ndev : 0;
}

int gt_nvml_static(int dev, struct gt_gpu_static *s)
{
	memset(s, 0, sizeof(*s));
	s->cc_major = s->cc_minor = -1;
	if (!N.ok || dev < 0 || dev >= N.ndev)
		return -1;
	nvmlDevice_t d = N.dev[dev];
	if (N.name && N.name(d, s->name, sizeof(s->name)) != NVML_SUCCESS)
		s->name[0] = '\0';
	if (N.uuid && N.uuid(d, s->uuid, sizeof(s->uuid)) != NVML_SUCCESS)
		s->uuid[0] = '\0';
	nvmlMemory_t m;
	if (N.memory && N.memory(d, &m) == NVML_SUCCESS)
		s->mem_total = m.total;
	int ma, mi;
	if (N.cc && N.cc(d, &ma, &mi) == NVML_SUCCESS)
		s->cc_major = ma, s->cc_minor = mi;
	unsigned pl;
	if (N.power_limit && N.power_limit(d, &pl) == NVML_SUCCESS)
		s->power_limit_mw = pl;
	s->name[sizeof(s->name) - 1] = s->uuid[sizeof(s->uuid) - 1] = '\0';
	return 0;
}

/* A field value as an unsigned number; 0 if its type is not a number we expect. */
static int field_u64(const nvmlFieldValue_t *f, uint64_t *out)
{
	switch (f->valueType) {
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		*out = f->value.uival;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		*out = f->value.ulval;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		*out = f->value.ullval;
		return 1;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		*out = (uint64_t)(f->value.sllval < 0 ? 0 : f->value.sllval);
		return f->value.sllval >= 0;
	case NVML_VALUE_TYPE_SIGNED_INT:
		*out = (uint64_t)(f->value.sival < 0 ? 0 : f->value.sival);
		return f->value.sival >= 0;
	case NVML_VALUE_TYPE_UNSIGNED_SHORT:
		*out = f->value.usval;
		return 1;
	case NVML_VALUE_TYPE_DOUBLE:
		*out = f->value.dval > 0 ? (uint64_t)f->value.dval : 0;
		return f->value.dval >= 0;
	default:
		return 0;
	}
}

/* Power and energy in one driver call.  Returns the bits it filled; a field
 * the driver refuses is marked so that later samples use the plain call. */
static unsigned sample_fields(int dev, nvmlDevice_t d, unsigned want, struct gt_gpu_sample *s)
{
	want &= (GT_S_POWER | GT_S_ENERGY) & ~__atomic_load_n(&N.field_bad[dev], __ATOMIC_RELAXED);
	if (!N.fields || !want)
		return 0;
	nvmlFieldValue_t f[2];
	unsigned bit[2];
	int n = 0;
	memset(f, 0, sizeof(f));
	if (want & GT_S_POWER)
		f[n].fieldId = NVML_FI_DEV_POWER_INSTANT, bit[n++] = GT_S_POWER;
	if (want & GT_S_ENERGY)
		f[n].fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, bit[n++] = GT_S_ENERGY;
	if (N.fields(d, n, f) != NVML_SUCCESS) {
		__atomic_fetch_or(&N.field_bad[dev], want, __ATOMIC_RELAXED);
		return 0;
	}
	unsigned got = 0;
	for (int k = 0; k < n; k++) {
		uint64_t v;
		if (f[k].nvmlReturn != NVML_SUCCESS || !field_u64(&f[k], &v)) {
			__atomic_fetch_or(&N.field_bad[dev], bit[k], __ATOMIC_RELAXED);
			continue;
		}
		if (bit[k] == GT_S_POWER)
			s->power_w = (double)v / 1000.0;
		else
			s->energy_mj = v;
		got |= bit[k];
	}
	s->valid |= got;
	return got;
}

int gt_nvml_sample(int dev, unsigned want, struct gt_gpu_sample *s)
{
	memset(s, 0, sizeof(*s));
	if (!N.ok || dev < 0 || dev >= N.ndev)
		return -1;
	nvmlDevice_t d = N.dev[dev];
	unsigned u;
	unsigned long long e;
	nvmlMemory_t m;
	nvmlUtilization_t ut;
	want &= ~sample_fields(dev, d, want, s);
	if ((want & GT_S_POWER) && N.power && N.power(d, &u) == NVML_SUCCESS)
		s->power_w = u / 1000.0, s->valid |= GT_S_POWER;
	if ((want & GT_S_ENERGY) && N.energy && N.energy(d, &e) == NVML_SUCCESS)
		s->energy_mj = e, s->valid |= GT_S_ENERGY;
	if ((want & GT_S_MEM) && N.memory && N.memory(d, &m) == NVML_SUCCESS)
		s->mem_used = m.used, s->mem_total = m.total, s->valid |= GT_S_MEM;
	if ((want & GT_S_UTIL) && N.util && N.util(d, &ut) == NVML_SUCCESS)
		s->sm_util_pct = ut.gpu, s->mem_util_pct = ut.memory, s->valid |= GT_S_UTIL;
	if ((want & GT_S_CLOCK) && N.clock && N.clock(d, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
		s->sm_clock_mhz = u, s->valid |= GT_S_CLOCK;
	if ((want & GT_S_TEMP) && N.temp && N.temp(d, NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS)
		s->temp_c = u, s->valid |= GT_S_TEMP;
	return 0;
}

int gt_nvml_energy(int dev, uint64_t *mj)
{
	struct gt_gpu_sample s;
	if (gt_nvml_sample(dev, GT_S_ENERGY, &s) < 0 || !(s.valid & GT_S_ENERGY))
		return -1;
	*mj = s.energy_mj;
	return 0;
}

void gt_nvml_driver_version(char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (N.ok && N.driver_version && N.driver_version(buf, (unsigned)len) != NVML_SUCCESS)
		buf[0] = '\0';
}

void gt_nvml_version(char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (N.ok && N.nvml_version && N.nvml_version(buf, (unsigned)len) != NVML_SUCCESS)
		buf[0] = '\0';
}

int gt_nvml_cuda_driver_version(void)
{
	int v = 0;
	if (N.ok && N.cuda_version && N.cuda_version(&v) != NVML_SUCCESS)
		v = 0;
	return v;
}
