/*
 * ambient-spawner: starts the processes of sandboxes for Ambient and relays their stdio and exit,
 * speaking framed messages on its stdin (requests) and stdout (events). See
 * src/modules/workers/sandbox/native-spawner.ts for the protocol's other side.
 *
 * Why it exists: a process created by fork() from a Node process copies Node's page tables
 * (tens of MB) and tears them down again at exec. On hosts where page-table work is dear
 * (some VMs) that was 4-5 ms of CPU per process, twice per sandboxed command. This process is
 * ~1 MB, so its forks cost little, and it can join a cgroup and enter namespaces between fork
 * and exec, which otherwise took a shell and nsenter (an exec each) per command.
 *
 * Frames: u32 little-endian length, then the body (u8 op, u32 id, op's fields).
 * Requests: 1 spawn (u8 stdin_pipe, i32 enter_pid, u8 enter_user, str file, str cwd, list args, list env,
 *           list cgroup_procs, optional u8 confine_here: see spawn_child), 2 stdin (bytes),
 *           3 stdin-end, 4 pause (u8 fd), 5 resume (u8 fd), 6 kill (SIGKILL to the process's group;
 *           in a sandbox, to its supervisor).
 * Events:   1 spawned (i32 pid), 2 error (i32 errno, str syscall), 3 out (u8 fd, bytes),
 *           4 out-end (u8 fd), 5 exit (i32 code or -1, i32 signal or 0), 6 ready (--sandbox).
 * A str is u32 length + bytes; a list is u32 count + strs.
 *
 * `--as <uid> <gid> -- <program> <args…>` and `--as <uid> <gid> --wrapper <cwd> <lookup> <n> <NAME=value ×n>
 * <file> <args…>`: not the helper, a step of a docker container's launcher (see run_as).
 *
 * `--sandbox`: pid 1 of one bubblewrap execution's sandbox, it starts that execution's commands
 * there (see supervise), instead of an exec of bwrap, its namespaces and its mounts per command;
 * it first says it is ready (event 6). `--sandbox --forward <forwarder> <port>:<socket>...`: the
 * sandbox has a network namespace of its own (bwrap's), and before it says so it listens there on
 * those ports, for the compiled forwarder it starts on them (at the first connection where the
 * forwarder is linked in: see start_forwarder), instead of a process of the host's holding a
 * namespace that every command joins.
 *
 * `--confine <bwrap's options> -- <program> <args…>`: makes a bubblewrap execution's sandbox and
 * execs <program> (this helper, `--sandbox`) as its pid 1, instead of bwrap (see confine.c).
 *
 * `--sandbox --as <uid> <gid>`: the same in a docker container (see src/modules/workers/sandbox/
 * backends/docker/container-spawner.ts), where it is not pid 1 but a root process beside the
 * container's killer, its requests and events on two FIFOs of the killer's root-only directory. It
 * is the subreaper of what its supervisors leave; each command gives up root after its supervisor
 * forked it (see become_user), so neither this helper nor a supervisor is within the command's
 * reach.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <grp.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef AMBIENT_NO_CONFINE
/* Built without confine.c (it did not compile here, scripts/build-native.mjs): bwrap makes sandboxes. */
static int confine_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "ambient-spawner: built without --confine\n");
  return 69;
}
static int confine_prepare(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return -1;
}
static void confine_child(char **envp, int helper) {
  (void)envp;
  (void)helper;
  _exit(69);
}
#else
#include "confine.h"
#endif
/* forwarder.c linked in (scripts/build-native.mjs); not in the build without confine.c. */
#if defined(AMBIENT_FORWARDER_MAIN) && !defined(AMBIENT_NO_CONFINE)
#define LINKED_FORWARDER 1
int forwarder_main(int argc, char **argv);
int forwarder_takes(const char *arg);
#endif

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

enum { REQ_SPAWN = 1, REQ_STDIN = 2, REQ_STDIN_END = 3, REQ_PAUSE = 4, REQ_RESUME = 5, REQ_KILL = 6 };
enum { EV_SPAWNED = 1, EV_ERROR = 2, EV_OUT = 3, EV_OUT_END = 4, EV_EXIT = 5, EV_READY = 6 };
#define MAX_CHILDREN 4096
/* --sandbox: how long a command's start may take before its child is killed (see spawn_child). */
#define START_TIMEOUT_MS 10000
/* How long a sandbox's pid 1 waits to fork the forwarder again after the kernel refused it. */
#define FORWARDER_RETRY_MS 100
#define MAX_FRAME (64u << 20)
#define READ_CHUNK 65536

struct child {
  uint32_t id;
  pid_t pid;
  int out[3];       /* read ends of stdout (1) and stderr (2); -1 when closed */
  int paused[3];
  int in;           /* write end of stdin; -1 when none */
  char *in_buf;     /* bytes not yet written to stdin (in_cap allocated) */
  size_t in_len, in_off, in_cap;
  int in_end;       /* close stdin once in_buf is written */
  int exited;
  int done; /* exited and both outputs ended: freed after the current poll round */
};

static struct child *children[MAX_CHILDREN];
static int child_count;
/* --sandbox: each command under a supervisor (see supervise); no cgroup or setns requests. */
static int sandbox_mode;
/* This helper's own binary: a `--confine` of it is made in the child, not exec'd (see spawn_child). */
static struct stat self_exe;
static int self_exe_known;
/* --sandbox --forward: the forwarder's pid while it runs (never swept as an orphan), else 0. */
static pid_t forwarder_pid;
/*
 * --sandbox --forward, the forwarder linked in: the listening sockets it is forked with at the
 * first connection to one of them (see start_forwarder); `pending` until then.
 */
static struct {
  int pending;
  int listeners[8];
  int count;
  char *args[2 + 8 + 1];
  /* After a fork was refused: not tried again before this (monotonic ms), nor said again. */
  long long retry_at;
  int refused;
} lazy_forwarder;
/* The requests read from stdin and not handled yet (see main). */
static struct {
  unsigned char *buf;
  size_t cap;
} requests;
/* --sandbox --as <uid> <gid>: in a docker container, as root; each command runs as this user. */
static int run_as_user;
static uid_t command_uid;
static gid_t command_gid;

