// An LD_PRELOAD shim for the nemesis tests (issue 42, items 1 and 3; decisions 84 and 87), loaded into one
// QIM process of a test (never into a test binary or an engine):
//
// - QIM_NEMESIS_SOURCE_ADDRESS=127.0.4.N: every TCP connection the process opens to a loopback address
//   (127.0.0.0/8) leaves from that address, so nftables rules can tell this process's links from every
//   other process's (nemesis_partition.h). librdkafka has no source-address setting (only callbacks in its
//   C API), hiredis has one per connection call and the CQL driver none: binding in connect(2) covers every
//   client library of the process alike, without a knob in the product. A socket bound already is left as
//   it is, but a TCP bind to INADDR_ANY (a client choosing its local port) gets the address too; a bind that
//   fails leaves the connection from the kernel's choice (the test's counters then show that its rules never
//   matched).
// - QIM_NEMESIS_DELAY_FILE=PATH: while PATH exists, each line "HOST PORT MS JITTER" in it delays every
//   send, sendmsg, write and writev on a TCP socket connected to HOST:PORT by MS (+/- JITTER)
//   milliseconds: a slow link, each request on it late (this kernel has no tc netem; decision 84).
// - QIM_NEMESIS_FSYNC_DELAY_US=N (or QIM_NEMESIS_FSYNC_DELAY_FILE=PATH holding N): fsync, fdatasync and
//   sync_file_range sleep N microseconds before they run: a slow disk, whose writes reach the page cache at
//   once but become durable late.
//
// - QIM_NEMESIS_REAL_WAITS=1 (with libfaketime after this shim in LD_PRELOAD): C11 cnd_timedwait, which
//   librdkafka waits with, is given its deadline on the kernel's clock. Its caller computes the deadline
//   from the faked wall clock (timespec_get, through libfaketime), and glibc's cnd_timedwait hands it to the
//   kernel unconverted (libfaketime converts pthread_cond_timedwait only): with the clock 30 s ahead every
//   wait of 100 ms would last 30.1 s, with it behind every wait would end at once, for as long as the skew
//   lasts. A real clock step moves the kernel's clock too, so only waits in flight at the step are off:
//   converting here makes the skewed process see what a stepped clock gives (decision 85).
//
// C, not C++: no static constructors, nothing but libc, safe to load into any process.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

typedef int (*connect_fn)(int, __CONST_SOCKADDR_ARG, socklen_t);
typedef int (*bind_fn)(int, __CONST_SOCKADDR_ARG, socklen_t);
typedef int (*fsync_fn)(int);
typedef ssize_t (*send_fn)(int, const void*, size_t, int);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr*, int);
typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*writev_fn)(int, const struct iovec*, int);
typedef int (*sync_range_fn)(int, off_t, off_t, unsigned int);
typedef int (*cnd_timedwait_fn)(cnd_t*, mtx_t*, const struct timespec*);

// Read on every call (getenv is cheap; the process never changes these variables): no initialisation
// order to get wrong.
static int source_address(struct in_addr* out) {
  const char* v = getenv("QIM_NEMESIS_SOURCE_ADDRESS");
  return v != NULL && *v != '\0' && inet_pton(AF_INET, v, out) == 1;
}

// glibc declares the address as a transparent union under _GNU_SOURCE: the definition must match it.
int connect(int fd, __CONST_SOCKADDR_ARG to_arg, socklen_t len) {
  static connect_fn real = NULL;
  const struct sockaddr* addr = to_arg.__sockaddr__;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "connect");
  struct in_addr source;
  if (addr != NULL && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in) &&
      source_address(&source)) {
    const struct sockaddr_in* to = (const struct sockaddr_in*)addr;
    int type = 0;
    socklen_t type_len = sizeof type;
    struct sockaddr_in bound;
    socklen_t bound_len = sizeof bound;
    const int saved = errno;
    if ((ntohl(to->sin_addr.s_addr) >> 24) == 127 &&
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 && type == SOCK_STREAM &&
        getsockname(fd, (struct sockaddr*)&bound, &bound_len) == 0 && bound.sin_port == 0) {
      struct sockaddr_in from;
      memset(&from, 0, sizeof from);
      from.sin_family = AF_INET;
      from.sin_addr = source;
      from.sin_port = 0;
      (void)bind(fd, (const struct sockaddr*)&from, sizeof from);
    }
    errno = saved;
  }
  return real(fd, to_arg, len);
}

// The delay in microseconds: QIM_NEMESIS_FSYNC_DELAY_US, or the number in the file
// QIM_NEMESIS_FSYNC_DELAY_FILE (read at every call, so a test can slow the disk down and heal it while the
// process runs; a missing file is no delay).
static long fsync_delay_us(void) {
  const char* v = getenv("QIM_NEMESIS_FSYNC_DELAY_US");
  if (v != NULL && *v != '\0') return strtol(v, NULL, 10);
  const char* path = getenv("QIM_NEMESIS_FSYNC_DELAY_FILE");
  if (path == NULL || *path == '\0') return 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return strtol(buf, NULL, 10);
}

static void slow_disk(void) {
  const int saved = errno;
  const long us = fsync_delay_us();
  if (us <= 0) {
    errno = saved;
    return;
  }
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&t, &t) == -1 && errno == EINTR) {
  }
  errno = saved;
}

