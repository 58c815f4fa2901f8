/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_compat.c - the acceptance cases of corpus/compat as prover tests
 *
 * Each row is one compat case (baseline/candidate/proposal/credentials and
 * its `expect`), embedded as JSON: the verdict, the exact category set, the
 * paths that must be present and, where the case pins it and proviso does
 * not diverge, the exact validation_result. Two cases carry `port` and
 * `ports` together, which proviso's validator refuses; they are folded to
 * `ports` here (the corpus runner reports the raw files).
 */
#include "config.h"

#include "tests/check_prover_util.h"

struct compat_case {
    const char *id;
    const char *name;
    enum prover_mode mode;
    const char *baseline;  /* NULL = empty */
    const char *candidate; /* or policy in AUDIT mode */
    const char *proposal;
    const char *creds;
    const char *verdict;
    const char *categories; /* comma-separated, report order not required */
    const char *paths;      /* cat|binary|host|port|method;... */
    const char *validation;
    const char *error;      /* substring for invalid */
};

/* Generated from the YAML files of corpus/compat (port+ports folded to ports). */
static const struct compat_case compat_cases[] = {
    {"001", "prover-testdata-github-policy", PROVER_AUDIT,
     NULL,
     "{\"version\":1,\"filesystem_policy\":{\"include_workdir\":true,\"read_only\":[\""
     "/usr\",\"/lib\",\"/proc\",\"/dev/urandom\",\"/app\",\"/etc\",\"/var/log\"],\"rea"
     "d_write\":[\"/sandbox\",\"/tmp\",\"/dev/null\"]},\"landlock\":{\"compatibility\""
     ":\"best_effort\"},\"process\":{\"run_as_user\":\"sandbox\",\"run_as_group\":\"sa"
     "ndbox\"},\"network_policies\":{\"github_api\":{\"name\":\"github-api\",\"endpoin"
     "ts\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforcem"
     "ent\":\"enforce\",\"access\":\"read-only\"},{\"host\":\"github.com\",\"port\":44"
     "3}],\"binaries\":[{\"path\":\"/usr/local/bin/claude\"},{\"path\":\"/usr/bin/git"
     "\"},{\"path\":\"/usr/bin/curl\"},{\"path\":\"/usr/bin/gh\"},{\"path\":\"/sandbox"
     "/.uv/python/**/python3*\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github-pat\",\"scopes\":["
     "\"repo\"],\"target_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "l7_bypass_credentialed,credential_reach_expansion,capability_expansion",
     "l7_bypass_credentialed|/usr/bin/git|api.github.com|443|;l7_bypass_credentialed|/"
     "usr/bin/git|github.com|443|;credential_reach_expansion|/usr/local/bin/claude|git"
     "hub.com|443|;credential_reach_expansion|/usr/bin/curl|github.com|443|;credential"
     "_reach_expansion|/usr/bin/gh|github.com|443|;credential_reach_expansion|/sandbox"
     "/.uv/python/**/python3*|github.com|443|",
     NULL,
     NULL},
    {"002", "prover-wildcard-host-covers-credential-host", PROVER_AUDIT,
     NULL,
     "{\"version\":1,\"network_policies\":{\"github_wildcard\":{\"name\":\"github-wild"
     "card\",\"endpoints\":[{\"host\":\"*.github.com\",\"port\":443,\"protocol\":\"res"
     "t\",\"enforcement\":\"enforce\",\"access\":\"read-write\"}],\"binaries\":[{\"pat"
     "h\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github-pat\",\"scopes\":["
     "\"repo\"],\"target_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion,capability_expansion",
     "credential_reach_expansion|/usr/bin/curl|*.github.com|443|;capability_expansion|"
     "/usr/bin/curl|*.github.com|443|GET;capability_expansion|/usr/bin/curl|*.github.c"
     "om|443|HEAD;capability_expansion|/usr/bin/curl|*.github.com|443|OPTIONS;capabili"
     "ty_expansion|/usr/bin/curl|*.github.com|443|PATCH;capability_expansion|/usr/bin/"
     "curl|*.github.com|443|POST;capability_expansion|/usr/bin/curl|*.github.com|443|P"
     "UT",
     NULL,
     NULL},
    {"003", "prover-metadata-hostname-link-local", PROVER_AUDIT,
     NULL,
     "{\"version\":1,\"network_policies\":{\"metadata\":{\"name\":\"metadata\",\"endpo"
     "ints\":[{\"host\":\"metadata.google.internal\",\"port\":80}],\"binaries\":[{\"pa"
     "th\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "findings",
     "link_local_reach",
     "link_local_reach|/usr/bin/curl|metadata.google.internal|80|",
     NULL,
     NULL},
    {"004", "prover-empty-policy", PROVER_AUDIT,
     NULL,
     "{\"version\":1}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github-pat\",\"scopes\":["
     "\"repo\"],\"target_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "empty",
     "",
     "",
     NULL,
     NULL},
    {"101", "gw-security-flagged-empty-delta-stays-pending", PROVER_DELTA,
     "{\"version\":1}",
     "{\"version\":1,\"network_policies\":{\"private_service\":{\"name\":\"private_ser"
     "vice\",\"endpoints\":[{\"host\":\"service.example.com\",\"port\":443,\"allowed_i"
     "ps\":[\"10.0.0.0/8\"]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "findings",
     "private_reach_expansion",
     "",
     NULL,
     NULL},
    {"102", "gw-mechanistic-clean-observation-with-github-provider", PROVER_DELTA,
     "{\"version\":1}",
     "{\"version\":1,\"network_policies\":{\"safe_service\":{\"name\":\"safe_service\""
     ",\"endpoints\":[{\"host\":\"service.example.com\",\"port\":443}],\"binaries\":[{"
     "\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"103", "gw-direct-l4-credentialed-reach", PROVER_DELTA,
     "{\"version\":1}",
     "{\"version\":1,\"network_policies\":{\"safe_service\":{\"name\":\"safe_service\""
     ",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443}],\"binaries\":[{\"pat"
     "h\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"104", "gw-lifecycle-l4-credentialed-pending", PROVER_DELTA,
     "{\"version\":1}",
     "{\"version\":1,\"network_policies\":{\"allow_github\":{\"name\":\"allow_github\""
     ",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"allow_uninspected_cr"
     "edentials\":true}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"105", "gw-reject-reason-uncredentialed-l4", PROVER_DELTA,
     "{\"version\":1}",
     "{\"version\":1,\"network_policies\":{\"allow_example\":{\"name\":\"allow_example"
     "\",\"endpoints\":[{\"host\":\"api.example.com\",\"port\":443}],\"binaries\":[{\""
     "path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"106", "gw-exact-l7-put-no-credential-auto-approves", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"github_contents_write\":{\"name\":\"github_contents_write\",\"endpo"
     "ints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforc"
     "ement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"PUT\",\"path\":\"/repos/"
     "org/repo/contents/demo/file.md\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}"
     "]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"107", "gw-supersede-step1-mechanistic-l4-credentialed", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"allow_api_github_com_443\":{\"name\":\"allow_api_github_com_443\","
     "\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"allow_uninspected_cre"
     "dentials\":true}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"108", "gw-supersede-step2-agent-l7-put-credentialed", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"github_contents_put\":{\"name\":\"github_contents_put\",\"endpoints"
     "\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforcemen"
     "t\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"PUT\",\"path\":\"/repos/owne"
     "r/name/contents/path/file.md\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}"
     "}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"109", "gw-mechanistic-empty-delta-auto-approves", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"110", "gw-mechanistic-multi-port-rest-narrow-overlay", PROVER_DELTA,
     "{\"version\":1,\"network_policies\":{\"cargo_registry\":{\"name\":\"cargo-regist"
     "ry\",\"endpoints\":[{\"host\":\"index.crates.io\",\"ports\":[80,443],\"protocol"
     "\":\"rest\",\"enforcement\":\"enforce\",\"access\":\"read-only\"}],\"binaries\":"
     "[{\"path\":\"/usr/bin/cargo\"}]}}}",
     "{\"version\":1,\"network_policies\":{\"cargo_registry\":{\"name\":\"cargo-regist"
     "ry\",\"endpoints\":[{\"host\":\"index.crates.io\",\"ports\":[80,443],\"protocol"
     "\":\"rest\",\"enforcement\":\"enforce\",\"access\":\"read-only\"}],\"binaries\":"
     "[{\"path\":\"/usr/bin/cargo\"}]},\"allow_index_crates_io_443\":{\"name\":\"allow"
     "_index_crates_io_443\",\"endpoints\":[{\"host\":\"index.crates.io\",\"ports\":[4"
     "43],\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"access\":\"read-only\"}]"
     ",\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"111", "gw-malformed-graphql-rejected-before-prover", PROVER_DELTA,
     "{\"version\":1}",
     NULL,
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"bad_graphql\",\"rule\":{\"name\":"
     "\"bad-graphql\",\"endpoints\":[{\"host\":\"api.example.com\",\"port\":443,\"prot"
     "ocol\":\"graphql\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"fields\""
     ":[\"viewer\"]}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}]}",
     "{\"credentials\":[]}",
     "invalid",
     "",
     "",
     NULL,
     "operation_type"},
    {"112", "gw-review-token-refresh-uncredentialed", PROVER_DELTA,
     "{\"version\":1}",
     "{\"version\":1,\"network_policies\":{\"example\":{\"name\":\"example\",\"endpoin"
     "ts\":[{\"host\":\"example.com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bi"
     "n/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"113", "gw-l7-access-full-credentialed-reach", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"github_l7_full\":{\"name\":\"github_l7_full\",\"endpoints\":[{\"hos"
     "t\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enfo"
     "rce\",\"access\":\"full\"}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"114", "gw-approval-mode-unset-stays-pending", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"115", "gw-approval-mode-unknown-string-stays-pending", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"116", "gw-approval-mode-explicit-manual-stays-pending", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"117", "gw-approval-mode-gateway-auto-approves", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"118", "gw-approval-mode-gateway-manual-wins", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"120", "gw-l4-with-credential-reach", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"github_l4\":{\"name\":\"github_l4\",\"endpoints\":[{\"host\":\"api."
     "github.com\",\"port\":443,\"allow_uninspected_credentials\":true}],\"binaries\":"
     "[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"121", "gw-l4-without-credential-no-finding", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"anon_l4\":{\"name\":\"anon_l4\",\"endpoints\":[{\"host\":\"example."
     "com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"122", "gw-link-local-ip-finding", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"metadata_endpoint\":{\"name\":\"metadata_endpoint\",\"endpoints\":["
     "{\"host\":\"169.254.169.254\",\"port\":80}],\"binaries\":[{\"path\":\"/usr/bin/c"
     "url\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "findings",
     "link_local_reach",
     "link_local_reach|/usr/bin/curl|169.254.169.254|80|",
     "prover: 1 new finding\n  link_local_reach: 169.254.169.254:80 via /usr/bin/curl",
     NULL},
    {"123", "gw-providers-v2-custom-profile-composed", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"_provider_work_custom\":{\"name\":\"_provider_work_custom\",\"endpo"
     "ints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access"
     "\":\"full\",\"deny_rules\":[{\"method\":\"DELETE\",\"path\":\"/repos/*\"}]}],\"b"
     "inaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"_provider_work_custom\":{\"name\":\"_provider_work_custom\",\"endpo"
     "ints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access"
     "\":\"full\",\"deny_rules\":[{\"method\":\"DELETE\",\"path\":\"/repos/*\"}]}],\"b"
     "inaries\":[{\"path\":\"/usr/bin/curl\"}]},\"github_contents_write\":{\"name\":\""
     "github_contents_write\",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443"
     ",\"protocol\":\"rest\",\"enforcement\":\"audit\",\"rules\":[{\"allow\":{\"method"
     "\":\"PUT\",\"path\":\"/repos/org/repo/contents/demo/file.md\"}}]}],\"binaries\":"
     "[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"work-custom\",\"type\":\"custom-api\",\"scopes\":["
     "],\"target_hosts\":[\"api.github.com\"]}]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"124", "gw-v2-full-loop-step1-uncredentialed-get", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"_provider_github_pat\":{\"name\":\"_provider_github_pat\",\"endpoin"
     "ts\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access\""
     ":\"read-only\",\"enforcement\":\"enforce\"},{\"host\":\"api.github.com\",\"port"
     "\":443,\"path\":\"/graphql\",\"protocol\":\"graphql\",\"access\":\"read-only\","
     "\"enforcement\":\"enforce\"},{\"host\":\"github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
     "\"path\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{"
     "\"method\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\":\"POST\",\"path"
     "\":\"/**/git-upload-pack\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/gh\"},{\"path"
     "\":\"/usr/local/bin/gh\"},{\"path\":\"/usr/bin/git\"},{\"path\":\"/usr/local/bin"
     "/git\"}]}}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"_provider_github_pat\":{\"name\":\"_provider_github_pat\",\"endpoin"
     "ts\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access\""
     ":\"read-only\",\"enforcement\":\"enforce\"},{\"host\":\"api.github.com\",\"port"
     "\":443,\"path\":\"/graphql\",\"protocol\":\"graphql\",\"access\":\"read-only\","
     "\"enforcement\":\"enforce\"},{\"host\":\"github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
     "\"path\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{"
     "\"method\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\":\"POST\",\"path"
     "\":\"/**/git-upload-pack\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/gh\"},{\"path"
     "\":\"/usr/local/bin/gh\"},{\"path\":\"/usr/bin/git\"},{\"path\":\"/usr/local/bin"
     "/git\"}]},\"github_raw_openapi_get\":{\"name\":\"github_raw_openapi_get\",\"endp"
     "oints\":[{\"host\":\"raw.githubusercontent.com\",\"port\":443,\"protocol\":\"res"
     "t\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path"
     "\":\"/github/rest-api-description/main/descriptions/api.github.com/api.github.co"
     "m.json\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"125", "gw-v2-full-loop-step2-credentialed-put", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"_provider_github_pat\":{\"name\":\"_provider_github_pat\",\"endpoin"
     "ts\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access\""
     ":\"read-only\",\"enforcement\":\"enforce\"},{\"host\":\"api.github.com\",\"port"
     "\":443,\"path\":\"/graphql\",\"protocol\":\"graphql\",\"access\":\"read-only\","
     "\"enforcement\":\"enforce\"},{\"host\":\"github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
     "\"path\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{"
     "\"method\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\":\"POST\",\"path"
     "\":\"/**/git-upload-pack\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/gh\"},{\"path"
     "\":\"/usr/local/bin/gh\"},{\"path\":\"/usr/bin/git\"},{\"path\":\"/usr/local/bin"
     "/git\"}]},\"github_raw_openapi_get\":{\"name\":\"github_raw_openapi_get\",\"endp"
     "oints\":[{\"host\":\"raw.githubusercontent.com\",\"port\":443,\"protocol\":\"res"
     "t\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path"
     "\":\"/github/rest-api-description/main/descriptions/api.github.com/api.github.co"
     "m.json\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"_provider_github_pat\":{\"name\":\"_provider_github_pat\",\"endpoin"
     "ts\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access\""
     ":\"read-only\",\"enforcement\":\"enforce\"},{\"host\":\"api.github.com\",\"port"
     "\":443,\"path\":\"/graphql\",\"protocol\":\"graphql\",\"access\":\"read-only\","
     "\"enforcement\":\"enforce\"},{\"host\":\"github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
     "\"path\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{"
     "\"method\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\":\"POST\",\"path"
     "\":\"/**/git-upload-pack\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/gh\"},{\"path"
     "\":\"/usr/local/bin/gh\"},{\"path\":\"/usr/bin/git\"},{\"path\":\"/usr/local/bin"
     "/git\"}]},\"github_raw_openapi_get\":{\"name\":\"github_raw_openapi_get\",\"endp"
     "oints\":[{\"host\":\"raw.githubusercontent.com\",\"port\":443,\"protocol\":\"res"
     "t\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path"
     "\":\"/github/rest-api-description/main/descriptions/api.github.com/api.github.co"
     "m.json\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]},\"github_contents_put"
     "\":{\"name\":\"github_contents_put\",\"endpoints\":[{\"host\":\"api.github.com\""
     ",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"al"
     "low\":{\"method\":\"PUT\",\"path\":\"/repos/owner/name/contents/path/file.md\"}}"
     "]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "credential_reach_expansion",
     "credential_reach_expansion|/usr/bin/curl|api.github.com|443|",
     "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr"
     "/bin/curl",
     NULL},
    {"126", "gw-mechanistic-resubmit-keeps-approved", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]}}",
     "{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/sandbox\"]},\"network_p"
     "olicies\":{\"allow_example_8080\":{\"name\":\"allow_example_8080\",\"endpoints\""
     ":[{\"host\":\"example.com\",\"port\":8080}],\"binaries\":[{\"path\":\"/usr/bin/c"
     "url\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"201", "e2e-existing-endpoint-binary-expansion-auto-approves", PROVER_DELTA,
     "{\"version\":1,\"network_policies\":{\"cargo_registry\":{\"name\":\"cargo-regist"
     "ry\",\"endpoints\":[{\"host\":\"index.crates.io\",\"port\":443,\"protocol\":\"re"
     "st\",\"enforcement\":\"enforce\",\"access\":\"read-only\"}],\"binaries\":[{\"pat"
     "h\":\"/usr/bin/cargo\"}]}}}",
     "{\"version\":1,\"network_policies\":{\"cargo_registry\":{\"name\":\"cargo-regist"
     "ry\",\"endpoints\":[{\"host\":\"index.crates.io\",\"port\":443,\"protocol\":\"re"
     "st\",\"enforcement\":\"enforce\",\"access\":\"read-only\"}],\"binaries\":[{\"pat"
     "h\":\"/usr/bin/cargo\"},{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[]}",
     "empty",
     "",
     "",
     "prover: no new findings",
     NULL},
    {"901", "derived-demo-template-put-folds-into-readonly-rule", PROVER_DELTA,
     "{\"version\":1,\"filesystem_policy\":{\"include_workdir\":true,\"read_only\":[\""
     "/usr\",\"/lib\",\"/proc\",\"/dev/urandom\",\"/app\",\"/etc\",\"/var/log\"],\"rea"
     "d_write\":[\"/sandbox\",\"/tmp\",\"/dev/null\"]},\"landlock\":{\"compatibility\""
     ":\"best_effort\"},\"process\":{\"run_as_user\":\"sandbox\",\"run_as_group\":\"sa"
     "ndbox\"},\"network_policies\":{\"github_api_readonly\":{\"name\":\"github-api-re"
     "adonly\",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"enforcement\":\"enforce\",\"access\":\"read-only\"}],\"binaries\":[{"
     "\"path\":\"/usr/bin/curl\"}]},\"_provider_github_pat\":{\"name\":\"_provider_git"
     "hub_pat\",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"access\":\"read-only\",\"enforcement\":\"enforce\"},{\"host\":\"api.g"
     "ithub.com\",\"port\":443,\"path\":\"/graphql\",\"protocol\":\"graphql\",\"access"
     "\":\"read-only\",\"enforcement\":\"enforce\"},{\"host\":\"github.com\",\"port\":"
     "443,\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"m"
     "ethod\":\"GET\",\"path\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**"
     "\"}},{\"allow\":{\"method\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\""
     ":\"POST\",\"path\":\"/**/git-upload-pack\"}}]}],\"binaries\":[{\"path\":\"/usr/b"
     "in/gh\"},{\"path\":\"/usr/local/bin/gh\"},{\"path\":\"/usr/bin/git\"},{\"path\":"
     "\"/usr/local/bin/git\"}]}}}",
     "{\"version\":1,\"filesystem_policy\":{\"include_workdir\":true,\"read_only\":[\""
     "/usr\",\"/lib\",\"/proc\",\"/dev/urandom\",\"/app\",\"/etc\",\"/var/log\"],\"rea"
     "d_write\":[\"/sandbox\",\"/tmp\",\"/dev/null\"]},\"landlock\":{\"compatibility\""
     ":\"best_effort\"},\"process\":{\"run_as_user\":\"sandbox\",\"run_as_group\":\"sa"
     "ndbox\"},\"network_policies\":{\"github_api_readonly\":{\"name\":\"github-api-re"
     "adonly\",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":"
     "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
     "\"path\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{"
     "\"method\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\":\"PUT\",\"path\""
     ":\"/repos/OWNER/REPO/contents/PATH\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/cur"
     "l\"}]},\"_provider_github_pat\":{\"name\":\"_provider_github_pat\",\"endpoints\""
     ":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"access\":\"r"
     "ead-only\",\"enforcement\":\"enforce\"},{\"host\":\"api.github.com\",\"port\":44"
     "3,\"path\":\"/graphql\",\"protocol\":\"graphql\",\"access\":\"read-only\",\"enfo"
     "rcement\":\"enforce\"},{\"host\":\"github.com\",\"port\":443,\"protocol\":\"rest"
     "\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path"
     "\":\"**\"}},{\"allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{\"meth"
     "od\":\"OPTIONS\",\"path\":\"**\"}},{\"allow\":{\"method\":\"POST\",\"path\":\"/*"
     "*/git-upload-pack\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/gh\"},{\"path\":\"/u"
     "sr/local/bin/gh\"},{\"path\":\"/usr/bin/git\"},{\"path\":\"/usr/local/bin/git\"}"
     "]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "capability_expansion",
     "capability_expansion|/usr/bin/curl|api.github.com|443|PUT",
     NULL,
     NULL},
    {"902", "derived-capability-expansion-new-method", PROVER_DELTA,
     "{\"version\":1,\"network_policies\":{\"gh_rw\":{\"name\":\"gh_rw\",\"endpoints\""
     ":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement"
     "\":\"enforce\",\"access\":\"read-write\"}],\"binaries\":[{\"path\":\"/usr/bin/cu"
     "rl\"}]}}}",
     "{\"version\":1,\"network_policies\":{\"gh_rw\":{\"name\":\"gh_rw\",\"endpoints\""
     ":[{\"host\":\"api.github.com\",\"ports\":[443],\"protocol\":\"rest\",\"enforceme"
     "nt\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"**\"}},{\""
     "allow\":{\"method\":\"HEAD\",\"path\":\"**\"}},{\"allow\":{\"method\":\"OPTIONS"
     "\",\"path\":\"**\"}},{\"allow\":{\"method\":\"POST\",\"path\":\"**\"}},{\"allow"
     "\":{\"method\":\"PUT\",\"path\":\"**\"}},{\"allow\":{\"method\":\"PATCH\",\"path"
     "\":\"**\"}},{\"allow\":{\"method\":\"DELETE\",\"path\":\"/repos/o/r/contents/x\""
     "}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}",
     NULL,
     "{\"credentials\":[{\"name\":\"github-pat\",\"type\":\"github\",\"scopes\":[],\"t"
     "arget_hosts\":[\"api.github.com\",\"github.com\"]}]}",
     "findings",
     "capability_expansion",
     "capability_expansion|/usr/bin/curl|api.github.com|443|DELETE",
     "prover: 1 new finding\n  capability_expansion: DELETE on api.github.com:443 via "
     "/usr/bin/curl",
     NULL},
};