static long long monotonic_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000LL + now.tv_nsec / 1000000;
}

static void die(const char *what) {
  perror(what);
  exit(70);
}

static void write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) exit(0); /* Ambient went away */
      die("write");
    }
    p += n;
    len -= (size_t)n;
  }
}

/* One event frame: op, id, then `len` bytes of fields. */
static void send_event(uint8_t op, uint32_t id, const void *fields, size_t len) {
  unsigned char head[9];
  uint32_t total = (uint32_t)(5 + len);
  memcpy(head, &total, 4);
  head[4] = op;
  memcpy(head + 5, &id, 4);
  write_all(1, head, 9);
  if (len) write_all(1, fields, len);
}

static void send_error(uint32_t id, int err, const char *syscall) {
  size_t slen = strlen(syscall);
  char buf[512];
  int32_t e = err;
  uint32_t l = (uint32_t)slen;
  if (slen > sizeof buf - 8) slen = sizeof buf - 8;
  memcpy(buf, &e, 4);
  memcpy(buf + 4, &l, 4);
  memcpy(buf + 8, syscall, slen);
  send_event(EV_ERROR, id, buf, 8 + slen);
}

static void send_exit(uint32_t id, int32_t code, int32_t sig) {
  int32_t f[2] = {code, sig};
  send_event(EV_EXIT, id, f, 8);
}

/* Request parsing: a cursor over one frame; any overrun makes the frame invalid. */
struct cursor {
  const unsigned char *p, *end;
  int bad;
};

static uint32_t take_u32(struct cursor *c) {
  uint32_t v = 0;
  if (c->end - c->p < 4) {
    c->bad = 1;
    return 0;
  }
  memcpy(&v, c->p, 4);
  c->p += 4;
  return v;
}

static char *take_str(struct cursor *c) {
  uint32_t len = take_u32(c);
  if (c->bad || (size_t)(c->end - c->p) < len) {
    c->bad = 1;
    return NULL;
  }
  char *s = malloc(len + 1);
  if (!s) die("malloc");
  memcpy(s, c->p, len);
  s[len] = 0;
  c->p += len;
  return s;
}

static char **take_list(struct cursor *c, uint32_t *count) {
  uint32_t n = take_u32(c);
  if (c->bad || n > (uint32_t)(c->end - c->p) / 4) {
    c->bad = 1;
    return NULL;
  }
  char **list = calloc(n + 1, sizeof *list);
  if (!list) die("calloc");
  for (uint32_t i = 0; i < n && !c->bad; i++) list[i] = take_str(c);
  if (count) *count = n;
  return list;
}

/*
 * What a request carried (a command's arguments and environment, its stdin) and what a command
 * printed are zeroed once used, before their memory is freed: a sandbox's forwarder, forked from
 * pid 1 at any time (see fork_lazy_forwarder), is to hold none of it.
 */
static void free_zeroed(void *p) {
  if (!p) return;
  explicit_bzero(p, malloc_usable_size(p));
  free(p);
}

/* `*buf` (of *cap bytes, `used` of them in use) grown to at least `need`, the old copy zeroed. */
static void grow_zeroed(unsigned char **buf, size_t *cap, size_t used, size_t need) {
  size_t grown = *cap ? *cap : 64;
  while (grown < need) grown *= 2;
  unsigned char *fresh = malloc(grown);
  if (!fresh) die("malloc");
  if (used) memcpy(fresh, *buf, used);
  free_zeroed(*buf);
  *buf = fresh;
  *cap = grown;
}

static void free_list(char **list) {
  if (!list) return;
  for (char **p = list; *p; p++) free_zeroed(*p);
  free(list);
}

static struct child *find_child(uint32_t id) {
  for (int i = 0; i < child_count; i++)
    if (children[i]->id == id) return children[i];
  return NULL;
}

static void mark_if_done(struct child *ch) {
  if (ch->exited && ch->out[1] < 0 && ch->out[2] < 0) ch->done = 1;
}

/* After a poll round only: that round's entries may still point at a child that ended in it. */
static void free_done_children(void) {
  for (int i = 0; i < child_count;) {
    struct child *ch = children[i];
    if (!ch->done) {
      i++;
      continue;
    }
    if (ch->in >= 0) close(ch->in);
    free_zeroed(ch->in_buf);
    children[i] = children[--child_count];
    free(ch);
  }
}

/*
 * execve, and as execvp (and so Node, and `env`) does: a file the kernel cannot run (no `#!` line)
 * is run as a /bin/sh script. Returns only when neither could be run.
 */
static void exec_or_script(const char *path, char **argv, char **envp) {
  execve(path, argv, envp);
  if (errno != ENOEXEC) return;
  int count = 0;
  while (argv[count]) count++;
  char **script = calloc((size_t)count + 2, sizeof *script);
  if (!script) return;
  script[0] = "/bin/sh";
  script[1] = (char *)path;
  for (int i = 1; i < count; i++) script[i + 1] = argv[i];
  execve("/bin/sh", script, envp);
  free(script);
  errno = ENOEXEC;
}

/* `file` as execvpe would find it, but on the PATH of the child's own environment (as Node does). */
static void exec_searching(const char *file, char **argv, char **envp) {
  if (strchr(file, '/')) {
    exec_or_script(file, argv, envp);
    return;
  }
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char **e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  int saved = ENOENT;
  char candidate[4096];
  while (*path) {
    const char *colon = strchrnul(path, ':');
    size_t dlen = (size_t)(colon - path);
    if (dlen + 1 + strlen(file) < sizeof candidate) {
      memcpy(candidate, path, dlen);
      candidate[dlen] = '/';
      strcpy(candidate + dlen + 1, file);
      exec_or_script(candidate, argv, envp);
      if (errno != ENOENT && errno != ENOTDIR) saved = errno;
    }
    path = *colon ? colon + 1 : colon;
  }
  errno = saved;
}

