/* A host's settings on its installed system (DECISIONS.md D6): what the signed
 * payload says about this host (payload_host_settings) written into the
 * installed root file system, in the files a systemd host reads:
 *
 *   /etc/hostname                                  the hostname, when set
 *   /etc/muster/role                               "master" or "worker"
 *   /etc/muster/host.env                           MUSTER_* variables (an
 *                                                  EnvironmentFile= for units)
 *   /etc/systemd/timesyncd.conf.d/50-muster.conf   [Time] NTP=, when there
 *                                                  are NTP sources (those
 *                                                  with a port other than
 *                                                  123 only in a comment)
 *   /root/.ssh/authorized_keys                     the infra-env's keys added
 *                                                  (0600, folder 0700)
 *   /etc/muster/pull-secret.json                   the cluster's pull secret
 *                                                  (0600), and CRI-O pointed
 *                                                  at it by
 *   /etc/crio/crio.conf.d/50-muster-pull-secret.conf
 *
 * Every file goes through a temporary file and a rename; no folder of the
 * image is followed through a symlink. Files muster owns are replaced;
 * authorized_keys keeps the lines the image had. */
#pragma once
#include <stddef.h>

#include "payload.h"
#include "strv.h"

#define HOSTFILES_HOSTNAME "etc/hostname"
#define HOSTFILES_ROLE "etc/muster/role"
#define HOSTFILES_ENV "etc/muster/host.env"
#define HOSTFILES_TIMESYNCD "etc/systemd/timesyncd.conf.d/50-muster.conf"
#define HOSTFILES_AUTHORIZED_KEYS "root/.ssh/authorized_keys"
#define HOSTFILES_PULL_SECRET "etc/muster/pull-secret.json"
#define HOSTFILES_CRIO "etc/crio/crio.conf.d/50-muster-pull-secret.conf"
#define HOSTFILES_MAX_AUTHORIZED_KEYS (1024 * 1024)  /* an image's own file, read to keep its lines */

/* Write v's files under the root folder rootfd. *written (may be NULL) gets
 * the absolute paths written, in the order above. 0, or -errno with err
 * naming the file. */
int hostfiles_write(int rootfd, const struct payload_host_view *v, struct strv *written, char *err, size_t errlen);
