/* SPDX-License-Identifier: BSD-3-Clause */

/* hpmalloc's log type, lib.hpm: below every module that logs. */

#include "log.h"

RTE_LOG_REGISTER(hpm_logtype, lib.hpm, NOTICE);
