/* Runs every probe into one inventory, then derives what needs several of
 * them: the host id (SMBIOS, board serial, NICs) and the PXE interface. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "diskrules.h"
#include "hostid.h"
#include "probe.h"
#include "smbios.h"

static void choose_host_id(struct inventory *inv, const char *board_serial) {
        const char **macs = calloc(inv->n_interfaces + 1, sizeof *macs);
        size_t n = 0;
        bool any_permanent = false;

        if (!macs)
                return;
        for (size_t i = 0; i < inv->n_interfaces; i++)
                any_permanent |= inv->interfaces[i].mac_is_permanent == TRI_TRUE;
        /* Physical NICs only: bonds, bridges and VLANs borrow their MACs. */
        for (size_t i = 0; i < inv->n_interfaces; i++) {
                const struct inv_interface *it = &inv->interfaces[i];
                if (!it->mac_address || !it->type || strcmp(it->type, "physical") != 0)
                        continue;
                if (any_permanent && it->mac_is_permanent != TRI_TRUE)
                        continue;
                macs[n++] = it->mac_address;
        }
        const char *source = NULL;
        if (hostid_choose(inv->system_vendor.uuid, board_serial, macs, n, &inv->host_id, &source) == 0)
                inv->host_id_source = strdup(source);
        free(macs);
}

/* BOOTIF names a MAC; report the interface that has it when there is one. */
static void resolve_pxe(struct inventory *inv) {
        char *mac = inv->boot.pxe_interface;
        if (!mac)
                return;
        for (size_t i = 0; i < inv->n_interfaces; i++)
                if (inv->interfaces[i].mac_address && inv->interfaces[i].name &&
                    strcasecmp(inv->interfaces[i].mac_address, mac) == 0) {
                        inv->boot.pxe_interface = strdup(inv->interfaces[i].name);
                        free(mac);
                        return;
                }
}

int inventory_probe(const struct probe_options *opts, struct inventory *inv) {
        struct sysroot sr;
        struct smbios_info smbios;
        _cleanup_free_ char *board_serial = NULL;
        int r;

        inventory_init(inv);
        r = sysroot_open(&sr, opts->sysroot);
        if (r < 0)
                return r;
        probe_smbios(&sr, &smbios);
        probe_hostname(&sr, &inv->hostname);
        probe_cpu(&sr, &smbios, &inv->cpu);
        probe_memory(&sr, &smbios, &inv->memory);
        probe_system(&sr, &smbios, &inv->cpu, &inv->system_vendor, &board_serial);
        probe_boot(&sr, &inv->boot);
        int rs[] = {
                probe_disks(&sr, opts->min_install_bytes > 0 ? opts->min_install_bytes
                                                             : DISK_MIN_INSTALL_BYTES_DEFAULT, inv),
                probe_net(&sr, inv),
                probe_gpus(&sr, inv),
                probe_tpm(&sr, &inv->tpm_version),
        };
        for (size_t i = 0; i < sizeof rs / sizeof *rs; i++)
                if (rs[i] == -ENOMEM)
                        r = -ENOMEM;
        smbios_info_free(&smbios);
        sysroot_close(&sr);
        choose_host_id(inv, board_serial);
        resolve_pxe(inv);
        /* Only running out of memory fails the document: anything a probe
         * could not read has simply stayed unset. */
        return r;
}
