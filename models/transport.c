/* transport: see transport.h. The model names are the ones the command
 * line, the sweep files and the results store spell. */
#include "models/transport.h"

#include <string.h>

static const char *const model_names[TRANSPORT_NMODELS] = {"ideal", "netem",
                                                           "tcp"};

const char *transport_model_name(transport_model m) { return model_names[m]; }

int transport_model_parse(const char *name) {
  for (int i = 0; i < TRANSPORT_NMODELS; i++)
    if (strcmp(name, model_names[i]) == 0) return i;
  return -1;
}
