/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transactions: sequences (epochs) of submitted tasks that a start function,
 * evaluated just before the epoch starts, lets run or cancels. A transaction
 * owns a variable handle; every task of the transaction reads it (the access
 * is appended at submission, tasks/transaction.c), and the transaction's own
 * tasks write it: the begin task (STARPU_W) decides the first epoch, a
 * next-epoch task (STARPU_RW) ends an epoch and decides the next one, the end
 * task (STARPU_RW) ends the last. So an epoch's tasks run after its decision,
 * side by side, and before the next epoch's decision.
 */
#include "access/access.h"

static void decide(struct starpu_transaction *trs, struct _starpu_trs_epoch *epoch)
{
	int proceed = trs->do_start_func ? trs->do_start_func(NULL, epoch->do_start_arg) : 1;
	__atomic_store_n(&epoch->state, proceed ? _ASTRO_EPOCH_CONFIRMED : _ASTRO_EPOCH_CANCELLED, __ATOMIC_RELEASE);
}

static void begin_func(void *buffers[], void *arg)
{
	(void)buffers;
	struct starpu_transaction *trs = arg;
	starpu_pthread_mutex_lock(&trs->lock);
	struct _starpu_trs_epoch *first = trs->first;
	starpu_pthread_mutex_unlock(&trs->lock);
	decide(trs, first);
}

static void next_epoch_func(void *buffers[], void *arg)
{
	(void)buffers;
	struct starpu_transaction *trs = arg;
	starpu_pthread_mutex_lock(&trs->lock);
	struct _starpu_trs_epoch *ended = trs->first;
	trs->first = ended->next;
	struct _starpu_trs_epoch *next = trs->first;
	starpu_pthread_mutex_unlock(&trs->lock);
	free(ended); /* its tasks have all ended: they read the handle this task writes */
	decide(trs, next);
}

static void end_func(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_codelet begin_cl = {
	.where = STARPU_CPU, .cpu_funcs = {begin_func}, .nbuffers = 1, .modes = {STARPU_W}, .name = "starpu_transaction_begin",
};
static struct starpu_codelet next_epoch_cl = {
	.where = STARPU_CPU, .cpu_funcs = {next_epoch_func}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "starpu_transaction_next_epoch",
};
static struct starpu_codelet end_cl = {
	.where = STARPU_CPU, .cpu_funcs = {end_func}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "starpu_transaction_end",
};

static void transaction_free(void *arg)
{
	struct starpu_transaction *trs = arg;
	starpu_data_unregister_submit(trs->handle);
	while (trs->first) {
		struct _starpu_trs_epoch *epoch = trs->first;
		trs->first = epoch->next;
		free(epoch);
	}
	starpu_pthread_mutex_destroy(&trs->lock);
	free(trs);
}

static struct _starpu_trs_epoch *epoch_new(void *do_start_arg)
{
	struct _starpu_trs_epoch *epoch = calloc(1, sizeof(*epoch));
	if (epoch)
		epoch->do_start_arg = do_start_arg;
	return epoch;
}

/* Submits a task of cl on the transaction's handle; callback: run once it ended (NULL: none). */
static int submit_own_task(struct starpu_transaction *trs, struct starpu_codelet *cl, void (*callback)(void *))
{
	struct starpu_task *task = starpu_task_create();
	if (!task)
		return -ENOMEM;
	task->cl = cl;
	task->cl_arg = trs;
	task->handles[0] = trs->handle;
	task->callback_func = callback;
	task->callback_arg = trs;
	int ret = starpu_task_submit(task);
	if (ret) {
		task->destroy = 0;
		starpu_task_destroy(task);
	}
	return ret;
}

struct starpu_transaction *starpu_transaction_open(int (*do_start_func)(void *buffer, void *arg), void *do_start_arg)
{
	struct starpu_transaction *trs = calloc(1, sizeof(*trs));
	struct _starpu_trs_epoch *epoch = epoch_new(do_start_arg);
	if (!trs || !epoch) {
		_astro_error("starpu_transaction_open: out of memory");
		free(trs);
		free(epoch);
		return NULL;
	}
	starpu_pthread_mutex_init(&trs->lock, NULL);
	trs->do_start_func = do_start_func;
	trs->first = trs->last = epoch;
	/* No home: nothing of the application's is behind it, and nothing to write back once it is freed. */
	starpu_variable_data_register(&trs->handle, -1, 0, sizeof(int));
	int ret = submit_own_task(trs, &begin_cl, NULL);
	if (ret) {
		_astro_error("starpu_transaction_open: its begin task was refused (%d)%s", ret,
			     ret == -ENODEV ? ": a transaction's own tasks need a CPU worker" : "");
		starpu_data_unregister(trs->handle);
		starpu_pthread_mutex_destroy(&trs->lock);
		free(epoch);
		free(trs);
		return NULL;
	}
	return trs;
}

/* Whether trs can take more (caller: the function named in messages). */
static bool usable(struct starpu_transaction *trs, const char *caller)
{
	if (!trs) {
		_astro_error("%s: NULL transaction: pass what starpu_transaction_open() returned", caller);
		return false;
	}
	starpu_pthread_mutex_lock(&trs->lock);
	bool closed = trs->closed;
	starpu_pthread_mutex_unlock(&trs->lock);
	if (closed)
		_astro_error("%s: the transaction is closed (starpu_transaction_close() was called): open another one", caller);
	return !closed;
}

void starpu_transaction_next_epoch(struct starpu_transaction *p_trs, void *do_start_arg)
{
	if (!usable(p_trs, "starpu_transaction_next_epoch"))
		return;
	struct _starpu_trs_epoch *epoch = epoch_new(do_start_arg);
	if (!epoch) {
		_astro_error("starpu_transaction_next_epoch: out of memory: the tasks that follow stay in the current epoch");
		return;
	}
	starpu_pthread_mutex_lock(&p_trs->lock);
	p_trs->last->next = epoch;
	p_trs->last = epoch;
	starpu_pthread_mutex_unlock(&p_trs->lock);
	int ret = submit_own_task(p_trs, &next_epoch_cl, NULL);
	STARPU_ASSERT_MSG(ret == 0, "starpu_transaction_next_epoch: its task was refused (%d), while the begin task was not", ret);
}

void starpu_transaction_close(struct starpu_transaction *p_trs)
{
	if (!usable(p_trs, "starpu_transaction_close"))
		return;
	starpu_pthread_mutex_lock(&p_trs->lock);
	p_trs->closed = true;
	starpu_pthread_mutex_unlock(&p_trs->lock);
	int ret = submit_own_task(p_trs, &end_cl, transaction_free);
	STARPU_ASSERT_MSG(ret == 0, "starpu_transaction_close: its task was refused (%d), while the begin task was not", ret);
}

