/* musterctl's front: global options, the command table and its help, the
 * option, file and stop-signal helpers every command uses. Nothing here
 * talks HTTP; a command runs only once its arguments are known to be good,
 * so usage errors never reach the server. */
#include "ctl.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "customcols.h"
#include "fdio.h"
#include "jsonpath.h"

volatile sig_atomic_t ctl_stop;

static void on_stop_signal(int sig) {
        ctl_stop = 1;
}

void ctl_catch_stop(struct sigaction *old_int, struct sigaction *old_term) {
        struct sigaction sa = { .sa_handler = on_stop_signal };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, old_int);
        sigaction(SIGTERM, &sa, old_term);
}

void ctl_nap(double seconds) {
        if (seconds <= 0)
                return;
        struct timespec ts = { (time_t) seconds, (long) ((seconds - floor(seconds)) * 1e9) };
        while (!ctl_stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

#define CAP_OPTS                                                                                         \
        "  --baseline SET         Baseline capability set of the release (None,\n"                      \
        "                         v4.11, ..., vCurrent; default vCurrent)\n"                             \
        "  --enable CAP[,CAP...]  Additional enabled capabilities (repeatable;\n"                       \
        "                         replaces the list, \"\" empties it)\n"                                 \
        "  --feature-set F        Feature set (default Default)\n"

#define ADDON_OPTS                                                                                       \
        "  --values-file FILE     The values template (mustache over the cluster:\n"                    \
        "                         {{cluster.name}}, {{cluster.labels.KEY}}, ...)\n"                      \
        "  --values-template TEXT The same, given on the command line\n"                                 \
        "  -l, --label KEY=VALUE  Select the clusters with this label (repeatable)\n"                    \
        "  --selector JSON        Or a whole selector: {\"match_labels\":{...},\n"                     \
        "                         \"match_expressions\":[{\"key\":K,\"operator\":\"In\",\n"        \
        "                         \"values\":[...]}]} ({} every cluster, null none)\n"                  \
        "  --strategy S           Continuous (default: releases follow the spec and\n"                  \
        "                         the cluster's labels and facts) or InstallOnce (a\n"                   \
        "                         release, once made, is left as it is)\n"                               \
        "  --max-concurrent N     Clusters rolling at once (0: no limit)\n"                              \
        "  --max-failures N       Pause the rollout after N failures (0: never)\n"                      \
        "  --soak SECONDS         Wait this long after a cluster applies\n"                              \
        "  --timeout SECONDS      A cluster that has not applied by then failed\n"

#define HOST_OPTS                                                                                        \
        "HOST is a host id, a unique prefix of one, its hostname, or INFRA_ENV/HOST.\n"

/* operator uninstall and its alias unsubscribe. */
#define OPERATOR_UNINSTALL_HELP                                                                          \
        "  --prune                Also remove the dependencies nothing needs any\n"                      \
        "                         more (never a package subscribed to directly)\n"                       \
        "  --cleanup[=true|false] First set whether PKG's operands go before it\n"                       \
        "                         (as operator set; --cleanup alone is true)\n"                          \
        "\nWithout cleanup (the default) the operator goes at once and its\n"                            \
        "operands (the objects of the kinds it owns) are kept: the plan is\n"                            \
        "printed, what stays, what is removed and what is removable, and an\n"                           \
        "installed cluster gets a new payload revision without the operator.\n"                          \
        "With cleanup enabled PKG's operands, applied through musterd or found\n"                        \
        "on the hosts, are deleted first. On a cluster not installed that is done\n"                     \
        "at once. On an installed one a payload revision deletes them and the\n"                         \
        "operator stays, in phase Cleanup, until every host has reported them\n"                         \
        "gone; the operands still pending are printed and operator show follows\n"                       \
        "it. Past musterd's [cleanup] timeout a warning names the hosts that\n"                          \
        "have not reported. --cleanup=false meanwhile (here or with operator set)\n"                     \
        "aborts it: what is deleted stays deleted and the operator goes now.\n"

static const struct ctl_cmd commands[] = {
        { "infraenv", "create", "NAME [OPTIONS]", "Create an infra-env and print its agent token",
          "  --ntp-source S         NTP server the hosts' clocks are checked against\n"
          "                         (ntp-synced) and their installed systems use\n"
          "                         (timesyncd); repeat for several\n"
          "  --ssh-key-file F       SSH public key(s): root's on the discovery hosts'\n"
          "                         live system (its SSH server starts only with a\n"
          "                         key) and on the installed hosts\n"
          "  --cpu-architecture A   x86_64 (default), aarch64, ...\n"
          "  --http-proxy URL       Proxy the discovery hosts' agents fetch http://\n"
          "                         URLs through (http://HOST:PORT)\n"
          "  --https-proxy URL      Proxy for their https:// URLs\n"
          "  --no-proxy LIST        Comma-separated hosts, domains, addresses and CIDR\n"
          "                         blocks reached without a proxy\n"
          "Kept with the infra-env and shown, but not yet sent to the hosts:\n"
          "  --pull-secret-file F   Pull secret (JSON, read from F); installed hosts\n"
          "                         get their cluster's\n"
          "  --token-out FILE       Write the agent token to FILE (mode 0600) instead\n"
          "                         of printing it\n",
          ctl_infra_env_create },
        { "infraenv", "set", "INFRA_ENV [OPTIONS]", "Change an infra-env's static network or SSH key",
          "  --static-network DIR   Per-host network configs: DIR holds a folder per\n"
          "                         host named by its MAC (52:54:00:12:34:56), with\n"
          "                         systemd-networkd files (NAME.network, .netdev,\n"
          "                         .link). At boot the discovery image writes the\n"
          "                         files of the folder whose MAC is one of its NICs\n"
          "                         into /run/systemd/network (as 05-muster-NAME);\n"
          "                         other NICs keep DHCP. Checked here: sections,\n"
          "                         addresses, MACs (400 naming host and line); the\n"
          "                         whole set must fit the ISO (413 saying by how much)\n"
          "  --no-static-network    Drop them\n"
          "  --ssh-key-file F       SSH public key(s) for root on the discovery hosts\n"
          "                         and the installed hosts\n"
          "  --no-ssh-key           Drop it (no SSH server on the discovery hosts)\n"
          "Download the ISO or PXE files again after a change: they carry these.\n",
          ctl_infra_env_set },
        { "infraenv", "list", "", "List infra-envs", "", ctl_infra_env_list },
        { "infraenv", "show", "INFRA_ENV", "Show an infra-env (by id, id prefix or name)", "", ctl_infra_env_show },
        { "infraenv", "delete", "INFRA_ENV", "Delete an infra-env", "", ctl_infra_env_delete },
        { "infraenv", "rotate-token", "INFRA_ENV [--token-out FILE]",
          "Issue a new agent token; older ones stop working",
          "  --token-out FILE       Write the agent token to FILE (mode 0600) instead\n"
          "                         of printing it\n",
          ctl_infra_env_rotate_token },
        { "infraenv", "download", "INFRA_ENV -o FILE | --pxe DIR",
          "Download an infra-env's discovery ISO, or its PXE files",
          "  -o, --out FILE         Write the ISO to FILE (through FILE.part, renamed\n"
          "                         when complete; mode 0600: it holds the agent\n"
          "                         token); - for standard output. Here -o is not\n"
          "                         the output format\n"
          "  --pxe DIR              Write the PXE files into the folder DIR instead\n"
          "                         (made if missing; the files 0600, so give them\n"
          "                         to the TFTP or HTTP server's user): vmlinuz,\n"
          "                         initrd (the ISO's initramfs with this\n"
          "                         infra-env's config appended) and boot.ipxe, the\n"
          "                         iPXE script that loads the two from where it was\n"
          "                         loaded (serve DIR by TFTP or HTTP)\n"
          "\nThe ISO (or initrd) boots hosts into this infra-env: it carries musterd's\n"
          "URL, the agent token of the current generation and musterd's public key.\n"
          "Rotating the token makes older downloads useless. A progress bar is drawn\n"
          "when stderr is a terminal; a summary line ends each download either way.\n"
          "iPXE can also boot straight from musterd with the agent token in the URL:\n"
          "  chain http://MUSTERD/api/v2/infra-envs/ID/downloads/pxe/boot.ipxe?token=T\n",
          ctl_infra_env_download },
        { "host", "list", "[OPTIONS]", "List hosts, with filters",
          "  --status S[,S...]      Only hosts in one of these statuses (known-unbound,\n"
          "                         installing, ...); may be repeated\n"
          "  --cluster C            Only hosts bound to cluster C (id, prefix or name)\n"
          "  --infra-env IE         Only hosts of infra-env IE (id, prefix or name)\n"
          "  --unbound              Only hosts bound to no cluster, in any state; the\n"
          "                         validated pool is --status known-unbound\n"
          "  --min-cpu N            At least N logical CPUs\n"
          "  --min-memory SIZE      At least SIZE of memory (16GiB, 100GB, bytes)\n"
          "  --min-disk SIZE        An eligible disk of at least SIZE\n"
          "  --hostname SUBSTR      Hostname contains SUBSTR\n"
          "  --limit N              At most N hosts (a page of N with --all)\n"
          "  --all                  Every page, not only the first\n"
          "  -w, --watch            After the list, poll and print a host's row again\n"
          "                         each time its status or stage changes, it comes\n"
          "                         or it goes (status gone), until interrupted (exit\n"
          "                         0) or --timeout\n"
          "  --interval SECONDS     How often --watch asks (default 2)\n"
          "  --timeout T            Stop watching after T (90, 90s, 10m; default: never)\n",
          ctl_host_list },
        { "host", "show", "HOST", "Show a host: status, validations, hardware", HOST_OPTS, ctl_host_show },
        { "host", "bind", "HOST --cluster C", "Bind a known unbound host to a cluster",
          "  --cluster C            The cluster (id, prefix or name)\n" HOST_OPTS, ctl_host_bind },
        { "host", "unbind", "HOST", "Return a host to the unbound pool", HOST_OPTS, ctl_host_unbind },
        { "host", "install", "HOST", "Install a known host into its installed cluster (day 2)",
          "The host gets the cluster's current payload revision (as a worker unless\n"
          "its role is set) and follows the cluster's later revisions once installed.\n"
          "For a cluster that is not installed yet, use musterctl cluster install.\n" HOST_OPTS,
          ctl_host_install },
        { "host", "rotate-token", "HOST [--token-out FILE]", "Replace an installed host's own token",
          "  --token-out FILE       Write the new token to FILE (mode 0600) instead of\n"
          "                         printing it\n"
          "Each host gets its own token when it installs; its installed system's\n"
          "node agent uses it. This revokes the host's earlier tokens (put the new\n"
          "one in its /etc/muster/agent.conf); the infra-env's agent token and the\n"
          "other hosts are untouched, as infraenv rotate-token leaves host tokens.\n" HOST_OPTS,
          ctl_host_rotate_token },
        { "host", "logs", "HOST -o FILE [--gather] [--timeout T]", "Download a host's logs (a .tar.gz)",
          "  -o FILE, --output-file FILE\n"
          "                         Where the logs go (mode 0600; - for standard\n"
          "                         output)\n"
          "  --gather               Ask the host's agent for fresh logs first and wait\n"
          "                         for its upload; without it, the newest it uploaded\n"
          "  --timeout T            How long --gather waits (default 300s)\n"
          "The archive holds agent.log (the agent's own recent log), journal.log (this\n"
          "boot's journal), kernel.log (the kernel's ring buffer) and info.json. An\n"
          "agent cuts the oldest lines to fit musterd's [logs] max_upload_bytes; musterd\n"
          "keeps [logs] keep_per_host uploads a host, the oldest dropped first.\n" HOST_OPTS,
          ctl_host_logs },
        { "host", "reclaim", "HOST [--wipe | --cancel]", "Boot an installed host back into discovery",
          "  --wipe                 Wipe the installation disk (discard, else its\n"
          "                         partition table and file-system signatures) from\n"
          "                         the discovery system before the host registers\n"
          "  --cancel               Withdraw a pending reclaim, until the node agent\n"
          "                         has been handed it (refused after); its boot files\n"
          "                         are no longer served to the host's token\n"
          "The host's node agent writes the discovery kernel and initramfs (with the\n"
          "infra-env's config) to its boot partition, makes them the next boot, once,\n"
          "and reboots; the host leaves its cluster and comes back to the pool as a\n"
          "new discovering-unbound host. Without --wipe the installed system stays on\n"
          "the disk.\n" HOST_OPTS,
          ctl_host_reclaim },
        { "host", "set", "HOST [OPTIONS]", "Set a host's role, hostname or installation disk",
          "  --role R               auto, master or worker\n"
          "  --hostname NAME        Hostname the host is known and validated by (unique\n"
          "                         in its cluster), written to the installed\n"
          "                         system's /etc/hostname\n"
          "  --installation-disk ID Disk to install to (its id, by-id path or name)\n" HOST_OPTS,
          ctl_host_set },
        { "host", "delete", "HOST", "Forget a host (it registers again if its agent runs)", HOST_OPTS,
          ctl_host_delete },
        { "cluster", "create", "NAME [OPTIONS]", "Create a cluster",
          "  --release V            Release version\n"
          "  --base-domain D        Base DNS domain\n"
          "  --machine-cidr CIDR    Machine network\n"
          "  --api-vip IP           API virtual IP\n"
          "  --ingress-vip IP       Ingress virtual IP\n"
          "  --single-node          One host, no high availability\n"
          "  --cpu-architecture A   x86_64 (default), aarch64, ppc64le or s390x: the\n"
          "                         architecture its hosts must have\n"
          "  --pull-secret-file F   Pull secret (JSON, read from F), installed at\n"
          "                         /etc/muster/pull-secret.json (mode 0600)\n"
          "  --label KEY=VALUE      A label (repeat for several)\n"
          CAP_OPTS,
          ctl_cluster_create },
        { "cluster", "set", "CLUSTER [OPTIONS]", "Change a cluster's settings, release or capabilities",
          "  --name NAME            New name\n"
          "  --release V            Release version (an imported one)\n"
          "  --base-domain D        Base DNS domain\n"
          "  --machine-cidr CIDR    Machine network\n"
          "  --api-vip IP           API virtual IP\n"
          "  --ingress-vip IP       Ingress virtual IP\n"
          "  --pull-secret-file F   Pull secret (JSON, read from F)\n"
          CAP_OPTS,
          ctl_cluster_set },
        { "cluster", "label", "CLUSTER KEY=VALUE... [KEY-...]", "Set or remove a cluster's labels",
          "\nKEY=VALUE sets a label, KEY- removes one; the others stay. Keys and\n"
          "values follow Kubernetes' rules ([prefix/]name, each part at most 63\n"
          "characters); musterd names one that does not. Add-on proxies select\n"
          "clusters by their labels: a change reconciles their releases at once.\n"
          "Prints the cluster's labels (-o json: the cluster).\n",
          ctl_cluster_label },
        { "cluster", "list", "[-l SELECTOR]", "List clusters, or those whose labels match",
          "  -l, --selector SEL     Only clusters whose labels match SEL, in kubectl's\n"
          "                         words: env=prod, tier!=web, tier in (a,b),\n"
          "                         tier notin (c), gpu, !old; requirements joined\n"
          "                         by ',' must all hold (musterd filters)\n",
          ctl_cluster_list },
        { "cluster", "show", "CLUSTER", "Show a cluster and its validations", "",
          ctl_cluster_show },
        { "cluster", "delete", "CLUSTER", "Delete a cluster (no hosts may be bound)", "", ctl_cluster_delete },
        { "cluster", "capabilities", "CLUSTER [OPTIONS]", "Show or change a cluster's capabilities",
          "  --baseline SET         Baseline capability set of the release (None,\n"
          "                         v4.11, ..., vCurrent)\n"
          "  --enable CAP[,CAP...]  Add capabilities to the additional ones\n"
          "  --disable CAP[,CAP...] Remove capabilities from the additional ones (a\n"
          "                         capability once enabled stays enabled: it is\n"
          "                         then enabled implicitly)\n"
          "\nWith no option, shows the spec, the enabled and known capabilities and the\n"
          "ImplicitlyEnabledCapabilities condition.\n",
          ctl_cluster_capabilities },
        { "cluster", "install", "CLUSTER", "Install a cluster whose validations pass",
          "Builds payload revision 1 and starts the install on the bound hosts; the\n"
          "failing validations are listed when the cluster is not ready.\n"
          "musterctl cluster watch CLUSTER follows it.\n",
          ctl_cluster_install },
        { "cluster", "cancel", "CLUSTER", "Stop an installation in progress",
          "The installing hosts fail as cancelled, keep their progress (what they\n"
          "wrote) and are sent stop-installation: their agents stop before writing\n"
          "more. The cluster is then in error; musterctl cluster reset CLUSTER\n"
          "lets it install again.\n",
          ctl_cluster_cancel },
        { "cluster", "reset", "CLUSTER", "Reset a failed or stuck installation",
          "The cluster's hosts that started installing register again and are\n"
          "checked anew; installed ones wait to be booted from the discovery ISO\n"
          "(resetting-pending-user-action). The cluster then follows its hosts and\n"
          "can be installed again. Refused for a cluster that is installed or never\n"
          "started installing.\n",
          ctl_cluster_reset },
        { "cluster", "upgrade", "CLUSTER --release V", "Move a cluster to another imported release",
          "  --release V            The release to move to\n"
          "\nCapabilities that the new release needs for what the cluster has are\n"
          "enabled implicitly; an installed cluster gets a new payload revision.\n",
          ctl_cluster_upgrade },
        { "cluster", "payload", "CLUSTER [--revision N] [--manifests]",
          "List a cluster's payload revisions or show one",
          "  --revision N           Show revision N: digest, signature, manifests\n"
          "                         and OS image (-o json: its payload object)\n"
          "  --manifests            List the revision's manifests (the latest one\n"
          "                         without --revision)\n",
          ctl_cluster_payload },
        { "cluster", "watch", "CLUSTER [--interval T] [--timeout T]",
          "Follow an install until it is done or fails",
          "  --interval T           Poll every T seconds (default 2; 500ms, 0.5 are\n"
          "                         fine)\n"
          "  --timeout T            Give up after T (90, 90s, 10m, 2h); default never\n"
          "\nRedraws on a terminal, else prints a block per change. Exits 0 once the\n"
          "cluster is installed, 1 when it is in error or its install stopped before\n"
          "the end (back to insufficient or ready: the failing hosts are told), on\n"
          "--timeout or when interrupted.\n",
          ctl_cluster_watch },
        { "wait", "", "host|cluster NAME --for FIELD=VALUE [--timeout T]",
          "Wait until a host's or a cluster's field has a value",
          "  --for FIELD=VALUE      The condition: FIELD a path into the object as -o\n"
          "                         json shows it (.status, status, .progress.stage,\n"
          "                         {.applied_revision}; kubectl's jsonpath={.f}=V\n"
          "                         too), VALUE what it must read (numbers and\n"
          "                         booleans as JSON writes them)\n"
          "  --timeout T            Give up after T (30, 30s, 10m, 2h; default 30s)\n"
          "  --interval T           Ask every T seconds (default 1; 500ms is fine)\n"
          "\nNAME is an id, a unique prefix of one, or a name (a host's hostname, or\n"
          "INFRA_ENV/HOST). Prints KIND/ID condition met and exits 0 once it holds;\n"
          "exits 1 on --timeout, naming the value last seen, 3 when NAME is not\n"
          "found and 4 when musterd cannot be reached.\n",
          ctl_wait },
        { "release", "import", "DIR [--strict]", "Import a release directory",
          "  --strict               Refuse a release whose manifests name capabilities\n"
          "                         release.yaml does not declare (else a warning)\n"
          "\nDIR holds release.yaml and the manifests: every *.yaml, *.yml and *.json\n"
          "file beside it (not in subdirectories, not hidden), sent as they are; a\n"
          "file reached through a link that leaves DIR is refused. A relative\n"
          "os_image.path is made absolute: the image must be in musterd's releases\n"
          "folder ([releases] image_dir, default /var/lib/muster/images), so keep\n"
          "the release directory there. At most 64 MiB in all.\n",
          ctl_release_import },
        { "release", "list", "", "List imported releases", "", ctl_release_list },
        { "release", "show", "VERSION [OPTIONS]", "Show a release and what a cluster of it gets",
          "  --profile P            Cluster profile (default: the release's)\n"
          "  --feature-set F        Feature set (default Default)\n"
          "  --baseline SET         Baseline capability set (default vCurrent)\n"
          "  --enable CAP[,CAP...]  Additional enabled capabilities\n"
          "  --exclude ID[,ID...]   Ids excluded by exclude.release.openshift.io/ID\n"
          "\nLists the manifests included and those excluded, with the reason.\n"
          "-o json prints the release object with the preview as \"preview\".\n",
          ctl_release_show },
        { "release", "delete", "VERSION", "Delete a release no cluster uses", "", ctl_release_delete },
        { "operator", "subscribe", "CLUSTER PKG [OPTIONS]", "Subscribe a cluster to an operator package",
          "  --channel CH           Take PKG from channel CH (default: its default\n"
          "                         channel)\n"
          "  --catalog CAT          Take PKG from catalog CAT only\n"
          "  --version-range R      Only versions in R (>=1.0.0 <2.0.0, ~1.2, 1.x, ...)\n"
          "  --skip-dependencies    Install PKG alone; its dependencies are left to you\n"
          "  --cleanup[=true|false] Whether `operator uninstall` deletes PKG's\n"
          "                         operands (the objects of the kinds it owns) before\n"
          "                         it removes the operator (default false: they are\n"
          "                         kept; --cleanup alone is true)\n"
          "\nResolves PKG with its dependencies and prints the bundles it brings in\n"
          "and why. A cluster that is installed gets a new payload revision, which\n"
          "its node agents apply. One that does not resolve is kept in phase Failed\n"
          "and said why; the cluster cannot install until it resolves.\n",
          ctl_operator_subscribe },
        { "operator", "uninstall", "CLUSTER PKG [--prune] [--cleanup[=BOOL]]",
          "Uninstall an operator from a cluster", OPERATOR_UNINSTALL_HELP, ctl_operator_unsubscribe },
        { "operator", "unsubscribe", "CLUSTER PKG [--prune] [--cleanup[=BOOL]]",
          "Uninstall an operator (as operator uninstall)", OPERATOR_UNINSTALL_HELP, ctl_operator_unsubscribe },
        { "operator", "show", "CLUSTER PKG", "Show a cluster's operator subscription",
          "\nPrints the subscription's channel, phase, cleanup setting and bundles\n"
          "and, while it is being uninstalled with cleanup, the operands still to\n"
          "be deleted and the hosts that have not reported them gone yet.\n"
          "-o json prints the subscription as operator list -o json has it.\n",
          ctl_operator_show },
        { "operator", "list", "CLUSTER", "List a cluster's operator subscriptions",
          "\nOne row per subscription: channel, phase (Resolving, Installing,\n"
          "Installed, UpgradePending, Failed, Cleanup, Uninstalling), version,\n"
          "catalog and the bundles it brought in. Why a subscription failed, what\n"
          "an uninstall in phase Cleanup waits for and, when the cluster's\n"
          "operators do not resolve, the OperatorsResolvable condition follow the\n"
          "table.\n",
          ctl_operator_list },
        { "operator", "set", "CLUSTER PKG --cleanup=true|false", "Change a cluster's operator subscription",
          "  --cleanup=true|false   Whether PKG's operands (the objects of the kinds\n"
          "                         it owns) are to go before it on uninstall\n"
          "\nWith cleanup enabled, operator uninstall deletes PKG's operands (applied\n"
          "through musterd or found on the hosts) first and removes the operator\n"
          "once every host has reported them gone; without it, uninstall keeps\n"
          "them. --cleanup=false while that cleanup is under way aborts it: what\n"
          "is deleted stays deleted and the operator goes now. Prints the\n"
          "subscription's setting after.\n",
          ctl_operator_set },
        { "operator", "resolve", "--cluster C|--catalog DIR [PKG[:CHANNEL]...]",
          "Preview a cluster's operators, or resolve offline",
          "  --cluster C            Ask musterd for the plan of cluster C's\n"
          "                         subscriptions, with PKG... added; nothing changes\n"
          "  --catalog [NAME=]DIR   Resolve offline, with no server, against a catalog:\n"
          "                         a file-based catalog directory or file (JSON or\n"
          "                         YAML blobs; bundles/B/manifests/ and\n"
          "                         bundles/B/metadata/dependencies.yaml). Named NAME\n"
          "                         or after DIR; the first given has the highest\n"
          "                         priority. Repeatable\n"
          "  --skip-dependencies    Install the named packages alone; their\n"
          "                         dependencies are left to you\n"
          "  --upgrade PKG          With --cluster: as if PKG were upgraded\n"
          "                         (repeatable)\n"
          "  --upgrade-all          With --cluster: as if everything were upgraded\n"
          "  --prune                With --cluster: as if unneeded dependencies went\n"
          "\nGive exactly one of --cluster and --catalog. Prints the plan: what would\n"
          "be installed, upgraded, kept or removed, from which catalog and why, a\n"
          "dependency before what needs it. When it cannot be resolved it says why,\n"
          "in words, with ways out, and exits 1. PKG:CHANNEL takes PKG from CHANNEL\n"
          "instead of its default channel. Offline, operator authors check a\n"
          "bundle's dependencies before publishing.\n",
          ctl_operator_resolve },
        { "operator", "upgrade", "CLUSTER [PKG...|--all] [--prune]", "Upgrade a cluster's operators",
          "  --all                  Upgrade every operator the cluster has\n"
          "  --prune                Remove the dependencies nothing needs any more\n"
          "\nEach named package (and the dependencies installed with it) moves to\n"
          "the newest bundle reachable on its channel's upgrade graph (replaces,\n"
          "skips, skipRange). Prints the plan; an installed cluster gets a new\n"
          "payload revision. When it does not resolve nothing changes, the reason\n"
          "is printed and the exit status is 1. The operands of kinds the new\n"
          "bundles no longer own are kept and named (an upgrade never deletes them).\n",
          ctl_operator_upgrade },
        { "operand", "apply", "CLUSTER FILE...", "Apply operands (custom resources) to a cluster",
          "\nEach FILE holds manifests, YAML or JSON, one or more documents (---).\n"
          "Each object's kind must be one an operator the cluster is subscribed to\n"
          "owns; otherwise nothing is applied and the reason is printed. They go\n"
          "into the next payload revision, after their operator. FILE is kept by\n"
          "its base name (two with the same name are refused); at most 1000 files,\n"
          "no directories. Prints each object applied and its package.\n",
          ctl_operand_apply },
        { "operand", "list", "CLUSTER", "List a cluster's operands, applied and found",
          "\nSOURCE is managed (applied with operand apply) or found (reported by\n"
          "the node agents from the hosts' manifest directories, not written by\n"
          "musterd); HOSTS is how many hosts reported a found one. -o wide adds the\n"
          "id and group/version. The kinds the cluster's operators own follow the\n"
          "table.\n",
          ctl_operand_list },
        { "operand", "delete", "CLUSTER OPERAND", "Delete an operand applied to a cluster",
          "\nOPERAND is an operand's id (operand list -o wide shows it, a unique start\n"
          "of one is enough), KIND/NAME or KIND/NAMESPACE/NAME; KIND is matched in\n"
          "any case, or as Kind.group. Only managed operands (applied with operand\n"
          "apply) are deleted: the next payload revision leaves them out.\n",
          ctl_operand_delete },
        { "catalog", "add", "NAME DIR|FILE --priority N", "Add an operator catalog",
          "  --priority N           -1000 to 1000, required: where catalogs offer the\n"
          "                         same package, the lower number is preferred (equal:\n"
          "                         name order). It never changes: delete the catalog\n"
          "                         and add it again\n"
          "\nDIR is a file-based catalog: its *.json, *.yaml and *.yml files hold the\n"
          "olm.package, olm.channel and olm.bundle blobs (as opm render writes them;\n"
          "olm.bundle.object properties become the bundle's manifests), and for a\n"
          "bundle B, bundles/B/manifests/ holds its manifests and\n"
          "bundles/B/metadata/dependencies.yaml its dependencies. Other files, hidden\n"
          "ones and unknown blob or property types are ignored; a link out of DIR is\n"
          "refused. FILE is one such file. At most 64 MiB in all. Only an\n"
          "infra-admin adds catalogs; a bad one is refused naming file, line, blob.\n",
          ctl_catalog_add },
        { "catalog", "list", "", "List operator catalogs, by priority then name", "", ctl_catalog_list },
        { "catalog", "show", "CATALOG", "Show a catalog: its packages and channels",
          "\nCATALOG is a catalog's name or id. Each channel of each package is a\n"
          "row: whether it is the package's default, its newest version (HEAD) and\n"
          "the versions of its bundles; -o json adds each entry's replaces, skips\n"
          "and skipRange.\n",
          ctl_catalog_show },
        { "catalog", "delete", "CATALOG", "Delete an operator catalog",
          "\nCATALOG is a catalog's name or id. Refused while a cluster's operator\n"
          "subscription depends on it. Only an infra-admin deletes catalogs.\n",
          ctl_catalog_delete },
        { "addon", "create", "NAME [OPTIONS]", "Create an add-on proxy (a Helm chart for clusters)",
          "  --chart-repo URL       The chart's repository\n"
          "  --chart CHART          The chart's name in it\n"
          "  --version V            The chart's version\n"
          "  --namespace NS         Namespace the release is installed in\n"
          "  --release-name R       The Helm release's name (default: NAME)\n"
          ADDON_OPTS
          "\n--chart-repo, --chart, --version and --namespace are required, and so is\n"
          "-l or --selector: a proxy says which clusters it selects. Each selected\n"
          "cluster gets a release right away (Pending until the rollout moves it).\n",
          ctl_addon_create },
        { "addon", "set", "PROXY [OPTIONS]", "Change an add-on proxy's chart, values or rollout",
          "  --chart-repo URL       The chart's repository\n"
          "  --chart CHART          The chart's name\n"
          "  --version V            The chart's version\n"
          ADDON_OPTS
          "\nOnly what is given changes; -l or --selector replaces the whole selector.\n"
          "A new chart or values template bumps the releases' revision; the\n"
          "rollout then moves them. The name, namespace and release name stay.\n",
          ctl_addon_set },
        { "addon", "list", "", "List add-on proxies",
          "\nREADY is the ReleasesReady condition: True once every selected cluster\n"
          "has the current revision applied.\n",
          ctl_addon_list },
        { "addon", "show", "PROXY", "Show an add-on proxy: spec, rollout, conditions",
          "\nPROXY is the proxy's name or id. Shows the chart, selector, rollout\n"
          "settings, how many clusters are in each state, each condition and the\n"
          "values template.\n",
          ctl_addon_show },
        { "addon", "delete", "PROXY", "Delete an add-on proxy and remove its releases",
          "\nThe proxy's releases are removed from the clusters first: until that is\n"
          "done the proxy is kept, marked deleting. Releases installed out of band\n"
          "are never touched.\n",
          ctl_addon_delete },
        { "addon", "releases", "[--proxy P] [--cluster C]", "List add-on releases, one per proxy and cluster",
          "  --proxy P              Only the releases of proxy P (name or id)\n"
          "  --cluster C            Only those on cluster C (id, prefix or name)\n"
          "\nREVISION is what the cluster should have, APPLIED what it reported\n"
          "applied. STATUS is Pending, Rolling, Applied, Failed or Removing.\n",
          ctl_addon_releases },
        { "addon", "rollout", "pause|resume|rollback PROXY", "Pause, resume or roll back a proxy's rollout",
          "\npause stops moving releases to the current revision; resume goes on.\n"
          "rollback returns the proxy to its previous spec (chart, values,\n"
          "selector) as a new generation and resumes the rollout; refused when\n"
          "there is none. Prints the rollout's state.\n",
          ctl_addon_rollout },
        { "signing-key", "", "[-o FILE]", "Print musterd's payload signing public key (PEM)",
          "  -o, --out FILE         Write the key to FILE instead (here -o is not\n"
          "                         the output format)\n",
          ctl_signing_key },
        { "version", "", "", "Show musterctl's version and musterd's", "",
          ctl_version },
        { "completion", "", "bash|zsh|fish", "Print the shell's completion script for musterctl",
          "\nbash: source <(musterctl completion bash), or save it as\n"
          "/usr/share/bash-completion/completions/musterctl. zsh: source <(musterctl\n"
          "completion zsh). fish: musterctl completion fish | source, or save it as\n"
          "~/.config/fish/completions/musterctl.fish. It completes the commands,\n"
          "their options and the global options.\n",
          ctl_completion },
        { "event", "list", "[OPTIONS]", "List events, oldest first; --follow for new ones",
          "  --infra-env IE         Events of infra-env IE (id, prefix or name)\n"
          "  --cluster C            Events of cluster C (id, prefix or name)\n"
          "  --host H               Events of host H (id)\n"
          "  --severity S           At least S: info, warning, error or critical\n"
          "  --category C           Only C: user, system or agent; or audit, the\n"
          "                         changes people's tokens made (who, role, what,\n"
          "                         answer), which are listed only when asked for\n"
          "  --limit N              The last N events (default 100)\n"
          "  --follow               Keep printing new events until interrupted\n"
          "  --interval T           Poll every T seconds with --follow (default 1;\n"
          "                         250ms, 0.5 and 2s are fine)\n",
          ctl_event_list },
        { "token", "create", "--role ROLE --owner OWNER [--ttl DURATION]", "Issue a token for a person",
          "  --role ROLE            infra-admin or cluster-creator\n"
          "  --owner OWNER          Who the token acts for (cluster creators see only\n"
          "                         their own clusters); an owner name belongs to one\n"
          "                         role: bob cannot be both\n"
          "  --ttl DURATION         How long it works: N with s, m, h, d, w or y\n"
          "                         (90d, 12h, 1y; a bare N is seconds); default 1y,\n"
          "                         at most 10y\n"
          "  --token-out FILE       Write the token to FILE (mode 0600) instead of\n"
          "                         printing it\n"
          "\nPrints the token's id, which `token revoke` takes.\n",
          ctl_token_create },
        { "token", "list", "", "List people's tokens (ids and dates; never a token)", "",
          ctl_token_list },
        { "token", "revoke", "ID", "Revoke a person's token at once",
          "\nID is the token's id or a unique start of it, as `token list` shows.\n"
          "Every request checks the revocation list: the token stops working at\n"
          "once. A revoked admin.token is replaced when musterd starts again.\n",
          ctl_token_revoke },
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

const struct ctl_cmd *ctl_commands(size_t *n) {
        *n = N_COMMANDS;
        return commands;
}

static const char global_help[] =
        "Global options (before or after the command):\n"
        "  --server URL           musterd's address ($MUSTER_SERVER, default\n"
        "                         " CTL_DEFAULT_SERVER ")\n"
        "  --token-file F         Admin token file ($MUSTER_TOKEN_FILE, default\n"
        "                         " CTL_DEFAULT_TOKEN_FILE "); $MUSTER_TOKEN may\n"
        "                         hold the token itself\n"
        "  --ca FILE              CA certificates to trust for an https server\n"
        "                         ($MUSTER_CA; default: musterd's own CA beside the\n"
        "                         token file, DIR/tls/ca.pem, when it is there)\n"
        "  -o, --output FORMAT    table (default: fits the terminal's width or\n"
        "                         $COLUMNS, long text wrapped; whole cells, a line\n"
        "                         a row, when piped), wide, json, yaml (the JSON\n"
        "                         as YAML), name (KIND/ID a line),\n"
        "                         jsonpath=TEMPLATE (kubectl's: {.id}, {.a[0].b},\n"
        "                         {range .[*]}{.id}{\"\\n\"}{end}) or\n"
        "                         custom-columns=HEADER:FIELD[,HEADER:FIELD...]\n"
        "                         (kubectl's: ID:.id,CPUS:.inventory.cpu.count,\n"
        "                         DISK:.disks[0].name; <none> where missing)\n"
        "  --no-headers           Tables without their header line\n"
        "  -h, --help             Help; COMMAND --help for a command's options\n";

const char *ctl_global_help(void) {
        return global_help;
}

static const char exit_help[] =
        "Exit status: 0 done; 1 musterd refused it (the reason is printed) or it\n"
        "failed here; 2 bad usage; 3 not found (HTTP 404, or no resource matches the\n"
        "name or id given); 4 musterd could not be reached (connection, TLS, timeout).\n";

static void usage(FILE *f) {
        fputs("Usage: musterctl [OPTIONS] COMMAND ...\n\nThe admin CLI of musterd.\n\nCommands:\n", f);
        for (size_t i = 0; i < N_COMMANDS; i++) {
                char name[64];
                snprintf(name, sizeof name, "%s%s%s", commands[i].resource, *commands[i].verb ? " " : "",
                         commands[i].verb);
                fprintf(f, "  %-22s %s\n", name, commands[i].summary);
        }
        fprintf(f, "\n%s  --version              The version\n\n%s", global_help, exit_help);
}

static void resource_usage(FILE *f, const char *resource) {
        fprintf(f, "Usage: musterctl %s COMMAND ...\n\nCommands:\n", resource);
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (strcmp(commands[i].resource, resource) == 0)
                        fprintf(f, "  %-14s %s\n", commands[i].verb, commands[i].summary);
        fprintf(f, "\nmusterctl %s COMMAND --help shows a command's options.\n", resource);
}

static void command_help(FILE *f, const struct ctl_cmd *cmd) {
        fprintf(f, "Usage: musterctl %s%s%s%s%s\n\n%s.\n", cmd->resource, *cmd->verb ? " " : "", cmd->verb,
                *cmd->args ? " " : "", cmd->args, cmd->summary);
        if (*cmd->help)
                fprintf(f, "\n%s%s", strncmp(cmd->help, "  ", 2) == 0 ? "Options:\n" : "", cmd->help);
        fprintf(f, "\n%s\n%s", global_help, exit_help);
}

int ctl_fail(const char *fmt, ...) {
        va_list ap;
        fputs("musterctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return CTL_EXIT_FAIL;
}

int ctl_usage_error(const struct ctl_cmd *cmd, const char *fmt, ...) {
        va_list ap;
        fputs("musterctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        if (cmd)
                fprintf(stderr, "\nTry 'musterctl %s%s%s --help'.\n", cmd->resource, *cmd->verb ? " " : "", cmd->verb);
        else
                fputs("\nTry 'musterctl --help'.\n", stderr);
        return CTL_EXIT_USAGE;
}

int ctl_want_args(const struct ctl_cmd *cmd, int argc, char **argv, int n, const char *what) {
        int have = argc - optind;
        if (have < n)
                return ctl_usage_error(cmd, "%s is missing", what);
        if (have > n)
                return ctl_usage_error(cmd, "unexpected argument \"%s\"", argv[optind + n]);
        return 0;
}

int ctl_opt_interval(const struct ctl_cmd *cmd, const char *arg, double *out) {
        if (ctl_parse_interval(arg, out) < 0)
                return ctl_usage_error(cmd, "--interval needs seconds (0.5, 2, 250ms; at most 3600), not \"%s\"", arg);
        return 0;
}

int ctl_opt_limit(const struct ctl_cmd *cmd, const char *arg, long max, long *out) {
        if (ctl_parse_long(arg, 1, max, out) < 0)
                return ctl_usage_error(cmd, "--limit needs a number from 1 to %ld, not \"%s\"", max, arg);
        return 0;
}

int ctl_opt_names(const struct ctl_cmd *cmd, const char *opt, const char *what, json_object *array, const char *arg,
                  bool allow_empty) {
        int k = ctl_csv_append(array, arg);
        if (k == -ENOMEM)
                return ctl_fail("out of memory");
        if (k < 0 || (!allow_empty && !*arg))
                return ctl_usage_error(cmd, "%s takes %s separated by commas (at most %d), not \"%s\"", opt, what,
                                       CTL_MAX_NAMES, arg);
        return 0;
}

bool ctl_plain_args(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct option *opts,
                    const char **value, int n, const char *what, int *rc) {
        static const struct option global[] = { CTL_GLOBAL_OPTIONS, {} };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts ?: global)) != CTL_OPT_END) {
                if (o == CTL_OPT_HELP || o == CTL_OPT_BAD || !value) {
                        *rc = o == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
                        return false;
                }
                *value = optarg;
        }
        *rc = ctl_want_args(cmd, argc, argv, n, what);
        return *rc == 0;
}

bool ctl_out_args(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const char *empty_msg,
                  const char **out, int n, const char *what, int *rc) {
        static const struct option opts[] = {
                { "server", required_argument, NULL, CTL_OPT_SERVER },
                { "token-file", required_argument, NULL, CTL_OPT_TOKEN_FILE },
                { "ca", required_argument, NULL, CTL_OPT_CA },
                { "no-headers", no_argument, NULL, CTL_OPT_NO_HEADERS },
                { "out", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int o;
        c->o_is_local = true;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP:
                        *rc = CTL_EXIT_OK;
                        return false;
                case 'o':
                        if (!*optarg) {
                                *rc = ctl_usage_error(cmd, "%s", empty_msg);
                                return false;
                        }
                        *out = optarg;
                        break;
                default: /* CTL_OPT_BAD, message printed */
                        *rc = CTL_EXIT_USAGE;
                        return false;
                }
        }
        *rc = ctl_want_args(cmd, argc, argv, n, what);
        return *rc == 0;
}

/* The custom-columns of the last -o custom-columns=, for ctl_print_json;
 * freed at exit. */
static struct customcols output_cols;

static void free_output_cols(void) {
        customcols_free(&output_cols);
}

/* -o FORMAT: 0, or -EINVAL with why in err (a jsonpath template's or a
 * custom-columns spec's fault). */
static int set_output(struct ctl *c, const char *s, char *err, size_t errlen) {
        enum ctl_json_form form = CTL_JSON_AS_IS;
        err[0] = '\0';
        if (strcmp(s, "table") == 0)
                c->output = CTL_OUT_TABLE;
        else if (strcmp(s, "wide") == 0)
                c->output = CTL_OUT_WIDE;
        else if (strcmp(s, "json") == 0)
                c->output = CTL_OUT_JSON;
        else if (strcmp(s, "name") == 0)
                c->output = CTL_OUT_JSON, form = CTL_JSON_NAME;
        else if (strncmp(s, "jsonpath=", 9) == 0) {
                if (jsonpath_check(s + 9, err, errlen) < 0)
                        return -EINVAL;
                c->output = CTL_OUT_JSON, form = CTL_JSON_PATH;
        } else if (strcmp(s, "yaml") == 0)
                c->output = CTL_OUT_JSON, form = CTL_JSON_YAML;
        else if (strncmp(s, "custom-columns=", 15) == 0) {
                struct customcols cols;
                int r = customcols_parse(s + 15, &cols, err, errlen);
                if (r == -ENOMEM)
                        snprintf(err, errlen, "out of memory");
                if (r < 0)
                        return -EINVAL;
                static bool registered;
                if (!registered)
                        registered = atexit(free_output_cols) == 0;
                customcols_free(&output_cols);
                output_cols = cols;
                c->output = CTL_OUT_JSON, form = CTL_JSON_COLUMNS;
        } else
                return -EINVAL;
        /* Every command that prints JSON prints it through ctl_print_json,
         * which gives it the form asked for. */
        ctl_json_form_set(form, form == CTL_JSON_PATH ? s + 9 : NULL, &output_cols);
        c->fmt.wide = c->output == CTL_OUT_WIDE;
        return 0;
}

/* http:// or https:// and a host; kept without trailing slashes. */
static int set_server(struct ctl *c, const char *url) {
        if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
            !url[strncmp(url, "http://", 7) == 0 ? 7 : 8] || strpbrk(url, " \t\r\n?#"))
                return -EINVAL;
        char *s = strdup(url);
        if (!s)
                return -ENOMEM;
        size_t n = strlen(s);
        while (n > 0 && s[n - 1] == '/')
                s[--n] = '\0';
        free(c->server);
        c->server = s;
        return 0;
}

/* getopt's short options: -h, -o, and the letters a command's table gives
 * as an option's value ({"selector", required_argument, NULL, 'l'}). */
static void short_options(const struct ctl_cmd *cmd, const struct option *opts, char *buf, size_t n) {
        size_t k = (size_t) snprintf(buf, n, "%s", cmd ? ":ho:" : "+:ho:");
        for (const struct option *o = opts; o->name && k + 3 < n; o++)
                if (o->val > 0 && o->val < 128 && o->val != 'h' && o->val != 'o' &&
                    ((o->val >= 'a' && o->val <= 'z') || (o->val >= 'A' && o->val <= 'Z'))) {
                        buf[k++] = (char) o->val;
                        if (o->has_arg == required_argument)
                                buf[k++] = ':';
                        buf[k] = '\0';
                }
}

int ctl_next_opt(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct option *opts) {
        char shorts[64];
        short_options(cmd, opts, shorts, sizeof shorts);
        for (;;) {
                opterr = 0;
                int o = getopt_long(argc, argv, shorts, opts, NULL);
                switch (o) {
                case -1:
                        return CTL_OPT_END;
                case 'h':
                        if (cmd)
                                command_help(stdout, cmd);
                        else
                                usage(stdout);
                        return CTL_OPT_HELP;
                case 'o':
                        if (cmd && c->o_is_local)
                                return 'o';
                        char why[256];
                        if (set_output(c, optarg, why, sizeof why) < 0) {
                                if (why[0])
                                        ctl_usage_error(cmd, "-o %s: %s", optarg, why);
                                else
                                        ctl_usage_error(cmd, "-o takes table, wide, json, yaml, name, "
                                                             "jsonpath=TEMPLATE or custom-columns=SPEC, not \"%s\"",
                                                        optarg);
                                return CTL_OPT_BAD;
                        }
                        continue;
                case CTL_OPT_SERVER:
                        if (set_server(c, optarg) < 0) {
                                ctl_usage_error(cmd, "--server needs an http:// or https:// URL, not \"%s\"", optarg);
                                return CTL_OPT_BAD;
                        }
                        continue;
                case CTL_OPT_TOKEN_FILE:
                        c->token_file = optarg;
                        continue;
                case CTL_OPT_CA:
                        c->ca = optarg;
                        continue;
                case CTL_OPT_NO_HEADERS:
                        c->fmt.no_header = true;
                        continue;
                case ':':
                        ctl_usage_error(cmd, "option %s needs a value", argv[optind - 1]);
                        return CTL_OPT_BAD;
                case '?':
                        if (optopt && optopt < 256)
                                ctl_usage_error(cmd, "unknown option -%c", optopt);
                        else
                                ctl_usage_error(cmd, "unknown option %s", argv[optind - 1]);
                        return CTL_OPT_BAD;
                default:
                        return o;
                }
        }
}

char *ctl_read_file(const char *path, size_t max, const char *what) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                ctl_fail("cannot read %s %s: %s", what, path, strerror(errno));
                return NULL;
        }
        if (S_ISDIR(st.st_mode)) {
                ctl_fail("cannot read %s %s: %s", what, path, strerror(EISDIR));
                return NULL;
        }
        char *buf;
        size_t len;
        int r = fd_read_all(fd, S_ISREG(st.st_mode) ? (size_t) st.st_size : 0, max, &buf, &len);
        if (r == -EFBIG)
                ctl_fail("%s %s is larger than %zu bytes", what, path, max);
        else if (r == -ENOMEM)
                ctl_fail("out of memory");
        else if (r < 0)
                ctl_fail("cannot read %s %s: %s", what, path, strerror(-r));
        if (r < 0)
                return NULL;
        if (memchr(buf, '\0', len)) {
                ctl_fail("%s %s is not text", what, path);
                free(buf);
                return NULL;
        }
        return buf;
}

