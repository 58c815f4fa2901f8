/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - subcommands of the proviso command
 *
 * Each subcommand takes argc/argv starting at its own name and returns the
 * process exit status. Exit codes: 0 success/allow/empty/within, 1 deny/
 * findings/exceeds, 2 invalid input or usage, 3 unknown.
 */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#include <jansson.h>

int cli_validate(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_prove(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_corpus(int argc, char **argv);

/* Read a whole file (at most 'cap' bytes) into a new NUL-terminated buffer.
 * Returns NULL and prints "proviso: FILE: reason" on error. */
char *cli_read_file(const char *path, size_t cap, size_t *len);

/* Convert one YAML document to JSON (new reference). NULL + 'err' on error. */
json_t *cli_yaml_to_json(const char *buf, size_t len, char *err, size_t errlen);

#endif
