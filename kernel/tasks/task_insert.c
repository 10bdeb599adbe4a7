/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_task_insert() and the codelet-argument packing helpers, written
 * against the public headers only.
 *
 * A packed codelet argument is: int nargs, then for each value a size_t
 * size followed by that many bytes. Nothing in it is aligned, so every
 * field is read and written with memcpy. */
#include "tasks/tasks.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PACK_HEADER_SIZE sizeof(int)

typedef void (*callback_t)(void *);

/* ------------------------------------------------------------- packing */

/* Appends one value; 0, -EINVAL for a NULL pointer with a size, -ENOMEM. */
static int pack_append(struct starpu_codelet_pack_arg_data *state, const void *ptr, size_t size)
{
	size_t need, cap;

	if (!ptr && size)
		return -EINVAL;
	if (size > SIZE_MAX - sizeof(size_t) - state->arg_buffer_used)
		return -ENOMEM;
	need = state->arg_buffer_used + sizeof(size_t) + size;
	if (need > state->arg_buffer_size)
	{
		char *buffer;
		cap = state->arg_buffer_size ? state->arg_buffer_size : 64;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		buffer = realloc(state->arg_buffer, cap);
		if (!buffer)
			return -ENOMEM;
		state->arg_buffer = buffer;
		state->arg_buffer_size = cap;
	}
	memcpy(state->arg_buffer + state->arg_buffer_used, &size, sizeof(size));
	state->arg_buffer_used += sizeof(size);
	if (size)
		memcpy(state->arg_buffer + state->arg_buffer_used, ptr, size);
	state->arg_buffer_used += size;
	state->nargs++;
	return 0;
}

void starpu_codelet_pack_arg_init(struct starpu_codelet_pack_arg_data *state)
{
	memset(state, 0, sizeof(*state));
	state->arg_buffer_used = PACK_HEADER_SIZE;
	state->current_offset = PACK_HEADER_SIZE;
}

void starpu_codelet_pack_arg(struct starpu_codelet_pack_arg_data *state, const void *ptr, size_t ptr_size)
{
	int ret;

	if (state->nargs < 0) /* an earlier value could not be packed */
		return;
	ret = pack_append(state, ptr, ptr_size);
	if (ret == 0)
		return;
	if (ret == -EINVAL)
		_astro_error("starpu_codelet_pack_arg: value %d is a NULL pointer with size %zu: nothing packed",
			state->nargs, ptr_size);
	else
		_astro_error("starpu_codelet_pack_arg: out of memory packing value %d (%zu bytes): the buffer is dropped",
			state->nargs, ptr_size);
	/* A buffer with a value missing would be unpacked into the wrong
	 * variables: drop it, so that fini hands out nothing. */
	free(state->arg_buffer);
	state->arg_buffer = NULL;
	state->arg_buffer_size = 0;
	state->nargs = -1;
}

void starpu_codelet_pack_arg_fini(struct starpu_codelet_pack_arg_data *state, void **cl_arg, size_t *cl_arg_size)
{
	if (state->nargs > 0)
	{
		memcpy(state->arg_buffer, &state->nargs, sizeof(state->nargs));
		*cl_arg = state->arg_buffer;
		*cl_arg_size = state->arg_buffer_used;
	}
	else
	{
		free(state->arg_buffer);
		*cl_arg = NULL;
		*cl_arg_size = 0;
	}
	state->arg_buffer = NULL;
	state->arg_buffer_size = 0;
}

/* ----------------------------------------------------------- unpacking */

/* While unpacking, nargs counts the values left and arg_buffer_used the
 * values already read (for messages). */
static void unpack_init(struct starpu_codelet_pack_arg_data *state, const char *caller, void *cl_arg, size_t cl_arg_size)
{
	memset(state, 0, sizeof(*state));
	state->arg_buffer = cl_arg;
	state->arg_buffer_size = cl_arg_size;
	state->current_offset = PACK_HEADER_SIZE;
	if (cl_arg && cl_arg_size >= PACK_HEADER_SIZE)
		memcpy(&state->nargs, cl_arg, sizeof(state->nargs));
	if (state->nargs < 0)
	{
		_astro_error("%s: the buffer announces %d values: it was not made by starpu_codelet_pack_arg*() or STARPU_VALUE",
			caller, state->nargs);
		state->nargs = 0;
	}
}

