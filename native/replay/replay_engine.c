/* The replay engine's pass (replay_engine.h): a line-by-line translation of _pass in
 * src/mpi_overlap/predict/engine.py, which states the rules. Kept in step with it:
 * the same heap order (time, then push order), the same expressions in the same
 * order, Python's max(a, b) as "b > a ? b : a", and a collective's entries visited in
 * the order their members came (the Python dicts' insertion order), so the results are
 * equal bit for bit. What the Python pass would answer with an error (a member's entry
 * it does not hold) or a NaN time in the heap (whose order Python's tuples leave
 * undefined) is handed back as MOP_REPLAY_UNSUPPORTED, and the Python pass answers. */
#include "replay_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* program.py's operation codes */
enum { SEND_POST, RECV_POST, SEND_DONE, RECV_DONE, SEND_BLOCK, RECV_BLOCK,
       COLL_BLOCK, COLL_POST, COLL_DONE };

struct entry { double t; int64_t seq; int64_t r; };

/* a collective's entries (its members' posts, or their completing calls' enters) */
struct entries {
    double *t;       /* per slot */
    uint8_t *has;    /* per slot */
    int64_t *order;  /* per collective, from its mem_off: slots in the order they came */
    int64_t *count;  /* per collective */
};

struct pass {
    const struct mop_replay_in *in;
    struct mop_replay_out *out;
    double *Rc, *Ps, *Pr, *sdone, *rdone;
    int64_t *swait, *rwait;
    struct entries post, centr;
    double *cdone;
    uint8_t *cdone_has, *cwait, *synced;
    int64_t *slot_of_op;  /* per operation of a collective: its member slot */
    int64_t *root_slot;   /* per collective: the root's slot, -1 none */
    int64_t *cur, *need;
    double *tmax;
    int64_t **outst;      /* per rank: ends not yet polled (k send, ~k receive) */
    int64_t *outst_n, *outst_cap;
    struct entry *heap;
    int64_t heap_n, heap_cap;
    int64_t seq;
    int bad;              /* set on a NaN time pushed: MOP_REPLAY_UNSUPPORTED */
    int nomem;
    int none, perfect, async_, hiding, polling, idle_post;
    /* a link direction carries one message's G s at a time (engine.py book): Tx is each
     * message's T plus its wait for its direction (in->T where no link is shared) */
    int lanes_on;
    const double *Tx;
    double *Tx_own, *free_at;
    uint8_t *booked;
};

static inline int isnan_(double x) { return x != x; }
static inline double pymax(double a, double b) { return b > a ? b : a; }

