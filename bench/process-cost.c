/*
 * What creating a process costs this machine, in CPU time (user + system, the process's and its
 * children's, from getrusage): a fork and exit of a small static program, the same with an exec of
 * a static no-op in the child, and what a page fault's trap adds to a page's first touch. These are
 * what a sandboxed execution's processes cost (docs/PERFORMANCE.md), and they differ severalfold
 * between machines of one kind. Compiled and run by bench/machine.ts for every bench's header;
 * prints "<fork ms> <fork+exec ms> <first touch of a page µs> <its fault's share µs, or -1>".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define STARTS 200
#define PAGES 8192
#define PAGE 4096

static double cpu_ms(void) {
  struct rusage self, children;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  const struct timeval *t[] = {&self.ru_utime, &self.ru_stime, &children.ru_utime,
                               &children.ru_stime};
  double ms = 0;
  for (int i = 0; i < 4; i++) ms += t[i]->tv_sec * 1e3 + t[i]->tv_usec / 1e3;
  return ms;
}

/* CPU per start: a fork whose child exits at once, or execs this program as a no-op. */
static double starts(int exec) {
  double t0 = cpu_ms();
  for (int i = 0; i < STARTS; i++) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      if (exec) execl("/proc/self/exe", "process-cost", "--noop", (char *)NULL);
      _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  }
  return (cpu_ms() - t0) / STARTS;
}

/*
 * The first touch of PAGES fresh pages (a fault each) against the same pages made present in one
 * call (MADV_POPULATE_WRITE: the same allocation and zeroing, no trap): their difference per page
 * is what the fault itself costs. Huge pages are off for the region, so that each page faults.
 */
static double touch_ms(int populate) {
  char *p = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) return -1;
  madvise(p, (size_t)PAGES * PAGE, MADV_NOHUGEPAGE);
  double t0 = cpu_ms();
#ifdef MADV_POPULATE_WRITE
  if (populate && madvise(p, (size_t)PAGES * PAGE, MADV_POPULATE_WRITE) < 0) {
    munmap(p, (size_t)PAGES * PAGE);
    return -1;
  }
#else
  if (populate) {
    munmap(p, (size_t)PAGES * PAGE);
    return -1;
  }
#endif
  for (size_t i = 0; i < PAGES; i++) p[i * PAGE] = 1;
  double ms = cpu_ms() - t0;
  munmap(p, (size_t)PAGES * PAGE);
  return ms;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--noop") == 0) return 0;
  double fork_ms = starts(0), exec_ms = starts(1);
  /* The lowest of three rounds of each: what the other processes of the machine add is noise. */
  double faulted = -1, populated = -1;
  for (int round = 0; round < 3; round++) {
    double f = touch_ms(0), p = touch_ms(1);
    if (f >= 0 && (faulted < 0 || f < faulted)) faulted = f;
    if (p >= 0 && (populated < 0 || p < populated)) populated = p;
  }
  double touch_us = faulted >= 0 ? faulted * 1e3 / PAGES : -1;
  double fault_us = faulted >= 0 && populated >= 0 ? (faulted - populated) * 1e3 / PAGES : -1;
  printf("%.3f %.3f %.1f %.1f\n", fork_ms, exec_ms, touch_us, fault_us);
  return fork_ms < 0 || exec_ms < 0;
}
