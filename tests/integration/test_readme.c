/* README.md as a newcomer follows it: its ```sh blocks, taken from the
 * README in order and run as written (bash -e), beside what `make run`
 * starts (scripts/run-local.sh: musterd, this machine's agent and the lab
 * host), in a scratch tree that links this build and checkout. The lab host
 * must end installed and upgraded: revision 2 applied by its node agent and
 * 4.16.0's manifests on its disk image. tests/tools/readme-flow drives it,
 * alone in new network, mount and PID namespaces (root only). */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* The text of every block fenced ```sh in md, in order, one after the
 * other; the count in *n. Other blocks (indented, or fenced with another
 * language) are not run. malloc'd. */
static char *sh_blocks(const char *md, int *n) {
        size_t cap = strlen(md) + 1, len = 0;
        char *out = calloc(1, cap);
        cr_assert_not_null(out);
        bool in = false;
        *n = 0;
        for (const char *p = md; *p;) {
                const char *eol = strchr(p, '\n');
                size_t l = eol ? (size_t) (eol - p) : strlen(p);
                if (!in && l == 5 && strncmp(p, "```sh", 5) == 0)
                        in = true, ++*n;
                else if (in && l >= 3 && strncmp(p, "```", 3) == 0)
                        in = false;
                else if (in) {
                        memcpy(out + len, p, l);
                        len += l;
                        out[len++] = '\n';
                }
                p += l + (eol ? 1 : 0);
        }
        cr_assert(!in, "a ```sh block of README.md is not closed");
        out[len] = '\0';
        return out;
}

Test(readme_blocks, only_sh_fences_in_order) {
        int n;
        char *s = sh_blocks("intro\n    indented\n```sh\na 1\nb \\\n  2\n```\n```json\n{}\n```\n"
                            "text\n```sh\nc\n```\n```shell\nd\n```\n",
                            &n);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(s, "a 1\nb \\\n  2\nc\n");
        free(s);
}

static char *dir;

static void down(void) {
        if (dir)
                tu_rm_rf(dir);
        free(dir);
}

TestSuite(readme, .fini = down, .timeout = 540);

static char *read_in(const char *name) {
        char *p = tu_path_in(dir, name);
        char *s = tu_read_file(p, NULL);
        free(p);
        return s ? s : strdup("");
}

/* The directory two levels above a program: BUILD of BUILD/agent/muster-agent
 * and of BUILD/coordinator/musterd. */
static char *build_of(const char *prog) {
        char *copy = strdup(prog);
        cr_assert_not_null(copy);
        char *d = strdup(dirname(dirname(copy)));
        free(copy);
        char *abs = realpath(d, NULL);
        free(d);
        cr_assert_not_null(abs, "%s", prog);
        return abs;
}

/* The scratch tree dir: the build's programs (and with_iso, its discovery
 * ISO template's folder) and the checkout's scripts and fixtures linked,
 * build/run its own. */
static void scratch_tree(bool with_iso) {
        const char *src = MUSTER_SOURCE_DIR, *agent = getenv("MUSTER_AGENT"), *musterd = getenv("MUSTERD");
        cr_assert(agent && *agent && musterd && *musterd, "MUSTER_AGENT and MUSTERD are set by ctest");
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        char *build = build_of(agent), *md_build = build_of(musterd);
        cr_assert_str_eq(build, md_build, "musterd and muster-agent from one build tree");
        char target[4096];
        snprintf(target, sizeof target, "%s/agent", build);
        cr_assert_eq(tu_symlink(dir, "build/agent", target), 0);
        snprintf(target, sizeof target, "%s/coordinator", build);
        cr_assert_eq(tu_symlink(dir, "build/coordinator", target), 0);
        snprintf(target, sizeof target, "%s/scripts", src);
        cr_assert_eq(tu_symlink(dir, "scripts", target), 0);
        snprintf(target, sizeof target, "%s/tests", src);
        cr_assert_eq(tu_symlink(dir, "tests", target), 0);
        if (with_iso) {
                const char *iso = getenv("MUSTER_ISO_TEMPLATE");
                cr_assert(iso && *iso, "MUSTER_ISO_TEMPLATE is set by ctest");
                char *copy = strdup(iso);
                cr_assert_not_null(copy);
                cr_assert_eq(tu_symlink(dir, "build/iso", dirname(copy)), 0);
                free(copy);
        }
        free(build);
        free(md_build);
}

/* tests/tools/TOOL over the scratch tree, alone in new network, mount and
 * PID namespaces; it must exit 0. What run-local.sh printed (caller frees). */
static char *run_alone(const char *tool) {
        char *out = NULL, *err = NULL;
        int st = tu_sh(&out, &err,
                       "unshare --net --mount --pid --fork --kill-child --mount-proc '%s/tests/tools/%s' '%s'",
                       MUSTER_SOURCE_DIR, tool, dir);
        char *rl = read_in("run-local.out");
        cr_assert_eq(st, 0, "%s: exit %d: %s%s\nrun-local.sh:\n%s", tool, st, out ? out : "", err ? err : "", rl);
        free(out);
        free(err);
        return rl;
}

