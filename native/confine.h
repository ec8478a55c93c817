/* `ambient-spawner --confine`: a bubblewrap execution's sandbox made without bwrap (confine.c). */
#ifndef AMBIENT_CONFINE_H
#define AMBIENT_CONFINE_H
int confine_main(int argc, char **argv);
#endif
