/*
 * `ambient-spawner --confine <options> -- <program> <args…>`: makes a bubblewrap execution's sandbox
 * itself, then execs <program> as its pid 1, instead of an exec of bwrap. The options are the
 * subset of bwrap's that src/modules/workers/sandbox/backends/bubblewrap builds, with bwrap's
 * meaning (bubblewrap 0.8's order of steps, below); anything else is refused before anything is
 * made, so a sandbox is never weaker than the bwrap it stands in for.
 *
 * Why: on hosts where starting a process is dear (a paravirtualised guest: every page-table
 * update a hypercall), bwrap cost 7-8 ms of CPU per sandbox above a plain exec, most of it its
 * dynamic loader (libselinux, libpcre2, libcap) and a mountinfo parse per bind; this program is
 * static, already mapped by the host's spawner, and makes each mount read-only with one
 * mount_setattr over its whole tree (Linux 5.12). Where the host refuses any step (EPERM, EACCES,
 * ENOSYS, EINVAL: no mount_setattr, user namespaces refused to this program but allowed to a
 * setuid or AppArmor-blessed bwrap), it exits 78 before the sandbox's program runs, and Ambient
 * makes this sandbox and the later ones with bwrap; any other failure (a source missing, a
 * namespace limit reached) exits 71, and only this sandbox goes to bwrap; usage errors exit 64
 * (docs/PERFORMANCE.md has the figures).
 *
 * The steps, as bwrap's: this process clones the sandbox's pid 1 into new user, mount, pid and the
 * asked-for IPC, UTS, network and cgroup namespaces, drops every capability it had, then only
 * waits for it and exits with its status (128 + a signal that ended it); it dies with whoever
 * started it, and the sandbox with it. The child maps root inside to this process's user
 * (setgroups denied), brings the loopback up, resolves each bind's source on the host (symlinks
 * followed, as bwrap's realpath), makes every mount a slave, builds the new root on a
 * tmpfs from the old root's paths, pivots into it and detaches the old root; then, for
 * --disable-userns, sets its user namespace's max_user_namespaces to 1, and makes a nested user
 * namespace in which <uid>/<gid> are the outer root (the one namespace left to make), drops the
 * bounding set there, checks that no further user namespace can be made, drops every capability,
 * starts a session of its own and execs. no_new_privs and the parent-death signal hold throughout.
 *
 * The host's spawn helper runs the same steps without an exec of `--confine` (confine_prepare and
 * confine_child, below): it clones the sandbox's pid 1 itself, and there is no outer process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "confine.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
struct mount_attr {
  unsigned long long attr_set, attr_clr, propagation, userns_fd;
};
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/*
 * The host refused a step or lacks one (EPERM, EACCES, ENOSYS, EINVAL): Ambient makes this sandbox
 * and the later ones with bwrap. Any other failure (a missing source, a namespace limit reached,
 * no memory) exits 71: this sandbox alone goes to bwrap.
 */
#define CONFINE_REFUSED 78
#define CONFINE_FAILED 71
#define MAX_OPS 128

enum op_kind { OP_BIND, OP_RO_BIND, OP_DEV_BIND, OP_SYMLINK, OP_PROC, OP_DEV, OP_TMPFS, OP_REMOUNT_RO };

struct op {
  enum op_kind kind;
  const char *source; /* a host path (the symlink's target for OP_SYMLINK) */
  const char *dest;   /* a path inside */
  int optional;       /* --ro-bind-try: skipped when the source does not exist */
  int missing;        /* an optional source found missing (see resolve_sources) */
};

static struct op ops[MAX_OPS];
static int op_count;

static void fail(const char *step, const char *path) {
  int e = errno;
  if (path) fprintf(stderr, "ambient-spawner --confine: %s %s: %s\n", step, path, strerror(e));
  else fprintf(stderr, "ambient-spawner --confine: %s: %s\n", step, strerror(e));
  int refused = e == EPERM || e == EACCES || e == ENOSYS || e == EINVAL;
  _exit(refused ? CONFINE_REFUSED : CONFINE_FAILED);
}

static void usage(const char *what) {
  fprintf(stderr, "ambient-spawner --confine: %s\n", what);
  exit(64);
}

