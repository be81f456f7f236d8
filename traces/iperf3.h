/* iperf3: the reading of iperf3's JSON output (`iperf3 -J`, --json) into
 * measurement records, one per TCP test: who sent to whom, how many
 * parallel streams, when, the rate received, the bytes sent and their
 * retransmissions, the segment size and the round trip the sender saw.
 * The keys are iperf3's own (esnet/iperf src/iperf_api.c: start.connected,
 * start.connecting_to, start.accepted_connection, start.test_start,
 * start.timestamp, start.tcp_mss(_default), end.sum_sent, end.sum_received,
 * end.streams[].sender, server_output_json, error).
 * Invariant: a file is read whole or refused; a record holds a TCP test
 * that ran (no error report, one direction, a rate above 0), and every
 * number it holds is iperf3's, in the units it names and nothing else. */
#ifndef TRACES_IPERF3_H
#define TRACES_IPERF3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* One test as the file of one of its ends reports it (plain data; the
 * strings are owned by the record set). */
typedef struct iperf3_run {
  char *file;          /* the name it was read under */
  int line;            /* the line of the test's opening '{' in the file */
  char *local, *remote;  /* start.connected[0].local_host, .remote_host:
                            this file's host and its peer, as addresses */
  char *peer_name;     /* a client's start.connecting_to.host: the server
                          as the user named it (a name or an address);
                          NULL in a server's file */
  char *cookie;        /* start.cookie: the two ends' files of one test
                          share it ("" when absent) */
  bool server;         /* the file is the server's (accepted_connection) */
  bool reverse;        /* start.test_start.reverse (-R): the server sent */
  int streams;         /* start.test_start.num_streams (-P N) */
  int64_t time_s;      /* start.timestamp.timesecs: Unix time, seconds */
  double received_bps; /* end.sum_received.bits_per_second, > 0 */
  double sent_bytes;   /* end.sum_sent.bytes */
  double retransmits;  /* end.sum_sent.retransmits; NAN: not reported */
  double mss_bytes;    /* start.tcp_mss (-M), else start.tcp_mss_default;
                          NAN: neither reported */
  double rtt_ms;       /* the mean over the streams (those with samples) of
                          end.streams[].sender.mean_rtt, in milliseconds;
                          NAN: no sample (a receiver's file) */
} iperf3_run;

/* A growing set of records (zero-initialise it). */
typedef struct iperf3_runs {
  iperf3_run *v;
  size_t n, cap;
} iperf3_runs;

/* Whether the data flowed from the file's own host (local) to its peer:
 * a client that did not reverse, or a server that did. */
bool iperf3_local_sends(const iperf3_run *r);

/* Appends to out the tests of text (len bytes): one JSON object as
 * `iperf3 -J` prints it, or several one after another (what `--logfile`
 * appends, or `>>`). name is used in "NAME:LINE: message" errors: text
 * that is not JSON, a JSON object that is not iperf3's (or an iperf3
 * --json-stream event), an iperf3 error report ("error"), a test that is
 * not TCP, or --bidir, a field missing or of the wrong type. ERR_OK; on
 * error out is as it was. */
int iperf3_parse(const char *text, size_t len, const char *name,
                 iperf3_runs *out, err *e);

/* iperf3_parse of the file at path (named path in messages). */
int iperf3_read(const char *path, iperf3_runs *out, err *e);

/* Keeps one record per test: a record whose cookie an earlier one has
 * (the other end's file of the same test, or a file given twice) is
 * dropped, its round trip given to the kept record when that has none
 * (a -R client's file measures none; its server's does). Order kept. */
void iperf3_runs_merge(iperf3_runs *r);

/* Frees what r holds and zeroes it; a zeroed r is fine. */
void iperf3_runs_free(iperf3_runs *r);

#endif
