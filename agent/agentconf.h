/* The agent's settings and where each came from (DESIGN §11). Four sources,
 * lowest precedence first: the boot config (common/bootcfg.h: the boot
 * medium's config area, or the one a PXE boot's initramfs carries),
 * /etc/muster/agent.conf, the kernel command line, the command line's flags;
 * each later one overrides the ones before setting by setting. The parsers
 * take bytes and texts, so they are pure; agentconf_load() reads the files. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENTCONF_DEFAULT_BOOT_CONFIG "/run/muster/boot/muster/config.img"
/* A PXE boot's: musterd appends it to the initramfs (the live root). */
#define AGENTCONF_DEFAULT_INITRD_CONFIG "/muster/config.img"
#define AGENTCONF_DEFAULT_AGENT_CONF "/etc/muster/agent.conf"
#define AGENTCONF_DEFAULT_CMDLINE "/proc/cmdline"
#define AGENTCONF_DEFAULT_STATE_DIR "/var/lib/muster-agent"
#define AGENTCONF_TEXT_MAX 65536  /* bytes of agent.conf, or of a kernel command line */
#define AGENTCONF_PATH_MAX 4095   /* bytes of a path setting */

enum agentconf_source {
        AGENTCONF_SRC_NONE,    /* not set */
        AGENTCONF_SRC_BOOT,    /* the boot medium's config area */
        AGENTCONF_SRC_FILE,    /* agent.conf */
        AGENTCONF_SRC_CMDLINE, /* the kernel command line */
        AGENTCONF_SRC_FLAG,    /* a command-line flag */
        _AGENTCONF_SRC_MAX,
};

/* The settings; one source sets one as a whole (a token given inline
 * replaces a token file from a lower source, and the other way round). */
enum agentconf_setting {
        AGENTCONF_COORDINATOR,
        AGENTCONF_INFRA_ENV,
        AGENTCONF_TOKEN,          /* token or token_file */
        AGENTCONF_CA,             /* ca_pem or ca_file */
        AGENTCONF_KEY,            /* coordinator_key_pem or coordinator_key_file */
        AGENTCONF_STATE_DIR,
        AGENTCONF_INSTALL_TARGET,
        AGENTCONF_MIN_DISK,
        AGENTCONF_HTTP_PROXY,     /* the infra-env's proxies, for every fetch */
        AGENTCONF_HTTPS_PROXY,
        AGENTCONF_NO_PROXY,
        AGENTCONF_RECLAIM_WIPE,   /* muster.reclaim_wipe=DISK: a reclaim's wipe, before registering */
        _AGENTCONF_SETTING_MAX,
};

/* Zero-initialise; free with agentconf_free(). Of each pair at most one is
 * set. */
struct agentconf {
        char *coordinator;          /* http(s)://HOST[:PORT] */
        char *infra_env_id;         /* a UUID */
        char *token;                /* the agent token inline, or */
        char *token_file;           /* a file holding it */
        char *ca_pem;               /* CA certificates as PEM text (boot config), or */
        char *ca_file;              /* a CA bundle file */
        char *coordinator_key_pem;  /* the coordinator's public key as PEM text (boot config), or */
        char *coordinator_key_file; /* a PEM file */
        char *state_dir;
        char *install_target;
        int64_t min_disk_bytes;     /* 0: not set */
        char *http_proxy;           /* for http:// URLs */
        char *https_proxy;          /* for https:// URLs */
        char *no_proxy;             /* hosts reached without a proxy */
        char *reclaim_wipe;         /* the installation disk to wipe first (run only) */
        enum agentconf_source from[_AGENTCONF_SETTING_MAX];
        /* Where each came from: "boot config FILE", "FILE:LINE" (agent.conf),
         * "kernel command line FILE", "--flag"; NULL when not set. */
        char *origin[_AGENTCONF_SETTING_MAX];
};

void agentconf_free(struct agentconf *c);

/* "coordinator", "infra-env", "token", ... */
const char *agentconf_setting_to_string(enum agentconf_setting s);

