/*
 * core/demangle.h — kernel names as people read them.
 *
 * Owns: turning an Itanium-mangled C++ name (`_Z…`, as CUDA kernels are
 * named) into the text nsys prints (`void gemm<float>(float *, int)`).
 * The demangler is libstdc++'s own `__cxa_demangle`, looked up at run time
 * (the CLI is C and links no C++ runtime; CUDA programs have it loaded).
 * Binary traces keep mangled names; every human-facing output demangles.
 *
 * Invariants: never allocates for a name that is not mangled; a name that
 * fails to demangle (not C++, truncated, no libstdc++) comes back as given.
 * Thread-safe; not async-signal-safe (it allocates).
 */
#ifndef GT_CORE_DEMANGLE_H
#define GT_CORE_DEMANGLE_H

#include <stddef.h>

/* 1 when `s` looks like an Itanium-mangled name (starts with "_Z"). */
int gt_is_mangled(const char *s);

/* The demangled text of `s` in a malloc'd string the caller frees, or NULL
 * when `s` is not mangled or cannot be demangled (then print `s` itself). */
char *gt_demangle(const char *s);

/* Demangle into buf (NUL-terminated, cut at cap-1 bytes); returns buf, or `s`
 * itself when it is not mangled or cannot be demangled. */
const char *gt_demangle_to(const char *s, char *buf, size_t cap);

/* 1 when a demangler is available in this process (for tests and `info`). */
int gt_demangle_available(void);

#endif
