/* The store's schema (schema.h), written once: the migrations both
 * databases run, each taking the schema from one version to the next. Where
 * SQLite's words and PostgreSQL's differ the text has a token (@INT@,
 * @BLOB@, @AUTO_ID@, @ROWID@: schema.h), which each driver's dialect
 * rewrites as it opens its database, as pgtext.c rewrites the operations'
 * "?" for PostgreSQL; what one database alone needs (SQLite's triggers,
 * PostgreSQL's trigger functions and the SQLite functions the operations
 * call) is a part for it alone. */
#include "store/sql/schema.h"
#include "store/sql/sqldb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One part of a migration: its text, for both databases (db 0) or one. */
struct schema_part {
        int db;
        const char *sql;
};

#define BOTH 0
/* A migration of one part, for both databases. */
#define SHARED(sql) ((const struct schema_part[]) { { BOTH, sql }, { BOTH, NULL } })

/* Migration i + 1 takes the schema from version i to i + 1, in one
 * transaction; its parts run in order, those of the other database left
 * out. Append only; never edit a released entry (a database made by it
 * would differ from one migrated to it). Times are canonical RFC 3339 UTC
 * text, so text order is time order. `seq` is the list order and the keyset
 * cursor; ids are the resources' UUIDs. SQLite keeps the text of each CREATE
 * as written here (sqlite_master), so its dialect's words are the ones its
 * databases were made with.
 *
 * A new migration: SHARED("...") at the end, in the words both databases
 * take, with @INT@ for an integer column, @BLOB@ for bytes, @AUTO_ID@ for a
 * numbered primary key; parts for one database alone where the words
 * cannot be shared (a trigger); and STORE_SCHEMA_VERSION (sqldb.h) one
 * more. unit/test_schema/postgres compares the schemas both make. */
