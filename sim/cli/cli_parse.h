/* cli_parse: the front end's exit statuses, the two messages every
 * subcommand prints through (a usage error, an error) and the strict
 * parsing of an option's number — what the option loop (cli_opt.c) and the
 * subcommands (cli.h) share, below both.
 * Invariant: a usage error returns CLI_USAGE, an error CLI_ERROR, each after
 * one message on stderr; a number is accepted whole or not at all. */
#ifndef SIM_CLI_CLI_PARSE_H
#define SIM_CLI_CLI_PARSE_H

#include <stdbool.h>

enum { CLI_OK = 0, CLI_ERROR = 1, CLI_USAGE = 2 };

/* Prints "geodes CMD: message" and the hint to use --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "geodes: message" to stderr; returns CLI_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing of an option's argument: the whole string must be a
 * finite number in [lo, hi]. False (and a usage message) otherwise. */
bool cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                   long hi, long *out);
bool cli_parse_double(const char *cmd, const char *opt, const char *s,
                      double lo, double hi, double *out);
/* cli_parse_double in [lo, hi], or (lo, hi] when open (the message says
 * which). */
bool cli_parse_real(const char *cmd, const char *opt, const char *s,
                    double lo, double hi, bool open, double *out);

#endif
