/*
 * Prints the on-disk layout that include/gputap/format.h defines, for the Python package's tests
 * (python/tests/test_format_layout.py), which hold the package's own tables of it against this:
 *   const NAME VALUE                         GT_TRACE_MAGIC, GT_TRACE_VERSION, ...
 *   type NUMBER NAME V1 SIZE THREAD           one line per record type (GT_REC_TYPES)
 *   struct NAME SIZE                          then its fields, in order:
 *   field NAME OFFSET SIZE KIND COUNT         KIND u/i unsigned/signed integer, f float, s chars;
 *                                             COUNT elements of SIZE/COUNT bytes each
 * Exits 1 when the fields listed here do not cover their struct byte for byte (a field added to
 * format.h and not here, or a hole the compiler filled), so the list cannot fall behind.
 * Build: cc -Iinclude tests/format/layout.c
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gputap/format.h"

static size_t covered; /* bytes of the current struct the fields printed so far cover */
static int bad;

#define KIND(x)                                                                                    \
	_Generic((x), char: 's', uint8_t: 'u', uint16_t: 'u', uint32_t: 'u', uint64_t: 'u', int8_t: 'i', \
		 int16_t: 'i', int32_t: 'i', int64_t: 'i', double: 'f', default: '?')

static void field(const char *s, const char *name, size_t off, size_t size, int kind, size_t count)
{
	if (off != covered || kind == '?') {
		fprintf(stderr, "struct %s: field %s at %zu, expected at %zu (a field not listed, or a hole)\n", s, name,
			off, covered);
		bad = 1;
	}
	covered = off + size;
	printf("field %s %zu %zu %c %zu\n", name, off, size, kind, count);
}

static void end_struct(const char *s, size_t size)
{
	if (covered != size) {
		fprintf(stderr, "struct %s: fields cover %zu of its %zu bytes\n", s, covered, size);
		bad = 1;
	}
}