static struct prover_session *session;
static struct model_registry *registry;

static void setup(void)
{
    session = prover_session_new();
    ck_assert_ptr_nonnull(session);
    registry = tp_registry();
}

static void teardown(void)
{
    prover_session_free(session);
    model_registry_free(registry);
    prover_finalize();
}

/* Is every comma-separated item of 'want' in 'have' and vice versa? */
static bool same_set(const char *want, const char *have)
{
    char a[512];
    char b[512];
    size_t na = 0;
    size_t nb = 0;

    (void)snprintf(a, sizeof(a), ",%s,", want);
    (void)snprintf(b, sizeof(b), ",%s,", have);
    for (const char *s = want; *s != '\0'; s++) {
        na += *s == ',';
    }
    for (const char *s = have; *s != '\0'; s++) {
        nb += *s == ',';
    }
    if ((want[0] == '\0') != (have[0] == '\0') || na != nb) {
        return false;
    }
    for (const char *s = want; *s != '\0';) {
        const char *e = strchr(s, ',');
        size_t l = e != NULL ? (size_t)(e - s) : strlen(s);
        char item[128];

        (void)snprintf(item, sizeof(item), ",%.*s,", (int)l, s);
        if (strstr(b, item) == NULL) {
            return false;
        }
        s += l + (e != NULL);
    }
    return true;
}

