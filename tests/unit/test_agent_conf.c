/* The agent's config sources (agent/agentconf.h): the boot config area,
 * agent.conf and the kernel command line parsed from bytes, the merge in
 * precedence order (every pair of sources, setting by setting, a token
 * against a token file), bad lines named by file and line, the kernel's
 * quoting, and the reader skipping what is missing. Files only in a
 * temporary directory. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentconf.h"
#include "bootcfg.h"
#include "crypto.h"
#include "testutil.h"

#define IE_BOOT "11111111-1111-4111-8111-111111111111"
#define IE_FILE "22222222-2222-4222-8222-222222222222"
#define IE_CMDLINE "33333333-3333-4333-8333-333333333333"
#define IE_FLAG "44444444-4444-4444-8444-444444444444"
#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

#define dir tu_dir

TestSuite(agentconf, .init = tu_dir_up, .fini = tu_dir_down);

/* A public key PEM (malloc'd). */
static char *key_pem(void) {
        struct crypto_key *k = NULL;
        char *pem = NULL;
        cr_assert_eq(crypto_key_generate(&k), 0);
        cr_assert_eq(crypto_key_public_pem(k, &pem), 0);
        crypto_key_free(k);
        return pem;
}

/* A config area holding c (malloc'd, BOOTCFG_AREA_SIZE bytes). */
static uint8_t *area_of(const struct bootcfg *c) {
        uint8_t *a = malloc(BOOTCFG_AREA_SIZE);
        cr_assert_not_null(a);
        cr_assert_eq(bootcfg_encode(c, a, BOOTCFG_AREA_SIZE), 0);
        return a;
}

static uint8_t *simple_area(const char *url, const char *ie, const char *token) {
        struct bootcfg c = { .coordinator_url = (char *) url, .infra_env_id = (char *) ie, .token = (char *) token };
        return area_of(&c);
}

static void parse_file_ok(struct agentconf *c, const char *text) {
        char err[512] = "";
        int r = agentconf_parse_file(c, text, strlen(text), "agent.conf", err, sizeof err);
        cr_assert_eq(r, 0, "%s: %s", text, err);
}

/* agent.conf text that must be refused with an error starting with `want`. */
static void file_refused(const char *text, const char *want) {
        struct agentconf c = { 0 };
        char err[512] = "";
        int r = agentconf_parse_file(&c, text, strlen(text), "/etc/a.conf", err, sizeof err);
        cr_assert_eq(r, -EINVAL, "accepted: %s", text);
        cr_assert(strncmp(err, want, strlen(want)) == 0, "for %s: \"%s\" does not start with \"%s\"", text, err,
                  want);
        agentconf_free(&c);
}

static void parse_cmdline_ok(struct agentconf *c, const char *text) {
        char err[512] = "";
        int r = agentconf_parse_cmdline(c, text, strlen(text), "/proc/cmdline", err, sizeof err);
        cr_assert_eq(r, 0, "%s: %s", text, err);
}

/* ---- the boot config area ------------------------------------------------ */

Test(agentconf, boot_area_gives_everything) {
        char *pem = key_pem();
        struct bootcfg b = { .coordinator_url = "http://10.0.0.1:8090", .infra_env_id = IE_BOOT,
                             .token = "tok.en-1", .coordinator_key_pem = pem, .ca_pem = CA_PEM };
        uint8_t *a = area_of(&b);
        struct agentconf c = { 0 };
        char err[256] = "";
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/boot/config.img", err, sizeof err), 0, "%s",
                     err);
        cr_assert_str_eq(c.coordinator, "http://10.0.0.1:8090");
        cr_assert_str_eq(c.infra_env_id, IE_BOOT);
        cr_assert_str_eq(c.token, "tok.en-1");
        cr_assert_null(c.token_file);
        cr_assert_str_eq(c.coordinator_key_pem, pem);
        cr_assert_null(c.coordinator_key_file);
        cr_assert_str_eq(c.ca_pem, CA_PEM);
        cr_assert_null(c.ca_file);
        cr_assert_null(c.state_dir);
        for (int s = AGENTCONF_COORDINATOR; s <= AGENTCONF_KEY; s++) {
                cr_assert_eq(c.from[s], AGENTCONF_SRC_BOOT);
                cr_assert_str_eq(c.origin[s], "boot config /boot/config.img");
        }
        cr_assert_eq(c.from[AGENTCONF_STATE_DIR], AGENTCONF_SRC_NONE);
        cr_assert_eq(agentconf_missing(&c, true), 0);
        agentconf_free(&c);
        cr_assert_null(c.coordinator);
        free(a);
        free(pem);
}