/*
 * Gives up root for good: no bounding set, inheritable or ambient capability, no supplementary
 * group, then the user and group (which empties the permitted and effective sets). NULL once done,
 * else the step that failed (errno says why).
 */
static const char *become_user(uid_t uid, gid_t gid) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
    if (errno == EINVAL) break; /* past the kernel's last capability */
    return "bounding set";
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return "ambient capabilities";
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct caps[2];
  if (syscall(SYS_capget, &header, caps) < 0) return "capget";
  caps[0].inheritable = caps[1].inheritable = 0;
  if (syscall(SYS_capset, &header, caps) < 0) return "capset";
  if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
    return "user";
  return NULL;
}

/*
 * Every signal's default action, as Node gives its children: a helper started in the background
 * by a shell (a docker container's launcher) inherited SIGINT and SIGQUIT ignored.
 */
static void default_signals(void) {
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
}

/* In the forked child: what failed is written to `report` (errno, then the step's name). */
static void child_fail(int report, const char *step) {
  int32_t e = errno;
  char buf[64];
  size_t len = strlen(step) < 56 ? strlen(step) : 56;
  memcpy(buf, &e, 4);
  memcpy(buf + 4, step, len);
  (void)!write(report, buf, 4 + len);
  _exit(127);
}

static int enter_namespace(pid_t pid, const char *ns, int type) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int r = setns(fd, type);
  close(fd);
  return r;
}

/* A wait status as bwrap passes its command's on: the exit code, or 128 + the signal. */
static int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The pids `pid`'s kernel list names as its children (at most `max`); -1 when it has no list. */
static int children_of(pid_t pid, pid_t *found, int max) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
  FILE *list = fopen(path, "re");
  if (!list) return -1;
  int n = 0, child;
  while (n < max && fscanf(list, "%d", &child) == 1) found[n++] = child;
  fclose(list);
  return n;
}

/*
 * Calls `each` with every child of this process: as the kernel lists them, else (a kernel without
 * CONFIG_PROC_CHILDREN) as /proc's entries name this process their parent.
 */
static void for_each_child(void (*each)(pid_t)) {
  pid_t found[1024];
  int n = children_of(getpid(), found, 1024);
  if (n >= 0) {
    for (int i = 0; i < n; i++) each(found[i]);
    return;
  }
  DIR *proc = opendir("/proc");
  if (!proc) return;
  struct dirent *entry;
  while ((entry = readdir(proc))) {
    char path[300], stat[4096];
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t got = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (got <= 0) continue;
    stat[got] = 0;
    const char *after = strrchr(stat, ')');
    int ppid;
    if (after && sscanf(after, ") %*c %d", &ppid) == 1 && ppid == (int)getpid())
      each(atoi(entry->d_name));
  }
  closedir(proc);
}

static void kill_now(pid_t pid) {
  kill(pid, SIGKILL);
}

/* SIGKILLs every child of this process. */
static void kill_children(void) {
  for_each_child(kill_now);
}

/* Whether `fd` is one of the `count` in `keep`. */
static int kept(int fd, const int *keep, int count) {
  for (int i = 0; i < count; i++)
    if (keep[i] == fd) return 1;
  return 0;
}

/*
 * Closes every descriptor above stderr but the `count` in `keep` (close_range over the gaps, else
 * each one /proc/self/fd lists).
 */
static void close_all_but(const int *keep, int count) {
  unsigned from = 3;
  for (;;) {
    unsigned next = ~0U; /* the lowest kept descriptor from `from` up */
    for (int i = 0; i < count; i++)
      if (keep[i] >= 0 && (unsigned)keep[i] >= from && (unsigned)keep[i] < next)
        next = (unsigned)keep[i];
    if (next > from && syscall(SYS_close_range, from, next - 1, 0) < 0) break;
    if (next == ~0U) return;
    from = next + 1;
  }
  /* Without close_range (Linux < 5.9). */
  DIR *fds = opendir("/proc/self/fd");
  if (!fds) return;
  int own = dirfd(fds);
  struct dirent *entry;
  while ((entry = readdir(fds))) {
    int fd = atoi(entry->d_name);
    if (fd > 2 && fd != own && !kept(fd, keep, count)) close(fd);
  }
  closedir(fds);
}

static void close_all_but_stdio(void) {
  close_all_but(NULL, 0);
}

/*
 * --sandbox, in the forked child (a session of its own): becomes the command's supervisor and
 * returns in the command's process. The supervisor is a child subreaper: whatever the command
 * leaves running, however it detached (a new session, a double fork), ends up its child; it reaps
 * them as they end (no zombie holds a pid of the sandbox's limit), and once the command has ended
 * it kills every one left, until none is (as a bwrap per command's pid namespace ended with it).
 * It exits with the command's code, 128 + the signal that ended it (as bwrap did). A kill request
 * SIGKILLs the supervisor from pid 1, which then kills what it leaves (see sweep_orphans), so a
 * command that stops or kills its supervisor still ends. The bounding set is empty already
 * (bwrap's --cap-drop ALL), and no_new_privs is set.
 */
static void supervise(int report) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) child_fail(report, "prctl");
  pid_t command = fork();
  if (command < 0) child_fail(report, "fork");
  if (command == 0) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) child_fail(report, "prctl");
    return;
  }
  /*
   * It never execs, so what it inherited open stays open: the other commands' stdin pipes among
   * them, which would never end. It keeps the command's stdio only.
   */
  close_all_but_stdio();
  int status = 0;
  for (;;) {
    int st;
    pid_t ended = waitpid(-1, &st, 0);
    if (ended == command) {
      status = st;
      break;
    }
    if (ended < 0 && errno != EINTR) _exit(127);
  }
  for (;;) {
    kill_children();
    if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) break;
  }
  _exit(exit_code_of(status));
}

