/* whatif_parse: the what-if grammar (whatif.h states it; sim_whatif_parse
 * is declared there) and the setting lists that explain's own what-ifs
 * are built from, so that their labels read back as the same change.
 * circle: internal header of the what-if module's two files (whatif.c
 * builds its own what-ifs through these setting lists), on whatif.h's
 * sim_whatif. */
#ifndef SIM_WHATIF_PARSE_H
#define SIM_WHATIF_PARSE_H

#include "sim/whatif.h"

/* A link's settings p ("bw=F,lat=F,flow=G,window=B": any, each once, none
 * empty) into w (its bw and lat reset to 1 first); spec names the what-if
 * in messages. ERR_OK, or ERR_CONFIG with e saying what is wrong. */
int sim_whatif_parse_link_settings(const char *spec, const char *p,
                                   sim_whatif *w, err *e);

/* The hosts' settings p ("window=B,sockets=N": either or both, each once)
 * of site `site` into w (kind SIM_WHATIF_HOSTS). ERR_OK or ERR_CONFIG. */
int sim_whatif_parse_hosts(const char *spec, const char *p, int site,
                           sim_whatif *w, err *e);

#endif
