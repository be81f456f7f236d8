/* cli_bill: a run's bill (models/bill.h) as the lines of a table and as
 * the "cost" object of --json, the same for every command that reports
 * time (simulate, predict, schedule, explain). A part without a price says
 * "not priced"; a total is printed only when every part of it is priced.
 * Invariant: prints what the bill holds, computes nothing. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_bill.h"

/* "$1.23" (4 significant digits below $10), or "not priced". */
static const char *usd(char *buf, size_t n, double x) {
  if (isnan(x)) snprintf(buf, n, "not priced");
  else if (fabs(x) < 10) snprintf(buf, n, "$%.4g", x);
  else snprintf(buf, n, "$%.2f", x);
  return buf;
}

/* One site's line, its name padded to w: its GPUs and their dollars, its
 * egress. */
static void site_line(const scenario *s, const bill *b, int k, int w) {
  const bill_site *x = &b->site[k];
  const scenario_site *st = &s->sites[k];
  char a[32], c[32];
  if (!x->devices && !x->egress_bytes) return;
  printf("  %-*s %4d GPUs ", w, st->name, x->devices);
  if (isnan(st->usd_per_gpu_hour))
    printf("not priced (no usd_per_gpu_hour, no instance of %s)",
           s->prices_file ? s->prices_file : "the price table");
  else
    printf("%s at $%.4g per GPU-hour%s", usd(a, sizeof a, x->usd),
           st->usd_per_gpu_hour, st->spot ? " (spot)" : "");
  if (x->egress_bytes > 0)
    printf("; egress %.3f GB %s", x->egress_bytes * 1e-9,
           usd(c, sizeof c, x->egress_usd));
  printf("\n");
}

/* Each distinct source of a GPU-hour of a held site, once. */
static void sources(const scenario *s, const bill *b) {
  for (int k = 0; k < s->nsites; k++) {
    const char *f = s->sites[k].price_from; /* a site's own key: no note */
    bool seen = !f || !b->site[k].devices || strncmp(f, "sites[", 6) == 0;
    for (int j = 0; j < k && !seen; j++)
      seen = b->site[j].devices && s->sites[j].price_from &&
             strcmp(s->sites[j].price_from, f) == 0;
    if (!seen) printf("  price from   %s\n", f);
  }
}

/* The energy line: kWh and carbon, or what is not known. */
static void energy_line(const scenario *s, const bill *b) {
  if (!b->busy_known) {
    printf("energy      not estimated (no device's busy time: geodes "
           "simulate gives it)\n");
    return;
  }
  if (isnan(b->busy_kwh)) {
    printf("energy      not known (a GPU without board power: give "
           "sites[].board_w)\n");
    return;
  }
  if (isnan(b->kwh))
    printf("energy      %.4g kWh busy at board power; idle time not "
           "counted (no idle power: give sites[].idle_w)\n", b->busy_kwh);
  else
    printf("energy      %.4g kWh (%.4g busy at board power, the rest idle)"
           "%s", b->kwh, b->busy_kwh, isnan(b->gco2) ? "" : ",");
  if (!isnan(b->gco2)) printf(" %.4g kg CO2e\n", b->gco2 * 1e-3);
  else if (!isnan(b->kwh)) printf("; carbon not known (sites[].gco2_per_kwh)\n");
  (void)s;
}

void cli_bill_print(const scenario *s, const bill *b, const char *per) {
  char t[32], c[32], g[32];
  if (!b->any_price) {
    printf("cost        not priced (no site states usd_per_gpu_hour or an "
           "instance of %s, no egress price)\n",
           s->prices_file ? s->prices_file : "the price table");
  } else {
    if (isnan(b->usd)) printf("cost        %s (total not priced): ", per);
    else printf("cost        %s %s: ", usd(t, sizeof t, b->usd), per);
    printf("GPUs %s (%d GPUs, %.4g GPU-hours), egress %s",
           usd(c, sizeof c, b->compute_usd), b->devices,
           b->devices * b->held_s / 3600, usd(g, sizeof g, b->egress_usd));
    if (!isnan(b->egress_share))
      printf(" (%.1f %% of the bill)", 100 * b->egress_share);
    printf("\n");
    if (!isnan(b->usd))
      printf("            $%.4g per 1,000 samples, $%.4g per hour\n",
             b->usd_per_1k_samples, b->usd_per_hour);
    int w = cli_site_width(s, 16);
    for (int k = 0; k < s->nsites; k++) site_line(s, b, k, w);
    sources(s, b);
  }
  if (b->nlost && !isnan(b->lost_usd) && b->lost_usd > 0) {
    printf("lost time   cost %s:", usd(t, sizeof t, b->lost_usd));
    for (int i = 0; i < b->nlost; i++)
      if (b->lost_usd_by[i] > 0)
        printf(" %s %s", b->lost_names[i], usd(c, sizeof c, b->lost_usd_by[i]));
    printf(" (the devices held while it was lost)\n");
  }
  energy_line(s, b);
}

