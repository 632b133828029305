/* Walking a JSON text without its tree (jsonread.h: json_members,
 * json_elements, json_span_parse) and the inventory read that way
 * (inventory_from_text), checked against json-c's whole-tree reading; and
 * jsonread.h's reader of a request's members (jhas, jget_cstr, jget_bool,
 * jget_int, jrefuse). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "jsonread.h"
#include "testutil.h"

/* The walk rebuilt as a tree, each value parsed from its span. */
static int add_member(void *ud, const char *key, struct json_span v) {
        json_object *o = NULL;
        int r = json_span_parse(v, 63, &o);
        if (r == 0)
                json_object_object_add(ud, key, o);
        return r;
}

static int add_element(void *ud, size_t i, struct json_span v) {
        json_object *o = NULL;
        int r = json_span_parse(v, 63, &o);
        cr_assert_eq(i, json_object_array_length(ud));
        if (r == 0)
                json_object_array_add(ud, o);
        return r;
}

/* Whether walking s gives what json-c's parse of it gives. */
static void same_as_json_c(const char *s) {
        json_object *whole = json_tokener_parse(s);
        cr_assert_not_null(whole, "%s", s);
        bool object = json_object_is_type(whole, json_type_object);
        json_object *walked = object ? json_object_new_object() : json_object_new_array();
        char err[128] = "";
        int r = object ? json_members(s, strlen(s), add_member, walked, err, sizeof err)
                       : json_elements(s, strlen(s), add_element, walked, err, sizeof err);
        cr_assert_eq(r, 0, "%s: %s", s, err);
        cr_assert(json_object_equal(whole, walked), "%s: walked as %s", s, json_object_to_json_string(walked));
        json_object_put(whole);
        json_object_put(walked);
}

Test(jsonwalk, members_and_elements_are_json_c_s) {
        static const char *const docs[] = {
                "{}",
                " { } ",
                "[]",
                "{\"a\":1}",
                "{\"a\":1,\"b\":\"two\",\"c\":[1,2,{\"d\":null}],\"e\":{\"f\":[[]]},\"g\":true,\"h\":false,\"i\":null}",
                "{ \"a\" : -1.5e3 , \"b\" :\t\"x\\\"}]\" ,\n\"c\":\r[ ] }",
                "{\"a\":1,\"a\":2}", /* the last of a repeated name, as json-c */
                "{\"\\u00e9t\\u00e9\":\"summer\",\"tab\\tkey\":0}",
                "{\"\":\"empty name\"}",
                "[1,\"2\",[3],{\"4\":4},null,true,-0.5]",
                "[\"]\",\"[\",\"{\",\"}\",\"\\\\\"]",
        };
        for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
                same_as_json_c(docs[i]);
}

static int count_member(void *ud, const char *key, struct json_span v) {
        (void) key;
        (void) v;
        ++*(int *) ud;
        return 0;
}

static int count_element(void *ud, size_t i, struct json_span v) {
        (void) i;
        (void) v;
        ++*(int *) ud;
        return 0;
}

Test(jsonwalk, bad_text_is_refused_with_where) {
        static const struct {
                const char *doc, *why;
        } objects[] = {
                { "", "not an object" },
                { "[]", "not an object" },
                { "{", "a member name expected" },
                { "{\"a\"}", "':' expected" },
                { "{\"a\":}", "a value expected" },
                { "{\"a\":1,}", "a member name expected" },
                { "{\"a\":1 \"b\":2}", "',' or '}' expected" },
                { "{\"a\":\"unterminated}", "a value expected" },
                { "{\"a\":[1,2}", "a value expected" },
                { "{\"a\":{\"b\":1]}", "a value expected" },
                { "{\"a\":1}x", "trailing data" },
                { "{\"a\":1}}", "trailing data" },
                { "{a:1}", "a member name expected" },
                { "{\"a\\u0000b\":1}", "a NUL in a member name" },
                { "{\"a\\x\":1}", "a bad member name" },
        };
        for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
                char err[128] = "";
                int n = 0;
                const char *d = objects[i].doc;
                cr_assert_eq(json_members(d, strlen(d), count_member, &n, err, sizeof err), -EINVAL, "%s", d);
                cr_assert(strstr(err, objects[i].why), "%s: %s", d, err);
                cr_assert(strstr(err, "at byte "), "%s: %s", d, err);
        }
        static const char *const arrays[] = { "{}", "[", "[1,]", "[1 2]", "[\"a]", "[[]", "[]]", "[,1]" };
        for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
                char err[128] = "";
                int n = 0;
                cr_assert_eq(json_elements(arrays[i], strlen(arrays[i]), count_element, &n, err, sizeof err), -EINVAL,
                             "%s", arrays[i]);
                cr_assert(err[0], "%s", arrays[i]);
        }
        /* A name past JSON_SPAN_KEY_MAX, plain or escaped. */
        char doc[2 * JSON_SPAN_KEY_MAX];
        for (int esc = 0; esc < 2; esc++) {
                snprintf(doc, sizeof doc, "{\"%s%0*d\":1}", esc ? "\\n" : "", JSON_SPAN_KEY_MAX + 1, 0);
                char err[128] = "";
                int n = 0;
                cr_assert_eq(json_members(doc, strlen(doc), count_member, &n, err, sizeof err), -EINVAL);
                cr_assert(strstr(err, "member name too long"), "%s", err);
        }
}

