/* SPDX-License-Identifier: BSD-3-Clause */

/* The heap's shared state: this process's pointer to it, and its topology. */

#include <pthread.h>
#include <stdint.h>

#include <numa.h>

#include <rte_common.h>

#include "state.h"

struct hpm_state *hpm_state;

/*
 * The NUMA node of every CPU, read from libnuma once per process: libnuma
 * fills its own CPU mask cache lazily and without a barrier
 * (numa_node_to_cpus), so two threads asking it at once race. -1: unknown.
 */
#define MAX_CPUS 1024
static int16_t node_of_cpu[MAX_CPUS];
static pthread_once_t topology_once = PTHREAD_ONCE_INIT;

static void
topology_load(void)
{
	int cpu, ncpus = numa_available() >= 0 ? numa_num_configured_cpus() : 0;

	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		node_of_cpu[cpu] = ncpus == 0 ? 0
			: cpu < ncpus         ? (int16_t)numa_node_of_cpu(cpu)
					      : -1;
}

void
hpm_state_topology_init(void)
{
	pthread_once(&topology_once, topology_load);
}

int
hpm_state_socket_of_cpu(int cpu)
{
	if (cpu < 0)
		return -1;
	if (hpm_state->cfg.fake_sockets != 0)
		return cpu % hpm_state->cfg.fake_sockets;
	return cpu < MAX_CPUS ? node_of_cpu[cpu] : -1;
}
