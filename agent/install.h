/* The install step (DESIGN §6; contract "Install", "Day 2"): fetch the
 * cluster's signed payload, verify it before anything is written, stream
 * the OS image (SHA-256 checked) to the installation disk or to
 * --install-target FILE|DIR, find the root file system with libblkid and
 * write the payload's manifests into its manifest directory (manifestdir.h);
 * in apply mode only the manifests, into an installed system. Talks to the
 * coordinator only through struct install_io, so tests drive it from
 * memory. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "manifestdir.h"
#include "payload.h"
#include "protocol.h"

#define INSTALL_MANIFEST_SUBDIR "etc/muster/manifests"  /* under the installed root */
/* Beside the manifests, for muster-agent-node.service on the installed
 * system: its agent.conf and the coordinator's public key. */
#define INSTALL_NODE_CONF "agent.conf"
#define INSTALL_NODE_KEY "coordinator.pub"
#define INSTALL_NODE_KEY_PATH "/etc/muster/coordinator.pub"
#define INSTALL_NODE_CA "ca.pem"
#define INSTALL_NODE_CA_PATH "/etc/muster/ca.pem"
#define INSTALL_NODE_STATE_DIR "/var/lib/muster-agent"
#define INSTALL_DIR_IMAGE "os-image.img"                /* the image in a DIR target */
#define INSTALL_MAX_URL 2048
#define INSTALL_MAX_ID 128                              /* cluster_id, role */
#define INSTALL_MAX_LOOP_TRIES 16
#define INSTALL_PROGRESS_MIN_MS 1000                    /* between writing-image reports */

/* The messages the coordinator and its users see. */
#define INSTALL_ERR_NO_KEY "no coordinator public key configured (--coordinator-key, coordinator_key_file in agent.conf, or the ISO config); refusing to install"
#define INSTALL_REFUSED_PREFIX "payload refused: "

enum install_mode { INSTALL_STEP_INSTALL, INSTALL_STEP_APPLY };

enum install_target_kind { INSTALL_TARGET_FILE, INSTALL_TARGET_DIR, INSTALL_TARGET_DISK };
const char *install_target_kind_to_string(enum install_target_kind k);

/* The step's args: {mode: install|apply, cluster_id, revision (>= 1),
 * payload_url ("/..." on the coordinator), role?, installation_disk?}. */
struct install_args {
        enum install_mode mode;
        char *cluster_id;
        int64_t revision;
        char *payload_url;
        char *role;               /* or NULL */
        char *installation_disk;  /* or NULL */
        char *host_token;         /* install: this host's own token for its node agent, or NULL */
};
/* 0, or -EINVAL with the first reason in err (naming the member), -ENOMEM.
 * *out is always initialised; free with install_args_free(). */
int install_args_parse(json_object *args, struct install_args *out, char *err, size_t errlen);
void install_args_free(struct install_args *a);

struct install_options {
        const struct crypto_key *coordinator_key;  /* NULL: every install step is refused */
        const char *target;        /* --install-target, or NULL: args.installation_disk */
        const char *host_id;       /* install: whose settings in the payload to write */
        bool no_reboot;
        bool node;                 /* muster-agent node: apply steps only */
        const char *manifest_dir;  /* node: where apply writes */
        /* install: written beside the manifests (etc/muster/) so the installed
         * system's node agent finds its coordinator; NULL: not written. */
        const char *node_conf;     /* agent.conf text (install_node_conf()) */
        /* With args.host_token, agent.conf is written for that token instead
         * (install_node_conf(node_coordinator, node_infra_env, host_token)). */
        const char *node_coordinator;
        const char *node_infra_env;
        const char *node_key_pem;  /* coordinator.pub */
        /* ca.pem: the CA the discovery agent trusted the coordinator with,
         * which the node agent then trusts alone (agent.conf's ca_file);
         * NULL: none (plain HTTP, or the system's CAs). */
        const char *node_ca_pem;
        /* The OS image download's time, retries and resumes included: this
         * many seconds (0: INSTALL_IMAGE_DEADLINE_S) plus one per
         * INSTALL_IMAGE_MIN_RATE bytes of the image. */
        int64_t image_deadline_s;
};

#define INSTALL_IMAGE_DEADLINE_S (30 * 60)
#define INSTALL_IMAGE_MIN_RATE (1024 * 1024)   /* bytes a second: the slowest link waited for */

/* How long (ms) the download of a `size`-byte image may take under o. */
int64_t install_image_deadline_ms(const struct install_options *o, uint64_t size);

/* The agent.conf text an installed host's node agent needs: coordinator,
 * infra-env, token, the key at INSTALL_NODE_KEY_PATH, the CA at
 * INSTALL_NODE_CA_PATH when with_ca, and the state dir
 * INSTALL_NODE_STATE_DIR. malloc'd; NULL on ENOMEM. */
char *install_node_conf(const char *coordinator, const char *infra_env_id, const char *token, bool with_ca);

