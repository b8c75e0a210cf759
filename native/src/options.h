/* Table-driven command-line options: one table declares every option, its
 * type, range and help text; the parser and usage() are generated from it. */
#ifndef CXFAB_OPTIONS_H
#define CXFAB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_kind {
    OPT_FLAG,      /* bool, no value */
    OPT_UINT,      /* uint64_t, decimal, range-checked */
    OPT_BYTES,     /* uint64_t with optional K/M/G (binary) suffix, range-checked */
    OPT_STRING,    /* const char *, value required */
    OPT_OPTSTRING, /* const char *, value optional ("" when absent); presence in a bool */
    OPT_CHOICE,    /* int index into choices[] */
};

struct opt_spec {
    const char *name;    /* long name without the leading "--" */
    const char *metavar; /* shown in usage() */
    enum opt_kind kind;
    size_t offset;          /* where the value goes in the caller's config struct */
    size_t present_offset;  /* OPT_OPTSTRING: bool set when the option is given */
    uint64_t min, max;      /* OPT_UINT / OPT_BYTES */
    const char *const *choices; /* OPT_CHOICE: NULL-terminated */
    const char *help;
};

/* Parses argv into cfg. Returns 0, 1 when --help was printed, or -1 after
 * printing "prog: --opt: reason". */
int options_parse(const struct opt_spec *table, size_t count, void *cfg, int argc, char **argv);
void options_usage(FILE *out, const char *synopsis, const struct opt_spec *table, size_t count);

/* What every program's main() does with its table: parse argv into cfg; on
 * --help print usage() and return 0, on a bad option return EXIT_USAGE; return
 * OPTIONS_GO_ON when the program should run. */
#define OPTIONS_GO_ON (-1)
int options_main(const struct opt_spec *table, size_t count, void *cfg, int argc, char **argv,
                 const char *synopsis);

/* Rows shared by the programs that run the stencil (their struct config has isa, json
 * and dump fields; OFF() is each program's offsetof into it). */
#define OPT_ROW_ISA                                                                        \
    {"isa", "NAME", OPT_CHOICE, OFF(isa), 0, 0, 0, isa_names, "stencil instruction set"}
#define OPT_ROW_DUMP(help) {"dump", "FILE", OPT_STRING, OFF(dump), 0, 0, 0, NULL, help}

#endif
