// SPDX-License-Identifier: LGPL-2.1-or-later
// The rest of StarPU 1.4's small headers (issue 40): the thread calls and checked macros of
// starpu_thread.h / starpu_thread_util.h, starpu_bitmap.h's public struct, starpu_rand.h's
// reentrant draws, starpu_expert.h's idle hooks, and starpu_disk.h's back-ends not built here.
#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu_bitmap.h>
#include <starpu_disk.h>
#include <starpu_expert.h>
#include <starpu_rand.h>
#include <starpu_thread.h>
#include <starpu_thread_util.h>

#include "helpers.h"

#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

using namespace astro_test;

namespace {

// ------------------------------------------------------------------ threads

// Runs f on a thread of its own and gives back what it returned.
template <typename F> int on_other_thread(F f)
{
	int ret = -1;
	std::thread t([&] { ret = f(); });
	t.join();
	return ret;
}

TEST(ThreadApi, TryLocksSayBusyAndTakeFreeLocks)
{
	starpu_pthread_mutex_t m;
	STARPU_PTHREAD_MUTEX_INIT(&m, NULL);
	STARPU_PTHREAD_MUTEX_LOCK(&m);
	EXPECT_EQ(on_other_thread([&] { return STARPU_PTHREAD_MUTEX_TRYLOCK(&m); }), EBUSY);
	EXPECT_EQ(on_other_thread([&] { return STARPU_PTHREAD_MUTEX_TRYLOCK_SCHED(&m); }), EBUSY);
	STARPU_PTHREAD_MUTEX_UNLOCK(&m);
	EXPECT_EQ(STARPU_PTHREAD_MUTEX_TRYLOCK(&m), 0);
	STARPU_PTHREAD_MUTEX_UNLOCK(&m);
	STARPU_PTHREAD_MUTEX_DESTROY(&m);

	starpu_pthread_rwlock_t rw;
	STARPU_PTHREAD_RWLOCK_INIT0(&rw, NULL);
	STARPU_PTHREAD_RWLOCK_WRLOCK(&rw);
	EXPECT_EQ(on_other_thread([&] { return STARPU_PTHREAD_RWLOCK_TRYRDLOCK(&rw); }), EBUSY);
	EXPECT_EQ(on_other_thread([&] { return STARPU_PTHREAD_RWLOCK_TRYWRLOCK(&rw); }), EBUSY);
	STARPU_PTHREAD_RWLOCK_UNLOCK(&rw);
	// Readers share the lock; a writer must wait for them.
	ASSERT_EQ(STARPU_PTHREAD_RWLOCK_TRYRDLOCK(&rw), 0);
	EXPECT_EQ(on_other_thread([&] {
		int ret = starpu_pthread_rwlock_tryrdlock(&rw);
		if (ret == 0)
			starpu_pthread_rwlock_unlock(&rw);
		return ret;
	}), 0);
	EXPECT_EQ(on_other_thread([&] { return starpu_pthread_rwlock_trywrlock(&rw); }), EBUSY);
	STARPU_PTHREAD_RWLOCK_UNLOCK(&rw);
	EXPECT_EQ(STARPU_PTHREAD_RWLOCK_TRYWRLOCK(&rw), 0);
	STARPU_PTHREAD_RWLOCK_UNLOCK(&rw);
	STARPU_PTHREAD_RWLOCK_DESTROY(&rw);
}

TEST(ThreadApi, SchedVariantsLockTheMutex)
{
	starpu_pthread_mutex_t m = STARPU_PTHREAD_MUTEX_INITIALIZER;
	STARPU_PTHREAD_MUTEX_LOCK_SCHED(&m);
	EXPECT_EQ(on_other_thread([&] { return starpu_pthread_mutex_trylock(&m); }), EBUSY);
	STARPU_PTHREAD_MUTEX_UNLOCK_SCHED(&m);
	ASSERT_EQ(starpu_pthread_mutex_trylock_sched(&m), 0);
	EXPECT_EQ(on_other_thread([&] { return starpu_pthread_mutex_trylock(&m); }), EBUSY);
	EXPECT_EQ(starpu_pthread_mutex_unlock_sched(&m), 0);
	EXPECT_EQ(starpu_pthread_mutex_lock_sched(&m), 0);
	EXPECT_EQ(starpu_pthread_mutex_unlock(&m), 0);
}

TEST(ThreadApi, MutexAttrTypeReadsBack)
{
	starpu_pthread_mutexattr_t attr;
	ASSERT_EQ(starpu_pthread_mutexattr_init(&attr), 0);
	ASSERT_EQ(starpu_pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE), 0);
	int type = -1;
	EXPECT_EQ(starpu_pthread_mutexattr_gettype(&attr, &type), 0);
	EXPECT_EQ(type, PTHREAD_MUTEX_RECURSIVE);
	// A recursive mutex made with it can be taken twice by its owner.
	starpu_pthread_mutex_t m;
	STARPU_PTHREAD_MUTEX_INIT(&m, &attr);
	STARPU_PTHREAD_MUTEX_LOCK(&m);
	EXPECT_EQ(STARPU_PTHREAD_MUTEX_TRYLOCK(&m), 0);
	STARPU_PTHREAD_MUTEX_UNLOCK(&m);
	STARPU_PTHREAD_MUTEX_UNLOCK(&m);
	STARPU_PTHREAD_MUTEX_DESTROY(&m);
	starpu_pthread_mutexattr_destroy(&attr);
}

