/* Finding the C library's dlsym.  See dlsym_find.h. */
#include "tap/dlsym_find.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Sym gt_sym;
typedef Elf64_Dyn gt_dyn;
typedef Elf64_Addr gt_addr;
#define GT_ST_TYPE(i) ELF64_ST_TYPE(i)
#else
typedef Elf32_Sym gt_sym;
typedef Elf32_Dyn gt_dyn;
typedef Elf32_Addr gt_addr;
#define GT_ST_TYPE(i) ELF32_ST_TYPE(i)
#endif

struct lookup {
	const char *lib, *name;
	void *found;
};

static uintptr_t dyn_ptr(uintptr_t base, gt_addr p)
{
	/* glibc relocates these entries in place, musl does not */
	return p < base ? base + p : p;
}

static uint32_t elf_hash(const char *s)
{
	uint32_t h = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h = (h << 4) + *p;
		uint32_t g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = h * 33 + *p;
	return h;
}

static int defined(const gt_sym *sym)
{
	int type = GT_ST_TYPE(sym->st_info);
	return sym->st_shndx != SHN_UNDEF && sym->st_value != 0 && (type == STT_FUNC || type == STT_GNU_IFUNC);
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lookup *l = arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, l->lib))
		return 0;
	uintptr_t base = info->dlpi_addr;
	const gt_dyn *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const gt_dyn *)(base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	const gt_sym *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *hash = NULL, *ghash = NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const gt_sym *)dyn_ptr(base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)dyn_ptr(base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (const uint32_t *)dyn_ptr(base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_GNU_HASH)
			ghash = (const uint32_t *)dyn_ptr(base, dyn->d_un.d_ptr);
	}
	if (!symtab || !strtab)
		return 0;
	if (ghash) {
		uint32_t nbuckets = ghash[0], symoffset = ghash[1], bloom_size = ghash[2];
		if (!nbuckets)
			return 0;
		const uint32_t *buckets = (const uint32_t *)((const gt_addr *)(ghash + 4) + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = gnu_hash(l->name);
		for (uint32_t i = buckets[h % nbuckets]; i >= symoffset && i; i++) {
			uint32_t ch = chain[i - symoffset];
			if ((ch | 1u) == (h | 1u) && strcmp(strtab + symtab[i].st_name, l->name) == 0 &&
			    defined(&symtab[i])) {
				l->found = (void *)(base + symtab[i].st_value);
				return 1;
			}
			if (ch & 1u)
				break;
		}
	} else if (hash) {
		uint32_t nbucket = hash[0];
		if (!nbucket)
			return 0;
		const uint32_t *bucket = hash + 2, *chain = bucket + nbucket;
		for (uint32_t i = bucket[elf_hash(l->name) % nbucket]; i; i = chain[i])
			if (strcmp(strtab + symtab[i].st_name, l->name) == 0 && defined(&symtab[i])) {
				l->found = (void *)(base + symtab[i].st_value);
				return 1;
			}
	}
	return 0;
}

void *gt_elf_lookup(const char *lib, const char *name)
{
	struct lookup l = {lib, name, NULL};
	dl_iterate_phdr(visit, &l);
	return l.found;
}

void *gt_find_real_dlsym(gt_vsym_fn vsym)
{
	/* x86_64 since glibc 2.34 and before it; aarch64; i386, arm, ppc, s390 */
	static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0", "GLIBC_2.4",
					       "GLIBC_2.3", "GLIBC_2.2"};
	for (size_t i = 0; vsym && i < sizeof(versions) / sizeof(versions[0]); i++) {
		void *p = vsym(RTLD_NEXT, "dlsym", versions[i]);
		if (p)
			return p;
	}
	static const char *const libs[] = {"libc.so", "libdl.so", "ld-musl", "libc.musl"};
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		void *p = gt_elf_lookup(libs[i], "dlsym");
		if (p)
			return p;
	}
	return NULL;
}
