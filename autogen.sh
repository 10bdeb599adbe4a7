#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Regenerates the build system. Every folder of plugins/*/ (drivers, policies,
# tools, counters) that holds a Makefile.am is a plugin: build-aux/list-plugins writes their list
# into m4/astro_plugins.m4, so adding a plugin folder never means editing
# configure.ac or kernel code.
set -e
cd "$(dirname "$0")"
mkdir -p m4
sh build-aux/list-plugins > m4/astro_plugins.m4
autoreconf -fi