Test(agentconf, zero_area_is_unconfigured_and_corrupt_ones_name_the_file) {
        uint8_t *a = calloc(1, BOOTCFG_AREA_SIZE);
        struct agentconf c = { 0 };
        char err[256] = "";
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -ENODATA);
        cr_assert_eq(agentconf_parse_boot(&c, a, 0, "/b.img", err, sizeof err), -ENODATA, "an empty file too");
        cr_assert_null(c.coordinator);

        /* No magic. */
        memcpy(a, "garbage", 7);
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, "/b.img: ", 8) == 0, "%s", err);
        cr_assert(strstr(err, "magic"), "%s", err);

        /* Magic, then not JSON. */
        memset(a, 0, BOOTCFG_AREA_SIZE);
        memcpy(a, BOOTCFG_MAGIC "{\"coord", BOOTCFG_MAGIC_LEN + 7);
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, "/b.img: ", 8) == 0, "%s", err);

        /* Good JSON, then a stray byte far behind it. */
        free(a);
        a = simple_area("http://h:1", IE_BOOT, "t");
        a[BOOTCFG_AREA_SIZE - 1] = 1;
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "/b.img") && strstr(err, "non-zero"), "%s", err);
        /* Past the area's size: not looked at. */
        uint8_t *big = calloc(1, BOOTCFG_AREA_SIZE + 16);
        memcpy(big, a, BOOTCFG_AREA_SIZE - 1);
        big[BOOTCFG_AREA_SIZE + 3] = 0xff;
        cr_assert_eq(agentconf_parse_boot(&c, big, BOOTCFG_AREA_SIZE + 16, "/b.img", err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.coordinator, "http://h:1");
        agentconf_free(&c);
        free(big);
        free(a);
        cr_assert_null(c.coordinator);
}

Test(agentconf, area_the_agent_could_not_use_is_corrupt) {
        struct agentconf c = { 0 };
        char err[256];
        /* A token with a space: bootcfg lets it through, a header could not carry it. */
        uint8_t *a = simple_area("http://h:1", IE_BOOT, "to ken");
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "/b.img") && strstr(err, "token"), "%s", err);
        cr_assert_null(strstr(err, "to ken"), "the token is not repeated: %s", err);
        free(a);

        struct bootcfg b = { .coordinator_url = "http://h:1", .infra_env_id = IE_BOOT, .token = "t",
                             .coordinator_key_pem = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n" };
        a = area_of(&b);
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "/b.img") && strstr(err, "coordinator_key_pem"), "%s", err);
        free(a);

        b.coordinator_key_pem = NULL;
        b.ca_pem = "not a certificate";
        a = area_of(&b);
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "ca_pem"), "%s", err);
        free(a);

        b.ca_pem = NULL;
        b.coordinator_url = "http://h:1/a b";
        a = area_of(&b);
        cr_assert_eq(agentconf_parse_boot(&c, a, BOOTCFG_AREA_SIZE, "/b.img", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "coordinator_url"), "%s", err);
        free(a);
        cr_assert_null(c.coordinator, "nothing set from a corrupt area");
        agentconf_free(&c);
}

/* ---- agent.conf ----------------------------------------------------------------- */

Test(agentconf, file_every_key) {
        struct agentconf c = { 0 };
        parse_file_ok(&c, "# the agent\n"
                          "coordinator = https://muster.example.com:8443\n"
                          "\n"
                          "infra_env = " IE_FILE "\n"
                          "token_file = /etc/muster/token\n"
                          "ca_file = /etc/muster/ca.pem\n"
                          "coordinator_key_file = /etc/muster/key.pem\n"
                          "state_dir = /var/lib/x\n"
                          "install_target = /dev/vdb\n"
                          "min_disk_bytes = 1000000\n"
                          "http_proxy = http://proxy.lab:3128\n"
                          "https_proxy = http://user:pw@proxy.lab:3129\n"
                          "no_proxy = .lab,10.0.0.0/8\n"
                          "reclaim_wipe = /dev/disk/by-id/wwn-0x5000\n");
        cr_assert_str_eq(c.reclaim_wipe, "/dev/disk/by-id/wwn-0x5000");
        cr_assert_str_eq(c.http_proxy, "http://proxy.lab:3128");
        cr_assert_str_eq(c.https_proxy, "http://user:pw@proxy.lab:3129");
        cr_assert_str_eq(c.no_proxy, ".lab,10.0.0.0/8");
        char line[2048];
        agentconf_describe(&c, line, sizeof line);
        cr_assert(strstr(line, "; proxy http http://proxy.lab:3128 (agent.conf:11) https http://***@proxy.lab:3129 "
                               "(agent.conf:12), none for .lab,10.0.0.0/8 (agent.conf:13)"),
                  "%s", line);
        cr_assert_null(strstr(line, "pw@"), "no proxy password in the log: %s", line);
        cr_assert_str_eq(c.coordinator, "https://muster.example.com:8443");
        cr_assert_str_eq(c.infra_env_id, IE_FILE);
        cr_assert_str_eq(c.token_file, "/etc/muster/token");
        cr_assert_null(c.token);
        cr_assert_str_eq(c.ca_file, "/etc/muster/ca.pem");
        cr_assert_str_eq(c.coordinator_key_file, "/etc/muster/key.pem");
        cr_assert_str_eq(c.state_dir, "/var/lib/x");
        cr_assert_str_eq(c.install_target, "/dev/vdb");
        cr_assert_eq(c.min_disk_bytes, 1000000);
        for (int s = 0; s < _AGENTCONF_SETTING_MAX; s++)
                cr_assert_eq(c.from[s], AGENTCONF_SRC_FILE, "%s", agentconf_setting_to_string(s));
        cr_assert_str_eq(c.origin[AGENTCONF_COORDINATOR], "agent.conf:2");
        cr_assert_str_eq(c.origin[AGENTCONF_INFRA_ENV], "agent.conf:4");
        cr_assert_str_eq(c.origin[AGENTCONF_MIN_DISK], "agent.conf:10");
        agentconf_free(&c);

        parse_file_ok(&c, "token = abc.def\n");
        cr_assert_str_eq(c.token, "abc.def");
        cr_assert_null(c.token_file);
        agentconf_free(&c);
}

