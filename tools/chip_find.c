/* chip_find.c - the one rule every command follows for --chip, and where
 * the data files (chip configs, bundled models) are found (see cli.h).
 *
 * --chip takes a file or a name: `--chip a1` is a1.ini in the first of
 * ./configs (the repository), <dir of the binary>/../share/atoll/configs
 * (an installed copy, wherever it was moved) and the compiled-in
 * PREFIX/share/atoll/configs. Without --chip, a command that reads a
 * compiled model uses the chip the model was compiled for (its metadata
 * records "--chip NAME"), every other command a1.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include "tools/cli.h"
#include "isa/abm.h"

#ifndef ATOLL_DATADIR
#define ATOLL_DATADIR "/usr/local/share/atoll"
#endif

static int is_dir(const char *p)
{
    DIR *d = opendir(p);
    if (d) closedir(d);
    return d != NULL;
}

/* The candidates for data directory `dir`, in search order. */
static int data_candidates(const char *dir, char out[3][PATH_MAX])
{
    int n = 0;
    snprintf(out[n++], PATH_MAX, "%s", dir);
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(out[n++], PATH_MAX, "%s/../share/atoll/%s", exe, dir);
        }
    }
    snprintf(out[n++], PATH_MAX, "%s/%s", ATOLL_DATADIR, dir);
    return n;
}

int cli_data_dir(const char *dir, char *out, size_t cap)
{
    char cand[3][PATH_MAX];
    int n = data_candidates(dir, cand);
    for (int i = 0; i < n; i++)
        if (is_dir(cand[i])) { snprintf(out, cap, "%s", cand[i]); return 0; }
    snprintf(out, cap, "%s", dir);
    return -1;
}

/* Chip names available in the first configs directory found ("a1, tiny"). */
static void list_chips(char *out, size_t cap)
{
    char dir[PATH_MAX];
    out[0] = 0;
    if (cli_data_dir("configs", dir, sizeof dir)) return;
    DIR *d = opendir(dir);
    if (!d) return;
    char names[32][64];
    int n = 0;
    for (struct dirent *ent; (ent = readdir(d)) && n < 32;) {
        size_t l = strlen(ent->d_name);
        if (l > 4 && l < 64 && !strcmp(ent->d_name + l - 4, ".ini")) snprintf(names[n++], 64, "%.*s", (int)(l - 4), ent->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    size_t k = 0;
    for (int i = 0; i < n && k < cap; i++) k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? ", " : "", names[i]);
}

int cli_chip_path(const char *arg, char *path, size_t cap, char *why, size_t why_cap)
{
    size_t l = strlen(arg);
    if (strchr(arg, '/') || (l > 4 && !strcmp(arg + l - 4, ".ini")) || access(arg, F_OK) == 0) {
        snprintf(path, cap, "%s", arg);
        return 0;
    }
    char cand[3][PATH_MAX], looked[3 * PATH_MAX + 8] = "";
    int n = data_candidates("configs", cand);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        char f[PATH_MAX + 80];
        snprintf(f, sizeof f, "%s/%s.ini", cand[i], arg);
        if (access(f, R_OK) == 0) { snprintf(path, cap, "%s", f); return 0; }
        k += (size_t)snprintf(looked + k, sizeof looked - k, "%s%s", i ? ", " : "", cand[i]);
    }
    char chips[512];
    list_chips(chips, sizeof chips);
    snprintf(why, why_cap, "--chip '%s': no such file, and no chip config of that name in %s%s%s%s", arg, looked,
             chips[0] ? " (chips found: " : "", chips, chips[0] ? ")" : "");
    return -1;
}

int cli_load_chip(const char *cmd, const char *arg, const char *abm, AtlChip *chip, char *path, size_t cap)
{
    char name[64] = "a1", why[2048], file[PATH_MAX];
    uint64_t fp = 0;
    AtlErr e;
    if (!arg && abm) {
        char opts[512];
        if (abm_file_info(abm, &fp, opts, sizeof opts, &e)) { fprintf(stderr, "atoll %s: %s\n", cmd, e.msg); return -1; }
        if (abm_options_chip(opts, name, sizeof name)) {
            fprintf(stderr, "atoll %s: %s does not name the chip it was compiled for; give --chip FILE\n", cmd, abm);
            return -1;
        }
    }
    if (cli_chip_path(arg ? arg : name, file, sizeof file, why, sizeof why)) {
        if (!arg && abm) fprintf(stderr, "atoll %s: %s was compiled for chip '%s': %s\n", cmd, abm, name, why);
        else fprintf(stderr, "atoll %s: %s\n", cmd, why);
        return -1;
    }
    if (cfg_load(file, chip, &e)) { fprintf(stderr, "atoll %s: %s\n", cmd, e.msg); return -1; }
    if (fp && cfg_fingerprint(chip) != fp) {
        fprintf(stderr, "atoll %s: %s was compiled for chip '%s' (fingerprint 0x%016llx), but %s describes another chip "
                        "(0x%016llx) by that name; give --chip FILE\n", cmd, abm, name, (unsigned long long)fp, file,
                (unsigned long long)cfg_fingerprint(chip));
        return -1;
    }
    if (path) snprintf(path, cap, "%s", file);
    return 0;
}