Test(jsonwalk, nesting_is_bounded_and_the_walk_stops_where_told) {
        /* JSON_SPAN_DEPTH containers are walked past; one more is refused. */
        char doc[2 * JSON_SPAN_DEPTH + 16];
        for (int extra = 0; extra < 2; extra++) {
                int d = JSON_SPAN_DEPTH + extra;
                size_t k = (size_t) sprintf(doc, "{\"a\":");
                for (int i = 0; i < d; i++)
                        doc[k++] = '[';
                for (int i = 0; i < d; i++)
                        doc[k++] = ']';
                doc[k++] = '}';
                int n = 0;
                int r = json_members(doc, k, count_member, &n, NULL, 0);
                cr_assert_eq(r, extra ? -EINVAL : 0, "%d deep", d);
        }
        /* A callback's failure ends the walk with its own return. */
        int seen = 0;
        cr_assert_eq(json_elements("[1,2,3]", 7, count_element, &seen, NULL, 0), 0);
        cr_assert_eq(seen, 3);
}

static int stop_at_second(void *ud, size_t i, struct json_span v) {
        (void) v;
        ++*(int *) ud;
        return i == 1 ? -ENOSPC : 0;
}

Test(jsonwalk, a_callback_failure_is_returned) {
        int seen = 0;
        cr_assert_eq(json_elements("[1,2,3]", 7, stop_at_second, &seen, NULL, 0), -ENOSPC);
        cr_assert_eq(seen, 2);
}

Test(jsonwalk, spans_parse_exactly) {
        static const struct {
                const char *text;
                int ok;
        } spans[] = {
                { "123", 1 }, { "-1.5e3", 1 }, { "true", 1 }, { "false", 1 }, { "null", 1 }, { "\"a\"", 1 },
                { "{}", 1 },  { "[1]", 1 },    { "12x", 0 },  { "tru", 0 },   { "nul", 0 },  { "\"a", 0 },
                { "{", 0 },   { "1 2", 0 },    { "", 0 },
        };
        for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
                json_object *o = (json_object *) 1;
                int r = json_span_parse((struct json_span) { spans[i].text, strlen(spans[i].text) }, 8, &o);
                cr_assert_eq(r == 0, spans[i].ok, "%s: %d", spans[i].text, r);
                if (r == 0 && strcmp(spans[i].text, "null") != 0)
                        cr_assert_not_null(o, "%s", spans[i].text);
                else
                        cr_assert_null(o, "%s", spans[i].text);
        }
        /* A number cut from a longer text ends where the span does. */
        const char *t = "[12345]";
        json_object *o = NULL;
        cr_assert_eq(json_span_parse((struct json_span) { t + 1, 3 }, 8, &o), 0);
        cr_assert_eq(json_object_get_int(o), 123);
        json_object_put(o);
        /* Too deep for the depth asked. */
        cr_assert_eq(json_span_parse((struct json_span) { "[[[1]]]", 7 }, 2, &o), -EINVAL);
}

/* ---- the inventory read from its text, as from its tree ------------------ */

static void same_inventory(const char *text) {
        struct inventory a, b;
        char ea[256] = "", eb[256] = "";
        json_object *o = json_tokener_parse(text);
        int ra = o ? inventory_from_json(o, &a, ea, sizeof ea) : -EINVAL;
        if (!o)
                inventory_init(&a);
        int rb = inventory_from_text(text, strlen(text), &b, eb, sizeof eb);
        cr_assert_eq(rb, ra, "%.200s: tree %d (%s), text %d (%s)", text, ra, ea, rb, eb);
        if (o)
                cr_assert_str_eq(eb, ea, "%.200s", text);
        if (ra == 0) {
                json_object *ja = inventory_to_json(&a), *jb = inventory_to_json(&b);
                cr_assert(json_object_equal(ja, jb), "%.200s", text);
                json_object_put(ja);
                json_object_put(jb);
        }
        inventory_free(&a);
        inventory_free(&b);
        json_object_put(o);
}

