/* test_alloc_file: an allocation file's layer split against the one a run
 * gives (alloc_file_split_agrees), compared with the split the run's
 * workload computes (partition_of) and the message's exact text. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc_file.h"
#include "models/partition.h"
#include "tests/support.h"

TestSuite(alloc_file, .init = support_dir_make, .fini = support_dir_remove);

/* 6 devices in 3 sites, 3 stages x 2 replicas of 6 layers. */
static scenario *three_sites(void) {
  return support_build(&(support_spec){
      .nsites = 3, .site = {.devices = 2},
      .workload = "\"model\": \"gpt3-small\", \"layers\": 6, \"batch\": 8, "
                  "\"micro_batch\": 1, \"stages\": 3, \"replicas\": 2"});
}

/* The file with layers_per_stage split, read against s. */
static void read_file(const scenario *s, const char *split, alloc_file *f) {
  char text[256];
  snprintf(text, sizeof text, "{\"stages\": 3, \"replicas\": 2,\n"
           " \"layers_per_stage\": %s,\n \"pipelines\": [[0, 2, 4], [1, 3, "
           "5]]}\n", split);
  const char *path = support_write_file(support_path("a.json"), text);
  err e;
  err_clear(&e);
  cr_assert_eq(alloc_file_read(path, s->ndevices, f, &e), ERR_OK, "%s", e.msg);
}

Test(alloc_file, split_agrees_when_the_run_gives_the_same) {
  static const char *const given[] = {"[1, 2, 3]", "[2, 2, 2]", "[4, 1, 1]"};
  for (int g = 0; g < 3; g++)
    for (int h = 0; h < 3; h++) {
      scenario *s = three_sites();
      scenario_knobs k;
      scenario_knobs_init(&k);
      int *list = NULL, mine[3];
      char text[16];
      snprintf(text, sizeof text, "%c,%c,%c", given[h][1], given[h][4],
               given[h][7]);
      cr_assert_eq(partition_knob_split(s, &k, text, &list, NULL), ERR_OK);
      cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
      alloc_file f;
      read_file(s, given[g], &f);
      cr_assert_eq(partition_of(s, f.a, mine, NULL), ERR_OK);
      bool same = true; /* the naive reference: the two lists equal */
      for (int st = 0; st < 3; st++)
        same = same && mine[st] == f.split.layers_per_stage[st];
      err e;
      err_clear(&e);
      int rc = alloc_file_split_agrees(&f, s, f.a, "--layers-per-stage X", &e);
      cr_assert_eq(rc == ERR_OK, same, "%s against %s", given[g], text);
      cr_assert_eq(same, g == h);
      if (!same) {
        char want[256];
        snprintf(want, sizeof want, "%s:2: layers_per_stage %s disagrees "
                 "with --layers-per-stage X (which gives %s here): drop one "
                 "of them", f.path, given[g], given[h]);
        cr_assert_str_eq(e.msg, want);
        cr_assert_eq(rc, ERR_CONFIG);
      }
      alloc_file_free(&f);
      free(list);
      scenario_free(s);
    }
}

Test(alloc_file, split_agrees_without_a_split_in_the_file) {
  scenario *s = three_sites();
  alloc_file f;
  err e;
  err_clear(&e);
  const char *path = support_write_file(
      support_path("b.json"), "{\"stages\": 3, \"replicas\": 2, "
      "\"pipelines\": [[0, 2, 4], [1, 3, 5]]}\n");
  cr_assert_eq(alloc_file_read(path, s->ndevices, &f, &e), ERR_OK, "%s",
               e.msg);
  cr_assert_eq(alloc_file_split_agrees(&f, s, f.a, "x", &e), ERR_OK);
  alloc_file_free(&f);
  scenario_free(s);
}

/* alloc_file_join against its steps called by hand (the knobs, the split's
 * sum, the file's split where the run gives none), and the shape it
 * reports; alloc_file_blame's text. */
Test(alloc_file, join_is_its_steps_and_blame_names_the_shape) {
  static const char *const split[] = {"[1, 2, 3]", "[2, 2, 3]"};
  for (int i = 0; i < 2; i++)
    for (int given = 0; given < 2; given++) {
      scenario *s = three_sites(), *t = three_sites();
      alloc_file f;
      read_file(s, split[i], &f);
      scenario_knobs k, want;
      scenario_knobs_init(&k);
      scenario_knobs_init(&want);
      err e = {0}, we = {0};
      bool shaped = true;
      int rc = alloc_file_join(&f, s, &k, given, &shaped, &e);
      int wrc = alloc_file_knobs(&f, t, &want, &we);
      if (!wrc) wrc = alloc_file_check_split(&f, t, &want, &we);
      cr_assert_eq(rc, wrc, "%s", split[i]);
      cr_assert_str_eq(e.msg, we.msg);
      cr_assert(!shaped); /* the file is the scenario's 3 x 2 */
      bool joined = !rc && !given;
      cr_assert_eq(k.layers_per_stage, joined ? f.split.layers_per_stage
                                              : NULL);
      cr_assert_eq(k.nlayers_per_stage, joined ? 3 : want.nlayers_per_stage);
      err b = {0};
      err_set_field(&b, WORKLOAD_batch, ERR_CONFIG, "no");
      alloc_file_blame(&f, ERR_CONFIG, &b);
      char msg[ERR_MSG_MAX];
      snprintf(msg, sizeof msg, "%s: its 2 pipelines of 3 stages: no", f.path);
      cr_assert_str_eq(b.msg, msg);
      cr_assert_eq(err_field(&b), WORKLOAD_batch);
      alloc_file_free(&f);
      scenario_free(s), scenario_free(t);
    }
}
