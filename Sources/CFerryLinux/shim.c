// GNU-only calls, compiled with _GNU_SOURCE so that the header stays clean for Swift importers.
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
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

int ferry_syncfs(int fd) {
    return syncfs(fd);
}

int ferry_keep_freed_memory(int mmap_threshold, int trim_threshold, int arenas) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1
        && mallopt(M_ARENA_MAX, arenas) == 1;
}
