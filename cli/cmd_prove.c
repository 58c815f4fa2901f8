/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include <stdio.h>
#include "cli/cli.h"
int cli_prove(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not yet\n"); return 2; }
int cli_check(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not yet\n"); return 2; }