Test(agentconf, file_quotes_comments_blanks_and_crlf) {
        struct agentconf c = { 0 };
        parse_file_ok(&c, "   # indented comment\r\n"
                          "\t\r\n"
                          "state_dir = \"/var/lib/a # b\"   # a comment after the value\r\n"
                          "install_target=/srv/t#not-a-comment\r\n"
                          "ca_file=\"/etc/ca dir/ca.pem\"\n"
                          "token = t0k");
        cr_assert_str_eq(c.state_dir, "/var/lib/a # b");
        cr_assert_str_eq(c.install_target, "/srv/t#not-a-comment");
        cr_assert_str_eq(c.ca_file, "/etc/ca dir/ca.pem");
        cr_assert_str_eq(c.token, "t0k", "a last line without a newline counts");
        agentconf_free(&c);
        parse_file_ok(&c, "");
        parse_file_ok(&c, "\n\n# nothing\n");
        for (int s = 0; s < _AGENTCONF_SETTING_MAX; s++)
                cr_assert_eq(c.from[s], AGENTCONF_SRC_NONE);
        agentconf_free(&c);
}

Test(agentconf, file_bad_lines_name_file_and_line) {
        file_refused("coordinator = http://h:1\nfrobnicate = 1\n", "/etc/a.conf:2: unknown key \"frobnicate\"");
        file_refused("# c\n\ncoordinator = http://h:1\ncoordinator = http://h:2\n",
                     "/etc/a.conf:4: coordinator given again (first on line 3)");
        file_refused("token = abc\ntoken_file = /t\n", "/etc/a.conf:2: token_file and token (line 1) both given");
        file_refused("token_file = /t\ntoken = abc\n", "/etc/a.conf:2: token and token_file (line 1) both given");
        file_refused("coordinator = ftp://h\n", "/etc/a.conf:1: coordinator: \"ftp://h\" is not an http");
        file_refused("https_proxy = http://proxy:3128/x\n", "/etc/a.conf:1: https_proxy: \"http://proxy:3128/x\" is not a proxy URL");
        file_refused("no_proxy = a;b\n", "/etc/a.conf:1: no_proxy: \"a;b\" is not a comma-separated list");
        file_refused("coordinator = http://\n", "/etc/a.conf:1: coordinator:");
        file_refused("\ninfra_env = nope\n", "/etc/a.conf:2: infra_env: \"nope\" is not a UUID");
        file_refused("token = \"a b\"\n", "/etc/a.conf:1: token: the token is empty or not a token");
        file_refused("token_file = token\n", "/etc/a.conf:1: token_file: \"token\" is not an absolute path");
        file_refused("state_dir = rel/dir\n", "/etc/a.conf:1: state_dir:");
        file_refused("ca_file = \"\"\n", "/etc/a.conf:1: ca_file: empty path");
        file_refused("min_disk_bytes = lots\n", "/etc/a.conf:1: min_disk_bytes: needs a positive number");
        file_refused("min_disk_bytes = -5\n", "/etc/a.conf:1: min_disk_bytes:");
        file_refused("min_disk_bytes = 5x\n", "/etc/a.conf:1: min_disk_bytes:");
        file_refused("coordinator http://h:1\n", "/etc/a.conf:1: expected \"key = value\"");
        file_refused(" = http://h:1\n", "/etc/a.conf:1: missing key");
        file_refused("coordinator =\n", "/etc/a.conf:1: missing value for coordinator");
        file_refused("coordinator = # only a comment\n", "/etc/a.conf:1: missing value for coordinator");
        file_refused("state_dir = \"/a\n", "/etc/a.conf:1: unbalanced quotes");
        file_refused("state_dir = \"/a\"b\"\n", "/etc/a.conf:1: unbalanced quotes");
        file_refused("COORDINATOR = http://h:1\n", "/etc/a.conf:1: unknown key");

        /* A secret token is never echoed in an error. */
        struct agentconf c = { 0 };
        char err[512];
        const char *t = "token = sec\x01ret\n";
        cr_assert_eq(agentconf_parse_file(&c, t, strlen(t), "f", err, sizeof err), -EINVAL);
        cr_assert_null(strstr(err, "sec"), "%s", err);

        /* A NUL byte: named by its line; an oversized file refused whole. */
        const char nul[] = "coordinator = http://h:1\nstate_dir = /a\0b\n";
        cr_assert_eq(agentconf_parse_file(&c, nul, sizeof nul - 1, "/f", err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "/f:2: NUL byte");
        char *big = malloc(AGENTCONF_TEXT_MAX + 2);
        memset(big, '#', AGENTCONF_TEXT_MAX + 1);
        big[AGENTCONF_TEXT_MAX + 1] = '\0';
        cr_assert_eq(agentconf_parse_file(&c, big, AGENTCONF_TEXT_MAX, "/f", err, sizeof err), 0, "%s", err);
        cr_assert_eq(agentconf_parse_file(&c, big, AGENTCONF_TEXT_MAX + 1, "/f", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "/f: longer than"), "%s", err);
        free(big);
        agentconf_free(&c);
}

/* ---- the kernel command line --------------------------------------------------- */

Test(agentconf, cmdline_words) {
        struct agentconf c = { 0 };
        parse_cmdline_ok(&c, "BOOT_IMAGE=/vmlinuz root=live:CDLABEL=MUSTER_DISCOVERY quiet "
                             "muster.coordinator=http://10.1.1.1:8090 muster.infra_env=" IE_CMDLINE
                             " muster.token=abc.def muster.ca_file=/ca.pem muster.coordinator_key_file=/k.pem "
                             "muster.state_dir=/var/lib/s muster.unknown=1 musterx.coordinator=http://no "
                             "muster.install_target=/dev/sda muster.token_file=/t muster.min_disk_bytes=5\n");
        cr_assert_str_eq(c.coordinator, "http://10.1.1.1:8090");
        cr_assert_str_eq(c.infra_env_id, IE_CMDLINE);
        cr_assert_str_eq(c.token, "abc.def");
        cr_assert_str_eq(c.ca_file, "/ca.pem");
        cr_assert_str_eq(c.coordinator_key_file, "/k.pem");
        cr_assert_str_eq(c.state_dir, "/var/lib/s");
        cr_assert_null(c.install_target, "not a command-line word");
        cr_assert_null(c.token_file, "not a command-line word");
        cr_assert_eq(c.min_disk_bytes, 0, "not a command-line word");
        cr_assert_eq(c.from[AGENTCONF_TOKEN], AGENTCONF_SRC_CMDLINE);
        cr_assert_str_eq(c.origin[AGENTCONF_TOKEN], "kernel command line /proc/cmdline");
        agentconf_free(&c);

        parse_cmdline_ok(&c, "");
        parse_cmdline_ok(&c, "   \n");
        parse_cmdline_ok(&c, "quiet splash");
        cr_assert_null(c.coordinator);
        /* The last of a repeated word wins, as for the kernel's own. */
        parse_cmdline_ok(&c, "muster.coordinator=http://a:1 muster.coordinator=http://b:2");
        cr_assert_str_eq(c.coordinator, "http://b:2");
        /* After a lone "--" the words are init's. */
        parse_cmdline_ok(&c, "quiet -- muster.coordinator=http://c:3");
        cr_assert_str_eq(c.coordinator, "http://b:2");
        parse_cmdline_ok(&c, "a=-- muster.coordinator=http://d:4");
        cr_assert_str_eq(c.coordinator, "http://d:4", "only a lone -- ends the kernel's words");
        agentconf_free(&c);
}

Test(agentconf, cmdline_quotes_as_the_kernel_reads_them) {
        struct agentconf c = { 0 };
        parse_cmdline_ok(&c, "quiet muster.state_dir=\"/var/lib/a b\" muster.token=x");
        cr_assert_str_eq(c.state_dir, "/var/lib/a b");
        cr_assert_str_eq(c.token, "x");
        parse_cmdline_ok(&c, "\"muster.state_dir=/srv/c d\" quiet");
        cr_assert_str_eq(c.state_dir, "/srv/c d");
        parse_cmdline_ok(&c, "muster.ca_file=/x\"y z\"w");
        cr_assert_str_eq(c.ca_file, "/x\"y z\"w", "quotes inside a value stay; the blank inside them does not split");
        parse_cmdline_ok(&c, "\"quiet splash\" muster.coordinator=\"http://q:1\"");
        cr_assert_str_eq(c.coordinator, "http://q:1");
        parse_cmdline_ok(&c, "muster.state_dir=\"/open quote");
        cr_assert_str_eq(c.state_dir, "/open quote", "an unclosed quote runs to the end");
        agentconf_free(&c);
}

Test(agentconf, cmdline_bad_values) {
        static const struct {
                const char *text, *want;
        } bad[] = {
                { "muster.coordinator=ftp://x", "/proc/cmdline: muster.coordinator: \"ftp://x\" is not an http" },
                { "quiet muster.infra_env=nope", "/proc/cmdline: muster.infra_env: \"nope\" is not a UUID" },
                { "muster.token=\"a b\"", "/proc/cmdline: muster.token: the token is empty or not a token" },
                { "muster.token=", "/proc/cmdline: muster.token: the token is empty" },
                { "muster.state_dir=relative", "/proc/cmdline: muster.state_dir: \"relative\" is not an absolute" },
                { "muster.coordinator", "/proc/cmdline: muster.coordinator: needs a value" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct agentconf c = { 0 };
                char err[512] = "";
                cr_assert_eq(agentconf_parse_cmdline(&c, bad[i].text, strlen(bad[i].text), "/proc/cmdline", err,
                                                     sizeof err), -EINVAL, "accepted %s", bad[i].text);
                cr_assert(strncmp(err, bad[i].want, strlen(bad[i].want)) == 0, "%s: %s", bad[i].text, err);
                agentconf_free(&c);
        }
        struct agentconf c = { 0 };
        char err[256];
        cr_assert_eq(agentconf_parse_cmdline(&c, "a\0b", 3, "/c", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "NUL"), "%s", err);
}

/* ---- precedence --------------------------------------------------------------- */

/* Sources by bit: 1 boot area, 2 agent.conf, 4 kernel command line, 8 flags.
 * Each names a coordinator and an infra-env of its own; load them. */
static int load_sources(unsigned mask, struct agentconf *out, char *err, size_t errlen) {
        char boot[4200], conf[4200], cmdline[4200];
        snprintf(boot, sizeof boot, "%s/config.img", dir);
        snprintf(conf, sizeof conf, "%s/agent.conf", dir);
        snprintf(cmdline, sizeof cmdline, "%s/cmdline", dir);
        unlink(boot);
        unlink(conf);
        unlink(cmdline);
        if (mask & 1) {
                uint8_t *a = simple_area("http://boot:1", IE_BOOT, "boot-token");
                cr_assert_eq(tu_write_bin(dir, "config.img", a, BOOTCFG_AREA_SIZE), 0);
                free(a);
        }
        if (mask & 2)
                cr_assert_eq(tu_write_file(dir, "agent.conf", "coordinator = http://file:2\ninfra_env = " IE_FILE
                                                              "\ntoken = file-token\n"), 0);
        if (mask & 4)
                cr_assert_eq(tu_write_file(dir, "cmdline", "quiet muster.coordinator=http://cmdline:3 muster.infra_env="
                                                           IE_CMDLINE " muster.token=cmdline-token\n"), 0);
        struct agentconf flags = { 0 };
        if (mask & 8) {
                cr_assert_eq(agentconf_set(&flags, "coordinator", "http://flag:4", AGENTCONF_SRC_FLAG, "--coordinator",
                                           NULL, 0), 0);
                cr_assert_eq(agentconf_set(&flags, "infra_env", IE_FLAG, AGENTCONF_SRC_FLAG, "--infra-env", NULL, 0),
                             0);
                cr_assert_eq(agentconf_set(&flags, "token_file", "flag-token-file", AGENTCONF_SRC_FLAG, "--token-file",
                                           NULL, 0), 0);
        }
        struct agentconf_paths p = { boot, conf, cmdline, "/nonexistent/initrd-config.img" };
        int r = agentconf_load(out, &p, &flags, err, errlen);
        agentconf_free(&flags);
        return r;
}

Test(agentconf, every_pair_of_sources_the_later_wins) {
        static const char *const url[] = { "http://boot:1", "http://file:2", "http://cmdline:3", "http://flag:4" };
        static const char *const ie[] = { IE_BOOT, IE_FILE, IE_CMDLINE, IE_FLAG };
        static const enum agentconf_source src[] = { AGENTCONF_SRC_BOOT, AGENTCONF_SRC_FILE, AGENTCONF_SRC_CMDLINE,
                                                     AGENTCONF_SRC_FLAG };
        /* Every non-empty set of sources, so every pair among them. */
        for (unsigned mask = 1; mask < 16; mask++) {
                struct agentconf c = { 0 };
                char err[512] = "";
                cr_assert_eq(load_sources(mask, &c, err, sizeof err), 0, "%s", err);
                int top = 3;
                while (!(mask & (1u << top)))
                        top--;
                cr_assert_str_eq(c.coordinator, url[top], "sources %#x", mask);
                cr_assert_str_eq(c.infra_env_id, ie[top], "sources %#x", mask);
                cr_assert_eq(c.from[AGENTCONF_COORDINATOR], src[top]);
                cr_assert_eq(c.from[AGENTCONF_TOKEN], src[top]);
                if (top == 3) {
                        cr_assert_str_eq(c.token_file, "flag-token-file", "sources %#x", mask);
                        cr_assert_null(c.token, "a token file from a flag replaces an inline token");
                        cr_assert_str_eq(c.origin[AGENTCONF_TOKEN], "--token-file");
                } else {
                        static const char *const tok[] = { "boot-token", "file-token", "cmdline-token" };
                        cr_assert_str_eq(c.token, tok[top], "sources %#x", mask);
                        cr_assert_null(c.token_file);
                }
                cr_assert_eq(agentconf_missing(&c, false), 0);
                agentconf_free(&c);
        }
}

Test(agentconf, nothing_there_is_nothing_set) {
        struct agentconf c = { 0 };
        char err[256] = "";
        cr_assert_eq(load_sources(0, &c, err, sizeof err), 0, "missing files are fine: %s", err);
        for (int s = 0; s < _AGENTCONF_SETTING_MAX; s++)
                cr_assert_eq(c.from[s], AGENTCONF_SRC_NONE);
        cr_assert_eq(agentconf_missing(&c, false),
                     (1u << AGENTCONF_COORDINATOR) | (1u << AGENTCONF_INFRA_ENV) | (1u << AGENTCONF_TOKEN));
        cr_assert_eq(agentconf_missing(&c, true), (1u << AGENTCONF_COORDINATOR) | (1u << AGENTCONF_INFRA_ENV) |
                                                           (1u << AGENTCONF_TOKEN) | (1u << AGENTCONF_KEY));
        struct agentconf_paths p = { "/nonexistent/config.img", "/nonexistent/agent.conf", "/nonexistent/cmdline",
                                     "/nonexistent/initrd-config.img" };
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), 0, "%s", err);
        cr_assert_null(c.coordinator);
        /* A zero area (the template as built) is no error either. */
        uint8_t *zero = calloc(1, BOOTCFG_AREA_SIZE);
        cr_assert_eq(tu_write_bin(dir, "zero.img", zero, BOOTCFG_AREA_SIZE), 0);
        free(zero);
        char path[4200];
        snprintf(path, sizeof path, "%s/zero.img", dir);
        p.boot_config = path;
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), 0, "%s", err);
        cr_assert_null(c.coordinator);
        agentconf_free(&c);
}

