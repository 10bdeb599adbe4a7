// SPDX-License-Identifier: LGPL-2.1-or-later
// The modular scheduler API (starpu_sched_component.h): sets of workers,
// the contract of the queue components (push, refusal at the threshold,
// can_push pumping down in order, a refused task kept), links between
// components, bad input, and a component written here, out of the library,
// inserted into a running tree.
#include "helpers.h"
#include "tree_policy.h"

#include <astrolabe/observe.h>
#include <map>
#include <mutex>
#include <set>
#include <vector>

using namespace astro_test;

namespace {

// ------------------------------------------------------------ bitmaps

TEST(Bitmap, SetsAndWalks)
{
	struct starpu_bitmap *b = starpu_bitmap_create(), *c = starpu_bitmap_create(), *a = starpu_bitmap_create();
	ASSERT_TRUE(b && c && a);
	EXPECT_EQ(starpu_bitmap_first(b), -1);
	EXPECT_EQ(starpu_bitmap_last(b), -1);
	for (int e : { 3, 64, 130, 0 })
		starpu_bitmap_set(b, e);
	EXPECT_EQ(starpu_bitmap_cardinal(b), 4);
	EXPECT_EQ(starpu_bitmap_first(b), 0);
	EXPECT_EQ(starpu_bitmap_next(b, 0), 3);
	EXPECT_EQ(starpu_bitmap_next(b, 3), 64);
	EXPECT_EQ(starpu_bitmap_next(b, 64), 130);
	EXPECT_EQ(starpu_bitmap_next(b, 130), -1);
	EXPECT_EQ(starpu_bitmap_last(b), 130);
	EXPECT_TRUE(starpu_bitmap_has_next(b, 64));
	EXPECT_FALSE(starpu_bitmap_has_next(b, 130));
	starpu_bitmap_unset(b, 64);
	EXPECT_FALSE(starpu_bitmap_get(b, 64));
	EXPECT_FALSE(starpu_bitmap_get(b, 100000));
	starpu_bitmap_set(c, 3);
	starpu_bitmap_set(c, 7);
	EXPECT_TRUE(starpu_bitmap_and_get(b, c, 3));
	EXPECT_FALSE(starpu_bitmap_and_get(b, c, 7));
	starpu_bitmap_unset_and(a, b, c);
	EXPECT_EQ(starpu_bitmap_cardinal(a), 1);
	starpu_bitmap_or(a, c);
	EXPECT_EQ(starpu_bitmap_cardinal(a), 2);
	// A negative element is refused with a message, nothing changes.
	std::string err = stderr_of([&] { starpu_bitmap_set(a, -1); });
	EXPECT_NE(err.find("negative"), std::string::npos) << err;
	EXPECT_EQ(starpu_bitmap_cardinal(a), 2);
	starpu_bitmap_unset_all(b);
	EXPECT_EQ(starpu_bitmap_cardinal(b), 0);
	starpu_bitmap_destroy(a);
	starpu_bitmap_destroy(b);
	starpu_bitmap_destroy(c);
	starpu_bitmap_destroy(nullptr);
}

// ------------------------------------------- components (runtime up)

void nop(void **, void *) {}

// A component that records what is pushed to it and takes at most room tasks.
struct Sink
{
	std::vector<struct starpu_task *> got;
	int room = 0;
};

int sink_push(struct starpu_sched_component *component, struct starpu_task *task)
{
	Sink *sink = (Sink *)component->data;
	if (sink->room <= 0)
		return 1;
	sink->room--;
	sink->got.push_back(task);
	return 0;
}

class Components : public ::testing::Test
{
protected:
	void SetUp() override
	{
		starpu_conf conf = conf_with_ncpus(1);
		conf.sched_policy_name = "eager";
		conf.precedence_over_environment_variables = 1;
		ASSERT_EQ(starpu_init(&conf), 0);
		cl_ = cpu_codelet(nop, 0, "component");
		// Context 0 runs eager, not a tree: the test builds one there by hand.
		tree_ = starpu_sched_tree_create(0);
		ASSERT_NE(tree_, nullptr);
		sink_ = starpu_sched_component_create(tree_, "sink");
		ASSERT_NE(sink_, nullptr);
		sink_->data = &sink_data_;
		sink_->push_task = sink_push;
		starpu_bitmap_set(sink_->workers_in_ctx, 0);
	}
	void TearDown() override
	{
		for (struct starpu_task *t : tasks_)
			starpu_task_destroy(t);
		starpu_sched_tree_destroy(tree_);
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	struct starpu_task *task(int priority)
	{
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl_;
		t->priority = priority;
		t->destroy = 0;
		tasks_.push_back(t);
		return t;
	}
	struct starpu_sched_component *queue_above_sink(bool prio, unsigned threshold)
	{
		struct starpu_sched_component_prio_data d = { threshold, 0.0, 0 };
		struct starpu_sched_component *q = prio ? starpu_sched_component_prio_create(tree_, &d)
							: starpu_sched_component_fifo_create(tree_, (struct starpu_sched_component_fifo_data *)&d);
		EXPECT_NE(q, nullptr);
		starpu_sched_component_connect(q, sink_);
		starpu_bitmap_set(q->workers_in_ctx, 0);
		tree_->root = q;
		return q;
	}

	starpu_codelet cl_;
	struct starpu_sched_tree *tree_ = nullptr;
	struct starpu_sched_component *sink_ = nullptr;
	Sink sink_data_;
	std::vector<struct starpu_task *> tasks_;
};

TEST_F(Components, FifoRefusesAtItsThresholdAndPumpsInOrder)
{
	struct starpu_sched_component *fifo = queue_above_sink(false, 3);
	ASSERT_TRUE(starpu_sched_component_is_fifo(fifo));
	EXPECT_FALSE(starpu_sched_component_is_prio(fifo));
	struct starpu_task *t[4] = { task(0), task(9), task(0), task(0) };
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(starpu_sched_component_push_task(nullptr, fifo, t[i]), 0);
	// Full: refused, the caller keeps it.
	EXPECT_NE(starpu_sched_component_push_task(nullptr, fifo, t[3]), 0);
	// The sink has room for one: it gets the oldest, the next one it refused stays.
	sink_data_.room = 1;
	EXPECT_EQ(fifo->can_push(fifo, sink_), 1);
	ASSERT_EQ(sink_data_.got.size(), 1u);
	EXPECT_EQ(sink_data_.got[0], t[0]);
	sink_data_.room = 10;
	EXPECT_EQ(fifo->can_push(fifo, sink_), 1);
	ASSERT_EQ(sink_data_.got.size(), 3u);
	EXPECT_EQ(sink_data_.got[1], t[1]);
	EXPECT_EQ(sink_data_.got[2], t[2]);
	// Empty now: room again.
	EXPECT_EQ(starpu_sched_component_push_task(nullptr, fifo, t[3]), 0);
	EXPECT_EQ(starpu_sched_component_pump_downstream(fifo, nullptr), nullptr);
	EXPECT_EQ(sink_data_.got.back(), t[3]);
}

// The components' moments (what trace.html animates): a component made and
// connected, each push reported before the component takes the task, a refusal
// reported as the way back; a moment that does not exist is refused.
struct ComponentMoment
{
	astro_moment moment;
	const void *object;
	unsigned long other, job;
	unsigned nimpl;
	std::string label;
};

void record_component_moment(const astro_event *e, void *arg)
{
	static std::mutex lock;
	std::lock_guard<std::mutex> hold(lock);
	static_cast<std::vector<ComponentMoment> *>(arg)->push_back(
		{ e->moment, e->object, e->other_id, e->job_id, e->nimpl, e->label ? e->label : "" });
}

TEST_F(Components, MovesAreReportedToObservers)
{
	std::vector<ComponentMoment> seen;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_COMPONENT_NEW) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_COMPONENT_CONNECT) |
						 ASTRO_MOMENT_BIT(ASTRO_MOMENT_COMPONENT_PUSH) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_COMPONENT_PULL) |
						 ASTRO_OBSERVE_UNTIMED,
					 record_component_moment, &seen);
	ASSERT_GE(id, 0);
	struct starpu_sched_component *fifo = queue_above_sink(false, 1);
	struct starpu_task *t[2] = { task(0), task(0) };
	EXPECT_EQ(starpu_sched_component_push_task(nullptr, fifo, t[0]), 0);
	EXPECT_NE(starpu_sched_component_push_task(nullptr, fifo, t[1]), 0) << "threshold 1: refused";
	ASSERT_EQ(astro_observe_unsubscribe(id), 0);
	EXPECT_EQ(starpu_sched_component_push_task(nullptr, fifo, t[1]), 1) << "no observer: nothing more is reported";

	ASSERT_EQ(seen.size(), 5u);
	EXPECT_EQ(seen[0].moment, ASTRO_MOMENT_COMPONENT_NEW);
	EXPECT_EQ(seen[0].object, fifo);
	EXPECT_EQ(seen[0].label, "fifo");
	EXPECT_EQ(seen[0].nimpl, 0u) << "not a worker component";
	EXPECT_EQ(seen[1].moment, ASTRO_MOMENT_COMPONENT_CONNECT);
	EXPECT_EQ(seen[1].object, fifo);
	EXPECT_EQ(seen[1].other, (unsigned long)(uintptr_t)sink_);
	for (int i : { 2, 3 }) {
		EXPECT_EQ(seen[i].moment, ASTRO_MOMENT_COMPONENT_PUSH);
		EXPECT_EQ(seen[i].object, fifo);
		EXPECT_EQ(seen[i].other, 0u) << "from the policy";
		EXPECT_EQ(seen[i].nimpl, 0u);
		EXPECT_EQ(seen[i].job, starpu_task_get_job_id(t[i - 2]));
	}
	// The refused task went back where it came from (the policy: no component).
	EXPECT_EQ(seen[4].moment, ASTRO_MOMENT_COMPONENT_PUSH);
	EXPECT_EQ(seen[4].nimpl, 1u);
	EXPECT_EQ(seen[4].object, nullptr);
	EXPECT_EQ(seen[4].other, (unsigned long)(uintptr_t)fifo);
	EXPECT_EQ(seen[4].job, starpu_task_get_job_id(t[1]));

	std::string err = stderr_of([] {
		astro_event e = {};
		e.moment = (astro_moment)999;
		astro_observe_report(&e);
	});
	EXPECT_NE(err.find("moment 999 does not exist"), std::string::npos) << err;
}