char *ctl_read_value(const char *path, size_t max, const char *what) {
        char *buf = ctl_read_file(path, max, what);
        size_t len = buf ? strlen(buf) : 0;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
                buf[--len] = '\0';
        return buf;
}

int ctl_add_file(json_object *body, const char *key, const char *path, size_t max, const char *what,
                 enum ctl_file_kind kind) {
        char *s = kind == CTL_FILE_VALUE ? ctl_read_value(path, max, what) : ctl_read_file(path, max, what);
        if (!s)
                return CTL_EXIT_FAIL;
        json_object_object_add(body, key, json_object_new_string(s));
        explicit_bzero(s, strlen(s));
        free(s);
        return 0;
}

int ctl_write_secret(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        int r = 0;
        if (fd < 0) {
                r = -errno;
                ctl_fail("cannot write %s: %s", path, strerror(errno));
                return r;
        }
        /* An existing file keeps its mode through O_CREAT: make it private
         * (a regular file; /dev/stdout or a FIFO is the caller's). */
        struct stat st;
        if (fstat(fd, &st) < 0 || (S_ISREG(st.st_mode) && fchmod(fd, 0600) < 0))
                r = -errno;
        if (r == 0)
                r = fd_write_full(fd, text, strlen(text));
        if (r == 0 && write(fd, "\n", 1) != 1)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0)
                ctl_fail("cannot write %s: %s", path, strerror(-r));
        return r;
}

