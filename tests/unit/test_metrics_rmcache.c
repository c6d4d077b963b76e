/* The range-metrics config image cache: key, folder, round trip, and every bad file ignored. */
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics/rmcache.h"

static const char *const L2[] = {"gpu__time_duration.sum", "smsp__inst_executed.sum"};
static const char *const L2R[] = {"smsp__inst_executed.sum", "gpu__time_duration.sum"};
static const uint8_t AV[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint8_t AV2[] = {1, 2, 3, 4, 5, 6, 7, 9};
static const uint8_t IMG[] = "config image bytes \x00\x01\x02 of some length";

static size_t key_of(const char *chip, uint32_t ver, const char *const *l, const uint8_t *av, uint8_t **k)
{
	return gt_rm_cache_key(chip, ver, l, 2, av, av ? sizeof(AV) : 0, k);
}

static int same_key(size_t la, const uint8_t *a, size_t lb, const uint8_t *b)
{
	return la == lb && memcmp(a, b, la) == 0;
}

TEST(rmcache_key_changes_with_every_input)
{
	uint8_t *k0, *k1;
	size_t l0 = key_of("GH100", 130001, L2, AV, &k0);
	ASSERT(l0 > sizeof(AV));
	size_t l1 = key_of("GH100", 130001, L2, AV, &k1);
	ASSERT(same_key(l0, k0, l1, k1)); /* deterministic */
	free(k1);
	const struct {
		const char *chip;
		uint32_t ver;
		const char *const *list;
		const uint8_t *av;
	} other[] = {{"GB100", 130001, L2, AV}, {"GH100", 120602, L2, AV}, {"GH100", 130001, L2R, AV},
		     {"GH100", 130001, L2, AV2}, {"GH100", 130001, L2, NULL}};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		size_t l = key_of(other[i].chip, other[i].ver, other[i].list, other[i].av, &k1);
		ASSERT(l > 0);
		ASSERT(!same_key(l0, k0, l, k1));
		char pa[256], pb[256];
		gt_rm_cache_path("/c", k0, l0, pa, sizeof pa);
		gt_rm_cache_path("/c", k1, l, pb, sizeof pb);
		ASSERT(strcmp(pa, pb) != 0);
		free(k1);
	}
	char p[256];
	gt_rm_cache_path("/c", k0, l0, p, sizeof p);
	ASSERT_EQ_INT(strncmp(p, "/c/rmconfig-", 12), 0);
	ASSERT_EQ_INT(strlen(p), strlen("/c/rmconfig-0123456789abcdef.bin"));
	free(k0);
}

TEST(rmcache_dir_follows_xdg_then_home)
{
	char d[512];
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	setenv("HOME", "/home/u", 1);
	ASSERT_EQ_INT(gt_rm_cache_dir(d, sizeof d), 0);
	ASSERT_EQ_STR(d, "/x/cache/gputap");
	setenv("XDG_CACHE_HOME", "relative/ignored", 1); /* the XDG spec: relative paths are invalid */
	ASSERT_EQ_INT(gt_rm_cache_dir(d, sizeof d), 0);
	ASSERT_EQ_STR(d, "/home/u/.cache/gputap");
	unsetenv("XDG_CACHE_HOME");
	ASSERT_EQ_INT(gt_rm_cache_dir(d, sizeof d), 0);
	ASSERT_EQ_STR(d, "/home/u/.cache/gputap");
	unsetenv("HOME");
	ASSERT_EQ_INT(gt_rm_cache_dir(d, sizeof d), -1);
}

TEST(rmcache_store_then_load_round_trip_creating_folders)
{
	char dir[512], why[512];
	snprintf(dir, sizeof dir, "%s/a/b/gputap", gt_test_tmpdir());
	uint8_t *k;
	size_t kl = key_of("GH100", 130001, L2, AV, &k);
	uint8_t *img = (uint8_t *)"x";
	size_t sz = 0;
	int passes = 0;
	ASSERT_EQ_INT(gt_rm_cache_load(dir, k, kl, &img, &sz, &passes, why, sizeof why), 0); /* nothing yet */
	ASSERT(img == NULL);
	ASSERT_EQ_INT(gt_rm_cache_store(dir, k, kl, IMG, sizeof IMG, 3, why, sizeof why), 0);
	ASSERT_EQ_INT(gt_rm_cache_load(dir, k, kl, &img, &sz, &passes, why, sizeof why), 1);
	ASSERT_EQ_INT(sz, sizeof IMG);
	ASSERT_EQ_INT(passes, 3);
	ASSERT(memcmp(img, IMG, sizeof IMG) == 0);
	free(img);
	/* another key: a miss, not the first entry */
	uint8_t *k2;
	size_t kl2 = key_of("GH100", 130001, L2, AV2, &k2);
	ASSERT_EQ_INT(gt_rm_cache_load(dir, k2, kl2, &img, &sz, &passes, why, sizeof why), 0);
	/* no temporary file left behind */
	char path[1024], cmd[1200];
	gt_rm_cache_path(dir, k, kl, path, sizeof path);
	snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
	ASSERT_EQ_INT(system(cmd), 0);
	free(k);
	free(k2);
}

