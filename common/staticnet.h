/* Per-host static network configs of an infra-env (DECISIONS.md D7):
 *   [{"mac_addresses": ["52:54:00:12:34:56", ...],
 *     "files": {"NAME.network": "TEXT", "NAME.netdev": "...", ...}}, ...]
 * where the files are systemd-networkd units. The discovery image's
 * boot-setup writes the files of the entry whose MACs match one of the
 * machine's NICs into /run/systemd/network (named STATICNET_PREFIX + NAME,
 * so they come before the image's DHCP default); NICs that match none keep
 * DHCP. Checked at the door (musterd) and again where written (the agent):
 * MACs well formed and in one entry only, file names plain, each file an
 * ini text of the sections networkd knows for its kind, addresses, gateways,
 * DNS servers and MACs that parse, a [Match] in every .network and .link
 * file (an empty one would take every NIC). Pure. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATICNET_MAX_HOSTS 1024
#define STATICNET_MAX_MACS 16         /* per host */
#define STATICNET_MAX_FILES 16        /* per host */
#define STATICNET_NAME_MAX 64         /* bytes of a file name */
#define STATICNET_FILE_MAX (16 * 1024)
#define STATICNET_PREFIX "05-muster-"

struct staticnet_file {
        char *name;
        char *text;
};

struct staticnet_host {
        char (*macs)[18];             /* "xx:xx:xx:xx:xx:xx", lower case */
        size_t n_macs;
        struct staticnet_file *files;
        size_t n_files;
};

struct staticnet {
        struct staticnet_host *hosts;
        size_t n;
};

/* v (a JSON array as above) checked into *out: 0, -EINVAL with the reason
 * in err naming the entry (its index and first MAC), the file and the line,
 * -ENOMEM. */
int staticnet_from_json(json_object *v, struct staticnet *out, char *err, size_t errlen);
/* The same, from JSON text. */
int staticnet_parse(const char *text, struct staticnet *out, char *err, size_t errlen);
/* sn as JSON (MACs lower case, files by name): a new array, or NULL. */
json_object *staticnet_to_json(const struct staticnet *sn);
void staticnet_free(struct staticnet *sn);
/* One unit file: name (NAME.network, .netdev or .link: [A-Za-z0-9_.@-],
 * not starting with '.') and text; 0 or -EINVAL with "NAME line N: ..."
 * in err. */
int staticnet_check_file(const char *name, const char *text, char *err, size_t errlen);
/* A MAC address "xx:xx:xx:xx:xx:xx" (either case; '-' also taken as
 * separator) into out in lower case with ':'. */
bool staticnet_mac_canonical(const char *s, char out[18]);
/* The entry whose MACs include mac (canonical), or NULL. */
const struct staticnet_host *staticnet_find(const struct staticnet *sn, const char *mac);
