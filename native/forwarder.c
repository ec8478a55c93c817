/*
 * ambient-forwarder: for each `<port>:<socket path>` argument, accepts TCP connections on
 * 127.0.0.1:<port> and forwards each to the Unix socket at that path, all in one process. A
 * sandbox's loopback reaches Ambient's API bridge and egress proxy this way
 * (src/modules/workers/sandbox/sandbox-forwarder.ts has the Node side).
 *
 * Why not socat: socat links ~15 shared libraries (OpenSSL, readline …). Starting it cost ~10 ms
 * of CPU on a host where starting /bin/sh costs 3, once per sandbox and forwarded port, and two
 * ports took a shell besides. This program needs only the C library (linked statically where it
 * can be) and serves every port from one process.
 *
 * Each connection: a connect to the socket (the connection is closed at once when that fails),
 * then bytes both ways, each way through a buffer of its own, so a side that does not read holds
 * up only what is sent to it. An end of stream on one side is passed on as a shutdown of writing
 * on the other; the pair is closed when both ways ended, or at once when either side fails.
 *
 * `-p` first: prints each port listened on, one per line, once all listen (port 0 takes a free one).
 *
 * `-i` first: each argument is `<fd>:<socket path>`, a listening socket it inherited as that
 * descriptor; it makes itself undumpable, then prints the ports as -p does. A bubblewrap
 * execution's spawn helper (native/spawner.c), pid 1 of the sandbox, listens on the sandbox's
 * ports itself and starts it so before any command runs, keeping the sockets, so that a command
 * that kills the forwarder cannot take its ports.
 *
 * `-n <dir> <uid>` first: the forwarder makes the namespaces of a bubblewrap sandbox's execution
 * itself (see confine) instead of being started inside a `bwrap` of its own: a new user namespace
 * in which <uid> is this process's user, a new network namespace with only its loopback, up, new
 * IPC and pid namespaces. It sees nothing of the host's files but <dir> (chroot; socket paths are
 * then inside it), keeps no capability, forwards as pid 1 of its pid namespace, and prints
 * `{"child-pid": <pid>, "net-namespace": <inode>}` once all ports listen, as `bwrap --info-fd`
 * does (the pid of the process that waits for it, in the host's pid namespace): commands enter
 * these user and network namespaces. One exec, a fork and no mount per execution, where a bwrap
 * around it cost its own start, its mounts and a pid 1. Exit status 78 when the host refuses the
 * namespaces (EPERM or EACCES), 71 for any other failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LISTENERS 8
/* At most 16 MB of buffers however many connections a sandbox opens (it runs on the host for docker). */
#define MAX_PAIRS 512
#define BUF_SIZE 16384

struct listener {
  int fd;
  struct sockaddr_un target;
};

/* One way of a pair: bytes read from `from` wait in `buf` until written to `to`. */
struct way {
  int from, to;
  char *buf;
  size_t len, off;
  int ended; /* `from` reached its end of stream */
  int shut;  /* and that end was passed on: shutdown(to, SHUT_WR) */
};

struct pair {
  int fds[2]; /* the accepted TCP connection, the Unix socket */
  struct way ways[2];
};

static struct listener listeners[MAX_LISTENERS];
static int listener_count;
static struct pair *pairs[MAX_PAIRS];

static int parse_forward(const char *arg, struct listener *l, int *port) {
  char *end;
  long value = strtol(arg, &end, 10);
  if (end == arg || *end != ':' || value < 0 || value > 65535) return -1;
  const char *path = end + 1;
  if (*path == '\0' || strlen(path) >= sizeof(l->target.sun_path)) return -1;
  memset(&l->target, 0, sizeof(l->target));
  l->target.sun_family = AF_UNIX;
  strcpy(l->target.sun_path, path);
  *port = (int)value;
  return 0;
}

/*
 * Whether `arg` (<port or descriptor>:<unix socket path>) is one this forwarder takes: a
 * bubblewrap sandbox's pid 1 asks before it says it is ready, since it forks the linked forwarder
 * only at the first connection (see start_forwarder in spawner.c), too late to fall back.
 */