/* Rewrite the entry of key k in dir through fn, then load it: ignored (-1), why naming the file and the fault. */
static void spoil(const char *name, void (*fn)(uint8_t *buf, size_t *len), const char *fault)
{
	char dir[512], why[512], path[1024];
	snprintf(dir, sizeof dir, "%s/%s", gt_test_tmpdir(), name);
	uint8_t *k;
	size_t kl = key_of("GH100", 130001, L2, AV, &k);
	if (gt_rm_cache_store(dir, k, kl, IMG, sizeof IMG, 1, why, sizeof why) != 0)
		GT_FAIL_AT("store: %s", why);
	gt_rm_cache_path(dir, k, kl, path, sizeof path);
	size_t len = 0;
	char *buf = gt_test_read_file(path, &len);
	if (!buf)
		GT_FAIL_AT("cannot read %s", path);
	uint8_t *b = realloc(buf, len + 64);
	if (!b)
		GT_FAIL_AT("out of memory");
	fn(b, &len);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, len, f) != len || fclose(f) != 0)
		GT_FAIL_AT("cannot rewrite %s", path);
	free(b);
	uint8_t *img = NULL;
	size_t sz = 0;
	int passes = 0;
	why[0] = '\0';
	int rc = gt_rm_cache_load(dir, k, kl, &img, &sz, &passes, why, sizeof why);
	free(k);
	if (rc != -1 || img != NULL)
		GT_FAIL_AT("%s: load gave %d, expected -1 (ignored)", name, rc);
	if (!strstr(why, path) || !strstr(why, fault))
		GT_FAIL_AT("%s: why '%s' should name %s and '%s'", name, why, path, fault);
}

static void flip_image_byte(uint8_t *b, size_t *len)
{
	b[*len - 12] ^= 0x40;
}
static void cut_tail(uint8_t *b, size_t *len)
{
	(void)b;
	*len -= 5;
}
static void cut_to_4(uint8_t *b, size_t *len)
{
	(void)b;
	*len = 4;
}
static void empty(uint8_t *b, size_t *len)
{
	(void)b;
	*len = 0;
}
static void bad_magic(uint8_t *b, size_t *len)
{
	(void)len;
	memcpy(b, "PK\x03\x04....", 8);
}
static void huge_length(uint8_t *b, size_t *len)
{
	(void)len;
	memset(b + 16, 0xff, 8); /* image length 2^64-1 */
}
static void zero_passes(uint8_t *b, size_t *len)
{
	(void)len;
	memset(b + 24, 0, 4);
}
static void trailing_bytes(uint8_t *b, size_t *len)
{
	memcpy(b + *len, "junk", 4);
	*len += 4;
}

TEST(rmcache_bad_files_are_ignored_with_a_reason)
{
	spoil("flip", flip_image_byte, "checksum");
	spoil("cut", cut_tail, "length");
	spoil("four", cut_to_4, "header");
	spoil("empty", empty, "header");
	spoil("magic", bad_magic, "not a gputap");
	spoil("huge", huge_length, "corrupt");
	spoil("passes", zero_passes, "corrupt");
	spoil("trailing", trailing_bytes, "length");
}

TEST(rmcache_entry_of_another_key_under_this_name_is_ignored)
{
	char dir[512], why[512], pa[1024], pb[1024];
	snprintf(dir, sizeof dir, "%s/c", gt_test_tmpdir());
	uint8_t *ka, *kb;
	size_t la = key_of("GH100", 130001, L2, AV, &ka), lb = key_of("GH100", 130001, L2, AV2, &kb);
	ASSERT_EQ_INT(gt_rm_cache_store(dir, kb, lb, IMG, sizeof IMG, 2, why, sizeof why), 0);
	gt_rm_cache_path(dir, ka, la, pa, sizeof pa);
	gt_rm_cache_path(dir, kb, lb, pb, sizeof pb);
	ASSERT_EQ_INT(rename(pb, pa), 0); /* as a hash collision would */
	uint8_t *img = NULL;
	size_t sz = 0;
	int passes = 0;
	ASSERT_EQ_INT(gt_rm_cache_load(dir, ka, la, &img, &sz, &passes, why, sizeof why), -1);
	ASSERT(img == NULL);
	ASSERT_CONTAINS(why, "another chip");
	/* storing again replaces it */
	ASSERT_EQ_INT(gt_rm_cache_store(dir, ka, la, IMG, sizeof IMG, 2, why, sizeof why), 0);
	ASSERT_EQ_INT(gt_rm_cache_load(dir, ka, la, &img, &sz, &passes, why, sizeof why), 1);
	free(img);
	free(ka);
	free(kb);
}

TEST(rmcache_unwritable_folder_fails_the_store_only)
{
	char file[512], dir[600], why[512];
	snprintf(file, sizeof file, "%s/plainfile", gt_test_tmpdir());
	gt_test_write_file(gt_test_tmpdir(), "plainfile", "x", 1);
	snprintf(dir, sizeof dir, "%s/gputap", file); /* a folder under a file cannot exist */
	uint8_t *k;
	size_t kl = key_of("GH100", 130001, L2, AV, &k);
	ASSERT_EQ_INT(gt_rm_cache_store(dir, k, kl, IMG, sizeof IMG, 1, why, sizeof why), -1);
	ASSERT_CONTAINS(why, "cannot create");
	uint8_t *img = NULL;
	size_t sz = 0;
	int passes = 0;
	ASSERT(gt_rm_cache_load(dir, k, kl, &img, &sz, &passes, why, sizeof why) <= 0);
	ASSERT(img == NULL);
	ASSERT_EQ_INT(gt_rm_cache_store(dir, k, kl, IMG, 0, 1, why, sizeof why), -1); /* nothing to store */
	free(k);
}