/* Kills `pid` unless it is the forwarder or the supervisor of a command still running (see sweep_orphans). */
static void kill_unless_supervising(pid_t pid) {
  if (pid == forwarder_pid) return;
  for (int c = 0; c < child_count; c++)
    if (children[c]->pid == pid && !children[c]->exited) return;
  kill(pid, SIGKILL);
}

/*
 * --sandbox, pid 1: SIGKILLs every child of its own that is not the supervisor of a command still
 * running: what a supervisor left when it died (killed by Ambient's request, or by a command of
 * the sandbox, which runs as the same user) has become pid 1's. Run at every SIGCHLD (a command
 * can send pid 1 one too: it costs that execution a sweep), so what those leave behind in turn
 * goes at the next.
 */
static void sweep_orphans(void) {
  for_each_child(kill_unless_supervising);
}

static void spawn_child(uint32_t id, struct cursor *c) {
  if (c->end - c->p < 6) {
    send_error(id, EINVAL, "spawn");
    send_exit(id, -1, 0);
    return;
  }
  int stdin_pipe = *c->p++;
  int32_t enter_pid;
  memcpy(&enter_pid, c->p, 4);
  c->p += 4;
  int enter_user = *c->p++;
  char *file = take_str(c), *cwd = take_str(c);
  uint32_t nargs = 0, ncg = 0;
  char **args = take_list(c, &nargs), **env = take_list(c, NULL);
  char **cgroups = take_list(c, &ncg);
  /* Optional: args are `<this helper> --confine <options> -- <program>…`, made here (confine_child). */
  int confine_here = c->p < c->end && *c->p++;
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};
  int sync[2] = {-1, -1}, helper_fd = -1;
  const char *failed = NULL;
  if (c->bad || child_count >= MAX_CHILDREN) {
    errno = c->bad ? EINVAL : EAGAIN;
    failed = "spawn";
  } else if (sandbox_mode && (enter_pid > 0 || ncg > 0)) {
    errno = EPERM;
    failed = "spawn";
  } else if ((stdin_pipe && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0 ||
             pipe2(err, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
    failed = "pipe";
  }
  /*
   * A sandbox made in the child: cloned into its namespaces (clone_flags), then moved into its
   * cgroup by this helper, which says so through `sync`. Where the options or the clone are
   * refused, the child execs `--confine` as any program, which says why and exits as it does.
   */
  int clone_flags = -1;
  struct stat program;
  if (!failed && confine_here && self_exe_known && !sandbox_mode && enter_pid <= 0 && nargs > 2 &&
      strcmp(args[1], "--confine") == 0 && stat(file, &program) == 0 &&
      program.st_dev == self_exe.st_dev && program.st_ino == self_exe.st_ino)
    clone_flags = confine_prepare((int)nargs - 2, args + 2);
  if (clone_flags >= 0 && pipe2(sync, O_CLOEXEC) < 0) failed = "pipe";
  /* How the child tells that this helper still runs, where it could die unnoticed (confine.c). */
  if (clone_flags >= 0 && !failed) helper_fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  pid_t pid = -1;
  char report_buf[64];
  pid_t helper_pid = getpid();
  if (!failed && clone_flags >= 0) {
    pid = (pid_t)syscall(SYS_clone, clone_flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0) {
      clone_flags = -1;
      close(sync[0]);
      close(sync[1]);
    }
    if (pid != 0 && helper_fd >= 0) close(helper_fd);
  }
  if (!failed && clone_flags < 0) {
    pid = fork();
    if (pid < 0) failed = "fork";
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    close(report[0]);
    /* The group the service kills as a whole, as Node's `detached: true`. */
    if (setsid() < 0) child_fail(report[1], "setsid");
    /*
     * Killed when this helper ends (Ambient went away, see main): bwrap dies with its parent by
     * itself, but a forwarder in a container's network namespace or a process backend's command
     * would go on with no one to stop it. Checked after, in case this helper ended before (a
     * sandbox's pid 1 sees no parent: the helper's word on `sync` says it is there).
     */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) child_fail(report[1], "prctl");
    if (clone_flags >= 0) {
      close(sync[1]);
      char go;
      ssize_t n;
      do n = read(sync[0], &go, 1);
      while (n < 0 && errno == EINTR);
      if (n != 1) _exit(127);
      close(sync[0]);
    } else if (getppid() != helper_pid) {
      _exit(127);
    }
    int devnull = stdin_pipe ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (dup2(stdin_pipe ? in[0] : devnull, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
      child_fail(report[1], "dup2");
    if (clone_flags >= 0) {
      /* Its options' relative paths resolve here, as an exec of `--confine` from `cwd` would. */
      if (chdir(cwd) < 0) child_fail(report[1], "chdir");
      /* Started: from here a failure is its exit status and stderr, as `--confine`'s. */
      close(report[1]);
      confine_child(env, helper_fd);
    }
    for (uint32_t i = 0; i < ncg; i++) {
      int fd = open(cgroups[i], O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write(fd, "0", 1) < 0) child_fail(report[1], "cgroup");
      close(fd);
    }
    if (enter_pid > 0) {
      /* As `nsenter [--user] --net --preserve-credentials`: the user namespace first. */
      if (enter_user && enter_namespace(enter_pid, "user", CLONE_NEWUSER) < 0)
        child_fail(report[1], "setns");
      if (enter_namespace(enter_pid, "net", CLONE_NEWNET) < 0) child_fail(report[1], "setns");
    }
    if (sandbox_mode) supervise(report[1]);
    if (run_as_user) {
      /*
       * The command alone gives up root: its supervisor stays root, out of the reach of the
       * command's signals and traces. A change of user clears the parent-death signal.
       */
      pid_t supervisor = getppid();
      const char *step = become_user(command_uid, command_gid);
      if (step) child_fail(report[1], step);
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) child_fail(report[1], "prctl");
      if (getppid() != supervisor) _exit(127);
    }
    if (chdir(cwd) < 0) child_fail(report[1], "chdir");
    exec_searching(file, args, env);
    child_fail(report[1], "spawn");
  }
  if (!failed && clone_flags >= 0) {
    close(sync[0]);
    char text[16];
    int len = snprintf(text, sizeof text, "%d", (int)pid);
    for (uint32_t i = 0; i < ncg && !failed; i++) {
      int fd = open(cgroups[i], O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write(fd, text, (size_t)len) < 0) failed = "cgroup";
      if (fd >= 0) close(fd);
    }
    if (!failed && write(sync[1], "1", 1) != 1) failed = "pipe";
    int e = errno;
    close(sync[1]);
    if (failed) {
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
      pid = -1;
      errno = e;
      /* A child that failed first (and so made the write fail) says what it could not do. */
      close(report[1]);
      report[1] = -1;
      ssize_t n;
      do n = read(report[0], report_buf, sizeof report_buf - 1);
      while (n < 0 && errno == EINTR);
      if (n >= 4) {
        memcpy(&e, report_buf, 4);
        report_buf[n] = 0;
        failed = report_buf + 4;
      }
      errno = e;
    }
  }
  if (!failed) {
    /*
     * Waits for the exec (or the step that failed) before the next request, on purpose: with two
     * helpers that bounds how many sandboxes set up their namespaces at once. Reporting starts
     * asynchronously made 100-run bursts slower on a 2-core host (docs/PERFORMANCE.md).
     */
    close(report[1]);
    ssize_t n = 0;
    /*
     * In a sandbox, the child is within reach of the sandbox's processes (a SIGSTOP): the wait is
     * bounded, and the child killed when it does not get to its exec in time.
     */
    struct pollfd ready = {.fd = report[0], .events = POLLIN};
    int waited;
    do waited = poll(&ready, 1, sandbox_mode ? START_TIMEOUT_MS : -1);
    while (waited < 0 && errno == EINTR);
    if (waited == 0) {
      int32_t e = ETIMEDOUT;
      memcpy(report_buf, &e, 4);
      memcpy(report_buf + 4, "start", 6);
      n = 9;
    } else {
      do n = read(report[0], report_buf, sizeof report_buf - 1);
      while (n < 0 && errno == EINTR);
    }
    close(report[0]);
    report[0] = report[1] = -1;
    if (n >= 4) {
      /* The child could not become the program; it exits 127 and is reaped (not reported). */
      int32_t e;
      memcpy(&e, report_buf, 4);
      report_buf[n] = 0;
      errno = e;
      failed = report_buf + 4;
      if (sandbox_mode) kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
      pid = -1;
    }
  }
  if (failed) {
    int e = errno;
    int fds[] = {in[0], in[1], out[0], out[1], err[0], err[1], report[0], report[1]};
    for (unsigned i = 0; i < sizeof fds / sizeof *fds; i++)
      if (fds[i] >= 0) close(fds[i]);
    send_error(id, e, failed);
    send_exit(id, -1, 0);
  } else {
    if (stdin_pipe) close(in[0]);
    close(out[1]);
    close(err[1]);
    struct child *ch = calloc(1, sizeof *ch);
    if (!ch) die("calloc");
    ch->id = id;
    ch->pid = pid;
    ch->out[0] = -1;
    ch->out[1] = out[0];
    ch->out[2] = err[0];
    ch->in = stdin_pipe ? in[1] : -1;
    if (ch->in >= 0) fcntl(ch->in, F_SETFL, O_NONBLOCK);
    children[child_count++] = ch;
    int32_t p = pid;
    send_event(EV_SPAWNED, id, &p, 4);
  }
  free_zeroed(file);
  free_zeroed(cwd);
  free_list(args);
  free_list(env);
  free_list(cgroups);
}

static void flush_stdin(struct child *ch) {
  while (ch->in >= 0 && ch->in_off < ch->in_len) {
    ssize_t n = write(ch->in, ch->in_buf + ch->in_off, ch->in_len - ch->in_off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      /* The process closed its stdin: what it was sent is dropped, as Node does. */
      close(ch->in);
      ch->in = -1;
      break;
    }
    ch->in_off += (size_t)n;
  }
  if (ch->in_off == ch->in_len && ch->in_len) {
    explicit_bzero(ch->in_buf, ch->in_len);
    ch->in_off = ch->in_len = 0;
  }
  if (ch->in >= 0 && ch->in_end && ch->in_len == 0) {
    close(ch->in);
    ch->in = -1;
  }
}

static void handle_request(const unsigned char *body, size_t len) {
  if (len < 5) return;
  uint8_t op = body[0];
  uint32_t id;
  memcpy(&id, body + 1, 4);
  struct cursor c = {body + 5, body + len, 0};
  if (op == REQ_SPAWN) {
    spawn_child(id, &c);
    return;
  }
  struct child *ch = find_child(id);
  if (!ch) return;
  size_t rest = len - 5;
  if (op == REQ_STDIN && ch->in >= 0) {
    if (ch->in_cap < ch->in_len + rest)
      grow_zeroed((unsigned char **)&ch->in_buf, &ch->in_cap, ch->in_len, ch->in_len + rest);
    memcpy(ch->in_buf + ch->in_len, c.p, rest);
    ch->in_len += rest;
    flush_stdin(ch);
  } else if (op == REQ_STDIN_END) {
    ch->in_end = 1;
    flush_stdin(ch);
  } else if ((op == REQ_PAUSE || op == REQ_RESUME) && rest >= 1 && (c.p[0] == 1 || c.p[0] == 2)) {
    ch->paused[c.p[0]] = op == REQ_PAUSE;
  } else if (op == REQ_KILL && !ch->exited) {
    /*
     * Not reaped yet, so the pid is still the process's. In a sandbox it is the supervisor: once
     * it is gone, what it leaves is pid 1's and goes at the sweep (see sweep_orphans); else the
     * group is killed.
     */
    if (sandbox_mode) kill(ch->pid, SIGKILL);
    else kill(-ch->pid, SIGKILL);
  }
}

/*
 * The forwarder's process, forked by pid 1 without an exec: what an exec would have left behind
 * goes (every descriptor but stdio and the listeners, the environment, SIGCHLD blocked), its comm
 * the exec'd one's for `ps` (its cmdline stays the helper's). Undumpable from the start, as pid 1
 * is. What it has of pid 1's memory holds no request or output: those are zeroed once used (see
 * free_zeroed), and what is in flight when it forks is zeroed first thing. Nobody waits for the
 * line it prints once it holds the sockets: its stdout is /dev/null.
 */
#ifdef LINKED_FORWARDER
/*
 * Below the caller's frame: what deeper calls of pid 1 left on the stack (a request's fields on
 * their way), zeroed before the forwarder's own frames reuse it.
 */
static __attribute__((noinline)) void zero_stack_below(void) {
  volatile unsigned char below[64 * 1024];
  explicit_bzero((void *)below, sizeof below);
}

/* In the forwarder's process: pid 1's requests not handled yet and its commands' pending stdin. */
static void zero_helper_buffers(void) {
  if (requests.buf) explicit_bzero(requests.buf, requests.cap);
  for (int i = 0; i < child_count; i++)
    if (children[i]->in_buf) explicit_bzero(children[i]->in_buf, children[i]->in_cap);
  zero_stack_below();
}

static void run_linked_forwarder(int *listeners, int count, char **args) {
  zero_helper_buffers();
  for (int i = 0; i < count; i++)
    if (fcntl(listeners[i], F_SETFD, 0) < 0) _exit(127);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) _exit(127);
  close_all_but(listeners, count);
  clearenv();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_UNBLOCK, &chld, NULL);
  prctl(PR_SET_NAME, ".ambient-forwar");
  _exit(forwarder_main(2 + count, args));
}

