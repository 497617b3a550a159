/* cmd_sweep.c - `atoll sweep`: run a design-space sweep (sweep_spec.h)
 * and write one CSV row per point; `atoll sweep merge` joins shard CSVs.
 *
 * Scheduling: the points are put in "run order" (points sharing a compile
 * key together, groups in the order of their first point), a shard I/N is
 * the I-th of N equal contiguous slices of that order (so a shard compiles
 * few models), and the shard's points not yet in the output file are cut
 * into jobs of consecutive points with one compile key (split further so
 * that every worker has work). Each job runs in a forked worker process
 * (-j of them at once), which sends each row back through a pipe as it
 * finishes; a worker that dies costs only the point it was running (its
 * row says so) and the rest of its job runs in a new worker. The output is
 * rewritten atomically (at most once a second, and at the end) with every
 * row so far in point order, so an interrupted sweep resumes where it
 * stopped and the file is the same whatever -j, shards or interruptions.
 * Progress goes to stderr, one line per point.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tools/cli.h"
#include "tools/sweep_csv.h"
#include "tools/sweep_run.h"
#include "tools/sweep_spec.h"
#include "util/clock.h"
#include "util/csv.h"
#include "util/strbuf.h"

const char cmd_sweep_summary[] = "run a design-space sweep of chip configs x models into a CSV (sweep merge: join shards)";

#define MAX_WORKERS 256

static const char usage_text[] =
    "usage: atoll sweep SPEC.ini -o OUT.csv [-j N] [--shard I/N] [--stats-dir DIR] [--retry-failed]\n"
    "       atoll sweep merge [--spec SPEC.ini] -o OUT.csv SHARD.csv...\n"
    "\n"
    "Runs every point of the sweep file (docs/codesign.md): each chip config x\n"
    "model x dtype x batch is compiled (once per compile key: points differing\n"
    "only in timing keys share a compile) and simulated in timing-only mode.\n"
    "OUT.csv gets one row per point, in point order; a point that fails gets its\n"
    "reason in the error column. Points already in OUT.csv are not run again.\n"
    "  -j N           run N points at once (worker processes; default 1)\n"
    "  --shard I/N    run only the I-th of N deterministic shares of the points\n"
    "                 (join the shard files with `atoll sweep merge`)\n"
    "  --stats-dir D  also write D/point-ID.json: the simulator's stats with the\n"
    "                 compiler's per-layer names and estimates (atoll report)\n"
    "  --retry-failed run again the points that failed in OUT.csv\n"
    "merge: joins shard CSVs into one, in point order; with --spec, checks that\n"
    "every point of the sweep is there. The result equals the CSV one machine\n"
    "would have written, byte for byte.\n"
    "Exit status: 0 every point ran (failed points included), 1 error, 2 usage.\n";

static void usage(FILE *f) { fputs(usage_text, f); }

static void die_msg(const char *msg) { fprintf(stderr, "atoll sweep: %s\n", msg); }

/* ---- run order, shards, jobs ---- */

typedef struct OrderItem { uint64_t key; int64_t first, id; } OrderItem;