/* Locates the next value; 0, or -1 (reported) when none is left. */
static int unpack_next(struct starpu_codelet_pack_arg_data *state, const char *caller, void **data, size_t *size)
{
	size_t left;

	if (state->nargs <= 0)
	{
		_astro_error("%s: no value left to unpack: the buffer held %zu values",
			caller, state->arg_buffer_used);
		return -1;
	}
	left = state->arg_buffer_size - state->current_offset;
	if (state->current_offset > state->arg_buffer_size || left < sizeof(size_t))
		goto truncated;
	memcpy(size, state->arg_buffer + state->current_offset, sizeof(*size));
	if (*size > left - sizeof(size_t))
		goto truncated;
	*data = state->arg_buffer + state->current_offset + sizeof(size_t);
	state->current_offset += sizeof(size_t) + *size;
	state->nargs--;
	state->arg_buffer_used++;
	return 0;

truncated:
	_astro_error("%s: value %zu runs past the end of the %zu-byte buffer: is cl_arg_size right?",
		caller, state->arg_buffer_used, state->arg_buffer_size);
	state->nargs = 0;
	return -1;
}

void starpu_codelet_unpack_arg_init(struct starpu_codelet_pack_arg_data *state, void *cl_arg, size_t cl_arg_size)
{
	unpack_init(state, "starpu_codelet_unpack_arg_init", cl_arg, cl_arg_size);
}

void starpu_codelet_unpack_arg(struct starpu_codelet_pack_arg_data *state, void *ptr, size_t size)
{
	void *data;
	size_t data_size;

	if (unpack_next(state, "starpu_codelet_unpack_arg", &data, &data_size))
		return;
	if (data_size != size)
	{
		_astro_error("starpu_codelet_unpack_arg: value %zu was packed with %zu bytes but %zu are asked: check the order and types of the values",
			state->arg_buffer_used - 1, data_size, size);
		if (size > data_size)
			memset((char *)ptr + data_size, 0, size - data_size);
	}
	memcpy(ptr, data, data_size < size ? data_size : size);
}

void starpu_codelet_dup_arg(struct starpu_codelet_pack_arg_data *state, void **ptr, size_t *size)
{
	void *data;

	*ptr = NULL;
	if (unpack_next(state, "starpu_codelet_dup_arg", &data, size))
	{
		*size = 0;
		return;
	}
	*ptr = malloc(*size ? *size : 1);
	if (!*ptr)
	{
		_astro_error("starpu_codelet_dup_arg: out of memory copying a %zu-byte value", *size);
		*size = 0;
		return;
	}
	memcpy(*ptr, data, *size);
}

void starpu_codelet_pick_arg(struct starpu_codelet_pack_arg_data *state, void **ptr, size_t *size)
{
	if (unpack_next(state, "starpu_codelet_pick_arg", ptr, size))
	{
		*ptr = NULL;
		*size = 0;
	}
}

void starpu_codelet_unpack_discard_arg(struct starpu_codelet_pack_arg_data *state)
{
	void *data;
	size_t size;
	unpack_next(state, "starpu_codelet_unpack_discard_arg", &data, &size);
}

void starpu_codelet_unpack_arg_fini(struct starpu_codelet_pack_arg_data *state)
{
	state->arg_buffer = NULL;
	state->arg_buffer_size = 0;
	state->nargs = 0;
}

/* Copies values into the pointers of ap until a NULL pointer or the end
 * of the buffer. The buffer size is unknown to the variadic forms. */
static void unpack_into_pointers(struct starpu_codelet_pack_arg_data *state, const char *caller, va_list ap)
{
	while (state->nargs > 0)
	{
		void *dst = va_arg(ap, void *);
		void *data;
		size_t size;

		if (!dst || unpack_next(state, caller, &data, &size))
			break;
		memcpy(dst, data, size);
	}
}

void starpu_codelet_unpack_args(void *cl_arg, ...)
{
	struct starpu_codelet_pack_arg_data state;
	va_list ap;

	unpack_init(&state, "starpu_codelet_unpack_args", cl_arg, cl_arg ? SIZE_MAX : 0);
	va_start(ap, cl_arg);
	unpack_into_pointers(&state, "starpu_codelet_unpack_args", ap);
	va_end(ap);
}

void starpu_codelet_unpack_args_and_copyleft(void *cl_arg, void *buffer, size_t buffer_size, ...)
{
	struct starpu_codelet_pack_arg_data state;
	size_t start, end;
	int left, i;
	va_list ap;

	unpack_init(&state, "starpu_codelet_unpack_args_and_copyleft", cl_arg, cl_arg ? SIZE_MAX : 0);
	va_start(ap, buffer_size);
	unpack_into_pointers(&state, "starpu_codelet_unpack_args_and_copyleft", ap);
	va_end(ap);
	if (buffer_size < PACK_HEADER_SIZE)
	{
		if (buffer_size)
			_astro_error("starpu_codelet_unpack_args_and_copyleft: a %zu-byte buffer cannot hold even the value count: nothing copied",
				buffer_size);
		return;
	}

	/* The values left become a packed buffer of their own. */
	left = state.nargs;
	start = end = state.current_offset;
	for (i = 0; i < left; i++)
	{
		size_t size;
		memcpy(&size, (char *)cl_arg + end, sizeof(size));
		end += sizeof(size) + size;
	}
	if (buffer_size < PACK_HEADER_SIZE + (end - start))
	{
		_astro_error("starpu_codelet_unpack_args_and_copyleft: the %zu-byte buffer cannot hold the %d values left (%zu bytes needed): none copied",
			buffer_size, left, PACK_HEADER_SIZE + (end - start));
		left = 0;
		end = start;
	}
	memcpy(buffer, &left, sizeof(left));
	if (end > start)
		memcpy((char *)buffer + PACK_HEADER_SIZE, (char *)cl_arg + start, end - start);
}