// Counts the pushes a component is offered (taken or refused), then lets its own push_task answer.
struct PushCount
{
	int (*push)(struct starpu_sched_component *, struct starpu_task *) = nullptr;
	int offered = 0, refused = 0;
};
PushCount g_push_count;

int offer_counted(struct starpu_sched_component *component, struct starpu_task *task)
{
	g_push_count.offered++;
	int ret = g_push_count.push(component, task);
	g_push_count.refused += ret != 0;
	return ret;
}

void count_pushes(struct starpu_sched_component *component)
{
	g_push_count = PushCount();
	g_push_count.push = component->push_task;
	component->push_task = offer_counted;
}

// The tree top -> a fifo of threshold tasks -> sink, top its root; the pushes offered to the fifo are counted.
struct starpu_sched_component *limited_queue_under(struct starpu_sched_component *top, unsigned threshold, struct starpu_sched_component *sink)
{
	struct starpu_sched_component_fifo_data limited = { threshold, 0.0, 0 };
	struct starpu_sched_component *below = starpu_sched_component_fifo_create(top->tree, &limited);
	if (!below)
		return nullptr;
	starpu_sched_component_connect(top, below);
	starpu_sched_component_connect(below, sink);
	top->tree->root = top;
	starpu_sched_tree_update_workers(top->tree);
	starpu_bitmap_set(top->workers_in_ctx, 0);
	starpu_bitmap_set(below->workers_in_ctx, 0);
	count_pushes(below);
	return below;
}

