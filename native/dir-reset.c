/*
 * ambient-dir-reset DIR MODE UID GID: gives a directory back the state Ambient made it in, for the
 * directory a pooled container has at /workspace when it goes back to the pool (see
 * container-returns.ts): the extended attributes a user can set on it removed (user.* and the
 * POSIX ACLs, system.posix_acl_access and _default), its mode and owner set, its times now. The
 * directory is opened without following a link, and everything is done through that descriptor.
 * Exit status 0 once done, 1 on any failure (the container is then removed, not reused).
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

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s DIR MODE UID GID\n", argv[0]);
    return 1;
  }
  int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    perror("open");
    return 1;
  }
  ssize_t size = flistxattr(fd, NULL, 0);
  if (size < 0 && errno != ENOTSUP) {
    perror("flistxattr");
    return 1;
  }
  if (size > 0) {
    char *names = malloc((size_t)size);
    if (!names) return 1;
    size = flistxattr(fd, names, (size_t)size);
    if (size < 0) {
      perror("flistxattr");
      return 1;
    }
    for (char *name = names; name < names + size; name += strlen(name) + 1) {
      if (removable(name) && fremovexattr(fd, name) != 0 && errno != ENODATA) {
        perror("fremovexattr");
        return 1;
      }
    }
    free(names);
  }
  mode_t mode = (mode_t)strtol(argv[2], NULL, 8);
  if (fchown(fd, (uid_t)atol(argv[3]), (gid_t)atol(argv[4])) != 0 || fchmod(fd, mode) != 0 ||
      futimens(fd, NULL) != 0) {
    perror("reset");
    return 1;
  }
  return 0;
}
