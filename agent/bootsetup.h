/* `muster-agent boot-setup`: what the live system takes from its boot
 * config before the network and the SSH server start (the ISO's
 * muster-boot-setup.service, ordered before systemd-networkd): root's
 * authorized_keys from the infra-env's SSH key, which muster-ssh.service
 * (dropbear) then serves (without a key no SSH server starts), and the
 * static network configs (staticnet.h) of this machine's NICs, by MAC, in
 * /run/systemd/network for systemd-networkd. */
#pragma once

struct bootsetup_options {
        const char *boot_config;   /* NULL: AGENTCONF_DEFAULT_BOOT_CONFIG */
        const char *initrd_config; /* NULL: AGENTCONF_DEFAULT_INITRD_CONFIG */
        const char *root;          /* where "/" is (tests: a folder); NULL: "/" */
};

/* 0: done (or no boot config: nothing to do); 1: the config could not be
 * read or used (logged, with the file). */
int bootsetup_run(const struct bootsetup_options *o);