static const struct schema_part *const migrations[] = {
        /* 1: the first schema */
        (const struct schema_part[]) {
                { BOTH,
                        "CREATE TABLE clusters ("
                        "  seq @AUTO_ID@,"
                        "  id TEXT NOT NULL UNIQUE,"
                        "  name TEXT NOT NULL,"
                        "  owner TEXT NOT NULL,"
                        "  release_version TEXT,"
                        "  base_dns_domain TEXT,"
                        "  machine_network_cidr TEXT,"
                        "  api_vip TEXT,"
                        "  ingress_vip TEXT,"
                        "  high_availability_mode TEXT NOT NULL DEFAULT 'Full',"
                        "  pull_secret TEXT,"
                        "  labels TEXT NOT NULL DEFAULT '{}',"
                        "  status TEXT NOT NULL,"
                        "  status_info TEXT,"
                        "  validations TEXT NOT NULL DEFAULT '[]',"
                        "  created_at TEXT NOT NULL,"
                        "  updated_at TEXT NOT NULL);"
                        "CREATE INDEX clusters_owner ON clusters(owner, seq);"
                        "CREATE TABLE infra_envs ("
                        "  seq @AUTO_ID@,"
                        "  id TEXT NOT NULL UNIQUE,"
                        "  name TEXT NOT NULL,"
                        "  owner TEXT NOT NULL,"
                        "  cluster_id TEXT REFERENCES clusters(id) ON DELETE SET NULL,"
                        "  cpu_architecture TEXT NOT NULL,"
                        "  pull_secret TEXT,"
                        "  ssh_authorized_key TEXT,"
                        "  http_proxy TEXT,"
                        "  https_proxy TEXT,"
                        "  no_proxy TEXT,"
                        "  ntp_sources TEXT,"
                        "  token_generation @INT@ NOT NULL DEFAULT 1,"
                        "  created_at TEXT NOT NULL,"
                        "  updated_at TEXT NOT NULL);"
                        "CREATE INDEX infra_envs_owner ON infra_envs(owner, seq);"
                        "CREATE INDEX infra_envs_cluster ON infra_envs(cluster_id);"
                        "CREATE TABLE hosts ("
                        "  seq @AUTO_ID@,"
                        "  infra_env_id TEXT NOT NULL REFERENCES infra_envs(id) ON DELETE CASCADE,"
                        "  id TEXT NOT NULL,"
                        "  owner TEXT,"
                        "  cluster_id TEXT REFERENCES clusters(id) ON DELETE RESTRICT,"
                        "  role TEXT NOT NULL DEFAULT 'auto',"
                        "  requested_hostname TEXT,"
                        "  installation_disk_id TEXT,"
                        "  inventory TEXT,"
                        "  inv_hostname TEXT,"
                        "  inv_cpu_count @INT@,"
                        "  inv_memory_bytes @INT@,"
                        "  inv_max_disk_bytes @INT@,"
                        "  status TEXT NOT NULL,"
                        "  status_info TEXT,"
                        "  validations TEXT NOT NULL DEFAULT '[]',"
                        "  progress_stage TEXT,"
                        "  progress_percent @INT@,"
                        "  progress_info TEXT,"
                        "  checked_in_at TEXT,"
                        "  registered_at TEXT,"
                        "  discovery_agent_version TEXT,"
                        "  reregister_pending @INT@ NOT NULL DEFAULT 0,"
                        "  created_at TEXT NOT NULL,"
                        "  updated_at TEXT NOT NULL,"
                        "  UNIQUE (infra_env_id, id));"
                        "CREATE INDEX hosts_cluster ON hosts(cluster_id, seq);"
                        "CREATE INDEX hosts_checked_in ON hosts(checked_in_at);"
                        "CREATE TABLE events ("
                        "  id @AUTO_ID@,"
                        "  time TEXT NOT NULL,"
                        "  severity TEXT NOT NULL,"
                        "  category TEXT NOT NULL,"
                        "  infra_env_id TEXT,"
                        "  cluster_id TEXT,"
                        "  host_id TEXT,"
                        "  message TEXT NOT NULL);"
                        "CREATE INDEX events_infra_env ON events(infra_env_id, id);"
                        "CREATE INDEX events_cluster ON events(cluster_id, id);"
                        "CREATE INDEX events_host ON events(host_id, id);" },
                /* SQLite's functions that the operations use (sqldb.h). A
                 * JSON path here is what they write: '$."name"', one key. */
                { SCHEMA_PG,
                        "CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS"
                        "  $$ SELECT strpos(haystack, needle) $$;"
                        "CREATE FUNCTION json(t TEXT) RETURNS JSON LANGUAGE sql IMMUTABLE AS $$ SELECT t::json $$;"
                        "CREATE FUNCTION json_path_key(path TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS"
                        "  $$ SELECT CASE WHEN path LIKE '$.\"%\"' THEN substr(path, 4, length(path) - 4)"
                        "  ELSE substr(path, 3) END $$;"
                        "CREATE FUNCTION json_set(doc TEXT, path TEXT, val JSON) RETURNS TEXT LANGUAGE sql IMMUTABLE AS"
                        "  $$ SELECT (coalesce(doc, '{}')::jsonb || jsonb_build_object(json_path_key(path), val::jsonb))::text $$;"
                        "CREATE FUNCTION json_remove(doc TEXT, path TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS"
                        "  $$ SELECT (doc::jsonb - json_path_key(path))::text $$;"
                        "CREATE FUNCTION json_type(doc TEXT, path TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS"
                        "  $$ SELECT jsonb_typeof(doc::jsonb -> json_path_key(path)) $$;" },
                { BOTH, NULL } },
        /* 2: the latest network step results of a bound host */
        SHARED("ALTER TABLE hosts ADD COLUMN step_results TEXT NOT NULL DEFAULT '{}';"),
        /* 3: releases, capabilities, payload revisions (DESIGN §6-7). seq of a
         * manifest is its release order (file name, then document index). */
        SHARED("CREATE TABLE releases (@ROWID@"
        "  version TEXT PRIMARY KEY,"
        "  info_json TEXT NOT NULL,"
        "  created_at TEXT NOT NULL);"
        "CREATE TABLE release_manifests ("
        "  release_version TEXT NOT NULL REFERENCES releases(version) ON DELETE CASCADE,"
        "  seq @INT@ NOT NULL,"
        "  file TEXT NOT NULL,"
        "  doc_index @INT@ NOT NULL,"
        "  path TEXT NOT NULL,"
        "  api_version TEXT NOT NULL,"
        "  \"group\" TEXT NOT NULL,"
        "  version TEXT NOT NULL,"
        "  kind TEXT NOT NULL,"
        "  namespace TEXT,"
        "  name TEXT NOT NULL,"
        "  annotations_json TEXT NOT NULL DEFAULT '[]',"
        "  content TEXT NOT NULL,"
        "  PRIMARY KEY (release_version, seq));"
        "CREATE TABLE payload_revisions ("
        "  cluster_id TEXT NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,"
        "  revision @INT@ NOT NULL,"
        "  digest TEXT NOT NULL,"
        "  signature TEXT NOT NULL,"
        "  canonical TEXT NOT NULL,"
        "  release_version TEXT NOT NULL,"
        "  manifest_count @INT@ NOT NULL,"
        "  created_at TEXT NOT NULL,"
        "  PRIMARY KEY (cluster_id, revision));"
        "ALTER TABLE clusters ADD COLUMN capabilities_spec_json TEXT;"
        "ALTER TABLE clusters ADD COLUMN capabilities_status_json TEXT;"
        "ALTER TABLE clusters ADD COLUMN conditions_json TEXT NOT NULL DEFAULT '[]';"
        "ALTER TABLE clusters ADD COLUMN payload_revision @INT@ NOT NULL DEFAULT 0;"
        "ALTER TABLE clusters ADD COLUMN feature_set TEXT NOT NULL DEFAULT 'Default';"
        "ALTER TABLE hosts ADD COLUMN applied_revision @INT@ NOT NULL DEFAULT 0;"
        "CREATE INDEX clusters_release ON clusters(release_version);"),
        /* 4: people's tokens, for listing and revocation (DECISIONS.md D5). id is
         * the token's jti; the token itself is never stored. */
        SHARED("CREATE TABLE tokens ("
        "  seq @AUTO_ID@,"
        "  id TEXT NOT NULL UNIQUE,"
        "  role TEXT NOT NULL,"
        "  owner TEXT NOT NULL,"
        "  created_at TEXT NOT NULL,"
        "  expires_at TEXT NOT NULL,"
        "  revoked_at TEXT);"
        "CREATE INDEX tokens_owner ON tokens(owner, role);"),
        /* 5: a cluster's CPU architecture (DECISIONS.md D6); clusters made before
         * were x86_64, the only architecture infra-envs defaulted to. */
        SHARED("ALTER TABLE clusters ADD COLUMN cpu_architecture TEXT NOT NULL DEFAULT 'x86_64';"),
        /* 6: each host's own token generation (DECISIONS.md D6): its installed
         * system's node agent holds a host token, rotated per host. */
        SHARED("ALTER TABLE hosts ADD COLUMN token_generation @INT@ NOT NULL DEFAULT 1;"),
        /* 7: an installation cancelled by the user: the host's agent is
         * sent stop-installation until it answers (DECISIONS.md D6). */
        SHARED("ALTER TABLE hosts ADD COLUMN stop_pending @INT@ NOT NULL DEFAULT 0;"),
        /* 8: operator catalogs (DESIGN §8): the files each was added from,
         * in their canonical form, and what they hold. */
        SHARED("CREATE TABLE catalogs ("
        "  seq @AUTO_ID@,"
        "  id TEXT NOT NULL UNIQUE,"
        "  name TEXT NOT NULL UNIQUE,"
        "  priority @INT@ NOT NULL,"
        "  owner TEXT NOT NULL,"
        "  digest TEXT NOT NULL,"
        "  files @BLOB@ NOT NULL,"
        "  n_files @INT@ NOT NULL,"
        "  n_packages @INT@ NOT NULL,"
        "  n_channels @INT@ NOT NULL,"
        "  n_bundles @INT@ NOT NULL,"
        "  n_manifests @INT@ NOT NULL,"
        "  n_ignored @INT@ NOT NULL,"
        "  created_at TEXT NOT NULL);"
        "CREATE INDEX catalogs_order ON catalogs(priority, name);"),
        /* 9: clusters' operator subscriptions (DESIGN §8), one per package;
         * they go with their cluster. */
        SHARED("CREATE TABLE subscriptions ("
        "  seq @AUTO_ID@,"
        "  id TEXT NOT NULL UNIQUE,"
        "  cluster_id TEXT NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,"
        "  package TEXT NOT NULL,"
        "  channel TEXT,"
        "  catalog TEXT,"
        "  version_range TEXT,"
        "  skip_dependencies @INT@ NOT NULL DEFAULT 0,"
        "  owner TEXT NOT NULL,"
        "  created_at TEXT NOT NULL,"
        "  UNIQUE (cluster_id, package));"),
        /* 10: add-ons (DESIGN §10): proxies, the releases musterd keeps on
         * each selected cluster (they go with their cluster), and what each
         * node agent found in its manifest directory that muster did not
         * write. */
        SHARED("CREATE TABLE addon_proxies ("
        "  seq @AUTO_ID@,"
        "  id TEXT NOT NULL UNIQUE,"
        "  name TEXT NOT NULL UNIQUE,"
        "  owner TEXT NOT NULL,"
        "  spec TEXT NOT NULL,"
        "  prev_spec TEXT,"
        "  generation @INT@ NOT NULL,"
        "  rollback_generation @INT@ NOT NULL DEFAULT 0,"
        "  paused @INT@ NOT NULL DEFAULT 0,"
        "  failure_base @INT@ NOT NULL DEFAULT 0,"
        "  deleting @INT@ NOT NULL DEFAULT 0,"
        "  conditions TEXT,"
        "  created_at TEXT NOT NULL,"
        "  updated_at TEXT NOT NULL);"
        "CREATE TABLE addon_releases ("
        "  seq @AUTO_ID@,"
        "  proxy_id TEXT NOT NULL REFERENCES addon_proxies(id) ON DELETE CASCADE,"
        "  cluster_id TEXT NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,"
        "  content TEXT NOT NULL,"
        "  prev_content TEXT,"
        "  revision @INT@ NOT NULL,"
        "  applied_revision @INT@ NOT NULL DEFAULT 0,"
        "  payload_revision @INT@ NOT NULL DEFAULT 0,"
        "  generation @INT@ NOT NULL DEFAULT 0,"
        "  status TEXT NOT NULL,"
        "  message TEXT,"
        "  conflict @INT@ NOT NULL DEFAULT 0,"
        "  started_at @INT@ NOT NULL DEFAULT 0,"
        "  applied_at @INT@ NOT NULL DEFAULT 0,"
        "  created_at TEXT NOT NULL,"
        "  updated_at TEXT NOT NULL,"
        "  UNIQUE (proxy_id, cluster_id));"
        "CREATE INDEX addon_releases_cluster ON addon_releases(cluster_id);"
        "CREATE TABLE host_found ("
        "  infra_env_id TEXT NOT NULL,"
        "  host_id TEXT NOT NULL,"
        "  found TEXT NOT NULL,"
        "  updated_at TEXT NOT NULL,"
        "  PRIMARY KEY (infra_env_id, host_id),"
        "  FOREIGN KEY (infra_env_id, host_id) REFERENCES hosts(infra_env_id, id) ON DELETE CASCADE);"),
        /* 11: operands applied through musterd (DESIGN §9), which go with
         * their cluster, and each subscription's cleanup setting. */
        SHARED("CREATE TABLE operands ("
        "  seq @AUTO_ID@,"
        "  id TEXT NOT NULL UNIQUE,"
        "  cluster_id TEXT NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,"
        "  package TEXT NOT NULL,"
        "  grp TEXT NOT NULL,"
        "  version TEXT NOT NULL,"
        "  kind TEXT NOT NULL,"
        "  namespace TEXT NOT NULL DEFAULT '',"
        "  name TEXT NOT NULL,"
        "  file TEXT NOT NULL,"
        "  content TEXT NOT NULL,"
        "  owner TEXT NOT NULL,"
        "  created_at TEXT NOT NULL,"
        "  UNIQUE (cluster_id, grp, kind, namespace, name));"
        "ALTER TABLE subscriptions ADD COLUMN cleanup @INT@ NOT NULL DEFAULT 0;"),
        /* 12: the uninstall under way of a subscription (its operands'
         * cleanup, DESIGN §9), JSON text. */
        SHARED("ALTER TABLE subscriptions ADD COLUMN uninstall TEXT;"),
        /* 13 (DESIGN §12): each infra-env's host count, kept by triggers, so
         * that a registration checks [infraenv] max_hosts without counting
         * the infra-env's hosts; and the inventory in a table of its own:
         * a host's row stays a few hundred bytes, so reading its status,
         * validations or check-in time, or scanning hosts for a filter,
         * no longer walks the inventory's overflow pages; and each host's
         * name (requested, else the inventory's; lower case) in a narrow
         * table kept by triggers, which the hostname filter scans instead of
         * the hosts. */
        (const struct schema_part[]) {
                { BOTH, "ALTER TABLE infra_envs ADD COLUMN host_count @INT@ NOT NULL DEFAULT 0;"
                        "UPDATE infra_envs SET host_count = (SELECT count(*) FROM hosts WHERE hosts.infra_env_id = infra_envs.id);" },
                { SCHEMA_SQLITE,
                        "CREATE TRIGGER hosts_count_insert AFTER INSERT ON hosts BEGIN "
                        "  UPDATE infra_envs SET host_count = host_count + 1 WHERE id = NEW.infra_env_id; END;"
                        "CREATE TRIGGER hosts_count_delete AFTER DELETE ON hosts BEGIN "
                        "  UPDATE infra_envs SET host_count = host_count - 1 WHERE id = OLD.infra_env_id; END;" },
                { BOTH, "CREATE TABLE host_inventories ("
                        "  host_seq @INT@ PRIMARY KEY REFERENCES hosts(seq) ON DELETE CASCADE,"
                        "  inventory TEXT NOT NULL);"
                        "INSERT INTO host_inventories (host_seq, inventory) SELECT seq, inventory FROM hosts WHERE inventory IS NOT NULL;"
                        "ALTER TABLE hosts DROP COLUMN inventory;"
                        "CREATE TABLE host_names ("
                        "  seq @INT@ PRIMARY KEY REFERENCES hosts(seq) ON DELETE CASCADE,"
                        "  name TEXT NOT NULL);"
                        "INSERT INTO host_names (seq, name) SELECT seq, lower(coalesce(requested_hostname, inv_hostname, '')) FROM hosts;" },
                { SCHEMA_SQLITE,
                        "CREATE TRIGGER hosts_name_insert AFTER INSERT ON hosts BEGIN "
                        "  INSERT INTO host_names (seq, name) "
                        "  VALUES (NEW.seq, lower(coalesce(NEW.requested_hostname, NEW.inv_hostname, ''))); END;"
                        "CREATE TRIGGER hosts_name_update AFTER UPDATE OF requested_hostname, inv_hostname ON hosts BEGIN "
                        "  UPDATE host_names SET name = lower(coalesce(NEW.requested_hostname, NEW.inv_hostname, '')) "
                        "  WHERE seq = NEW.seq; END;" },
                /* PostgreSQL's triggers run a function: one on insert for
                 * the count and the name. */
                { SCHEMA_PG,
                        "CREATE FUNCTION hosts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        "  UPDATE infra_envs SET host_count = host_count + 1 WHERE id = NEW.infra_env_id;"
                        "  INSERT INTO host_names (seq, name)"
                        "  VALUES (NEW.seq, lower(coalesce(NEW.requested_hostname, NEW.inv_hostname, '')));"
                        "  RETURN NULL; END $$;"
                        "CREATE TRIGGER hosts_insert AFTER INSERT ON hosts FOR EACH ROW EXECUTE FUNCTION hosts_inserted();"
                        "CREATE FUNCTION hosts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        "  UPDATE infra_envs SET host_count = host_count - 1 WHERE id = OLD.infra_env_id;"
                        "  RETURN NULL; END $$;"
                        "CREATE TRIGGER hosts_delete AFTER DELETE ON hosts FOR EACH ROW EXECUTE FUNCTION hosts_deleted();"
                        "CREATE FUNCTION hosts_renamed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        "  UPDATE host_names SET name = lower(coalesce(NEW.requested_hostname, NEW.inv_hostname, ''))"
                        "  WHERE seq = NEW.seq;"
                        "  RETURN NULL; END $$;"
                        "CREATE TRIGGER hosts_name_update AFTER UPDATE OF requested_hostname, inv_hostname ON hosts"
                        "  FOR EACH ROW EXECUTE FUNCTION hosts_renamed();" },
                { BOTH, NULL } },
        /* 14: an infra-env's per-host static network configs (staticnet.h,
         * DECISIONS.md D7), JSON. */
        SHARED("ALTER TABLE infra_envs ADD COLUMN static_network TEXT;"),
        /* 15: what the admin asked of a host's agent (HOST_ACTION_*: logs,
         * reclaim), and the logs its agents uploaded, newest kept. */
        SHARED("ALTER TABLE hosts ADD COLUMN pending_actions @INT@ NOT NULL DEFAULT 0;"
        "CREATE TABLE host_logs ("
        "  seq @AUTO_ID@,"
        "  infra_env_id TEXT NOT NULL,"
        "  host_id TEXT NOT NULL,"
        "  created_at TEXT NOT NULL,"
        "  size @INT@ NOT NULL,"
        "  data @BLOB@ NOT NULL,"
        "  FOREIGN KEY (infra_env_id, host_id) REFERENCES hosts(infra_env_id, id) ON DELETE CASCADE);"
        "CREATE INDEX host_logs_host ON host_logs(infra_env_id, host_id, seq);"),
};
_Static_assert(sizeof migrations / sizeof *migrations == STORE_SCHEMA_VERSION,
               "the migrations end at STORE_SCHEMA_VERSION (sqldb.h)");