static const struct ctl_cmd *find_command(const char *resource, const char *verb) {
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (strcmp(commands[i].resource, resource) == 0 && (!verb || strcmp(commands[i].verb, verb) == 0))
                        return &commands[i];
        return NULL;
}

static bool is_help(const char *s) {
        return strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0 || strcmp(s, "help") == 0;
}

/* The width of what is printed, decided here once (DECISIONS.md D11):
 * $COLUMNS when it is set and valid, else the terminal's on stdout, else
 * none (piped: whole cells for scripts), as kubectl and lsblk do. */
static unsigned output_width(void) {
        struct winsize ws = { 0 };
        bool tty = isatty(STDOUT_FILENO) == 1;
        if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
                ws.ws_col = 0;
        return ctl_output_width(getenv("COLUMNS"), tty, ws.ws_col);
}

/* The locale's character set, the output's width, the default output and
 * the server ($MUSTER_SERVER). 0, or CTL_EXIT_USAGE with the error printed. */
static int setup(struct ctl *c) {
        /* Only the character set: "…" where it can be shown, "~" elsewhere. */
        setlocale(LC_CTYPE, "");
        c->fmt.ellipsis = strcmp(nl_langinfo(CODESET), "UTF-8") == 0 ? "\xe2\x80\xa6" : "~";
        c->fmt.width = output_width();
        char unused[8];
        set_output(c, "table", unused, sizeof unused);
        const char *env = getenv("MUSTER_SERVER");
        if (set_server(c, env && *env ? env : CTL_DEFAULT_SERVER) < 0)
                return ctl_usage_error(NULL, "$MUSTER_SERVER needs an http:// or https:// URL, not \"%s\"", env);
        return 0;
}

