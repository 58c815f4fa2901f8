/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_yamljson.c - model_yaml_json: YAML to jansson through the
 * policy reader (scalar typing, refusals with FILE:LINE:COL, duplicates) */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

#include "common/pv.h"
#include "model/model.h"

/* The JSON text of 'yaml' (compact, sorted), or the first diagnostic. */
static char *convert(const char *yaml, bool dup_ok)
{
    struct model_diags *d = model_diags_new();
    json_t *j = model_yaml_json("c.yaml", yaml, strlen(yaml), dup_ok, d);
    char *out;

    ck_assert_ptr_nonnull(d);
    if (j != NULL) {
        ck_assert_uint_eq(model_diags_count(d), 0);
        out = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        json_decref(j);
    } else {
        ck_assert_uint_gt(model_diags_count(d), 0);
        out = strdup(model_diags_line(d, 0));
    }
    model_diags_free(d);
    return out;
}

static const struct {
    const char *yaml;
    bool dup_ok;
    const char *want;
} rows[] = {
    /* unquoted scalars keep their JSON types; quoted ones are strings */
    {"a: true\nb: false\nc: null\nd: ~\ne:\nf: 42\n", false,
     "{\"a\":true,\"b\":false,\"c\":null,\"d\":null,\"e\":null,\"f\":42}"},
    {"a: \"true\"\nb: '42'\nc: \"null\"\nd: !!str 7\n", false,
     "{\"a\":\"true\",\"b\":\"42\",\"c\":\"null\",\"d\":\"7\"}"},
    /* past INT64_MAX, negative and odd numbers stay strings */
    {"a: 9223372036854775808\nb: -1\nc: 1.5\nd: 0x10\n", false,
     "{\"a\":\"9223372036854775808\",\"b\":\"-1\",\"c\":\"1.5\",\"d\":\"0x10\"}"},
    {"a: 9223372036854775807\n", false, "{\"a\":9223372036854775807}"},
    /* keys are always strings, even when they look typed */
    {"1: x\ntrue: y\n", false, "{\"1\":\"x\",\"true\":\"y\"}"},
    {"- [1, {k: v}]\n- []\n", false, "[[1,{\"k\":\"v\"}],[]]"},
    /* duplicates: an error with its place, or the last one wins */
    {"a: 1\nb: 2\na: 3\n", false, "c.yaml:3:1: duplicate key 'a'"},
    {"a: 1\nb: 2\na: 3\n", true, "{\"a\":3,\"b\":2}"},
    /* refusals, each located */
    {"a: &x 1\nb: *x\n", false, "c.yaml:1:4: aliases and anchors are not supported"},
    {"a: !!binary aGk=\n", false, "c.yaml:1:4: YAML tags are not supported"},
    {"a: 1\n---\nb: 2\n", false, "c.yaml:2:1: "},
    {"? [x]\n: y\n", false, "c.yaml:1:3: "},
    {"a: [1, 2\n", false, "c.yaml:"},
    {"", false, "c.yaml:1:1: "},
};

START_TEST(yaml_json_table)
{
    char *got = convert(rows[_i].yaml, rows[_i].dup_ok);

    ck_assert_ptr_nonnull(got);
    ck_assert_msg(strncmp(got, rows[_i].want, strlen(rows[_i].want)) == 0, "row %d: got %s", _i,
                  got);
    free(got);
}
END_TEST

/* Deep nesting is refused, not a stack overflow. */
START_TEST(yaml_json_deep)
{
    char buf[4096];
    char *got;
    size_t n = 0;

    for (int i = 0; i < 1000; i++) {
        buf[n++] = '[';
    }
    for (int i = 0; i < 1000; i++) {
        buf[n++] = ']';
    }
    buf[n] = '\0';
    got = convert(buf, false);
    ck_assert_msg(strncmp(got, "c.yaml:1:", 9) == 0 && strstr(got, "deep") != NULL, "%s", got);
    free(got);
}
END_TEST

/* The read-only node API (model_yaml_tree): an empty document is a null
 * node at the end of the stream, a mapping gives its pairs in order with
 * their marks and texts, a non-scalar has no text, and the reader's
 * refusals are located diagnostics, not trees. */
START_TEST(yaml_tree_view)
{
    struct model_diags *d = model_diags_new();
    struct model_node *t;
    const struct model_node *k, *v;
    uint32_t line, col;
    size_t len;

    t = model_yaml_tree("c", "# nothing\n", 10, d);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(model_node_kind_of(t), MODEL_NODE_NULL);
    ck_assert_uint_eq(model_node_npairs(t), 0);
    ck_assert_ptr_null(model_node_text(t, &len));
    model_node_free(t);

    t = model_yaml_tree("c", "a: 1\nbb: [x]\n", 13, d);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(model_node_kind_of(t), MODEL_NODE_MAP);
    ck_assert_uint_eq(model_node_npairs(t), 2);
    k = model_node_pair(t, 1, &v);
    ck_assert_str_eq(model_node_text(k, &len), "bb");
    ck_assert_uint_eq(len, 2);
    model_node_where(k, &line, &col);
    ck_assert_uint_eq(line, 2);
    ck_assert_uint_eq(col, 1);
    ck_assert_int_eq(model_node_kind_of(v), MODEL_NODE_SEQ);
    ck_assert_ptr_null(model_node_text(v, &len));
    ck_assert_uint_eq(model_node_npairs(v), 0);
    model_node_where(v, &line, &col);
    ck_assert_uint_eq(col, 5);
    model_node_free(t);
    ck_assert_uint_eq(model_diags_count(d), 0);

    ck_assert_ptr_null(model_yaml_tree("c", "a: 1\na: 2\n", 10, d));
    ck_assert_uint_eq(model_diags_count(d), 1);
    ck_assert_str_eq(model_diags_line(d, 0), "c:2:1: duplicate key 'a'");
    model_diags_free(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_yamljson");
    TCase *tc = tcase_create("model_yamljson");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, yaml_json_table, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, yaml_json_deep);
    tcase_add_test(tc, yaml_tree_view);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