Test(jsonwalk, inventories_read_from_text_as_from_the_tree) {
        static const char *const fixtures[] = { MUSTER_FIXTURES_DIR "/qemu-q35/expected.json",
                                                MUSTER_FIXTURES_DIR "/build-machine/expected.json" };
        for (size_t i = 0; i < 2; i++) {
                size_t len;
                char *text = tu_read_file(fixtures[i], &len);
                cr_assert_not_null(text, "%s", fixtures[i]);
                same_inventory(text);
                /* Every list and section of it refused in turn: the same
                 * reason, found in the same order. */
                json_object *o = json_tokener_parse(text);
                json_object_object_foreach(o, key, val) {
                        (void) val;
                        static const char *const bad[] = { "7", "\"x\"", "[1]", "{\"a\":[]}", "null", "[{\"name\":5}]" };
                        for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
                                json_object *c = json_tokener_parse(text);
                                json_object_object_add(c, key, json_tokener_parse(bad[b]));
                                same_inventory(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN));
                                json_object_put(c);
                        }
                }
                json_object_put(o);
                free(text);
        }
        static const char *const docs[] = {
                "{\"inventory_version\":1}",
                "{\"inventory_version\":1,\"disks\":[{\"name\":\"a\"}],\"disks\":[{\"name\":\"b\"},{\"name\":\"c\"}]}",
                "{\"disks\":[1],\"inventory_version\":2}",
                "{\"inventory_version\":1,\"disks\":null,\"routes\":[{\"family\":4}],\"gpus\":[]}",
                "{\"inventory_version\":1,\"routes\":[{\"family\":4},{\"family\":5}]}",
                "{\"inventory_version\":1,\"interfaces\":[{\"name\":\"eth0\",\"mtu\":\"x\"}],\"disks\":[{\"size_bytes\":-1}]}",
                "{\"inventory_version\":1,\"truncated\":{\"disks\":{\"total\":9,\"listed\":1}},\"disks\":[{}]}",
                "[]",
                "\"a string\"",
                "{\"inventory_version\":1,\"hostname\":\"h\",\"hostname\":7}",
        };
        for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
                same_inventory(docs[i]);
}

