/*
 * ambient-dir-reset: gives a directory back the state Ambient made it in, for the directory a
 * pooled container has at /workspace when it goes back to the pool (see container-returns.ts and
 * dir-resetter.ts): the extended attributes a user can set on it removed (user.* and the POSIX
 * ACLs, system.posix_acl_access and _default), its mode and owner set, its times now. The
 * directory is opened without following a link, and everything is done through that descriptor.
 *
 * `ambient-dir-reset DIR MODE UID GID`: one directory; exit status 0 once done, 1 on any failure.
 * `ambient-dir-reset --serve`: one request per line on stdin, `MODE UID GID DIR` (the directory
 * last: the rest of the line), answered `ok` or `fail` on a line of its own, in order, until stdin
 * ends. A worker keeps one running: a process start per container returned cost ~7 ms of CPU on a
 * small VM, as much as the rest of the return. A failure removes the container instead of reusing it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int removable(const char *name) {
  return strncmp(name, "user.", 5) == 0 || strcmp(name, "system.posix_acl_access") == 0 ||
         strcmp(name, "system.posix_acl_default") == 0;
}

/* Removes the removable attributes of `fd`; 0 once done. */
static int remove_attributes(int fd) {
  ssize_t size = flistxattr(fd, NULL, 0);
  if (size < 0) {
    if (errno == ENOTSUP) return 0;
    perror("flistxattr");
    return -1;
  }
  if (size == 0) return 0;
  char *names = malloc((size_t)size);
  if (!names) return -1;
  size = flistxattr(fd, names, (size_t)size);
  int result = 0;
  if (size < 0) {
    perror("flistxattr");
    result = -1;
  }
  for (char *name = names; result == 0 && name < names + size; name += strlen(name) + 1) {
    if (removable(name) && fremovexattr(fd, name) != 0 && errno != ENODATA) {
      perror("fremovexattr");
      result = -1;
    }
  }
  free(names);
  return result;
}

static int reset(const char *dir, mode_t mode, uid_t uid, gid_t gid) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    perror("open");
    return -1;
  }
  int result = remove_attributes(fd);
  if (result == 0 && (fchown(fd, uid, gid) != 0 || fchmod(fd, mode) != 0 ||
                      futimens(fd, NULL) != 0)) {
    perror("reset");
    result = -1;
  }
  close(fd);
  return result;
}

/*
 * Parses `MODE UID GID DIR` (DIR the rest of the line, its newline cut, an absolute path; MODE at
 * most 0777, no -1 for "unchanged"); -1 when malformed.
 */
static int reset_request(char *line) {
  line[strcspn(line, "\n")] = '\0';
  char *end;
  long mode = strtol(line, &end, 8);
  if (end == line || *end != ' ' || mode < 0 || mode > 0777) return -1;
  char *next = end + 1;
  long uid = strtol(next, &end, 10);
  if (end == next || *end != ' ' || uid < 0 || uid > 0x7fffffffL) return -1;
  next = end + 1;
  long gid = strtol(next, &end, 10);
  if (end == next || *end != ' ' || gid < 0 || gid > 0x7fffffffL || end[1] != '/') return -1;
  return reset(end + 1, (mode_t)mode, (uid_t)uid, (gid_t)gid);
}

static int serve(void) {
  char *line = NULL;
  size_t size = 0;
  while (getline(&line, &size, stdin) > 0) {
    fputs(reset_request(line) == 0 ? "ok\n" : "fail\n", stdout);
    fflush(stdout);
  }
  free(line);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--serve") == 0) return serve();
  if (argc != 5) {
    fprintf(stderr, "usage: %s DIR MODE UID GID | --serve\n", argv[0]);
    return 1;
  }
  mode_t mode = (mode_t)strtol(argv[2], NULL, 8);
  return reset(argv[1], mode, (uid_t)atol(argv[3]), (gid_t)atol(argv[4])) == 0 ? 0 : 1;
}
