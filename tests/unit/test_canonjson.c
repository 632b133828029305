/* canonjson: the exact bytes for each kind of value, key order, every
 * escape, one output for differently spelled inputs, and refusal of
 * doubles, out-of-range integers and strings that are not UTF-8. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canonjson.h"
#include "jsonwrite.h"

static json_object *parse(const char *text) {
        json_tokener *tok = json_tokener_new();
        cr_assert_not_null(tok);
        /* With the NUL, so that a number at the end is complete. */
        json_object *o = json_tokener_parse_ex(tok, text, (int) strlen(text) + 1);
        cr_assert_eq(json_tokener_get_error(tok), json_tokener_success, "cannot parse %s", text);
        json_tokener_free(tok);
        return o;
}

/* canonjson of o (consumed) must be exactly want (want_len bytes). */
static void expect_bytes(json_object *o, const char *want, size_t want_len) {
        char *out = NULL;
        size_t len = 0;
        cr_assert_eq(canonjson_serialize(o, &out, &len), 0);
        cr_assert_eq(len, want_len, "got %zu bytes \"%s\", want %zu", len, out, want_len);
        cr_assert(memcmp(out, want, len) == 0, "got %s want %s", out, want);
        cr_assert_eq(out[len], '\0');
        free(out);
        json_object_put(o);
}

static void expect_str(json_object *o, const char *want) {
        expect_bytes(o, want, strlen(want));
}

/* Parsing text and serialising gives want. */
static void expect_canon(const char *text, const char *want) {
        expect_str(parse(text), want);
}

static int serialize_rc(json_object *o) {
        char *out = (char *) 0x1;
        size_t len = 7;
        int r = canonjson_serialize(o, &out, &len);
        if (r == 0)
                free(out);
        json_object_put(o);
        return r;
}

Test(canonjson, scalars) {
        expect_str(json_object_new_int(0), "0");
        expect_str(json_object_new_int(-17), "-17");
        expect_str(json_object_new_int64(INT64_MAX), "9223372036854775807");
        expect_str(json_object_new_int64(INT64_MIN), "-9223372036854775808");
        expect_str(json_object_new_uint64((uint64_t) INT64_MAX), "9223372036854775807");
        expect_str(json_object_new_boolean(1), "true");
        expect_str(json_object_new_boolean(0), "false");
        expect_str(NULL, "null");
        expect_str(json_object_new_null(), "null");
        expect_str(json_object_new_string(""), "\"\"");
        expect_str(json_object_new_object(), "{}");
        expect_str(json_object_new_array(), "[]");
        expect_canon("-0", "0");
        expect_canon("1234567890123", "1234567890123");
}

Test(canonjson, key_order_bytewise) {
        /* Upper case before lower case, shorter prefix first, UTF-8 after
         * ASCII, the empty key first. */
        expect_canon("{\"b\":1,\"a\":2,\"A\":3,\"aa\":4,\"\":5,\"\xc3\xa9\":6,\"z\":7,\"_\":8,\"0\":9}",
                     "{\"\":5,\"0\":9,\"A\":3,\"_\":8,\"a\":2,\"aa\":4,\"b\":1,\"z\":7,\"\xc3\xa9\":6}");
        /* Insertion order does not matter. */
        json_object *o1 = json_object_new_object(), *o2 = json_object_new_object();
        const char *keys[] = { "manifests", "cluster_id", "revision", "os_image", "enabled_capabilities" };
        for (int i = 0; i < 5; i++) {
                json_object_object_add(o1, keys[i], json_object_new_int(i));
                json_object_object_add(o2, keys[4 - i], json_object_new_int(4 - i));
        }
        const char *want =
                "{\"cluster_id\":1,\"enabled_capabilities\":4,\"manifests\":0,\"os_image\":3,\"revision\":2}";
        expect_str(o1, want);
        expect_str(o2, want);
}

Test(canonjson, nested) {
        expect_canon("{\"z\":{\"b\":[3,{\"y\":null,\"x\":true}],\"a\":[]},\"a\":[[],{},[1,[2,[3]]]]}",
                     "{\"a\":[[],{},[1,[2,[3]]]],\"z\":{\"a\":[],\"b\":[3,{\"x\":true,\"y\":null}]}}");
        /* Arrays keep their order. */
        expect_canon("[3,1,2,\"b\",\"a\"]", "[3,1,2,\"b\",\"a\"]");
}