/* What a target path is: an existing directory is a DIR, a block device a
 * DISK, a regular file or a path that does not exist (its parent must) a
 * FILE. -ENOTDIR/-ENOENT for a missing parent, -EINVAL for anything else
 * (a socket, a character device). */
int install_target_classify(const char *path, enum install_target_kind *kind);

/* The coordinator side, as install_execute() needs it. */
struct install_io {
        /* The envelope at a coordinator path, at most `max` bytes, in a
         * malloc'd buffer. 0, or -errno with the reason in err. */
        int (*fetch_payload)(void *userdata, const char *path, size_t max, char **data, size_t *len, char *err,
                             size_t errlen);
        /* Stream the `size` bytes at `url` (a coordinator path or an
         * absolute http(s) URL) into sink, each byte once: a broken transfer
         * may go on where it stopped (Range), never from the start again.
         * The whole of it has a deadline (install_image_deadline_ms). A sink
         * error aborts and is returned. While it runs, about once a second
         * whether bytes come or not, sink is also called with len 0 (data
         * NULL): a tick, for progress. 0, or -errno with the reason in err. */
        int (*fetch_image)(void *userdata, const char *url, uint64_t size,
                           int (*sink)(void *sink_userdata, const void *data, size_t len), void *sink_userdata,
                           char *err, size_t errlen);
        /* Report a stage (best effort; failures are the callee's to log). */
        void (*progress)(void *userdata, enum install_stage stage, int percent, const char *info);
        void *userdata;
};

struct install_outcome {
        json_object *output;   /* on success, owned */
        char error[1024];      /* on failure */
        bool reboot;           /* reboot once the result is posted */
};
void install_outcome_free(struct install_outcome *o);

/* Run one install step. Install mode: progress starting -> fetch and verify
 * the payload (nothing is written before it passes) -> writing-image ->
 * writing-payload (the manifests, and o->host_id's settings written as
 * hostfiles.h says) -> rebooting (or why not), the percent being the share
 * of the image's and manifests' bytes written (100 at rebooting; "done" is
 * the coordinator's, when the installed system checks in); output
 * {"applied_revision":N,"root_partition":{offset,size,fs_type,label,
 * partition_number,partition_name?},"manifests":count,"host_files":[..]}.
 * A payload without settings for o->host_id is refused. Apply mode: the
 * manifests only, into o->manifest_dir (node), DIR/etc/muster/manifests (a
 * DIR target) or the root file system of a FILE/DISK target; output
 * {"applied_revision":N,"added":[..],"updated":[..],"removed":[..]}, and a
 * revision not above the one applied there is a no-op success that reports
 * the applied one. 0, or -errno with out->error. */
int install_execute(const struct install_options *o, const struct install_args *a, const struct install_io *io,
                    struct install_outcome *out);

/* ---- the pieces, for tests ------------------------------------------------ */

/* The partition of `image` (a file or block device) whose file system LABEL
 * or GPT partition name is `label` (a file system label wins over a
 * partition name); an image without a partition table is one file system.
 * -ENOENT when none matches, -EMEDIUMTYPE when the match has no file system
 * libblkid knows, -errno. */
struct install_root {
        uint64_t offset;        /* bytes */
        uint64_t size;          /* bytes */
        int number;             /* partition number, 0 for a whole-image file system */
        char fs_type[32];       /* "ext4" */
        char label[256];        /* the file system's LABEL, "" when none */
        char part_name[256];    /* the GPT name, "" when none */
};
int install_find_root(const char *image, const char *label, struct install_root *out);

/* Mount the root file system of `image` (a loop device over the file or
 * block device, limited to the partition) on a private temporary directory,
 * call fn with <mnt>/etc/muster/manifests, sync and unmount, detach.
 * Returns fn's return, or -errno of the set-up with err. */
int install_with_root_dir(const char *image, const struct install_root *root,
                          int (*fn)(const char *manifest_dir, void *userdata), void *userdata, char *err,
                          size_t errlen);

/* Streaming the image: begin() opens the destination (a FILE or DIR target
 * writes to a temporary file beside it, renamed into place by commit(); a
 * DISK is written in place), write() hashes and writes, commit() checks the
 * size and SHA-256, fsyncs and renames, abort() removes what a FILE/DIR
 * target got. */
struct install_image {
        enum install_target_kind kind;
        int fd;
        char *path;         /* where the image ends up */
        char *tmp;          /* FILE/DIR: the temporary file, until commit */
        uint64_t expected;
        uint64_t written;
        struct crypto_sha256_ctx sha;
        bool sha_live;
};
int install_image_begin(struct install_image *w, enum install_target_kind kind, const char *path, uint64_t size,
                        char *err, size_t errlen);
int install_image_write(struct install_image *w, const void *data, size_t len);  /* -EFBIG past size */
int install_image_commit(struct install_image *w, const char *sha256_hex, char *err, size_t errlen);
void install_image_abort(struct install_image *w);