int forwarder_takes(const char *arg);
int forwarder_takes(const char *arg) {
  struct listener l;
  int port;
  return parse_forward(arg, &l, &port) == 0;
}

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 128) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* -i: a listening socket this process inherited as descriptor `fd`, or -1. */
static int adopt_listener(int fd) {
  int listening = 0;
  socklen_t len = sizeof(listening);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening) return -1;
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) return -1;
  return fd;
}

static int bound_port(int fd) {
  struct sockaddr_in addr;
  socklen_t len = sizeof(addr);
  return getsockname(fd, (struct sockaddr *)&addr, &len) < 0 ? -1 : ntohs(addr.sin_port);
}

static void close_pair(int slot) {
  struct pair *p = pairs[slot];
  close(p->fds[0]);
  close(p->fds[1]);
  free(p->ways[0].buf);
  free(p->ways[1].buf);
  free(p);
  pairs[slot] = NULL;
}

static void accept_one(struct listener *l) {
  int tcp = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (tcp < 0) return; /* EAGAIN, or a connection reset before it was taken */
  /* Each write passes on one read, already as large as it comes: without this, an answer that
   * came in two parts (headers, then body) waited ~40 ms for the client's delayed ACK (socat too). */
  int one = 1;
  setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int slot = 0;
  while (slot < MAX_PAIRS && pairs[slot]) slot++;
  /* A local socket's connect succeeds or fails at once; without blocking, a full backlog fails
   * it (EAGAIN) too: that connection is refused rather than every other one held up behind it. */
  int unix_fd =
      slot < MAX_PAIRS ? socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
  if (unix_fd < 0 || connect(unix_fd, (struct sockaddr *)&l->target, sizeof(l->target)) < 0) {
    if (unix_fd >= 0) close(unix_fd);
    close(tcp);
    return;
  }
  struct pair *p = calloc(1, sizeof(*p));
  char *a = malloc(BUF_SIZE), *b = malloc(BUF_SIZE);
  if (!p || !a || !b) {
    free(p);
    free(a);
    free(b);
    close(unix_fd);
    close(tcp);
    return;
  }
  p->fds[0] = tcp;
  p->fds[1] = unix_fd;
  p->ways[0] = (struct way){.from = tcp, .to = unix_fd, .buf = a};
  p->ways[1] = (struct way){.from = unix_fd, .to = tcp, .buf = b};
  pairs[slot] = p;
}

/* Moves what it can one way; -1 when a side failed (the pair is then closed). */
static int pump(struct way *w, int readable, int writable) {
  if (w->off == w->len && !w->ended && readable) {
    ssize_t n = read(w->from, w->buf, BUF_SIZE);
    if (n > 0) {
      w->len = (size_t)n;
      w->off = 0;
      writable = 1; /* try at once: the other side is usually ready */
    } else if (n == 0) {
      w->ended = 1;
    } else if (errno != EAGAIN && errno != EINTR) {
      return -1;
    }
  }
  while (w->off < w->len && writable) {
    ssize_t n = write(w->to, w->buf + w->off, w->len - w->off);
    if (n > 0) {
      w->off += (size_t)n;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      break;
    } else {
      return -1;
    }
  }
  if (w->off == w->len) w->off = w->len = 0;
  if (w->ended && w->len == 0 && !w->shut) {
    shutdown(w->to, SHUT_WR);
    w->shut = 1;
  }
  return 0;
}

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Set when the host refused what confine asked (EPERM, EACCES): the exit status is then 78. */
static int refused;

static int failed(void) {
  if (errno == EPERM || errno == EACCES) refused = 1;
  return -1;
}