// A limited queue that gives a task for a pull asks those above for one more: the pump
// stops once it is full again, without offering it a task it must refuse (sent back up and
// queued there again), and what it did not need stays above, in order.
TEST_F(Components, APullRefillsALimitedQueueWithoutARefusal)
{
	struct starpu_sched_component *above = starpu_sched_component_fifo_create(tree_, nullptr);
	struct starpu_sched_component *below = limited_queue_under(above, 2, sink_);
	ASSERT_NE(below, nullptr);
	struct starpu_task *t[5] = { task(0), task(0), task(0), task(0), task(0) };
	for (struct starpu_task *x : t)
		ASSERT_EQ(starpu_sched_component_push_task(nullptr, above, x), 0);
	// Room below, nobody pulling: filled up to its limit, the task it refused kept above.
	EXPECT_EQ(above->can_push(above, below), 1);
	EXPECT_EQ(g_push_count.offered, 3);
	EXPECT_EQ(g_push_count.refused, 1);
	// A pull takes the oldest and brings one more down: offered once, taken.
	g_push_count.offered = g_push_count.refused = 0;
	EXPECT_EQ(below->pull_task(below, sink_), t[0]);
	EXPECT_EQ(g_push_count.offered, 1);
	EXPECT_EQ(g_push_count.refused, 0);
	// Everything in order: two below, the last two still above.
	EXPECT_EQ(below->pull_task(below, sink_), t[1]);
	EXPECT_EQ(below->pull_task(below, sink_), t[2]);
	EXPECT_EQ(below->pull_task(below, sink_), t[3]);
	EXPECT_EQ(below->pull_task(below, sink_), t[4]);
	EXPECT_EQ(below->pull_task(below, sink_), nullptr);
	EXPECT_EQ(g_push_count.refused, 0);
}

// A heteroprio component whose child refused a task does not offer it again at each push: the
// tasks wait in it until the child has room (a pull), then go down in order.
TEST_F(Components, HeteroprioWaitsForRoomAfterARefusal)
{
	struct starpu_sched_component *decision = starpu_sched_component_heteroprio_create(tree_, nullptr);
	struct starpu_sched_component *below = limited_queue_under(decision, 1, sink_);
	ASSERT_NE(below, nullptr);
	struct starpu_task *t[4] = { task(0), task(0), task(0), task(0) };
	for (struct starpu_task *x : t)
		ASSERT_EQ(starpu_sched_component_push_task(nullptr, decision, x), 0);
	// The first went down, the second was refused (full), the last two were not offered.
	EXPECT_EQ(g_push_count.offered, 2);
	EXPECT_EQ(g_push_count.refused, 1);
	// Each pull takes one and lets the next one down.
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(below->pull_task(below, sink_), t[i]) << i;
	EXPECT_EQ(below->pull_task(below, sink_), nullptr);
	EXPECT_EQ(g_push_count.offered, 5);
	EXPECT_EQ(g_push_count.refused, 1);
}

TEST_F(Components, PrioGivesHighestFirstAndFifoAmongEquals)
{
	struct starpu_sched_component *prio = queue_above_sink(true, 0);
	ASSERT_TRUE(starpu_sched_component_is_prio(prio));
	struct starpu_task *t[5] = { task(1), task(5), task(3), task(5), task(-2) };
	for (struct starpu_task *x : t)
		EXPECT_EQ(starpu_sched_component_push_task(nullptr, prio, x), 0);
	sink_data_.room = 10;
	int success = 0;
	EXPECT_EQ(starpu_sched_component_pump_to(prio, sink_, &success), nullptr);
	EXPECT_EQ(success, 1);
	std::vector<struct starpu_task *> expected = { t[1], t[3], t[2], t[0], t[4] };
	EXPECT_EQ(sink_data_.got, expected);
}

