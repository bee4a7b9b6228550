// GNU-only calls, compiled with _GNU_SOURCE so that the header stays clean for Swift importers.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "CFerryLinux.h"

_Static_assert(FERRY_RENAME_NOREPLACE == RENAME_NOREPLACE, "renameat2 flag mismatch");
_Static_assert(SYNC_FILE_RANGE_WAIT_BEFORE == 1 && SYNC_FILE_RANGE_WRITE == 2 && SYNC_FILE_RANGE_WAIT_AFTER == 4,
               "sync_file_range flag mismatch");

int ferry_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}

int ferry_pipe2(int fds[2], int flags) {
    return pipe2(fds, flags);
}

int ferry_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

ssize_t ferry_getrandom(void *buffer, size_t length, unsigned flags) {
    return getrandom(buffer, length, flags);
}

int ferry_sync_file_range(int fd, int64_t offset, int64_t count, unsigned flags) {
    return sync_file_range(fd, (off64_t)offset, (off64_t)count, flags);
}

int ferry_open_tmpfile(int dirfd, unsigned mode) {
    return openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, (mode_t)mode);
}

int ferry_link_open_file(int fd, int dirfd, const char *name) {
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

int ferry_direct_io_alignment(int fd, unsigned *memory, unsigned *offset) {
#ifndef STATX_DIOALIGN
    (void)fd; (void)memory; (void)offset;
    return 0;  // headers older than Linux 6.1: no way to ask, so no direct I/O
#else
    struct statx status;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_DIOALIGN, &status) != 0) return -1;
    if (!(status.stx_mask & STATX_DIOALIGN) || status.stx_dio_mem_align == 0 || status.stx_dio_offset_align == 0) {
        return 0;
    }
    *memory = status.stx_dio_mem_align;
    *offset = status.stx_dio_offset_align;
    return 1;
#endif
}

int ferry_reopen_direct(int fd) {
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
}

int ferry_syncfs(int fd) {
    return syncfs(fd);
}

int ferry_keep_freed_memory(int mmap_threshold, int trim_threshold, int arenas) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1
        && mallopt(M_ARENA_MAX, arenas) == 1;
}

static volatile int ferry_signal_write_fd = -1;

static void ferry_signal_to_pipe(int signo) {
    int saved = errno;
    unsigned char byte = (unsigned char)signo;
    if (ferry_signal_write_fd >= 0) {
        ssize_t written = write(ferry_signal_write_fd, &byte, 1);
        (void)written;  // a full pipe already holds signals that will be read
    }
    errno = saved;
}

void ferry_signal_pipe_set(int write_fd) {
    ferry_signal_write_fd = write_fd;
}

int ferry_route_signal_to_pipe(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = ferry_signal_to_pipe;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signo, &action, NULL);
}
