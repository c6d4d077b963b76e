// What CUPTI's PC Sampling API does on this GPU and driver, without gputap: the stall reasons it
// names, whether continuous mode runs beside kernel activity, what GetData returns, how long it
// takes, the records' function-name pointers, and the SASS-to-source lookup.
// usage: pcsamp_probe PERIOD(0 = no sampling) ITERS [act]
// Prints "probe ..." lines; exits 0 when sampling worked (or PERIOD 0).
#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pcsamp_kernels.cuh"

static double now_ms()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#define CU(x)                                                                                      \
	do {                                                                                       \
		CUptiResult r_ = (x);                                                              \
		if (r_ != CUPTI_SUCCESS) {                                                         \
			const char *m_ = "?";                                                      \
			cuptiGetResultString(r_, &m_);                                             \
			printf("probe FAIL %s: %d %s\n", #x, (int)r_, m_);                          \
		}                                                                                  \
	} while (0)

struct Cubin {
	std::vector<char> data;
};
static std::map<uint64_t, Cubin> cubins;
static int modules_loaded;

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *d)
{
	if (dom != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_MODULE_LOADED)
		return;
	const CUpti_ResourceData *rd = (const CUpti_ResourceData *)d;
	const CUpti_ModuleResourceData *m = (const CUpti_ModuleResourceData *)rd->resourceDescriptor;
	modules_loaded++;
	CUpti_GetCubinCrcParams p = {};
	p.size = CUpti_GetCubinCrcParamsSize;
	p.cubin = m->pCubin;
	p.cubinSize = m->cubinSize;
	double t0 = now_ms();
	CU(cuptiGetCubinCrc(&p));
	printf("probe module loaded id %u size %zu crc %016llx (crc %.3f ms)\n", m->moduleId, m->cubinSize,
	       (unsigned long long)p.cubinCrc, now_ms() - t0);
	cubins[p.cubinCrc].data.assign(m->pCubin, m->pCubin + m->cubinSize);
}

static uint8_t actbuf[8][1 << 20];
static int actnext;
static long kernels_seen;
static void CUPTIAPI breq(uint8_t **b, size_t *s, size_t *m)
{
	*b = actbuf[actnext++ % 8];
	*s = sizeof(actbuf[0]);
	*m = 0;
}
static void CUPTIAPI bdone(CUcontext, uint32_t, uint8_t *b, size_t, size_t valid)
{
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			kernels_seen++;
}

static std::vector<std::string> rname; // by index
static std::map<std::string, std::map<std::string, unsigned long long>> per_fn; // fn -> reason -> samples
static std::map<std::string, std::pair<unsigned long long, unsigned long long>> hot; // fn -> (samples, pc) of hottest PC
static std::map<std::pair<std::string, unsigned long long>, unsigned long long> pcs;
static std::set<char *> name_ptrs;
static unsigned long long tot_samples, tot_dropped, tot_nonuser, records, sum_nonni, sum_ni, buffers, hwfull;

static void decode(CUpti_PCSamplingData *d)
{
	buffers++;
	tot_samples += d->totalSamples;
	tot_dropped += d->droppedSamples;
	tot_nonuser += d->nonUsrKernelsTotalSamples;
	hwfull += d->hardwareBufferFull;
	for (size_t i = 0; i < d->totalNumPcs; i++) {
		CUpti_PCSamplingPCData *p = &d->pPcData[i];
		records++;
		name_ptrs.insert(p->functionName);
		std::string fn = p->functionName ? p->functionName : "?";
		unsigned long long s = 0;
		for (size_t k = 0; k < p->stallReasonCount; k++) {
			uint32_t ix = p->stallReason[k].pcSamplingStallReasonIndex;
			std::string rn = ix < rname.size() ? rname[ix] : "idx" + std::to_string(ix);
			per_fn[fn][rn] += p->stallReason[k].samples;
			if (rn.find("not_issued") != std::string::npos)
				sum_ni += p->stallReason[k].samples;
			else {
				sum_nonni += p->stallReason[k].samples;
				s += p->stallReason[k].samples;
			}
		}
		pcs[{fn, (unsigned long long)p->pcOffset}] += s;
		if (i < 3 && buffers <= 2)
			printf("probe record fn %s crc %016llx off 0x%llx findex %u corr %u nreasons %zu\n", fn.c_str(),
			       (unsigned long long)p->cubinCrc, (unsigned long long)p->pcOffset, p->functionIndex,
			       p->correlationId, p->stallReasonCount);
	}
}

