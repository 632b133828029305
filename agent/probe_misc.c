/* Small probes: hostname, PCI display controllers, TPM version. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "probe.h"

int probe_hostname(const struct sysroot *sr, char **hostname) {
        char buf[256];
        if (sr_read_str(sr, "/proc/sys/kernel/hostname", buf, sizeof buf) > 0 ||
            sr_read_str(sr, "/etc/hostname", buf, sizeof buf) > 0) {
                for (char *c = buf; *c; c++)
                        if (!isprint((unsigned char) *c))
                                return -EINVAL;
                *hostname = strdup(buf);
        }
        return 0;
}

static int cmp_gpu(const void *a, const void *b) {
        return strcmp(((const struct inv_gpu *) a)->pci_address, ((const struct inv_gpu *) b)->pci_address);
}

int probe_gpus(const struct sysroot *sr, struct inventory *inv) {
        _cleanup_closedir_ DIR *d = sr_opendir(sr, "/sys/bus/pci/devices");
        struct dirent *de;
        int64_t total = 0;
        char buf[64];

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                int64_t cls;
                if (sr_read_i64f(sr, &cls, "/sys/bus/pci/devices/%s/class", de->d_name) < 0)
                        continue;
                if (((cls >> 16) & 0xff) != 0x03) /* PCI base class 03: display controller */
                        continue;
                total++;
                if (inv->n_gpus >= INV_MAX_GPUS)
                        continue;
                struct inv_gpu *g = inv_array_append((void **) &inv->gpus, &inv->n_gpus, sizeof *g);
                if (!g)
                        return -ENOMEM;
                g->pci_address = strdup(de->d_name);
                char cl[16];
                snprintf(cl, sizeof cl, "0x%06llx", (unsigned long long) cls & 0xffffff);
                g->class_id = strdup(cl);
                if (sr_read_strf(sr, buf, sizeof buf, "/sys/bus/pci/devices/%s/vendor", de->d_name) > 0)
                        g->vendor_id = strdup(buf);
                if (sr_read_strf(sr, buf, sizeof buf, "/sys/bus/pci/devices/%s/device", de->d_name) > 0)
                        g->device_id = strdup(buf);
                char path[512];
                snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/driver", de->d_name);
                if (sr_readlink_base(sr, path, buf, sizeof buf) > 0)
                        g->driver = strdup(buf);
                if (!g->pci_address)
                        return -ENOMEM;
        }
        if (inv->n_gpus > 1)
                qsort(inv->gpus, inv->n_gpus, sizeof *inv->gpus, cmp_gpu);
        if (total > (int64_t) inv->n_gpus)
                inv_trunc_note(&inv->truncated, "gpus", total, (int64_t) inv->n_gpus);
        return 0;
}

int probe_tpm(const struct sysroot *sr, char **version) {
        char buf[32];
        /* Linux >= 5.6 exposes the major version; older kernels: TPM 2.0
         * devices have a tpmrm resource manager node, 1.2 ones do not. */
        if (sr_read_str(sr, "/sys/class/tpm/tpm0/tpm_version_major", buf, sizeof buf) > 0) {
                if (strcmp(buf, "2") == 0)
                        *version = strdup("2.0");
                else if (strcmp(buf, "1") == 0)
                        *version = strdup("1.2");
        } else if (sr_exists(sr, "/sys/class/tpm/tpm0")) {
                *version = strdup(sr_exists(sr, "/sys/class/tpmrm/tpmrm0") ? "2.0" : "1.2");
        }
        return 0;
}