/* ---------------------------------------------------- argument parsing */

/* A dependency list given with STARPU_TASK_(END_)DEPS_ARRAY, applied once
 * the argument list is known to be valid. */
struct dep_request
{
	struct starpu_task **tasks;
	unsigned ntasks;
	int end;
};

struct insert_args
{
	const char *caller;       /* the public function, for messages */
	struct starpu_codelet *cl;
	int values_only;          /* starpu_codelet_pack_args(): only STARPU_VALUE counts */
	int nparsed;              /* argument kinds read so far */

	struct starpu_codelet_pack_arg_data values;
	int has_values;
	int has_cl_args;

	starpu_data_handle_t *handles;
	enum starpu_data_access_mode *modes;
	unsigned nhandles, handles_capacity;
	starpu_data_handle_t inline_handles[STARPU_NMAXBUFS];
	enum starpu_data_access_mode inline_modes[STARPU_NMAXBUFS];

	struct dep_request *deps;
	unsigned ndeps, deps_capacity;
	int end_deps;             /* sum of the STARPU_TASK_END_DEP counts */
	struct astro_mpi_task_args *mpi; /* receives the MPI-only kinds (astro_task_build_v), NULL: ignored */
};

static const char *cl_name(const struct starpu_codelet *cl)
{
	if (!cl)
		return "(NULL)";
	return cl->name ? cl->name : "(unnamed)";
}

/* "STARPU_RW|STARPU_COMMUTE" */
static const char *mode_name(enum starpu_data_access_mode mode, char *buf, size_t len)
{
	static const struct { int bits; const char *name; } names[] = {
		{ STARPU_RW, "STARPU_RW" }, { STARPU_R, "STARPU_R" }, { STARPU_W, "STARPU_W" },
		{ STARPU_SCRATCH, "STARPU_SCRATCH" }, { STARPU_REDUX, "STARPU_REDUX" },
		{ STARPU_COMMUTE, "STARPU_COMMUTE" }, { STARPU_SSEND, "STARPU_SSEND" },
		{ STARPU_LOCALITY, "STARPU_LOCALITY" }, { STARPU_MPI_REDUX, "STARPU_MPI_REDUX" },
		{ STARPU_NOPLAN, "STARPU_NOPLAN" }, { STARPU_UNMAP, "STARPU_UNMAP" },
		{ STARPU_NOFOOTPRINT, "STARPU_NOFOOTPRINT" },
	};
	int rest = mode;
	size_t used = 0;

	if (mode == STARPU_NONE)
	{
		snprintf(buf, len, "STARPU_NONE");
		return buf;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && used < len; i++)
		if ((rest & names[i].bits) == names[i].bits)
		{
			used += snprintf(buf + used, len - used, "%s%s", used ? "|" : "", names[i].name);
			rest &= ~names[i].bits;
		}
	if (!used)
		snprintf(buf, len, "0x%x", (unsigned)mode);
	return buf;
}

static int is_access_mode(int kind)
{
	return kind > 0 && (kind & ~(STARPU_ACCESS_MODE_MAX - 1)) == 0;
}