/*
 * The first connection to one of the forwarder's ports is waiting (see start_forwarder): the
 * forwarder is forked now and accepts it. Never again once it started, whatever becomes of it: a
 * command that kills it leaves the ports pid 1's, their connections unanswered, as before. A fork
 * the kernel refuses (the sandbox at its pids limit) is tried again once FORWARDER_RETRY_MS have
 * passed, while connections wait: a command that filled the limit does not cost the execution
 * its API and proxy for good.
 */
static void fork_lazy_forwarder(void) {
  pid_t pid = fork();
  if (pid < 0) {
    if (!lazy_forwarder.refused) perror("ambient-spawner: fork of the forwarder (tried again)");
    lazy_forwarder.refused = 1;
    lazy_forwarder.retry_at = monotonic_ms() + FORWARDER_RETRY_MS;
    return;
  }
  lazy_forwarder.pending = 0;
  if (pid == 0)
    run_linked_forwarder(lazy_forwarder.listeners, lazy_forwarder.count, lazy_forwarder.args);
  forwarder_pid = pid;
}
#endif

/*
 * --sandbox --forward <program> <port>:<socket>...: listens on each port of the sandbox's loopback
 * itself (close-on-exec), for `program -i <fd>:<socket>...` (the compiled forwarder, bound
 * read-only in the sandbox) to serve them as a child of pid 1 with those listening sockets and its
 * stdin /dev/null. pid 1 keeps the sockets: a command (same user) that kills the forwarder cannot
 * bind those ports, and its connections then wait unanswered. The forwarder is never started
 * again.
 *
 * Where it is linked into this helper, it is forked without an exec, at the first connection to
 * one of the ports (fork_lazy_forwarder; the connection waits in the backlog meanwhile): an
 * execution whose commands never reach the API or the egress proxy makes no forwarder (a fork,
 * the forwarder's start and its exit less: ~2 ms of CPU where a fork costs ~0.7 ms,
 * docs/PERFORMANCE.md), and one that does makes no exec and its static start's page faults. A
 * fork is undumpable from the start, as pid 1 is, so it may start while commands run; what it
 * would refuse at its start (forwarder_takes) is refused before pid 1 says it is ready. Otherwise
 * the forwarder is exec'd now, before any command (a fresh exec is traceable until it makes
 * itself undumpable), and pid 1 waits (at most START_TIMEOUT_MS) for the line it prints once it
 * holds the sockets, undumpable. Exits 71 when a port cannot be listened on or the exec'd
 * forwarder does not say it is ready: Ambient then holds the namespace from the host instead.
 */
