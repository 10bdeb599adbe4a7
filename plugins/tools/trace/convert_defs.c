/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An archive's definitions, read before its events (schema.h says what the
 * recorder writes): its strings (and the marks of an incomplete archive and
 * of a StarPU-MPI process), its clock, its regions (the runtime's states,
 * the task names, the application's states), its locations with their
 * properties, the event-key dictionary's value names, the ids of its parameters and attributes, and its metrics
 * (the sampled counters).
 */
#include <string.h>
#include "converter.h"

static OTF2_CallbackCode def_string(void *arg, OTF2_StringRef self, const char *s)
{
	struct converter *c = arg;
	g_hash_table_insert(c->strings, GUINT_TO_POINTER(self), g_strdup(s));
	if (strcmp(s, TRACE_INCOMPLETE_MARK) == 0)
		c->incomplete = true;
	if (strncmp(s, TRACE_MPI_MARK, strlen(TRACE_MPI_MARK)) == 0)
		c->mpi = true;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_clock(void *arg, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t realtime)
{
	(void)resolution;
	(void)length;
	(void)realtime;
	struct converter *c = arg;
	if (!c->multi)
		c->origin = offset; /* several archives: the earliest of them, found first */
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_region(void *arg, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
				    OTF2_StringRef description, OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag flags,
				    OTF2_StringRef file, uint32_t begin, uint32_t end)
{
	(void)canonical;
	(void)role;
	(void)paradigm;
	(void)flags;
	(void)file;
	(void)begin;
	(void)end;
	struct converter *c = arg;
	struct region *r = g_new0(struct region, 1);
	r->name = g_strdup(convert_string(c, name));
	r->task = strcmp(convert_string(c, description), TRACE_DESC_TASK) == 0;
	r->user = strcmp(convert_string(c, description), TRACE_DESC_USER_STATE) == 0;
	g_hash_table_insert(c->regions, GUINT_TO_POINTER(self), r);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location(void *arg, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
				      uint64_t nevents, OTF2_LocationGroupRef group)
{
	(void)type;
	(void)nevents;
	(void)group;
	struct converter *c = arg;
	struct location *l = g_new0(struct location, 1);
	l->id = self;
	l->name = g_strdup(convert_string(c, name));
	l->worker = self < TRACE_APP_LOCATION_BASE;
	l->workerid = l->worker ? (int)self : -1;
	l->bindid = -1;
	g_hash_table_insert(c->locations, &l->id, l);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location_property(void *arg, OTF2_LocationRef location, OTF2_StringRef name, OTF2_Type type,
					       OTF2_AttributeValue value)
{
	struct converter *c = arg;
	struct location *l = g_hash_table_lookup(c->locations, &location);
	const char *property = convert_string(c, name);
	if (!l)
		return OTF2_CALLBACK_SUCCESS;
	if (type == OTF2_TYPE_INT64 && strcmp(property, TRACE_PROPERTY_TID) == 0)
		l->tid = (long)value.int64;
	else if (type == OTF2_TYPE_INT32 && strcmp(property, TRACE_PROPERTY_BINDID) == 0)
		l->bindid = value.int32;
	return OTF2_CALLBACK_SUCCESS;
}

/* The event-key dictionary: the names of the bursts' values (its keys' descriptions are not shown). */
static OTF2_CallbackCode def_node_property(void *arg, OTF2_SystemTreeNodeRef node, OTF2_StringRef name, OTF2_Type type,
					   OTF2_AttributeValue value)
{
	(void)node;
	struct converter *c = arg;
	const char *property = convert_string(c, name);
	if (type == OTF2_TYPE_STRING && g_str_has_prefix(property, TRACE_PROPERTY_VALUE))
		g_hash_table_replace(c->value_names, g_strdup(property + strlen(TRACE_PROPERTY_VALUE)),
				     g_strdup(convert_string(c, value.stringRef)));
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_parameter(void *arg, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType type)
{
	(void)type;
	struct converter *c = arg;
	static const char *const names[] = {
#define PNAME(id, name, type) name,
		TRACE_PARAMETERS(PNAME)
#undef PNAME
	};
	if (self >= 256)
		return OTF2_CALLBACK_SUCCESS;
	for (int i = 0; i < TRACE_NPARAMETERS; i++)
		if (strcmp(names[i], convert_string(c, name)) == 0)
			c->param_map[self] = i;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_attribute(void *arg, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef description, OTF2_Type type)
{
	(void)description;
	(void)type;
	struct converter *c = arg;
	static const char *const names[] = {
#define ANAME(id, name, type) name,
		TRACE_ATTRIBUTES(ANAME)
#undef ANAME
	};
	if (self >= 256)
		return OTF2_CALLBACK_SUCCESS;
	for (int i = 0; i < TRACE_NATTRIBUTES; i++)
		if (strcmp(names[i], convert_string(c, name)) == 0)
			c->attr_map[self] = i;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_metric_member(void *arg, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef description,
					   OTF2_MetricType type, OTF2_MetricMode mode, OTF2_Type value_type, OTF2_Base base, int64_t exponent,
					   OTF2_StringRef unit)
{
	(void)description, (void)type, (void)mode, (void)value_type, (void)base, (void)exponent, (void)unit;
	struct converter *c = arg;
	g_hash_table_insert(c->metric_members, GUINT_TO_POINTER(self), (gpointer)convert_string(c, name));
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_metric_class(void *arg, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef *members,
					  OTF2_MetricOccurrence occurrence, OTF2_RecorderKind kind)
{
	(void)occurrence, (void)kind;
	struct converter *c = arg;
	if (n)
		g_hash_table_insert(c->metric_classes, GUINT_TO_POINTER(self), GUINT_TO_POINTER(members[0] + 1));
	return OTF2_CALLBACK_SUCCESS;
}

void convert_definitions_callbacks(OTF2_GlobalDefReaderCallbacks *callbacks)
{
	OTF2_GlobalDefReaderCallbacks_SetStringCallback(callbacks, def_string);
	OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(callbacks, def_clock);
	OTF2_GlobalDefReaderCallbacks_SetRegionCallback(callbacks, def_region);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, def_location);
	OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(callbacks, def_location_property);
	OTF2_GlobalDefReaderCallbacks_SetParameterCallback(callbacks, def_parameter);
	OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(callbacks, def_node_property);
	OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(callbacks, def_attribute);
	OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(callbacks, def_metric_member);
	OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(callbacks, def_metric_class);
}
