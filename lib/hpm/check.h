/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_CHECK_H
#define HPM_CHECK_H

/*
 * Graded assertions. HPM_ASSERT holds in debug builds (cheap checks);
 * HPM_ASSERT_EXPENSIVE only with -Dexpensive_checks=true (walks of whole
 * structures). Both compile to nothing otherwise.
 */

#include <rte_debug.h>

#ifndef HPM_DEBUG
#define HPM_DEBUG 0
#endif
#ifndef HPM_EXPENSIVE_CHECKS
#define HPM_EXPENSIVE_CHECKS 0
#endif

#define HPM_ASSERT(cond)                                                \
	do {                                                            \
		if (HPM_DEBUG && !(cond))                               \
			rte_panic("hpm assertion failed: %s\n", #cond); \
	} while (0)

#define HPM_ASSERT_EXPENSIVE(cond)                                      \
	do {                                                            \
		if (HPM_EXPENSIVE_CHECKS && !(cond))                    \
			rte_panic("hpm assertion failed: %s\n", #cond); \
	} while (0)

#endif /* HPM_CHECK_H */