Test(canonjson, control_character_escapes) {
        for (int c = 0; c < 0x20; c++) {
                char in[3] = { 'x', (char) c, 'y' };
                char want[16];
                switch (c) {
                case '\b': snprintf(want, sizeof want, "\"x\\by\""); break;
                case '\f': snprintf(want, sizeof want, "\"x\\fy\""); break;
                case '\n': snprintf(want, sizeof want, "\"x\\ny\""); break;
                case '\r': snprintf(want, sizeof want, "\"x\\ry\""); break;
                case '\t': snprintf(want, sizeof want, "\"x\\ty\""); break;
                default: snprintf(want, sizeof want, "\"x\\u%04xy\"", c); break;
                }
                expect_str(json_object_new_string_len(in, 3), want);
        }
        /* Spot checks of the \u form: lower-case hex. */
        expect_str(json_object_new_string("\x1f"), "\"\\u001f\"");
        expect_str(json_object_new_string("\x0b"), "\"\\u000b\"");
        expect_str(json_object_new_string("\x01"), "\"\\u0001\"");
}

Test(canonjson, other_escapes) {
        expect_str(json_object_new_string("a\"b"), "\"a\\\"b\"");
        expect_str(json_object_new_string("a\\b"), "\"a\\\\b\"");
        /* No "\/". */
        expect_str(json_object_new_string("a/b</script>"), "\"a/b</script>\"");
        /* DEL and non-ASCII stay raw. */
        expect_str(json_object_new_string("\x7f"), "\"\x7f\"");
        expect_str(json_object_new_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e"),
                   "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e\"");
        /* NUL inside a string. */
        expect_bytes(json_object_new_string_len("a\0b", 3), "\"a\\u0000b\"", 10);
        expect_bytes(json_object_new_string_len("\0", 1), "\"\\u0000\"", 8);
        /* Keys are escaped the same way. */
        json_object *o = json_object_new_object();
        json_object_object_add(o, "k\"\n/", json_object_new_int(1));
        expect_str(o, "{\"k\\\"\\n/\":1}");
}

Test(canonjson, escaped_input_same_bytes) {
        /* Escapes in the input decode to the same string as raw text. */
        expect_canon("\"\\u0041\\/\\u00e9\\u20ac\\ud834\\udd1e\\u007f\"",
                     "\"A/\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\x7f\"");
        expect_canon("\"\\u0000\"", "\"\\u0000\"");
        expect_canon("\"\\u0008\\u000C\\u000a\\u000D\\u0009\\u0022\\u005c\"", "\"\\b\\f\\n\\r\\t\\\"\\\\\"");
}

Test(canonjson, formatting_does_not_matter) {
        const char *spellings[] = {
                "{\"cluster_id\":\"c1\",\"revision\":3,\"manifests\":[{\"path\":\"a.yaml\",\"content\":\"x: 1\\n\"}],"
                "\"flags\":[true,false,null]}",
                "{\n  \"revision\" : 3,\n  \"flags\" : [ true , false , null ],\n  \"manifests\" : [\n    {\n"
                "      \"content\" : \"x: 1\\u000a\",\n      \"path\" : \"a.yaml\"\n    }\n  ],\n"
                "  \"cluster_id\" : \"\\u0063\\u0031\"\n}\n",
                "\t{\"manifests\":[{\"content\":\"x:\\u00201\\n\",\"path\":\"a\\u002eyaml\"}],\"flags\":[true,false,"
                "null],\"cluster_id\":\"c1\",\"revision\":3}",
        };
        const char *want = "{\"cluster_id\":\"c1\",\"flags\":[true,false,null],\"manifests\":[{\"content\":\"x: "
                           "1\\n\",\"path\":\"a.yaml\"}],\"revision\":3}";
        for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++)
                expect_canon(spellings[i], want);

        /* The output parses back to itself. */
        expect_canon(want, want);
}

Test(canonjson, doubles_refused) {
        cr_assert_eq(serialize_rc(json_object_new_double(1.5)), -EINVAL);
        cr_assert_eq(serialize_rc(json_object_new_double(2.0)), -EINVAL);
        cr_assert_eq(serialize_rc(json_object_new_double(NAN)), -EINVAL);
        cr_assert_eq(serialize_rc(json_object_new_double(INFINITY)), -EINVAL);
        cr_assert_eq(serialize_rc(parse("1.0")), -EINVAL);
        cr_assert_eq(serialize_rc(parse("1e3")), -EINVAL);
        cr_assert_eq(serialize_rc(parse("{\"a\":[1,2,{\"b\":0.5}]}")), -EINVAL);
        /* Integers json-c keeps as uint64 above INT64_MAX. */
        cr_assert_eq(serialize_rc(json_object_new_uint64(UINT64_MAX)), -EINVAL);
        cr_assert_eq(serialize_rc(json_object_new_uint64((uint64_t) INT64_MAX + 1)), -EINVAL);
}