const char schema_version_table[] = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)";

static const char *const token_names[SCHEMA_N_TOKENS] = {
        [SCHEMA_INT] = "INT",
        [SCHEMA_BLOB] = "BLOB",
        [SCHEMA_AUTO_ID] = "AUTO_ID",
        [SCHEMA_ROWID] = "ROWID",
};

struct buf {
        char *p;
        size_t len, cap;
};

static int put(struct buf *b, const char *s, size_t n) {
        if (b->len + n + 1 > b->cap) {
                size_t cap = (b->len + n + 1) * 2;
                char *p = realloc(b->p, cap);
                if (!p)
                        return -ENOMEM;
                b->p = p;
                b->cap = cap;
        }
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
        return 0;
}

/* sql onto b with its tokens in d's words; quoted text is left alone. */
static int rewrite(struct buf *b, const char *sql, const struct schema_dialect *d) {
        char quote = 0;
        for (const char *p = sql; *p; p++) {
                if (quote) {
                        if (*p == quote)
                                quote = 0;
                } else if (*p == '\'' || *p == '"') {
                        quote = *p;
                } else if (*p == '@') {
                        const char *end = strchr(p + 1, '@');
                        if (!end)
                                return -EINVAL;
                        size_t n = (size_t) (end - p - 1);
                        int t = 0;
                        while (t < SCHEMA_N_TOKENS &&
                               (strlen(token_names[t]) != n || memcmp(token_names[t], p + 1, n) != 0))
                                t++;
                        if (t == SCHEMA_N_TOKENS || !d->tokens[t])
                                return -EINVAL;
                        int r = put(b, d->tokens[t], strlen(d->tokens[t]));
                        if (r < 0)
                                return r;
                        p = end;
                        continue;
                }
                int r = put(b, p, 1);
                if (r < 0)
                        return r;
        }
        return quote ? -EINVAL : 0;
}

char *schema_migration(int to, const struct schema_dialect *d) {
        if (to < 1 || to > (int) (sizeof migrations / sizeof *migrations)) {
                errno = EINVAL;
                return NULL;
        }
        struct buf b = { 0 };
        int r = put(&b, "", 0);
        for (const struct schema_part *part = migrations[to - 1]; r >= 0 && part->sql; part++)
                if (part->db == BOTH || part->db == (int) d->db)
                        r = rewrite(&b, part->sql, d);
        if (r < 0) {
                free(b.p);
                errno = -r;
                return NULL;
        }
        return b.p;
}
