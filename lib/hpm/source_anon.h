/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SOURCE_ANON_H
#define HPM_SOURCE_ANON_H

/* The anon source (source_anon.c). */

#include <stdbool.h>
#include <stddef.h>

#include "source_util.h"

/** The anon source's functions. */
extern const struct hpm_source_ops hpm_source_anon;

#endif /* HPM_SOURCE_ANON_H */