Test(agentconf, field_by_field) {
        char *pem = key_pem();
        struct bootcfg b = { .coordinator_url = "http://boot:1", .infra_env_id = IE_BOOT, .token = "boot-token",
                             .coordinator_key_pem = pem, .ca_pem = CA_PEM };
        uint8_t *a = area_of(&b);
        struct agentconf c = { 0 }, part = { 0 };
        char err[256] = "";

        cr_assert_eq(agentconf_parse_boot(&part, a, BOOTCFG_AREA_SIZE, "/b", err, sizeof err), 0, "%s", err);
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);
        /* agent.conf: only the coordinator and a CA file. */
        parse_file_ok(&part, "coordinator = http://file:2\nca_file = /etc/ca.pem\n");
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);
        /* The kernel: only the state dir and a key file. */
        parse_cmdline_ok(&part, "muster.state_dir=/s muster.coordinator_key_file=/k.pem");
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);
        /* Flags: only the install target. */
        cr_assert_eq(agentconf_set(&part, "install_target", "rel/target", AGENTCONF_SRC_FLAG, "--install-target", err,
                                   sizeof err), 0, "a flag may name a relative path: %s", err);
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);

        cr_assert_str_eq(c.coordinator, "http://file:2");
        cr_assert_str_eq(c.origin[AGENTCONF_COORDINATOR], "agent.conf:1");
        cr_assert_str_eq(c.infra_env_id, IE_BOOT);
        cr_assert_str_eq(c.token, "boot-token");
        cr_assert_null(c.ca_pem, "a CA file replaces the area's PEM");
        cr_assert_str_eq(c.ca_file, "/etc/ca.pem");
        cr_assert_null(c.coordinator_key_pem, "a key file replaces the area's PEM");
        cr_assert_str_eq(c.coordinator_key_file, "/k.pem");
        cr_assert_eq(c.from[AGENTCONF_KEY], AGENTCONF_SRC_CMDLINE);
        cr_assert_str_eq(c.state_dir, "/s");
        cr_assert_str_eq(c.install_target, "rel/target");
        cr_assert_eq(c.from[AGENTCONF_INSTALL_TARGET], AGENTCONF_SRC_FLAG);
        cr_assert_eq(c.from[AGENTCONF_MIN_DISK], AGENTCONF_SRC_NONE);

        /* And what is said about it: where each came from, never the token. */
        char line[2048];
        agentconf_describe(&c, line, sizeof line);
        cr_assert(strstr(line, "coordinator http://file:2 (agent.conf:1)"), "%s", line);
        cr_assert(strstr(line, "infra-env " IE_BOOT " (boot config /b)"), "%s", line);
        cr_assert(strstr(line, "token inline (boot config /b)"), "%s", line);
        cr_assert(strstr(line, "coordinator key /k.pem (kernel command line /proc/cmdline)"), "%s", line);
        cr_assert(strstr(line, "CA /etc/ca.pem (agent.conf:2)"), "%s", line);
        cr_assert_null(strstr(line, "boot-token"), "%s", line);
        char tiny[16];
        agentconf_describe(&c, tiny, sizeof tiny);
        cr_assert_eq(strlen(tiny), sizeof tiny - 1, "cut to fit");
        agentconf_free(&c);
        free(a);
        free(pem);
}