/*
 * The host's /proc, opened before anything is mounted: the maps of the nested user namespace and
 * its limit are written through it once the old root is gone (the sandbox may have no /proc).
 */
static int proc_fd = -1;

/* Writes `text` to `path` under the host's /proc. */
static int write_file(const char *path, const char *text) {
  int fd = openat(proc_fd, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  int e = errno;
  close(fd);
  errno = e;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void write_maps(unsigned inside_uid, unsigned outside_uid, unsigned inside_gid,
                       unsigned outside_gid, int deny_groups) {
  char map[64];
  if (deny_groups && write_file("self/setgroups", "deny") < 0) fail("setgroups", NULL);
  snprintf(map, sizeof map, "%u %u 1\n", inside_uid, outside_uid);
  if (write_file("self/uid_map", map) < 0) fail("uid_map", NULL);
  snprintf(map, sizeof map, "%u %u 1\n", inside_gid, outside_gid);
  if (write_file("self/gid_map", map) < 0) fail("gid_map", NULL);
}

static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail("socket", NULL);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) fail("SIOCGIFFLAGS", "lo");
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) fail("SIOCSIFFLAGS", "lo");
  close(s);
}

/* `prefix` + `path` into `out` (PATH_MAX); refused when too long. */
static char *joined(char *out, const char *prefix, const char *path) {
  if (snprintf(out, 4096, "%s%s", prefix, path) >= 4096) {
    errno = ENAMETOOLONG;
    fail("path", path);
  }
  return out;
}

/* `dir`/`name` into `out` (PATH_MAX); refused when too long. */
static char *child_path(char *out, const char *dir, const char *name) {
  if (snprintf(out, 4096, "%s/%s", dir, name) >= 4096) {
    errno = ENAMETOOLONG;
    fail("path", dir);
  }
  return out;
}

/*
 * mkdir -p of `path`'s parents (mode 0755), as bwrap makes a destination's (bubblewrap 0.8.0 made
 * them 0700; the sandbox's one user owns them either way).
 */
static void make_parents(const char *path) {
  char buf[4096];
  joined(buf, "", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) < 0 && errno != EEXIST) fail("mkdir", buf);
    *p = '/';
  }
}

static void ensure_dir(const char *path) {
  if (mkdir(path, 0755) < 0 && errno != EEXIST) fail("mkdir", path);
}

static void ensure_file(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0 && errno != EEXIST) fail("create", path);
  if (fd >= 0) close(fd);
}

/* MS_NOSUID, MS_NODEV (unless `devices`) and MS_RDONLY (when `readonly`) on `path`'s mount, and
 * on every mount under it when `recursive`: bwrap's remount of each, in one call. */
static void restrict_mounts(const char *path, int readonly, int devices, int recursive) {
  struct mount_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_NOSUID | (devices ? 0 : MOUNT_ATTR_NODEV) |
                  (readonly ? MOUNT_ATTR_RDONLY : 0);
  if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) < 0)
    fail("mount_setattr", path);
}

/* A recursive bind (so nothing covered on the host shows through), then its flags. */
static void bind_mount(const char *source, const char *dest, int readonly, int devices) {
  if (mount(source, dest, NULL, MS_BIND | MS_REC | MS_SILENT, NULL) < 0) fail("bind", dest);
  restrict_mounts(dest, readonly, devices, 1);
}

static void mount_tmpfs(const char *dest, const char *options) {
  if (mount("tmpfs", dest, "tmpfs", MS_NOSUID | MS_NODEV | MS_SILENT, options) < 0) fail("tmpfs", dest);
}

static void make_symlink(const char *target, const char *path) {
  if (symlink(target, path) == 0) return;
  char existing[4096];
  ssize_t n = readlink(path, existing, sizeof existing - 1);
  if (n >= 0) {
    existing[n] = 0;
    if (strcmp(existing, target) == 0) return;
  }
  fail("symlink", path);
}

