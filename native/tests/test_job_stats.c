/* test_job_stats.c - the job's statistics (mop_job_stats.c), MPI-free: a
 * rank's cells, a merge by name of two subtrees (regions interned in other
 * orders on each rank), the worst rank on ties, and the bytes between ranks:
 * a round trip gives the same statistics, and every cut or damaged message
 * is refused, not read past its end (run under ASan in the tests). */
#include <stdlib.h>
#include <string.h>

#include "mo_test.h"
#include "mop_job_stats.h"

/* A rank with one transfer of xfer seconds in function `fn` and region `region`. */
static void one_rank(mop_process *p, const mop_process_config *cfg, size_t fn, size_t region,
                     double xfer, double hi)
{
    CHECK(mop_process_init(p, cfg) == 0);
    mop_acc a = {.transfers = 1, .xfer_s = xfer, .min_s = 0, .max_s = hi};
    p->total = a;
    p->bins[3] = a;
    p->fns[fn].x = a;
    p->fns[fn].calls = 2;
    p->fns[fn].call_ticks = 100;
    p->regions[region].x = a;
    p->regions[region].comp_ticks = 7;
    p->comp_ticks = 50;
    p->call_ticks = 100;
    p->counters.events = 4;
    p->cases[MOP_CASE_IN_CALL] = 1;
    /* one in-call transfer flagged by the checks on the bounds */
    p->checks.transfers[MOP_CHECK_IN_CALL] = 1;
    p->checks.calls = 1;
    p->checks.flagged[MOP_CHECK_IN_CALL] = (mop_flagged){1, xfer, 0.5};
    p->checks.by_fn[fn][MOP_CHECK_IN_CALL] = (mop_flagged){1, xfer, 0.5};
    p->checks.by_bin[3][MOP_CHECK_IN_CALL] = (mop_flagged){1, xfer, 0.5};
}

static const mop_jentry *find(const mop_jlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->e[i].name, name) == 0)
            return &l->e[i];
    return NULL;
}

int main(void)
{
    mop_xfer_table table;
    mop_xfer_table_init(&table);
    mop_process_config cfg = {.table = &table, .s_per_tick = 1e-9};
    static const char *const fns[] = {"MPI_Irecv", "MPI_Isend"};
    /* the same names under other ids on the two ranks */
    static const char *const regions0[] = {"(no region)", "halo", "solve"};
    static const char *const regions1[] = {"(no region)", "solve", "halo"};
    mop_names n0 = {.fn = fns, .nfn = 2, .region = regions0, .nregion = 3};
    mop_names n1 = {.fn = fns, .nfn = 2, .region = regions1, .nregion = 3};

    static mop_process p0, p1; /* large */
    one_rank(&p0, &cfg, 1, 1, 2.0, 1.0);  /* rank 0: halo, loses 1.0 */
    one_rank(&p1, &cfg, 1, 2, 3.0, 2.0);  /* rank 1: halo too (id 2 there), loses 1.0 */
    static mop_job_stats s0, s1, back;
    CHECK(mop_job_stats_of_rank(&s0, &p0, &n0, 0, false, NULL) == 0);
    CHECK(mop_job_stats_of_rank(&s1, &p1, &n1, 1, false, NULL) == 0);

    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK(mop_job_stats_pack(&s1, &buf, &len) == 0);
    CHECK(mop_job_stats_unpack(&back, buf, len) == 0);
    CHECK(back.list[MOP_JS_FNS].n == s1.list[MOP_JS_FNS].n);
    CHECK(back.list[MOP_JS_REGIONS].n == 1 && back.total.xfer_s == 3.0);
    CHECK(find(&back.list[MOP_JS_REGIONS], "halo") != NULL);
    /* every shorter message, and a damaged head, is refused */
    for (size_t cut = 0; cut < len; cut++) {
        static mop_job_stats t;
        unsigned char *copy = malloc(cut ? cut : 1);
        memcpy(copy, buf, cut);
        CHECK(mop_job_stats_unpack(&t, copy, cut) != 0);
        free(copy);
    }
    buf[0] ^= 1;
    static mop_job_stats bad;
    CHECK(mop_job_stats_unpack(&bad, buf, len) != 0);
    free(buf);

    CHECK(mop_job_stats_merge(&s0, &back) == 0);
    CHECK(s0.ranks == 2 && s0.ranks_with_data == 2);
    CHECK(s0.total.xfer_s == 5.0 && s0.total.nonoverlap_s == 2.0);
    CHECK(s0.counters.events == 8);
    CHECK(s0.bins[3].ranks == 2 && s0.bins[3].transfers == 2);
    const mop_jentry *halo = find(&s0.list[MOP_JS_REGIONS], "halo");
    CHECK(halo && halo->c.ranks == 2 && halo->c.xfer_s == 5.0);
    CHECK(halo && halo->c.worst_rank == 0 && halo->c.worst_s == 1.0); /* a tie: the lower */
    CHECK(halo && halo->c.comp_s == 7 * 1e-9 + 7 * 1e-9); /* each rank's seconds, summed */
    CHECK(find(&s0.list[MOP_JS_REGIONS], "solve") == NULL); /* no rank had data there */
    const mop_jentry *isend = find(&s0.list[MOP_JS_FNS], "MPI_Isend");
    CHECK(isend && isend->c.calls == 4 && isend->c.call_s == 100 * 1e-9 + 100 * 1e-9);
    CHECK(s0.list[MOP_JS_FNS].n == 1);
    /* the checks and which ranks had what */
    CHECK(s0.check[MOP_CHECK_IN_CALL].calls == 2 && s0.check[MOP_CHECK_IN_CALL].excess_s == 1.0);
    const mop_jlist *flagged = &s0.list[MOP_JS_FLAG_FNS];
    CHECK(flagged->n == 1 && strcmp(flagged->e[0].name, "MPI_Isend\tin-call") == 0);
    CHECK(flagged->n == 1 && flagged->e[0].c.who.n == 2 && flagged->e[0].c.who.first[0] == 0 &&
          flagged->e[0].c.who.first[1] == 1);
    CHECK(s0.flag_bins[3][MOP_CHECK_IN_CALL].transfers == 2);
    CHECK(s0.case_who[MOP_CASE_IN_CALL].n == 2 && s0.counter_who[0].n == 2);

    /* a disabled rank is counted and adds nothing */
    static mop_job_stats off;
    CHECK(mop_job_stats_of_rank(&off, &p1, &n1, 2, true, "off") == 0);
    CHECK(mop_job_stats_merge(&s0, &off) == 0);
    CHECK(s0.ranks == 3 && s0.ranks_with_data == 2 && s0.total.xfer_s == 5.0);
    CHECK(strcmp(s0.disabled_reason, "off") == 0);
    halo = find(&s0.list[MOP_JS_REGIONS], "halo"); /* the lists were made anew */
    CHECK(halo && halo->c.ranks == 2);

    mop_job_stats_free(&s0);
    mop_job_stats_free(&s1);
    mop_job_stats_free(&back);
    mop_job_stats_free(&off);
    mop_process_free(&p0);
    mop_process_free(&p1);
    return mo_test_failures != 0;
}