Test(agentconf, token_and_token_file_replace_each_other) {
        struct agentconf c = { 0 }, part = { 0 };
        /* Inline (agent.conf) over a file (flag stands in for a lower source here). */
        cr_assert_eq(agentconf_set(&part, "token_file", "/t", AGENTCONF_SRC_FILE, "a:1", NULL, 0), 0);
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);
        cr_assert_str_eq(c.token_file, "/t");
        parse_cmdline_ok(&part, "muster.token=inline");
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);
        cr_assert_str_eq(c.token, "inline");
        cr_assert_null(c.token_file, "the later inline token replaces the file");
        cr_assert_eq(agentconf_missing(&c, false) & (1u << AGENTCONF_TOKEN), 0);
        /* And a later file replaces the inline token. */
        cr_assert_eq(agentconf_set(&part, "token_file", "/u", AGENTCONF_SRC_FLAG, "--token-file", NULL, 0), 0);
        cr_assert_eq(agentconf_merge(&c, &part), 0);
        agentconf_free(&part);
        cr_assert_null(c.token);
        cr_assert_str_eq(c.token_file, "/u");
        char line[1024];
        agentconf_describe(&c, line, sizeof line);
        cr_assert(strstr(line, "token from /u (--token-file)"), "%s", line);
        /* Within one source a later setter replaces too (repeated flags). */
        cr_assert_eq(agentconf_set(&c, "token", "again", AGENTCONF_SRC_FLAG, "x", NULL, 0), 0);
        cr_assert_null(c.token_file);
        cr_assert_str_eq(c.token, "again");
        agentconf_free(&c);
}