Test(jsonwalk, inventory_text_refusals) {
        static const struct {
                const char *doc, *why;
        } cases[] = {
                { "not json", "not valid JSON" },
                { "", "not valid JSON" },
                { "{\"inventory_version\":1,\"disks\":[{}", "not valid JSON" },
                { "{\"inventory_version\":1,\"disks\":[{\"name\":tru}]}", "not valid JSON (an entry of \"disks\")" },
                { "{\"inventory_version\":1,\"hostname\":nope}", "not valid JSON (field \"hostname\")" },
                { "{\"inventory_version\":1} trailing", "trailing data" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                struct inventory b;
                char err[256] = "";
                cr_assert_eq(inventory_from_text(cases[i].doc, strlen(cases[i].doc), &b, err, sizeof err), -EINVAL,
                             "%s", cases[i].doc);
                cr_assert(strstr(err, cases[i].why), "%s: %s", cases[i].doc, err);
                inventory_free(&b);
        }
        /* More entries than a list holds: counted before any is read. */
        size_t n = INV_MAX_DISKS + 1, k = 0;
        char *doc = malloc(64 + 3 * n);
        cr_assert_not_null(doc);
        k += (size_t) sprintf(doc, "{\"inventory_version\":1,\"disks\":[");
        for (size_t i = 0; i < n; i++)
                k += (size_t) sprintf(doc + k, "%s{}", i ? "," : "");
        k += (size_t) sprintf(doc + k, "]}");
        struct inventory b;
        char err[256];
        cr_assert_eq(inventory_from_text(doc, k, &b, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "has 1025 entries, at most 1024"), "%s", err);
        cr_assert_eq(b.n_disks, 0);
        inventory_free(&b);
        free(doc);
}

/* ---- a request's members ------------------------------------------------ */

static json_object *doc(const char *text) {
        json_object *o = json_tokener_parse(text);
        cr_assert(o, "%s", text);
        return o;
}

Test(jsonread, request_strings) {
        json_object *o = doc("{\"a\": \"abc\", \"n\": null, \"i\": 5, \"e\": \"\"}");
        char why[128] = "";
        struct jctx c = { why, sizeof why, 0 };
        const char *a = jget_cstr(o, "a", 3, &c);
        cr_assert_str_eq(a, "abc");
        cr_assert_eq(a, json_object_get_string(json_object_object_get(o, "a")), "in place, not a copy");
        cr_assert_str_eq(jget_cstr(o, "e", 3, &c), "");
        cr_assert_null(jget_cstr(o, "n", 3, &c), "null is absent");
        cr_assert_null(jget_cstr(o, "missing", 3, &c));
        cr_assert_null(jget_cstr(NULL, "a", 3, &c));
        cr_assert_eq(c.r, 0);
        cr_assert_null(jget_cstr(o, "a", 2, &c));
        cr_assert_eq(c.r, -EINVAL);
        cr_assert_str_eq(why, "field \"a\" is longer than 2 bytes");
        c = (struct jctx) { why, sizeof why, 0 };
        cr_assert_null(jget_cstr(o, "i", 10, &c));
        cr_assert_str_eq(why, "field \"i\" must be a string");
        cr_assert_null(jget_cstr(o, "a", 1, &c));
        cr_assert_str_eq(why, "field \"i\" must be a string", "the first reason holds");
        /* A NUL inside (json-c keeps the length). */
        json_object_object_add(o, "z", json_object_new_string_len("x\0y", 3));
        c = (struct jctx) { why, sizeof why, 0 };
        cr_assert_null(jget_cstr(o, "z", 10, &c));
        cr_assert_str_eq(why, "field \"z\" has a NUL byte");
        /* jhas: there at all, null included. */
        cr_assert(jhas(o, "a"));
        cr_assert(jhas(o, "n"));
        cr_assert_not(jhas(o, "missing"));
        cr_assert_not(jhas(NULL, "a"));
        json_object_put(o);
}

Test(jsonread, request_booleans_and_integers) {
        json_object *o = doc("{\"t\": true, \"f\": false, \"n\": null, \"s\": \"yes\", \"i\": -7, "
                             "\"d\": 1.5, \"big\": 100}");
        char why[128] = "";
        struct jctx c = { why, sizeof why, 0 };
        bool b = false;
        cr_assert(jget_bool(o, "t", &b, &c));
        cr_assert(b);
        cr_assert(jget_bool(o, "f", &b, &c));
        cr_assert_not(b);
        b = true;
        cr_assert_not(jget_bool(o, "n", &b, &c));
        cr_assert_not(jget_bool(o, "missing", &b, &c));
        cr_assert(b, "left alone");
        cr_assert_eq(c.r, 0);
        cr_assert_not(jget_bool(o, "s", &b, &c));
        cr_assert_eq(c.r, -EINVAL);
        cr_assert_str_eq(why, "field \"s\" must be true or false");

        int64_t x = 42;
        c = (struct jctx) { why, sizeof why, 0 };
        cr_assert(jget_int(o, "i", INT64_MIN, INT64_MAX, &x, &c));
        cr_assert_eq(x, -7);
        x = 42;
        cr_assert_not(jget_int(o, "n", 0, 10, &x, &c));
        cr_assert_not(jget_int(o, "missing", 0, 10, &x, &c));
        cr_assert_eq(x, 42, "left alone");
        cr_assert_eq(c.r, 0);
        cr_assert_not(jget_int(o, "big", 0, 99, &x, &c));
        cr_assert_str_eq(why, "field \"big\" must be an integer from 0 to 99");
        cr_assert_eq(x, 42);
        c = (struct jctx) { why, sizeof why, 0 };
        cr_assert_not(jget_int(o, "d", 0, 99, &x, &c), "a double is no integer");
        cr_assert_str_eq(why, "field \"d\" must be an integer");
        c = (struct jctx) { why, sizeof why, 0 };
        cr_assert(jget_int(o, "big", 100, 100, &x, &c));
        cr_assert_eq(x, 100);
        json_object_put(o);
}

Test(jsonread, refusals_in_the_callers_words) {
        json_object *o = doc("{\"id\": 5}");
        char why[128] = "";
        struct jctx c = { why, sizeof why, 0 };
        cr_assert_null(jget_cstr(o, "id", 64, &c));
        jrefuse(&c, "field \"%s\" must be a UUID", "id");
        cr_assert_eq(c.r, -EINVAL);
        cr_assert_str_eq(why, "field \"id\" must be a UUID", "in place of the getter's words");
        /* Without a failure before it, too (a member that is absent). */
        c = (struct jctx) { why, sizeof why, 0 };
        jrefuse(&c, "field \"x\" is required");
        cr_assert_eq(c.r, -EINVAL);
        cr_assert_str_eq(why, "field \"x\" is required");
        /* Out of memory stays what it is. */
        c = (struct jctx) { why, sizeof why, 0 };
        joom(&c);
        jrefuse(&c, "other words");
        cr_assert_eq(c.r, -ENOMEM);
        cr_assert_str_eq(why, "out of memory");
        /* No buffer: only the errno. */
        c = (struct jctx) { 0 };
        jrefuse(&c, "words");
        cr_assert_eq(c.r, -EINVAL);
        json_object_put(o);
}
