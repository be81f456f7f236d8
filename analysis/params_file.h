/* params_file: params.json, the file `geodes calibrate -o` writes and
 * `--params FILE` reads (simulate, validate, sweep, reproduce, calibrate):
 *
 *   {"format": "geodes-params 1",
 *    "params": {"gpu_efficiency": {"value": 0.58, "uncertainty": 0.004,
 *                                  "unit": "fraction"},
 *               "window_bytes": 1.2e6},
 *    "fit": {...}}
 *
 * A parameter is a number or an object with a numeric "value" (other keys
 * of it are read by people, not here); "fit" is the calibration's report,
 * ignored on reading. Parameters absent keep their defaults. "format",
 * when given, must be PARAMS_FILE_FORMAT: another version is refused
 * ("PATH:LINE: format: ..."), never read as this one.
 * Invariant: params_file_apply sets nothing unless the whole file passed
 * its checks. */
#ifndef ANALYSIS_PARAMS_FILE_H
#define ANALYSIS_PARAMS_FILE_H

#include <jansson.h>

#include "base/err.h"

#define PARAMS_FILE_FORMAT "geodes-params 1"

/* Reads the params.json at path and sets its parameters (models/params.h).
 * ERR_IO, ERR_PARSE ("PATH:LINE: ..."), ERR_UNKNOWN for a name not in the
 * table, ERR_RANGE for a value outside its bounds ("PATH: params.NAME:
 * ..."), with nothing set. */
int params_file_apply(const char *path, err *e);

/* The same for the text[0 .. len) of a file named path in messages. */
int params_file_apply_text(const char *text, size_t len, const char *path,
                           err *e);

/* The "params" object of the current values of the ids (n of them) with
 * their uncertainties (NULL, or NAN where unknown), then of every other
 * parameter whose current value is not its built-in one (a --params value
 * a fit keeps), each {value, [uncertainty,] unit, default}; the caller
 * owns it. */
json_t *params_file_json(const int *ids, const double *sigma, int n);

#endif
