/*
 * tap/dlsym_find.h — finding the C library's own dlsym, which the tap
 * interposes (a program's dlsym calls land in the tap first).
 *
 * Owns: the order of attempts — dlvsym(RTLD_NEXT, "dlsym", V) for the
 * versions glibc gave dlsym on each architecture, then a look-up of "dlsym"
 * in the dynamic symbol tables of the loaded C library (libc, libdl or musl's
 * loader), for C libraries whose dlvsym knows none of those versions.
 * Pure: the dlvsym to use is a parameter, so tests can make it fail.
 */
#ifndef GT_TAP_DLSYM_FIND_H
#define GT_TAP_DLSYM_FIND_H

typedef void *(*gt_vsym_fn)(void *handle, const char *name, const char *version);

/* The C library's dlsym, or NULL if no attempt found it. */
void *gt_find_real_dlsym(gt_vsym_fn vsym);
/* The address of the defined symbol `name` in the loaded object whose file
 * name contains `lib` (e.g. "libc.so"), from its dynamic symbol table;
 * NULL if not found. */
void *gt_elf_lookup(const char *lib, const char *name);

#endif