/* bwrap's --proc: a procfs of the new pid namespace, its writable parts that matter read-only. */
static void mount_proc(const char *dest) {
  ensure_dir(dest);
  if (mount("proc", dest, "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL) < 0) fail("proc", dest);
  static const char *const covered[] = {"sys", "sysrq-trigger", "irq", "bus"};
  char sub[4096];
  for (unsigned i = 0; i < sizeof covered / sizeof *covered; i++) {
    child_path(sub, dest, covered[i]);
    if (access(sub, W_OK) < 0) {
      if (errno == EACCES || errno == ENOENT || errno == EROFS) continue;
      fail("access", sub);
    }
    bind_mount(sub, sub, 1, 0);
  }
}

/* bwrap's --dev: a tmpfs with the host's harmless devices bound, its links, shm and a devpts. */
static void mount_dev(const char *dest) {
  ensure_dir(dest);
  mount_tmpfs(dest, "mode=0755");
  static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
  char to[4096], from[4096];
  for (unsigned i = 0; i < sizeof nodes / sizeof *nodes; i++) {
    child_path(to, dest, nodes[i]);
    child_path(from, "/oldroot/dev", nodes[i]);
    ensure_file(to);
    bind_mount(from, to, 0, 1);
  }
  static const char *const links[][2] = {
      {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
      {"fd", "/proc/self/fd"},      {"core", "/proc/kcore"},       {"ptmx", "pts/ptmx"},
  };
  for (unsigned i = 0; i < sizeof links / sizeof *links; i++) {
    child_path(to, dest, links[i][0]);
    make_symlink(links[i][1], to);
  }
  child_path(to, dest, "shm");
  ensure_dir(to);
  child_path(to, dest, "pts");
  ensure_dir(to);
  if (mount("devpts", to, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
    fail("devpts", to);
}

static int is_bind(const struct op *op) {
  return op->kind == OP_BIND || op->kind == OP_RO_BIND || op->kind == OP_DEV_BIND;
}

/*
 * Each bind's source as a path without symlinks, resolved against the host's root before the
 * pivot (as bwrap does): after it, an absolute link would resolve against the setup's root. An
 * optional source that does not exist is marked and skipped.
 */
static void resolve_sources(void) {
  for (int i = 0; i < op_count; i++) {
    struct op *op = &ops[i];
    if (!is_bind(op)) continue;
    char *real = realpath(op->source, NULL);
    if (real) op->source = real;
    else if (op->optional && errno == ENOENT) op->missing = 1;
    else fail("realpath", op->source);
  }
}

static void apply(const struct op *op) {
  char dest[4096], source[4096];
  if (op->missing) return;
  joined(dest, "/newroot", op->dest);
  struct stat st;
  if (is_bind(op)) {
    joined(source, "/oldroot", op->source);
    if (stat(source, &st) < 0) fail("stat", op->source);
  }
  make_parents(dest);
  switch (op->kind) {
  case OP_BIND:
  case OP_RO_BIND:
  case OP_DEV_BIND:
    if (S_ISDIR(st.st_mode)) ensure_dir(dest);
    else ensure_file(dest);
    bind_mount(source, dest, op->kind == OP_RO_BIND, op->kind == OP_DEV_BIND);
    return;
  case OP_SYMLINK:
    make_symlink(op->source, dest);
    return;
  case OP_PROC:
    mount_proc(dest);
    return;
  case OP_DEV:
    mount_dev(dest);
    return;
  case OP_TMPFS:
    ensure_dir(dest);
    mount_tmpfs(dest, "mode=0755");
    return;
  case OP_REMOUNT_RO:
    restrict_mounts(dest, 1, 0, 0);
    return;
  }
}

struct settings {
  int clone_flags;
  int cgroup_try;
  unsigned uid, gid;
  const char *hostname;
  const char *chdir_to;
  int disable_userns;
  char **program;
};

/* Each returns NULL, or what is wrong with the options (nothing is made until all were read). */
static const char *parse_id(const char *text, unsigned *id) {
  char *end;
  unsigned long value = strtoul(text, &end, 10);
  if (end == text || *end || value > 65535) return "a uid or gid must be 0-65535";
  *id = (unsigned)value;
  return NULL;
}

static const char *add_op(enum op_kind kind, const char *source, const char *dest, int optional) {
  if (op_count == MAX_OPS) return "too many mounts";
  if (dest[0] != '/') return "a destination must be an absolute path";
  ops[op_count++] = (struct op){.kind = kind, .source = source, .dest = dest, .optional = optional};
  return NULL;
}

static const char *parse(int argc, char **argv, struct settings *s) {
  static char unknown[160];
  int unshare_user = 0, as_pid_1 = 0, caps_dropped = 0, die_with_parent = 0, new_session = 0;
  const char *wrong = NULL;
  memset(s, 0, sizeof *s);
  op_count = 0;
  int i = 0;
  /* How many values the option at argv[i] takes; refused when they are not there. */
#define TAKES(n) \
  if (i + (n) >= argc) return "an option lacks its value"; \
  else
  for (; i < argc && !wrong; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      s->program = argv + i + 1;
      break;
    }
    if (!strcmp(a, "--unshare-user")) unshare_user = 1;
    else if (!strcmp(a, "--unshare-pid")) s->clone_flags |= CLONE_NEWPID;
    else if (!strcmp(a, "--unshare-ipc")) s->clone_flags |= CLONE_NEWIPC;
    else if (!strcmp(a, "--unshare-uts")) s->clone_flags |= CLONE_NEWUTS;
    else if (!strcmp(a, "--unshare-net")) s->clone_flags |= CLONE_NEWNET;
    else if (!strcmp(a, "--unshare-cgroup-try")) s->cgroup_try = 1;
    else if (!strcmp(a, "--disable-userns")) s->disable_userns = 1;
    else if (!strcmp(a, "--die-with-parent")) die_with_parent = 1;
    else if (!strcmp(a, "--new-session")) new_session = 1;
    else if (!strcmp(a, "--as-pid-1")) as_pid_1 = 1;
    else if (!strcmp(a, "--uid")) { TAKES(1) wrong = parse_id(argv[++i], &s->uid); }
    else if (!strcmp(a, "--gid")) { TAKES(1) wrong = parse_id(argv[++i], &s->gid); }
    else if (!strcmp(a, "--hostname")) { TAKES(1) s->hostname = argv[++i]; }
    else if (!strcmp(a, "--chdir")) { TAKES(1) s->chdir_to = argv[++i]; }
    else if (!strcmp(a, "--cap-drop")) {
      TAKES(1) if (strcmp(argv[++i], "ALL")) return "only --cap-drop ALL";
      caps_dropped = 1;
    } else if (!strcmp(a, "--bind")) { TAKES(2) wrong = add_op(OP_BIND, argv[i + 1], argv[i + 2], 0); i += 2; }
    else if (!strcmp(a, "--ro-bind")) { TAKES(2) wrong = add_op(OP_RO_BIND, argv[i + 1], argv[i + 2], 0); i += 2; }
    else if (!strcmp(a, "--ro-bind-try")) { TAKES(2) wrong = add_op(OP_RO_BIND, argv[i + 1], argv[i + 2], 1); i += 2; }
    else if (!strcmp(a, "--dev-bind")) { TAKES(2) wrong = add_op(OP_DEV_BIND, argv[i + 1], argv[i + 2], 0); i += 2; }
    else if (!strcmp(a, "--symlink")) { TAKES(2) wrong = add_op(OP_SYMLINK, argv[i + 1], argv[i + 2], 0); i += 2; }
    else if (!strcmp(a, "--proc")) { TAKES(1) wrong = add_op(OP_PROC, NULL, argv[++i], 0); }
    else if (!strcmp(a, "--dev")) { TAKES(1) wrong = add_op(OP_DEV, NULL, argv[++i], 0); }
    else if (!strcmp(a, "--tmpfs")) { TAKES(1) wrong = add_op(OP_TMPFS, NULL, argv[++i], 0); }
    else if (!strcmp(a, "--remount-ro")) { TAKES(1) wrong = add_op(OP_REMOUNT_RO, NULL, argv[++i], 0); }
    else {
      snprintf(unknown, sizeof unknown, "unknown option %.120s", a);
      return unknown;
    }
  }
#undef TAKES
  if (wrong) return wrong;
  /* What Ambient's sandboxes always ask for; without it this is not the sandbox bwrap would make. */
  if (!unshare_user || !(s->clone_flags & CLONE_NEWPID) || !as_pid_1 || !caps_dropped ||
      !die_with_parent || !new_session)
    return "needs --unshare-user --unshare-pid --as-pid-1 --cap-drop ALL --die-with-parent --new-session";
  if (s->hostname && !(s->clone_flags & CLONE_NEWUTS)) return "--hostname needs --unshare-uts";
  if (!s->program || !s->program[0]) return "no program after --";
  /* Run as given, never looked up on a PATH: Ambient names its programs by their path. */
  if (s->program[0][0] != '/') return "the program must be an absolute path";
  s->clone_flags |= CLONE_NEWUSER | CLONE_NEWNS;
  return NULL;
}

/* Empties the bounding set; -1 when a drop was refused (without CAP_SETPCAP). */
static int drop_bounding_set(void) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
      if (errno == EINVAL) break; /* past the kernel's last capability */
      return -1;
    }
  }
  return 0;
}

/* No ambient, effective, permitted or inheritable capability left; -1 when refused. */
static int drop_capabilities(void) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) return -1;
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct none[2];
  memset(none, 0, sizeof none);
  return (int)syscall(SYS_capset, &header, none);
}

