/* SPDX-License-Identifier: BSD-3-Clause */

/* The heap's shared state: this process's pointer to it, and its topology. */

#include <numa.h>

#include "state.h"

struct hpm_state *hpm_state;

int
hpm_state_socket_of_cpu(int cpu)
{
	if (cpu < 0)
		return -1;
	if (hpm_state->cfg.fake_sockets != 0)
		return cpu % hpm_state->cfg.fake_sockets;
	return numa_available() >= 0 ? numa_node_of_cpu(cpu) : 0;
}