/* Set `key` — an agent.conf key: coordinator, infra_env, token, token_file,
 * ca_file, coordinator_key_file, state_dir, install_target, min_disk_bytes —
 * to `value` as source `src` gives it, `origin` naming where (copied). The
 * value is checked: an http(s) URL, a UUID, a token (client_check_token), a
 * path without control characters (absolute unless from a flag), a positive
 * number of bytes. It replaces whatever the setting held. 0; -EINVAL
 * (unknown key or bad value: the reason in err); -ENOMEM. */
int agentconf_set(struct agentconf *c, const char *key, const char *value, enum agentconf_source src,
                  const char *origin, char *err, size_t errlen);

/* The boot medium's config area (the first BOOTCFG_AREA_SIZE bytes of
 * `area` are looked at) into c, `name` (the file) in origins and errors.
 * 0; -ENODATA when it is all zeros (an unconfigured ISO: nothing set);
 * -EINVAL when it is corrupt — bootcfg_decode refuses it, or its token or
 * key PEM is unusable — with "NAME: reason" in err; -ENOMEM. */
int agentconf_parse_boot(struct agentconf *c, const uint8_t *area, size_t size, const char *name, char *err,
                         size_t errlen);

/* agent.conf's text: "key = value" lines (the value may be in double
 * quotes), '#' comments (at the start or after a blank, outside quotes),
 * blank lines. 0; -EINVAL with "NAME:LINE: reason" in err for an unknown
 * key, a repeated key (token and token_file count as one), a bad value, a
 * line that is not "key = value", a NUL byte or a text over
 * AGENTCONF_TEXT_MAX; -ENOMEM. */
int agentconf_parse_file(struct agentconf *c, const char *text, size_t len, const char *name, char *err,
                         size_t errlen);

/* A kernel command line: the words muster.coordinator=, muster.infra_env=,
 * muster.token=, muster.ca_file=, muster.coordinator_key_file= and
 * muster.state_dir=; other words are ignored, and so is everything after a
 * lone "--" (the init's arguments). Double quotes as the kernel reads them:
 * "muster.token=a b" and muster.token="a b" are one word, the quotes
 * dropped. A repeated word: the last wins. 0; -EINVAL with "NAME:
 * muster.KEY: reason" in err for a bad value, a NUL byte or a text over
 * AGENTCONF_TEXT_MAX; -ENOMEM. */
int agentconf_parse_cmdline(struct agentconf *c, const char *text, size_t len, const char *name, char *err,
                            size_t errlen);

/* Lay src over dst: every setting src has replaces dst's, origin included.
 * 0 or -ENOMEM (dst then holds part of src). */
int agentconf_merge(struct agentconf *dst, const struct agentconf *src);

/* The settings `run` cannot go without that c lacks, a bit (1u << setting)
 * each: coordinator, infra-env, token; for `node` also the key. */
unsigned agentconf_missing(const struct agentconf *c, bool node);

/* One line naming the coordinator, infra-env, token (never its value), key
 * and CA and where each came from, into buf (cut to fit). */
void agentconf_describe(const struct agentconf *c, char *buf, size_t len);

/* The files read; NULL members mean the defaults above. */
struct agentconf_paths {
        const char *boot_config;
        const char *agent_conf;
        const char *cmdline;
        const char *initrd_config;
};

/* The boot config's bytes (at most BOOTCFG_AREA_SIZE): the initramfs's
 * (paths->initrd_config) when it exists, else the boot medium's. 0 with
 * *data (malloc'd, *n bytes) and *path, the file read; -ENOENT when neither
 * exists (*path: the medium's); another -errno of the read. */
int agentconf_read_boot(const struct agentconf_paths *paths, uint8_t **data, size_t *n, const char **path);

/* Read the sources (a missing file is skipped; at most BOOTCFG_AREA_SIZE
 * bytes of the boot config are read; the boot config is the initramfs's
 * (initrd_config) when there is one, else the boot medium's), merge them in order, and `flags`
 * (may be NULL) over them, into *out (freed first). 0; -EINVAL when a source
 * is corrupt or has a bad line, -errno when one cannot be read, -ENOMEM: err
 * names the file. */
int agentconf_load(struct agentconf *out, const struct agentconf_paths *paths, const struct agentconf *flags,
                   char *err, size_t errlen);
