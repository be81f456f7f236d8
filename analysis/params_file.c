/* params_file: reads and builds params.json (see params_file.h). */
#include "analysis/params_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/jfield.h"
#include "models/params.h"

/* The known names, for a message. */
static void known_names(char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (int p = 0; p < PARAMS_N && at < size; p++)
    at += (size_t)snprintf(buf + at, size - at, "%s%s", p ? ", " : "",
                           params_table[p].name);
}

/* Checks one entry; its value into *v. */
static int entry(const char *path, const char *key, json_t *j, int *id,
                 double *v, err *e) {
  char known[256];
  if ((*id = params_find(key)) < 0) {
    known_names(known, sizeof known);
    return err_set(e, ERR_UNKNOWN, "%s: params.%s: unknown parameter "
                   "(known: %s)", path, key, known);
  }
  json_t *x = json_is_object(j) ? json_object_get(j, "value") : j;
  if (!json_is_number(x))
    return err_set(e, ERR_PARSE, "%s: params.%s: not a number or "
                   "{\"value\": number}", path, key);
  *v = json_number_value(x);
  const params_info *i = &params_table[*id];
  char num[ERR_NUM_MAX], lo[ERR_NUM_MAX], hi[ERR_NUM_MAX];
  if (!(*v >= i->lo && *v <= i->hi) && !(*v == 0 && i->def == 0))
    return err_set(e, ERR_RANGE, "%s: params.%s: %s is not in [%s, %s] %s",
                   path, key, err_num(*v, num), err_num(i->lo, lo),
                   err_num(i->hi, hi), i->unit);
  return ERR_OK;
}

/* The file's "format", when given, is PARAMS_FILE_FORMAT: a file of
 * another version is refused, not read as this one. */
static int check_format(const char *text, size_t len, const char *path,
                        const json_t *root, err *e) {
  const json_t *f = json_object_get(root, "format");
  if (!f || (json_is_string(f) &&
             strcmp(json_string_value(f), PARAMS_FILE_FORMAT) == 0))
    return ERR_OK;
  jfield_doc d = {.file = path, .text = text, .len = len, .e = e};
  jfield_scope top = jfield_top();
  if (!json_is_string(f))
    return jfield_fail(&d, &top, "format", ERR_PARSE, "must be the string "
                       "\"%s\"", PARAMS_FILE_FORMAT);
  return jfield_fail(&d, &top, "format", ERR_PARSE, "'%s' is not \"%s\", "
                     "the version this geodes reads", json_string_value(f),
                     PARAMS_FILE_FORMAT);
}

int params_file_apply(const char *path, err *e) {
  size_t len;
  char *text = file_load(path, "the parameters", FILE_MAX_JSON_BYTES, &len, e);
  if (!text) return ERR_IO;
  int rc = params_file_apply_text(text, len, path, e);
  free(text);
  return rc;
}

int params_file_apply_text(const char *text, size_t len, const char *path,
                           err *e) {
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    return err_set(e, ERR_PARSE, "%s:%d: %s", path, je.line > 0 ? je.line : 1,
                   je.text);
  json_t *ps = json_object_get(root, "params");
  int rc = ERR_OK, ids[PARAMS_N];
  double vals[PARAMS_N];
  size_t n = 0;
  if (!json_is_object(root) || !json_is_object(ps))
    rc = err_set(e, ERR_PARSE, "%s: no \"params\" object", path);
  else
    rc = check_format(text, len, path, root, e);
  const char *key;
  json_t *v;
  if (!rc) json_object_foreach(ps, key, v) {
      if ((rc = entry(path, key, v, &ids[n], &vals[n], e))) break;
      n++;
    }
  for (size_t i = 0; !rc && i < n; i++) params_set(ids[i], vals[i]);
  json_decref(root);
  return rc;
}

/* Parameter id into o under its name, with its uncertainty sigma
 * (NAN: none). */
static void put_param(json_t *o, int id, double sigma) {
  const params_info *i = &params_table[id];
  json_t *p = json_object();
  json_object_set_new(p, "value", json_real(params_get(id)));
  if (isfinite(sigma)) json_object_set_new(p, "uncertainty", json_real(sigma));
  json_object_set_new(p, "unit", json_string(i->unit));
  json_object_set_new(p, "default", json_real(i->def));
  json_object_set_new(o, i->name, p);
}

json_t *params_file_json(const int *ids, const double *sigma, int n) {
  json_t *o = json_object();
  for (int k = 0; k < n; k++) put_param(o, ids[k], sigma ? sigma[k] : NAN);
  for (int p = 0; p < PARAMS_N; p++) /* what --params set, kept */
    if (params_get(p) != params_table[p].def &&
        !json_object_get(o, params_table[p].name))
      put_param(o, p, NAN);
  return o;
}
