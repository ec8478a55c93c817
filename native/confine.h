/* `ambient-spawner --confine`: a bubblewrap execution's sandbox made without bwrap (confine.c). */
#ifndef AMBIENT_CONFINE_H
#define AMBIENT_CONFINE_H
int confine_main(int argc, char **argv);
/*
 * For the host's spawn helper: `--confine`'s options (the arguments after it) read into this
 * process, and the flags to clone the sandbox's pid 1 with; -1 when they are refused (an exec of
 * `--confine` says why). CLONE_NEWCGROUP is left to the child, once the helper moved it into its
 * cgroup.
 */
int confine_prepare(int argc, char **argv);
/*
 * In the child cloned with those flags, in its cgroup: makes the sandbox and execs its program with
 * `envp`; `helper`, a pidfd of the process that cloned it (-1: none), as --confine's `outer`.
 */
void confine_child(char **envp, int helper) __attribute__((noreturn));
#endif
