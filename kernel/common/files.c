/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the files a user may put anything in (model files, bus figures,
 * trace archives): opened without blocking, so that a FIFO or a device in
 * place of the file is refused at once instead of hanging the reader, and
 * checked to be a regular file of a sane size before a byte is read, so that
 * a link to /dev/zero cannot exhaust the memory. Every such reader goes
 * through these two functions (include/astrolabe/plugin.h).
 */
#include "common/common.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void __attribute__((format(printf, 3, 4))) say(char *why, size_t whylen, const char *fmt, ...)
{
	if (!why || !whylen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

static const char *kind_of(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "something else";
}

int astro_file_open_regular(const char *path, size_t max_size, char *why, size_t whylen)
{
	if (!path) {
		say(why, whylen, "no file name given");
		return -EINVAL;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int err = errno;
		say(why, whylen, "%s", strerror(err));
		return -err;
	}
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		say(why, whylen, "%s", strerror(-ret));
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		say(why, whylen, "%s, not a regular file: replace it by a file or remove it", kind_of(st.st_mode));
	} else if (max_size && (uintmax_t)st.st_size > max_size) {
		ret = -EFBIG;
		say(why, whylen, "%ju bytes, more than the %zu such a file may have: it is not the file expected here",
		    (uintmax_t)st.st_size, max_size);
	} else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		ret = -errno;
		say(why, whylen, "%s", strerror(-ret));
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

char *astro_file_read_regular(const char *path, size_t max_size, size_t *len, char *why, size_t whylen)
{
	int fd = astro_file_open_regular(path, max_size, why, whylen);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	struct stat st;
	/* Room for what fstat said and some more: a file read whole is not copied again at its end. */
	size_t cap = (fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0) + 4096, n = 0;
	char *buf = malloc(cap);
	int err = buf ? 0 : ENOMEM;
	while (!err) {
		if (n + 1 >= cap) {
			/* The file grew while read: still no more than max_size. */
			char *bigger = max_size && n >= max_size ? NULL : realloc(buf, cap * 2);
			if (!bigger) {
				err = max_size && n >= max_size ? EFBIG : ENOMEM;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = errno;
		else if (got == 0)
			break;
		else
			n += (size_t)got;
	}
	close(fd);
	if (err) {
		free(buf);
		if (err == EFBIG)
			say(why, whylen, "it grew past %zu bytes while read: it is not the file expected here", max_size);
		else
			say(why, whylen, "%s", strerror(err));
		errno = err;
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
