dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl tool_trace records OTF2 archives and brings starpu_fxt_tool: it needs
dnl libotf2 (Debian libotf2-trace-dev, found through otf2-config).
AC_DEFUN([ASTRO_PLUGIN_CHECK_tool_trace], [
  AC_PATH_PROG([OTF2_CONFIG], [otf2-config], [no])
  AS_IF([test "x$OTF2_CONFIG" = xno], [astro_plugin_ok=no], [
    OTF2_CFLAGS=`$OTF2_CONFIG --cflags`
    OTF2_LIBS="`$OTF2_CONFIG --ldflags` `$OTF2_CONFIG --libs`"
    astro_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $OTF2_CFLAGS"
    AC_CHECK_HEADER([otf2/otf2.h], [], [astro_plugin_ok=no])
    CPPFLAGS=$astro_save_CPPFLAGS])
  AS_IF([test "x$astro_plugin_ok" = xyes], [], [AC_MSG_NOTICE([OTF2 not found (install libotf2-trace-dev): the trace recorder (plugins/tools/trace) and starpu_fxt_tool are not built; the registry of trace formats still is])])
  AC_SUBST([OTF2_CFLAGS])
  AC_SUBST([OTF2_LIBS])
])
