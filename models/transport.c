/* transport: see transport.h. The model names are the ones the command
 * line, the sweep files and the results store spell. */
#include "models/transport.h"

#include <math.h>

#include "base/names.h"
#include "models/params.h"

const char *const transport_model_names[TRANSPORT_NMODELS + 1] = {
    "ideal", "netem", "tcp", NULL};

const char *transport_model_name(transport_model m) {
  return transport_model_names[m];
}

int transport_model_parse(const char *name) {
  return names_find(transport_model_names, name);
}

transport_options transport_options_default(void) {
  return (transport_options){.model = TRANSPORT_NETEM,
                             .window_bytes = params_get(PARAMS_WINDOW_BYTES),
                             .idle_restart = false};
}

double transport_window(const transport_options *o) {
  return o && o->window_bytes > 0 ? o->window_bytes
                                           : params_get(PARAMS_WINDOW_BYTES);
}

int transport_sockets_used(int sockets, double bytes) {
  double pieces = ceil(bytes / TRANSPORT_SOCKET_MIN_CHUNK);
  if (sockets < 1) sockets = 1;
  return pieces < 1 ? 1 : pieces < sockets ? (int)pieces : sockets;
}

double transport_idle_window(double cwnd, double idle_s, double rto_s) {
  double floor_w = fmin(TRANSPORT_TCP_INITIAL_WINDOW, cwnd);
  if (!(idle_s > rto_s) || rto_s <= 0) return cwnd;
  /* tcp_cwnd_restart: while ((delta -= rto) > 0 && cwnd > restart) cwnd >>= 1 */
  for (double delta = idle_s - rto_s; delta > 0 && cwnd > floor_w;
       delta -= rto_s)
    cwnd /= 2;
  return fmax(cwnd, floor_w);
}

double transport_message_s(double bytes, double rtt_s, double bytes_s,
                           int sockets, const transport_options *o,
                           double *cwnd) {
  transport_options d = o ? *o : transport_options_default();
  double W = transport_window(&d);
  if (d.model != TRANSPORT_TCP || !(rtt_s > 0)) return bytes / bytes_s;
  int N = transport_sockets_used(sockets, bytes);
  double w = cwnd && *cwnd > 0 ? *cwnd : TRANSPORT_TCP_INITIAL_WINDOW, t = 0;
  bool slow = w < W;
  /* One epoch (RTT) per turn, as the engine's epoch events: the rate is N
   * windows over the RTT or the path's, the window doubles at the end of an
   * epoch, and slow start ends at W or when the path binds. */
  for (double left = bytes; left > 0;) {
    double cap = N * fmin(w, W) / rtt_s, rate = fmin(cap, bytes_s);
    if (!slow || left <= rate * rtt_s) {
      t += left / rate;
      if (slow) w = fmin(W, w + left / N); /* grown by what it sent */
      break;
    }
    t += rtt_s;
    left -= rate * rtt_s;
    bool bound = rate < cap * (1 - 1e-9);
    w *= 2;
    if (bound || w >= W) slow = false;
  }
  if (cwnd) *cwnd = slow ? w : W;
  return t;
}
