/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Doubly-linked lists of tasks through their prev/next fields. */
#ifndef __STARPU_TASK_LIST_H__
#define __STARPU_TASK_LIST_H__

#include <starpu_task.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A list of tasks, linked through task->prev and task->next. */
struct starpu_task_list
{
	struct starpu_task *head;
	struct starpu_task *tail;
};

/** Makes list empty. */
static inline void starpu_task_list_init(struct starpu_task_list *list)
{
	list->head = NULL;
	list->tail = NULL;
}

/** Adds task at the front of list. */
static inline void starpu_task_list_push_front(struct starpu_task_list *list, struct starpu_task *task)
{
	task->prev = NULL;
	task->next = list->head;
	if (list->head)
		list->head->prev = task;
	else
		list->tail = task;
	list->head = task;
}

/** Adds task at the back of list. */
static inline void starpu_task_list_push_back(struct starpu_task_list *list, struct starpu_task *task)
{
	task->next = NULL;
	task->prev = list->tail;
	if (list->tail)
		list->tail->next = task;
	else
		list->head = task;
	list->tail = task;
}

/** First task, NULL when empty. */
static inline struct starpu_task *starpu_task_list_front(const struct starpu_task_list *list) { return list->head; }
/** Last task, NULL when empty. */
static inline struct starpu_task *starpu_task_list_back(const struct starpu_task_list *list) { return list->tail; }
/** 1 when list is empty. */
static inline int starpu_task_list_empty(const struct starpu_task_list *list) { return list->head == NULL; }

/** Removes task (which must be in list). */
static inline void starpu_task_list_erase(struct starpu_task_list *list, struct starpu_task *task)
{
	if (task->prev)
		task->prev->next = task->next;
	else
		list->head = task->next;
	if (task->next)
		task->next->prev = task->prev;
	else
		list->tail = task->prev;
	task->prev = task->next = NULL;
}

/** Removes and returns the first task, NULL when empty. */
static inline struct starpu_task *starpu_task_list_pop_front(struct starpu_task_list *list)
{
	struct starpu_task *task = list->head;
	if (task)
		starpu_task_list_erase(list, task);
	return task;
}

/** Removes and returns the last task, NULL when empty. */
static inline struct starpu_task *starpu_task_list_pop_back(struct starpu_task_list *list)
{
	struct starpu_task *task = list->tail;
	if (task)
		starpu_task_list_erase(list, task);
	return task;
}

/** Iteration: for (t = begin(l); t != end(l); t = next(t)). */
static inline struct starpu_task *starpu_task_list_begin(const struct starpu_task_list *list) { return list->head; }
/** Iteration end for starpu_task_list_begin()/starpu_task_list_next(): NULL. */
static inline struct starpu_task *starpu_task_list_end(const struct starpu_task_list *list) { (void)list; return NULL; }
/** The task after task in its list, NULL at the end. */
static inline struct starpu_task *starpu_task_list_next(const struct starpu_task *task) { return task->next; }

/** 1 when task is in list (linear search). */
static inline int starpu_task_list_ismember(const struct starpu_task_list *list, const struct starpu_task *look)
{
	struct starpu_task *task;
	for (task = list->head; task; task = task->next)
		if (task == look)
			return 1;
	return 0;
}

/** Moves every task of lsrc to the (empty) ldst. */
static inline void starpu_task_list_move(struct starpu_task_list *ldst, struct starpu_task_list *lsrc)
{
	ldst->head = lsrc->head;
	ldst->tail = lsrc->tail;
	lsrc->head = lsrc->tail = NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_TASK_LIST_H__ */
