/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Telemetry: the process reads its own telemetry socket, as
 * dpdk-telemetry.py would, and the JSON of /hpm/stats, /hpm/heap_info,0 and
 * /hpm/caches agrees with the API's statistics. A client asks all three
 * over and over while the application runs hpm_init() and hpm_fini() in a
 * loop: the handlers read a heap hpm_fini() freed (SIGSEGV in the telemetry
 * thread); they now hold it while they read it.
 */

#include <inttypes.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rte_eal.h>
#include <rte_lcore.h>

#include "hpm_malloc.h"
#include "test_common.h"

static int
connect_telemetry(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char buf[4096];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/dpdk_telemetry.v2",
		rte_eal_get_runtime_dir());
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		return -1;
	/* the greeting */
	if (recv(fd, buf, sizeof(buf), 0) <= 0)
		return -1;
	return fd;
}

static int
query(int fd, const char *cmd, char *out, size_t len)
{
	ssize_t n;

	if (send(fd, cmd, strlen(cmd), 0) < 0)
		return -1;
	n = recv(fd, out, len - 1, 0);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* The number after "key": at or after from, or -1. */
static long long
number(const char *json, const char *from, const char *key)
{
	char pattern[64];
	const char *at;

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	at = strstr(from != NULL ? from : json, pattern);
	return at != NULL ? strtoll(at + strlen(pattern), NULL, 10) : -1;
}

/* Every "key":{ in json is there once (the classes' keys; their fields repeat). */
static bool
keys_unique(const char *json)
{
	const char *k, *end;
	char key[80];

	for (k = strchr(json, '"'); k != NULL; k = strchr(end + 1, '"')) {
		end = strchr(k + 1, '"');
		if (end == NULL)
			return true;
		if (end[1] == ':' && end[2] == '{' && (size_t)(end - k + 3) < sizeof(key)) {
			memcpy(key, k, end - k + 3);
			key[end - k + 3] = '\0';
			if (strstr(strstr(json, key) + 1, key) != NULL) {
				printf("key %s twice\n", key);
				return false;
			}
		}
	}
	return true;
}

static const char *const roles[] = {"free", "heap_span", "gran4k", "gran64k", "large", "slab"};

/* The dictionary "key": by role of /hpm/heap_info (*at), and its sum; -1 if absent. */
static long long
sum_by_role(const char *json, const char *key, const char **at)
{
	char pattern[64];
	long long sum = 0, v;
	unsigned int i;

	snprintf(pattern, sizeof(pattern), "\"%s\":{", key);
	*at = strstr(json, pattern);
	CHECK(*at != NULL, "%s by role in /hpm/heap_info", key);
	if (*at == NULL)
		return -1;
	for (i = 0; i < RTE_DIM(roles); i++) {
		v = number(json, *at, roles[i]);
		CHECK(v >= 0, "%s of %s: %lld", key, roles[i], v);
		sum += v;
	}
	return sum;
}

#define CYCLES 1000

static volatile int client_stop;
static unsigned long client_replies;

static void *
client(void *arg)
{
	static const char *const cmds[] = {"/hpm/stats", "/hpm/heap_info,0", "/hpm/caches",
		"/hpm/caches,0"};
	static char reply[64 * 1024];
	int fd = connect_telemetry();
	unsigned int i = 0;

	RTE_SET_USED(arg);
	if (fd < 0)
		return NULL;
	while (!client_stop && query(fd, cmds[i++ % RTE_DIM(cmds)], reply, sizeof(reply)) == 0)
		client_replies++;
	close(fd);
	return NULL;
}

static void
check_init_fini_under_queries(void)
{
	struct hpm_config cfg;
	unsigned int i;
	pthread_t t;

	CHECK(pthread_create(&t, NULL, client, NULL) == 0, "client thread");
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.initial_size = 8u << 20;
	for (i = 0; i < CYCLES; i++) {
		if (hpm_init(&cfg) != 0)
			break;
		hpm_free(hpm_malloc("cycle", 100000, 0));
		hpm_fini();
	}
	client_stop = 1;
	pthread_join(t, NULL);
	CHECK(i == CYCLES, "%u of %u init/fini cycles", i, CYCLES);
	CHECK(client_replies > 0, "no reply while the heap came and went");
	printf("%u init/fini cycles under %lu telemetry replies\n", i, client_replies);
}

int
main(void)
{
	struct rte_malloc_socket_stats st;
	struct hpm_heap_stats hs;
	struct hpm_cache_stats cs;
	static char json[64 * 1024];
	const char *by_role;
	long long sum;
	void *p[100];
	int fd, i;

	if (test_eal_init("telemetry", "-l", "0", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	CHECK(hpm_init(NULL) == 0, "hpm_init");
	for (i = 0; i < 100; i++)
		p[i] = hpm_malloc("tel", 64 + i * 100, i % 3 == 0 ? 4096 : 0);
	for (i = 0; i < 50; i++)
		hpm_free(p[i]);
	/* 8 KiB runs at 4K and at 8K alignment, each into its class */
	hpm_free(hpm_malloc("tel", 8192, 4096));
	hpm_free(hpm_malloc("tel", 8192, 8192));
	fd = connect_telemetry();
	if (fd < 0) {
		printf("no telemetry socket: skipped\n");
		test_end("telemetry");
		return TEST_SKIP;
	}
	CHECK(query(fd, "/hpm/stats", json, sizeof(json)) == 0, "/hpm/stats");
	printf("/hpm/stats: %.300s\n", json);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	CHECK(strstr(json, "\"source\":\"eal\"") != NULL, "source in /hpm/stats");
	CHECK(number(json, strstr(json, "socket_0"), "alloc_count") == st.alloc_count &&
			st.alloc_count >= 50,
		"alloc_count: telemetry %lld, API %u",
		number(json, strstr(json, "socket_0"), "alloc_count"), st.alloc_count);
	CHECK(number(json, strstr(json, "socket_0"), "heap_totalsz_bytes") ==
			(long long)st.heap_totalsz_bytes,
		"heap_totalsz_bytes: telemetry %lld, API %zu",
		number(json, strstr(json, "socket_0"), "heap_totalsz_bytes"),
		st.heap_totalsz_bytes);

	CHECK(query(fd, "/hpm/heap_info,0", json, sizeof(json)) == 0, "/hpm/heap_info,0");
	printf("/hpm/heap_info,0: %.300s\n", json);
	CHECK(number(json, NULL, "chunks") >= 1, "chunks in /hpm/heap_info");
	CHECK(number(json, NULL, "heap_allocsz_bytes") == (long long)st.heap_allocsz_bytes,
		"heap_allocsz_bytes: telemetry %lld, API %zu",
		number(json, NULL, "heap_allocsz_bytes"), st.heap_allocsz_bytes);
	CHECK(number(json, NULL, "slab") >= 1 && number(json, NULL, "gran4k") >= 1,
		"units by role");
	/* free bytes by role: they add up to hpm_heap_get_stats()' free_bytes */
	sum = sum_by_role(json, "free_bytes", &by_role);
	if (by_role != NULL) {
		CHECK(hpm_heap_get_stats(0, &hs) == 0, "heap stats");
		CHECK(sum == (long long)hs.free_bytes,
			"free_bytes by role add up to %lld, hpm_heap_get_stats() says %zu", sum,
			hs.free_bytes);
		/* the 4K-aligned blocks freed left granules free in their pages */
		CHECK(number(json, by_role, "gran4k") > 0, "free in gran4k: %lld",
			number(json, by_role, "gran4k"));
	}
	/* the units in use are the units of every role but free, and at most their peak */
	sum = sum_by_role(json, "units", &by_role);
	if (by_role != NULL)
		CHECK((sum - number(json, by_role, "free")) * 2 * 1024 * 1024 ==
					number(json, NULL, "in_use_bytes") &&
				number(json, NULL, "in_use_peak_bytes") >=
					number(json, NULL, "in_use_bytes"),
			"units by role: %lld, %lld free; in_use_bytes %lld, in_use_peak_bytes %lld",
			sum, number(json, by_role, "free"), number(json, NULL, "in_use_bytes"),
			number(json, NULL, "in_use_peak_bytes"));
	/* every chunk came for units of some role: the first for p[0]'s (64 B at 4 KiB) */
	sum = sum_by_role(json, "grown_for", &by_role);
	if (by_role != NULL) {
		CHECK(sum == number(json, NULL, "chunks_reserved") && sum >= 1,
			"grown_for by role add up to %lld, chunks_reserved %lld", sum,
			number(json, NULL, "chunks_reserved"));
		CHECK(number(json, by_role, "gran4k") >= 1 && number(json, by_role, "free") == 0,
			"grown for gran4k %lld, for free units %lld",
			number(json, by_role, "gran4k"), number(json, by_role, "free"));
	}
	CHECK(number(json, NULL, "chunks_reserved") - number(json, NULL, "chunks_released") ==
			number(json, NULL, "chunks"),
		"chunks reserved %lld - released %lld != chunks %lld",
		number(json, NULL, "chunks_reserved"), number(json, NULL, "chunks_released"),
		number(json, NULL, "chunks"));
	CHECK(query(fd, "/hpm/heap_info,7", json, sizeof(json)) == 0 &&
			strstr(json, "null") != NULL,
		"/hpm/heap_info of an absent socket: %s", json);

	CHECK(query(fd, "/hpm/caches", json, sizeof(json)) == 0, "/hpm/caches");
	printf("/hpm/caches: %.300s\n", json);
	CHECK(hpm_cache_stats(rte_lcore_id(), -1, &cs) == 0, "cache stats");
	CHECK(strstr(json, "lcore_0") != NULL &&
			number(json, strstr(json, "lcore_0"), "hits") == (long long)cs.hits,
		"hits of lcore 0: telemetry %lld, API %" PRIu64,
		number(json, strstr(json, "lcore_0"), "hits"), cs.hits);
	if (strstr(json, "lcore_0") != NULL) {
		const char *l0 = strstr(json, "lcore_0");

		CHECK(number(json, l0, "misses") == (long long)cs.misses &&
				number(json, l0, "flushes") == (long long)cs.flushes &&
				number(json, l0, "blocks") == (long long)cs.blocks &&
				number(json, l0, "bytes") == (long long)cs.bytes &&
				number(json, l0, "limit") == (long long)cs.limit,
			"lcore 0: telemetry misses %lld flushes %lld blocks %lld bytes %lld limit "
			"%lld, API %" PRIu64 " %" PRIu64 " %" PRIu64 " %zu %" PRIu64,
			number(json, l0, "misses"), number(json, l0, "flushes"),
			number(json, l0, "blocks"), number(json, l0, "bytes"),
			number(json, l0, "limit"), cs.misses, cs.flushes, cs.blocks, cs.bytes,
			cs.limit);
	}
	CHECK(query(fd, "/hpm/caches,0", json, sizeof(json)) == 0 &&
			strstr(json, "\"class_4096\"") != NULL &&
			strstr(json, "\"class_192\"") != NULL &&
			strstr(json, "\"class_48\"") == NULL,
		"/hpm/caches,0 per class (4 KiB and 192 B used, 48 B not): %.200s", json);
	/* runs of 8 KiB at two alignments: two classes, two keys (each key was class_8192) */
	CHECK(strstr(json, "\"run_8192_align_4096\"") != NULL &&
			strstr(json, "\"run_8192_align_8192\"") != NULL,
		"/hpm/caches,0: 8 KiB runs at 4K and 8K alignment: %.300s", json);
	CHECK(keys_unique(json), "/hpm/caches,0 repeats a key");
	printf("/hpm/caches,0: %zu bytes\n", strlen(json));
	/* parameters: a number and nothing more, in range */
	CHECK(query(fd, "/hpm/caches,0junk", json, sizeof(json)) == 0 &&
			strstr(json, "null") != NULL,
		"/hpm/caches,0junk: %.200s", json);
	CHECK(query(fd, "/hpm/caches,4294967296", json, sizeof(json)) == 0 &&
			strstr(json, "null") != NULL,
		"/hpm/caches,4294967296 (lcore 0 once cut to 32 bits): %.200s", json);
	CHECK(query(fd, "/hpm/heap_info,0abc", json, sizeof(json)) == 0 &&
			strstr(json, "null") != NULL,
		"/hpm/heap_info,0abc: %.200s", json);
	close(fd);
	for (i = 50; i < 100; i++)
		hpm_free(p[i]);
	hpm_malloc_dump_heaps(stdout);
	hpm_fini();
	check_init_fini_under_queries();
	return test_end("telemetry");
}