static inline int before(const struct entry *a, const struct entry *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void sift_up(struct entry *h, int64_t i)
{
    struct entry x = h[i];
    while (i > 0) {
        int64_t p = (i - 1) >> 1;
        if (!before(&x, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void sift_down(struct entry *h, int64_t n, int64_t i)
{
    struct entry x = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* The heap holds at most one entry per rank (a rank's next call): its room is the
 * number of ranks, and more would be a state the Python pass is left to answer. */
static void push(struct pass *p, double t, int64_t r)
{
    if (isnan_(t) || p->heap_n >= p->heap_cap) {
        p->bad = 1;
        return;
    }
    p->seq++;
    p->heap[p->heap_n] = (struct entry){t, p->seq, r};
    sift_up(p->heap, p->heap_n);
    p->heap_n++;
}

/* engine.py next_enter: call i of rank r returns; the next call's enter */
static double next_enter(struct pass *p, int64_t r, int64_t i)
{
    const struct mop_replay_in *in = p->in;
    int64_t ci = in->call_off[r] + i;
    double f = p->tmax[r] + in->add[ci];
    if (in->floor && in->floor[ci] > f)  /* none on a shared link */
        f = in->floor[ci];
    p->out->exit[ci] = f;
    double g = in->enter[ci + 1] - in->exit[ci];
    if (in->compute)
        g = g * in->compute[ci];
    return f + g;
}

static void resolved(struct pass *p, int64_t r, double t)
{
    if (t > p->tmax[r])
        p->tmax[r] = t;
    int64_t left = p->need[r] - 1;
    p->need[r] = left;
    if (!left)
        push(p, next_enter(p, r, p->cur[r]), r);
}

/* engine.py book: message k's transfer starts at t and waits for its direction */
static void book(struct pass *p, int64_t k, double t)
{
    p->booked[k] = 1;
    int64_t x = p->in->lane[k];
    if (x >= 0) {
        double f = p->free_at[x];
        if (f > t) {
            p->Tx_own[k] = p->in->T[k] + (f - t);
            t = f;
        }
        p->free_at[x] = t + p->in->occupy[k];
    }
}

/* engine.py Replay.link_wait: each message's wait for its direction, as booked */
static void link_waits_out(const struct pass *p, double *wait)
{
    for (int64_t k = 0; k < p->in->msgs; k++)
        wait[k] = !p->lanes_on ? 0.0 : p->booked[k] ? p->Tx_own[k] - p->in->T[k] : NAN;
}

static void send_done(struct pass *p, int64_t k, double t)
{
    p->sdone[k] = t;
    int64_t r = p->swait[k];
    if (r >= 0) {
        p->swait[k] = -1;
        resolved(p, r, t);
    }
}

static void recv_done(struct pass *p, int64_t k, double t)
{
    p->rdone[k] = t;
    int64_t r = p->rwait[k];
    if (r >= 0) {
        p->rwait[k] = -1;
        resolved(p, r, t);
    }
}

static void msg_perfect(struct pass *p, int64_t k)
{
    double s0 = p->out->send_post[k];
    if (isnan_(s0))
        return;
    if (isnan_(p->sdone[k]))
        send_done(p, k, s0);
    double rc = p->Rc[k];
    if (!isnan_(rc) && isnan_(p->rdone[k]))
        recv_done(p, k, pymax(rc, s0));
}

static void msg_none(struct pass *p, int64_t k)
{
    const struct mop_replay_in *in = p->in;
    double ps = p->Ps[k], pr = p->Pr[k];
    if (isnan_(ps) || isnan_(pr))
        return;
    if (p->lanes_on && !p->booked[k])
        book(p, k, pymax(ps, pr));
    double both = pymax(ps, pr) + p->Tx[k];
    if (!in->eager[k]) {
        if (isnan_(p->sdone[k])) {
            send_done(p, k, both);
            recv_done(p, k, both);
        }
        return;
    }
    double s0 = p->out->send_post[k];
    if (isnan_(p->sdone[k]))
        send_done(p, k, pymax(s0 + in->o_s[k], both));
    double rc = p->Rc[k];
    if (!isnan_(rc) && isnan_(p->rdone[k]))
        recv_done(p, k, pymax(pymax(rc, s0 + in->T[k] - in->o_r[k]) + in->o_r[k], both));
}

static void msg_model(struct pass *p, int64_t k)
{
    const struct mop_replay_in *in = p->in;
    double s0 = p->out->send_post[k];
    if (in->eager[k]) {
        if (isnan_(s0))
            return;
        if (isnan_(p->sdone[k]))
            send_done(p, k, s0 + in->o_s[k]);
        double rc = p->Rc[k];
        if (!isnan_(rc) && isnan_(p->rdone[k])) {
            double arrive = (p->hiding && in->hid_r[k]) ? s0 : s0 + p->Tx[k] - in->o_r[k];
            recv_done(p, k, pymax(rc, arrive) + in->o_r[k]);
        }
        return;
    }
    if (p->hiding && !isnan_(s0)) {
        if (in->hid_s[k] && isnan_(p->sdone[k]))
            send_done(p, k, s0);
        if (in->hid_r[k]) {
            double rc = p->Rc[k];
            if (!isnan_(rc) && isnan_(p->rdone[k]))
                recv_done(p, k, pymax(rc, s0));
        }
    }
    double t;
    if (p->async_) {
        double r0 = p->out->recv_post[k];
        if (isnan_(s0) || isnan_(r0))
            return;
        if (p->lanes_on && !p->booked[k])
            book(p, k, pymax(s0, r0));
        t = pymax(s0, r0) + p->Tx[k];
    } else {
        double ps = p->Ps[k], pr = p->Pr[k];
        if (isnan_(ps) || isnan_(pr))
            return;
        if (p->lanes_on && !p->booked[k])
            book(p, k, pymax(ps, pr));
        t = pymax(ps, pr) + p->Tx[k];
    }
    if (isnan_(p->sdone[k]))
        send_done(p, k, t);
    if (isnan_(p->rdone[k]))
        recv_done(p, k, t);
}

static void msg(struct pass *p, int64_t k)
{
    if (p->perfect)
        msg_perfect(p, k);
    else if (p->none)
        msg_none(p, k);
    else
        msg_model(p, k);
}

static void note_entry(struct entries *e, int64_t j, int64_t slot, const int64_t *mem_off,
                       double t)
{
    if (!e->has[slot]) {
        e->has[slot] = 1;
        e->order[mem_off[j] + e->count[j]++] = slot;
    }
    e->t[slot] = t;
}

static void set_sync(struct pass *p, int64_t slot, double sync)
{
    p->out->sync[slot] = sync;
    if (!p->synced[slot]) {
        p->synced[slot] = 1;
        p->out->sync_order[p->out->sync_count++] = slot;
    }
}

static void done_at(struct pass *p, int64_t slot, double sync, double tc)
{
    set_sync(p, slot, sync);
    double t = sync + tc;
    p->cdone[slot] = t;
    p->cdone_has[slot] = 1;
    if (p->cwait[slot]) {
        p->cwait[slot] = 0;
        resolved(p, p->in->members[slot], t);
    }
}

/* max(entries.values()), in the order they came */
static double last_entry(const struct entries *e, const int64_t *mem_off, int64_t j)
{
    const int64_t *o = e->order + mem_off[j];
    double best = e->t[o[0]];
    for (int64_t x = 1; x < e->count[j]; x++)
        if (e->t[o[x]] > best)
            best = e->t[o[x]];
    return best;
}

/* engine.py coll: member `slot`'s entry of collective j was just noted */
static void coll(struct pass *p, int64_t j, int64_t slot)
{
    const struct mop_replay_in *in = p->in;
    const struct entries *e = p->none ? &p->centr : &p->post;
    int64_t size = in->mem_off[j + 1] - in->mem_off[j];
    int kind = in->rooted[j];
    double tc = p->perfect ? 0.0 : in->tcoll[j];
    int64_t root = p->root_slot[j];
    int full = e->count[j] == size;
    if (kind == 1) {
        if (!e->has[root])
            return;
        if (slot == root) {
            const int64_t *o = e->order + in->mem_off[j];
            for (int64_t i = 0; i < e->count[j]; i++) {
                int64_t x = o[i];
                if (!p->cdone_has[x])
                    done_at(p, x, x == root ? e->t[x] : pymax(e->t[x], e->t[root]), tc);
            }
        } else {
            if (!e->has[slot]) {  /* Python: KeyError */
                p->bad = 1;
                return;
            }
            done_at(p, slot, pymax(e->t[slot], e->t[root]), tc);
        }
    } else if (kind == 2) {
        if (slot != root) {
            if (!e->has[slot]) {
                p->bad = 1;
                return;
            }
            done_at(p, slot, e->t[slot], tc);
        }
        if (full)
            done_at(p, root, last_entry(e, in->mem_off, j), tc);
    } else if (full) {
        double last_in = last_entry(e, in->mem_off, j);
        double t = last_in + tc;
        for (int64_t x = in->mem_off[j]; x < in->mem_off[j + 1]; x++) {
            set_sync(p, x, last_in);
            p->cdone[x] = t;
            p->cdone_has[x] = 1;
            if (p->cwait[x]) {
                p->cwait[x] = 0;
                resolved(p, in->members[x], t);
            }
        }
    }
}

static void outstanding_add(struct pass *p, int64_t r, int64_t x)
{
    if (p->outst_n[r] == p->outst_cap[r]) {
        int64_t cap = p->outst_cap[r] ? 2 * p->outst_cap[r] : 8;
        int64_t *grown = realloc(p->outst[r], (size_t)cap * sizeof *grown);
        if (!grown) {
            p->nomem = 1;
            return;
        }
        p->outst[r] = grown;
        p->outst_cap[r] = cap;
    }
    p->outst[r][p->outst_n[r]++] = x;
}

struct rank_slot { int64_t rank; int64_t slot; };

static int by_rank(const void *a, const void *b)
{
    int64_t x = ((const struct rank_slot *)a)->rank, y = ((const struct rank_slot *)b)->rank;
    return (x > y) - (x < y);
}

/* Each collective operation's member slot, and each collective's root slot;
 * MOP_REPLAY_UNSUPPORTED where an operation's code or index is out of range, a rank is
 * not a member (or a member twice, or a root outside a rooted collective): the Python
 * pass answers those. */
static int place_members(struct pass *p)
{
    const struct mop_replay_in *in = p->in;
    int64_t nslots = in->mem_off[in->colls];
    struct rank_slot *sorted = malloc((size_t)(nslots ? nslots : 1) * sizeof *sorted);
    if (!sorted)
        return MOP_REPLAY_NOMEM;
    for (int64_t s = 0; s < nslots; s++)
        sorted[s] = (struct rank_slot){in->members[s], s};
    for (int64_t j = 0; j < in->colls; j++) {
        struct rank_slot *seg = sorted + in->mem_off[j];
        int64_t n = in->mem_off[j + 1] - in->mem_off[j];
        qsort(seg, (size_t)n, sizeof *seg, by_rank);
        for (int64_t x = 1; x < n; x++)
            if (seg[x].rank == seg[x - 1].rank) {
                free(sorted);
                return MOP_REPLAY_UNSUPPORTED;
            }
        p->root_slot[j] = -1;
        if (in->rooted[j]) {
            struct rank_slot key = {in->root[j], 0};
            struct rank_slot *hit = bsearch(&key, seg, (size_t)n, sizeof *seg, by_rank);
            if (!hit) {
                free(sorted);
                return MOP_REPLAY_UNSUPPORTED;
            }
            p->root_slot[j] = hit->slot;
        }
    }
    for (int64_t r = 0; r < in->ranks; r++)
        for (int64_t ci = in->call_off[r]; ci < in->call_off[r + 1]; ci++)
            for (int64_t o = in->op_off[ci]; o < in->op_off[ci + 1]; o++) {
                int32_t op = in->op_code[o];
                int64_t j = in->op_idx[o];
                /* an unknown code or an index out of range (Python would raise, or
                 * count a negative one from the end) */
                if (op < SEND_POST || op > COLL_DONE || j < 0
                    || j >= (op < COLL_BLOCK ? in->msgs : in->colls)) {
                    free(sorted);
                    return MOP_REPLAY_UNSUPPORTED;
                }
                if (op < COLL_BLOCK)
                    continue;
                struct rank_slot key = {r, 0};
                struct rank_slot *hit = bsearch(&key, sorted + in->mem_off[j],
                                                (size_t)(in->mem_off[j + 1] - in->mem_off[j]),
                                                sizeof *hit, by_rank);
                if (!hit) {
                    free(sorted);
                    return MOP_REPLAY_UNSUPPORTED;
                }
                p->slot_of_op[o] = hit->slot;
            }
    free(sorted);
    return 0;
}

/* one call's operations (engine.py's loop body, for call ci of rank r entered at t);
 * returns the end of the o_s of the eager sends it posts (t where none) */
static double call_ops(struct pass *p, int64_t r, int64_t ci, double t)
{
    const struct mop_replay_in *in = p->in;
    struct mop_replay_out *out = p->out;
    double *S0 = out->send_post, *R0 = out->recv_post;
    const int quick_ok = !(p->perfect || p->none || p->hiding);
    double own = t;
    for (int64_t o = in->op_off[ci]; o < in->op_off[ci + 1]; o++) {
        int op = in->op_code[o];
        int64_t k = in->op_idx[o];
        if (op < COLL_BLOCK) {
            int quick = quick_ok && in->eager[k];
            if (op & 1) {
                if (op == RECV_POST) {
                    R0[k] = t;
                    if (p->polling && in->at_r[k]) {
                        p->Pr[k] = t;
                        msg(p, k);
                    } else if (p->none || !in->eager[k]) {
                        outstanding_add(p, r, ~k);
                        if (!p->idle_post)
                            msg(p, k);
                    }
                    continue;
                }
                if (op == RECV_BLOCK)
                    R0[k] = t;
                p->Rc[k] = t;
                int first = isnan_(p->Pr[k]);
                if (first)
                    p->Pr[k] = t;
                double d = p->rdone[k];
                if (!isnan_(d)) {
                    if (d > p->tmax[r])
                        p->tmax[r] = d;
                    if (first && p->hiding)
                        msg(p, k);
                } else if (quick) {
                    double s0 = S0[k];
                    if (!isnan_(s0)) {
                        d = s0 + p->Tx[k] - in->o_r[k];
                        d = (d > t ? d : t) + in->o_r[k];
                        p->rdone[k] = d;
                        if (d > p->tmax[r])
                            p->tmax[r] = d;
                    } else {
                        p->need[r]++;
                        p->rwait[k] = r;
                    }
                } else {
                    p->need[r]++;
                    p->rwait[k] = r;
                    msg(p, k);
                }
            } else {
                if (op == SEND_POST) {
                    S0[k] = t;
                    if (p->lanes_on && in->eager[k] && !p->none)  /* an eager transfer starts */
                        book(p, k, t);
                    if (!p->perfect && in->eager[k]) {  /* the sender's o_s, in the post */
                        double h = t + in->o_s[k];
                        if (h > own)
                            own = h;
                    }
                    if (p->polling && in->at_s[k]) {
                        p->Ps[k] = t;
                    } else if (p->none || !in->eager[k]) {
                        outstanding_add(p, r, k);
                        if (p->idle_post)
                            continue;
                    }
                    if (quick) {
                        p->sdone[k] = t + in->o_s[k];
                        double rc = p->Rc[k];
                        if (!isnan_(rc) && isnan_(p->rdone[k]))
                            recv_done(p, k, pymax(rc, t + p->Tx[k] - in->o_r[k]) + in->o_r[k]);
                    } else {
                        msg(p, k);
                    }
                    continue;
                }
                if (op == SEND_BLOCK) {
                    S0[k] = t;
                    if (p->lanes_on && in->eager[k] && !p->none)
                        book(p, k, t);
                }
                int first = isnan_(p->Ps[k]);
                if (first)
                    p->Ps[k] = t;
                double d = p->sdone[k];
                if (!isnan_(d)) {
                    if (d > p->tmax[r])
                        p->tmax[r] = d;
                    if (first && p->hiding)
                        msg(p, k);
                } else if (quick) {
                    d = t + in->o_s[k];
                    p->sdone[k] = d;
                    if (d > p->tmax[r])
                        p->tmax[r] = d;
                    double rc = p->Rc[k];
                    if (!isnan_(rc) && isnan_(p->rdone[k]))
                        recv_done(p, k, pymax(rc, t + p->Tx[k] - in->o_r[k]) + in->o_r[k]);
                } else {
                    p->need[r]++;
                    p->swait[k] = r;
                    msg(p, k);
                }
            }
        } else {
            int64_t slot = p->slot_of_op[o];
            int64_t size = in->mem_off[k + 1] - in->mem_off[k];
            const struct entries *e = p->none ? &p->centr : &p->post;
            if (op != COLL_DONE) {
                note_entry(&p->post, k, slot, in->mem_off, t);
                if (op == COLL_BLOCK) {
                    note_entry(&p->centr, k, slot, in->mem_off, t);
                    p->need[r]++;
                    p->cwait[slot] = 1;
                }
                if (in->rooted[k] || e->count[k] == size)
                    coll(p, k, slot);
            } else {
                note_entry(&p->centr, k, slot, in->mem_off, t);
                if (p->cdone_has[slot]) {
                    p->tmax[r] = pymax(p->tmax[r], p->cdone[slot]);
                } else {
                    p->need[r]++;
                    p->cwait[slot] = 1;
                    if (in->rooted[k] || e->count[k] == size)
                        coll(p, k, slot);
                }
            }
        }
    }
    return own;
}

static void run(struct pass *p)
{
    const struct mop_replay_in *in = p->in;
    struct mop_replay_out *out = p->out;
    int64_t n = in->ranks;
    for (int64_t r = 0; r < n; r++) {
        int64_t a = in->call_off[r], len = in->call_off[r + 1] - a;
        if (len >= 2) {
            out->enter[a] = in->enter[a];
            out->exit[a] = in->exit[a];
            double g = in->enter[a + 1] - in->exit[a];
            if (in->compute)
                g = g * in->compute[a];
            push(p, in->exit[a] + g, r);
        } else {
            out->ended[r] = 1;
        }
    }
    int have_next = 0;
    struct entry next = {0.0, 0, 0};
    for (;;) {
        struct entry top;
        if (have_next) {  /* heappushpop: the pushed entry, unless the heap's is earlier */
            have_next = 0;
            if (p->heap_n && before(&p->heap[0], &next)) {
                top = p->heap[0];
                p->heap[0] = next;
                sift_down(p->heap, p->heap_n, 0);
            } else {
                top = next;
            }
        } else if (p->heap_n) {
            top = p->heap[0];
            p->heap_n--;
            if (p->heap_n) {
                p->heap[0] = p->heap[p->heap_n];
                sift_down(p->heap, p->heap_n, 0);
            }
        } else {
            break;
        }
        if (p->bad || p->nomem)
            return;
        double t = top.t;
        int64_t r = top.r;
        int64_t i = ++p->cur[r];
        int64_t a = in->call_off[r], ci = a + i;
        out->enter[ci] = t;
        if (i == in->call_off[r + 1] - a - 1) {  /* MPI_Finalize: the rank's end */
            out->ended[r] = 1;
            continue;
        }
        out->events += 2 + (in->op_off[ci + 1] - in->op_off[ci]);
        p->need[r] = 1;
        p->tmax[r] = t;
        double own = call_ops(p, r, ci, t);
        int64_t np = p->outst_n[r];
        if (np && (p->need[r] > 1 || p->tmax[r] > t)) {
            const int64_t *pend = p->outst[r];
            for (int64_t x = 0; x < np; x++) {
                int64_t e = pend[x];
                if (e >= 0) {
                    if (isnan_(p->Ps[e])) {
                        p->Ps[e] = t;
                        msg(p, e);
                    }
                } else if (isnan_(p->Pr[~e])) {
                    p->Pr[~e] = t;
                    msg(p, ~e);
                }
            }
            p->outst_n[r] = 0;
        }
        if (own > p->tmax[r])  /* after the polls: an eager post's o_s is not a wait */
            p->tmax[r] = own;
        int64_t left = p->need[r] - 1;
        p->need[r] = left;
        if (!left) {
            double nt = next_enter(p, r, i);
            if (isnan_(nt))
                p->bad = 1;
            next = (struct entry){nt, ++p->seq, r};
            have_next = 1;
        }
    }
}

int mop_replay_abi(void) { return MOP_REPLAY_ABI; }

static void *zalloc(int64_t n, size_t size, int *nomem)
{
    void *x = calloc((size_t)(n > 0 ? n : 1), size);
    if (!x)
        *nomem = 1;
    return x;
}

static double *nans(int64_t n, int *nomem)
{
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) {
        *nomem = 1;
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = NAN;
    return x;
}

static int64_t *fill(int64_t n, int64_t v, int *nomem)
{
    int64_t *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) {
        *nomem = 1;
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = v;
    return x;
}

int mop_replay(const struct mop_replay_in *in, struct mop_replay_out *out)
{
    struct pass p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.out = out;
    p.perfect = in->overlap == 2;
    p.none = in->overlap == 1;
    p.async_ = in->async_progress != 0;
    p.hiding = in->hiding != 0;
    p.polling = in->polls != 0;
    p.idle_post = p.none || !(p.async_ || p.hiding || p.perfect);
    int64_t m = in->msgs, n = in->ranks, nslots = in->mem_off[in->colls];
    int64_t nops = in->op_off[in->call_off[n]];
    int nomem = 0;
    p.Rc = nans(m, &nomem);
    p.Ps = nans(m, &nomem);
    p.Pr = nans(m, &nomem);
    p.sdone = nans(m, &nomem);
    p.rdone = nans(m, &nomem);
    p.swait = fill(m, -1, &nomem);
    p.rwait = fill(m, -1, &nomem);
    p.post.t = zalloc(nslots, sizeof(double), &nomem);
    p.post.has = zalloc(nslots, 1, &nomem);
    p.post.order = zalloc(nslots, sizeof(int64_t), &nomem);
    p.post.count = zalloc(in->colls, sizeof(int64_t), &nomem);
    p.centr.t = zalloc(nslots, sizeof(double), &nomem);
    p.centr.has = zalloc(nslots, 1, &nomem);
    p.centr.order = zalloc(nslots, sizeof(int64_t), &nomem);
    p.centr.count = zalloc(in->colls, sizeof(int64_t), &nomem);
    p.cdone = zalloc(nslots, sizeof(double), &nomem);
    p.cdone_has = zalloc(nslots, 1, &nomem);
    p.cwait = zalloc(nslots, 1, &nomem);
    p.synced = zalloc(nslots, 1, &nomem);
    p.slot_of_op = zalloc(nops, sizeof(int64_t), &nomem);
    p.root_slot = zalloc(in->colls, sizeof(int64_t), &nomem);
    p.cur = zalloc(n, sizeof(int64_t), &nomem);
    p.need = zalloc(n, sizeof(int64_t), &nomem);
    p.tmax = zalloc(n, sizeof(double), &nomem);
    p.outst = zalloc(n, sizeof(int64_t *), &nomem);
    p.outst_n = zalloc(n, sizeof(int64_t), &nomem);
    p.outst_cap = zalloc(n, sizeof(int64_t), &nomem);
    p.heap = zalloc(n, sizeof(struct entry), &nomem);
    p.heap_cap = n;
    p.lanes_on = in->lane != NULL && !p.perfect;
    p.Tx = in->T;
    if (p.lanes_on) {
        p.Tx_own = malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
        p.free_at = malloc((size_t)(in->lanes > 0 ? in->lanes : 1) * sizeof(double));
        p.booked = zalloc(m, 1, &nomem);
        if (!p.Tx_own || !p.free_at) {
            nomem = 1;
        } else {
            memcpy(p.Tx_own, in->T, (size_t)m * sizeof(double));
            for (int64_t x = 0; x < in->lanes; x++)
                p.free_at[x] = -INFINITY;
            p.Tx = p.Tx_own;
        }
    }
    int rc = nomem ? MOP_REPLAY_NOMEM : place_members(&p);
    if (!rc) {
        out->events = 0;
        out->sync_count = 0;
        run(&p);
        rc = p.nomem ? MOP_REPLAY_NOMEM : p.bad ? MOP_REPLAY_UNSUPPORTED : 0;
        if (!rc && out->link_wait)
            link_waits_out(&p, out->link_wait);
    }
    if (p.outst)
        for (int64_t r = 0; r < n; r++)
            free(p.outst[r]);
    void *owned[] = {p.Rc, p.Ps, p.Pr, p.sdone, p.rdone, p.swait, p.rwait,
                     p.post.t, p.post.has, p.post.order, p.post.count,
                     p.centr.t, p.centr.has, p.centr.order, p.centr.count,
                     p.cdone, p.cdone_has, p.cwait, p.synced, p.slot_of_op, p.root_slot,
                     p.cur, p.need, p.tmax, p.outst, p.outst_n, p.outst_cap, p.heap,
                     p.Tx_own, p.free_at, p.booked};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
    return rc;
}