TEST_F(Components, LinksAndWorkers)
{
	struct starpu_sched_component *eager = starpu_sched_component_eager_create(tree_, nullptr);
	struct starpu_sched_component *w0 = starpu_sched_component_worker_get(0, 0);
	ASSERT_TRUE(eager && w0);
	EXPECT_TRUE(starpu_sched_component_is_eager(eager));
	EXPECT_TRUE(starpu_sched_component_is_worker(w0));
	EXPECT_FALSE(starpu_sched_component_is_worker(eager));
	EXPECT_EQ(starpu_sched_component_worker_get_workerid(w0), 0);
	EXPECT_EQ(starpu_sched_component_worker_get_workerid(eager), -1);
	EXPECT_EQ(starpu_sched_component_worker_get(0, 0), w0);
	starpu_sched_component_connect(eager, w0);
	starpu_sched_component_connect(eager, w0);
	EXPECT_EQ(eager->nchildren, 1u);
	EXPECT_EQ(w0->nparents, 1u);
	tree_->root = eager;
	starpu_sched_tree_update_workers(tree_);
	EXPECT_TRUE(starpu_bitmap_get(eager->workers, 0));
	int ids[1] = { 0 };
	starpu_sched_tree_add_workers(0, ids, 1);
	EXPECT_TRUE(starpu_bitmap_get(eager->workers_in_ctx, 0));
	struct starpu_task *t = task(0);
	EXPECT_TRUE(starpu_sched_component_can_execute_task(eager, t));
	double length = -1.0;
	EXPECT_TRUE(starpu_sched_component_execute_preds(eager, t, &length));
	EXPECT_EQ(length, 0.0); // no model
	starpu_sched_tree_remove_workers(0, ids, 1);
	EXPECT_FALSE(starpu_bitmap_get(eager->workers_in_ctx, 0));
	EXPECT_FALSE(starpu_sched_component_can_execute_task(eager, t));
	// sink_ is not in the tree: destroyed alone, which unlinks nothing else.
	starpu_sched_component_destroy(sink_);
	sink_ = nullptr;
}

TEST_F(Components, BadInputIsRefusedWithAMessage)
{
	std::string err = stderr_of([&] { starpu_sched_component_connect(nullptr, sink_); });
	EXPECT_NE(err.find("NULL"), std::string::npos) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_component_worker_get(0, 4000), nullptr); });
	EXPECT_NE(err.find("no worker 4000"), std::string::npos) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_tree_create(0), nullptr); });
	EXPECT_NE(err.find("already has a tree"), std::string::npos) << err;
	unsigned w[2] = { 0, 0 };
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_component_parallel_worker_create(tree_, 2, w), nullptr); });
	EXPECT_NE(err.find("twice"), std::string::npos) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_component_perfmodel_select_create(tree_, nullptr), nullptr); });
	EXPECT_NE(err.find("NULL"), std::string::npos) << err;
	// Several children and no push_task: the default cannot choose.
	struct starpu_sched_component *plain = starpu_sched_component_create(tree_, "plain");
	starpu_sched_component_connect(plain, sink_);
	starpu_sched_component_connect(plain, starpu_sched_component_worker_get(0, 0));
	tree_->root = plain;
	err = stderr_of([&] { EXPECT_NE(starpu_sched_component_push_task(nullptr, plain, task(0)), 0); });
	EXPECT_NE(err.find("cannot choose"), std::string::npos) << err;
}

// ---------------------------------- a component of our own, in a policy

std::atomic<int> g_counted{ 0 };

// Counts the tasks going through, then passes them to its only child.
int counting_push(struct starpu_sched_component *component, struct starpu_task *task)
{
	g_counted++;
	return starpu_sched_component_push_task(component, component->children[0], task);
}

// It decides on push: a pull asks the components above to push down.
struct starpu_task *counting_pull(struct starpu_sched_component *from, struct starpu_sched_component *)
{
	starpu_sched_component_send_can_push_to_parents(from);
	return nullptr;
}

void counting_tree_init(unsigned ctx)
{
	struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);
	struct starpu_sched_component *fifo = starpu_sched_component_fifo_create(t, nullptr);
	struct starpu_sched_component *counting = starpu_sched_component_create(t, "counting");
	struct starpu_sched_component *eager = starpu_sched_component_eager_create(t, nullptr);
	counting->push_task = counting_push;
	counting->pull_task = counting_pull;
	t->root = fifo;
	starpu_sched_component_connect(fifo, counting);
	starpu_sched_component_connect(counting, eager);
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		starpu_sched_component_connect(eager, starpu_sched_component_worker_get(ctx, (int)w));
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

// A policy made of a tree, as StarPU's modular policies are.

TREE_POLICY(counting_policy, "counting-tree", counting_tree_init);

std::atomic<int> g_ran{ 0 };
void count_run(void **, void *) { g_ran++; }

TEST(OutOfTreeComponent, RunsInsideATree)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy = &counting_policy;
	ASSERT_EQ(starpu_init(&conf), 0);
	g_counted = 0;
	g_ran = 0;
	starpu_codelet cl = cpu_codelet(count_run, 0, "counted");
	const int n = 500;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran.load(), n);
	EXPECT_EQ(g_counted.load(), n);
	starpu_shutdown();
}

// ------------- a decision component of our own in a simple scheduler

// As StarPU's examples/scheduler/dummy_modular_sched: one list, tasks pulled
// from it, or pumped down when a queue below has room.
struct Dummy
{
	starpu_pthread_mutex_t lock;
	struct starpu_task_list list;
	std::atomic<int> pushed{ 0 };
};
Dummy *g_dummy;

int dummy_push(struct starpu_sched_component *component, struct starpu_task *task)
{
	Dummy *d = (Dummy *)component->data;
	STARPU_PTHREAD_MUTEX_LOCK(&d->lock);
	starpu_task_list_push_front(&d->list, task);
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->lock);
	d->pushed++;
	component->can_pull(component);
	return 0;
}

