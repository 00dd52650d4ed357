/* provenance.c - collection of run provenance; see provenance.h. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET, environ */
#include "provenance.h"

#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Prefixes of environment variables that change how MPI behaves. */
static const char *const env_prefixes[] = {
    "MPICH_", "MPIR_CVAR_", "HYDRA_", "OMPI_", "PMIX_", "PRTE_", "I_MPI_",
    "FI_",    "UCX_",       "PSM2_",  "MV2_",  "SLURM_CPU_BIND",
};

#if defined(__clang__)
#define MO_COMPILER "clang " __VERSION__
#elif defined(__GNUC__)
#define MO_COMPILER "GCC " __VERSION__
#else
#define MO_COMPILER "unknown"
#endif

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void mo_provenance_format_cpus(const unsigned char *cpus, int ncpus, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ncpus; i++) {
        if (!cpus[i])
            continue;
        int j = i;
        while (j + 1 < ncpus && cpus[j + 1])
            j++;
        int n = j == i ? snprintf(buf + used, len - used, "%s%d", used ? "," : "", i)
                       : snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", i, j);
        if (n < 0 || (size_t)n >= len - used) {
            buf[used] = '\0'; /* truncated: keep the complete ranges only */
            return;
        }
        used += (size_t)n;
        i = j;
    }
}

static void own_binding(char *buf, size_t len)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(buf, len, "unknown");
        return;
    }
    unsigned char cpus[CPU_SETSIZE];
    for (int i = 0; i < CPU_SETSIZE; i++)
        cpus[i] = CPU_ISSET(i, &set) ? 1 : 0;
    mo_provenance_format_cpus(cpus, CPU_SETSIZE, buf, len);
}

/* Gathers one string per rank to rank 0 (variable lengths). */
static char **gather_strings(const char *mine, MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int len = (int)strlen(mine) + 1;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    char **out = NULL;
    if (rank == 0) {
        lens = malloc((size_t)size * sizeof *lens);
        displs = malloc((size_t)size * sizeof *displs);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    if (rank == 0) {
        int total = 0;
        for (int i = 0; i < size; i++) {
            displs[i] = total;
            total += lens[i];
        }
        all = malloc((size_t)total);
    }
    MPI_Gatherv(mine, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, comm);
    if (rank == 0) {
        out = calloc((size_t)size, sizeof *out);
        for (int i = 0; out && i < size; i++)
            out[i] = xstrdup(all + displs[i]);
    }
    free(lens);
    free(displs);
    free(all);
    return out;
}

static int wanted_env(const char *entry)
{
    for (size_t i = 0; i < sizeof env_prefixes / sizeof env_prefixes[0]; i++)
        if (strncmp(entry, env_prefixes[i], strlen(env_prefixes[i])) == 0)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int mo_provenance_collect(mo_provenance *p, MPI_Comm comm, int argc, char **argv,
                          const mo_options *opts)
{
    memset(p, 0, sizeof *p);
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p->ranks);
    p->opts = opts;
    p->compiler = MO_COMPILER;

    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->date_utc, sizeof p->date_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    /* Some libraries pad the string with newlines or NULs. */
    size_t l = strlen(lib);
    while (l > 0 && isspace((unsigned char)lib[l - 1]))
        lib[--l] = '\0';
    p->mpi_library_version = xstrdup(lib);

    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    snprintf(p->mpi_standard_version, sizeof p->mpi_standard_version, "%d.%d", major, minor);

    char host[MPI_MAX_PROCESSOR_NAME + 1];
    int hlen = 0;
    MPI_Get_processor_name(host, &hlen);
    host[hlen] = '\0';
    p->hosts = gather_strings(host, comm);

    char binding[4096];
    own_binding(binding, sizeof binding);
    p->cpu_binding = gather_strings(binding, comm);

    if (rank == 0) {
        for (char **e = environ; *e; e++)
            if (wanted_env(*e)) {
                char **n = realloc(p->env, (p->nenv + 1) * sizeof *n);
                if (!n)
                    break;
                p->env = n;
                if ((p->env[p->nenv] = xstrdup(*e)))
                    p->nenv++;
            }
        if (p->nenv)
            qsort(p->env, p->nenv, sizeof *p->env, cmp_str);
    }

    p->argv = calloc((size_t)argc + 1, sizeof *p->argv);
    if (p->argv)
        for (int i = 0; i < argc; i++)
            if ((p->argv[i] = xstrdup(argv[i])))
                p->argc = i + 1;

    if (!p->mpi_library_version || (rank == 0 && (!p->hosts || !p->cpu_binding)) || !p->argv)
        return -1;
    return 0;
}

static void write_string_array(mo_json *w, const char *key, char **v, int n)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (int i = 0; v && i < n; i++)
        mo_json_string(w, v[i] ? v[i] : "");
    mo_json_end_array(w);
}

void mo_provenance_write_json(mo_json *w, const mo_provenance *p)
{
    mo_json_begin_object(w);
    mo_json_kv_string(w, "tool_version", MO_VERSION);
    mo_json_kv_string(w, "date_utc", p->date_utc);
    mo_json_kv_string(w, "mpi_library_version", p->mpi_library_version);
    mo_json_kv_string(w, "mpi_standard_version", p->mpi_standard_version);
    mo_json_kv_string(w, "toolchain", p->opts && p->opts->toolchain ? p->opts->toolchain : "unknown");
    mo_json_kv_string(w, "launcher", p->opts && p->opts->launcher ? p->opts->launcher : "unknown");
    mo_json_kv_int64(w, "ranks", p->ranks);
    write_string_array(w, "hosts", p->hosts, p->ranks);
    write_string_array(w, "cpu_binding", p->cpu_binding, p->ranks);
    mo_json_key(w, "mpi_env");
    mo_json_begin_object(w);
    for (size_t i = 0; i < p->nenv; i++) {
        const char *eq = strchr(p->env[i], '=');
        char name[256];
        size_t nlen = eq ? (size_t)(eq - p->env[i]) : strlen(p->env[i]);
        snprintf(name, sizeof name, "%.*s", (int)(nlen < 255 ? nlen : 255), p->env[i]);
        mo_json_kv_string(w, name, eq ? eq + 1 : "");
    }
    mo_json_end_object(w);
    write_string_array(w, "command_line", p->argv, p->argc);
    mo_json_kv_string(w, "compiler", p->compiler);
    mo_json_key(w, "meta");
    mo_json_begin_object(w);
    for (size_t i = 0; p->opts && i < p->opts->nmeta; i++)
        mo_json_kv_string(w, p->opts->meta_keys[i], p->opts->meta_values[i]);
    mo_json_end_object(w);
    mo_json_end_object(w);
}

static void free_strings(char **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void mo_provenance_free(mo_provenance *p)
{
    free(p->mpi_library_version);
    free_strings(p->hosts, p->ranks);
    free_strings(p->cpu_binding, p->ranks);
    free_strings(p->env, (int)p->nenv);
    free_strings(p->argv, p->argc);
    memset(p, 0, sizeof *p);
}