Test(readme, late_binding_flow_installs_and_upgrades_the_lab_host) {
        if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) != 0)
                cr_skip_test("needs root (namespaces, the lab host's loop mount) and unshare");
        const char *src = MUSTER_SOURCE_DIR;
        char readme[4096];
        snprintf(readme, sizeof readme, "%s/README.md", src);
        char *md = tu_read_file(readme, NULL);
        cr_assert_not_null(md, "%s", readme);
        int n;
        char *flow = sh_blocks(md, &n);
        free(md);
        cr_assert_geq(n, 1, "README.md has no ```sh block to run");
        cr_assert_not_null(strstr(flow, "cluster install"), "the README's flow installs a cluster:\n%s", flow);

        scratch_tree(false);
        cr_assert_eq(tu_write_file(dir, "flow.sh", flow), 0);
        free(flow);

        char *rl = run_alone("readme-flow"), *transcript = read_in("flow.out"), *rc = read_in("flow.rc");
        cr_log_info("run-local.sh:\n%s\nthe README's flow:\n%s", rl, transcript);
        cr_assert_str_eq(rc, "0\n", "the README's flow failed (exit %s); its transcript:\n%s", rc, transcript);
        /* Each log of what run-local.sh started is free of sanitizer reports. */
        static const char *const logs[] = { "build/run/musterd.log", "build/run/agent.log", "build/run/lab/agent.log",
                                            "build/run/lab/node.log" };
        for (size_t i = 0; i < sizeof logs / sizeof *logs; i++) {
                char *log = read_in(logs[i]);
                cr_assert_null(tu_sanitizer_report(log), "%s: %s", logs[i], tu_sanitizer_report(log));
                free(log);
        }
        /* run-local.sh showed the pool and why this machine cannot be bound. */
        cr_assert_not_null(strstr(rl, "lab-host-1"), "%s", rl);
        cr_assert_not_null(strstr(rl, "This machine: "), "%s", rl);

        /* The effect: the cluster installed, the host at revision 2, the
         * image holding 4.16.0's manifests and not 4.15.0's. */
        char *rev = read_in("revision"), *man = read_in("manifests"), *cj = read_in("cluster.json");
        cr_assert_str_eq(rev, "2\n", "the lab host's applied_revision; the flow's transcript:\n%s", transcript);
        json_object *c = json_tokener_parse(cj);
        cr_assert_not_null(c, "cluster show c1 -o json: %s", cj);
        cr_assert_str_eq(tu_jstr(c, "status"), "installed");
        cr_assert_str_eq(tu_jstr(c, "release_version"), "4.16.0", "%s", cj);
        json_object_put(c);
        cr_assert_not_null(strstr(man, "0000_50_cluster-image-registry-operator_07-operator.yaml\n"), "%s", man);
        cr_assert_not_null(strstr(man, "0000_50_console-operator_08-downloads-deployment.yaml\n"), "%s", man);
        cr_assert_null(strstr(man, "0000_50_console-operator_07-downloads-deployment.yaml"), "%s", man);
        /* The tokens block: alice's token, revoked, is refused (exit 1, musterd's reason). */
        char *arc = read_in("alice.rc"), *aout = read_in("alice.out");
        cr_assert_str_eq(arc, "1\n", "musterctl with alice's revoked token: %s", aout);
        cr_assert_not_null(strstr(aout, "revoked"), "%s", aout);
        cr_assert_not_null(strstr(transcript, "+ musterctl token revoke "), "the tokens block ran:\n%s", transcript);
        free(arc);
        free(aout);
        free(rev);
        free(man);
        free(cj);
        free(rl);
        free(transcript);
        free(rc);
}

/* make run's second lab host: a QEMU guest booted from the infra-env's
 * discovery ISO (scripts/lab-qemu.sh), named lab-vm-1, that joins the pool
 * validated, as a bare-metal host would. */
Test(readme, make_run_boots_the_qemu_lab_host_from_the_discovery_iso) {
        if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) != 0)
                cr_skip_test("needs root (namespaces) and unshare");
        const char *iso = getenv("MUSTER_ISO_TEMPLATE");
        if (!iso || access(iso, R_OK) != 0 || access("/usr/bin/qemu-system-x86_64", X_OK) != 0)
                cr_skip_test("needs the discovery ISO template (make iso) and qemu-system-x86_64");
        scratch_tree(true);
        char *rl = run_alone("lab-vm-boot"), *vm = read_in("vm.json"), *serial = read_in("build/run/lab-vm/serial.log");
        cr_assert_not_null(strstr(rl, "lab-vm-1"), "run-local.sh names the QEMU lab host:\n%s", rl);
        json_object *h = json_tokener_parse(vm);
        size_t sl = strlen(serial);
        cr_assert_not_null(h, "host show lab-vm-1: %s\nits console's end:\n%s", vm, serial + (sl > 3000 ? sl - 3000 : 0));
        cr_assert_str_eq(tu_jstr(h, "status"), "known-unbound", "%s", vm);
        cr_assert_str_eq(tu_jstr(h, "hostname"), "lab-vm-1", "%s", vm);
        cr_assert_str_eq(tu_jstr(h, "id"), "6d757374-6572-4071-8335-000000000002", "the guest's SMBIOS UUID: %s", vm);
        json_object_put(h);
        free(rl);
        free(vm);
        free(serial);
}