/* The egress lines: each pair of distinct sites, its share of the egress. */
static json_t *egress_json(const scenario *s, const bill *b) {
  json_t *a = json_array();
  for (int i = 0; i < b->npairs; i++) {
    const bill_pair *p = &b->pair[i];
    if (p->src == p->dst) continue;
    json_t *o = json_pack("{s:s,s:s,s:f}", "src_site", s->sites[p->src].name,
                          "dst_site", s->sites[p->dst].name, "bytes", p->bytes);
    json_object_set_new(o, "usd_per_gb", cli_json_number(p->usd_per_gb));
    json_object_set_new(o, "usd", cli_json_number(p->usd));
    json_object_set_new(o, "share", cli_json_number(
                                        b->egress_usd > 0 ? p->usd / b->egress_usd
                                                          : NAN));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *sites_json(const scenario *s, const bill *b) {
  json_t *a = json_array();
  for (int k = 0; k < s->nsites; k++) {
    const bill_site *x = &b->site[k];
    const scenario_site *st = &s->sites[k];
    if (!x->devices && !x->egress_bytes) continue;
    json_t *o = json_pack("{s:s,s:i,s:f}", "site", st->name, "devices",
                          x->devices, "gpu_hours", x->gpu_hours);
    json_object_set_new(o, "usd_per_gpu_hour",
                        cli_json_number(st->usd_per_gpu_hour));
    json_object_set_new(o, "price_from", st->price_from
                                             ? json_string(st->price_from)
                                             : json_null());
    json_object_set_new(o, "spot", json_boolean(st->spot));
    json_object_set_new(o, "usd", cli_json_number(x->usd));
    json_object_set_new(o, "busy_kwh", cli_json_number(x->busy_kwh));
    json_object_set_new(o, "kwh", cli_json_number(x->kwh));
    json_object_set_new(o, "gco2_per_kwh", cli_json_number(st->gco2_per_kwh));
    json_object_set_new(o, "gco2", cli_json_number(x->gco2));
    json_object_set_new(o, "egress_bytes", json_real(x->egress_bytes));
    json_object_set_new(o, "egress_usd", cli_json_number(x->egress_usd));
    json_array_append_new(a, o);
  }
  return a;
}

json_t *cli_bill_json(const scenario *s, const bill *b) {
  json_t *o = json_object();
  struct { const char *key; double v; } f[] = {
      {"held_s", b->held_s}, {"samples", b->samples},
      {"compute_usd_per_hour", b->compute_usd_per_hour},
      {"compute_usd", b->compute_usd}, {"egress_usd", b->egress_usd},
      {"usd", b->usd}, {"usd_per_hour", b->usd_per_hour},
      {"usd_per_1k_samples", b->usd_per_1k_samples},
      {"egress_share", b->egress_share}, {"busy_kwh", b->busy_kwh},
      {"kwh", b->kwh}, {"gco2", b->gco2}, {"lost_usd", b->lost_usd}};
  json_object_set_new(o, "any_price", json_boolean(b->any_price));
  json_object_set_new(o, "devices", json_integer(b->devices));
  for (size_t i = 0; i < sizeof f / sizeof *f; i++)
    json_object_set_new(o, f[i].key, cli_json_number(f[i].v));
  json_t *lost = json_object();
  for (int i = 0; i < b->nlost; i++)
    json_object_set_new(lost, b->lost_names[i],
                        cli_json_number(b->lost_usd_by[i]));
  json_object_set_new(o, "lost_usd_by", lost);
  json_object_set_new(o, "sites", sites_json(s, b));
  json_object_set_new(o, "egress", egress_json(s, b));
  json_object_set_new(o, "prices_file", s->prices_file
                                            ? json_string(s->prices_file)
                                            : json_null());
  return o;
}