int main(int argc, char **argv)
{
	int period = argc > 1 ? atoi(argv[1]) : 17;
	int iters = argc > 2 ? atoi(argv[2]) : 50;
	int act = argc > 3 && strcmp(argv[3], "act") == 0;
	CUpti_SubscriberHandle sub;
	CU(cuptiSubscribe(&sub, on_cb, NULL));
	CU(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED));
	if (act) {
		CU(cuptiActivityRegisterCallbacks(breq, bdone));
		CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	}
	cudaFree(0);
	CUcontext ctx;
	cuCtxGetCurrent(&ctx);
	size_t n = (size_t)16 << 20;
	float4 *a, *b;
	float *o;
	cudaMalloc(&a, n * sizeof(float4));
	cudaMalloc(&b, n * sizeof(float4));
	cudaMalloc(&o, (size_t)132 * 16 * 256 * sizeof(float));
	CUpti_PCSamplingData cfg = {}, get = {};
	size_t nr = 0;
	if (period) {
		double t0 = now_ms();
		CUpti_PCSamplingEnableParams ep = {};
		ep.size = CUpti_PCSamplingEnableParamsSize;
		ep.ctx = ctx;
		CU(cuptiPCSamplingEnable(&ep));
		printf("probe enable %.3f ms\n", now_ms() - t0);
		CUpti_PCSamplingGetNumStallReasonsParams np = {};
		np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
		np.ctx = ctx;
		np.numStallReasons = &nr;
		CU(cuptiPCSamplingGetNumStallReasons(&np));
		std::vector<uint32_t> idx(nr);
		std::vector<char *> names(nr);
		for (auto &s : names)
			s = (char *)calloc(1, CUPTI_STALL_REASON_STRING_SIZE);
		CUpti_PCSamplingGetStallReasonsParams sp = {};
		sp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
		sp.ctx = ctx;
		sp.numStallReasons = nr;
		sp.stallReasonIndex = idx.data();
		sp.stallReasons = names.data();
		CU(cuptiPCSamplingGetStallReasons(&sp));
		printf("probe reasons %zu:", nr);
		for (size_t i = 0; i < nr; i++) {
			printf(" %u=%s", idx[i], names[i]);
			if (idx[i] >= rname.size())
				rname.resize(idx[i] + 1);
			rname[idx[i]] = names[i];
		}
		printf("\n");
		for (CUpti_PCSamplingData *d : {&cfg, &get}) {
			d->size = sizeof(*d);
			d->collectNumPcs = 4096;
			d->pPcData = (CUpti_PCSamplingPCData *)calloc(4096, sizeof(CUpti_PCSamplingPCData));
			for (int i = 0; i < 4096; i++) {
				d->pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
				d->pPcData[i].stallReason =
					(CUpti_PCSamplingStallReason *)calloc(nr, sizeof(CUpti_PCSamplingStallReason));
			}
		}
		CUpti_PCSamplingConfigurationInfo ci[8] = {};
		ci[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
		ci[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
		ci[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		ci[1].attributeData.samplingPeriodData.samplingPeriod = period;
		ci[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
		ci[2].attributeData.stallReasonData.stallReasonCount = nr;
		ci[2].attributeData.stallReasonData.pStallReasonIndex = idx.data();
		ci[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
		ci[3].attributeData.samplingDataBufferData.samplingDataBuffer = &cfg;
		ci[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
		ci[4].attributeData.hardwareBufferSizeData.hardwareBufferSize = (size_t)128 << 20;
		ci[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
		ci[5].attributeData.scratchBufferSizeData.scratchBufferSize = (size_t)4 << 20;
		CUpti_PCSamplingConfigurationInfoParams cp = {};
		cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
		cp.ctx = ctx;
		cp.numAttributes = 6;
		cp.pPCSamplingConfigurationInfo = ci;
		t0 = now_ms();
		CU(cuptiPCSamplingSetConfigurationAttribute(&cp));
		for (int i = 0; i < 6; i++)
			if (ci[i].attributeStatus)
				printf("probe attr %d status %d\n", (int)ci[i].attributeType, (int)ci[i].attributeStatus);
		printf("probe configure %.3f ms\n", now_ms() - t0);
	}
	// kernels: each ITERS times, timed; GetData after each kernel's batch
	double gd_ms = 0;
	int gd_calls = 0;
	const char *kn[3] = {"mem", "fma", "sync"};
	double kms[3];
	for (int k = 0; k < 3; k++) {
		double t0 = now_ms();
		for (int i = 0; i < iters; i++) {
			if (k == 0)
				k_mem<<<132 * 8, 256>>>(a, b, n);
			else if (k == 1)
				k_fma<<<132 * 8, 256>>>(o, 2000, 0.9999f, 0.001f);
			else
				k_sync<<<132 * 16, 256>>>(o, 400, 64);
		}
		cudaDeviceSynchronize();
		kms[k] = (now_ms() - t0) / iters;
		if (period) {
			for (int round = 0; round < 64; round++) {
				CUpti_PCSamplingGetDataParams gp = {};
				gp.size = CUpti_PCSamplingGetDataParamsSize;
				gp.ctx = ctx;
				gp.pcSamplingData = &get;
				double g0 = now_ms();
				CUptiResult r = cuptiPCSamplingGetData(&gp);
				gd_ms += now_ms() - g0;
				gd_calls++;
				if (r != CUPTI_SUCCESS)
					printf("probe getdata result %d\n", (int)r);
				printf("probe getdata after %s: pcs %zu remaining %zu total %llu dropped %llu nonuser %llu range %llu hwfull %u\n",
				       kn[k], get.totalNumPcs, get.remainingNumPcs, (unsigned long long)get.totalSamples,
				       (unsigned long long)get.droppedSamples, (unsigned long long)get.nonUsrKernelsTotalSamples,
				       (unsigned long long)get.rangeId, get.hardwareBufferFull);
				decode(&get);
				if (!get.remainingNumPcs || r != CUPTI_SUCCESS)
					break;
			}
		}
	}
	for (int k = 0; k < 3; k++)
		printf("probe time k_%s %.4f ms per launch (period %d%s)\n", kn[k], kms[k], period, act ? ", kernel activity" : "");
	if (period) {
		CUpti_PCSamplingDisableParams dp = {};
		dp.size = CUpti_PCSamplingDisableParamsSize;
		dp.ctx = ctx;
		double t0 = now_ms();
		CU(cuptiPCSamplingDisable(&dp));
		printf("probe disable %.3f ms; cfg buffer pcs %zu total %llu\n", now_ms() - t0, cfg.totalNumPcs,
		       (unsigned long long)cfg.totalSamples);
		decode(&cfg);
		printf("probe getdata %d calls %.3f ms\n", gd_calls, gd_ms);
		printf("probe totals: cupti total %llu dropped %llu nonuser %llu; records %llu; sum(non not_issued) %llu "
		       "sum(not_issued) %llu; buffers %llu hwfull %llu; distinct name pointers %zu, functions %zu, pcs %zu\n",
		       tot_samples, tot_dropped, tot_nonuser, records, sum_nonni, sum_ni, buffers, hwfull, name_ptrs.size(),
		       per_fn.size(), pcs.size());
		for (auto &f : per_fn) {
			unsigned long long t = 0;
			for (auto &r : f.second)
				if (r.first.find("not_issued") == std::string::npos)
					t += r.second;
			printf("probe fn %s samples %llu:", f.first.c_str(), t);
			std::vector<std::pair<unsigned long long, std::string>> v;
			for (auto &r : f.second)
				v.push_back({r.second, r.first});
			std::sort(v.rbegin(), v.rend());
			for (size_t i = 0; i < v.size() && i < 8; i++)
				printf(" %s=%llu", v[i].second.c_str(), v[i].first);
			printf("\n");
		}
		// hottest PC per function, and its source line
		std::map<std::string, std::pair<unsigned long long, unsigned long long>> best;
		for (auto &p : pcs)
			if (p.second > best[p.first.first].first)
				best[p.first.first] = {p.second, p.first.second};
		for (auto &b : best) {
			for (auto &c : cubins) {
				CUpti_GetSassToSourceCorrelationParams sp = {};
				sp.size = CUpti_GetSassToSourceCorrelationParamsSize;
				sp.cubin = c.second.data.data();
				sp.cubinSize = c.second.data.size();
				sp.functionName = b.first.c_str();
				sp.pcOffset = b.second.second;
				double t0 = now_ms();
				CUptiResult r = cuptiGetSassToSourceCorrelation(&sp);
				double dt = now_ms() - t0;
				if (r == CUPTI_SUCCESS) {
					printf("probe hottest %s off 0x%llx samples %llu -> %s/%s:%u (%.3f ms)\n", b.first.c_str(),
					       b.second.second, b.second.first, sp.dirName ? sp.dirName : "", sp.fileName ? sp.fileName : "",
					       sp.lineNumber, dt);
					free(sp.fileName);
					free(sp.dirName);
					break;
				} else {
					printf("probe sass2source %s in crc %016llx: %d (%.3f ms)\n", b.first.c_str(),
					       (unsigned long long)c.first, (int)r, dt);
				}
			}
		}
	}
	if (act) {
		cuptiActivityFlushAll(1);
		printf("probe kernel activity records %ld (launched %d)\n", kernels_seen, 3 * iters);
	}
	printf("probe modules loaded %d, cubins %zu\n", modules_loaded, cubins.size());
	return 0;
}
