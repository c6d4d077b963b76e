/*
 * metrics/rmcache.h — the range-metrics config image cache: CUPTI's config
 * image (the counter programming of a metric list on one chip) kept on disk
 * so that a later run with the same chip, list, CUPTI and counter
 * availability skips making it again.
 *
 * Owns: the cache folder ($XDG_CACHE_HOME/gputap, else $HOME/.cache/gputap),
 * the key (every input the image depends on, stored whole in the file and
 * compared byte by byte: a hash collision cannot hand out a wrong image),
 * and the file format:
 *   "GTRMCFG1" | u64 key length | u64 image length | u32 passes | u32 0 |
 *   key | image | u64 FNV-1a of everything before it   (native byte order)
 * written to a temporary name and renamed, so readers never see half a file.
 *
 * A cache is an optimisation only: a missing, unreadable, short, corrupt or
 * foreign file is a miss (the caller makes the image and stores it again);
 * an unwritable folder is a failed store.  Neither ever stops a run.
 */
#ifndef GT_METRICS_RMCACHE_H
#define GT_METRICS_RMCACHE_H

#include <stddef.h>
#include <stdint.h>

/* The cache folder into out; -1 when neither XDG_CACHE_HOME nor HOME is set. */
int gt_rm_cache_dir(char *out, size_t len);

/* The key of a config image (malloc'd into *key, its length returned; 0 on
 * no memory): chip, CUPTI version, the metric names in order, and the
 * counter availability image (avail may be NULL). */
size_t gt_rm_cache_key(const char *chip, uint32_t cupti_version, const char *const *names, int n,
		       const uint8_t *avail, size_t avail_len, uint8_t **key);

/* The file of a key: "<dir>/rmconfig-<16 hex digits>.bin". */
void gt_rm_cache_path(const char *dir, const uint8_t *key, size_t keylen, char *out, size_t len);

/* Look the key up.  1: found, *image (malloc'd), *size and *passes set.
 * 0: no file.  -1: a file that is not a valid entry for this key (why says
 * what is wrong with it, naming the file); nothing is returned. */
int gt_rm_cache_load(const char *dir, const uint8_t *key, size_t keylen, uint8_t **image, size_t *size,
		     int *passes, char *why, size_t whylen);

/* Store an entry (creating the folder); 0, or -1 with why set. */
int gt_rm_cache_store(const char *dir, const uint8_t *key, size_t keylen, const uint8_t *image, size_t size,
		      int passes, char *why, size_t whylen);

#endif