static void start_forwarder(const char *program, char **forwards, int count) {
  if (count < 1 || count > 8) {
    fprintf(stderr, "ambient-spawner: --forward takes 1 to 8 <port>:<socket>\n");
    exit(64);
  }
  static char numbered[8][128];
  char **args = lazy_forwarder.args;
  int *listeners = lazy_forwarder.listeners;
  args[0] = (char *)program;
  args[1] = "-i";
  for (int i = 0; i < count; i++) {
    char *end;
    long port = strtol(forwards[i], &end, 10);
    if (end == forwards[i] || *end != ':' || port < 1 || port > 65535 ||
        strlen(end) >= sizeof numbered[i] - 8) {
      fprintf(stderr, "ambient-spawner: not <port>:<socket>: %s\n", forwards[i]);
      exit(64);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 128) < 0) {
      fprintf(stderr, "ambient-spawner: cannot listen on 127.0.0.1:%ld: %s\n", port,
              strerror(errno));
      exit(71);
    }
    listeners[i] = fd;
    snprintf(numbered[i], sizeof numbered[i], "%d%s", fd, end);
    args[2 + i] = numbered[i];
  }
  args[2 + count] = NULL;
  lazy_forwarder.count = count;
#ifdef LINKED_FORWARDER
  /* What the forwarder would refuse at its start is refused now, while Ambient can fall back. */
  for (int i = 0; i < count; i++) {
    if (!forwarder_takes(args[2 + i])) {
      fprintf(stderr, "ambient-spawner: the forwarder does not take %s\n", forwards[i]);
      exit(71);
    }
  }
  lazy_forwarder.pending = 1;
  return;