struct starpu_task *dummy_pull(struct starpu_sched_component *component, struct starpu_sched_component *)
{
	Dummy *d = (Dummy *)component->data;
	STARPU_PTHREAD_MUTEX_LOCK(&d->lock);
	struct starpu_task *task = starpu_task_list_empty(&d->list) ? nullptr : starpu_task_list_pop_back(&d->list);
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->lock);
	return task;
}

int dummy_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	Dummy *d = (Dummy *)component->data;
	int didwork = 0;
	struct starpu_task *task = starpu_sched_component_pump_to(component, to, &didwork);
	if (task) {
		STARPU_PTHREAD_MUTEX_LOCK(&d->lock);
		starpu_task_list_push_back(&d->list, task);
		STARPU_PTHREAD_MUTEX_UNLOCK(&d->lock);
	}
	return didwork || starpu_sched_component_can_push(component, to);
}

void dummy_deinit(struct starpu_sched_component *component)
{
	Dummy *d = (Dummy *)component->data;
	EXPECT_TRUE(starpu_task_list_empty(&d->list));
	STARPU_PTHREAD_MUTEX_DESTROY(&d->lock);
}

struct starpu_sched_component *dummy_create(struct starpu_sched_tree *tree, void *)
{
	struct starpu_sched_component *component = starpu_sched_component_create(tree, "dummy");
	STARPU_PTHREAD_MUTEX_INIT(&g_dummy->lock, NULL);
	starpu_task_list_init(&g_dummy->list);
	component->data = g_dummy;
	component->push_task = dummy_push;
	component->pull_task = dummy_pull;
	component->can_push = dummy_can_push;
	component->deinit_data = dummy_deinit;
	return component;
}

void dummy_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(dummy_create, nullptr,
							   STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_FIFOS_BELOW
							   | STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO, ctx);
}

TREE_POLICY(dummy_policy, "dummy", dummy_init);

TEST(OutOfTreeComponent, DecisionComponentOfASimpleScheduler)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	for (int ncpus : { 1, 2 }) {
		SCOPED_TRACE(ncpus);
		Dummy dummy;
		g_dummy = &dummy;
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.sched_policy = &dummy_policy;
		ASSERT_EQ(starpu_init(&conf), 0);
		struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
		ASSERT_NE(tree, nullptr);
		ASSERT_NE(tree->root, nullptr);
		EXPECT_EQ(std::string(tree->root->name), "dummy");
		EXPECT_EQ(tree->root->nchildren, (unsigned)ncpus);
		g_ran = 0;
		starpu_codelet cl = cpu_codelet(count_run, 0, "dummy");
		const int n = 1000;
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&cl), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_EQ(g_ran.load(), n);
		EXPECT_EQ(dummy.pushed.load(), n);
		starpu_shutdown();
	}
}

// ------------------- a tree built from a specification (make_scheduler)

struct starpu_sched_component *eager_of(struct starpu_sched_tree *tree, void *arg)
{
	return starpu_sched_component_eager_create(tree, arg);
}

struct starpu_sched_component *fifo_of(struct starpu_sched_tree *tree, void *arg)
{
	return starpu_sched_component_fifo_create(tree, (struct starpu_sched_component_fifo_data *)arg);
}

struct starpu_sched_component *prio_of(struct starpu_sched_tree *tree, void *arg)
{
	return starpu_sched_component_prio_create(tree, (struct starpu_sched_component_prio_data *)arg);
}

struct starpu_sched_component *failing_of(struct starpu_sched_tree *, void *)
{
	return nullptr;
}

std::atomic<int> g_worker_recipes{ 0 };

// A queue above each CPU worker, none above the others.
struct starpu_sched_component_composed_recipe *fifo_above_cpus(enum starpu_worker_archtype arch)
{
	if (arch != STARPU_CPU_WORKER)
		return nullptr;
	g_worker_recipes++;
	return starpu_sched_component_composed_recipe_create_singleton(fifo_of, nullptr);
}

bool g_memory_node_level;

