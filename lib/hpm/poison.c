/* SPDX-License-Identifier: BSD-3-Clause */

/* Memory checkers and a heap shared by processes (see poison.h). */

#include "poison.h"

#ifdef HPM_CHECKER

bool hpm_poison_enabled;

#endif
