/* musterctl's output forms and conditions, without a server (issue 34):
 * -o yaml read back by libyaml's parser is the JSON it was made from, for
 * the values a YAML reader would take for another type; custom-columns
 * specs are parsed or refused in words and render kubectl's table; a
 * wait condition is parsed and judged on an object. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "customcols.h"
#include "jsonpath.h"
#include "jsonyaml.h"
#include "waitfor.h"

/* ---- YAML read back --------------------------------------------------------- */

/* A plain scalar as a YAML 1.2 core-schema reader takes it. */
static json_object *plain_value(const char *s) {
        if (!*s || strcmp(s, "null") == 0 || strcmp(s, "~") == 0)
                return NULL;
        if (strcmp(s, "true") == 0)
                return json_object_new_boolean(1);
        if (strcmp(s, "false") == 0)
                return json_object_new_boolean(0);
        char *end;
        if (strspn(s, "0123456789+-.eE") != strlen(s))
                return json_object_new_string(s); /* "inf", "nan": words */
        long long i = strtoll(s, &end, 10);
        if (!*end)
                return json_object_new_int64(i);
        double d = strtod(s, &end);
        if (!*end)
                return json_object_new_double(d);
        return json_object_new_string(s);
}

static json_object *read_node(yaml_parser_t *p, yaml_event_t *ev);

static json_object *read_next(yaml_parser_t *p) {
        yaml_event_t ev;
        cr_assert(yaml_parser_parse(p, &ev), "libyaml reads it back: %s", p->problem ? p->problem : "?");
        json_object *o = read_node(p, &ev);
        yaml_event_delete(&ev);
        return o;
}

static json_object *read_node(yaml_parser_t *p, yaml_event_t *ev) {
        if (ev->type == YAML_SCALAR_EVENT) {
                const char *s = (const char *) ev->data.scalar.value;
                if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                        return plain_value(s);
                return json_object_new_string_len(s, (int) ev->data.scalar.length);
        }
        if (ev->type == YAML_SEQUENCE_START_EVENT) {
                json_object *a = json_object_new_array();
                for (;;) {
                        yaml_event_t e;
                        cr_assert(yaml_parser_parse(p, &e));
                        if (e.type == YAML_SEQUENCE_END_EVENT) {
                                yaml_event_delete(&e);
                                return a;
                        }
                        json_object_array_add(a, read_node(p, &e));
                        yaml_event_delete(&e);
                }
        }
        if (ev->type == YAML_MAPPING_START_EVENT) {
                json_object *m = json_object_new_object();
                for (;;) {
                        yaml_event_t e;
                        cr_assert(yaml_parser_parse(p, &e));
                        if (e.type == YAML_MAPPING_END_EVENT) {
                                yaml_event_delete(&e);
                                return m;
                        }
                        cr_assert_eq(e.type, YAML_SCALAR_EVENT, "keys are scalars");
                        json_object *k = read_node(p, &e);
                        cr_assert(json_object_is_type(k, json_type_string), "a key reads back as a string: %s",
                                  (const char *) e.data.scalar.value);
                        json_object_object_add(m, json_object_get_string(k), read_next(p));
                        json_object_put(k);
                        yaml_event_delete(&e);
                }
        }
        cr_assert_fail("unexpected YAML event %d", ev->type);
        return NULL;
}

static json_object *yaml_read_back(const char *text) {
        yaml_parser_t p;
        yaml_event_t ev;
        cr_assert(yaml_parser_initialize(&p));
        yaml_parser_set_input_string(&p, (const unsigned char *) text, strlen(text));
        cr_assert(yaml_parser_parse(&p, &ev) && ev.type == YAML_STREAM_START_EVENT);
        yaml_event_delete(&ev);
        cr_assert(yaml_parser_parse(&p, &ev) && ev.type == YAML_DOCUMENT_START_EVENT, "one document");
        yaml_event_delete(&ev);
        json_object *o = read_next(&p);
        cr_assert(yaml_parser_parse(&p, &ev) && ev.type == YAML_DOCUMENT_END_EVENT);
        yaml_event_delete(&ev);
        cr_assert(yaml_parser_parse(&p, &ev) && ev.type == YAML_STREAM_END_EVENT, "nothing after it");
        yaml_event_delete(&ev);
        yaml_parser_delete(&p);
        return o;
}

static char *to_yaml(json_object *o) {
        struct growbuf b = { 0 };
        cr_assert_eq(jsonyaml_emit(o, &b), 0);
        cr_assert_not_null(b.data);
        return b.data;
}