#endif
  int said[2];
  if (pipe2(said, O_CLOEXEC) < 0) die("pipe2");
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    for (int i = 0; i < count; i++)
      if (fcntl(listeners[i], F_SETFD, 0) < 0) _exit(127);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(said[1], 1) < 0) _exit(127);
    char *envp[] = {NULL};
    execve(program, args, envp);
    perror("ambient-spawner: exec of the forwarder");
    _exit(127);
  }
  close(said[1]);
  forwarder_pid = pid;
  char line[64];
  size_t got = 0;
  long long deadline = monotonic_ms() + START_TIMEOUT_MS;
  while (got == 0 || line[got - 1] != '\n') {
    long long left = deadline - monotonic_ms();
    struct pollfd ready = {.fd = said[0], .events = POLLIN};
    int polled = left > 0 ? poll(&ready, 1, (int)left) : 0;
    ssize_t n = polled > 0 ? read(said[0], line + got, sizeof line - got) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (got += (size_t)n) == sizeof line) {
      fprintf(stderr, "ambient-spawner: the forwarder did not start on the sandbox's ports\n");
      kill(pid, SIGKILL);
      exit(71);
    }
  }
  close(said[0]);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    if (pid == forwarder_pid) forwarder_pid = 0; /* its pid may be another process's from now on */
    for (int i = 0; i < child_count; i++) {
      struct child *ch = children[i];
      if (ch->pid != pid || ch->exited) continue;
      ch->exited = 1;
      if (WIFSIGNALED(status)) send_exit(ch->id, -1, WTERMSIG(status));
      else send_exit(ch->id, WEXITSTATUS(status), 0);
      mark_if_done(ch);
      break;
    }
  }
}

static void relay_output(struct child *ch, int fd) {
  static unsigned char buf[1 + READ_CHUNK];
  ssize_t n;
  do n = read(ch->out[fd], buf + 1, READ_CHUNK);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    buf[0] = (unsigned char)fd;
    send_event(EV_OUT, ch->id, buf, 1 + (size_t)n);
    explicit_bzero(buf + 1, (size_t)n);
    return;
  }
  close(ch->out[fd]);
  ch->out[fd] = -1;
  unsigned char f = (unsigned char)fd;
  send_event(EV_OUT_END, ch->id, &f, 1);
  mark_if_done(ch);
}

/* Whether `path` is a regular file this process may execute (the shell's `[ -f ] && [ -x ]`). */
static int executable_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/*
 * `--as`, in a docker container's launcher (src/modules/workers/sandbox/backends/docker/
 * container-launcher.ts), as root with the launcher's capabilities: does in one static exec what
 * `setsid setpriv --reuid --regid --clear-groups --inh-caps=-all --bounding-set=-all` and, with
 * `--wrapper`, the `sh` wrapper and `env -i` of docker-exec-process.ts did in four dynamically
 * linked ones: a session of its own (its pid is its process group, which the killer kills), no
 * bounding set, inheritable or ambient capability, no supplementary group, then the user and group
 * (which empties the permitted and effective sets). `--wrapper` then speaks as the wrapper does on
 * stderr (its pid; `exec`, or `enoent cwd` / `enoent program` and exit 127) and execs the program,
 * looked up on <lookup> unless it holds a slash, with exactly the n variables given.
 */
/* A uid or gid argument: a whole decimal number below (id_t)-1 (which set*id read as "unchanged"). */
static int parse_id(const char *text, unsigned long *id) {
  char *end;
  errno = 0;
  *id = strtoul(text, &end, 10);
  return *text >= '0' && *text <= '9' && !*end && !errno && *id < 0xFFFFFFFFul ? 0 : -1;
}