static int add_handle(struct insert_args *a, starpu_data_handle_t handle, enum starpu_data_access_mode mode, int mode_from_codelet)
{
	struct starpu_codelet *cl = a->cl;
	unsigned i = a->nhandles;
	enum starpu_data_access_mode *slot;
	char given[128], declared[128];

	if (!cl)
	{
		_astro_error("%s: a data handle was given for a task without codelet: such a task takes no data", a->caller);
		return -EINVAL;
	}
	/* StarPU-MPI lets a rank pass NULL for data it does not hold; mpi/task_insert.c judges it. */
	if (!handle && !a->mpi)
	{
		_astro_error("%s: buffer %u of codelet '%s' is a NULL handle", a->caller, i, cl_name(cl));
		return -EINVAL;
	}
	if (!mode_from_codelet && !is_access_mode((int)mode))
	{
		_astro_error("%s: buffer %u of codelet '%s' has no valid access mode (%s)",
			a->caller, i, cl_name(cl), mode_name(mode, given, sizeof(given)));
		return -EINVAL;
	}
	if (cl->nbuffers != STARPU_VARIABLE_NBUFFERS && (cl->nbuffers < 0 || i >= (unsigned)cl->nbuffers))
	{
		_astro_error("%s: codelet '%s' declares nbuffers = %d but more handles were given",
			a->caller, cl_name(cl), cl->nbuffers);
		return -EINVAL;
	}

	slot = _astro_codelet_mode_slot(cl, i);
	if (mode_from_codelet)
	{
		mode = slot ? *slot : STARPU_NONE;
		if (mode == STARPU_NONE)
		{
			_astro_error("%s: STARPU_DATA_ARRAY takes the access modes from codelet '%s', which gives none for buffer %u: set cl->modes or use STARPU_DATA_MODE_ARRAY",
				a->caller, cl_name(cl), i);
			return -EINVAL;
		}
	}
	else if (cl->nbuffers != STARPU_VARIABLE_NBUFFERS && slot)
	{
		/* A codelet that leaves a mode unset adopts the first one it is
		 * given, as StarPU does; the exchange keeps racing inserts honest. */
		/* StarPU-MPI's STARPU_MPI_REDUX runs on each rank as STARPU_RW|STARPU_COMMUTE (mpi/redux.c). */
		/* STARPU_SSEND says how StarPU-MPI sends the data, not how the task accesses it. */
		int local = a->mpi && mode == STARPU_MPI_REDUX ? (int)(STARPU_RW | STARPU_COMMUTE) : (int)(mode & ~STARPU_SSEND);
		int expected = __atomic_load_n((int *)slot, __ATOMIC_ACQUIRE);
		if (expected == STARPU_NONE)
			__atomic_compare_exchange_n((int *)slot, &expected, local, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		if (expected != STARPU_NONE && expected != local)
		{
			_astro_error("%s: codelet '%s' declares access mode %s for buffer %u but %s was given: make them match, or give the codelet nbuffers = STARPU_VARIABLE_NBUFFERS",
				a->caller, cl_name(cl), mode_name((enum starpu_data_access_mode)expected, declared, sizeof(declared)), i,
				mode_name(mode, given, sizeof(given)));
			return -EINVAL;
		}
	}

	if (i == a->handles_capacity)
	{
		unsigned capacity = 2 * a->handles_capacity;
		starpu_data_handle_t *handles = malloc(capacity * sizeof(*handles));
		enum starpu_data_access_mode *modes = malloc(capacity * sizeof(*modes));
		if (!handles || !modes)
		{
			free(handles);
			free(modes);
			_astro_error("%s: out of memory for %u handles", a->caller, capacity);
			return -ENOMEM;
		}
		memcpy(handles, a->handles, i * sizeof(*handles));
		memcpy(modes, a->modes, i * sizeof(*modes));
		if (a->handles != a->inline_handles)
		{
			free(a->handles);
			free(a->modes);
		}
		a->handles = handles;
		a->modes = modes;
		a->handles_capacity = capacity;
	}
	a->handles[i] = handle;
	a->modes[i] = mode;
	a->nhandles++;
	return 0;
}

static int add_deps(struct insert_args *a, unsigned ntasks, struct starpu_task **tasks, int end)
{
	if (ntasks && !tasks)
	{
		_astro_error("%s: %s of %u tasks is a NULL array (codelet '%s')", a->caller,
			end ? "STARPU_TASK_END_DEPS_ARRAY" : "STARPU_TASK_DEPS_ARRAY", ntasks, cl_name(a->cl));
		return -EINVAL;
	}
	if (!ntasks || a->values_only)
		return 0;
	if (a->ndeps == a->deps_capacity)
	{
		unsigned capacity = a->deps_capacity ? 2 * a->deps_capacity : 4;
		struct dep_request *deps = realloc(a->deps, capacity * sizeof(*deps));
		if (!deps)
		{
			_astro_error("%s: out of memory for task dependencies", a->caller);
			return -ENOMEM;
		}
		a->deps = deps;
		a->deps_capacity = capacity;
	}
	a->deps[a->ndeps++] = (struct dep_request){ tasks, ntasks, end };
	return 0;
}

static int values_conflict(struct insert_args *a)
{
	_astro_error("%s: STARPU_VALUE and STARPU_CL_ARGS both set the argument of codelet '%s': use only one of them",
		a->caller, cl_name(a->cl));
	return -EINVAL;
}

static int add_value(struct insert_args *a, const void *ptr, size_t size)
{
	int ret;

	if (a->has_cl_args)
		return values_conflict(a);
	ret = pack_append(&a->values, ptr, size);
	if (ret == -EINVAL)
		_astro_error("%s: STARPU_VALUE %d of codelet '%s' is a NULL pointer with size %zu",
			a->caller, a->values.nargs, cl_name(a->cl), size);
	else if (ret == -ENOMEM)
		_astro_error("%s: out of memory packing STARPU_VALUE %d (%zu bytes)",
			a->caller, a->values.nargs, size);
	a->has_values = 1;
	return ret;
}

/* STARPU_CL_ARGS(_NFREE): arg becomes the task's codelet argument, which
 * STARPU_VALUE cannot set too. */
static int set_cl_args(struct insert_args *a, struct starpu_task *task, void *arg, size_t size, int free_it)
{
	task->cl_arg = arg;
	task->cl_arg_size = size;
	task->cl_arg_free = free_it;
	if (a->values_only)
		return 0;
	a->has_cl_args = 1;
	return a->has_values ? values_conflict(a) : 0;
}

/* STARPU_DATA_ARRAY (count handles, their modes from the codelet) or, when
 * modes_given, STARPU_DATA_MODE_ARRAY (count struct starpu_data_descr). */
static int add_data_array(struct insert_args *a, int modes_given, void *array, int count)
{
	if (a->values_only)
		return 0;
	if (count < 0 || (count && !array))
	{
		_astro_error("%s: %s of %d handles at %p is not a valid array (codelet '%s')",
			a->caller, modes_given ? "STARPU_DATA_MODE_ARRAY" : "STARPU_DATA_ARRAY", count, array, cl_name(a->cl));
		return -EINVAL;
	}
	int ret = 0;
	for (int i = 0; ret == 0 && i < count; i++)
	{
		if (modes_given)
		{
			struct starpu_data_descr *descr = &((struct starpu_data_descr *)array)[i];
			ret = add_handle(a, descr->handle, descr->mode, 0);
		}
		else
			ret = add_handle(a, ((starpu_data_handle_t *)array)[i], STARPU_NONE, 1);
	}
	return ret;
}

/* STARPU_EXECUTE_ON_WORKER: -1 leaves the choice to the scheduler. */
static inline void execute_on_worker(struct starpu_task *task, int worker)
{
	if (worker != -1)
	{
		task->workerid = (unsigned)worker;
		task->execute_on_a_specific_worker = 1;
	}
}

/* STARPU_BUBBLE_*: hierarchical DAGs exist only in StarPU builds with --enable-bubble (STARPU_BUBBLE),
 * which this runtime is not; StarPU without it aborts on them. */
static int bubble_kind(struct insert_args *a, int kind)
{
	static const char *const names[] = { "STARPU_BUBBLE_FUNC", "STARPU_BUBBLE_FUNC_ARG", "STARPU_BUBBLE_GEN_DAG_FUNC",
					     "STARPU_BUBBLE_GEN_DAG_FUNC_ARG", "STARPU_BUBBLE_PARENT" };
	_astro_error("%s: %s%s%s%s: hierarchical DAGs (bubbles) need a StarPU built with --enable-bubble, which this runtime is not: "
		     "insert the task without the bubble arguments (it then runs whole)",
		     a->caller, names[(kind - STARPU_BUBBLE_FUNC) / (STARPU_BUBBLE_FUNC_ARG - STARPU_BUBBLE_FUNC)],
		     a->values_only ? "" : " for codelet '", a->values_only ? "" : cl_name(a->cl), a->values_only ? "" : "'");
	return -EINVAL;
}

static int unknown_kind(struct insert_args *a, int kind)
{
	if (kind == STARPU_BUBBLE_FUNC || kind == STARPU_BUBBLE_FUNC_ARG || kind == STARPU_BUBBLE_GEN_DAG_FUNC ||
	    kind == STARPU_BUBBLE_GEN_DAG_FUNC_ARG || kind == STARPU_BUBBLE_PARENT)
		return bubble_kind(a, kind);
	_astro_error("%s: unknown argument kind 0x%x after %d arguments%s%s%s: terminate the list with 0",
		a->caller, (unsigned)kind, a->nparsed, a->values_only ? "" : " for codelet '",
		a->values_only ? "" : cl_name(a->cl), a->values_only ? "" : "'");
	return -EINVAL;
}

/* Reads the argument list into task; returns 0, -EINVAL or -ENOMEM. One
 * switch, read as a table: a kind, then what its arguments set (a kind with
 * two arguments reads the first alone: C leaves the order of a call's
 * arguments open). */
static int parse_args(struct insert_args *a, struct starpu_task *task, va_list ap)
{
	int kind, i, ret = 0;
	void *ptr;
	unsigned n;

	while (ret == 0 && (kind = va_arg(ap, int)) != 0)
	{
		if (is_access_mode(kind))
		{
			starpu_data_handle_t handle = va_arg(ap, starpu_data_handle_t);
			if (!a->values_only)
				ret = add_handle(a, handle, (enum starpu_data_access_mode)kind, 0);
		}
		else switch (kind)
		{
		/* the codelet's argument and data, the task's dependencies */
		case STARPU_VALUE:
			ptr = va_arg(ap, void *);
			ret = add_value(a, ptr, va_arg(ap, size_t));
			break;
		case STARPU_CL_ARGS:
		case STARPU_CL_ARGS_NFREE:
			ptr = va_arg(ap, void *);
			ret = set_cl_args(a, task, ptr, va_arg(ap, size_t), kind == STARPU_CL_ARGS);
			break;
		case STARPU_DATA_ARRAY:
		case STARPU_DATA_MODE_ARRAY:
			ptr = va_arg(ap, void *);
			ret = add_data_array(a, kind == STARPU_DATA_MODE_ARRAY, ptr, va_arg(ap, int));
			break;
		case STARPU_TASK_DEPS_ARRAY:
		case STARPU_TASK_END_DEPS_ARRAY:
			n = va_arg(ap, unsigned);
			ret = add_deps(a, n, va_arg(ap, struct starpu_task **), kind == STARPU_TASK_END_DEPS_ARRAY);
			break;
		case STARPU_TASK_END_DEP: a->end_deps += va_arg(ap, int); break;
		/* callbacks (an argument is freed with the task, unless _NFREE) */
		case STARPU_CALLBACK: task->callback_func = va_arg(ap, callback_t); break;
		case STARPU_CALLBACK_WITH_ARG:
		case STARPU_CALLBACK_WITH_ARG_NFREE:
			task->callback_func = va_arg(ap, callback_t);
			task->callback_arg = va_arg(ap, void *);
			task->callback_arg_free = kind == STARPU_CALLBACK_WITH_ARG;
			break;
		case STARPU_CALLBACK_ARG:
		case STARPU_CALLBACK_ARG_NFREE:
			task->callback_arg = va_arg(ap, void *);
			task->callback_arg_free = kind == STARPU_CALLBACK_ARG;
			break;
		case STARPU_PROLOGUE_CALLBACK: task->prologue_callback_func = va_arg(ap, callback_t); break;
		case STARPU_PROLOGUE_CALLBACK_ARG:
		case STARPU_PROLOGUE_CALLBACK_ARG_NFREE:
			task->prologue_callback_arg = va_arg(ap, void *);
			task->prologue_callback_arg_free = kind == STARPU_PROLOGUE_CALLBACK_ARG;
			break;
		case STARPU_PROLOGUE_CALLBACK_POP: task->prologue_callback_pop_func = va_arg(ap, callback_t); break;
		case STARPU_PROLOGUE_CALLBACK_POP_ARG:
		case STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE:
			task->prologue_callback_pop_arg = va_arg(ap, void *);
			task->prologue_callback_pop_arg_free = kind == STARPU_PROLOGUE_CALLBACK_POP_ARG;
			break;
		case STARPU_EPILOGUE_CALLBACK: task->epilogue_callback_func = va_arg(ap, callback_t); break;
		case STARPU_EPILOGUE_CALLBACK_ARG: task->epilogue_callback_arg = va_arg(ap, void *); break;
		/* the task's fields */
		case STARPU_PRIORITY: task->priority = va_arg(ap, int); break;
		case STARPU_NAME: task->name = va_arg(ap, const char *); break;
		case STARPU_FLOPS: task->flops = va_arg(ap, double); break;
		case STARPU_TAG:
			task->use_tag = 1;
			/* fall through */
		case STARPU_TAG_ONLY: /* names the task (traces) without tag dependencies */
			task->tag_id = va_arg(ap, starpu_tag_t);
			break;
		case STARPU_HYPERVISOR_TAG: task->hypervisor_tag = va_arg(ap, int); break;
		case STARPU_EXECUTE_ON_WORKER: execute_on_worker(task, va_arg(ap, int)); break;
		case STARPU_EXECUTE_WHERE: task->where = (int32_t)va_arg(ap, unsigned long long); break;
		case STARPU_WORKER_ORDER: task->workerorder = va_arg(ap, unsigned); break;
		case STARPU_SCHED_CTX: task->sched_ctx = va_arg(ap, unsigned); break;
		case STARPU_POSSIBLY_PARALLEL: task->possibly_parallel = va_arg(ap, unsigned); break;
		case STARPU_TASK_COLOR: task->color = (unsigned)va_arg(ap, int); break;
		case STARPU_TASK_SYNCHRONOUS: task->synchronous = va_arg(ap, int) != 0; break;
		case STARPU_SEQUENTIAL_CONSISTENCY: task->sequential_consistency = va_arg(ap, unsigned) != 0; break;
		case STARPU_TASK_NO_SUBMITORDER: task->no_submitorder = va_arg(ap, unsigned) != 0; break;
		case STARPU_TASK_PROFILING_INFO: task->profiling_info = va_arg(ap, struct starpu_profiling_task_info *); break;
		case STARPU_TASK_SCHED_DATA: task->sched_data = va_arg(ap, void *); break;
		case STARPU_TRANSACTION: task->transaction = va_arg(ap, struct starpu_transaction *); break;
		case STARPU_TASK_FILE: task->file = va_arg(ap, const char *); break;
		case STARPU_TASK_LINE: task->line = va_arg(ap, int); break;
		case STARPU_TASK_WORKERIDS:
			/* A bitmap of workerids_len words; like StarPU, the task
			 * points at the caller's array, which must outlive it. */
			task->workerids_len = va_arg(ap, unsigned);
			task->workerids = va_arg(ap, uint32_t *);
			break;
		case STARPU_HANDLES_SEQUENTIAL_CONSISTENCY: task->handles_sequential_consistency = va_arg(ap, unsigned char *); break;
		/* MPI-only kinds: StarPU-MPI reads them (astro_task_build_v) */
		case STARPU_EXECUTE_ON_NODE:
			i = va_arg(ap, int);
			if (a->mpi)
				a->mpi->execute_on_node = i;
			break;
		case STARPU_NODE_SELECTION_POLICY:
			i = va_arg(ap, int);
			if (a->mpi)
				a->mpi->node_selection_policy = i;
			break;
		case STARPU_EXECUTE_ON_DATA:
			ptr = va_arg(ap, starpu_data_handle_t);
			if (a->mpi)
				a->mpi->execute_on_data = ptr;
			break;
		default:
			return unknown_kind(a, kind);
		}
		a->nparsed++;
	}
	return ret;
}

static void insert_args_init(struct insert_args *a, const char *caller, struct starpu_codelet *cl, int values_only)
{
	memset(a, 0, sizeof(*a));
	a->caller = caller;
	a->cl = cl;
	a->values_only = values_only;
	starpu_codelet_pack_arg_init(&a->values);
	a->handles = a->inline_handles;
	a->modes = a->inline_modes;
	a->handles_capacity = STARPU_NMAXBUFS;
}

static void insert_args_fini(struct insert_args *a)
{
	free(a->values.arg_buffer);
	if (a->handles != a->inline_handles)
	{
		free(a->handles);
		free(a->modes);
	}
	free(a->deps);
}

/* Fills task from the argument list. The list is read into a copy of the
 * task, which replaces it only once everything is valid: on error the task
 * is left as it was and nothing the caller passed is owned or freed. */
static int task_fill(struct starpu_task *task, struct starpu_codelet *cl, const char *caller,
		     struct astro_mpi_task_args *mpi, va_list ap)
{
	struct insert_args a;
	struct starpu_task filled = *task;
	starpu_data_handle_t *dyn_handles = NULL;
	enum starpu_data_access_mode *dyn_modes = NULL;
	unsigned n;
	int ret;

	insert_args_init(&a, caller, cl, 0);
	a.mpi = mpi;
	filled.cl = cl;
	ret = parse_args(&a, &filled, ap);
	if (ret)
		goto out;

	n = a.nhandles;
	if (cl && cl->nbuffers != STARPU_VARIABLE_NBUFFERS && n != (unsigned)cl->nbuffers)
	{
		_astro_error("%s: codelet '%s' declares nbuffers = %d but %u handles were given",
			caller, cl_name(cl), cl->nbuffers, n);
		ret = -EINVAL;
		goto out;
	}
	if (n > STARPU_NMAXBUFS)
	{
		dyn_handles = malloc(n * sizeof(*dyn_handles));
		dyn_modes = malloc(n * sizeof(*dyn_modes));
		if (!dyn_handles || !dyn_modes)
		{
			_astro_error("%s: out of memory for the %u handles of codelet '%s'", caller, n, cl_name(cl));
			free(dyn_handles);
			free(dyn_modes);
			ret = -ENOMEM;
			goto out;
		}
		memcpy(dyn_handles, a.handles, n * sizeof(*dyn_handles));
		memcpy(dyn_modes, a.modes, n * sizeof(*dyn_modes));
	}

	/* Past this point nothing fails. The argument list defines the task's
	 * data: arrays of an earlier use belong to the task and are replaced. */
	if (a.has_values)
	{
		starpu_codelet_pack_arg_fini(&a.values, &filled.cl_arg, &filled.cl_arg_size);
		filled.cl_arg_free = 1;
	}
	free(filled.dyn_handles);
	free(filled.dyn_modes);
	free(filled.dyn_interfaces);
	filled.dyn_handles = dyn_handles;
	filled.dyn_modes = dyn_modes;
	filled.dyn_interfaces = NULL;
	for (unsigned i = 0; i < n && i < STARPU_NMAXBUFS; i++)
	{
		filled.handles[i] = a.handles[i];
		filled.modes[i] = a.modes[i];
	}
	if (cl && cl->nbuffers == STARPU_VARIABLE_NBUFFERS)
		filled.nbuffers = (int)n;
	*task = filled;

	for (unsigned i = 0; i < a.ndeps; i++)
	{
		if (a.deps[i].end)
			starpu_task_declare_end_deps_array(task, a.deps[i].ntasks, a.deps[i].tasks);
		else
			starpu_task_declare_deps_array(task, a.deps[i].ntasks, a.deps[i].tasks);
	}
	if (a.end_deps > 0)
		starpu_task_end_dep_add(task, a.end_deps);

out:
	insert_args_fini(&a);
	return ret;
}

/* -------------------------------------------------------- public entries */

int starpu_task_insert_v(struct starpu_codelet *cl, va_list varg_list)
{
	struct starpu_task *task = starpu_task_create();
	int ret;

	if (!task)
		return -ENOMEM;
	_ASTRO_OBSERVE(ASTRO_MOMENT_SUBMIT_STAGE_BEGIN, .workerid = _astro_worker_id(), .task = task, .nimpl = ASTRO_SUBMIT_BUILDING);
	ret = task_fill(task, cl, "starpu_task_insert", NULL, varg_list);
	_ASTRO_OBSERVE(ASTRO_MOMENT_SUBMIT_STAGE_END, .workerid = _astro_worker_id(), .nimpl = ASTRO_SUBMIT_BUILDING);
	if (ret == 0)
		ret = starpu_task_submit(task);
	if (ret)
	{
		/* Never submitted: free it now (destroy = 1 would mean "after completion"). */
		task->destroy = 0;
		starpu_task_destroy(task);
	}
	return ret;
}

int starpu_task_insert(struct starpu_codelet *cl, ...)
{
	va_list ap;
	int ret;

	va_start(ap, cl);
	ret = starpu_task_insert_v(cl, ap);
	va_end(ap);
	return ret;
}

struct starpu_task *starpu_task_build(struct starpu_codelet *cl, ...)
{
	struct starpu_task *task = starpu_task_create();
	va_list ap;
	int ret;

	if (!task)
		return NULL;
	va_start(ap, cl);
	ret = task_fill(task, cl, "starpu_task_build", NULL, ap);
	va_end(ap);
	if (ret)
	{
		task->destroy = 0;
		starpu_task_destroy(task);
		return NULL;
	}
	return task;
}

struct starpu_task *astro_task_build_v(const char *caller, struct starpu_codelet *cl, struct astro_mpi_task_args *mpi, va_list ap)
{
	struct starpu_task *task = starpu_task_create();

	if (!task)
		return NULL;
	if (mpi)
	{
		memset(mpi, 0, sizeof(*mpi));
		mpi->execute_on_node = -1;
		mpi->node_selection_policy = -1;
	}
	if (task_fill(task, cl, caller ? caller : "astro_task_build_v", mpi, ap))
	{
		task->destroy = 0;
		starpu_task_destroy(task);
		return NULL;
	}
	return task;
}

int starpu_task_set(struct starpu_task *task, struct starpu_codelet *cl, ...)
{
	va_list ap;
	int ret;

	if (!task)
	{
		_astro_error("starpu_task_set: the task is NULL");
		return -EINVAL;
	}
	va_start(ap, cl);
	ret = task_fill(task, cl, "starpu_task_set", NULL, ap);
	va_end(ap);
	return ret;
}

void starpu_codelet_pack_args(void **arg_buffer, size_t *arg_buffer_size, ...)
{
	struct insert_args a;
	struct starpu_task scratch; /* receives the kinds that are not values */
	va_list ap;
	int ret;

	memset(&scratch, 0, sizeof(scratch));
	insert_args_init(&a, "starpu_codelet_pack_args", NULL, 1);
	va_start(ap, arg_buffer_size);
	ret = parse_args(&a, &scratch, ap);
	va_end(ap);
	if (ret == 0)
		starpu_codelet_pack_arg_fini(&a.values, arg_buffer, arg_buffer_size);
	else
	{
		*arg_buffer = NULL;
		*arg_buffer_size = 0;
	}
	insert_args_fini(&a);
}