static const char tricky[] =
        "{\"id\": \"7f3c\", \"yes\": \"yes\", \"no\": \"No\", \"on\": \"on\", \"t\": \"true\", \"n\": \"null\","
        " \"tilde\": \"~\", \"hex\": \"0x1\", \"oct\": \"0o17\", \"num\": \"123\", \"neg\": \"-1.5e3\","
        " \"dot\": \".5\", \"inf\": \".inf\", \"date\": \"2026-11-21\", \"empty\": \"\", \"lead\": \"  two\","
        " \"trail\": \"x \", \"colon\": \"a: b\", \"hash\": \"# not a comment\", \"dash\": \"- item\","
        " \"star\": \"*alias\", \"amp\": \"&anchor\", \"bang\": \"!tag\", \"brace\": \"{a}\", \"pct\": \"%x\","
        " \"quote\": \"'q\\\"\", \"tab\": \"a\\tb\", \"ctl\": \"\\u0001\", \"uni\": \"h\\u00e9llo \\u2603 \\ud83d\\ude00\","
        " \"lines\": \"one\\ntwo\\n\", \"lines_no_nl\": \"one\\ntwo\", \"lines_lead\": \"  indented\\nnext\","
        " \"lines_blank\": \"\\n\\nafter\\n\\n\", \"int\": 42, \"big\": 9007199254740993, \"negi\": -7,"
        " \"dbl\": 1.25, \"t2\": true, \"f2\": false, \"nil\": null, \"arr\": [1, \"2\", [\"x\", []], {}],"
        " \"obj\": {\"inner\": {\"deep\": [null, \"y\", {\"k\": \"v\"}]}, \"true\": 1, \"123\": \"k\"},"
        " \"merge\": \"<<\", \"keys\": {\"\": \"empty key\", \"a:b\": 1, \"- x\": 2}}";

Test(yaml, reads_back_as_the_json) {
        json_object *o = json_tokener_parse(tricky);
        cr_assert_not_null(o);
        char *y = to_yaml(o);
        json_object *back = yaml_read_back(y);
        json_object_object_foreach(o, key, want) {
                json_object *got = NULL;
                cr_assert(json_object_object_get_ex(back, key, &got), "%s is read back", key);
                cr_assert(json_object_equal(want, got), "%s: %s read back as %s", key, json_object_to_json_string(want),
                          json_object_to_json_string(got));
        }
        cr_assert(json_object_equal(o, back), "YAML:\n%s", y);
        /* Readable as kubectl's: multi-line strings as literal blocks, plain
         * words plain, ambiguous ones double-quoted, unicode as it is. */
        cr_assert(strstr(y, "lines: |\n  one\n  two\n"), "%s", y);
        cr_assert(strstr(y, "id: 7f3c\n"), "%s", y);
        cr_assert(strstr(y, "yes: \"yes\"\n") || strstr(y, "\"yes\": \"yes\"\n"), "%s", y);
        cr_assert(strstr(y, "hex: \"0x1\"\n") && strstr(y, "empty: \"\"\n"), "%s", y);
        cr_assert(strstr(y, "int: 42\n") && strstr(y, "t2: true\n") && strstr(y, "nil: null\n"), "%s", y);
        cr_assert(strstr(y, "h\xc3\xa9llo \xe2\x98\x83"), "unicode unescaped: %s", y);
        free(y);
        json_object_put(back);
        json_object_put(o);
}

Test(yaml, a_list_and_empty_documents) {
        const char *docs[] = { "[]", "{}", "[{\"id\": \"a\"}, {\"id\": \"b\", \"x\": [\"\", \"null\"]}]", "\"yes\"",
                               "\"line\\n\"", "12", "null" };
        for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
                json_object *o = json_tokener_parse(docs[i]);
                char *y = to_yaml(o);
                json_object *back = yaml_read_back(y);
                cr_assert(json_object_equal(o, back), "%s as YAML:\n%s", docs[i], y);
                free(y);
                json_object_put(back);
                json_object_put(o);
        }
}