// As StarPU's hierarchical heft: a recipe for the machine, one per memory node, one per worker.
void made_init(unsigned ctx)
{
	struct starpu_sched_component_specs specs = {};
	specs.hwloc_machine_composed_sched_component = starpu_sched_component_composed_recipe_create();
	starpu_sched_component_composed_recipe_add(specs.hwloc_machine_composed_sched_component, prio_of, nullptr);
	if (g_memory_node_level)
		specs.hwloc_component_composed_sched_component = starpu_sched_component_composed_recipe_create_singleton(eager_of, nullptr);
	else
		starpu_sched_component_composed_recipe_add(specs.hwloc_machine_composed_sched_component, eager_of, nullptr);
	specs.worker_composed_sched_component = fifo_above_cpus;
	struct starpu_sched_tree *t = starpu_sched_component_make_scheduler(ctx, specs);
	starpu_sched_component_composed_recipe_destroy(specs.hwloc_machine_composed_sched_component);
	starpu_sched_component_composed_recipe_destroy(specs.hwloc_component_composed_sched_component);
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

TREE_POLICY(made_policy, "made", made_init);

// Where a task ran and how often.
struct RunRecord
{
	std::atomic<int> runs{ 0 };
	std::atomic<int> on{ -1 };
};

void record_run(void **, void *arg)
{
	RunRecord *r = (RunRecord *)arg;
	r->on = starpu_worker_get_id();
	r->runs++;
}

// Submits n tasks of priorities 0..nprio-1 in turn, every bound_every-th one bound to a worker in
// turn (0: none), waits for them, and checks that each ran once, the bound ones on their worker.
void run_tasks_once(const char *name, int n, int nprio, int bound_every)
{
	static starpu_codelet cl = cpu_codelet(record_run, 0, "run_once");
	unsigned nworkers = starpu_worker_get_count();
	std::vector<RunRecord> runs(n);
	cl.name = name;
	for (int i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &runs[i];
		t->priority = i % nprio;
		if (bound_every && i % bound_every == 0) {
			t->execute_on_a_specific_worker = 1;
			t->workerid = (unsigned)(i / bound_every) % nworkers;
		}
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(runs[i].runs.load(), 1) << "task " << i;
		if (bound_every && i % bound_every == 0)
			EXPECT_EQ(runs[i].on.load(), (int)((unsigned)(i / bound_every) % nworkers)) << "task " << i;
		else
			EXPECT_GE(runs[i].on.load(), 0) << "task " << i;
	}
}

TEST(MakeScheduler, TreeRunsEveryTaskOnceOnTheRightWorker)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	for (bool level : { false, true })
		for (int ncpus : { 1, 3 }) {
			SCOPED_TRACE(testing::Message() << "memory node level " << level << ", " << ncpus << " cpus");
			g_memory_node_level = level;
			g_worker_recipes = 0;
			starpu_conf conf = conf_with_ncpus(ncpus);
			conf.sched_policy = &made_policy;
			ASSERT_EQ(starpu_init(&conf), 0);
			struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
			ASSERT_NE(tree, nullptr);
			ASSERT_NE(tree->root, nullptr);
			unsigned nworkers = starpu_worker_get_count();
			EXPECT_EQ(g_worker_recipes.load(), ncpus);
			// prio, then eager (its own level or the machine's second step), then a fifo above each worker.
			EXPECT_EQ(std::string(tree->root->name), "prio");
			ASSERT_EQ(tree->root->nchildren, 1u);
			struct starpu_sched_component *eager = tree->root->children[0];
			EXPECT_EQ(std::string(eager->name), "eager");
			EXPECT_EQ(eager->nchildren, nworkers);
			EXPECT_EQ(starpu_bitmap_cardinal(tree->root->workers), (int)nworkers);
			for (unsigned c = 0; c < eager->nchildren; c++) {
				struct starpu_sched_component *fifo = eager->children[c];
				EXPECT_TRUE(starpu_sched_component_is_fifo(fifo));
				ASSERT_EQ(fifo->nchildren, 1u);
				EXPECT_TRUE(starpu_sched_component_is_worker(fifo->children[0]));
			}
			// A third of the tasks are bound to a worker.
			run_tasks_once("made", 600, 3, 3);
			starpu_shutdown();
		}
}