static bool has_path(const struct prover_result *r, const char *spec)
{
    char f[5][256];
    size_t k = 0;
    size_t n = 0;

    memset(f, 0, sizeof(f));
    for (const char *s = spec; *s != '\0' && k < 5; s++) {
        if (*s == '|') {
            k++;
            n = 0;
            continue;
        }
        if (n + 1 < sizeof(f[0])) {
            f[k][n++] = *s;
        }
    }
    for (size_t i = 0; i < r->npaths; i++) {
        const struct prover_path *p = &r->paths[i];
        char port[16];

        (void)snprintf(port, sizeof(port), "%u", (unsigned)p->port);
        if (strcmp(prover_category_name(p->cat), f[0]) == 0 && strcmp(p->binary, f[1]) == 0 &&
            strcmp(p->host, f[2]) == 0 && strcmp(port, f[3]) == 0 &&
            (f[4][0] == '\0' || (p->method != NULL && strcmp(p->method, f[4]) == 0))) {
            return true;
        }
    }
    return false;
}

START_TEST(test_compat_case)
{
    const struct compat_case *c = &compat_cases[_i];
    struct model_policy *base = NULL;
    struct model_policy *cand = NULL;
    struct model_credset *creds = tp_creds(c->creds);
    struct prover_input in;
    struct prover_result *r;
    char *cats;
    char *vr;

    if (c->baseline != NULL) {
        base = tp_policy("baseline.json", c->baseline);
    }
    if (c->proposal != NULL) {
        struct model_diags *d = model_diags_new();
        struct model_proposal *pr =
            model_proposal_load("proposal.json", c->proposal, strlen(c->proposal), d);

        if (pr != NULL) {
            cand = model_policy_merge(base, pr, true, d);
        }
        if (cand == NULL) {
            /* invalid input: the error substring must be in a diagnostic */
            bool found = false;

            ck_assert_str_eq(c->verdict, "invalid");
            for (size_t i = 0; i < model_diags_count(d); i++) {
                found = found || (c->error != NULL && strstr(model_diags_line(d, i), c->error));
            }
            ck_assert_msg(found, "%s: no diagnostic mentions '%s'", c->id, c->error);
            model_proposal_free(pr);
            model_diags_free(d);
            model_policy_free(base);
            model_credset_free(creds);
            return;
        }
        model_proposal_free(pr);
        model_diags_free(d);
    } else {
        cand = tp_policy("candidate.json", c->candidate);
    }
    ck_assert_str_ne(c->verdict, "invalid");
    memset(&in, 0, sizeof(in));
    in.baseline = base;
    in.candidate = cand;
    in.creds = creds;
    in.reg = registry;
    in.mode = c->mode;
    in.timeout_ms = 5000;
    r = prover_run(session, &in);
    ck_assert_ptr_nonnull(r);
    cats = tp_categories(r);
    vr = prover_validation_result(r);
    ck_assert_msg(strcmp(prover_verdict_name(r->verdict), c->verdict) == 0,
                  "%s %s: verdict %s (%s), want %s\n%s", c->id, c->name,
                  prover_verdict_name(r->verdict), prover_unknown_text(r->unknown), c->verdict, vr);
    ck_assert_msg(same_set(c->categories, cats), "%s: categories '%s', want '%s'", c->id, cats,
                  c->categories);
    for (const char *s = c->paths; *s != '\0';) {
        const char *e = strchr(s, ';');
        size_t l = e != NULL ? (size_t)(e - s) : strlen(s);
        char spec[512];

        (void)snprintf(spec, sizeof(spec), "%.*s", (int)l, s);
        ck_assert_msg(has_path(r, spec), "%s: missing path %s\n%s", c->id, spec, vr);
        s += l + (e != NULL);
    }
    if (c->validation != NULL) {
        ck_assert_str_eq(vr, c->validation);
    }
    free(cats);
    free(vr);
    prover_result_free(r);
    model_policy_free(base);
    model_policy_free(cand);
    model_credset_free(creds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_compat");
    TCase *tc = tcase_create("compat");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_compat_case, 0, (int)PV_ARRAY_LEN(compat_cases));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