Test(yaml, ambiguous_plain_scalars) {
        const char *amb[] = { "", "y", "NO", "Off", "~", "null", "1", "+1", "-.5", ".inf", "0x1f", "2026-01-01",
                              "1_000", "<<", "1:30", "1e3", "0o17", "0b101", "2026-11-21T21:50:11Z", "-7" };
        const char *plain[] = { "host", "known-unbound", "a1", "x86_64", "env", "nullable", "yesterday", "7f3c",
                                "1st", "e", "-", "v1.2.3" };
        for (size_t i = 0; i < sizeof amb / sizeof *amb; i++)
                cr_assert(jsonyaml_plain_is_ambiguous(amb[i], strlen(amb[i])), "%s", amb[i]);
        for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
                cr_assert_not(jsonyaml_plain_is_ambiguous(plain[i], strlen(plain[i])), "%s", plain[i]);
}

/* ---- custom-columns ------------------------------------------------------------ */

Test(customcols, specs_parse) {
        struct customcols c;
        char err[256];
        cr_assert_eq(customcols_parse("ID:.id,CPUS:.inventory.cpu.count,DISK:.disks[0].name,S:status", &c, err,
                                      sizeof err),
                     0, "%s", err);
        cr_assert_eq(c.n, 4);
        cr_assert_str_eq(c.v[1].header, "CPUS");
        cr_assert_str_eq(c.v[1].expr, ".inventory.cpu.count");
        cr_assert_str_eq(c.v[3].expr, "status");
        customcols_free(&c);
        /* A comma inside brackets belongs to the path; braces are kubectl's too. */
        cr_assert_eq(customcols_parse("K:.labels['a,b'],N:{.name}", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.n, 2);
        cr_assert_str_eq(c.v[0].expr, ".labels['a,b']");
        customcols_free(&c);
}

Test(customcols, bad_specs_say_why) {
        static const struct { const char *spec, *why; } bad[] = {
                { "", "HEADER:EXPR" },
                { "ID", "column 1 (\"ID\") is not HEADER:EXPR" },
                { "ID:.id,NAME", "column 2 (\"NAME\") is not HEADER:EXPR" },
                { ":.id", "has no header" },
                { "ID:", "has no EXPR" },
                { "ID:.id,", "column 2" },
                { "X:.a[?(@.b)]", "filters" },
                { "X:.a..b", "recursive descent" },
                { "X:.a[1:2]", "slices" },
                { "X:{.a}{.b}", "alone" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct customcols c = { 0 };
                char err[256] = "";
                cr_assert_eq(customcols_parse(bad[i].spec, &c, err, sizeof err), -EINVAL, "%s", bad[i].spec);
                cr_assert(strstr(err, bad[i].why), "%s: %s", bad[i].spec, err);
                cr_assert_eq(c.n, 0);
                cr_assert_null(c.v);
        }
        char big[CUSTOMCOLS_MAX_SPEC + 8];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        struct customcols c;
        cr_assert_eq(customcols_parse(big, &c, NULL, 0), -E2BIG);
}

Test(customcols, renders_kubectls_table) {
        struct customcols c;
        cr_assert_eq(customcols_parse("ID:.id,CPUS:.inventory.cpu.count,DISK:.disks[0].name,TAGS:.tags[*]", &c,
                                      NULL, 0),
                     0);
        json_object *doc = json_tokener_parse(
                "[{\"id\": \"h1\", \"inventory\": {\"cpu\": {\"count\": 4}}, \"disks\": [{\"name\": \"vda\"}],"
                " \"tags\": [\"a\", \"b\"]},"
                " {\"id\": \"h\\u00e9-long\", \"inventory\": null, \"disks\": [], \"tags\": [null]}]");
        struct growbuf out = { 0 };
        cr_assert_eq(customcols_render(&c, doc, &out), 0);
        cr_assert_str_eq(out.data, "ID        CPUS     DISK     TAGS\n"
                                   "h1        4        vda      a,b\n"
                                   "h\xc3\xa9-long   <none>   <none>   <none>\n");
        free(out.data);
        /* One object: one row. Newlines in a value do not break the table. */
        json_object *one = json_tokener_parse("{\"id\": \"x\\ny\", \"inventory\": {\"cpu\": {\"count\": 2}}}");
        out = (struct growbuf) { 0 };
        cr_assert_eq(customcols_render(&c, one, &out), 0);
        cr_assert_str_eq(out.data, "ID    CPUS   DISK     TAGS\nx y   2      <none>   <none>\n");
        free(out.data);
        json_object_put(one);
        json_object_put(doc);
        customcols_free(&c);
}

/* ---- jsonpath_query ------------------------------------------------------------ */

Test(jsonpath_query, paths_with_and_without_the_dot) {
        json_object *o = json_tokener_parse("{\"status\": \"known\", \"a\": [{\"b\": 1}, {\"b\": 2}]}");
        const char *same[] = { ".status", "status", "{.status}", " {.status} ", "$.status", "['status']" };
        for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
                json_object **v;
                size_t n;
                char err[128];
                cr_assert_eq(jsonpath_query(same[i], o, &v, &n, err, sizeof err), 0, "%s: %s", same[i], err);
                cr_assert_eq(n, 1, "%s", same[i]);
                cr_assert_str_eq(json_object_get_string(v[0]), "known");
                free(v);
        }
        json_object **v;
        size_t n;
        cr_assert_eq(jsonpath_query("a[*].b", o, &v, &n, NULL, 0), 0);
        cr_assert_eq(n, 2);
        free(v);
        cr_assert_eq(jsonpath_query(".missing", o, &v, &n, NULL, 0), 0);
        cr_assert_eq(n, 0);
        cr_assert_null(v);
        cr_assert_eq(jsonpath_query("", o, &v, &n, NULL, 0), -EINVAL);
        cr_assert_eq(jsonpath_query(".a{", o, &v, &n, NULL, 0), -EINVAL);
        json_object_put(o);
}

/* ---- wait --for ---------------------------------------------------------------- */

Test(waitfor, conditions_parse) {
        static const struct { const char *arg, *path, *value; } good[] = {
                { ".status=installed", ".status", "installed" },
                { "status=installed", "status", "installed" },
                { "jsonpath={.status}=installed", "{.status}", "installed" },
                { "jsonpath='{.status}'=installed", "{.status}", "installed" },
                { ".applied_revision=3", ".applied_revision", "3" },
                { ".labels['a=b']=x=y", ".labels['a=b']", "x=y" },
                { ".status_info=", ".status_info", "" },
        };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
                struct waitfor w;
                char err[256];
                cr_assert_eq(waitfor_parse(good[i].arg, &w, err, sizeof err), 0, "%s: %s", good[i].arg, err);
                cr_assert_str_eq(w.path, good[i].path);
                cr_assert_str_eq(w.value, good[i].value);
                waitfor_free(&w);
        }
        static const struct { const char *arg, *why; } bad[] = {
                { "status", "FIELD=VALUE" }, { "=x", "FIELD before" }, { ".a..b=x", "recursive" },
                { "jsonpath=", "FIELD=VALUE" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct waitfor w;
                char err[256] = "";
                cr_assert_eq(waitfor_parse(bad[i].arg, &w, err, sizeof err), -EINVAL, "%s", bad[i].arg);
                cr_assert(strstr(err, bad[i].why), "%s: %s", bad[i].arg, err);
        }
}

static int check(const char *cond, const char *doc, char **seen) {
        struct waitfor w;
        cr_assert_eq(waitfor_parse(cond, &w, NULL, 0), 0, "%s", cond);
        json_object *o = json_tokener_parse(doc);
        int r = waitfor_check(&w, o, seen);
        json_object_put(o);
        waitfor_free(&w);
        return r;
}

Test(waitfor, conditions_are_judged_on_the_string_form) {
        char *seen;
        cr_assert_eq(check(".status=installed", "{\"status\": \"installed\"}", &seen), 1);
        cr_assert_str_eq(seen, "installed");
        free(seen);
        cr_assert_eq(check("status=installed", "{\"status\": \"known\"}", &seen), 0);
        cr_assert_str_eq(seen, "known", "the value seen, for the timeout's message");
        free(seen);
        cr_assert_eq(check(".applied_revision=3", "{\"applied_revision\": 3}", &seen), 1);
        free(seen);
        cr_assert_eq(check(".ok=true", "{\"ok\": true}", &seen), 1);
        free(seen);
        cr_assert_eq(check(".progress.stage=done", "{\"progress\": null}", &seen), 0);
        cr_assert_null(seen, "absent");
        cr_assert_eq(check(".x=", "{\"x\": \"\"}", &seen), 1, "an empty string is a value");
        free(seen);
        cr_assert_eq(check(".x=", "{}", &seen), 0, "an absent field is not \"\"");
        cr_assert_null(seen);
        cr_assert_eq(check(".n=null", "{\"n\": null}", &seen), 1);
        free(seen);
        cr_assert_eq(check(".a[*]=1,2", "{\"a\": [1, 2]}", &seen), 1);
        free(seen);
}
