/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calling thread's context (common/context.h): the worker it is, the task
 * it runs, and what the runtime called it for, so that a blocking or
 * terminal call made from a task, a callback, a tool callback or a counter
 * listener is refused with a message instead of deadlocking.
 */
#include "common/common.h"

_ASTRO_TLS struct _astro_worker *_astro_self;
_ASTRO_TLS struct starpu_task *_astro_current_task;
_ASTRO_TLS enum _astro_call_context _astro_call_context;

/* Where the calling thread is, as the messages name it; NULL in the application's own code. */
static const char *called_back_from(void)
{
	switch (_astro_call_context) {
	case _ASTRO_CTX_CALLBACK:
		return "a callback";
	case _ASTRO_CTX_TOOL:
		return "a tool callback";
	case _ASTRO_CTX_LISTENER:
		return "a counter listener";
	case _ASTRO_CTX_APPLICATION:
		break;
	}
	if (_astro_self)
		return _astro_current_task ? "a task" : "a worker thread";
	return NULL;
}

bool _astro_called_back(void)
{
	return called_back_from() != NULL;
}

int _astro_forbid_blocking_here(const char *call, const char *hint)
{
	const char *where = called_back_from();
	if (!where)
		return 0;
	_astro_error("%s cannot be called from %s: it would wait for the runtime, which waits for it to return (deadlock); %s",
		     call, where, hint ? hint : "call it from the application's own code");
	return -EDEADLK;
}

/* ------------------------------------------------------------ registrant */

struct _astro_registrant *_astro_registrant;

char *_astro_plugin_initialising(bool refused)
{
	if (!_astro_registrant)
		return NULL;
	if (refused)
		_astro_registrant->refused = true;
	return g_strdup_printf("plugin %s (%s)", _astro_registrant->name, _astro_registrant->path);
}
