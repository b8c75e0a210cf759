#include "options.h"

#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct opt_spec *find_option(const struct opt_spec *table, size_t count,
                                          const char *name, size_t name_len)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(table[i].name) == name_len && strncmp(table[i].name, name, name_len) == 0)
            return &table[i];
    return NULL;
}

static int parse_number(const struct opt_spec *opt, const char *text, uint64_t *out)
{
    if (text[0] == '-' || text[0] == '+' || text[0] == '\0')
        return err_msg("--%s: '%s' is not a non-negative number", opt->name, text);
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || errno != 0)
        return err_msg("--%s: '%s' is not a non-negative number", opt->name, text);
    unsigned long long scale = 1;
    if (opt->kind == OPT_BYTES && *end != '\0') {
        switch (*end) {
        case 'K': case 'k': scale = 1ull << 10; break;
        case 'M': case 'm': scale = 1ull << 20; break;
        case 'G': case 'g': scale = 1ull << 30; break;
        default: scale = 0; break;
        }
        if (scale != 0)
            end++;
    }
    if (*end != '\0' || scale == 0)
        return err_msg("--%s: '%s' is not a number%s", opt->name, text,
                       opt->kind == OPT_BYTES ? " (suffixes K, M, G allowed)" : "");
    if (value > UINT64_MAX / scale)
        return err_msg("--%s: '%s' is too large", opt->name, text);
    value *= scale;
    if (value < opt->min || value > opt->max)
        return err_msg("--%s: %llu is out of range [%llu, %llu]", opt->name, value,
                       (unsigned long long)opt->min, (unsigned long long)opt->max);
    *out = value;
    return 0;
}

static int store_value(const struct opt_spec *opt, void *cfg, const char *value)
{
    char *base = cfg;
    switch (opt->kind) {
    case OPT_FLAG:
        *(bool *)(base + opt->offset) = true;
        return 0;
    case OPT_UINT:
    case OPT_BYTES:
        return parse_number(opt, value, (uint64_t *)(base + opt->offset));
    case OPT_STRING:
        if (value[0] == '\0')
            return err_msg("--%s: empty value", opt->name);
        *(const char **)(base + opt->offset) = value;
        return 0;
    case OPT_OPTSTRING:
        *(const char **)(base + opt->offset) = value;
        *(bool *)(base + opt->present_offset) = true;
        return 0;
    case OPT_CHOICE:
        for (int i = 0; opt->choices[i] != NULL; i++) {
            if (strcmp(opt->choices[i], value) == 0) {
                *(int *)(base + opt->offset) = i;
                return 0;
            }
        }
        fprintf(stderr, "%s: --%s: '%s' is not one of:", g_prog, opt->name, value);
        for (int i = 0; opt->choices[i] != NULL; i++)
            fprintf(stderr, " %s", opt->choices[i]);
        fputc('\n', stderr);
        return -1;
    }
    return -1;
}

int options_parse(const struct opt_spec *table, size_t count, void *cfg, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return 1;
        if (strncmp(arg, "--", 2) != 0)
            return err_msg("unexpected argument '%s' (options start with --; see --help)", arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt_spec *opt = find_option(table, count, name, name_len);
        if (opt == NULL)
            return err_msg("unknown option '%.*s' (see --help)", (int)(name_len + 2), arg);
        const char *value = eq ? eq + 1 : NULL;
        if (opt->kind == OPT_FLAG) {
            if (value != NULL)
                return err_msg("--%s takes no value", opt->name);
        } else if (opt->kind == OPT_OPTSTRING) {
            if (value == NULL)
                value = (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) ? argv[++i] : "";
        } else if (value == NULL) {
            if (i + 1 >= argc)
                return err_msg("--%s needs a value (%s)", opt->name, opt->metavar);
            value = argv[++i];
        }
        if (store_value(opt, cfg, value) != 0)
            return -1;
    }
    return 0;
}

void options_usage(FILE *out, const char *synopsis, const struct opt_spec *table, size_t count)
{
    fprintf(out, "usage: %s %s\n\noptions:\n", g_prog, synopsis);
    for (size_t i = 0; i < count; i++) {
        const struct opt_spec *opt = &table[i];
        char left[64];
        if (opt->kind == OPT_FLAG)
            snprintf(left, sizeof(left), "--%s", opt->name);
        else if (opt->kind == OPT_OPTSTRING)
            snprintf(left, sizeof(left), "--%s [%s]", opt->name, opt->metavar);
        else
            snprintf(left, sizeof(left), "--%s %s", opt->name, opt->metavar);
        fprintf(out, "  %-28s %s", left, opt->help);
        if (opt->kind == OPT_UINT || opt->kind == OPT_BYTES)
            fprintf(out, " [%llu..%llu]", (unsigned long long)opt->min,
                    (unsigned long long)opt->max);
        if (opt->kind == OPT_CHOICE) {
            fputs(" {", out);
            for (int c = 0; opt->choices[c] != NULL; c++)
                fprintf(out, "%s%s", c ? "|" : "", opt->choices[c]);
            fputc('}', out);
        }
        fputc('\n', out);
    }
    fprintf(out, "  %-28s %s\n", "--help", "show this text");
}

int options_main(const struct opt_spec *table, size_t count, void *cfg, int argc, char **argv,
                 const char *synopsis)
{
    int rc = options_parse(table, count, cfg, argc, argv);
    if (rc == 1) {
        options_usage(stdout, synopsis, table, count);
        return 0;
    }
    return rc == 0 ? OPTIONS_GO_ON : EXIT_USAGE;
}