#define BEGIN(S)                                                                                   \
	do {                                                                                       \
		covered = 0;                                                                       \
		printf("struct %s %zu\n", #S, sizeof(struct S));                                 \
	} while (0)
#define F(S, f) field(#S, #f, offsetof(struct S, f), sizeof(((struct S *)0)->f), KIND(((struct S *)0)->f), 1)
#define A(S, f)                                                                                    \
	field(#S, #f, offsetof(struct S, f), sizeof(((struct S *)0)->f), KIND(((struct S *)0)->f[0]),     \
	      sizeof(((struct S *)0)->f) / sizeof(((struct S *)0)->f[0]))
#define END(S) end_struct(#S, sizeof(struct S))
#define HDR(S) F(S, h.type), F(S, h.size), F(S, h.tid)

int main(void)
{
	printf("const GT_TRACE_MAGIC %s\n", GT_TRACE_MAGIC);
	printf("const GT_TRACE_VERSION %u\n", GT_TRACE_VERSION);
	printf("const GT_BLOCK_MAGIC %u\n", GT_BLOCK_MAGIC);
	printf("const GT_BLOCK_MAX_RAW %u\n", GT_BLOCK_MAX_RAW);
	printf("const GT_REC_ALIGN %u\n", GT_REC_ALIGN);
#define TYPE(T, num, name, v1, thread)                                                             \
	printf("type %d %s %d %zu %d\n", num, #name, v1, sizeof(struct gt_rec_##name), thread);
	GT_REC_TYPES(TYPE)
#undef TYPE

	BEGIN(gt_file_header);
	A(gt_file_header, magic), F(gt_file_header, version), F(gt_file_header, header_size);
	F(gt_file_header, flags), F(gt_file_header, pid), F(gt_file_header, start_ns), F(gt_file_header, end_ns);
	F(gt_file_header, records), F(gt_file_header, lost_records), F(gt_file_header, cupti_dropped);
	A(gt_file_header, proc), A(gt_file_header, host);
	END(gt_file_header);

	BEGIN(gt_block_hdr);
	F(gt_block_hdr, magic), F(gt_block_hdr, codec), F(gt_block_hdr, filter), F(gt_block_hdr, flags);
	F(gt_block_hdr, raw_size), F(gt_block_hdr, data_size), F(gt_block_hdr, nrec), F(gt_block_hdr, crc32);
	END(gt_block_hdr);

	BEGIN(gt_rec_hdr);
	F(gt_rec_hdr, type), F(gt_rec_hdr, size), F(gt_rec_hdr, tid);
	END(gt_rec_hdr);

	BEGIN(gt_rec_string);
	HDR(gt_rec_string), F(gt_rec_string, id), F(gt_rec_string, len);
	END(gt_rec_string);

	BEGIN(gt_rec_api);
	HDR(gt_rec_api), F(gt_rec_api, name_id), F(gt_rec_api, domain), F(gt_rec_api, copy_kind);
	F(gt_rec_api, flags), F(gt_rec_api, result), F(gt_rec_api, pad), F(gt_rec_api, start_ns);
	F(gt_rec_api, end_ns), F(gt_rec_api, bytes), F(gt_rec_api, corr_id), F(gt_rec_api, ptr);
	END(gt_rec_api);

	BEGIN(gt_rec_kernel);
	HDR(gt_rec_kernel), F(gt_rec_kernel, name_id), F(gt_rec_kernel, device), F(gt_rec_kernel, context);
	F(gt_rec_kernel, stream), F(gt_rec_kernel, start_ns), F(gt_rec_kernel, end_ns), F(gt_rec_kernel, corr_id);
	A(gt_rec_kernel, grid), A(gt_rec_kernel, block), F(gt_rec_kernel, registers);
	F(gt_rec_kernel, static_smem), F(gt_rec_kernel, dynamic_smem), F(gt_rec_kernel, graph_id);
	F(gt_rec_kernel, graph_node_id);
	END(gt_rec_kernel);

	BEGIN(gt_rec_memcpy);
	HDR(gt_rec_memcpy), F(gt_rec_memcpy, copy_kind), F(gt_rec_memcpy, src_kind), F(gt_rec_memcpy, dst_kind);
	F(gt_rec_memcpy, flags), F(gt_rec_memcpy, device), F(gt_rec_memcpy, context), F(gt_rec_memcpy, stream);
	F(gt_rec_memcpy, start_ns), F(gt_rec_memcpy, end_ns), F(gt_rec_memcpy, bytes), F(gt_rec_memcpy, corr_id);
	F(gt_rec_memcpy, graph_id), F(gt_rec_memcpy, dst_device);
	END(gt_rec_memcpy);

	BEGIN(gt_rec_memset);
	HDR(gt_rec_memset), F(gt_rec_memset, device), F(gt_rec_memset, context), F(gt_rec_memset, stream);
	F(gt_rec_memset, value), F(gt_rec_memset, start_ns), F(gt_rec_memset, end_ns), F(gt_rec_memset, bytes);
	F(gt_rec_memset, corr_id), F(gt_rec_memset, graph_id), F(gt_rec_memset, pad);
	END(gt_rec_memset);

	BEGIN(gt_rec_memory);
	HDR(gt_rec_memory), F(gt_rec_memory, op), F(gt_rec_memory, mem_kind), F(gt_rec_memory, pad);
	F(gt_rec_memory, device), F(gt_rec_memory, ts_ns), F(gt_rec_memory, address), F(gt_rec_memory, bytes);
	F(gt_rec_memory, corr_id), F(gt_rec_memory, stream), F(gt_rec_memory, pad2);
	END(gt_rec_memory);

	BEGIN(gt_rec_range);
	HDR(gt_rec_range), F(gt_rec_range, name_id), F(gt_rec_range, domain_id), F(gt_rec_range, kind);
	F(gt_rec_range, level), F(gt_rec_range, pad), F(gt_rec_range, end_tid), F(gt_rec_range, start_ns);
	F(gt_rec_range, end_ns), F(gt_rec_range, range_id), F(gt_rec_range, parent_id);
	END(gt_rec_range);

	BEGIN(gt_rec_counter);
	HDR(gt_rec_counter), F(gt_rec_counter, name_id), F(gt_rec_counter, device), F(gt_rec_counter, ts_ns);
	F(gt_rec_counter, value);
	END(gt_rec_counter);

	BEGIN(gt_rec_dropped);
	HDR(gt_rec_dropped), F(gt_rec_dropped, source), F(gt_rec_dropped, pad), F(gt_rec_dropped, count);
	END(gt_rec_dropped);

	BEGIN(gt_rec_device);
	HDR(gt_rec_device), F(gt_rec_device, device), F(gt_rec_device, name_id);
	F(gt_rec_device, global_memory_bytes), F(gt_rec_device, cc_major), F(gt_rec_device, cc_minor);
	F(gt_rec_device, sm_count), F(gt_rec_device, pad);
	END(gt_rec_device);

	BEGIN(gt_rec_thread);
	HDR(gt_rec_thread), F(gt_rec_thread, name_id), F(gt_rec_thread, pad);
	END(gt_rec_thread);

	BEGIN(gt_rec_nccl_coll);
	HDR(gt_rec_nccl_coll), F(gt_rec_nccl_coll, comm_hash), F(gt_rec_nccl_coll, seq);
	F(gt_rec_nccl_coll, start_ns), F(gt_rec_nccl_coll, end_ns), F(gt_rec_nccl_coll, count);
	F(gt_rec_nccl_coll, func_id), F(gt_rec_nccl_coll, algo_id), F(gt_rec_nccl_coll, proto_id);
	F(gt_rec_nccl_coll, dtype_id), F(gt_rec_nccl_coll, rank), F(gt_rec_nccl_coll, nranks);
	F(gt_rec_nccl_coll, root), F(gt_rec_nccl_coll, nchannels), F(gt_rec_nccl_coll, nwarps);
	F(gt_rec_nccl_coll, plugin_version), F(gt_rec_nccl_coll, pad);
	END(gt_rec_nccl_coll);

	BEGIN(gt_rec_hold);
	HDR(gt_rec_hold), F(gt_rec_hold, kind), A(gt_rec_hold, pad), F(gt_rec_hold, result);
	F(gt_rec_hold, start_ns), F(gt_rec_hold, end_ns), F(gt_rec_hold, corr_id), F(gt_rec_hold, batch);
	F(gt_rec_hold, count), F(gt_rec_hold, reason_id), F(gt_rec_hold, api_id), F(gt_rec_hold, pad2);
	END(gt_rec_hold);

	BEGIN(gt_rec_note);
	HDR(gt_rec_note), F(gt_rec_note, what), F(gt_rec_note, detail), F(gt_rec_note, ts_ns);
	F(gt_rec_note, result), F(gt_rec_note, pad);
	END(gt_rec_note);

	if (fflush(stdout) != 0)
		return 1;
	return bad;
}