/* The options before the command. true to go on; false with *rc the exit
 * status (after --help, --version or a usage error). */
static bool global_options(struct ctl *c, int argc, char **argv, int *rc) {
        static const struct option opts[] = {
                CTL_GLOBAL_OPTIONS,
                { "version", no_argument, NULL, CTL_OPT_VERSION },
                {},
        };
        /* ctl_next_opt applies the global options itself: what comes back
         * ends the parse. */
        optind = 0;
        int o = ctl_next_opt(c, NULL, argc, argv, opts);
        if (o == CTL_OPT_END)
                return true;
        if (o == CTL_OPT_VERSION)
                printf("musterctl %s\n", MUSTER_VERSION);
        *rc = o == CTL_OPT_HELP || o == CTL_OPT_VERSION ? CTL_EXIT_OK : CTL_EXIT_USAGE;
        return false;
}

/* The command that argv[optind..] names (RESOURCE VERB, or RESOURCE alone
 * for one without verbs); its arguments start at argv[*first], its name.
 * NULL with *rc the exit status after a help or a usage error. */
static const struct ctl_cmd *pick_command(int argc, char **argv, int *first, int *rc) {
        *rc = CTL_EXIT_USAGE;
        if (optind >= argc) {
                usage(stderr);
                return NULL;
        }
        const char *resource = argv[optind];
        if (is_help(resource)) {
                usage(stdout);
                *rc = CTL_EXIT_OK;
                return NULL;
        }
        if (!find_command(resource, NULL)) {
                ctl_usage_error(NULL, "unknown command \"%s\"", resource);
                return NULL;
        }
        /* A command without a verb takes its options right after its name. */
        const struct ctl_cmd *cmd = find_command(resource, "");
        *first = optind;
        if (cmd)
                return cmd;
        if (optind + 1 >= argc || is_help(argv[optind + 1])) {
                bool asked = optind + 1 < argc;
                resource_usage(asked ? stdout : stderr, resource);
                *rc = asked ? CTL_EXIT_OK : CTL_EXIT_USAGE;
                return NULL;
        }
        cmd = find_command(resource, argv[optind + 1]);
        if (!cmd)
                ctl_usage_error(NULL, "unknown command \"%s %s\"", resource, argv[optind + 1]);
        *first = optind + 1;
        return cmd;
}

/* cmd over argv (argv[0] its name) with libcurl set up around it; the exit
 * status, which a failure to write the output makes a failure. */
static int run_command(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
                return ctl_fail("cannot initialise libcurl");
        optind = 0;
        ctl_json_resource_set(cmd->resource);
        int r = cmd->run(c, cmd, argc, argv);
        if (r == CTL_EXIT_FAIL && c->fail_exit)
                r = c->fail_exit;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        curl_global_cleanup();
        if (fflush(stdout) != 0 && r == CTL_EXIT_OK)
                r = ctl_fail("cannot write the output: %s", strerror(errno));
        return r;
}

int ctl_main(int argc, char **argv) {
        struct ctl c = { 0 };
        const struct ctl_cmd *cmd;
        int first = 0;
        int r = setup(&c);

        if (r == 0 && global_options(&c, argc, argv, &r) && (cmd = pick_command(argc, argv, &first, &r)))
                r = run_command(&c, cmd, argc - first, argv + first);
        free(c.server);
        if (c.token) {
                explicit_bzero(c.token, strlen(c.token));
                free(c.token);
        }
        return r;
}
