/* json_out: the one writer of the JSON geodes prints or saves — its
 * outputs (--json), the files it writes (params.json, a network's links)
 * and the reals of its CSV (a measured trace): jansson's layout, each real
 * in the fewest digits that read back as the same double. */
#ifndef BASE_JSON_OUT_H
#define BASE_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* o written to f as json_dumpf lays it out under flags (JSON_COMPACT,
 * JSON_INDENT(n)), every real in the fewest digits that read back as the
 * same double: 0.2, never 0.20000000000000001. 0, or -1 when a part could
 * not be written. */
int json_out_write(const json_t *o, FILE *f, size_t flags);

/* x as json_out_write writes it, into buf (at least 32 bytes). */
void json_out_real(double x, char *buf, size_t size);

#endif