Test(agentconf, set_checks_flags_too) {
        struct agentconf c = { 0 };
        char err[256];
        cr_assert_eq(agentconf_set(&c, "coordinator", "ftp://x", AGENTCONF_SRC_FLAG, "--coordinator", err, sizeof err),
                     -EINVAL);
        cr_assert(strstr(err, "ftp://x"), "%s", err);
        cr_assert_eq(agentconf_set(&c, "infra_env", "x", AGENTCONF_SRC_FLAG, "--infra-env", err, sizeof err), -EINVAL);
        cr_assert_eq(agentconf_set(&c, "min_disk_bytes", "0", AGENTCONF_SRC_FLAG, "--min-disk-bytes", err, sizeof err),
                     -EINVAL);
        cr_assert_eq(agentconf_set(&c, "nope", "x", AGENTCONF_SRC_FLAG, "--nope", err, sizeof err), -EINVAL);
        cr_assert_eq(agentconf_set(&c, "state_dir", "st\tate", AGENTCONF_SRC_FLAG, "--state-dir", err, sizeof err),
                     -EINVAL);
        char *longpath = malloc(AGENTCONF_PATH_MAX + 2);
        memset(longpath, 'a', AGENTCONF_PATH_MAX + 1);
        longpath[0] = '/';
        longpath[AGENTCONF_PATH_MAX + 1] = '\0';
        cr_assert_eq(agentconf_set(&c, "state_dir", longpath, AGENTCONF_SRC_FLAG, "--state-dir", err, sizeof err),
                     -EINVAL);
        longpath[AGENTCONF_PATH_MAX] = '\0';
        cr_assert_eq(agentconf_set(&c, "state_dir", longpath, AGENTCONF_SRC_FLAG, "--state-dir", err, sizeof err), 0);
        free(longpath);
        cr_assert_eq(agentconf_set(&c, "min_disk_bytes", "20000000000", AGENTCONF_SRC_FLAG, "--min-disk-bytes", err,
                                   sizeof err), 0);
        cr_assert_eq(c.min_disk_bytes, 20000000000LL);
        cr_assert_null(c.coordinator, "a refused value sets nothing");
        agentconf_free(&c);
}