int fsync(int fd) {
  static fsync_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "fsync");
  slow_disk();
  return real(fd);
}

int fdatasync(int fd) {
  static fsync_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "fdatasync");
  slow_disk();
  return real(fd);
}

int sync_file_range(int fd, off_t offset, off_t n, unsigned int flags) {
  static sync_range_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "sync_file_range");
  slow_disk();
  return real(fd, offset, n, flags);
}

int cnd_timedwait(cnd_t* cond, mtx_t* mtx, const struct timespec* deadline) {
  static cnd_timedwait_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "cnd_timedwait");
  const char* v = getenv("QIM_NEMESIS_REAL_WAITS");
  if (v == NULL || v[0] != '1' || deadline == NULL) return real(cond, mtx, deadline);
  struct timespec faked, kernel;
  const int saved = errno;
  // clock_gettime resolves to libfaketime's (it comes after this shim); the syscall is the kernel's clock.
  if (clock_gettime(CLOCK_REALTIME, &faked) != 0 ||
      syscall(SYS_clock_gettime, CLOCK_REALTIME, &kernel) != 0) {
    errno = saved;
    return real(cond, mtx, deadline);
  }
  errno = saved;
  const long long ns_per_s = 1000000000LL;
  long long at = (long long)deadline->tv_sec * ns_per_s + deadline->tv_nsec;
  at += ((long long)kernel.tv_sec - faked.tv_sec) * ns_per_s + (kernel.tv_nsec - faked.tv_nsec);
  if (at < 0) at = 0;
  const struct timespec converted = {(time_t)(at / ns_per_s), (long)(at % ns_per_s)};
  return real(cond, mtx, &converted);
}

// A client that binds its socket itself before connecting (the CQL driver picks its local port, the
// shard-aware port of ScyllaDB, and binds 0.0.0.0:<port>) would leave connect() above nothing to do: a bind
// of a TCP socket to INADDR_ANY gets the process's address instead, the port kept. QIM's own listeners bind
// 127.0.0.1 (QIM_GATEWAY_LISTEN, QIM_ADMIN_LISTEN defaults), so no server of the process is moved.
int bind(int fd, __CONST_SOCKADDR_ARG at_arg, socklen_t len) {
  static bind_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "bind");
  const struct sockaddr* addr = at_arg.__sockaddr__;
  struct in_addr source;
  if (addr != NULL && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in) &&
      ((const struct sockaddr_in*)addr)->sin_addr.s_addr == htonl(INADDR_ANY) && source_address(&source)) {
    int type = 0;
    socklen_t type_len = sizeof type;
    const int saved = errno;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 && type == SOCK_STREAM) {
      struct sockaddr_in moved = *(const struct sockaddr_in*)addr;
      moved.sin_addr = source;
      __CONST_SOCKADDR_ARG moved_arg;
      moved_arg.__sockaddr__ = (const struct sockaddr*)&moved;
      errno = saved;
      return real(fd, moved_arg, sizeof moved);
    }
    errno = saved;
  }
  return real(fd, at_arg, len);
}

static void sleep_us(long us) {
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&t, &t) == -1 && errno == EINTR) {
  }
}

// The delay of the link `fd` is connected by, in microseconds: 0 without a delay file, for a socket that
// is not connected over IPv4, or a peer the file does not name.
static long link_delay_us(int fd) {
  const char* path = getenv("QIM_NEMESIS_DELAY_FILE");
  struct stat st;
  if (path == NULL || *path == '\0' || stat(path, &st) != 0) return 0;
  struct sockaddr_in peer;
  socklen_t len = sizeof peer;
  if (getpeername(fd, (struct sockaddr*)&peer, &len) != 0 || peer.sin_family != AF_INET) return 0;
  FILE* f = fopen(path, "re");
  if (f == NULL) return 0;
  char host[64];
  unsigned port = 0;
  long ms = 0, jitter = 0, us = 0;
  while (fscanf(f, "%63s %u %ld %ld", host, &port, &ms, &jitter) == 4) {
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) == 1 && a.s_addr == peer.sin_addr.s_addr &&
        port == ntohs(peer.sin_port)) {
      us = ms * 1000;
      if (jitter > 0) us += (long)(random() % (2 * jitter * 1000 + 1)) - jitter * 1000;
      break;
    }
  }
  fclose(f);
  return us > 0 ? us : 0;
}

static void slow_link(int fd) {
  const int saved = errno;
  const long us = link_delay_us(fd);
  if (us > 0) sleep_us(us);
  errno = saved;
}

ssize_t send(int fd, const void* buf, size_t n, int flags) {
  static send_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "send");
  slow_link(fd);
  return real(fd, buf, n, flags);
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
  static sendmsg_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "sendmsg");
  slow_link(fd);
  return real(fd, msg, flags);
}

ssize_t write(int fd, const void* buf, size_t n) {
  static write_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "write");
  slow_link(fd);
  return real(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec* iov, int n) {
  static writev_fn real = NULL;
  if (real == NULL) *(void**)&real = dlsym(RTLD_NEXT, "writev");
  slow_link(fd);
  return real(fd, iov, n);
}
