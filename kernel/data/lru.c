/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The least-recently-used lists of the copies on each memory node (the
 * lists' heads are the memory room's nodes): a copy used is moved to the
 * tail, a copy freed leaves; eviction (evict.c) takes from the head.
 */
#include "data/data.h"

void _astro_lru_touch(struct _astro_replicate *r)
{
	struct _astro_memory_node *n = &_astro_nodes[r->node];
	starpu_pthread_mutex_lock(&n->lru_lock);
	if (r->in_lru) {
		if (n->lru_tail == r) {
			starpu_pthread_mutex_unlock(&n->lru_lock);
			return;
		}
		if (r->lru_prev)
			r->lru_prev->lru_next = r->lru_next;
		else
			n->lru_head = r->lru_next;
		r->lru_next->lru_prev = r->lru_prev;
	}
	r->lru_prev = n->lru_tail;
	r->lru_next = NULL;
	if (n->lru_tail)
		n->lru_tail->lru_next = r;
	else
		n->lru_head = r;
	n->lru_tail = r;
	r->in_lru = true;
	starpu_pthread_mutex_unlock(&n->lru_lock);
}

void _astro_lru_remove(struct _astro_replicate *r)
{
	struct _astro_memory_node *n = &_astro_nodes[r->node];
	starpu_pthread_mutex_lock(&n->lru_lock);
	if (r->in_lru) {
		if (r->lru_prev)
			r->lru_prev->lru_next = r->lru_next;
		else
			n->lru_head = r->lru_next;
		if (r->lru_next)
			r->lru_next->lru_prev = r->lru_prev;
		else
			n->lru_tail = r->lru_prev;
		r->lru_prev = r->lru_next = NULL;
		r->in_lru = false;
	}
	starpu_pthread_mutex_unlock(&n->lru_lock);
}