/* A PXE boot's config in the initramfs (musterd's cpio appends it with one
 * of the area's zero bytes after the JSON) is the boot config: the boot medium's is not
 * read then, not even a corrupt one; without it the medium's is. The other
 * sources still override it. */
Test(agentconf, the_initramfs_config_of_a_pxe_boot) {
        char boot[4200], initrd[4200], cmdline[4200], err[512] = "";
        snprintf(boot, sizeof boot, "%s/config.img", dir);
        snprintf(initrd, sizeof initrd, "%s/initrd-config.img", dir);
        snprintf(cmdline, sizeof cmdline, "%s/cmdline", dir);
        struct agentconf_paths p = { boot, "/nonexistent/agent.conf", "/nonexistent/cmdline", initrd };
        struct agentconf c = { 0 };

        uint8_t *a = simple_area("http://pxe:1", IE_BOOT, "pxe-token");
        size_t n = BOOTCFG_AREA_SIZE;
        while (n > 0 && a[n - 1] == 0)
                n--;
        cr_assert_eq(tu_write_bin(dir, "initrd-config.img", a, n + 1), 0);
        free(a);
        cr_assert_eq(tu_write_file(dir, "config.img", "MUSTERCFG1\n{not json"), 0);
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), 0, "the medium is not read: %s", err);
        cr_assert_str_eq(c.coordinator, "http://pxe:1");
        cr_assert_str_eq(c.token, "pxe-token");
        cr_assert_eq(c.from[AGENTCONF_TOKEN], AGENTCONF_SRC_BOOT);
        cr_assert(strstr(c.origin[AGENTCONF_COORDINATOR], initrd), "%s", c.origin[AGENTCONF_COORDINATOR]);

        cr_assert_eq(tu_write_file(dir, "cmdline", "muster.coordinator=http://cmdline:3\n"), 0);
        p.cmdline = cmdline;
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.coordinator, "http://cmdline:3", "the kernel command line still wins");
        cr_assert_str_eq(c.token, "pxe-token");

        /* No initramfs config: the medium's, and its error, as before. */
        unlink(initrd);
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, boot, strlen(boot)) == 0, "%s", err);
        /* A corrupt initramfs config is an error naming it. */
        cr_assert_eq(tu_write_file(dir, "initrd-config.img", "MUSTERCFG1\n{\"coordinator_url\": 7}"), 0);
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, initrd, strlen(initrd)) == 0, "%s", err);
        agentconf_free(&c);
}

