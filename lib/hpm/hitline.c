/* SPDX-License-Identifier: BSD-3-Clause */

/* The hit paths' line (hitline.h): its values before the owners set them. */

#include "hitline.h"

/* what every owner lookup reads until owner.c reserves the table: one empty slot */
static struct hpm_unit *no_units[1];

/* a new thread's binding has generation 0: none matches before a cache binds */
struct hpm_hitline hpm_hit = {.cache_gen = 1, .owner = no_units};
