/* fsize_exec BYTES CMD ARGS...: run CMD with files limited to BYTES (RLIMIT_FSIZE),
 * SIGXFSZ ignored, so writes past the limit fail with EFBIG as on a full disk. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	struct rlimit rl = {(rlim_t)atol(argv[1]), (rlim_t)atol(argv[1])};
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 3;
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