Test(agentconf, load_names_the_bad_file) {
        char boot[4200], conf[4200], err[512];
        struct agentconf c = { 0 };
        snprintf(boot, sizeof boot, "%s/config.img", dir);
        snprintf(conf, sizeof conf, "%s/agent.conf", dir);
        struct agentconf_paths p = { boot, conf, "/nonexistent", "/nonexistent/initrd-config.img" };

        cr_assert_eq(tu_write_file(dir, "config.img", "MUSTERCFG1\n{not json"), 0);
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, boot, strlen(boot)) == 0, "%s", err);

        uint8_t *a = simple_area("http://boot:1", IE_BOOT, "t");
        cr_assert_eq(tu_write_bin(dir, "config.img", a, BOOTCFG_AREA_SIZE), 0);
        free(a);
        cr_assert_eq(tu_write_file(dir, "agent.conf", "coordinator = http://a:1\n\nbad line\n"), 0);
        cr_assert_eq(agentconf_load(&c, &p, NULL, err, sizeof err), -EINVAL);
        char want[4300];
        snprintf(want, sizeof want, "%s:3: ", conf);
        cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);
        cr_assert_null(c.coordinator, "nothing is kept after an error");

        /* A directory where the area should be: a read error, named. */
        p.boot_config = dir;
        p.agent_conf = "/nonexistent";
        cr_assert_lt(agentconf_load(&c, &p, NULL, err, sizeof err), 0);
        cr_assert(strstr(err, dir) && strstr(err, "boot config"), "%s", err);
        agentconf_free(&c);
}
