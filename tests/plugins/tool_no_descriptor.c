/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A library that sits in a plugin directory but is no Astrolabe plugin: it
 * exports no astrolabe_plugin_tool_no_descriptor descriptor, only an
 * unrelated function. The loader must say so and skip it.
 */
__attribute__((visibility("default"))) int tool_no_descriptor_answer(void);

int tool_no_descriptor_answer(void)
{
	return 42;
}