/* Ends this process unless the process `outer` (a pidfd; -1: none to look at) still runs. */
static void outer_alive(int outer) {
  struct pollfd gone = {.fd = outer, .events = POLLIN};
  if (outer >= 0 && poll(&gone, 1, 0) != 0) _exit(CONFINE_FAILED);
}

/*
 * The sandbox's pid 1, in its new namespaces: builds what it sees, then becomes the program.
 * `outer`: a pidfd of the process that made it (-1 where the kernel has none), looked at each time
 * the parent-death signal is set (first, and again after the credential changes cleared it): an
 * outer process that died before that would leave it running. Closed by the exec.
 */
static void become_sandbox(const struct settings *s, unsigned outer_uid, unsigned outer_gid, int outer,
                           char **envp) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) fail("PR_SET_PDEATHSIG", NULL);
  outer_alive(outer);
  proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0) fail("open", "/proc");
  /* Root inside (devpts needs it mapped) until the nested namespace below. */
  write_maps(0, outer_uid, 0, outer_gid, 1);
  int max_userns = -1;
  if (s->disable_userns) {
    /* This user namespace's own limit; opened while the host's /proc is still in sight. */
    max_userns = openat(proc_fd, "sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
    if (max_userns < 0) fail("open", "/proc/sys/user/max_user_namespaces");
  }
  if (s->clone_flags & CLONE_NEWNET) loopback_up();
  if (s->hostname && sethostname(s->hostname, strlen(s->hostname)) < 0) fail("sethostname", NULL);
  /* Before anything is mounted over the host's paths (the setup's tmpfs covers /tmp). */
  resolve_sources();
  mode_t old_umask = umask(0);
  if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC | MS_SILENT, NULL) < 0) fail("make / slave", NULL);
  mount_tmpfs("/tmp", NULL);
  if (chdir("/tmp") < 0) fail("chdir", "/tmp");
  if (mkdir("newroot", 0755) < 0) fail("mkdir", "newroot");
  if (mount("newroot", "newroot", NULL, MS_BIND | MS_REC | MS_SILENT, NULL) < 0) fail("bind", "newroot");
  if (mkdir("oldroot", 0755) < 0) fail("mkdir", "oldroot");
  if (syscall(SYS_pivot_root, "/tmp", "oldroot") < 0) fail("pivot_root", NULL);
  if (chdir("/") < 0) fail("chdir", "/");
  for (int i = 0; i < op_count; i++) apply(&ops[i]);
  if (mount("oldroot", "oldroot", NULL, MS_REC | MS_PRIVATE | MS_SILENT, NULL) < 0)
    fail("make oldroot private", NULL);
  if (umount2("oldroot", MNT_DETACH) < 0) fail("umount", "oldroot");
  int base = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (base < 0) fail("open", "/");
  if (chdir("/newroot") < 0) fail("chdir", "/newroot");
  if (syscall(SYS_pivot_root, ".", ".") < 0) fail("pivot_root", "/newroot");
  if (fchdir(base) < 0) fail("fchdir", NULL);
  if (umount2(".", MNT_DETACH) < 0) fail("umount", "the setup root");
  if (chdir("/") < 0) fail("chdir", "/");
  close(base);
  if (max_userns >= 0) {
    if (write(max_userns, "1", 1) != 1) fail("write", "max_user_namespaces");
    close(max_userns);
  }
  /* The sandbox's own user: the outer root of a nested namespace (setgroups stays denied). */
  if (unshare(CLONE_NEWUSER) < 0) fail("unshare", "the nested user namespace");
  if (drop_bounding_set() < 0) fail("PR_CAPBSET_DROP", NULL);
  write_maps(s->uid, 0, s->gid, 0, 0);
  if (s->disable_userns && unshare(CLONE_NEWUSER) == 0) {
    errno = EPERM;
    fail("disable user namespaces", "a further one could still be made");
  }
  close(proc_fd);
  if (drop_capabilities() < 0) fail("capset", NULL);
  umask(old_umask);
  /* Made by the host's spawn helper (confine_child), it leads a session already. */
  if (getsid(0) != getpid() && setsid() < 0) fail("setsid", NULL);
  const char *cwd = s->chdir_to ? s->chdir_to : "/";
  if (chdir(cwd) < 0) fail("chdir", cwd);
  /* The credential changes above may have cleared it. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) fail("PR_SET_PDEATHSIG", NULL);
  outer_alive(outer);
  execve(s->program[0], s->program, envp);
  fprintf(stderr, "ambient-spawner --confine: exec %s: %s\n", s->program[0], strerror(errno));
  _exit(127);
}

int confine_main(int argc, char **argv) {
  struct settings s;
  const char *wrong = parse(argc, argv, &s);
  if (wrong) usage(wrong);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail("PR_SET_NO_NEW_PRIVS", NULL);
  /* As bwrap's monitor: it dies with whoever started it, and the sandbox with it. */
  pid_t starter = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) fail("PR_SET_PDEATHSIG", NULL);
  if (getppid() != starter) _exit(CONFINE_FAILED);
  unsigned outer_uid = geteuid(), outer_gid = getegid();
  int outer = (int)syscall(SYS_pidfd_open, getpid(), 0);
  int flags = s.clone_flags | (s.cgroup_try ? CLONE_NEWCGROUP : 0);
  pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid < 0 && errno == EINVAL && s.cgroup_try) {
    flags &= ~CLONE_NEWCGROUP;
    pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  }
  if (pid < 0) fail("clone", NULL);
  if (pid == 0) become_sandbox(&s, outer_uid, outer_gid, outer, environ);
  if (outer >= 0) close(outer);
  /* It only waits now: whatever capabilities it had (a root service's) go, as bwrap's monitor's. */
  drop_bounding_set();
  drop_capabilities();
  /* As bwrap's monitor: the sandbox's stdio is its pid 1's alone (an end of stream means it ended). */
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    close(devnull);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 71;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/*
 * The host's spawn helper making a sandbox in the child it forks, instead of forking a process
 * that execs `--confine`, clones the sandbox and waits for it (that exec, process and wait cost
 * ~2 ms of CPU per execution on a paravirtualised guest, docs/PERFORMANCE.md). The child is then
 * the sandbox's pid 1 itself, the helper's child, reaped and reported by it as a command is.
 */
static struct settings prepared;
static unsigned prepared_uid, prepared_gid;

int confine_prepare(int argc, char **argv) {
  if (parse(argc, argv, &prepared)) return -1;
  /* Read before the clone: in the new user namespace, until its maps are written, it is nobody. */
  prepared_uid = geteuid();
  prepared_gid = getegid();
  return prepared.clone_flags;
}

void confine_child(char **envp, int helper) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail("PR_SET_NO_NEW_PRIVS", NULL);
  /* Its cgroup joined by the helper (a cgroup namespace rooted there, as --confine's clone). */
  if (prepared.cgroup_try && unshare(CLONE_NEWCGROUP) < 0 && errno != EINVAL)
    fail("unshare", "the cgroup namespace");
  become_sandbox(&prepared, prepared_uid, prepared_gid, helper, envp);
  _exit(127);
}
