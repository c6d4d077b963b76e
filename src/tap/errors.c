/*
 * The error state of the in-process API (tap/api.h): one sentence, set from
 * any thread, read by gputap_last_error.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "tap/api.h"

static pthread_mutex_t err_mu = PTHREAD_MUTEX_INITIALIZER;
static char err_text[2][512]; /* written into the other one, then published: a reader never sees it torn */
static _Atomic int err_cur;

void gt_api_set_error(const char *fmt, ...)
{
	pthread_mutex_lock(&err_mu);
	int next = !atomic_load(&err_cur);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_text[next], sizeof(err_text[next]), fmt, ap);
	va_end(ap);
	atomic_store(&err_cur, next);
	pthread_mutex_unlock(&err_mu);
}

const char *gt_api_error(void)
{
	return err_text[atomic_load(&err_cur)];
}