void *note_name(void *arg)
{
	starpu_pthread_setname("astro-rest-thread-long-name");
	char name[32] = "";
	pthread_getname_np(pthread_self(), name, sizeof(name));
	*static_cast<std::string *>(arg) = name;
	return arg;
}

TEST(ThreadApi, CreateOnRunsTheThreadAndSetnameNamesIt)
{
	std::string name;
	starpu_pthread_t t;
	STARPU_PTHREAD_CREATE_ON("named", &t, NULL, note_name, &name, 0);
	void *ret = nullptr;
	STARPU_PTHREAD_JOIN(t, &ret);
	EXPECT_EQ(ret, &name);
	// The system keeps the first 15 characters.
	EXPECT_EQ(name, "astro-rest-thre");
	ASSERT_EQ(starpu_pthread_create_on("again", &t, NULL, note_name, &name, 0), 0);
	STARPU_PTHREAD_JOIN(t, NULL);

	std::string err = stderr_of([] { EXPECT_EQ(starpu_pthread_setname(nullptr), EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_pthread_setname: NULL name")) << err;
}

TEST(ThreadApi, CondTimedwaitGivesTimedOut)
{
	starpu_pthread_mutex_t m = STARPU_PTHREAD_MUTEX_INITIALIZER;
	starpu_pthread_cond_t c = STARPU_PTHREAD_COND_INITIALIZER;
	struct timespec past;
	clock_gettime(CLOCK_REALTIME, &past);
	past.tv_sec -= 1;
	STARPU_PTHREAD_MUTEX_LOCK(&m);
	EXPECT_EQ(STARPU_PTHREAD_COND_TIMEDWAIT(&c, &m, &past), ETIMEDOUT);
	STARPU_PTHREAD_MUTEX_UNLOCK(&m);
}

TEST(ThreadApi, BarrierReleasesOneSerialThread)
{
	starpu_pthread_barrier_t b;
	STARPU_PTHREAD_BARRIER_INIT(&b, NULL, 3);
	std::atomic<int> serial{0}, zero{0};
	std::vector<std::thread> threads;
	for (int i = 0; i < 3; i++)
		threads.emplace_back([&] {
			int ret = starpu_pthread_barrier_wait(&b);
			if (ret == STARPU_PTHREAD_BARRIER_SERIAL_THREAD)
				serial++;
			else if (ret == 0)
				zero++;
		});
	for (auto &t : threads)
		t.join();
	EXPECT_EQ(serial.load(), 1);
	EXPECT_EQ(zero.load(), 2);
	STARPU_PTHREAD_BARRIER_DESTROY(&b);
}

struct CheckSched
{
	starpu_pthread_mutex_t other = STARPU_PTHREAD_MUTEX_INITIALIZER;
	std::atomic<int> ran{0};
};

void check_sched_in_task(void **, void *arg)
{
	auto *c = static_cast<CheckSched *>(arg);
	starpu_pthread_mutex_t *sched_mutex;
	starpu_pthread_cond_t *sched_cond;
	starpu_worker_get_sched_condition(starpu_worker_get_id(), &sched_mutex, &sched_cond);
	char file[] = "program.c";
	starpu_pthread_mutex_check_sched(&c->other, file, 10);   // not a scheduling mutex: silent
	starpu_pthread_mutex_check_sched(sched_mutex, file, 20); // this worker's own: said
	starpu_pthread_mutex_check_sched(nullptr, file, 30);     // nothing to check
	c->ran++;
}

TEST(ThreadApi, CheckSchedSaysAWorkersSchedulingMutex)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	CheckSched c;
	starpu_codelet cl = cpu_codelet(check_sched_in_task, 0, "check_sched");
	std::string err = stderr_of([&] {
		ASSERT_EQ(submit_detached(&cl, &c), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(c.ran.load(), 1);
	EXPECT_TRUE(contains(err, "program.c:20 locks or unlocks the scheduling mutex of worker 0")) << err;
	EXPECT_FALSE(contains(err, "program.c:10")) << err;
	EXPECT_FALSE(contains(err, "program.c:30")) << err;
	// Outside the workers, no mutex is the caller's scheduling mutex.
	starpu_pthread_mutex_t *sched_mutex;
	starpu_pthread_cond_t *sched_cond;
	starpu_worker_get_sched_condition(0, &sched_mutex, &sched_cond);
	char file[] = "main.c";
	err = stderr_of([&] { starpu_pthread_mutex_check_sched(sched_mutex, file, 1); });
	EXPECT_EQ(err, "");
}

// The thread-specific data macros say a failure and go on, as StarPU's (the others abort).
TEST(ThreadApi, KeyMacrosSayFailuresWithoutAborting)
{
	starpu_pthread_key_t key;
	STARPU_PTHREAD_KEY_CREATE(&key, NULL);
	int value = 7;
	STARPU_PTHREAD_SETSPECIFIC(key, &value);
	EXPECT_EQ(STARPU_PTHREAD_GETSPECIFIC(key), &value);
	STARPU_PTHREAD_KEY_DELETE(key);
	std::string err = stderr_of([&] { STARPU_PTHREAD_KEY_DELETE(key); });
	EXPECT_TRUE(contains(err, "pthread_key_delete failed")) << err;
}

std::atomic<int> g_interruptions{0};
void count_interruption(int) { g_interruptions++; }

// The system state of thread tid of this process ('S': sleeping), '?' when unknown.
char thread_state(long tid)
{
	std::string stat = read_file("/proc/self/task/" + std::to_string(tid) + "/stat");
	size_t paren = stat.rfind(')');
	return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// A signal that interrupts starpu_sem_wait() does not end it (sem_wait() alone would give -1, EINTR).
TEST(ThreadApi, SemWaitGoesOnAfterASignal)
{
	struct sigaction sa = {}, old;
	sa.sa_handler = count_interruption;
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
	starpu_sem_t sem;
	ASSERT_EQ(starpu_sem_init(&sem, 0, 0), 0);
	std::atomic<long> tid{0};
	std::atomic<int> ret{1};
	pthread_t waiter_handle;
	std::thread waiter([&] {
		tid = (long)syscall(SYS_gettid);
		ret = starpu_sem_wait(&sem);
	});
	waiter_handle = waiter.native_handle();
	ASSERT_TRUE(wait_until([&] { return tid.load() && thread_state(tid.load()) == 'S'; }));
	g_interruptions = 0;
	pthread_kill(waiter_handle, SIGUSR2);
	ASSERT_TRUE(wait_until([] { return g_interruptions.load() > 0; }));
	EXPECT_EQ(ret.load(), 1) << "the wait ended with the signal";
	starpu_sem_post(&sem);
	waiter.join();
	EXPECT_EQ(ret.load(), 0);
	EXPECT_EQ(starpu_sem_trywait(&sem), -1);
	EXPECT_EQ(errno, EAGAIN);
	starpu_sem_post(&sem);
	EXPECT_EQ(starpu_sem_trywait(&sem), 0);
	starpu_sem_destroy(&sem);
	sigaction(SIGUSR2, &old, nullptr);
}

// A consumer waiting on two producers' queues wakes for either.
TEST(ThreadQueues, AWaitWakesForAnyQueueItIsRegisteredOn)
{
	starpu_pthread_queue_t q1, q2;
	starpu_pthread_wait_t w;
	ASSERT_EQ(starpu_pthread_queue_init(&q1), 0);
	ASSERT_EQ(starpu_pthread_queue_init(&q2), 0);
	ASSERT_EQ(starpu_pthread_wait_init(&w), 0);
	ASSERT_EQ(starpu_pthread_queue_register(&w, &q1), 0);
	ASSERT_EQ(starpu_pthread_queue_register(&w, &q2), 0);
	std::atomic<int> produced{0}, woken{0};
	std::thread consumer([&] {
		for (int seen = 0; seen < 2;) {
			starpu_pthread_wait_reset(&w);
			if (produced.load() > seen) {
				seen = produced.load();
				continue;
			}
			starpu_pthread_wait_wait(&w);
			woken++;
		}
	});
	produced = 1;
	starpu_pthread_queue_signal(&q1);
	produced = 2;
	starpu_pthread_queue_broadcast(&q2);
	consumer.join();
	// A signal with nobody blocking is kept until the next reset: the wait returns at once.
	starpu_pthread_queue_signal(&q2);
	EXPECT_EQ(starpu_pthread_wait_wait(&w), 0);
	starpu_pthread_wait_reset(&w);
	struct timespec past;
	clock_gettime(CLOCK_REALTIME, &past);
	past.tv_sec -= 1;
	EXPECT_EQ(starpu_pthread_wait_timedwait(&w, &past), ETIMEDOUT);
	starpu_pthread_queue_signal(&q1);
	EXPECT_EQ(starpu_pthread_wait_timedwait(&w, &past), 0);

	// Bad input: destroying a queue with waits on it, unregistering twice.
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_pthread_queue_destroy(&q1), EBUSY); });
	EXPECT_TRUE(contains(err, "1 waits are still registered")) << err;
	EXPECT_EQ(starpu_pthread_queue_unregister(&w, &q1), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_pthread_queue_unregister(&w, &q1), EINVAL); });
	EXPECT_TRUE(contains(err, "the wait is not registered on this queue")) << err;
	EXPECT_EQ(starpu_pthread_queue_unregister(&w, &q2), 0);
	EXPECT_EQ(starpu_pthread_queue_destroy(&q1), 0);
	EXPECT_EQ(starpu_pthread_queue_destroy(&q2), 0);
	EXPECT_EQ(starpu_pthread_wait_destroy(&w), 0);
}

// A signal wakes one blocking wait, a broadcast all of them.
TEST(ThreadQueues, SignalWakesOneBroadcastWakesAll)
{
	starpu_pthread_queue_t q;
	starpu_pthread_queue_init(&q);
	starpu_pthread_wait_t w[3];
	for (auto &x : w) {
		starpu_pthread_wait_init(&x);
		starpu_pthread_queue_register(&x, &q);
	}
	starpu_pthread_queue_signal(&q);
	int signalled = 0;
	for (auto &x : w)
		signalled += !x.block;
	EXPECT_EQ(signalled, 1);
	starpu_pthread_queue_signal(&q);
	signalled = 0;
	for (auto &x : w)
		signalled += !x.block;
	EXPECT_EQ(signalled, 2) << "a second signal went to the wait already signalled";
	starpu_pthread_queue_broadcast(&q);
	for (auto &x : w)
		EXPECT_EQ(x.block, 0u);
	for (auto &x : w) {
		starpu_pthread_queue_unregister(&x, &q);
		starpu_pthread_wait_destroy(&x);
	}
	EXPECT_EQ(starpu_pthread_queue_destroy(&q), 0);
}

// ------------------------------------------------------------------- bitmap

TEST(BitmapStruct, AProgramKeepsItsOwnBitmap)
{
	struct starpu_bitmap b;
	memset(&b, 0xff, sizeof(b)); // garbage, as on the stack
	starpu_bitmap_init(&b);
	EXPECT_EQ(starpu_bitmap_cardinal(&b), 0);
	EXPECT_EQ(b.cardinal, 0);
	EXPECT_EQ(starpu_bitmap_first(&b), -1);
	starpu_bitmap_set(&b, 5);
	starpu_bitmap_set(&b, 5); // twice: counted once
	starpu_bitmap_set(&b, STARPU_NMAXWORKERS - 1);
	EXPECT_EQ(b.cardinal, 2);
	EXPECT_EQ(b.bits[0], 1UL << 5);
	EXPECT_EQ(starpu_bitmap_last(&b), STARPU_NMAXWORKERS - 1);
	starpu_bitmap_unset(&b, 5);
	starpu_bitmap_unset(&b, 5); // twice: uncounted once
	EXPECT_EQ(starpu_bitmap_cardinal(&b), 1);
	starpu_bitmap_unset_all(&b);
	EXPECT_EQ(starpu_bitmap_cardinal(&b), 0);
	EXPECT_EQ(starpu_bitmap_last(&b), -1);
	// Every worker id, combined workers' included, fits.
	int top = STARPU_NMAXWORKERS + STARPU_NMAX_COMBINEDWORKERS - 1;
	starpu_bitmap_set(&b, top);
	EXPECT_TRUE(starpu_bitmap_get(&b, top));
	EXPECT_EQ(starpu_bitmap_next(&b, 0), top);
	EXPECT_EQ(starpu_bitmap_next(&b, top), -1);
	EXPECT_EQ(starpu_bitmap_next(&b, 1 << 30), -1);
}

TEST(BitmapStruct, ElementsOutOfRangeAreRefused)
{
	struct starpu_bitmap b;
	starpu_bitmap_init(&b);
	int past = _STARPU_BITMAP_SIZE * _STARPU_LONG_BIT;
	std::string err = stderr_of([&] { starpu_bitmap_set(&b, past); });
	EXPECT_TRUE(contains(err, "element " + std::to_string(past) + " is too large")) << err;
	err = stderr_of([&] { starpu_bitmap_set(&b, -3); });
	EXPECT_TRUE(contains(err, "element -3 is negative")) << err;
	EXPECT_EQ(starpu_bitmap_cardinal(&b), 0);
	EXPECT_FALSE(starpu_bitmap_get(&b, past));
	starpu_bitmap_unset(&b, past); // nothing to do, nothing said
	err = stderr_of([] { starpu_bitmap_init(nullptr); });
	EXPECT_TRUE(contains(err, "starpu_bitmap_init: NULL bitmap")) << err;
}

TEST(BitmapStruct, AndAndOrKeepTheCount)
{
	struct starpu_bitmap a, b, c;
	starpu_bitmap_init(&a);
	starpu_bitmap_init(&b);
	starpu_bitmap_init(&c);
	for (int e : { 1, 70, 100 })
		starpu_bitmap_set(&b, e);
	for (int e : { 70, 100, 120 })
		starpu_bitmap_set(&c, e);
	starpu_bitmap_set(&a, 3); // dropped by unset_and
	starpu_bitmap_unset_and(&a, &b, &c);
	EXPECT_EQ(starpu_bitmap_cardinal(&a), 2);
	EXPECT_EQ(starpu_bitmap_first(&a), 70);
	starpu_bitmap_or(&a, &b);
	EXPECT_EQ(starpu_bitmap_cardinal(&a), 3);
	EXPECT_TRUE(starpu_bitmap_has_next(&a, 1));
	EXPECT_FALSE(starpu_bitmap_has_next(&a, 100));
}

// --------------------------------------------------------------------- rand

TEST(RandApi, ReentrantLrandFollowsItsSeed)
{
#if !defined(STARPU_USE_DRAND48) || !defined(STARPU_USE_ERAND48_R)
	FAIL() << "starpu_config.h should say the drand48 family is used";
#endif
	ScopedEnv seed("STARPU_RAND_SEED", nullptr);
	starpu_drand48_data s1, s2;
	starpu_srand48_r(42, &s1);
	starpu_srand48_r(42, &s2);
	long a = -1, b = -2;
	for (int i = 0; i < 5; i++) {
		starpu_lrand48_r(&s1, &a);
		starpu_lrand48_r(&s2, &b);
		EXPECT_EQ(a, b);
		EXPECT_GE(a, 0);
		EXPECT_LT(a, 1L << 31);
	}
	// The same draws as the C library's with that seed.
	struct drand48_data ref;
	srand48_r(42, &ref);
	long r = 0, mine = 0;
	starpu_srand48_r(42, &s1);
	lrand48_r(&ref, &r);
	starpu_lrand48_r(&s1, &mine);
	EXPECT_EQ(mine, r);
}

// --------------------------------------------------------------- idle hooks

struct IdleRecord
{
	std::atomic<int> calls{0}, outside_workers{0}, in_task{0};
	std::atomic<unsigned> answer{1};
};

unsigned idle_call(void *arg)
{
	auto *r = static_cast<IdleRecord *>(arg);
	r->calls++;
	r->outside_workers += starpu_worker_get_id() < 0;
	r->in_task += starpu_task_get_current() != nullptr;
	return r->answer.load();
}

void count_idle_calls_during(void **, void *arg)
{
	auto *r = static_cast<IdleRecord *>(arg);
	int before = r->calls.load();
	// One worker: while it runs this task, it is not idle, so its idle hook is not called.
	for (volatile int i = 0; i < 100000; i++)
		;
	EXPECT_EQ(r->calls.load(), before);
}

TEST(IdleHooks, IdleWorkersCallThemUntilDeregistered)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	IdleRecord rec;
	int id = starpu_idle_hook_register(idle_call, &rec);
	ASSERT_GE(id, 0);
	// The registration woke the sleeping worker: it found no task and called the hook.
	ASSERT_TRUE(wait_until([&] { return rec.calls.load() > 0; }, 20000));
	starpu_codelet cl = cpu_codelet(count_idle_calls_during, 0, "busy");
	ASSERT_EQ(submit_detached(&cl, &rec), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	// Counted apart, not compared with calls: the idle worker may be inside a call between the two reads.
	EXPECT_EQ(rec.outside_workers.load(), 0) << "called outside the workers";
	EXPECT_EQ(rec.in_task.load(), 0) << "called while running a task";

	starpu_idle_hook_deregister(id);
	int after = rec.calls.load();
	for (int i = 0; i < 3; i++)
		starpu_wake_worker(0);
	ASSERT_EQ(submit_detached(&cl, &rec), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(rec.calls.load(), after) << "called after its deregistration";
}

TEST(IdleHooks, ReturningZeroKeepsTheIdleWorkerPolling)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	IdleRecord rec;
	rec.answer = 0;
	int id = starpu_idle_hook_register(idle_call, &rec);
	ASSERT_GE(id, 0);
	ASSERT_TRUE(wait_until([&] { return rec.calls.load() > 0; }, 20000));
	int from = rec.calls.load();
	// A sleeping worker would call it no more: it keeps calling without any wake-up.
	ASSERT_TRUE(wait_until([&] { return rec.calls.load() > from + 2000; }, 60000)) << "the idle worker stopped calling";
	starpu_idle_hook_deregister(id);
}

// The two kinds of hooks share their table's rules: each case runs for both.
struct HookKind
{
	const char *name, *a_name;
	int (*reg)(unsigned (*func)(void *), void *arg);
	void (*dereg)(int id);
	int (*other_reg)(unsigned (*func)(void *), void *arg);
	void (*other_dereg)(int id);
};

const HookKind kHookKinds[] = {
	{ "progression", "a progression", starpu_progression_hook_register, starpu_progression_hook_deregister,
	  starpu_idle_hook_register, starpu_idle_hook_deregister },
	{ "idle", "an idle", starpu_idle_hook_register, starpu_idle_hook_deregister,
	  starpu_progression_hook_register, starpu_progression_hook_deregister },
};

class HookBadInput : public ::testing::TestWithParam<HookKind>
{
};

struct SelfRemoving
{
	const HookKind *kind;
	std::atomic<int> id{-1}, calls{0}, register_ret{1};
};

unsigned remove_self(void *arg)
{
	auto *s = static_cast<SelfRemoving *>(arg);
	if (s->calls++ == 0) {
		s->register_ret = s->kind->reg(remove_self, arg);
		s->kind->dereg(s->id.load());
	}
	return 1;
}

// Bad input is said in one line and changes nothing; a hook may deregister itself, not register.
TEST_P(HookBadInput, IsSaid)
{
	const HookKind &k = GetParam();
	const std::string name = k.name;
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	std::string err = stderr_of([&] { EXPECT_EQ(k.reg(nullptr, nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_" + name + "_hook_register: NULL function")) << err;
	for (int bad : { -1, 16, 1000 }) {
		err = stderr_of([&] { k.dereg(bad); });
		EXPECT_TRUE(contains(err, "no " + name + " hook " + std::to_string(bad))) << err;
	}
	err = stderr_of([&] { k.dereg(3); });
	EXPECT_TRUE(contains(err, name + " hook 3 is not registered")) << err;

	// Sixteen hooks at most: the seventeenth is refused (-1, as in StarPU); the other kind still has room.
	IdleRecord rec;
	std::vector<int> ids;
	for (int i = 0; i < 16; i++) {
		ids.push_back(k.reg(idle_call, &rec));
		ASSERT_GE(ids.back(), 0);
	}
	err = stderr_of([&] { EXPECT_EQ(k.reg(idle_call, &rec), -1); });
	EXPECT_TRUE(contains(err, "all 16 " + name + " hooks are taken")) << err;
	int other = k.other_reg(idle_call, &rec);
	EXPECT_GE(other, 0);
	k.other_dereg(other);
	for (int id : ids)
		k.dereg(id);

	SelfRemoving self;
	self.kind = &k;
	err = stderr_of([&] {
		self.id = k.reg(remove_self, &self);
		ASSERT_GE(self.id.load(), 0);
		ASSERT_TRUE(wait_until([&] { return self.register_ret.load() != 1; }, 20000));
		starpu_task_wait_for_all();
	});
	EXPECT_EQ(self.register_ret.load(), -EDEADLK);
	EXPECT_TRUE(contains(err, "starpu_" + name + "_hook_register: called from " + k.a_name + " hook")) << err;
	int calls = self.calls.load();
	for (int i = 0; i < 3; i++)
		starpu_wake_worker(0);
	starpu_codelet cl = cpu_codelet(count_idle_calls_during, 0, "after_self_removal");
	IdleRecord unused;
	ASSERT_EQ(submit_detached(&cl, &unused), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(self.calls.load(), calls) << "a hook that deregistered itself was called again";
}

INSTANTIATE_TEST_SUITE_P(BothKinds, HookBadInput, ::testing::ValuesIn(kHookKinds),
			 [](const ::testing::TestParamInfo<HookKind> &info) { return std::string(info.param.name); });

// --------------------------------------------------------------------- disk

TEST(DiskBackends, NotBuiltOnesAreRefusedWithTheirName)
{
	TempDir dir;
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_disk_register(&starpu_disk_hdf5_ops, (void *)dir.path().c_str(), -1), -ENOSYS);
	});
	EXPECT_TRUE(contains(err, "starpu_disk_hdf5_ops (HDF5) back-end is not built")) << err;
	EXPECT_TRUE(contains(err, "starpu_disk_unistd_ops")) << err;
	err = stderr_of([&] {
		EXPECT_EQ(starpu_disk_register(&starpu_disk_leveldb_ops, (void *)dir.path().c_str(), -1), -ENOSYS);
	});
	EXPECT_TRUE(contains(err, "starpu_disk_leveldb_ops (LevelDB) back-end is not built")) << err;
	// With a runtime too: nothing is plugged, no node is added.
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	unsigned nodes = starpu_memory_nodes_get_count();
	err = stderr_of([&] {
		EXPECT_EQ(starpu_disk_register(&starpu_disk_hdf5_ops, (void *)dir.path().c_str(), STARPU_DISK_SIZE_MIN), -ENOSYS);
	});
	EXPECT_TRUE(contains(err, "not built")) << err;
	EXPECT_EQ(starpu_memory_nodes_get_count(), nodes);
}

} // namespace
