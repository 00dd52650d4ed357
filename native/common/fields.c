/* fields.c - a benchmark's own options declared as data; see fields.h. */
#define _POSIX_C_SOURCE 200809L
#include "fields.h"

#include <stdio.h>
#include <string.h>

static void *at(void *params, const mo_field *f)
{
    return (char *)params + f->offset;
}

static const void *at_const(const void *params, const mo_field *f)
{
    return (const char *)params + f->offset;
}

/* Word i of a CHOICE or SET. */
static const char *name_of(const mo_field *f, int i)
{
    return *(const char *const *)((const char *)f->names + (size_t)i * (f->stride ? f->stride : sizeof(char *)));
}

/* A SET's words as an array (room for 32, mo_options_parse_set's most). */
static const char *const *names_of(const mo_field *f, const char **out)
{
    for (int i = 0; i < f->nnames && i < 32; i++)
        out[i] = name_of(f, i);
    return out;
}

static int parse_field(const mo_field *f, void *params, const char *arg, char *err, size_t errlen)
{
    const char *names[32];
    switch (f->kind) {
    case MO_FIELD_LONG: return mo_options_parse_long(f->name, arg, f->lo, f->hi, at(params, f), err, errlen);
    case MO_FIELD_DOUBLE: {
        double *v = at(params, f);
        if (mo_options_parse_double(f->name, arg, f->dlo, f->dhi, v, err, errlen))
            return -1;
        if (f->above && *v <= f->dlo) {
            snprintf(err, errlen, "--%s: must be greater than %g", f->name, f->dlo);
            return -1;
        }
        return 0;
    }
    case MO_FIELD_FLAG: *(bool *)at(params, f) = true; return 0;
    case MO_FIELD_CHOICE:
        for (int i = 0; i < f->nnames; i++)
            if (strcmp(arg, name_of(f, i)) == 0) {
                *(int *)at(params, f) = f->values ? f->values[i] : i;
                return 0;
            }
        snprintf(err, errlen, f->bad, arg);
        return -1;
    case MO_FIELD_SET: {
        const char *bad;
        int len;
        if (mo_options_parse_set(arg, names_of(f, names), f->nnames, f->all, f->nocase, at(params, f), &bad,
                                 &len) == 0)
            return 0;
        snprintf(err, errlen, f->bad, len, bad);
        return -1;
    }
    case MO_FIELD_CUSTOM: return f->parse(params, arg, err, errlen);
    }
    return -1;
}

static void quick_defaults(const mo_field *f, int n, void *params, const bool *given, bool quick)
{
    for (int i = 0; i < n; i++) {
        if (given[i] || !f[i].by_quick)
            continue;
        const double v = quick ? f[i].quick : f[i].def;
        if (f[i].kind == MO_FIELD_LONG)
            *(long *)at(params, &f[i]) = (long)v;
        else if (f[i].kind == MO_FIELD_DOUBLE)
            *(double *)at(params, &f[i]) = v;
    }
}

/* A field's key: its own, or its name with '-' as '_'. */
static const char *key_of(const mo_field *f, char *buf, size_t len)
{
    if (f->key)
        return f->key;
    snprintf(buf, len, "%s", f->name);
    for (char *c = buf; *c; c++)
        if (*c == '-')
            *c = '_';
    return buf;
}

static void write_fields(mo_json *w, const mo_field *f, int n, const void *params)
{
    for (int i = 0; i < n; i++) {
        char buf[64];
        const char *key = key_of(&f[i], buf, sizeof buf);
        const void *v = at_const(params, &f[i]);
        switch (f[i].kind) {
        case MO_FIELD_LONG: mo_json_kv_int64(w, key, *(const long *)v); break;
        case MO_FIELD_DOUBLE: mo_json_kv_double(w, key, *(const double *)v); break;
        case MO_FIELD_FLAG: mo_json_kv_bool(w, key, *(const bool *)v); break;
        case MO_FIELD_CHOICE:
            for (int j = 0; j < f[i].nnames; j++)
                if ((f[i].values ? f[i].values[j] : j) == *(const int *)v) {
                    mo_json_kv_string(w, key, name_of(&f[i], j));
                    break;
                }
            break;
        case MO_FIELD_SET: {
            const char *names[32];
            mo_options_json_set(w, key, names_of(&f[i], names), f[i].nnames, *(const unsigned *)v);
            break;
        }
        case MO_FIELD_CUSTOM:
            if (f[i].write)
                f[i].write(w, params);
            break;
        }
    }
}

/* The hooks of the wrapped options: ctx is the mo_fields_options. */
static int fields_parse(void *ctx, int code, const char *arg, char *err, size_t errlen)
{
    mo_fields_options *x = ctx;
    const int i = code - MO_FIELD_CODE_FIRST;
    if (i >= 0 && i < x->n) {
        x->given[i] = true;
        return parse_field(&x->fields[i], x->own->ctx, arg, err, errlen);
    }
    if (x->own->parse)
        return x->own->parse(x->own->ctx, code, arg, err, errlen);
    snprintf(err, errlen, "internal error: unknown option code %d", code);
    return -1;
}

static int fields_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    mo_fields_options *x = ctx;
    quick_defaults(x->fields, x->n, x->own->ctx, x->given, quick);
    return x->own->finalize ? x->own->finalize(x->own->ctx, quick, err, errlen) : 0;
}

static void fields_write_json(mo_json *w, const void *ctx)
{
    const mo_fields_options *x = ctx;
    write_fields(w, x->fields, x->n, x->own->ctx);
    if (x->own->write_json)
        x->own->write_json(w, x->own->ctx);
}

const mo_bench_options *mo_fields_wrap(mo_fields_options *x, const mo_field *fields, int n,
                                       const mo_bench_options *own)
{
    memset(x, 0, sizeof *x);
    x->fields = fields;
    x->n = n < MO_FIELDS_MAX ? n : MO_FIELDS_MAX;
    x->own = own;
    int k = 0;
    for (; own->longopts && own->longopts[k].name && k < MO_FIELDS_MAX; k++)
        x->longopts[k] = own->longopts[k];
    for (int i = 0; i < x->n; i++)
        x->longopts[k++] = (struct option){fields[i].name, fields[i].kind == MO_FIELD_FLAG ? no_argument
                                                                                         : required_argument,
                                           NULL, MO_FIELD_CODE_FIRST + i};
    x->ext = (mo_bench_options){x->longopts, fields_parse, fields_finalize, own->usage, fields_write_json, x};
    return &x->ext;
}

void *mo_fields_params(const mo_bench_options *ext)
{
    if (!ext)
        return NULL;
    if (ext->parse == fields_parse)
        return ((const mo_fields_options *)ext->ctx)->own->ctx;
    return ext->ctx;
}