Test(canonjson, utf8_refused) {
        const char *bad[] = {
                "\x80",                 /* lone continuation */
                "\xbf",
                "\xc0\x80",             /* overlong NUL */
                "\xc1\xbf",             /* overlong */
                "\xe0\x80\x80",         /* overlong 3-byte */
                "\xe0\x9f\xbf",
                "\xf0\x80\x80\x80",     /* overlong 4-byte */
                "\xf0\x8f\xbf\xbf",
                "\xed\xa0\x80",         /* U+D800 */
                "\xed\xbf\xbf",         /* U+DFFF */
                "\xed\xa0\xbd\xed\xb8\x80", /* surrogate pair in CESU-8 */
                "\xf4\x90\x80\x80",     /* U+110000 */
                "\xf5\x80\x80\x80",
                "\xf8\x88\x80\x80\x80",
                "\xfe",
                "\xff",
                "\xc3",                 /* truncated */
                "\xe2\x82",
                "\xf0\x9d\x84",
                "\xc3\x28",             /* bad continuation */
                "\xe2\x28\xa1",
                "\xe2\x82\x28",
                "\xf0\x9d\x28\x9e",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char s[32];
                snprintf(s, sizeof s, "ok%sok", bad[i]);
                cr_assert_eq(serialize_rc(json_object_new_string(s)), -EINVAL, "string %zu accepted", i);
                cr_assert_eq(serialize_rc(json_object_new_string(bad[i])), -EINVAL, "string %zu accepted", i);
                json_object *o = json_object_new_object();
                json_object_object_add(o, s, json_object_new_int(1));
                cr_assert_eq(serialize_rc(o), -EINVAL, "key %zu accepted", i);
                json_object *a = json_object_new_array();
                json_object_array_add(a, json_object_new_string(bad[i]));
                cr_assert_eq(serialize_rc(a), -EINVAL);
        }
        /* Boundaries that are valid. */
        const char *good[] = {
                "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf",
                "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xe1\x80\x80", "\xf3\xbf\xbf\xbf",
        };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
                char want[32];
                snprintf(want, sizeof want, "\"%s\"", good[i]);
                expect_str(json_object_new_string(good[i]), want);
        }
}

Test(canonjson, depth_limit) {
        json_object *deep = json_object_new_array(), *cur = deep;
        for (int i = 0; i < 300; i++) {
                json_object *n = json_object_new_array();
                json_object_array_add(cur, n);
                cur = n;
        }
        cr_assert_eq(serialize_rc(deep), -E2BIG);

        json_object *ok = json_object_new_object();
        cur = ok;
        for (int i = 0; i < 100; i++) {
                json_object *n = json_object_new_object();
                json_object_object_add(cur, "k", n);
                cur = n;
        }
        char *out = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(ok, &out, &len), 0);
        cr_assert_eq(len, 100 * 6 + 2);
        free(out);
        json_object_put(ok);
}

Test(canonjson, large_string) {
        size_t n = 3 * 1024 * 1024;
        char *s = malloc(n);
        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++)
                s[i] = (char) ('a' + i % 26);
        s[n / 2] = '\n';
        json_object *o = json_object_new_string_len(s, (int) n);
        char *out = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(o, &out, &len), 0);
        cr_assert_eq(len, n + 3);
        cr_assert(memcmp(out + 1, s, n / 2) == 0);
        cr_assert(memcmp(out + 1 + n / 2, "\\n", 2) == 0);
        free(out);
        free(s);
        json_object_put(o);
}

/* jadd_str_or_null: json-c's null is a NULL object, which jadd takes for a
 * failed allocation; a record with no disk chosen (the disk speed check's)
 * must still be written, with "disk": null. */
Test(jsonwrite, str_or_null) {
        json_object *o = json_object_new_object();
        cr_assert_eq(jadd_str_or_null(o, "disk", NULL), 0);
        cr_assert_eq(jadd_str_or_null(o, "path", "/dev/vda"), 0);
        cr_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                         "{\"disk\":null,\"path\":\"/dev/vda\"}");
        cr_assert_eq(jadd(o, "x", NULL), -ENOMEM, "jadd still refuses NULL");
        json_object_put(o);
}