static int run_as(int argc, char **argv) {
  /* Every argument is checked before anything changes. */
  unsigned long uid, gid;
  if (parse_id(argv[2], &uid) < 0 || parse_id(argv[3], &gid) < 0) return 64;
  int wrapper = strcmp(argv[4], "--wrapper") == 0;
  if (!wrapper && strcmp(argv[4], "--") != 0) return 64;
  if (!wrapper && argc < 6) return 64;
  long n = 0;
  if (wrapper) {
    char *end;
    if (argc < 9) return 64;
    n = strtol(argv[7], &end, 10);
    if (*argv[7] < '0' || *argv[7] > '9' || *end || n < 0 || 8 + n >= argc) return 64;
  }
  default_signals();
  if (setsid() < 0) die("ambient-spawner --as: setsid");
  const char *failed = become_user((uid_t)uid, (gid_t)gid);
  if (failed) {
    fprintf(stderr, "ambient-spawner --as: %s: %s\n", failed, strerror(errno));
    exit(70);
  }
  if (!wrapper) {
    execv(argv[5], argv + 5);
    die("ambient-spawner --as: exec");
  }
  const char *cwd = argv[5], *lookup = argv[6];
  char **envp = calloc((size_t)n + 1, sizeof *envp);
  if (!envp) die("malloc");
  for (long i = 0; i < n; i++) envp[i] = argv[8 + i];
  char **command = argv + 8 + n;
  const char *file = command[0];
  dprintf(2, "%d\n", (int)getpid());
  if (chdir(cwd) < 0) {
    dprintf(2, "enoent cwd\n");
    return 127;
  }
  static char found[4096];
  int ok = 0;
  if (strchr(file, '/')) {
    ok = executable_file(file) && strlen(file) < sizeof found;
    if (ok) strcpy(found, file);
  } else {
    for (const char *dir = lookup; !ok && *dir;) {
      const char *colon = strchrnul(dir, ':');
      size_t len = (size_t)(colon - dir);
      if (len > 0 && len + 2 + strlen(file) < sizeof found) {
        memcpy(found, dir, len);
        found[len] = '/';
        strcpy(found + len + 1, file);
        ok = executable_file(found);
      }
      dir = *colon ? colon + 1 : colon;
    }
  }
  if (!ok) {
    dprintf(2, "enoent program\n");
    return 127;
  }
  dprintf(2, "exec\n");
  exec_or_script(found, command, envp);
  dprintf(2, "ambient-spawner: %s: %s\n", file, strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

int main(int argc, char **argv) {
  if (argc > 4 && strcmp(argv[1], "--as") == 0) return run_as(argc, argv);
  /*
   * What it starts inherits whatever it holds open without close-on-exec: nothing but its stdio
   * is its own, so anything else came from whoever started the service (a pipe of its
   * supervisor, say) and would reach every sandbox's commands.
   */
  close_all_but_stdio();
  /* Once here, not per command: what it starts inherits its dispositions but SIGPIPE's. */
  default_signals();
  if (argc > 1 && strcmp(argv[1], "--confine") == 0) return confine_main(argc - 2, argv + 2);
  signal(SIGPIPE, SIG_IGN);
  sandbox_mode = argc > 1 && strcmp(argv[1], "--sandbox") == 0;
  self_exe_known = !sandbox_mode && stat("/proc/self/exe", &self_exe) == 0;
  if (sandbox_mode) {
    /*
     * pid 1 of the execution's pid namespace (bwrap --as-pid-1): its commands, the same user, can
     * neither signal it (the kernel keeps a namespace's init from its own processes) nor, being
     * undumpable, trace it or read its memory.
     */
    if (prctl(PR_SET_DUMPABLE, 0) < 0) die("prctl");
    if (argc > 4 && strcmp(argv[2], "--as") == 0) {
      unsigned long uid, gid;
      if (parse_id(argv[3], &uid) < 0 || parse_id(argv[4], &gid) < 0) return 64;
      run_as_user = 1;
      command_uid = (uid_t)uid;
      command_gid = (gid_t)gid;
    } else if (argc > 3 && strcmp(argv[2], "--forward") == 0) {
      start_forwarder(argv[3], argv + 4, argc - 4);
    }
    send_event(EV_READY, 0, NULL, 0);
  }
  /*
   * Orphans of what it started become its children, and it reaps them (reap waits for any
   * child). bwrap's monitor exits without waiting for its sandbox's pid 1 (which reaps the
   * command): that pid 1 used to go to the host's init, with its CPU and its command's, which
   * then counted nowhere in Ambient's figures.
   */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) die("prctl");
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) die("sigprocmask");
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) die("signalfd");

  size_t have = 0;
  grow_zeroed(&requests.buf, &requests.cap, 0, 1 << 16);
  /* sigfd, stdin, each child's stdout, stderr and stdin, the forwarder's ports until it starts */
  size_t slots = 2 + 3 * MAX_CHILDREN + 8;
  struct pollfd *fds = malloc(sizeof *fds * slots);
  struct child **owner = malloc(sizeof *owner * slots);
  int *which = malloc(sizeof *which * slots);
  if (!fds || !owner || !which) die("malloc");

  for (;;) {
    int n = 0;
    fds[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    owner[n++] = NULL;
    fds[n] = (struct pollfd){.fd = 0, .events = POLLIN};
    owner[n++] = NULL;
    for (int i = 0; i < child_count; i++) {
      struct child *ch = children[i];
      for (int fd = 1; fd <= 2; fd++) {
        if (ch->out[fd] < 0 || ch->paused[fd]) continue;
        fds[n] = (struct pollfd){.fd = ch->out[fd], .events = POLLIN};
        owner[n] = ch;
        which[n++] = fd;
      }
      if (ch->in >= 0 && ch->in_len > ch->in_off) {
        fds[n] = (struct pollfd){.fd = ch->in, .events = POLLOUT};
        owner[n] = ch;
        which[n++] = 0;
      }
    }
    int timeout = -1;
#ifdef LINKED_FORWARDER
    int ports = n;
    long long retry_in = lazy_forwarder.retry_at - monotonic_ms();
    if (lazy_forwarder.pending && retry_in > 0) timeout = (int)retry_in;
    for (int i = 0; lazy_forwarder.pending && retry_in <= 0 && i < lazy_forwarder.count; i++) {
      fds[n] = (struct pollfd){.fd = lazy_forwarder.listeners[i], .events = POLLIN};
      owner[n++] = NULL;
    }
#endif
    if (poll(fds, (nfds_t)n, timeout) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
#ifdef LINKED_FORWARDER
    for (int i = ports; i < n; i++)
      if (fds[i].revents && lazy_forwarder.pending) fork_lazy_forwarder();
#endif
    /* Output first, then exits, so that a process's last chunks are sent before its exit is. */
    int polled = n;
    for (int i = 0; i < polled; i++) {
      if (!fds[i].revents || !owner[i]) continue;
      struct child *ch = owner[i];
      if (which[i] == 0) flush_stdin(ch);
      else if (ch->out[which[i]] == fds[i].fd) relay_output(ch, which[i]);
    }
    if (fds[0].revents) {
      struct signalfd_siginfo info;
      while (read(sigfd, &info, sizeof info) > 0) continue;
      reap();
      if (sandbox_mode) sweep_orphans();
    }
    if (fds[1].revents) {
      if (have == requests.cap) grow_zeroed(&requests.buf, &requests.cap, have, have + 1);
      unsigned char *inbuf = requests.buf;
      ssize_t got = read(0, inbuf + have, requests.cap - have);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        /* Ambient went away: so does this helper, and with it what it started (PDEATHSIG). */
        exit(0);
      }
      have += (size_t)got;
      size_t off = 0;
      while (have - off >= 4) {
        uint32_t len;
        memcpy(&len, inbuf + off, 4);
        if (len > MAX_FRAME) die("frame too large");
        if (have - off - 4 < len) {
          if (requests.cap < len + 4) {
            grow_zeroed(&requests.buf, &requests.cap, have, len + 4);
            inbuf = requests.buf;
          }
          break;
        }
        handle_request(inbuf + off + 4, len);
        off += 4 + len;
      }
      memmove(inbuf, inbuf + off, have - off);
      /* The requests handled: zeroed (see free_zeroed). */
      explicit_bzero(inbuf + (have - off), off);
      have -= off;
    }
    free_done_children();
  }
}
