// CFerryLinux: Linux headers and GNU-only calls that Swift's Glibc module does not export.
//
// Why: Glibc (as imported into Swift) leaves out <sys/epoll.h>, <sys/eventfd.h>, <sys/timerfd.h> and the
// _GNU_SOURCE-only functions. The wrappers below are compiled in shim.c with _GNU_SOURCE defined, so Swift can
// call them without that macro leaking into every importer. Keep this file tiny.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>

/// renameat2() flag: fail with EEXIST instead of replacing an existing destination.
#define FERRY_RENAME_NOREPLACE 1u

/// epoll event bits as plain integers (the C enum imports awkwardly into Swift).
static const uint32_t FERRY_EPOLLIN = EPOLLIN;
static const uint32_t FERRY_EPOLLOUT = EPOLLOUT;
static const uint32_t FERRY_EPOLLERR = EPOLLERR;
static const uint32_t FERRY_EPOLLHUP = EPOLLHUP;
static const uint32_t FERRY_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t FERRY_EPOLLONESHOT = EPOLLONESHOT;

/// futimens(2) special nanosecond value: set that timestamp to the current time (a macro Swift cannot import).
static const long FERRY_UTIME_NOW = UTIME_NOW;

/// Socket type flags as plain integers (glibc declares them in an enum).
static const int FERRY_SOCK_STREAM = SOCK_STREAM;
static const int FERRY_SOCK_DGRAM = SOCK_DGRAM;
static const int FERRY_SOCK_NONBLOCK = SOCK_NONBLOCK;
static const int FERRY_SOCK_CLOEXEC = SOCK_CLOEXEC;
static const int FERRY_EFD_NONBLOCK = EFD_NONBLOCK;
static const int FERRY_EFD_CLOEXEC = EFD_CLOEXEC;

/// accept4(2): accept with SOCK_NONBLOCK / SOCK_CLOEXEC set atomically on the new descriptor.
int ferry_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/// pipe2(2): a pipe with O_NONBLOCK / O_CLOEXEC set atomically.
int ferry_pipe2(int fds[2], int flags);

/// renameat2(2): rename with flags such as FERRY_RENAME_NOREPLACE (atomic no-overwrite publish).
int ferry_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags);

/// openat(2) with O_TMPFILE | O_RDWR | O_CLOEXEC: a new regular file without a name in directory `dirfd`.
int ferry_open_tmpfile(int dirfd, unsigned mode);

/// linkat(2) of the open file `fd` (one from ferry_open_tmpfile) to `name` in `dirfd`, through /proc/self/fd
/// (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH). Fails with EEXIST when `name` is taken.
int ferry_link_open_file(int fd, int dirfd, const char *name);

/// statx(2) STATX_DIOALIGN of the open file `fd`: the alignment direct I/O (O_DIRECT) needs of a buffer's address
/// (`*memory`) and of a file offset and length (`*offset`). Returns 1 when the file system reports both, 0 when it
/// does not (no direct I/O there, or a kernel before 6.1), -1 with errno when statx fails.
int ferry_direct_io_alignment(int fd, unsigned *memory, unsigned *offset);

/// open(2) of the file open as `fd` once more, write-only with O_DIRECT | O_CLOEXEC, through /proc/self/fd: a
/// second open file description, so that O_DIRECT applies to its writes only.
int ferry_reopen_direct(int fd);

/// getrandom(2): bytes from the kernel's CSPRNG.
ssize_t ferry_getrandom(void *buffer, size_t length, unsigned flags);

/// sync_file_range(2) flags as plain integers (GNU-only macros).
static const unsigned FERRY_SYNC_FILE_RANGE_WAIT_BEFORE = 1u;
static const unsigned FERRY_SYNC_FILE_RANGE_WRITE = 2u;
static const unsigned FERRY_SYNC_FILE_RANGE_WAIT_AFTER = 4u;

/// sync_file_range(2): starts (and with the WAIT flags waits for) the writeback of one range of a file's dirty
/// pages. Not a durability call: it commits no metadata and flushes no disk cache (fdatasync(2) still does that).
int ferry_sync_file_range(int fd, int64_t offset, int64_t count, unsigned flags);

/// syncfs(2): commits the whole file system containing `fd` to disk (one call for a batch of files).
int ferry_syncfs(int fd);

/// mallopt(3) M_MMAP_THRESHOLD, M_TRIM_THRESHOLD and M_ARENA_MAX (<malloc.h>, not in Swift's Glibc): blocks up to
/// `mmap_threshold` bytes come from the heap, up to `trim_threshold` bytes stay free at a heap's top instead of
/// going back to the kernel, and threads share at most `arenas` heaps. Returns 1 when all three were set.
int ferry_keep_freed_memory(int mmap_threshold, int trim_threshold, int arenas);

/// Signals routed to a pipe (FerrySystem's SignalPipe): `ferry_signal_pipe_set` names the pipe's write end, then
/// `ferry_route_signal_to_pipe` installs (sigaction, SA_RESTART) a handler that writes the signal's number as one
/// byte to it, keeping errno; nothing else runs in the handler. Returns sigaction's result.
void ferry_signal_pipe_set(int write_fd);
int ferry_route_signal_to_pipe(int signo);