TEST_F(Components, MakeSchedulerRefusesBadSpecificationsWithAMessage)
{
	// The fixture's hand-made tree holds context 0: free it for the builder
	// (its sink is not under its root, so it goes on its own).
	starpu_sched_component_destroy(sink_);
	sink_ = nullptr;
	starpu_sched_tree_destroy(tree_);
	tree_ = nullptr;
	struct starpu_sched_component_composed_recipe *machine = starpu_sched_component_composed_recipe_create_singleton(eager_of, nullptr);
	struct starpu_sched_component_composed_recipe *empty = starpu_sched_component_composed_recipe_create();
	ASSERT_TRUE(machine && empty);
	struct starpu_sched_component_specs specs = {};
	struct starpu_sched_tree *t = nullptr;

	std::string err = stderr_of([&] { t = starpu_sched_component_make_scheduler(0, specs); });
	EXPECT_EQ(t, nullptr);
	EXPECT_NE(err.find("hwloc_machine_composed_sched_component"), std::string::npos) << err;

	specs.hwloc_machine_composed_sched_component = machine;
	specs.hwloc_socket_composed_sched_component = empty;
	// (An empty socket level: refused where the worker has a processing unit, else the level is left out.)
	err = stderr_of([&] { t = starpu_sched_component_make_scheduler(0, specs); });
	if (starpu_worker_get_bindid(0) >= 0) {
		EXPECT_EQ(t, nullptr);
		EXPECT_NE(err.find("socket recipe is empty"), std::string::npos) << err;
	} else
		starpu_sched_tree_destroy(t);
	specs.hwloc_socket_composed_sched_component = nullptr;
	EXPECT_EQ(starpu_sched_tree_get(0), nullptr);

	// An empty level: refused, and the half-built tree is gone (the context can get another).
	specs.hwloc_component_composed_sched_component = empty;
	err = stderr_of([&] { t = starpu_sched_component_make_scheduler(0, specs); });
	EXPECT_EQ(t, nullptr);
	EXPECT_NE(err.find("memory node recipe is empty"), std::string::npos) << err;
	EXPECT_EQ(starpu_sched_tree_get(0), nullptr);

	err = stderr_of([&] { starpu_sched_component_composed_recipe_add(empty, nullptr, nullptr); });
	EXPECT_NE(err.find("create_component is NULL"), std::string::npos) << err;
	err = stderr_of([&] { starpu_sched_component_composed_recipe_add(nullptr, eager_of, nullptr); });
	EXPECT_NE(err.find("recipe is NULL"), std::string::npos) << err;

	specs.hwloc_component_composed_sched_component = nullptr;
	t = starpu_sched_component_make_scheduler(0, specs);
	ASSERT_NE(t, nullptr);
	EXPECT_EQ(starpu_sched_tree_get(0), t);
	EXPECT_EQ(std::string(t->root->name), "eager");
	EXPECT_EQ(t->root->nchildren, 1u);
	EXPECT_TRUE(starpu_sched_component_is_worker(t->root->children[0]));

	// A composed component: one step is that component; an empty or missing recipe is refused.
	struct starpu_sched_component *c = starpu_sched_component_composed_component_create(t, machine);
	ASSERT_NE(c, nullptr);
	EXPECT_EQ(std::string(c->name), "eager");
	starpu_sched_component_destroy(c);
	err = stderr_of([&] { c = starpu_sched_component_composed_component_create(t, empty); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("the recipe is empty"), std::string::npos) << err;
	err = stderr_of([&] { c = starpu_sched_component_composed_component_create(t, nullptr); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("recipe is NULL"), std::string::npos) << err;
	// A step that cannot be made: refused, the steps made before are freed (LeakSanitizer checks).
	starpu_sched_component_composed_recipe_add(machine, fifo_of, nullptr);
	starpu_sched_component_composed_recipe_add(machine, failing_of, nullptr);
	err = stderr_of([&] { c = starpu_sched_component_composed_component_create(t, machine); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("step 2 of the recipe could not be made"), std::string::npos) << err;

	starpu_sched_tree_destroy(t);
	starpu_sched_component_composed_recipe_destroy(machine);
	starpu_sched_component_composed_recipe_destroy(empty);
	starpu_sched_component_composed_recipe_destroy(nullptr);
}

// ------------------- a composed component of several steps in a running tree

// The root is one component made of prio -> eager -> fifo, above every worker.
void composed_init(unsigned ctx)
{
	struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);
	struct starpu_sched_component_composed_recipe *r = starpu_sched_component_composed_recipe_create();
	starpu_sched_component_composed_recipe_add(r, prio_of, nullptr);
	starpu_sched_component_composed_recipe_add(r, eager_of, nullptr);
	starpu_sched_component_composed_recipe_add(r, fifo_of, nullptr);
	t->root = starpu_sched_component_composed_component_create(t, r);
	starpu_sched_component_composed_recipe_destroy(r);
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		starpu_sched_component_connect(t->root, starpu_sched_component_worker_get(ctx, (int)w));
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

TREE_POLICY(composed_policy, "composed", composed_init);

TEST(ComposedComponent, SeveralStepsActAsOneComponent)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	for (int ncpus : { 1, 2 }) {
		SCOPED_TRACE(testing::Message() << ncpus << " cpus");
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.sched_policy = &composed_policy;
		ASSERT_EQ(starpu_init(&conf), 0);
		struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
		ASSERT_NE(tree, nullptr);
		ASSERT_NE(tree->root, nullptr);
		unsigned nworkers = starpu_worker_get_count();
		EXPECT_EQ(std::string(tree->root->name), "composed");
		ASSERT_EQ(tree->root->nchildren, nworkers);
		for (unsigned c = 0; c < nworkers; c++) {
			EXPECT_TRUE(starpu_sched_component_is_worker(tree->root->children[c]));
			ASSERT_EQ(tree->root->children[c]->nparents, 1u);
			EXPECT_EQ(tree->root->children[c]->parents[0], tree->root);
		}
		EXPECT_EQ(starpu_bitmap_cardinal(tree->root->workers_in_ctx), (int)nworkers);
		EXPECT_GE(tree->root->estimated_end(tree->root), 0.0);
		run_tasks_once("composed", 400, 4, 4);
		starpu_shutdown();
	}
}

// ------------------- the socket and cache levels of make_scheduler

bool g_levels_numa;

// prio at the root, random per memory node (when asked), eager per package, fifo per last-level cache.
void levels_init(unsigned ctx)
{
	struct starpu_sched_component_specs specs = {};
	specs.hwloc_machine_composed_sched_component = starpu_sched_component_composed_recipe_create_singleton(prio_of, nullptr);
	if (g_levels_numa)
		specs.hwloc_component_composed_sched_component = starpu_sched_component_composed_recipe_create_singleton(
			[](struct starpu_sched_tree *tree, void *arg) { return starpu_sched_component_random_create(tree, arg); }, nullptr);
	specs.hwloc_socket_composed_sched_component = starpu_sched_component_composed_recipe_create_singleton(eager_of, nullptr);
	specs.hwloc_cache_composed_sched_component = starpu_sched_component_composed_recipe_create_singleton(fifo_of, nullptr);
	struct starpu_sched_tree *t = starpu_sched_component_make_scheduler(ctx, specs);
	starpu_sched_component_composed_recipe_destroy(specs.hwloc_machine_composed_sched_component);
	starpu_sched_component_composed_recipe_destroy(specs.hwloc_component_composed_sched_component);
	starpu_sched_component_composed_recipe_destroy(specs.hwloc_socket_composed_sched_component);
	starpu_sched_component_composed_recipe_destroy(specs.hwloc_cache_composed_sched_component);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

TREE_POLICY(levels_policy, "levels", levels_init);

// The package and last-level cache of a worker's processing unit, as hwloc sees them (-1: none, or no unit).
std::pair<long long, long long> place_of(int workerid)
{
	hwloc_topology_t topo = starpu_get_hwloc_topology();
	int bindid = starpu_worker_get_bindid(workerid);
	hwloc_obj_t pu = topo && bindid >= 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)bindid) : nullptr;
	hwloc_obj_t package = pu ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu) : nullptr;
	hwloc_obj_t llc = nullptr;
	for (hwloc_obj_t o = pu; o; o = o->parent)
		if (hwloc_obj_type_is_cache(o->type))
			llc = o;
	return { package ? (long long)package->logical_index : -1, llc ? (long long)llc->gp_index : -1 };
}

