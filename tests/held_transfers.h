/* SPDX-License-Identifier: LGPL-2.1-or-later */
// Holds the transfer thread (test_opencl.cc, test_disk.cc): once it starts serving the
// request of `blocker` (its DATA_REQUEST moment), it waits there until released, so that
// the requests made meanwhile stay queued; the handles of the requests served after it, in
// order. Subscribe observe to ASTRO_MOMENT_DATA_REQUEST with the struct as argument.
#ifndef ASTRO_TESTS_HELD_TRANSFERS_H
#define ASTRO_TESTS_HELD_TRANSFERS_H

#include <starpu.h>
#include <astrolabe/observe.h>

#include <atomic>
#include <mutex>
#include <vector>

struct HeldTransfers
{
	starpu_data_handle_t blocker = nullptr;
	std::atomic<bool> holding{false}, released{false};
	std::mutex lock;
	std::vector<const void *> order;

	static void observe(const astro_event *ev, void *arg)
	{
		HeldTransfers *t = (HeldTransfers *)arg;
		if (ev->object == t->blocker) {
			t->holding = true;
			while (!t->released)
				starpu_usleep(1000);
			return;
		}
		std::lock_guard<std::mutex> hold(t->lock);
		t->order.push_back(ev->object);
	}
};

#endif
