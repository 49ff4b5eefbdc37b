/*
 * A thin C layer over WiredTiger's API for yardstick's wiredtiger binding.
 * WiredTiger's handles are structs of function pointers; calling them from
 * Rust would mean mirroring their layout, so these functions call them here,
 * against the installed <wiredtiger.h>, and expose plain functions instead.
 * Tables use raw byte keys and values (key_format=u, value_format=u).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <wiredtiger.h>

int ys_wt_notfound(void) { return WT_NOTFOUND; }

const char *ys_wt_strerror(int err) { return wiredtiger_strerror(err); }

const char *ys_wt_version(int *major, int *minor, int *patch) {
    return wiredtiger_version(major, minor, patch);
}

int ys_wt_open(const char *home, const char *config, WT_CONNECTION **conn) {
    return wiredtiger_open(home, NULL, config, conn);
}

int ys_wt_close(WT_CONNECTION *conn) { return conn->close(conn, NULL); }

/* Creates table `uri` with `config` unless it exists; `must_exist` instead
 * checks that it does (returns WT_NOTFOUND when not). */
int ys_wt_table(WT_CONNECTION *conn, const char *uri, const char *config, int must_exist) {
    WT_SESSION *s;
    int ret = conn->open_session(conn, NULL, NULL, &s);
    if (ret != 0)
        return ret;
    if (must_exist) {
        WT_CURSOR *c;
        ret = s->open_cursor(s, uri, NULL, NULL, &c);
        if (ret == 0)
            c->close(c);
        else if (ret == ENOENT)
            ret = WT_NOTFOUND;
    } else {
        ret = s->create(s, uri, config);
    }
    s->close(s, NULL);
    return ret;
}

int ys_wt_session(WT_CONNECTION *conn, const char *uri, WT_SESSION **s, WT_CURSOR **c) {
    int ret = conn->open_session(conn, NULL, NULL, s);
    if (ret != 0)
        return ret;
    ret = (*s)->open_cursor(*s, uri, NULL, "overwrite=true", c);
    if (ret != 0)
        (*s)->close(*s, NULL);
    return ret;
}

int ys_wt_session_close(WT_SESSION *s) { return s->close(s, NULL); }

static void set_key(WT_CURSOR *c, const void *k, size_t kl) {
    WT_ITEM key;
    key.data = k;
    key.size = kl;
    c->set_key(c, &key);
}

/* Finds `k`; on success v and vl point into the cursor until the next call. */
int ys_wt_get(WT_CURSOR *c, const void *k, size_t kl, const void **v, size_t *vl) {
    WT_ITEM value;
    int ret;
    set_key(c, k, kl);
    ret = c->search(c);
    if (ret != 0)
        return ret;
    ret = c->get_value(c, &value);
    if (ret != 0)
        return ret;
    *v = value.data;
    *vl = value.size;
    return 0;
}

int ys_wt_reset(WT_CURSOR *c) { return c->reset(c); }

int ys_wt_put(WT_CURSOR *c, const void *k, size_t kl, const void *v, size_t vl) {
    WT_ITEM value;
    set_key(c, k, kl);
    value.data = v;
    value.size = vl;
    c->set_value(c, &value);
    return c->insert(c);
}

int ys_wt_remove(WT_CURSOR *c, const void *k, size_t kl) {
    set_key(c, k, kl);
    return c->remove(c);
}

/* Positions the cursor on the first key >= k (WT_NOTFOUND when none). */
int ys_wt_seek(WT_CURSOR *c, const void *k, size_t kl) {
    int exact = 0;
    int ret;
    if (kl == 0) {
        /* the empty key sorts first; WiredTiger refuses to search for it */
        ret = c->reset(c);
        return ret == 0 ? c->next(c) : ret;
    }
    set_key(c, k, kl);
    ret = c->search_near(c, &exact);
    if (ret == 0 && exact < 0)
        ret = c->next(c);
    return ret;
}

int ys_wt_next(WT_CURSOR *c) { return c->next(c); }

int ys_wt_current(WT_CURSOR *c, const void **k, size_t *kl, const void **v, size_t *vl) {
    WT_ITEM key, value;
    int ret = c->get_key(c, &key);
    if (ret != 0)
        return ret;
    ret = c->get_value(c, &value);
    if (ret != 0)
        return ret;
    *k = key.data;
    *kl = key.size;
    *v = value.data;
    *vl = value.size;
    return 0;
}

int ys_wt_begin(WT_SESSION *s) { return s->begin_transaction(s, NULL); }

int ys_wt_commit(WT_SESSION *s) { return s->commit_transaction(s, NULL); }

int ys_wt_rollback(WT_SESSION *s) { return s->rollback_transaction(s, NULL); }

/* Writes a checkpoint: every table's dirty pages to its file. */
int ys_wt_checkpoint(WT_CONNECTION *conn) {
    WT_SESSION *s;
    int ret = conn->open_session(conn, NULL, NULL, &s);
    if (ret != 0)
        return ret;
    ret = s->checkpoint(s, NULL);
    s->close(s, NULL);
    return ret;
}

/* Calls `row` with every connection statistic's description ("cache: bytes
 * currently in the cache") and value; needs statistics= at open. */
int ys_wt_stats(WT_CONNECTION *conn, void (*row)(void *, const char *, int64_t), void *ctx) {
    WT_SESSION *s;
    WT_CURSOR *c;
    const char *desc, *printable;
    int64_t value;
    int ret = conn->open_session(conn, NULL, NULL, &s);
    if (ret != 0)
        return ret;
    ret = s->open_cursor(s, "statistics:", NULL, NULL, &c);
    if (ret == 0) {
        while ((ret = c->next(c)) == 0) {
            ret = c->get_value(c, &desc, &printable, &value);
            if (ret != 0)
                break;
            row(ctx, desc, value);
        }
        if (ret == WT_NOTFOUND)
            ret = 0;
        c->close(c);
    }
    s->close(s, NULL);
    return ret;
}

/* Compacts table `uri`: rewrites it to give free space back to the file
 * system; returns once done. */
int ys_wt_compact(WT_CONNECTION *conn, const char *uri) {
    WT_SESSION *s;
    int ret = conn->open_session(conn, NULL, NULL, &s);
    if (ret != 0)
        return ret;
    ret = s->compact(s, uri, NULL);
    s->close(s, NULL);
    return ret;
}
