/* fields.h - a benchmark's own options declared as data: one row per option
 * (its flag, where its value lives in the benchmark's parameters, its range,
 * its --quick default, its key in the document). mo_fields_wrap() turns the
 * rows and the benchmark's mo_bench_options (its usage text, its parameters,
 * and any checks or options of its own) into the mo_bench_options that
 * options.c reads, so that a benchmark writes no longopts, parse, --quick
 * defaults or write_json for them. */
#ifndef MO_FIELDS_H
#define MO_FIELDS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "options.h"

typedef enum mo_field_kind {
    MO_FIELD_LONG,   /* long in [lo, hi] */
    MO_FIELD_DOUBLE, /* double in [dlo, dhi] */
    MO_FIELD_FLAG,   /* bool, no value: true when given */
    MO_FIELD_CHOICE, /* int: values[i] for the word names[i]; written as that word */
    MO_FIELD_SET,    /* unsigned bit set of names (mo_options_parse_set, `all` word) */
    MO_FIELD_CUSTOM, /* parse() and write() of the benchmark's own */
} mo_field_kind;

typedef struct mo_field {
    const char *name;  /* --name, and the name its messages say */
    mo_field_kind kind;
    size_t offset;     /* of its value in the parameters (offsetof) */
    const char *key;   /* its key in the document's options; NULL: name, '-' as '_' */
    long lo, hi;       /* LONG's range */
    double dlo, dhi;   /* DOUBLE's range */
    bool above;        /* DOUBLE: dlo itself is refused too ("must be greater than") */
    /* When not given: def, or quick under --quick (LONG and DOUBLE); else the
     * value the parameters were initialised with stays. */
    bool by_quick;
    double def, quick;
    /* CHOICE and SET: the words, each stride bytes after the one before
     * (0: an array of strings; else names in a table of structs) */
    const char *const *names;
    size_t stride;
    const int *values; /* CHOICE: NULL for 0, 1, ... */
    int nnames;
    const char *all;   /* SET: the word for every name */
    bool nocase;       /* SET: names compare ignoring ASCII case */
    const char *bad;   /* CHOICE: the error, a format taking the value (%s);
                        * SET: taking the unknown item (%.*s) */
    /* CUSTOM: parses arg into the parameters (returns 0, or -1 with one
     * line in err); writes its key and value (NULL: nothing written). */
    int (*parse)(void *params, const char *arg, char *err, size_t errlen);
    void (*write)(mo_json *w, const void *params);
} mo_field;

#define MO_FIELD_LONG_OF(nm, type, member, lo_, hi_) \
    {.name = (nm), .kind = MO_FIELD_LONG, .offset = offsetof(type, member), .lo = (lo_), .hi = (hi_)}
#define MO_FIELD_LONG_Q(nm, type, member, lo_, hi_, def_, quick_)                                   \
    {.name = (nm), .kind = MO_FIELD_LONG, .offset = offsetof(type, member), .lo = (lo_), .hi = (hi_), \
     .by_quick = true, .def = (def_), .quick = (quick_)}
#define MO_FIELD_DOUBLE_OF(nm, type, member, lo_, hi_) \
    {.name = (nm), .kind = MO_FIELD_DOUBLE, .offset = offsetof(type, member), .dlo = (lo_), .dhi = (hi_)}
#define MO_FIELD_DOUBLE_Q(nm, type, member, lo_, hi_, def_, quick_)                                     \
    {.name = (nm), .kind = MO_FIELD_DOUBLE, .offset = offsetof(type, member), .dlo = (lo_), .dhi = (hi_), \
     .by_quick = true, .def = (def_), .quick = (quick_)}
#define MO_FIELD_DOUBLE_ABOVE(nm, type, member, lo_, hi_)                                                  \
    {.name = (nm), .kind = MO_FIELD_DOUBLE, .offset = offsetof(type, member), .dlo = (lo_), .dhi = (hi_), \
     .above = true}
#define MO_FIELD_FLAG_OF(nm, type, member) {.name = (nm), .kind = MO_FIELD_FLAG, .offset = offsetof(type, member)}
#define MO_FIELD_CHOICE_OF(nm, type, member, names_, values_, n, bad_)                               \
    {.name = (nm), .kind = MO_FIELD_CHOICE, .offset = offsetof(type, member), .names = (names_), \
     .values = (values_), .nnames = (n), .bad = (bad_)}
#define MO_FIELD_SET_OF(nm, type, member, names_, n, all_, nocase_, bad_)                          \
    {.name = (nm), .kind = MO_FIELD_SET, .offset = offsetof(type, member), .names = (names_), \
     .nnames = (n), .all = (all_), .nocase = (nocase_), .bad = (bad_)}
/* A SET of the .name of each entry of a table of structs. */
#define MO_FIELD_SET_IN(nm, type, member, table, n, all_, nocase_, bad_)                                \
    {.name = (nm), .kind = MO_FIELD_SET, .offset = offsetof(type, member), .names = &(table)[0].name, \
     .stride = sizeof (table)[0], .nnames = (n), .all = (all_), .nocase = (nocase_), .bad = (bad_)}
#define MO_FIELD_CUSTOM_OF(nm, parse_, write_) \
    {.name = (nm), .kind = MO_FIELD_CUSTOM, .parse = (parse_), .write = (write_)}

/* How many rows a table of fields has. */
#define MO_NFIELDS(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* The getopt code of field i (above the benchmark's own longopts' codes);
 * at most MO_FIELDS_MAX fields and MO_FIELDS_MAX options of its own. */
enum { MO_FIELD_CODE_FIRST = 2000, MO_FIELDS_MAX = 16 };

/* The options that options.c reads for a benchmark with fields. */
typedef struct mo_fields_options {
    const mo_field *fields;
    int n;
    const mo_bench_options *own; /* usage and ctx (the parameters); longopts with
                                  * parse, finalize (after the fields' defaults)
                                  * and write_json (after the fields) when it
                                  * has options or checks of its own */
    bool given[MO_FIELDS_MAX];
    struct option longopts[2 * MO_FIELDS_MAX + 1];
    mo_bench_options ext;        /* what mo_fields_wrap() returns */
} mo_fields_options;

/* Fills x (which must outlive the options' use: the result document writes
 * them) from n fields over own, and returns &x->ext. */
const mo_bench_options *mo_fields_wrap(mo_fields_options *x, const mo_field *fields, int n,
                                       const mo_bench_options *own);

/* The benchmark's parameters behind ext: own->ctx for a wrapped one, else
 * ext->ctx (NULL without ext); what its checks are given. */
void *mo_fields_params(const mo_bench_options *ext);

#endif