/*
 * New user, network, IPC and pid namespaces, <uid> (and the same gid) inside for this process's own
 * user and group outside (as `bwrap --unshare-user --uid` maps them), the loopback up; then `dir`
 * as the root of everything it sees, no effective, permitted or inheritable capability left (the
 * bounding set is moot: it never execs) and no_new_privs: what the forwarder can reach of the host
 * is the sockets in `dir`, a directory the sandbox's commands see anyway. The caller then forks the
 * forwarder as pid 1 of the new pid namespace (it can signal no process of the host's) and only
 * waits for it. `net_inode`: the network namespace's, read before /proc is out of sight.
 */
static int confine(const char *dir, const char *id, unsigned long *net_inode) {
  char *end;
  long inside = strtol(id, &end, 10);
  if (end == id || *end != '\0' || inside < 0 || inside > 65535) {
    errno = EINVAL;
    return -1;
  }
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID) < 0) return failed();
  char map[64];
  if (write_text("/proc/self/setgroups", "deny") < 0) return failed();
  snprintf(map, sizeof(map), "%ld %u 1\n", inside, (unsigned)uid);
  if (write_text("/proc/self/uid_map", map) < 0) return failed();
  snprintf(map, sizeof(map), "%ld %u 1\n", inside, (unsigned)gid);
  if (write_text("/proc/self/gid_map", map) < 0) return failed();
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  strcpy(ifr.ifr_name, "lo");
  int up = ioctl(s, SIOCGIFFLAGS, &ifr);
  if (up == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    up = ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int saved = errno;
  close(s);
  errno = saved;
  if (up < 0) return failed();
  struct stat st;
  if (stat("/proc/self/ns/net", &st) < 0) return -1;
  *net_inode = (unsigned long)st.st_ino;
  if (chroot(dir) < 0) return failed();
  if (chdir("/") < 0) return -1;
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct none[2];
  memset(none, 0, sizeof(none));
  if (syscall(SYS_capset, &header, none) < 0) return -1;
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/*
 * Forks the forwarder as pid 1 of the pid namespace confine made; in this process (whose pid
 * Ambient enters the namespaces through) waits for it and exits as it did. Returns 0 in the child.
 */
static int fork_forwarder(void) {
  int alive[2];
  if (pipe2(alive, O_CLOEXEC) < 0) return -1;
  pid_t child = fork();
  if (child < 0) return -1;
  if (child > 0) {
    close(alive[0]);
    int status;
    while (waitpid(child, &status, 0) < 0) {
      if (errno != EINTR) exit(70);
    }
    exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  close(alive[1]);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  /* The parent never writes: an end of file now means it died before the line above. */
  struct pollfd gone = {.fd = alive[0], .events = POLLIN};
  if (poll(&gone, 1, 0) > 0) _exit(0);
  close(alive[0]);
  return 0;
}

/*
 * Also linked into the spawner (AMBIENT_FORWARDER_MAIN=forwarder_main, scripts/build-native.mjs): a
 * bubblewrap sandbox's pid 1 forks it there without an exec (see start_forwarder in spawner.c).
 */
#ifndef AMBIENT_FORWARDER_MAIN
#define AMBIENT_FORWARDER_MAIN main
#endif
int AMBIENT_FORWARDER_MAIN(int argc, char **argv);
int AMBIENT_FORWARDER_MAIN(int argc, char **argv) {
  int print_ports = 0, print_namespace = 0;
  pid_t namespace_pid = 0;
  unsigned long net_inode = 0;
  int first = 1;
  /* Ends with whatever started it (a worker, or a sandbox's pid 1): nothing else would stop it. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int inherited = 0;
  if (argc > 1 && strcmp(argv[1], "-p") == 0) {
    print_ports = 1;
    first = 2;
  } else if (argc > 1 && strcmp(argv[1], "-i") == 0) {
    inherited = 1;
    print_ports = 1; /* the line its starter waits for: it holds the sockets, undumpable */
    first = 2;
    /* Inside a bubblewrap sandbox (its pid 1 starts it), the sandbox's commands run as the same
     * user: undumpable, they can neither trace it nor read its memory. Not with -n: Ambient
     * reads the namespaces of that process through /proc, which an undumpable one refuses. */
    if (prctl(PR_SET_DUMPABLE, 0) < 0) return 71;
  } else if (argc > 3 && strcmp(argv[1], "-n") == 0) {
    namespace_pid = getpid();
    if (confine(argv[2], argv[3], &net_inode) < 0 || fork_forwarder() < 0) {
      fprintf(stderr, "ambient-forwarder: cannot make its namespaces in %s: %s\n", argv[2],
              strerror(errno));
      /* 78: the host refuses (Ambient then holds the namespace with a bwrap and stops asking). */
      return refused ? 78 : 71;
    }
    print_namespace = 1;
    first = 4;
  }
  if (argc - first < 1 || argc - first > MAX_LISTENERS) {
    fprintf(stderr, "usage: ambient-forwarder [-p | -i | -n <dir> <uid>] <port or, with -i, fd>:<unix socket path>... (at most %d)\n",
            MAX_LISTENERS);
    return 64;
  }
  signal(SIGPIPE, SIG_IGN);
  for (int i = first; i < argc; i++) {
    struct listener *l = &listeners[listener_count];
    int port;
    if (parse_forward(argv[i], l, &port) < 0) {
      fprintf(stderr, "ambient-forwarder: not <port>:<unix socket path>: %s\n", argv[i]);
      return 64;
    }
    l->fd = inherited ? adopt_listener(port) : listen_on(port);
    if (l->fd < 0) {
      if (inherited)
        fprintf(stderr, "ambient-forwarder: descriptor %d is not a listening socket\n", port);
      else
        fprintf(stderr, "ambient-forwarder: cannot listen on 127.0.0.1:%d: %s\n", port,
                strerror(errno));
      return 71;
    }
    listener_count++;
  }
  if (print_ports) {
    for (int i = 0; i < listener_count; i++) printf("%d\n", bound_port(listeners[i].fd));
    fflush(stdout);
  }
  if (print_namespace) {
    printf("{\"child-pid\": %d, \"net-namespace\": %lu}\n", (int)namespace_pid, net_inode);
    fflush(stdout);
  }

  static struct pollfd fds[MAX_LISTENERS + 2 * MAX_PAIRS];
  static int slot_of[MAX_LISTENERS + 2 * MAX_PAIRS];
  for (;;) {
    int n = 0;
    for (int i = 0; i < listener_count; i++) {
      fds[n] = (struct pollfd){.fd = listeners[i].fd, .events = POLLIN};
      slot_of[n++] = -1;
    }
    for (int s = 0; s < MAX_PAIRS; s++) {
      struct pair *p = pairs[s];
      if (!p) continue;
      for (int side = 0; side < 2; side++) {
        /* ways[side] reads fds[side]; ways[1 - side] writes it. */
        struct way *in = &p->ways[side], *out = &p->ways[1 - side];
        short events = 0;
        if (!in->ended && in->len == 0) events |= POLLIN;
        if (out->len > out->off) events |= POLLOUT;
        fds[n] = (struct pollfd){.fd = events ? p->fds[side] : -1, .events = events};
        slot_of[n++] = s;
      }
    }
    if (poll(fds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      perror("ambient-forwarder: poll");
      return 70;
    }
    for (int i = 0; i < listener_count; i++) {
      if (fds[i].revents & POLLIN) accept_one(&listeners[i]);
    }
    for (int i = listener_count; i < n; i += 2) {
      int s = slot_of[i];
      struct pair *p = pairs[s];
      if (!p) continue;
      short tcp = fds[i].revents, local = fds[i + 1].revents;
      /* An error or hang-up shows as readable: the read (or write) then says which. */
      int tcp_readable = tcp & (POLLIN | POLLHUP | POLLERR);
      int local_readable = local & (POLLIN | POLLHUP | POLLERR);
      if (pump(&p->ways[0], tcp_readable, local & (POLLOUT | POLLERR)) < 0 ||
          pump(&p->ways[1], local_readable, tcp & (POLLOUT | POLLERR)) < 0 ||
          (p->ways[0].shut && p->ways[1].shut)) {
        close_pair(s);
      }
    }
  }
}
