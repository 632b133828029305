/* The managed operands of a payload (payload_operands.h). */
#include "svc/payload_operands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "domain/operators_payload.h"
#include "store/store.h"

int operands_manifests(struct svc *sv, const struct cluster *c, const struct resolve_plan *plan,
                       struct manifest_list *out, char *err, size_t errlen) {
        struct operand_record_list l;
        int r = store_operand_list(sv->store, c->id, &l);
        if (r < 0)
                return errmsg(err, errlen, r, "listing the operands of cluster %s failed", c->id);
        for (size_t i = 0; i < l.n && r == 0; i++) {
                const struct operand_record *o = &l.v[i];
                size_t place = 999;
                for (size_t k = 0; plan && k < plan->n_steps; k++)
                        if (strcmp(plan->steps[k].package, o->package) == 0)
                                place = k;
                const char *ext = strrchr(o->file, '.');
                char stem[MANIFEST_MAX_FILE_NAME + 1], name[MANIFEST_MAX_FILE_NAME + 1], why[256];
                snprintf(stem, sizeof stem, "%s_%s_%s%s", o->kind, o->namespace ? o->namespace : "", o->name,
                         ext && strcmp(ext, ".json") == 0 ? ".json" : ".yaml");
                operators_file_name(name, sizeof name, OPERANDS_FILE_PREFIX, place, o->package, stem);
                if ((r = manifest_parse_file(name, o->content, strlen(o->content), out, why, sizeof why)) < 0)
                        r = errmsg(err, errlen, r, "operand %s %s of cluster %s is not a manifest: %s", o->kind, o->name,
                                   c->id, why);
        }
        operand_record_list_free(&l);
        return r;
}
