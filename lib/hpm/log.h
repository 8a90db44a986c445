/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_LOG_H
#define HPM_LOG_H

#include <rte_log.h>

extern int hpm_logtype;

/** Log through rte_log under the "lib.hpm" type; the line ends itself. */
#define HPM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, hpm_logtype, "HPM: " fmt "\n", ##__VA_ARGS__)

#endif /* HPM_LOG_H */