static int by_key(const void *a, const void *b)
{
    const OrderItem *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_first(const void *a, const void *b)
{
    const OrderItem *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t hash_text(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 0x100000001b3ULL; }
    return h;
}

/* Every point in run order (malloc'd, npoints items). */
static OrderItem *run_order(const SweepSpec *s)
{
    OrderItem *o = malloc((size_t)s->npoints * sizeof *o);
    if (!o) return NULL;
    for (int64_t i = 0; i < s->npoints; i++) {
        SweepPoint p;
        char key[128];
        uint64_t fp;
        sweep_point(s, i, &p);
        sweep_compile_key(s, &p, key, sizeof key, &fp);
        o[i] = (OrderItem){hash_text(key), 0, i};
    }
    qsort(o, (size_t)s->npoints, sizeof *o, by_key);
    for (int64_t i = 0; i < s->npoints; i++) o[i].first = i && o[i].key == o[i - 1].key ? o[i - 1].first : o[i].id;
    qsort(o, (size_t)s->npoints, sizeof *o, by_first);
    return o;
}

typedef struct Job { int64_t *ids; int n; } Job;

typedef struct JobQueue { Job *jobs; int n, cap, head; } JobQueue;

static int queue_push(JobQueue *q, const int64_t *ids, int n)
{
    if (q->n == q->cap) {
        int cap = q->cap ? q->cap * 2 : 64;
        Job *j = realloc(q->jobs, (size_t)cap * sizeof *j);
        if (!j) return -1;
        q->jobs = j;
        q->cap = cap;
    }
    Job *j = &q->jobs[q->n];
    j->ids = malloc((size_t)(n ? n : 1) * sizeof *j->ids);
    if (!j->ids) return -1;
    memcpy(j->ids, ids, (size_t)n * sizeof *ids);
    j->n = n;
    q->n++;
    return 0;
}

/* Cuts the todo list (run order) into jobs of one compile key, none longer
 * than ceil(ntodo / workers). */
static int make_jobs(const OrderItem *todo, int64_t ntodo, int workers, JobQueue *q)
{
    int64_t chunk = (ntodo + workers - 1) / workers;
    if (chunk < 1) chunk = 1;
    int64_t *ids = malloc((size_t)(ntodo ? ntodo : 1) * sizeof *ids);
    if (!ids) return -1;
    for (int64_t i = 0; i < ntodo; i++) ids[i] = todo[i].id;
    int rc = 0;
    for (int64_t i = 0; i < ntodo && !rc;) {
        int64_t j = i + 1;
        while (j < ntodo && todo[j].key == todo[i].key && j - i < chunk) j++;
        rc = queue_push(q, ids + i, (int)(j - i));
        i = j;
    }
    free(ids);
    return rc;
}

/* ---- workers ---- */

typedef struct Worker {
    pid_t pid;
    int fd;
    Job job;
    int got;                   /* rows received */
    StrBuf in;                 /* bytes not yet split into lines */
} Worker;

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The child: runs the job's points, one "ID<TAB>ROW" line each. */
static void worker_main(const SweepSpec *s, const Job *job, const char *stats_dir, int fd)
{
    SweepRunner *r = sweep_runner_new(s, stats_dir);
    /* fault injection for the tests of a dying worker (test/cli/sweep.sh) */
    const char *kill_at = getenv("ATOLL_SWEEP_TEST_KILL_POINT");
    for (int i = 0; i < job->n; i++) {
        if (kill_at && strtoll(kill_at, NULL, 10) == job->ids[i]) raise(SIGKILL);
        StrBuf row = {0};
        char head[32];
        snprintf(head, sizeof head, "%" PRId64 "\t", job->ids[i]);
        if (r) sweep_runner_point(r, job->ids[i], &row);
        else sweep_failed_row(s, job->ids[i], "out of memory", &row);
        char *text = sbuf_take(&row);
        if (!text || write_all(fd, head, strlen(head)) || write_all(fd, text, strlen(text))) {
            free(text);
            break;
        }
        free(text);
    }
    sweep_runner_free(r);
    close(fd);
    _exit(0);
}

typedef struct Sweep {
    const SweepSpec *spec;
    const char *out, *stats_dir;
    SweepTable table;
    int64_t total, done;       /* points of this shard; rows in the table */
    int64_t failed_here, ran_here;
    Worker w[MAX_WORKERS];
    int nworkers, active;
    JobQueue q;
    double last_write;
} Sweep;

static int start_worker(Sweep *sw, Worker *w, Job job)
{
    int p[2];
    if (pipe(p)) { die_msg("cannot create a pipe"); return -1; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) { close(p[0]); close(p[1]); die_msg("cannot fork a worker"); return -1; }
    if (pid == 0) {
        close(p[0]);
        for (int i = 0; i < sw->nworkers; i++) if (sw->w[i].pid > 0) close(sw->w[i].fd);
        worker_main(sw->spec, &job, sw->stats_dir, p[1]);
    }
    close(p[1]);
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = p[0];
    w->job = job;
    sw->active++;
    return 0;
}

/* One progress line from a finished row. */
static void progress(Sweep *sw, int64_t id, const char *row)
{
    const SweepSpec *s = sw->spec;
    AtlCsv c;
    AtlErr e;
    if (csv_parse("row", row, strlen(row), &c, &e) || c.nrecords != 1) return;
    const AtlCsvRecord *r = &c.records[0];
    int first = sweep_csv_first_result(s);
    if (r->nfields != sweep_csv_columns(s)) { csv_free(&c); return; }
    fprintf(stderr, "sweep: [%" PRId64 "/%" PRId64 "] point %" PRId64 " %s %s b%s", sw->done, sw->total, id, r->fields[1 + s->nkeys],
            r->fields[2 + s->nkeys], r->fields[3 + s->nkeys]);
    for (int i = 0; i < s->nkeys; i++) fprintf(stderr, " %s=%s", s->keys[i].name, r->fields[1 + i]);
    if (!strcmp(r->fields[first + 1], "ok")) fprintf(stderr, ": %s cycles, %s images/s\n", r->fields[first + 2], r->fields[first + 4]);
    else {
        fprintf(stderr, ": FAILED: %s\n", r->fields[r->nfields - 1]);
        sw->failed_here++;
    }
    csv_free(&c);
}

/* Records the row of the worker's next point. */
static int add_row(Sweep *sw, Worker *w, int64_t id, const char *row)
{
    AtlErr e;
    if (w->got >= w->job.n || id != w->job.ids[w->got]) { die_msg("a worker sent rows out of order"); return -1; }
    w->got++;
    if (sweep_table_add(&sw->table, id, row, "this run", 0, &e)) { die_msg(e.msg); return -1; }
    sw->done++;
    sw->ran_here++;
    progress(sw, id, row);
    return 0;
}

/* One "ID<TAB>ROW" line from a worker. */
static int take_row(Sweep *sw, Worker *w, const char *line)
{
    char *tab = strchr(line, '\t');
    if (!tab) { die_msg("a worker sent a malformed line"); return -1; }
    char *row = malloc(strlen(tab + 1) + 2);
    if (!row) { die_msg("out of memory"); return -1; }
    sprintf(row, "%s\n", tab + 1);
    int rc = add_row(sw, w, strtoll(line, NULL, 10), row);
    free(row);
    return rc;
}

/* Splits what arrived from a worker into lines. */
static int take_lines(Sweep *sw, Worker *w)
{
    size_t start = 0;
    for (size_t i = 0; i < w->in.len; i++) {
        if (w->in.p[i] != '\n') continue;
        w->in.p[i] = 0;
        if (take_row(sw, w, w->in.p + start)) return -1;
        start = i + 1;
    }
    if (start) {
        memmove(w->in.p, w->in.p + start, w->in.len - start);
        w->in.len -= start;
        if (w->in.p) w->in.p[w->in.len] = 0;
    }
    return 0;
}

static int save(Sweep *sw, int force)
{
    double now = atl_clock_s();
    if (!force && now - sw->last_write < 1.0) return 0;
    sw->last_write = now;
    AtlErr e;
    if (sweep_table_write(&sw->table, sw->out, &e)) { die_msg(e.msg); return -1; }
    return 0;
}

/* A worker's pipe closed: reap it; if it died before finishing its job,
 * the point it was running fails and the rest of the job is queued again. */
static int finish_worker(Sweep *sw, Worker *w)
{
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
    close(w->fd);
    sw->active--;
    int rc = 0;
    if (w->got < w->job.n) {
        char reason[160];
        if (WIFSIGNALED(status)) snprintf(reason, sizeof reason, "the worker process running this point died (signal %d)", WTERMSIG(status));
        else snprintf(reason, sizeof reason, "the worker process running this point exited (status %d) without a result",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        StrBuf row = {0};
        int64_t id = w->job.ids[w->got];
        sweep_failed_row(sw->spec, id, reason, &row);
        char *text = sbuf_take(&row);
        rc = text ? add_row(sw, w, id, text) : -1;
        free(text);
        if (!rc && w->got < w->job.n && queue_push(&sw->q, w->job.ids + w->got, w->job.n - w->got)) rc = -1;
    }
    free(w->job.ids);
    sbuf_free(&w->in);
    w->pid = 0;
    return rc ? rc : save(sw, 0);
}

static int run_jobs(Sweep *sw)
{
    struct pollfd fds[MAX_WORKERS];
    int idx[MAX_WORKERS];
    for (;;) {
        for (int i = 0; i < sw->nworkers && sw->q.head < sw->q.n; i++)
            if (!sw->w[i].pid && start_worker(sw, &sw->w[i], sw->q.jobs[sw->q.head++])) return -1;
        if (!sw->active) return 0;
        int n = 0;
        for (int i = 0; i < sw->nworkers; i++)
            if (sw->w[i].pid) { fds[n] = (struct pollfd){sw->w[i].fd, POLLIN, 0}; idx[n++] = i; }
        if (poll(fds, (nfds_t)n, -1) < 0) {
            if (errno == EINTR) continue;
            die_msg("poll failed");
            return -1;
        }
        for (int k = 0; k < n; k++) {
            if (!fds[k].revents) continue;
            Worker *w = &sw->w[idx[k]];
            char buf[65536];
            ssize_t got = read(w->fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got > 0) {
                sbuf_put(&w->in, buf, (size_t)got);
                if (w->in.oom) { die_msg("out of memory"); return -1; }
                if (take_lines(sw, w)) return -1;
            } else if (finish_worker(sw, w)) {
                return -1;
            }
        }
    }
}

/* Removes the rows whose status is "failed" (--retry-failed). */
static void drop_failed(const SweepSpec *s, SweepTable *t)
{
    int status = sweep_csv_first_result(s) + 1;
    int64_t k = 0;
    for (int64_t i = 0; i < t->n; i++) {
        AtlCsv c;
        AtlErr e;
        int failed = !csv_parse("row", t->rows[i].text, strlen(t->rows[i].text), &c, &e) && c.nrecords == 1 &&
                     c.records[0].nfields > status && !strcmp(c.records[0].fields[status], "failed");
        csv_free(&c);
        if (failed) free(t->rows[i].text);
        else t->rows[k++] = t->rows[i];
    }
    t->n = k;
}

static int parse_shard(const char *v, int *i, int *n)
{
    char *end;
    long a = strtol(v, &end, 10);
    if (end == v || *end != '/') return -1;
    const char *q = end + 1;
    long b = strtol(q, &end, 10);
    if (end == q || *end || b < 1 || b > 100000 || a < 1 || a > b) return -1;
    *i = (int)a;
    *n = (int)b;
    return 0;
}

static int run_sweep(const char *spec_path, const char *out, int jobs, int shard_i, int shard_n, const char *stats_dir,
                     int retry_failed)
{
    SweepSpec s;
    AtlErr e;
    double t0 = atl_clock_s();
    signal(SIGPIPE, SIG_IGN);   /* a closed stderr must not stop a long sweep; workers see EPIPE */
    if (sweep_spec_load(spec_path, &s, &e)) { die_msg(e.msg); return 1; }
    Sweep *sw = calloc(1, sizeof *sw);
    OrderItem *order = run_order(&s);
    uint8_t *have = calloc((size_t)s.npoints / 8 + 1, 1);
    int rc = 1;
    if (!sw || !order || !have) { die_msg("out of memory"); goto out; }
    sw->spec = &s;
    sw->out = out;
    sw->stats_dir = stats_dir;
    sw->nworkers = jobs;
    if (stats_dir && mkdir(stats_dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "atoll sweep: cannot create %s: %s\n", stats_dir, strerror(errno));
        goto out;
    }
    int64_t lo = s.npoints * (shard_i - 1) / shard_n, hi = s.npoints * shard_i / shard_n;
    sw->total = hi - lo;
    /* resume: rows already in the output (they must be this sweep's and shard's) */
    if (access(out, F_OK) == 0) {
        if (sweep_table_read(out, &s, &sw->table, &e)) { die_msg(e.msg); goto out; }
        uint8_t *mine = calloc((size_t)s.npoints / 8 + 1, 1);
        if (!mine) { die_msg("out of memory"); goto out; }
        for (int64_t i = lo; i < hi; i++) mine[order[i].id / 8] |= (uint8_t)(1 << (order[i].id % 8));
        if (retry_failed) drop_failed(&s, &sw->table);
        for (int64_t i = 0; i < sw->table.n; i++) {
            int64_t id = sw->table.rows[i].id;
            if (!(mine[id / 8] >> (id % 8) & 1)) {
                fprintf(stderr, "atoll sweep: %s:%d: point %" PRId64 " belongs to another shard than %d/%d\n", out,
                        sw->table.rows[i].line, id, shard_i, shard_n);
                free(mine);
                goto out;
            }
            have[id / 8] |= (uint8_t)(1 << (id % 8));
        }
        free(mine);
    } else {
        StrBuf h = {0};
        sweep_csv_header(&s, &h);
        sw->table.header = sbuf_take(&h);
        if (!sw->table.header) { die_msg("out of memory"); goto out; }
    }
    sw->done = sw->table.n;
    int64_t ntodo = 0;
    for (int64_t i = lo; i < hi; i++)
        if (!(have[order[i].id / 8] >> (order[i].id % 8) & 1)) order[lo + ntodo++] = order[i];
    if (make_jobs(order + lo, ntodo, jobs, &sw->q)) { die_msg("out of memory"); goto out; }
    int groups = 0;
    for (int64_t i = 0; i < ntodo; i++) groups += !i || order[lo + i].key != order[lo + i - 1].key;
    fprintf(stderr, "sweep: %s: %" PRId64 " points", spec_path, s.npoints);
    if (shard_n > 1) fprintf(stderr, ", shard %d/%d has %" PRId64, shard_i, shard_n, sw->total);
    fprintf(stderr, "; %" PRId64 " already in %s, %" PRId64 " to run (%d compile group%s, %d job%s, -j %d)\n", sw->done, out, ntodo,
            groups, groups == 1 ? "" : "s", sw->q.n, sw->q.n == 1 ? "" : "s", jobs);
    if (run_jobs(sw)) goto out;
    if (save(sw, 1)) goto out;
    fprintf(stderr, "sweep: wrote %s: %" PRId64 " rows; ran %" PRId64 " point%s here (%" PRId64 " failed) in %.1f s\n", out,
            sw->table.n, sw->ran_here, sw->ran_here == 1 ? "" : "s", sw->failed_here, atl_clock_s() - t0);
    rc = 0;
out:
    if (sw) {
        for (int i = 0; i < sw->nworkers; i++)
            if (sw->w[i].pid) { kill(sw->w[i].pid, SIGTERM); waitpid(sw->w[i].pid, NULL, 0); close(sw->w[i].fd); free(sw->w[i].job.ids); sbuf_free(&sw->w[i].in); }
        for (int i = sw->q.head; i < sw->q.n; i++) free(sw->q.jobs[i].ids);
        free(sw->q.jobs);
        sweep_table_free(&sw->table);
        free(sw);
    }
    free(order);
    free(have);
    sweep_spec_free(&s);
    return rc;
}

/* ---- merge ---- */

static int merge(int argc, char **argv)
{
    const char *out = NULL, *spec_path = NULL, *v;
    const char *inputs[4096];
    int n = 0, bad = 0;
    for (int i = 2; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--spec", &bad))) spec_path = v;
        else if (bad) return 2;
        else if (argv[i][0] == '-') return cli_bad_option("sweep merge", argv[i], usage_text);
        else if (n == 4096) { fprintf(stderr, "atoll sweep merge: too many files\n"); return 2; }
        else inputs[n++] = argv[i];
    }
    if (!out || !n) { fprintf(stderr, "atoll sweep merge: %s\n", !out ? "-o OUT.csv is required" : "no shard CSV given"); return 2; }
    SweepSpec s;
    AtlErr e;
    if (spec_path && sweep_spec_load(spec_path, &s, &e)) { fprintf(stderr, "atoll sweep merge: %s\n", e.msg); return 1; }
    SweepTable all;
    memset(&all, 0, sizeof all);
    int rc = 1;
    for (int f = 0; f < n; f++) {
        SweepTable t;
        if (sweep_table_read(inputs[f], spec_path ? &s : NULL, &t, &e)) { fprintf(stderr, "atoll sweep merge: %s\n", e.msg); goto out; }
        if (!all.header) { all.header = t.header; t.header = NULL; }
        else if (strcmp(all.header, t.header)) {
            fprintf(stderr, "atoll sweep merge: %s:1: the header differs from %s's (shards of different sweeps?)\n", inputs[f], inputs[0]);
            sweep_table_free(&t);
            goto out;
        }
        int bad_add = 0;
        for (int64_t i = 0; i < t.n && !bad_add; i++)
            bad_add = sweep_table_add(&all, t.rows[i].id, t.rows[i].text, inputs[f], t.rows[i].line, &e);
        sweep_table_free(&t);
        if (bad_add) { fprintf(stderr, "atoll sweep merge: %s\n", e.msg); goto out; }
    }
    if (sweep_table_finish(&all, &e)) { fprintf(stderr, "atoll sweep merge: %s\n", e.msg); goto out; }
    if (spec_path && all.n != s.npoints) {
        StrBuf m = {0};
        int64_t k = 0, shown = 0;
        for (int64_t id = 0; id < s.npoints && shown < 10; id++) {
            while (k < all.n && all.rows[k].id < id) k++;
            if (k < all.n && all.rows[k].id == id) continue;
            sbuf_printf(&m, "%s%" PRId64, shown++ ? ", " : "", id);
        }
        char *list = sbuf_take(&m);
        fprintf(stderr, "atoll sweep merge: %" PRId64 " of %s's %" PRId64 " points are missing (points %s%s)\n", s.npoints - all.n,
                spec_path, s.npoints, list ? list : "?", s.npoints - all.n > 10 ? ", ..." : "");
        free(list);
        goto out;
    }
    if (sweep_table_write(&all, out, &e)) { fprintf(stderr, "atoll sweep merge: %s\n", e.msg); goto out; }
    fprintf(stderr, "sweep merge: wrote %s: %" PRId64 " rows from %d file%s\n", out, all.n, n, n == 1 ? "" : "s");
    rc = 0;
out:
    sweep_table_free(&all);
    if (spec_path) sweep_spec_free(&s);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "merge")) return merge(argc, argv);
    const char *spec = NULL, *out = NULL, *stats_dir = NULL, *v;
    int jobs = 1, shard_i = 1, shard_n = 1, bad = 0, retry = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if (bad) return 2;
        else if ((v = !strncmp(argv[i], "-j", 2) && argv[i][2] ? argv[i] + 2 : cli_opt(argc, argv, &i, "-j", &bad))) {
            char *end;
            long j = strtol(v, &end, 10);
            if (end == v || *end || j < 1 || j > MAX_WORKERS) { fprintf(stderr, "atoll sweep: -j '%s': a number of workers 1..%d\n", v, MAX_WORKERS); return 2; }
            jobs = (int)j;
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--shard", &bad))) {
            if (parse_shard(v, &shard_i, &shard_n)) { fprintf(stderr, "atoll sweep: --shard '%s': use I/N with 1 <= I <= N\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--stats-dir", &bad))) stats_dir = v;
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--retry-failed")) retry = 1;
        else if (argv[i][0] == '-') return cli_bad_option("sweep", argv[i], usage_text);
        else if (!spec) spec = argv[i];
        else { fprintf(stderr, "atoll sweep: more than one sweep file given ('%s')\n", argv[i]); return 2; }
    }
    if (!spec || !out) {
        fprintf(stderr, "atoll sweep: %s\n", !spec ? "no sweep file given (see --help)" : "-o OUT.csv is required");
        return 2;
    }
    return run_sweep(spec, out, jobs, shard_i, shard_n, stats_dir, retry);
}
