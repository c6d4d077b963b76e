/*
 * core/version.h — gputap's version, one definition for every part that
 * states it (gputap --version, run.json's "gputap_version", gputap info).
 */
#ifndef GT_VERSION_H
#define GT_VERSION_H

#define GT_VERSION "0.1.0"

#endif