// A machine for hwloc to show (HWLOC_SYNTHETIC; none: this one), its CPU workers, whether main memory is split per
// NUMA node (STARPU_USE_NUMA, and a memory-node level in the tree), and how many packages, caches and RAM nodes the
// workers span there (0: whatever this machine has).
struct Machine
{
	const char *name;
	const char *synthetic;
	int ncpus;
	bool numa;
	size_t packages, caches, nodes;
};

class Levels : public ::testing::TestWithParam<Machine>
{
};

TEST_P(Levels, TreeFollowsTheTopology)
{
	const Machine &m = GetParam();
	ScopedEnv sched("STARPU_SCHED", nullptr);
	ScopedEnv synthetic("HWLOC_SYNTHETIC", m.synthetic);
	ScopedEnv numa("STARPU_USE_NUMA", m.numa ? "1" : nullptr);
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	ScopedEnv cpuid("STARPU_WORKERS_CPUID", nullptr);
	ScopedEnv coreid("STARPU_WORKERS_COREID", nullptr);
	g_levels_numa = m.numa;
	starpu_conf conf = conf_with_ncpus(m.ncpus);
	conf.sched_policy = &levels_policy;
	ASSERT_EQ(starpu_init(&conf), 0);
	hwloc_topology_t topo = starpu_get_hwloc_topology();
	ASSERT_NE(topo, nullptr);
	if (m.synthetic)
		ASSERT_FALSE(hwloc_topology_is_thissystem(topo)) << "hwloc did not take HWLOC_SYNTHETIC";
	struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
	ASSERT_NE(tree, nullptr);
	ASSERT_NE(tree->root, nullptr);
	EXPECT_EQ(std::string(tree->root->name), "prio");
	unsigned nworkers = starpu_worker_get_count();
	ASSERT_EQ(nworkers, (unsigned)m.ncpus);
	std::map<long long, struct starpu_sched_component *> node_of, socket_of, cache_of;
	std::set<struct starpu_sched_component *> under_root;
	for (unsigned w = 0; w < nworkers; w++) {
		SCOPED_TRACE(testing::Message() << "worker " << w);
		auto place = place_of((int)w);
		long long node = starpu_worker_get_memory_node(w);
		struct starpu_sched_component *c = starpu_sched_component_worker_get(0, (int)w), *top = c;
		ASSERT_EQ(c->nparents, 1u);
		c = c->parents[0];
		// Up from the worker: its cache's fifo (when it has a cache), its package's eager (when it has one), its
		// memory node's random (with that level), the root.
		if (place.second >= 0) {
			EXPECT_TRUE(starpu_sched_component_is_fifo(c)) << c->name;
			EXPECT_TRUE(cache_of.emplace(place.second, c).first->second == c) << "workers of one cache share its component";
			ASSERT_EQ(c->nparents, 1u);
			top = c;
			c = c->parents[0];
		}
		if (place.first >= 0) {
			EXPECT_TRUE(starpu_sched_component_is_eager(c)) << c->name;
			EXPECT_TRUE(socket_of.emplace(place.first, c).first->second == c) << "workers of one package share its component";
			ASSERT_EQ(c->nparents, 1u);
			top = c;
			c = c->parents[0];
		}
		if (m.numa) {
			EXPECT_TRUE(starpu_sched_component_is_random(c)) << c->name;
			EXPECT_TRUE(node_of.emplace(node, c).first->second == c) << "workers of one memory node share its component";
			ASSERT_EQ(c->nparents, 1u);
			top = c;
			c = c->parents[0];
		}
		EXPECT_EQ(c, tree->root);
		under_root.insert(top);
	}
	// One component per memory node, package and cache, no more.
	for (auto *level : { &node_of, &socket_of, &cache_of }) {
		std::set<struct starpu_sched_component *> distinct;
		for (auto &p : *level)
			distinct.insert(p.second);
		EXPECT_EQ(distinct.size(), level->size());
	}
	EXPECT_EQ(tree->root->nchildren, under_root.size());
	// The workers span the machine hwloc shows: the levels were exercised.
	if (m.packages)
		EXPECT_EQ(socket_of.size(), m.packages);
	if (m.synthetic)
		EXPECT_EQ(cache_of.size(), m.caches);
	if (m.nodes) {
		EXPECT_EQ(node_of.size(), m.nodes);
		EXPECT_EQ((int)starpu_memory_nodes_get_numa_count(), (int)m.nodes);
	}

	run_tasks_once("levels", 300, 2, 0);
	starpu_shutdown();
}

INSTANTIATE_TEST_SUITE_P(
	MakeScheduler, Levels,
	::testing::Values(Machine{ "this_machine", nullptr, 2, false, 0, 0, 0 },
			  // Two packages of two L3 caches of two cores.
			  Machine{ "two_packages", "package:2 l3:2 core:2 pu:1", 8, false, 2, 4, 0 },
			  // A NUMA node per package, two L3 caches each.
			  Machine{ "numa_per_package", "numa:2 package:1 l3:2 core:2 pu:1", 8, true, 2, 4, 2 },
			  // Two NUMA nodes of two packages each, no cache: that level goes.
			  Machine{ "packages_per_numa_no_cache", "numa:2 package:2 core:2 pu:1", 8, true, 4, 0, 2 }),
	[](const testing::TestParamInfo<Machine> &info) { return std::string(info.param.name); });

} // namespace
