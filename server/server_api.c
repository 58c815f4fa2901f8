/* SPDX-License-Identifier: Apache-2.0 */
/* server_api.c - the OpenAPI 3 description of proviso-prover's own API
 *
 * GET /openapi.json serves this document and GET /tools.json the same
 * operations as tool definitions (server_openapi_tools). The document is
 * server/data/openapi.json, compiled in at build time by common/embed.sh
 * (server_data_openapi_json), the same way the advisor embeds its own.
 * server_api_openapi() parses it, so a broken file fails the server's start
 * (and the unit test) instead of serving broken JSON. Keep it in step with
 * server_http.c's route table and docs/api.md.
 */
#include "config.h"

#include <stddef.h>

#include "server/server.h"

extern const char server_data_openapi_json[];
extern const size_t server_data_openapi_json_len;

json_t *server_api_openapi(void)
{
    return httpd_doc_parse(server_data_openapi_json, server_data_openapi_json_len);
}
